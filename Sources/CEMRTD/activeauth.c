// CEMRTD — Active Authentication primitives (cemrtd_aa.h): raw RSA, plain ECDSA, deterministic RSA keys, PEM.
#define OPENSSL_SUPPRESS_DEPRECATED 1   // RSA_set0_* / EC_KEY: the plain way to build a key from its numbers
#include "cemrtd_aa.h"
#include "cemrtd_internal.h"
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- helpers --------------------------------------------------------------------------------------

static EVP_PKEY *parse_spki(const uint8_t *spki, size_t count) {
    if (!spki || count == 0 || count > INT32_MAX) return NULL;
    const unsigned char *p = spki;
    EVP_PKEY *pk = d2i_PUBKEY(NULL, &p, (long)count);
    if (pk && (size_t)(p - spki) != count) { EVP_PKEY_free(pk); return NULL; }
    return pk;
}

/// The EC group of an EC key (NULL otherwise).
static const EC_GROUP *ec_group(const EVP_PKEY *pk) {
    if (EVP_PKEY_get_base_id(pk) != EVP_PKEY_EC) return NULL;
    const EC_KEY *ec = EVP_PKEY_get0_EC_KEY(pk);
    return ec ? EC_KEY_get0_group(ec) : NULL;
}

static int order_bytes(const EC_GROUP *g) {
    const BIGNUM *order = EC_GROUP_get0_order(g);
    return order ? BN_num_bytes(order) : 0;
}

// ---- verifier side --------------------------------------------------------------------------------

em_status em_aa_key_info_of(const uint8_t *spki, size_t count, em_aa_key_info *out, char *message, size_t message_size) {
    ERR_clear_error();
    memset(out, 0, sizeof *out);
    EVP_PKEY *pk = parse_spki(spki, count);
    if (!pk) { em_put_message(message, message_size, "not a SubjectPublicKeyInfo"); return EM_ERR_PARSE; }
    int id = EVP_PKEY_get_base_id(pk);
    if (id == EVP_PKEY_RSA) {
        out->kind = 1;
        out->bits = EVP_PKEY_get_bits(pk);
    } else if (id == EVP_PKEY_EC) {
        out->kind = 2;
        const EC_GROUP *g = ec_group(pk);
        if (g) {
            out->bits = EC_GROUP_order_bits(g);
            out->order_bytes = order_bytes(g);
            int nid = EC_GROUP_get_curve_name(g);
            if (nid == NID_undef) {
                int m = EC_GROUP_check_named_curve(g, 0, NULL);
                if (m > 0) nid = m;
            }
            if (nid != NID_undef) snprintf(out->curve, sizeof out->curve, "%s", OBJ_nid2sn(nid));
        }
    } else {
        out->kind = 0;
        out->bits = EVP_PKEY_get_bits(pk);
    }
    EVP_PKEY_free(pk);
    ERR_clear_error();
    return EM_OK;
}

em_status em_aa_rsa_public_raw(const uint8_t *spki, size_t spki_count, const uint8_t *signature, size_t signature_count,
                               em_bytes *out, char *message, size_t message_size) {
    ERR_clear_error();
    out->data = NULL; out->count = 0;
    EVP_PKEY *pk = parse_spki(spki, spki_count);
    if (!pk) { em_put_message(message, message_size, "not a SubjectPublicKeyInfo"); return EM_ERR_PARSE; }
    if (EVP_PKEY_get_base_id(pk) != EVP_PKEY_RSA) {
        EVP_PKEY_free(pk);
        em_put_message(message, message_size, "not an RSA key");
        return EM_ERR_UNSUPPORTED;
    }
    size_t k = (size_t)EVP_PKEY_get_size(pk);
    if (signature_count != k) {
        EVP_PKEY_free(pk);
        char text[96];
        snprintf(text, sizeof text, "signature of %zu bytes, the modulus is %zu bytes", signature_count, k);
        em_put_message(message, message_size, text);
        return EM_ERR_INVALID_ARGUMENT;
    }
    BIGNUM *n = NULL, *s = BN_bin2bn(signature, (int)signature_count, NULL);
    em_status st = EM_ERR_INTERNAL;
    if (s && EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_N, &n) && n) {
        if (BN_cmp(s, n) >= 0) {
            em_put_message(message, message_size, "signature is not below the modulus");
            st = EM_ERR_INVALID_ARGUMENT;
        } else {
            EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(pk, NULL);
            unsigned char *buf = malloc(k);
            size_t outlen = k;
            if (ctx && buf && EVP_PKEY_verify_recover_init(ctx) > 0 && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) > 0
                && EVP_PKEY_verify_recover(ctx, buf, &outlen, signature, signature_count) > 0) {
                // Left-pad to the modulus length (OpenSSL writes exactly k bytes with no padding, but be exact).
                unsigned char *padded = calloc(k ? k : 1, 1);
                if (padded && outlen <= k) {
                    memcpy(padded + (k - outlen), buf, outlen);
                    st = em_bytes_out(out, padded, k) ? EM_OK : EM_ERR_INTERNAL;
                }
                free(padded);
            } else {
                em_put_message(message, message_size, "raw RSA public operation failed");
            }
            free(buf);
            EVP_PKEY_CTX_free(ctx);
        }
    } else {
        em_put_message(message, message_size, "RSA modulus cannot be read");
    }
    BN_free(n);
    BN_free(s);
    EVP_PKEY_free(pk);
    if (st == EM_OK) ERR_clear_error();
    return st;
}

int em_aa_ecdsa_verify_plain(const uint8_t *spki, size_t spki_count, const uint8_t *digest, size_t digest_count,
                             const uint8_t *signature, size_t signature_count, char *message, size_t message_size) {
    ERR_clear_error();
    EVP_PKEY *pk = parse_spki(spki, spki_count);
    if (!pk) { em_put_message(message, message_size, "not a SubjectPublicKeyInfo"); return -1; }
    const EC_GROUP *g = ec_group(pk);
    if (!g) { EVP_PKEY_free(pk); em_put_message(message, message_size, "not an EC key"); return -1; }
    size_t half = (size_t)order_bytes(g);
    if (half == 0 || signature_count != 2 * half) {
        EVP_PKEY_free(pk);
        char text[96];
        snprintf(text, sizeof text, "plain signature of %zu bytes, r || s needs %zu", signature_count, 2 * half);
        em_put_message(message, message_size, text);
        return -1;
    }
    int result = 0;
    ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(signature, (int)half, NULL), *s = BN_bin2bn(signature + half, (int)half, NULL);
    unsigned char *der = NULL;
    int der_len = -1;
    if (sig && r && s && ECDSA_SIG_set0(sig, r, s)) {
        r = s = NULL;   // owned by sig now
        der_len = i2d_ECDSA_SIG(sig, &der);
    }
    if (der_len > 0) {
        EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(pk, NULL);
        if (ctx && EVP_PKEY_verify_init(ctx) > 0) {
            int v = EVP_PKEY_verify(ctx, der, (size_t)der_len, digest, digest_count);
            result = v == 1 ? 1 : 0;
        } else {
            em_put_message(message, message_size, "ECDSA verification could not start");
            result = -1;
        }
        EVP_PKEY_CTX_free(ctx);
    } else {
        em_put_message(message, message_size, "plain signature could not be encoded");
        result = -1;
    }
    OPENSSL_free(der);
    BN_free(r); BN_free(s);
    ECDSA_SIG_free(sig);
    EVP_PKEY_free(pk);
    if (result != -1) ERR_clear_error();
    return result;
}

// ---- chip side ------------------------------------------------------------------------------------

/// A probable prime of exactly `bits` bits with its two top bits set, the first at or above a candidate drawn from
/// SHA-512(seed || label || counter), with gcd(p - 1, e) = 1.
static BIGNUM *seeded_prime(const uint8_t *seed, size_t seed_count, const char *label, int bits, const BIGNUM *e, BN_CTX *ctx) {
    size_t nbytes = (size_t)(bits + 7) / 8;
    unsigned char *buf = malloc(nbytes + 64);
    if (!buf) return NULL;
    size_t filled = 0;
    for (uint32_t counter = 0; filled < nbytes; counter++) {
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        unsigned char c[4] = {(unsigned char)(counter >> 24), (unsigned char)(counter >> 16), (unsigned char)(counter >> 8), (unsigned char)counter};
        unsigned int n = 0;
        int ok = md && EVP_DigestInit_ex(md, EVP_sha512(), NULL) && EVP_DigestUpdate(md, seed, seed_count)
                 && EVP_DigestUpdate(md, label, strlen(label)) && EVP_DigestUpdate(md, c, 4)
                 && EVP_DigestFinal_ex(md, buf + filled, &n);
        EVP_MD_CTX_free(md);
        if (!ok) { free(buf); return NULL; }
        filled += n;
    }
    BIGNUM *p = BN_bin2bn(buf, (int)nbytes, NULL);
    OPENSSL_cleanse(buf, nbytes + 64);
    free(buf);
    BIGNUM *pm1 = BN_new(), *g = BN_new();
    if (!p || !pm1 || !g) { BN_free(p); BN_free(pm1); BN_free(g); return NULL; }
    // Keep exactly `bits` bits, the top two set (so p·q has 2·bits bits), odd.
    for (int i = bits; i < (int)nbytes * 8; i++) BN_clear_bit(p, i);
    BN_set_bit(p, bits - 1);
    BN_set_bit(p, bits - 2);
    BN_set_bit(p, 0);
    for (int tries = 0; tries < 1000000; tries++) {
        if (BN_num_bits(p) != bits) break;   // ran past the top: give up (cannot happen for sane sizes)
        if (BN_check_prime(p, ctx, NULL) == 1 && BN_copy(pm1, p) && BN_sub_word(pm1, 1) && BN_gcd(g, pm1, e, ctx) && BN_is_one(g)) {
            BN_free(pm1); BN_free(g);
            return p;
        }
        if (!BN_add_word(p, 2)) break;
    }
    BN_free(pm1); BN_free(g); BN_free(p);
    return NULL;
}

em_status em_key_rsa_from_seed(int32_t bits, const uint8_t *seed, size_t seed_count, em_key **out,
                               char *message, size_t message_size) {
    ERR_clear_error();
    *out = NULL;
    if (bits < 1024 || bits > 4096 || bits % 2 != 0) { em_put_message(message, message_size, "RSA key size must be an even 1024…4096 bits"); return EM_ERR_INVALID_ARGUMENT; }
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *e = BN_new();
    if (!ctx || !e || !BN_set_word(e, 65537)) { BN_CTX_free(ctx); BN_free(e); return EM_ERR_INTERNAL; }
    BIGNUM *p = seeded_prime(seed, seed_count, " RSA p", bits / 2, e, ctx);
    BIGNUM *q = seeded_prime(seed, seed_count, " RSA q", bits / 2, e, ctx);
    BIGNUM *n = BN_new(), *d = BN_new(), *dp = BN_new(), *dq = BN_new(), *qinv = BN_new();
    BIGNUM *p1 = BN_new(), *q1 = BN_new(), *phi = BN_new();
    em_status st = EM_ERR_INTERNAL;
    RSA *rsa = NULL;
    if (p && q && BN_cmp(p, q) != 0 && n && d && dp && dq && qinv && p1 && q1 && phi) {
        if (BN_cmp(p, q) < 0) { BIGNUM *t = p; p = q; q = t; }   // p > q, the usual CRT order
        int ok = BN_mul(n, p, q, ctx) && BN_num_bits(n) == bits
                 && BN_sub(p1, p, BN_value_one()) && BN_sub(q1, q, BN_value_one()) && BN_mul(phi, p1, q1, ctx)
                 && BN_mod_inverse(d, e, phi, ctx) && BN_mod(dp, d, p1, ctx) && BN_mod(dq, d, q1, ctx)
                 && BN_mod_inverse(qinv, q, p, ctx);
        rsa = ok ? RSA_new() : NULL;
        if (rsa) {
            BIGNUM *e2 = BN_dup(e);
            if (e2 && RSA_set0_key(rsa, n, e2, d)) {
                n = d = NULL; e2 = NULL;
                if (RSA_set0_factors(rsa, p, q)) {
                    p = q = NULL;
                    if (RSA_set0_crt_params(rsa, dp, dq, qinv)) {
                        dp = dq = qinv = NULL;
                        EVP_PKEY *pk = EVP_PKEY_new();
                        if (pk && EVP_PKEY_assign_RSA(pk, rsa)) {
                            rsa = NULL;
                            em_key *k = malloc(sizeof *k);
                            if (k) { k->pkey = pk; *out = k; st = EM_OK; } else EVP_PKEY_free(pk);
                        } else EVP_PKEY_free(pk);
                    }
                }
            }
            BN_free(e2);
        }
    }
    if (st != EM_OK) em_put_message(message, message_size, "RSA key derivation failed");
    RSA_free(rsa);
    BN_clear_free(p); BN_clear_free(q); BN_free(n); BN_clear_free(d); BN_clear_free(dp); BN_clear_free(dq); BN_clear_free(qinv);
    BN_clear_free(p1); BN_clear_free(q1); BN_clear_free(phi); BN_free(e);
    BN_CTX_free(ctx);
    return st;
}

em_status em_key_rsa_private_raw(const em_key *key, const uint8_t *block, size_t count, em_bytes *out,
                                 char *message, size_t message_size) {
    ERR_clear_error();
    out->data = NULL; out->count = 0;
    if (EVP_PKEY_get_base_id(key->pkey) != EVP_PKEY_RSA) { em_put_message(message, message_size, "not an RSA key"); return EM_ERR_UNSUPPORTED; }
    size_t k = (size_t)EVP_PKEY_get_size(key->pkey);
    if (count != k) { em_put_message(message, message_size, "block is not the modulus length"); return EM_ERR_INVALID_ARGUMENT; }
    // The raw private operation m^d mod n is RSA decryption without padding.
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key->pkey, NULL);
    unsigned char *buf = malloc(k);
    size_t outlen = k;
    em_status st = EM_ERR_INTERNAL;
    if (ctx && buf && EVP_PKEY_decrypt_init(ctx) > 0 && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) > 0
        && EVP_PKEY_decrypt(ctx, buf, &outlen, block, count) > 0 && outlen <= k) {
        unsigned char *padded = calloc(k, 1);
        if (padded) {
            memcpy(padded + (k - outlen), buf, outlen);
            st = em_bytes_out(out, padded, k) ? EM_OK : EM_ERR_INTERNAL;
            free(padded);
        }
    } else {
        em_put_message(message, message_size, "raw RSA private operation failed (the block must be below the modulus)");
        st = EM_ERR_INVALID_ARGUMENT;
    }
    free(buf);
    EVP_PKEY_CTX_free(ctx);
    return st;
}

em_status em_key_ecdsa_sign_plain(const em_key *key, const uint8_t *digest, size_t digest_count, em_bytes *out,
                                  char *message, size_t message_size) {
    ERR_clear_error();
    out->data = NULL; out->count = 0;
    const EC_GROUP *g = ec_group(key->pkey);
    if (!g) { em_put_message(message, message_size, "not an EC key"); return EM_ERR_UNSUPPORTED; }
    size_t half = (size_t)order_bytes(g);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key->pkey, NULL);
    size_t len = 0;
    unsigned char *der = NULL;
    em_status st = EM_ERR_INTERNAL;
    if (ctx && EVP_PKEY_sign_init(ctx) > 0 && EVP_PKEY_sign(ctx, NULL, &len, digest, digest_count) > 0
        && (der = malloc(len)) && EVP_PKEY_sign(ctx, der, &len, digest, digest_count) > 0) {
        const unsigned char *p = der;
        ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)len);
        const BIGNUM *r = NULL, *s = NULL;
        unsigned char *plain = malloc(2 * half);
        if (sig && plain) {
            ECDSA_SIG_get0(sig, &r, &s);
            if (BN_bn2binpad(r, plain, (int)half) == (int)half && BN_bn2binpad(s, plain + half, (int)half) == (int)half)
                st = em_bytes_out(out, plain, 2 * half) ? EM_OK : EM_ERR_INTERNAL;
        }
        free(plain);
        ECDSA_SIG_free(sig);
    }
    if (st != EM_OK) em_put_message(message, message_size, "ECDSA signing failed");
    free(der);
    EVP_PKEY_CTX_free(ctx);
    return st;
}

em_status em_key_public_spki(const em_key *key, em_bytes *out, char *message, size_t message_size) {
    ERR_clear_error();
    out->data = NULL; out->count = 0;
    unsigned char *buf = NULL;
    int n = i2d_PUBKEY(key->pkey, &buf);
    if (n <= 0) { em_put_message(message, message_size, "public key cannot be encoded"); return EM_ERR_INTERNAL; }
    int ok = em_bytes_out(out, buf, (size_t)n);
    OPENSSL_free(buf);
    return ok ? EM_OK : EM_ERR_INTERNAL;
}

em_status em_key_pkcs8_pem(const em_key *key, em_bytes *out, char *message, size_t message_size) {
    ERR_clear_error();
    out->data = NULL; out->count = 0;
    BIO *b = BIO_new(BIO_s_mem());
    em_status st = EM_ERR_INTERNAL;
    if (b && PEM_write_bio_PKCS8PrivateKey(b, key->pkey, NULL, NULL, 0, NULL, NULL)) {
        char *data = NULL;
        long n = BIO_get_mem_data(b, &data);
        if (n > 0 && em_bytes_out(out, (const unsigned char *)data, (size_t)n)) st = EM_OK;
    }
    if (st != EM_OK) em_put_message(message, message_size, "private key cannot be written as PKCS#8 PEM");
    BIO_free(b);
    return st;
}

em_status em_key_from_pem(const uint8_t *pem, size_t count, em_key **out, char *message, size_t message_size) {
    ERR_clear_error();
    *out = NULL;
    if (!pem || count == 0 || count > (1 << 20)) { em_put_message(message, message_size, "no PEM data (or more than 1 MiB)"); return EM_ERR_INVALID_ARGUMENT; }
    BIO *b = BIO_new_mem_buf(pem, (int)count);
    EVP_PKEY *pk = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
    BIO_free(b);
    if (!pk) { em_put_message(message, message_size, "not a PEM private key"); return EM_ERR_PARSE; }
    em_key *k = malloc(sizeof *k);
    if (!k) { EVP_PKEY_free(pk); return EM_ERR_INTERNAL; }
    k->pkey = pk;
    *out = k;
    ERR_clear_error();
    return EM_OK;
}

int32_t em_key_kind(const em_key *key) {
    switch (EVP_PKEY_get_base_id(key->pkey)) {
    case EVP_PKEY_RSA: return 1;
    case EVP_PKEY_EC: return 2;
    case EVP_PKEY_DH: case EVP_PKEY_DHX: return 3;
    default: return 0;
    }
}

em_status em_key_ec_generate(const char *curve, em_key **out, char *message, size_t message_size) {
    ERR_clear_error();
    *out = NULL;
    EVP_PKEY *pk = curve ? EVP_EC_gen(curve) : NULL;
    if (!pk) { em_put_message(message, message_size, "EC key generation failed (unknown curve?)"); return EM_ERR_UNSUPPORTED; }
    em_key *k = malloc(sizeof *k);
    if (!k) { EVP_PKEY_free(pk); return EM_ERR_INTERNAL; }
    k->pkey = pk;
    *out = k;
    return EM_OK;
}

em_status em_key_ec_private_scalar(const em_key *key, em_bytes *out, char *message, size_t message_size) {
    ERR_clear_error();
    out->data = NULL; out->count = 0;
    const EC_GROUP *g = ec_group(key->pkey);
    if (!g) { em_put_message(message, message_size, "not an EC key"); return EM_ERR_INVALID_ARGUMENT; }
    size_t n = (size_t)order_bytes(g);
    BIGNUM *d = NULL;
    em_status st = EM_ERR_INTERNAL;
    unsigned char buf[80];
    if (n > 0 && n <= sizeof buf && EVP_PKEY_get_bn_param(key->pkey, OSSL_PKEY_PARAM_PRIV_KEY, &d)
        && BN_bn2binpad(d, buf, (int)n) == (int)n && em_bytes_out(out, buf, n)) st = EM_OK;
    OPENSSL_cleanse(buf, sizeof buf);
    BN_clear_free(d);
    if (st != EM_OK) em_put_message(message, message_size, "the EC private scalar cannot be read");
    return st;
}

em_status em_key_dh_private_value(const em_key *key, em_bytes *out, char *message, size_t message_size) {
    ERR_clear_error();
    out->data = NULL; out->count = 0;
    int id = EVP_PKEY_get_base_id(key->pkey);
    if (id != EVP_PKEY_DH && id != EVP_PKEY_DHX) { em_put_message(message, message_size, "not a DH key"); return EM_ERR_INVALID_ARGUMENT; }
    BIGNUM *x = NULL;
    em_status st = EM_ERR_INTERNAL;
    if (EVP_PKEY_get_bn_param(key->pkey, OSSL_PKEY_PARAM_PRIV_KEY, &x)) {
        int n = BN_num_bytes(x);
        unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
        if (buf && BN_bn2bin(x, buf) == n && em_bytes_out(out, buf, (size_t)n)) st = EM_OK;
        if (buf) { OPENSSL_cleanse(buf, (size_t)(n > 0 ? n : 1)); free(buf); }
    }
    BN_clear_free(x);
    if (st != EM_OK) em_put_message(message, message_size, "the DH private value cannot be read");
    return st;
}

em_status em_random_bytes(uint8_t *out, size_t count, char *message, size_t message_size) {
    ERR_clear_error();
    if (count > INT32_MAX || RAND_bytes(out, (int)count) != 1) { em_put_message(message, message_size, "the random generator failed"); return EM_ERR_INTERNAL; }
    return EM_OK;
}
