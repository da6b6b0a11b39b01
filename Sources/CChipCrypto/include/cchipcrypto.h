// CChipCrypto — the OpenSSL primitives behind ChipAccessOpenSSL (the client's chip access on Linux) and the
// virtual eMRTD: random bytes, digests, 3DES/AES-CBC, AES-CMAC, EC point arithmetic over explicit prime-field
// curves, modular exponentiation, and — for the chip side and test chips only — key files, RSA raw private
// operations and ECDSA signing. Plain C; no OpenSSL type appears here. Integers and field elements are big-endian
// octet strings; EC points are uncompressed (04 || x || y).
//
// Every fallible call returns a `cc_status` and, where it takes one, writes a one-line reason into `message`.
// The protocol logic (BAC, PACE, Chip and Active Authentication, secure messaging) is in Swift (ChipAccess).
#ifndef CCHIPCRYPTO_H
#define CCHIPCRYPTO_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef enum cc_status {
    CC_OK = 0,
    CC_ERR_INVALID = 1,      ///< bad input: a point not on the curve, a key length the cipher does not take, …
    CC_ERR_UNSUPPORTED = 2,  ///< an algorithm or key type this OpenSSL cannot use
    CC_ERR_INTERNAL = 3,     ///< any other OpenSSL failure
} cc_status;

/// Bytes allocated by the shim (malloc); release with `cc_free(bytes.data)`.
typedef struct cc_bytes {
    uint8_t *data;
    size_t count;
} cc_bytes;

void cc_free(void *pointer);

/// OpenSSL's version line ("OpenSSL 3.0.19 …"). Static storage.
const char *cc_openssl_version(void);

/// `count` cryptographically strong random bytes (RAND_bytes). 1 on success.
int cc_random(uint8_t *out, size_t count);

/// Digest of `count` bytes with "SHA1", "SHA224", "SHA256", "SHA384" or "SHA512" into `out` (≥ 64 bytes).
cc_status cc_digest(const char *algorithm, const uint8_t *data, size_t count, uint8_t *out, size_t *out_count);

/// Block ciphers: CC_CIPHER_3DES (two-key 3DES-EDE, 16-byte key; a 24-byte key is three-key) and CC_CIPHER_AES
/// (16/24/32-byte key). CBC mode without padding: `count` must be a multiple of the block size (8 or 16).
enum { CC_CIPHER_3DES = 1, CC_CIPHER_AES = 2 };
cc_status cc_cbc(int cipher, int encrypt, const uint8_t *key, size_t key_count, const uint8_t *iv,
                 const uint8_t *in, size_t count, uint8_t *out);

/// AES-CMAC (NIST SP 800-38B) of `count` bytes with a 16/24/32-byte key: 16 bytes into `out`.
cc_status cc_cmac(const uint8_t *key, size_t key_count, const uint8_t *data, size_t count, uint8_t *out);

// MARK: - Elliptic curves over prime fields

typedef struct cc_ec_group cc_ec_group;

/// A curve y² = x³ + ax + b over GF(p) with base point `generator` of order `order` and `cofactor`. When
/// `name_hint` names an OpenSSL curve with exactly these parameters its optimised implementation is used.
cc_status cc_ec_group_new(const uint8_t *p, size_t p_count, const uint8_t *a, size_t a_count, const uint8_t *b,
                          size_t b_count, const uint8_t *generator, size_t generator_count, const uint8_t *order,
                          size_t order_count, int32_t cofactor, const char *name_hint, cc_ec_group **out,
                          char *message, size_t message_size);
void cc_ec_group_free(cc_ec_group *group);

/// scalar · point (point NULL: the generator). The point must lie on the curve; the result must not be the point
/// at infinity. Writes 1 + 2·field bytes to `out` (capacity ≥ 133).
cc_status cc_ec_mul(const cc_ec_group *group, const uint8_t *scalar, size_t scalar_count, const uint8_t *point,
                    size_t point_count, uint8_t *out, size_t *out_count, char *message, size_t message_size);
/// a + b for two points on the curve (the sum must not be the point at infinity).
cc_status cc_ec_add(const cc_ec_group *group, const uint8_t *a, size_t a_count, const uint8_t *b, size_t b_count,
                    uint8_t *out, size_t *out_count, char *message, size_t message_size);
/// 1 when `point` is an uncompressed point on the curve (not the point at infinity), else 0.
int cc_ec_is_on_curve(const cc_ec_group *group, const uint8_t *point, size_t point_count);

// MARK: - Modular arithmetic (DH, RSA public operation, ECDSA verification)

/// base^exponent mod modulus, written left-padded to the modulus's length into `out` (capacity ≥ modulus_count).
cc_status cc_mod_exp(const uint8_t *base, size_t base_count, const uint8_t *exponent, size_t exponent_count,
                     const uint8_t *modulus, size_t modulus_count, uint8_t *out, size_t out_capacity);
/// a · b mod modulus, left-padded to the modulus's length.
cc_status cc_mod_mul(const uint8_t *a, size_t a_count, const uint8_t *b, size_t b_count, const uint8_t *modulus,
                     size_t modulus_count, uint8_t *out, size_t out_capacity);

// MARK: - Keys (the virtual chip and test chips only)

typedef struct cc_key cc_key;

enum { CC_KEY_RSA = 1, CC_KEY_EC = 2, CC_KEY_DH = 3 };

/// Reads a private key from PEM (PKCS #8, or the traditional RSA / EC forms).
cc_status cc_key_read_pem(const uint8_t *pem, size_t count, cc_key **out, char *message, size_t message_size);
/// A fresh EC key on the OpenSSL curve `curve` ("prime256v1", "brainpoolP256r1", …).
cc_status cc_key_generate_ec(const char *curve, cc_key **out, char *message, size_t message_size);
/// A fresh RSA key of `bits` bits (public exponent 65537).
cc_status cc_key_generate_rsa(int32_t bits, cc_key **out, char *message, size_t message_size);
void cc_key_free(cc_key *key);
/// CC_KEY_RSA, CC_KEY_EC, CC_KEY_DH, or 0.
int cc_key_type(const cc_key *key);
/// The private key as PKCS #8 PEM (unencrypted).
cc_status cc_key_private_pem(const cc_key *key, cc_bytes *out);
/// The public key as a SubjectPublicKeyInfo (DER, named curve for EC keys).
cc_status cc_key_public_spki(const cc_key *key, cc_bytes *out);
/// An EC key's private scalar (big-endian, padded to the order's length).
cc_status cc_key_ec_private_scalar(const cc_key *key, cc_bytes *out);
/// A DH key's private value x (big-endian).
cc_status cc_key_dh_private_value(const cc_key *key, cc_bytes *out);
/// RSA private-key operation without padding: input^d mod n (input < n, as many bytes as the modulus).
cc_status cc_rsa_private_raw(const cc_key *key, const uint8_t *in, size_t count, cc_bytes *out, char *message, size_t message_size);
/// ECDSA signature of a digest as r || s, each padded to the order's length (BSI TR-03111 §5.2.1 plain format).
cc_status cc_ecdsa_sign_plain(const cc_key *key, const uint8_t *digest, size_t digest_count, cc_bytes *out,
                              char *message, size_t message_size);

#ifdef __cplusplus
}
#endif
#endif
