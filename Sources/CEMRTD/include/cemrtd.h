// CEMRTD — a thin C interface over OpenSSL (X.509, CRL, CMS SignedData, digests, test-PKI signing) and
// OpenJPEG (JPEG 2000) for the EMRTD module. Plain C so Swift imports it directly; compiled at -O2 in every
// configuration. OpenSSL and OpenJPEG types never appear here: certificates, CRLs, CMS objects and keys are
// opaque handles. Every fallible call returns an `em_status` and writes a one-line detail (from OpenSSL's
// error queue where there is one) into the caller's `message` buffer; nothing is printed.
//
// What is verified and how (the ICAO 9303-11 §5.1 passive-authentication steps) is decided in Swift; this
// shim only answers primitive questions ("does this key verify this signature?").
#ifndef CEMRTD_H
#define CEMRTD_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef enum em_status {
    EM_OK = 0,
    EM_ERR_PARSE = 1,            ///< the bytes are not a well-formed object of the expected kind
    EM_ERR_UNSUPPORTED = 2,      ///< a well-formed object using an algorithm or feature not supported
    EM_ERR_INVALID_ARGUMENT = 3, ///< a bad argument (index out of range, empty input, unknown name)
    EM_ERR_NOT_FOUND = 4,        ///< an optional part (extension, attribute) is absent
    EM_ERR_TOO_LARGE = 5,        ///< an image larger than the caller's pixel limit (nothing decoded)
    EM_ERR_INTERNAL = 6,         ///< any other failure inside OpenSSL / OpenJPEG (out of memory, …)
} em_status;

/// Bytes allocated by the shim (malloc); release with `em_free(bytes.data)`.
typedef struct em_bytes {
    uint8_t *data;
    size_t count;
} em_bytes;

void em_free(void *pointer);

/// The OpenSSL / OpenJPEG versions this shim runs with, e.g. "OpenSSL 3.0.13 …" / "2.5.0". Static storage.
const char *em_openssl_version(void);
const char *em_openjpeg_version(void);

// MARK: - Digests

/// Hashes `count` bytes with `algorithm` ("SHA1", "SHA224", "SHA256", "SHA384", "SHA512"); writes the digest
/// into `out` (at least 64 bytes) and its length into `out_count`.
em_status em_digest(const char *algorithm, const uint8_t *data, size_t count, uint8_t *out, size_t out_capacity,
                    size_t *out_count, char *message, size_t message_size);

// MARK: - X.509 certificates

typedef struct em_cert em_cert;

/// Parses one certificate, DER or PEM.
em_status em_cert_parse(const uint8_t *data, size_t count, em_cert **out, char *message, size_t message_size);
/// A new reference to the same certificate (release both with `em_cert_free`).
em_cert *em_cert_retain(em_cert *cert);
void em_cert_free(em_cert *cert);

/// What a certificate says about itself. Times are Unix seconds (UTC).
typedef struct em_cert_info {
    int64_t not_before;
    int64_t not_after;
    int32_t basic_constraints_ca;   ///< 1 cA TRUE, 0 FALSE, -1 extension absent
    int32_t key_usage;              ///< bit mask of EM_KU_*, -1 extension absent
    int32_t public_key_bits;        ///< key size in bits (RSA modulus, EC field)
    int32_t explicit_curve;         ///< 1 when the EC key carries explicit domain parameters
    int32_t version;                ///< X.509 version (1, 2 or 3)
    char public_key_algorithm[32];  ///< "RSA", "RSA-PSS", "EC", "DSA", …
    char curve[64];                 ///< the EC curve's name ("brainpoolP224r1"; for explicit parameters the named curve they equal, or "")
    char signature_algorithm[64];   ///< e.g. "ecdsa-with-SHA1", "RSASSA-PSS", "sha256WithRSAEncryption"
    char subject[512];              ///< RFC 2253 one-line form
    char issuer[512];
} em_cert_info;

enum {
    EM_KU_DIGITAL_SIGNATURE = 0x80, EM_KU_NON_REPUDIATION = 0x40, EM_KU_KEY_ENCIPHERMENT = 0x20,
    EM_KU_DATA_ENCIPHERMENT = 0x10, EM_KU_KEY_AGREEMENT = 0x08, EM_KU_KEY_CERT_SIGN = 0x04, EM_KU_CRL_SIGN = 0x02,
};

em_status em_cert_get_info(const em_cert *cert, em_cert_info *out, char *message, size_t message_size);
/// The certificate's DER encoding.
em_status em_cert_der(const em_cert *cert, em_bytes *out);
/// The serial number as big-endian magnitude bytes.
em_status em_cert_serial(const em_cert *cert, em_bytes *out);
/// Subject / authority key identifier octets; EM_ERR_NOT_FOUND when the extension (or keyIdentifier) is absent.
em_status em_cert_subject_key_id(const em_cert *cert, em_bytes *out);
em_status em_cert_authority_key_id(const em_cert *cert, em_bytes *out);
/// The subject public key (SubjectPublicKeyInfo DER).
em_status em_cert_public_key(const em_cert *cert, em_bytes *out);
/// The `index`-th countryName attribute (X.520 id-at-countryName, 2.5.4.6) of the certificate's subject
/// (`of_issuer` 0) or issuer name (`of_issuer` 1), as UTF-8 (at most `out_size` - 1 bytes): 1 found, 0 none.
int em_cert_country(const em_cert *cert, int of_issuer, int index, char *out, size_t out_size);
/// 1 when `subject`'s issuer name equals `issuer`'s subject name (X.509 name comparison), else 0.
int em_cert_issued_by_name(const em_cert *subject, const em_cert *issuer);
/// 1 when the two certificates have equal subject names, else 0.
int em_cert_same_subject(const em_cert *a, const em_cert *b);
/// Verifies `subject`'s signature with `issuer`'s public key: 1 verifies, 0 does not, -1 error (message).
int em_cert_verify_signature(const em_cert *subject, const em_cert *issuer, char *message, size_t message_size);

/// Information about a bare SubjectPublicKeyInfo (e.g. DG15's Active Authentication key).
em_status em_public_key_info(const uint8_t *spki, size_t count, char *algorithm, size_t algorithm_size,
                             char *curve, size_t curve_size, int32_t *bits, char *message, size_t message_size);

// MARK: - CRLs

typedef struct em_crl em_crl;

em_status em_crl_parse(const uint8_t *data, size_t count, em_crl **out, char *message, size_t message_size);
void em_crl_free(em_crl *crl);

typedef struct em_crl_info {
    int64_t this_update;            ///< Unix seconds
    int64_t next_update;            ///< Unix seconds, or INT64_MIN when absent
    int32_t revoked_count;
    char issuer[512];
    char signature_algorithm[64];
} em_crl_info;

em_status em_crl_get_info(const em_crl *crl, em_crl_info *out, char *message, size_t message_size);
em_status em_crl_der(const em_crl *crl, em_bytes *out);
/// 1 when the CRL's issuer name equals `issuer`'s subject name, else 0.
int em_crl_issued_by_name(const em_crl *crl, const em_cert *issuer);
/// Verifies the CRL's signature with `issuer`'s public key: 1 verifies, 0 does not, -1 error.
int em_crl_verify_signature(const em_crl *crl, const em_cert *issuer, char *message, size_t message_size);
/// 1 when the CRL lists `cert`'s serial number (writes the revocation date, Unix seconds), 0 when it does not.
int em_crl_lists(const em_crl *crl, const em_cert *cert, int64_t *revocation_time);

// MARK: - CMS SignedData (EF.SOD, master lists)

typedef struct em_cms em_cms;

/// Parses a CMS ContentInfo holding SignedData (DER or BER, definite or indefinite lengths).
em_status em_cms_parse(const uint8_t *data, size_t count, em_cms **out, char *message, size_t message_size);
void em_cms_free(em_cms *cms);
/// The encapsulated content type as a dotted OID ("2.23.136.1.1.1" for the LDS security object).
em_status em_cms_content_type(const em_cms *cms, char *oid, size_t oid_size);
/// The encapsulated content octets (eContent); EM_ERR_NOT_FOUND when detached.
em_status em_cms_content(const em_cms *cms, em_bytes *out);
int em_cms_signer_count(const em_cms *cms);
int em_cms_certificate_count(const em_cms *cms);
/// A new reference to embedded certificate `index`, or NULL.
em_cert *em_cms_certificate(const em_cms *cms, int index);

typedef struct em_signer_info {
    char digest_algorithm[64];      ///< e.g. "SHA256"
    char signature_algorithm[64];   ///< e.g. "ecdsa-with-SHA1", "RSASSA-PSS", "rsaEncryption"
    int32_t has_signed_attributes;
    int32_t identified_by_key_id;   ///< 1 subjectKeyIdentifier, 0 issuerAndSerialNumber
    int64_t signing_time;           ///< Unix seconds from the signingTime attribute, INT64_MIN when absent
} em_signer_info;

em_status em_cms_signer_get_info(const em_cms *cms, int signer, em_signer_info *out, char *message, size_t message_size);
/// 1 when certificate `cert` is the one signer `signer` names (issuer and serial, or key identifier), else 0.
int em_cms_signer_is(const em_cms *cms, int signer, const em_cert *cert);

/// Outcomes of verifying one signer.
typedef enum em_signature_result {
    EM_SIGNATURE_VALID = 0,
    EM_SIGNATURE_INVALID = 1,            ///< the signature over the signed attributes does not verify with the key
    EM_SIGNATURE_DIGEST_MISMATCH = 2,    ///< the messageDigest attribute is not the digest of the content
    EM_SIGNATURE_UNSUPPORTED = 3,        ///< an algorithm this OpenSSL cannot use
    EM_SIGNATURE_ERROR = 4,              ///< bad input (detail in message)
} em_signature_result;

/// Verifies signer `signer` with `cert`'s public key: the signature over the signed attributes, then the
/// messageDigest attribute against the content (RFC 5652 §5.4, §5.6).
em_signature_result em_cms_signer_verify(em_cms *cms, int signer, const em_cert *cert, char *message, size_t message_size);

// MARK: - Keys and signing (test PKI and specimen chips only)

typedef struct em_key em_key;

/// A deterministic EC private key on `curve` ("prime256v1", "brainpoolP256r1", …) derived from `seed`
/// (private scalar = SHA-512(seed) mod n, never zero).
em_status em_key_ec_from_seed(const char *curve, const uint8_t *seed, size_t seed_count, em_key **out,
                              char *message, size_t message_size);
/// A fresh RSA key of `bits` bits (not deterministic).
em_status em_key_rsa_generate(int32_t bits, em_key **out, char *message, size_t message_size);
void em_key_free(em_key *key);

/// What to put in a certificate. `subject` is "/C=UT/O=Utopia/CN=CSCA Utopia" (values without '/' or '=').
typedef struct em_cert_spec {
    const char *subject;
    const uint8_t *serial;
    size_t serial_count;
    int64_t not_before;
    int64_t not_after;
    int32_t is_ca;                  ///< basicConstraints cA (critical), pathLenConstraint 0
    int32_t key_usage;              ///< EM_KU_* mask (critical)
    const char *digest;             ///< "SHA256", …
} em_cert_spec;

/// Creates a certificate for `subject_key` issued by `issuer` (NULL: self-signed) and signed with `issuer_key`.
/// Adds subject/authority key identifiers.
em_status em_cert_create(const em_cert_spec *spec, const em_key *subject_key, const em_cert *issuer,
                         const em_key *issuer_key, em_cert **out, char *message, size_t message_size);

/// Creates a CRL issued by `issuer` listing `count` serial numbers (serials[i] of serial_counts[i] bytes),
/// each revoked at `revocation_time`.
em_status em_crl_create(const em_cert *issuer, const em_key *issuer_key, const uint8_t *const *serials,
                        const size_t *serial_counts, int32_t count, int64_t revocation_time, int64_t this_update,
                        int64_t next_update, const char *digest, em_crl **out, char *message, size_t message_size);

/// Signs `content` as CMS SignedData (DER) with encapsulated content type `content_type_oid`, one signer
/// (`signer`, `key`, `digest`), signed attributes contentType, messageDigest and signingTime = `signing_time`,
/// and the signer's certificate embedded.
em_status em_cms_sign(const uint8_t *content, size_t count, const char *content_type_oid, const em_cert *signer,
                      const em_key *key, const char *digest, int64_t signing_time, em_bytes *out,
                      char *message, size_t message_size);

// MARK: - JPEG 2000 (OpenJPEG)

/// A decoded image (malloc); release with `em_free(bitmap.pixels)`. 8-bit, interleaved, row-major.
typedef struct em_bitmap {
    int32_t width;
    int32_t height;
    int32_t channels;   ///< 1 (grey) or 3 (R, G, B)
    uint8_t *pixels;
} em_bitmap;

/// Decodes a JPEG 2000 image (JP2 file format or a raw J2K codestream). Refuses images whose declared
/// width × height exceeds `max_pixels` before decoding any tile. Components are scaled to 8 bits;
/// subsampled YCbCr (sYCC) is converted to RGB. `declared_width`/`declared_height` are filled from the header.
em_status em_jpeg2000_decode(const uint8_t *data, size_t count, uint64_t max_pixels, em_bitmap *out,
                             int64_t *declared_width, int64_t *declared_height, char *message, size_t message_size);

/// Encodes 8-bit grey or RGB pixels as a JP2 file, lossy at about `compression_ratio`:1 (e.g. 20).
em_status em_jpeg2000_encode(const uint8_t *pixels, int32_t width, int32_t height, int32_t channels,
                             float compression_ratio, em_bytes *out, char *message, size_t message_size);

#ifdef __cplusplus
}
#endif
#endif
