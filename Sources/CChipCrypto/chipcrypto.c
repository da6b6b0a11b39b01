// CChipCrypto — OpenSSL implementation of cchipcrypto.h.
#include "cchipcrypto.h"
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cc_ec_group { EC_GROUP *group; size_t field_bytes; };

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
