// CEMRTD — Active Authentication primitives (ICAO 9303-11 §6.1) over OpenSSL, beside cemrtd.h.
//
// Verifier side (the server): the raw RSA public operation that ISO/IEC 9796-2 digital signature scheme 1 needs
// (the message-recovery format itself is decoded in Swift, EMRTD/ActiveAuthentication.swift), and ECDSA
// verification of a plain signature (BSI TR-03111 §5.2.1: r || s, each as long as the group order) over a digest.
//
// Chip side (specimen chips, tests, the virtual eMRTD — the one implementation of the chip's keys; CChipCrypto has
// only a terminal's primitives): deterministic and fresh keys, the raw RSA private operation, plain ECDSA signing,
// PKCS#8 PEM export and import, SubjectPublicKeyInfo export, the EC private scalar and DH private value that Chip
// Authentication needs. Keys are the opaque `em_key` of
// cemrtd.h. Like cemrtd.h: every fallible call returns an `em_status` and writes a one-line detail into `message`.
#ifndef CEMRTD_AA_H
#define CEMRTD_AA_H
#include "cemrtd.h"
#ifdef __cplusplus
extern "C" {
#endif

/// What a SubjectPublicKeyInfo (DER) holds, for Active Authentication: `kind` 1 RSA (rsaEncryption), 2 EC
/// (id-ecPublicKey, named or explicit curve), 0 anything else; `bits` the RSA modulus size or the EC group order
/// size in bits; `order_bytes` the EC group order's length in bytes (a plain signature is twice that), 0 for RSA.
/// `curve` the EC curve's short name when OpenSSL knows it ("prime256v1", "brainpoolP256r1"; for explicit
/// parameters the named curve they equal), else "".
typedef struct em_aa_key_info {
    int32_t kind;
    int32_t bits;
    int32_t order_bytes;
    char curve[64];
} em_aa_key_info;

/// Describes a SubjectPublicKeyInfo. EM_ERR_PARSE when it is not one.
em_status em_aa_key_info_of(const uint8_t *spki, size_t count, em_aa_key_info *out, char *message, size_t message_size);

/// The raw RSA public operation s^e mod n (no padding) with the RSA key in `spki`: `out` receives exactly the
/// modulus length in bytes (big-endian, left-padded with zeros). EM_ERR_INVALID_ARGUMENT when `signature` is not
/// exactly the modulus length or, read as a big-endian integer, is not below the modulus (the detail says which);
/// EM_ERR_UNSUPPORTED when the key is not RSA.
em_status em_aa_rsa_public_raw(const uint8_t *spki, size_t spki_count, const uint8_t *signature, size_t signature_count,
                               em_bytes *out, char *message, size_t message_size);

/// Verifies a plain ECDSA signature `signature` = r || s (each exactly the group order's length, BSI TR-03111
/// §5.2.1) over `digest` (already hashed; truncated to the order's bit length as ECDSA does) with the EC key in
/// `spki`. 1 verifies, 0 does not (also: r or s zero or not below the order), -1 error: not an EC key, or a
/// signature of the wrong length (message says which).
int em_aa_ecdsa_verify_plain(const uint8_t *spki, size_t spki_count, const uint8_t *digest, size_t digest_count,
                             const uint8_t *signature, size_t signature_count, char *message, size_t message_size);

/// A deterministic RSA key of `bits` bits (1024…4096, even) and public exponent 65537 from `seed`: each prime is
/// the first probable prime (BN_check_prime) at or above a candidate drawn from SHA-512(seed || label || counter)
/// with its two top bits set, so the modulus has exactly `bits` bits. The same seed gives the same key.
em_status em_key_rsa_from_seed(int32_t bits, const uint8_t *seed, size_t seed_count, em_key **out,
                               char *message, size_t message_size);

/// The raw RSA private operation m^d mod n (no padding) with `key`: `block` must be exactly the modulus length
/// and below the modulus; `out` receives the modulus length in bytes.
em_status em_key_rsa_private_raw(const em_key *key, const uint8_t *block, size_t count, em_bytes *out,
                                 char *message, size_t message_size);

/// Signs `digest` with the EC `key` (ECDSA, a fresh random k) and writes the plain signature r || s, each left-padded
/// to the group order's length.
em_status em_key_ecdsa_sign_plain(const em_key *key, const uint8_t *digest, size_t digest_count, em_bytes *out,
                                  char *message, size_t message_size);

/// The key's public half as a SubjectPublicKeyInfo (DER; EC keys with the named curve's OID).
em_status em_key_public_spki(const em_key *key, em_bytes *out, char *message, size_t message_size);

/// The private key as PKCS#8 PEM text ("-----BEGIN PRIVATE KEY-----", unencrypted).
em_status em_key_pkcs8_pem(const em_key *key, em_bytes *out, char *message, size_t message_size);

/// Reads a PEM private key (PKCS#8 or the traditional RSA / EC forms).
em_status em_key_from_pem(const uint8_t *pem, size_t count, em_key **out, char *message, size_t message_size);

/// What `key` is: 1 RSA, 2 EC, 3 DH (PKCS #3 or X9.42), 0 anything else.
int32_t em_key_kind(const em_key *key);

/// A fresh EC key (not deterministic) on the OpenSSL curve `curve` ("prime256v1", "brainpoolP256r1", …): test chips
/// and the copy variant's other key. EM_ERR_UNSUPPORTED for a curve this OpenSSL does not know.
em_status em_key_ec_generate(const char *curve, em_key **out, char *message, size_t message_size);

/// An EC key's private scalar d (big-endian, left-padded to the group order's length): what a virtual chip's Chip
/// Authentication (ICAO 9303-11 §6.2) multiplies the terminal's ephemeral point with. EM_ERR_INVALID_ARGUMENT when
/// the key is not EC.
em_status em_key_ec_private_scalar(const em_key *key, em_bytes *out, char *message, size_t message_size);

/// A DH key's private value x (big-endian, no padding): Chip Authentication with a DH key (ICAO 9303-11 §6.2).
/// EM_ERR_INVALID_ARGUMENT when the key is not DH.
em_status em_key_dh_private_value(const em_key *key, em_bytes *out, char *message, size_t message_size);

/// Fills `out` with `count` bytes from OpenSSL's CSPRNG (RAND_bytes).
em_status em_random_bytes(uint8_t *out, size_t count, char *message, size_t message_size);

#ifdef __cplusplus
}
#endif
#endif
