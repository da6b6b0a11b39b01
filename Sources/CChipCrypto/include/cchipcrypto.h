// CChipCrypto — the OpenSSL primitives behind ChipAccessOpenSSL (the client's chip access on Linux) and the
// virtual eMRTD: random bytes, digests, 3DES/AES-CBC, AES-CMAC, EC point arithmetic over explicit prime-field
// curves and modular exponentiation: what a terminal needs. The chip side's keys (Active and Chip Authentication
// private keys, RSA raw private operations, ECDSA signing) are CEMRTD's (cemrtd_aa.h), one implementation.
// Plain C; no OpenSSL type appears here. Integers and field elements are big-endian octet strings; EC points are uncompressed (04 || x || y).
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

// Keys (the chip's side: the virtual eMRTD's and test chips' Active and Chip Authentication keys) are not here:
// they are EMRTD's `SigningKey` (CEMRTD, cemrtd_aa.h), the one implementation that specimen chips, the virtual chip
// and the server's tests share. A terminal never holds a private key.

#ifdef __cplusplus
}
#endif
#endif
