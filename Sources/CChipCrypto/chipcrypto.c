// CChipCrypto — OpenSSL implementation of cchipcrypto.h.
#define OPENSSL_SUPPRESS_DEPRECATED 1   // EC_KEY: the plain way to reach an EC key's group for ECDSA's plain format
#include "cchipcrypto.h"
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cc_ec_group { EC_GROUP *group; size_t field_bytes; };
struct cc_key { EVP_PKEY *pkey; };

void cc_free(void *pointer) { free(pointer); }
const char *cc_openssl_version(void) { return OpenSSL_version(OPENSSL_VERSION); }

static void put_message(char *message, size_t size, const char *what) {
    if (!message || size == 0) { ERR_clear_error(); return; }
    unsigned long e = ERR_peek_last_error();
    if (e != 0) {
        char buf[256];
        ERR_error_string_n(e, buf, sizeof buf);
        snprintf(message, size, "%s (%s)", what, buf);
    } else {
        snprintf(message, size, "%s", what);
    }
    ERR_clear_error();
}

static int bytes_out(cc_bytes *out, const unsigned char *data, size_t count) {
    out->data = malloc(count ? count : 1);
    if (!out->data) { out->count = 0; return 0; }
    if (count) memcpy(out->data, data, count);
    out->count = count;
    return 1;
}

int cc_random(uint8_t *out, size_t count) {
    if (count == 0) return 1;
    return count <= INT32_MAX && RAND_bytes(out, (int)count) == 1;
}

cc_status cc_digest(const char *algorithm, const uint8_t *data, size_t count, uint8_t *out, size_t *out_count) {
    const EVP_MD *md = algorithm ? EVP_get_digestbyname(algorithm) : NULL;
    if (!md) { ERR_clear_error(); return CC_ERR_UNSUPPORTED; }
    unsigned int n = 0;
    if (!EVP_Digest(data, count, out, &n, md, NULL)) { ERR_clear_error(); return CC_ERR_INTERNAL; }
    *out_count = n;
    return CC_OK;
}

cc_status cc_cbc(int cipher, int encrypt, const uint8_t *key, size_t key_count, const uint8_t *iv,
                 const uint8_t *in, size_t count, uint8_t *out) {
    const EVP_CIPHER *c = NULL;
    size_t block = 16;
    if (cipher == CC_CIPHER_3DES) {
        block = 8;
        if (key_count == 16) c = EVP_des_ede_cbc();
        else if (key_count == 24) c = EVP_des_ede3_cbc();
    } else if (cipher == CC_CIPHER_AES) {
        if (key_count == 16) c = EVP_aes_128_cbc();
        else if (key_count == 24) c = EVP_aes_192_cbc();
        else if (key_count == 32) c = EVP_aes_256_cbc();
    }
    if (!c || count % block != 0 || count > INT32_MAX) return CC_ERR_INVALID;
    if (count == 0) return CC_OK;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n1 = 0, n2 = 0;
    int ok = ctx && EVP_CipherInit_ex(ctx, c, NULL, key, iv, encrypt ? 1 : 0) && EVP_CIPHER_CTX_set_padding(ctx, 0)
             && EVP_CipherUpdate(ctx, out, &n1, in, (int)count) && EVP_CipherFinal_ex(ctx, out + n1, &n2)
             && (size_t)(n1 + n2) == count;
    EVP_CIPHER_CTX_free(ctx);
    ERR_clear_error();
    return ok ? CC_OK : CC_ERR_INTERNAL;
}

cc_status cc_cmac(const uint8_t *key, size_t key_count, const uint8_t *data, size_t count, uint8_t *out) {
    const char *name = key_count == 16 ? "AES-128-CBC" : key_count == 24 ? "AES-192-CBC" : key_count == 32 ? "AES-256-CBC" : NULL;
    if (!name) return CC_ERR_INVALID;
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
    EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
    OSSL_PARAM params[] = { OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, (char *)name, 0), OSSL_PARAM_construct_end() };
    size_t n = 0;
    int ok = ctx && EVP_MAC_init(ctx, key, key_count, params) && EVP_MAC_update(ctx, data, count)
             && EVP_MAC_final(ctx, out, &n, 16) && n == 16;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
    ERR_clear_error();
    return ok ? CC_OK : CC_ERR_INTERNAL;
}

// ---- EC ------------------------------------------------------------------------------------------------

static int curve_nid(const char *name) {
    if (!name || !*name) return NID_undef;
    if (strcmp(name, "secp256r1") == 0) return NID_X9_62_prime256v1;
    if (strcmp(name, "secp192r1") == 0) return NID_X9_62_prime192v1;
    int nid = OBJ_sn2nid(name);
    if (nid == NID_undef) nid = OBJ_ln2nid(name);
    ERR_clear_error();
    return nid;
}

cc_status cc_ec_group_new(const uint8_t *p, size_t p_count, const uint8_t *a, size_t a_count, const uint8_t *b,
                          size_t b_count, const uint8_t *generator, size_t generator_count, const uint8_t *order,
                          size_t order_count, int32_t cofactor, const char *name_hint, cc_ec_group **out,
                          char *message, size_t message_size) {
    *out = NULL;
    if (p_count == 0 || p_count > 66 || cofactor < 1) { put_message(message, message_size, "curve parameters out of range"); return CC_ERR_INVALID; }
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *bp = BN_bin2bn(p, (int)p_count, NULL), *ba = BN_bin2bn(a, (int)a_count, NULL), *bb = BN_bin2bn(b, (int)b_count, NULL);
    BIGNUM *bn = BN_bin2bn(order, (int)order_count, NULL), *bh = BN_new();
    EC_GROUP *g = NULL;
    EC_POINT *gen = NULL;
    cc_status st = CC_ERR_INVALID;
    if (ctx && bp && ba && bb && bn && bh && BN_set_word(bh, (BN_ULONG)cofactor)) {
        g = EC_GROUP_new_curve_GFp(bp, ba, bb, ctx);
        gen = g ? EC_POINT_new(g) : NULL;
        if (gen && EC_POINT_oct2point(g, gen, generator, generator_count, ctx) && EC_GROUP_set_generator(g, gen, bn, bh)) {
            st = CC_OK;
            int nid = curve_nid(name_hint);
            if (nid != NID_undef) {
                EC_GROUP *named = EC_GROUP_new_by_curve_name(nid);
                if (named && EC_GROUP_cmp(named, g, ctx) == 0) { EC_GROUP_free(g); g = named; named = NULL; }
                EC_GROUP_free(named);
            }
        } else {
            put_message(message, message_size, "the base point is not on the curve");
        }
    } else {
        put_message(message, message_size, "curve parameters cannot be read");
    }
    EC_POINT_free(gen);
    BN_free(bp); BN_free(ba); BN_free(bb); BN_free(bn); BN_free(bh); BN_CTX_free(ctx);
    if (st != CC_OK) { EC_GROUP_free(g); return st; }
    cc_ec_group *r = malloc(sizeof *r);
    if (!r) { EC_GROUP_free(g); return CC_ERR_INTERNAL; }
    r->group = g;
    r->field_bytes = p_count;
    *out = r;
    ERR_clear_error();
    return CC_OK;
}

void cc_ec_group_free(cc_ec_group *group) {
    if (!group) return;
    EC_GROUP_free(group->group);
    free(group);
}

static cc_status point_out(const cc_ec_group *g, const EC_POINT *pt, BN_CTX *ctx, uint8_t *out, size_t *out_count) {
    if (EC_POINT_is_at_infinity(g->group, pt)) return CC_ERR_INVALID;
    size_t n = EC_POINT_point2oct(g->group, pt, POINT_CONVERSION_UNCOMPRESSED, out, 1 + 2 * g->field_bytes, ctx);
    if (n != 1 + 2 * g->field_bytes) { ERR_clear_error(); return CC_ERR_INTERNAL; }
    *out_count = n;
    return CC_OK;
}

static EC_POINT *read_point(const cc_ec_group *g, const uint8_t *data, size_t count, BN_CTX *ctx) {
    if (count != 1 + 2 * g->field_bytes || data[0] != 0x04) return NULL;
    EC_POINT *pt = EC_POINT_new(g->group);
    // oct2point refuses a point not on the curve.
    if (!pt || !EC_POINT_oct2point(g->group, pt, data, count, ctx) || EC_POINT_is_at_infinity(g->group, pt)) {
        EC_POINT_free(pt);
        ERR_clear_error();
        return NULL;
    }
    return pt;
}

cc_status cc_ec_mul(const cc_ec_group *group, const uint8_t *scalar, size_t scalar_count, const uint8_t *point,
                    size_t point_count, uint8_t *out, size_t *out_count, char *message, size_t message_size) {
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *k = BN_bin2bn(scalar, (int)scalar_count, NULL);
    EC_POINT *in = point ? read_point(group, point, point_count, ctx) : NULL;
    EC_POINT *r = EC_POINT_new(group->group);
    cc_status st = CC_ERR_INTERNAL;
    if (point && !in) {
        put_message(message, message_size, "the point is not on the curve");
        st = CC_ERR_INVALID;
    } else if (ctx && k && r && EC_POINT_mul(group->group, r, point ? NULL : k, in, point ? k : NULL, ctx)) {
        st = point_out(group, r, ctx, out, out_count);
        if (st != CC_OK) put_message(message, message_size, "the product is the point at infinity");
    } else {
        put_message(message, message_size, "EC multiplication failed");
    }
    EC_POINT_free(in); EC_POINT_free(r); BN_clear_free(k); BN_CTX_free(ctx);
    return st;
}

cc_status cc_ec_add(const cc_ec_group *group, const uint8_t *a, size_t a_count, const uint8_t *b, size_t b_count,
                    uint8_t *out, size_t *out_count, char *message, size_t message_size) {
    BN_CTX *ctx = BN_CTX_new();
    EC_POINT *pa = read_point(group, a, a_count, ctx), *pb = read_point(group, b, b_count, ctx);
    EC_POINT *r = EC_POINT_new(group->group);
    cc_status st = CC_ERR_INVALID;
    if (!pa || !pb) {
        put_message(message, message_size, "a point is not on the curve");
    } else if (r && EC_POINT_add(group->group, r, pa, pb, ctx)) {
        st = point_out(group, r, ctx, out, out_count);
        if (st != CC_OK) put_message(message, message_size, "the sum is the point at infinity");
    } else {
        st = CC_ERR_INTERNAL;
        put_message(message, message_size, "EC addition failed");
    }
    EC_POINT_free(pa); EC_POINT_free(pb); EC_POINT_free(r); BN_CTX_free(ctx);
    return st;
}

int cc_ec_is_on_curve(const cc_ec_group *group, const uint8_t *point, size_t point_count) {
    BN_CTX *ctx = BN_CTX_new();
    EC_POINT *p = ctx ? read_point(group, point, point_count, ctx) : NULL;
    int ok = p != NULL;
    EC_POINT_free(p);
    BN_CTX_free(ctx);
    return ok;
}

// ---- modular arithmetic ------------------------------------------------------------------------------------

static cc_status bn_out(const BIGNUM *r, size_t modulus_count, uint8_t *out, size_t out_capacity) {
    if (out_capacity < modulus_count || BN_num_bytes(r) > (int)modulus_count) return CC_ERR_INVALID;
    return BN_bn2binpad(r, out, (int)modulus_count) == (int)modulus_count ? CC_OK : CC_ERR_INTERNAL;
}

cc_status cc_mod_exp(const uint8_t *base, size_t base_count, const uint8_t *exponent, size_t exponent_count,
                     const uint8_t *modulus, size_t modulus_count, uint8_t *out, size_t out_capacity) {
    if (modulus_count == 0 || modulus_count > 2048) return CC_ERR_INVALID;
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *b = BN_bin2bn(base, (int)base_count, NULL), *e = BN_bin2bn(exponent, (int)exponent_count, NULL);
    BIGNUM *m = BN_bin2bn(modulus, (int)modulus_count, NULL), *r = BN_new();
    cc_status st = CC_ERR_INVALID;
    if (ctx && b && e && m && r && !BN_is_zero(m)) {
        BN_set_flags(e, BN_FLG_CONSTTIME);
        st = BN_mod_exp(r, b, e, m, ctx) ? bn_out(r, modulus_count, out, out_capacity) : CC_ERR_INTERNAL;
    }
    BN_free(b); BN_clear_free(e); BN_free(m); BN_free(r); BN_CTX_free(ctx);
    ERR_clear_error();
    return st;
}

cc_status cc_mod_mul(const uint8_t *a, size_t a_count, const uint8_t *b, size_t b_count, const uint8_t *modulus,
                     size_t modulus_count, uint8_t *out, size_t out_capacity) {
    if (modulus_count == 0 || modulus_count > 2048) return CC_ERR_INVALID;
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *x = BN_bin2bn(a, (int)a_count, NULL), *y = BN_bin2bn(b, (int)b_count, NULL);
    BIGNUM *m = BN_bin2bn(modulus, (int)modulus_count, NULL), *r = BN_new();
    cc_status st = CC_ERR_INVALID;
    if (ctx && x && y && m && r && !BN_is_zero(m)) {
        st = BN_mod_mul(r, x, y, m, ctx) ? bn_out(r, modulus_count, out, out_capacity) : CC_ERR_INTERNAL;
    }
    BN_free(x); BN_free(y); BN_free(m); BN_free(r); BN_CTX_free(ctx);
    ERR_clear_error();
    return st;
}

// ---- keys --------------------------------------------------------------------------------------------------

static cc_status wrap_key(EVP_PKEY *pk, cc_key **out) {
    cc_key *k = malloc(sizeof *k);
    if (!k) { EVP_PKEY_free(pk); return CC_ERR_INTERNAL; }
    k->pkey = pk;
    *out = k;
    return CC_OK;
}

cc_status cc_key_read_pem(const uint8_t *pem, size_t count, cc_key **out, char *message, size_t message_size) {
    *out = NULL;
    if (!pem || count == 0 || count > INT32_MAX) { put_message(message, message_size, "no key data"); return CC_ERR_INVALID; }
    BIO *b = BIO_new_mem_buf(pem, (int)count);
    EVP_PKEY *pk = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
    BIO_free(b);
    if (!pk) { put_message(message, message_size, "not a PEM private key"); return CC_ERR_INVALID; }
    ERR_clear_error();
    return wrap_key(pk, out);
}

cc_status cc_key_generate_ec(const char *curve, cc_key **out, char *message, size_t message_size) {
    *out = NULL;
    EVP_PKEY *pk = curve ? EVP_EC_gen(curve) : NULL;
    if (!pk) { put_message(message, message_size, "EC key generation failed"); return CC_ERR_UNSUPPORTED; }
    return wrap_key(pk, out);
}

cc_status cc_key_generate_rsa(int32_t bits, cc_key **out, char *message, size_t message_size) {
    *out = NULL;
    if (bits < 1024 || bits > 8192) { put_message(message, message_size, "RSA key size must be 1024…8192 bits"); return CC_ERR_INVALID; }
    EVP_PKEY *pk = EVP_RSA_gen((unsigned int)bits);
    if (!pk) { put_message(message, message_size, "RSA key generation failed"); return CC_ERR_INTERNAL; }
    return wrap_key(pk, out);
}

void cc_key_free(cc_key *key) {
    if (!key) return;
    EVP_PKEY_free(key->pkey);
    free(key);
}

int cc_key_type(const cc_key *key) {
    switch (EVP_PKEY_get_base_id(key->pkey)) {
    case EVP_PKEY_RSA: return CC_KEY_RSA;
    case EVP_PKEY_EC: return CC_KEY_EC;
    case EVP_PKEY_DH: case EVP_PKEY_DHX: return CC_KEY_DH;
    default: return 0;
    }
}

cc_status cc_key_private_pem(const cc_key *key, cc_bytes *out) {
    BIO *b = BIO_new(BIO_s_mem());
    cc_status st = CC_ERR_INTERNAL;
    if (b && PEM_write_bio_PKCS8PrivateKey(b, key->pkey, NULL, NULL, 0, NULL, NULL)) {
        char *data = NULL;
        long n = BIO_get_mem_data(b, &data);
        if (n > 0 && bytes_out(out, (const unsigned char *)data, (size_t)n)) st = CC_OK;
    }
    BIO_free(b);
    ERR_clear_error();
    return st;
}

cc_status cc_key_public_spki(const cc_key *key, cc_bytes *out) {
    unsigned char *buf = NULL;
    int n = i2d_PUBKEY(key->pkey, &buf);
    if (n <= 0) { ERR_clear_error(); return CC_ERR_INTERNAL; }
    int ok = bytes_out(out, buf, (size_t)n);
    OPENSSL_free(buf);
    return ok ? CC_OK : CC_ERR_INTERNAL;
}

static size_t ec_order_bytes(const EVP_PKEY *pk) {
    const EC_KEY *ec = EVP_PKEY_get0_EC_KEY(pk);
    const EC_GROUP *g = ec ? EC_KEY_get0_group(ec) : NULL;
    const BIGNUM *n = g ? EC_GROUP_get0_order(g) : NULL;
    return n ? (size_t)BN_num_bytes(n) : 0;
}

cc_status cc_key_ec_private_scalar(const cc_key *key, cc_bytes *out) {
    if (EVP_PKEY_get_base_id(key->pkey) != EVP_PKEY_EC) return CC_ERR_INVALID;
    BIGNUM *d = NULL;
    size_t n = ec_order_bytes(key->pkey);
    cc_status st = CC_ERR_INTERNAL;
    if (n > 0 && EVP_PKEY_get_bn_param(key->pkey, OSSL_PKEY_PARAM_PRIV_KEY, &d)) {
        unsigned char buf[80];
        if (n <= sizeof buf && BN_bn2binpad(d, buf, (int)n) == (int)n && bytes_out(out, buf, n)) st = CC_OK;
        OPENSSL_cleanse(buf, sizeof buf);
    }
    BN_clear_free(d);
    ERR_clear_error();
    return st;
}

cc_status cc_key_dh_private_value(const cc_key *key, cc_bytes *out) {
    int id = EVP_PKEY_get_base_id(key->pkey);
    if (id != EVP_PKEY_DH && id != EVP_PKEY_DHX) return CC_ERR_INVALID;
    BIGNUM *x = NULL;
    cc_status st = CC_ERR_INTERNAL;
    if (EVP_PKEY_get_bn_param(key->pkey, OSSL_PKEY_PARAM_PRIV_KEY, &x)) {
        int n = BN_num_bytes(x);
        unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
        if (buf && BN_bn2bin(x, buf) == n && bytes_out(out, buf, (size_t)n)) st = CC_OK;
        if (buf) { OPENSSL_cleanse(buf, (size_t)n); free(buf); }
    }
    BN_clear_free(x);
    ERR_clear_error();
    return st;
}

cc_status cc_rsa_private_raw(const cc_key *key, const uint8_t *in, size_t count, cc_bytes *out, char *message, size_t message_size) {
    if (EVP_PKEY_get_base_id(key->pkey) != EVP_PKEY_RSA) { put_message(message, message_size, "not an RSA key"); return CC_ERR_INVALID; }
    size_t k = (size_t)EVP_PKEY_get_size(key->pkey);
    if (count != k) { put_message(message, message_size, "the input is not as long as the modulus"); return CC_ERR_INVALID; }
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key->pkey, NULL);
    unsigned char *buf = malloc(k);
    size_t n = k;
    cc_status st = CC_ERR_INTERNAL;
    if (ctx && buf && EVP_PKEY_decrypt_init(ctx) > 0 && EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) > 0
        && EVP_PKEY_decrypt(ctx, buf, &n, in, count) > 0 && bytes_out(out, buf, n)) {
        st = CC_OK;
    } else {
        put_message(message, message_size, "RSA private-key operation failed");
    }
    free(buf);
    EVP_PKEY_CTX_free(ctx);
    return st;
}

cc_status cc_ecdsa_sign_plain(const cc_key *key, const uint8_t *digest, size_t digest_count, cc_bytes *out,
                              char *message, size_t message_size) {
    if (EVP_PKEY_get_base_id(key->pkey) != EVP_PKEY_EC) { put_message(message, message_size, "not an EC key"); return CC_ERR_INVALID; }
    size_t n = ec_order_bytes(key->pkey);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key->pkey, NULL);
    size_t der_len = 0;
    unsigned char *der = NULL;
    ECDSA_SIG *sig = NULL;
    cc_status st = CC_ERR_INTERNAL;
    if (ctx && n > 0 && n <= 66 && EVP_PKEY_sign_init(ctx) > 0 && EVP_PKEY_sign(ctx, NULL, &der_len, digest, digest_count) > 0
        && (der = malloc(der_len)) && EVP_PKEY_sign(ctx, der, &der_len, digest, digest_count) > 0) {
        const unsigned char *p = der;
        sig = d2i_ECDSA_SIG(NULL, &p, (long)der_len);
        const BIGNUM *r = NULL, *s = NULL;
        if (sig) ECDSA_SIG_get0(sig, &r, &s);
        unsigned char rs[132];
        if (r && s && BN_bn2binpad(r, rs, (int)n) == (int)n && BN_bn2binpad(s, rs + n, (int)n) == (int)n && bytes_out(out, rs, 2 * n)) st = CC_OK;
    }
    if (st != CC_OK) put_message(message, message_size, "ECDSA signing failed");
    ECDSA_SIG_free(sig);
    free(der);
    EVP_PKEY_CTX_free(ctx);
    return st;
}
