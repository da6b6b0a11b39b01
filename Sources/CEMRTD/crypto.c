// CEMRTD — OpenSSL half: X.509, CRL, CMS SignedData, digests, and the test-PKI signing calls (cemrtd.h).
#define OPENSSL_SUPPRESS_DEPRECATED 1   // EC_KEY is the plain way to name an explicit curve and to build a key from a scalar
#include "cemrtd.h"
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/cms.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct em_cert { X509 *x; };
struct em_crl { X509_CRL *c; };
struct em_cms { CMS_ContentInfo *cms; STACK_OF(X509) *certs; };
#include "cemrtd_internal.h"   // struct em_key, shared with activeauth.c

void em_free(void *pointer) { free(pointer); }
const char *em_openssl_version(void) { return OpenSSL_version(OPENSSL_VERSION); }

// ---- helpers --------------------------------------------------------------------------------------

void em_put_message(char *message, size_t size, const char *fallback) {
    if (!message || size == 0) { ERR_clear_error(); return; }
    unsigned long e = ERR_peek_last_error();
    if (e != 0) {
        char buf[256];
        ERR_error_string_n(e, buf, sizeof buf);
        snprintf(message, size, "%s (%s)", fallback, buf);
    } else {
        snprintf(message, size, "%s", fallback);
    }
    ERR_clear_error();
}

static void copy_str(char *dst, size_t size, const char *src) {
    if (!dst || size == 0) return;
    snprintf(dst, size, "%s", src ? src : "");
}

static int64_t unix_time(const ASN1_TIME *t) {
    if (!t) return INT64_MIN;
    int days = 0, secs = 0;
    ASN1_TIME *epoch = ASN1_TIME_set(NULL, 0);
    if (!epoch) return INT64_MIN;
    int ok = ASN1_TIME_diff(&days, &secs, epoch, t);
    ASN1_TIME_free(epoch);
    if (!ok) return INT64_MIN;
    return (int64_t)days * 86400 + secs;
}

int em_bytes_out(em_bytes *out, const unsigned char *data, size_t count) {
    out->data = malloc(count ? count : 1);
    if (!out->data) { out->count = 0; return 0; }
    if (count) memcpy(out->data, data, count);
    out->count = count;
    return 1;
}

static void name_line(X509_NAME *name, char *dst, size_t size) {
    if (!dst || size == 0) return;
    dst[0] = 0;
    BIO *b = BIO_new(BIO_s_mem());
    if (!b) return;
    X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
    int n = BIO_read(b, dst, (int)size - 1);
    dst[n > 0 ? n : 0] = 0;
    BIO_free(b);
}

static int looks_pem(const uint8_t *data, size_t count) {
    const char *tag = "-----BEGIN";
    size_t n = strlen(tag);
    for (size_t i = 0; i + n <= count && i < 4096; i++)
        if (memcmp(data + i, tag, n) == 0) return 1;
    return 0;
}

// ---- digests --------------------------------------------------------------------------------------

em_status em_digest(const char *algorithm, const uint8_t *data, size_t count, uint8_t *out, size_t out_capacity,
                    size_t *out_count, char *message, size_t message_size) {
    ERR_clear_error();
    const EVP_MD *md = algorithm ? EVP_get_digestbyname(algorithm) : NULL;
    if (!md) { em_put_message(message, message_size, "unknown digest algorithm"); return EM_ERR_UNSUPPORTED; }
    if ((size_t)EVP_MD_get_size(md) > out_capacity) { em_put_message(message, message_size, "digest buffer too small"); return EM_ERR_INVALID_ARGUMENT; }
    unsigned int n = 0;
    if (!EVP_Digest(data, count, out, &n, md, NULL)) { em_put_message(message, message_size, "digest failed"); return EM_ERR_INTERNAL; }
    *out_count = n;
    return EM_OK;
}

// ---- certificates ---------------------------------------------------------------------------------

em_status em_cert_parse(const uint8_t *data, size_t count, em_cert **out, char *message, size_t message_size) {
    ERR_clear_error();
    *out = NULL;
    if (!data || count == 0 || count > INT32_MAX) { em_put_message(message, message_size, "no certificate data"); return EM_ERR_INVALID_ARGUMENT; }
    X509 *x = NULL;
    if (looks_pem(data, count)) {
        BIO *b = BIO_new_mem_buf(data, (int)count);
        if (b) { x = PEM_read_bio_X509(b, NULL, NULL, NULL); BIO_free(b); }
    } else {
        const unsigned char *p = data;
        x = d2i_X509(NULL, &p, (long)count);
        if (x && (size_t)(p - data) != count) { X509_free(x); x = NULL; ERR_clear_error(); em_put_message(message, message_size, "bytes after the certificate"); return EM_ERR_PARSE; }
    }
    if (!x) { em_put_message(message, message_size, "not an X.509 certificate"); return EM_ERR_PARSE; }
    em_cert *c = malloc(sizeof *c);
    if (!c) { X509_free(x); return EM_ERR_INTERNAL; }
    c->x = x;
    *out = c;
    return EM_OK;
}

em_cert *em_cert_retain(em_cert *cert) {
    if (!cert) return NULL;
    em_cert *c = malloc(sizeof *c);
    if (!c) return NULL;
    X509_up_ref(cert->x);
    c->x = cert->x;
    return c;
}

void em_cert_free(em_cert *cert) {
    if (!cert) return;
    X509_free(cert->x);
    free(cert);
}

static void key_description(EVP_PKEY *pk, char *alg, size_t alg_size, char *curve, size_t curve_size,
                            int32_t *bits, int32_t *explicit_curve) {
    copy_str(alg, alg_size, "");
    copy_str(curve, curve_size, "");
    if (explicit_curve) *explicit_curve = 0;
    if (!pk) { if (bits) *bits = 0; return; }
    if (bits) *bits = EVP_PKEY_get_bits(pk);
    int id = EVP_PKEY_get_base_id(pk);
    switch (id) {
    case EVP_PKEY_RSA: copy_str(alg, alg_size, "RSA"); break;
    case EVP_PKEY_RSA_PSS: copy_str(alg, alg_size, "RSA-PSS"); break;
    case EVP_PKEY_DSA: copy_str(alg, alg_size, "DSA"); break;
    case EVP_PKEY_EC: {
        copy_str(alg, alg_size, "EC");
        const EC_KEY *ec = EVP_PKEY_get0_EC_KEY(pk);
        const EC_GROUP *g = ec ? EC_KEY_get0_group(ec) : NULL;
        if (g) {
            int nid = EC_GROUP_get_curve_name(g);
            int named = EC_GROUP_get_asn1_flag(g) & OPENSSL_EC_NAMED_CURVE;
            if (!named && explicit_curve) *explicit_curve = 1;
            if (nid == NID_undef || !named) {
                int m = EC_GROUP_check_named_curve(g, 0, NULL);
                if (m > 0) nid = m;
            }
            if (nid != NID_undef) copy_str(curve, curve_size, OBJ_nid2sn(nid));
        }
        break;
    }
    default: {
        const char *n = OBJ_nid2sn(id);
        copy_str(alg, alg_size, n ? n : "unknown");
    }
    }
    ERR_clear_error();
}

em_status em_cert_get_info(const em_cert *cert, em_cert_info *out, char *message, size_t message_size) {
    ERR_clear_error();
    memset(out, 0, sizeof *out);
    X509 *x = cert->x;
    out->not_before = unix_time(X509_get0_notBefore(x));
    out->not_after = unix_time(X509_get0_notAfter(x));
    out->version = (int32_t)X509_get_version(x) + 1;
    int crit = 0;
    BASIC_CONSTRAINTS *bc = X509_get_ext_d2i(x, NID_basic_constraints, &crit, NULL);
    out->basic_constraints_ca = bc ? (bc->ca ? 1 : 0) : -1;
    BASIC_CONSTRAINTS_free(bc);
    uint32_t flags = X509_get_extension_flags(x);
    out->key_usage = (flags & EXFLAG_KUSAGE) ? (int32_t)(X509_get_key_usage(x) & 0xff) : -1;
    EVP_PKEY *pk = X509_get0_pubkey(x);
    key_description(pk, out->public_key_algorithm, sizeof out->public_key_algorithm, out->curve, sizeof out->curve,
                    &out->public_key_bits, &out->explicit_curve);
    int sig = X509_get_signature_nid(x);
    copy_str(out->signature_algorithm, sizeof out->signature_algorithm, sig != NID_undef ? OBJ_nid2ln(sig) : "unknown");
    name_line(X509_get_subject_name(x), out->subject, sizeof out->subject);
    name_line(X509_get_issuer_name(x), out->issuer, sizeof out->issuer);
    ERR_clear_error();
    (void)message; (void)message_size;
    return EM_OK;
}

em_status em_cert_der(const em_cert *cert, em_bytes *out) {
    unsigned char *buf = NULL;
    int n = i2d_X509(cert->x, &buf);
    if (n <= 0) { ERR_clear_error(); return EM_ERR_INTERNAL; }
    int ok = em_bytes_out(out, buf, (size_t)n);
    OPENSSL_free(buf);
    return ok ? EM_OK : EM_ERR_INTERNAL;
}

em_status em_cert_serial(const em_cert *cert, em_bytes *out) {
    const ASN1_INTEGER *s = X509_get0_serialNumber(cert->x);
    if (!s) return EM_ERR_NOT_FOUND;
    return em_bytes_out(out, ASN1_STRING_get0_data(s), (size_t)ASN1_STRING_length(s)) ? EM_OK : EM_ERR_INTERNAL;
}

em_status em_cert_subject_key_id(const em_cert *cert, em_bytes *out) {
    const ASN1_OCTET_STRING *k = X509_get0_subject_key_id(cert->x);
    ERR_clear_error();
    if (!k) return EM_ERR_NOT_FOUND;
    return em_bytes_out(out, ASN1_STRING_get0_data(k), (size_t)ASN1_STRING_length(k)) ? EM_OK : EM_ERR_INTERNAL;
}

em_status em_cert_authority_key_id(const em_cert *cert, em_bytes *out) {
    const ASN1_OCTET_STRING *k = X509_get0_authority_key_id(cert->x);
    ERR_clear_error();
    if (!k) return EM_ERR_NOT_FOUND;
    return em_bytes_out(out, ASN1_STRING_get0_data(k), (size_t)ASN1_STRING_length(k)) ? EM_OK : EM_ERR_INTERNAL;
}

em_status em_cert_public_key(const em_cert *cert, em_bytes *out) {
    X509_PUBKEY *pk = X509_get_X509_PUBKEY(cert->x);
    unsigned char *buf = NULL;
    int n = pk ? i2d_X509_PUBKEY(pk, &buf) : -1;
    if (n <= 0) { ERR_clear_error(); return EM_ERR_INTERNAL; }
    int ok = em_bytes_out(out, buf, (size_t)n);
    OPENSSL_free(buf);
    return ok ? EM_OK : EM_ERR_INTERNAL;
}

int em_cert_country(const em_cert *cert, int of_issuer, int index, char *out, size_t out_size) {
    if (out_size > 0) out[0] = 0;
    const X509_NAME *name = of_issuer ? X509_get_issuer_name(cert->x) : X509_get_subject_name(cert->x);
    int pos = -1;
    for (int k = 0; k <= index; k++) {
        pos = X509_NAME_get_index_by_NID(name, NID_countryName, pos);
        if (pos < 0) { ERR_clear_error(); return 0; }
    }
    const ASN1_STRING *value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, pos));
    unsigned char *utf8 = NULL;
    int n = value ? ASN1_STRING_to_UTF8(&utf8, value) : -1;
    if (n >= 0 && out_size > 0) {
        size_t m = (size_t)n < out_size - 1 ? (size_t)n : out_size - 1;
        memcpy(out, utf8, m);
        out[m] = 0;
    }
    OPENSSL_free(utf8);
    ERR_clear_error();
    return 1;
}

int em_cert_issued_by_name(const em_cert *subject, const em_cert *issuer) {
    return X509_NAME_cmp(X509_get_issuer_name(subject->x), X509_get_subject_name(issuer->x)) == 0;
}

int em_cert_same_subject(const em_cert *a, const em_cert *b) {
    return X509_NAME_cmp(X509_get_subject_name(a->x), X509_get_subject_name(b->x)) == 0;
}

int em_cert_verify_signature(const em_cert *subject, const em_cert *issuer, char *message, size_t message_size) {
    ERR_clear_error();
    EVP_PKEY *pk = X509_get0_pubkey(issuer->x);
    if (!pk) { em_put_message(message, message_size, "the issuer's public key cannot be read"); return -1; }
    int r = X509_verify(subject->x, pk);
    if (r > 0) { ERR_clear_error(); return 1; }
    em_put_message(message, message_size, "signature does not verify");
    return 0;
}

em_status em_public_key_info(const uint8_t *spki, size_t count, char *algorithm, size_t algorithm_size,
                             char *curve, size_t curve_size, int32_t *bits, char *message, size_t message_size) {
    ERR_clear_error();
    const unsigned char *p = spki;
    EVP_PKEY *pk = count > 0 && count < INT32_MAX ? d2i_PUBKEY(NULL, &p, (long)count) : NULL;
    if (!pk) { em_put_message(message, message_size, "not a SubjectPublicKeyInfo"); return EM_ERR_PARSE; }
    key_description(pk, algorithm, algorithm_size, curve, curve_size, bits, NULL);
    EVP_PKEY_free(pk);
    return EM_OK;
}

// ---- CRLs -----------------------------------------------------------------------------------------

em_status em_crl_parse(const uint8_t *data, size_t count, em_crl **out, char *message, size_t message_size) {
    ERR_clear_error();
    *out = NULL;
    if (!data || count == 0 || count > INT32_MAX) { em_put_message(message, message_size, "no CRL data"); return EM_ERR_INVALID_ARGUMENT; }
    X509_CRL *c = NULL;
    if (looks_pem(data, count)) {
        BIO *b = BIO_new_mem_buf(data, (int)count);
        if (b) { c = PEM_read_bio_X509_CRL(b, NULL, NULL, NULL); BIO_free(b); }
    } else {
        const unsigned char *p = data;
        c = d2i_X509_CRL(NULL, &p, (long)count);
        if (c && (size_t)(p - data) != count) { X509_CRL_free(c); ERR_clear_error(); em_put_message(message, message_size, "bytes after the CRL"); return EM_ERR_PARSE; }
    }
    if (!c) { em_put_message(message, message_size, "not an X.509 CRL"); return EM_ERR_PARSE; }
    em_crl *r = malloc(sizeof *r);
    if (!r) { X509_CRL_free(c); return EM_ERR_INTERNAL; }
    r->c = c;
    *out = r;
    return EM_OK;
}

void em_crl_free(em_crl *crl) {
    if (!crl) return;
    X509_CRL_free(crl->c);
    free(crl);
}

em_status em_crl_get_info(const em_crl *crl, em_crl_info *out, char *message, size_t message_size) {
    memset(out, 0, sizeof *out);
    out->this_update = unix_time(X509_CRL_get0_lastUpdate(crl->c));
    const ASN1_TIME *nu = X509_CRL_get0_nextUpdate(crl->c);
    out->next_update = nu ? unix_time(nu) : INT64_MIN;
    STACK_OF(X509_REVOKED) *rev = X509_CRL_get_REVOKED(crl->c);
    out->revoked_count = rev ? sk_X509_REVOKED_num(rev) : 0;
    name_line(X509_CRL_get_issuer(crl->c), out->issuer, sizeof out->issuer);
    int sig = X509_CRL_get_signature_nid(crl->c);
    copy_str(out->signature_algorithm, sizeof out->signature_algorithm, sig != NID_undef ? OBJ_nid2ln(sig) : "unknown");
    ERR_clear_error();
    (void)message; (void)message_size;
    return EM_OK;
}

em_status em_crl_der(const em_crl *crl, em_bytes *out) {
    unsigned char *buf = NULL;
    int n = i2d_X509_CRL(crl->c, &buf);
    if (n <= 0) { ERR_clear_error(); return EM_ERR_INTERNAL; }
    int ok = em_bytes_out(out, buf, (size_t)n);
    OPENSSL_free(buf);
    return ok ? EM_OK : EM_ERR_INTERNAL;
}

int em_crl_issued_by_name(const em_crl *crl, const em_cert *issuer) {
    return X509_NAME_cmp(X509_CRL_get_issuer(crl->c), X509_get_subject_name(issuer->x)) == 0;
}

int em_crl_verify_signature(const em_crl *crl, const em_cert *issuer, char *message, size_t message_size) {
    ERR_clear_error();
    EVP_PKEY *pk = X509_get0_pubkey(issuer->x);
    if (!pk) { em_put_message(message, message_size, "the issuer's public key cannot be read"); return -1; }
    int r = X509_CRL_verify(crl->c, pk);
    if (r > 0) { ERR_clear_error(); return 1; }
    em_put_message(message, message_size, "CRL signature does not verify");
    return 0;
}

int em_crl_lists(const em_crl *crl, const em_cert *cert, int64_t *revocation_time) {
    X509_REVOKED *rev = NULL;
    // By serial number only: the caller has already matched the CRL's issuer to the certificate's issuer.
    int r = X509_CRL_get0_by_serial(crl->c, &rev, X509_get0_serialNumber(cert->x));
    ERR_clear_error();
    if (r >= 1 && rev) {
        if (revocation_time) *revocation_time = unix_time(X509_REVOKED_get0_revocationDate(rev));
        return 1;
    }
    return 0;
}

// ---- CMS ------------------------------------------------------------------------------------------

em_status em_cms_parse(const uint8_t *data, size_t count, em_cms **out, char *message, size_t message_size) {
    ERR_clear_error();
    *out = NULL;
    if (!data || count == 0 || count > INT32_MAX) { em_put_message(message, message_size, "no CMS data"); return EM_ERR_INVALID_ARGUMENT; }
    const unsigned char *p = data;
    CMS_ContentInfo *cms = d2i_CMS_ContentInfo(NULL, &p, (long)count);
    if (!cms) { em_put_message(message, message_size, "not a CMS ContentInfo"); return EM_ERR_PARSE; }
    if (OBJ_obj2nid(CMS_get0_type(cms)) != NID_pkcs7_signed) {
        CMS_ContentInfo_free(cms);
        em_put_message(message, message_size, "CMS content is not SignedData");
        return EM_ERR_PARSE;
    }
    em_cms *r = malloc(sizeof *r);
    if (!r) { CMS_ContentInfo_free(cms); return EM_ERR_INTERNAL; }
    r->cms = cms;
    r->certs = CMS_get1_certs(cms);
    ERR_clear_error();
    *out = r;
    return EM_OK;
}

void em_cms_free(em_cms *cms) {
    if (!cms) return;
    if (cms->certs) sk_X509_pop_free(cms->certs, X509_free);
    CMS_ContentInfo_free(cms->cms);
    free(cms);
}

em_status em_cms_content_type(const em_cms *cms, char *oid, size_t oid_size) {
    const ASN1_OBJECT *o = CMS_get0_eContentType(cms->cms);
    if (!o) return EM_ERR_NOT_FOUND;
    OBJ_obj2txt(oid, (int)oid_size, o, 1);
    return EM_OK;
}

em_status em_cms_content(const em_cms *cms, em_bytes *out) {
    ASN1_OCTET_STRING **pos = CMS_get0_content(cms->cms);
    if (!pos || !*pos) { ERR_clear_error(); return EM_ERR_NOT_FOUND; }
    return em_bytes_out(out, ASN1_STRING_get0_data(*pos), (size_t)ASN1_STRING_length(*pos)) ? EM_OK : EM_ERR_INTERNAL;
}

int em_cms_signer_count(const em_cms *cms) {
    STACK_OF(CMS_SignerInfo) *s = CMS_get0_SignerInfos(cms->cms);
    return s ? sk_CMS_SignerInfo_num(s) : 0;
}

int em_cms_certificate_count(const em_cms *cms) { return cms->certs ? sk_X509_num(cms->certs) : 0; }

em_cert *em_cms_certificate(const em_cms *cms, int index) {
    if (!cms->certs || index < 0 || index >= sk_X509_num(cms->certs)) return NULL;
    em_cert *c = malloc(sizeof *c);
    if (!c) return NULL;
    c->x = sk_X509_value(cms->certs, index);
    X509_up_ref(c->x);
    return c;
}

static CMS_SignerInfo *signer_at(const em_cms *cms, int index) {
    STACK_OF(CMS_SignerInfo) *s = CMS_get0_SignerInfos(cms->cms);
    if (!s || index < 0 || index >= sk_CMS_SignerInfo_num(s)) return NULL;
    return sk_CMS_SignerInfo_value(s, index);
}

em_status em_cms_signer_get_info(const em_cms *cms, int signer, em_signer_info *out, char *message, size_t message_size) {
    memset(out, 0, sizeof *out);
    out->signing_time = INT64_MIN;
    CMS_SignerInfo *si = signer_at(cms, signer);
    if (!si) { em_put_message(message, message_size, "no such signer"); return EM_ERR_INVALID_ARGUMENT; }
    X509_ALGOR *dig = NULL, *sig = NULL;
    CMS_SignerInfo_get0_algs(si, NULL, NULL, &dig, &sig);
    const ASN1_OBJECT *o = NULL;
    if (dig) { X509_ALGOR_get0(&o, NULL, NULL, dig); int n = OBJ_obj2nid(o); copy_str(out->digest_algorithm, sizeof out->digest_algorithm, n != NID_undef ? OBJ_nid2sn(n) : "unknown"); }
    if (sig) { X509_ALGOR_get0(&o, NULL, NULL, sig); int n = OBJ_obj2nid(o); copy_str(out->signature_algorithm, sizeof out->signature_algorithm, n != NID_undef ? OBJ_nid2ln(n) : "unknown"); }
    out->has_signed_attributes = CMS_signed_get_attr_count(si) > 0;
    ASN1_OCTET_STRING *keyid = NULL;
    X509_NAME *issuer = NULL;
    ASN1_INTEGER *sno = NULL;
    CMS_SignerInfo_get0_signer_id(si, &keyid, &issuer, &sno);
    out->identified_by_key_id = keyid != NULL;
    int idx = CMS_signed_get_attr_by_NID(si, NID_pkcs9_signingTime, -1);
    if (idx >= 0) {
        X509_ATTRIBUTE *a = CMS_signed_get_attr(si, idx);
        ASN1_TYPE *t = a ? X509_ATTRIBUTE_get0_type(a, 0) : NULL;
        if (t && (t->type == V_ASN1_UTCTIME || t->type == V_ASN1_GENERALIZEDTIME))
            out->signing_time = unix_time((const ASN1_TIME *)t->value.asn1_string);
    }
    ERR_clear_error();
    return EM_OK;
}

int em_cms_signer_is(const em_cms *cms, int signer, const em_cert *cert) {
    CMS_SignerInfo *si = signer_at(cms, signer);
    int r = si ? CMS_SignerInfo_cert_cmp(si, cert->x) == 0 : 0;
    ERR_clear_error();
    return r;
}

em_signature_result em_cms_signer_verify(em_cms *cms, int signer, const em_cert *cert, char *message, size_t message_size) {
    ERR_clear_error();
    CMS_SignerInfo *si = signer_at(cms, signer);
    if (!si) { em_put_message(message, message_size, "no such signer"); return EM_SIGNATURE_ERROR; }
    if (!X509_get0_pubkey(cert->x)) { em_put_message(message, message_size, "the document signer's public key cannot be read"); return EM_SIGNATURE_UNSUPPORTED; }
    X509_ALGOR *dig = NULL;
    CMS_SignerInfo_get0_algs(si, NULL, NULL, &dig, NULL);
    const ASN1_OBJECT *dobj = NULL;
    if (dig) X509_ALGOR_get0(&dobj, NULL, NULL, dig);
    const EVP_MD *md = dobj ? EVP_get_digestbyobj(dobj) : NULL;
    if (!md) { em_put_message(message, message_size, "unsupported digest algorithm"); return EM_SIGNATURE_UNSUPPORTED; }
    ASN1_OCTET_STRING **pos = CMS_get0_content(cms->cms);
    if (!pos || !*pos) { em_put_message(message, message_size, "no encapsulated content"); return EM_SIGNATURE_ERROR; }

    if (CMS_signed_get_attr_count(si) <= 0) {
        // No signed attributes: the signature is over the content itself (RFC 5652 §5.4).
        STACK_OF(X509) *one = sk_X509_new_null();
        if (!one) return EM_SIGNATURE_ERROR;
        sk_X509_push(one, cert->x);
        int r = CMS_verify(cms->cms, one, NULL, NULL, NULL, CMS_NO_SIGNER_CERT_VERIFY | CMS_NOINTERN | CMS_BINARY);
        sk_X509_free(one);
        if (r > 0) { ERR_clear_error(); return EM_SIGNATURE_VALID; }
        em_put_message(message, message_size, "signature over the content does not verify");
        return EM_SIGNATURE_INVALID;
    }
    CMS_SignerInfo_set1_signer_cert(si, cert->x);
    int r = CMS_SignerInfo_verify(si);
    if (r <= 0) {
        unsigned long e = ERR_peek_last_error();
        int reason = ERR_GET_REASON(e);
        em_signature_result res = EM_SIGNATURE_INVALID;
        if (reason == CMS_R_UNKNOWN_DIGEST_ALGORITHM || reason == CMS_R_UNSUPPORTED_SIGNATURE_ALGORITHM
            || reason == CMS_R_UNKNOWN_ID || reason == ERR_R_UNSUPPORTED)
            res = EM_SIGNATURE_UNSUPPORTED;
        em_put_message(message, message_size, res == EM_SIGNATURE_UNSUPPORTED ? "unsupported signature algorithm" : "signature over the signed attributes does not verify");
        CMS_SignerInfo_set1_signer_cert(si, NULL);
        return res;
    }
    CMS_SignerInfo_set1_signer_cert(si, NULL);
    // messageDigest attribute against the digest of the content.
    ASN1_OCTET_STRING *mdattr = CMS_signed_get0_data_by_OBJ(si, OBJ_nid2obj(NID_pkcs9_messageDigest), -3, V_ASN1_OCTET_STRING);
    if (!mdattr) { em_put_message(message, message_size, "no messageDigest attribute"); return EM_SIGNATURE_DIGEST_MISMATCH; }
    unsigned char buf[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (!EVP_Digest(ASN1_STRING_get0_data(*pos), (size_t)ASN1_STRING_length(*pos), buf, &n, md, NULL)) {
        em_put_message(message, message_size, "digest failed");
        return EM_SIGNATURE_ERROR;
    }
    if ((int)n != ASN1_STRING_length(mdattr) || memcmp(buf, ASN1_STRING_get0_data(mdattr), n) != 0) {
        em_put_message(message, message_size, "messageDigest attribute differs from the digest of the content");
        return EM_SIGNATURE_DIGEST_MISMATCH;
    }
    ERR_clear_error();
    return EM_SIGNATURE_VALID;
}

// ---- keys and signing -----------------------------------------------------------------------------

em_status em_key_ec_from_seed(const char *curve, const uint8_t *seed, size_t seed_count, em_key **out,
                              char *message, size_t message_size) {
    ERR_clear_error();
    *out = NULL;
    int nid = curve ? OBJ_sn2nid(curve) : NID_undef;
    if (nid == NID_undef) { em_put_message(message, message_size, "unknown curve"); return EM_ERR_INVALID_ARGUMENT; }
    EC_KEY *ec = EC_KEY_new_by_curve_name(nid);
    if (!ec) { em_put_message(message, message_size, "curve not available"); return EM_ERR_UNSUPPORTED; }
    EC_KEY_set_asn1_flag(ec, OPENSSL_EC_NAMED_CURVE);
    const EC_GROUP *g = EC_KEY_get0_group(ec);
    unsigned char h[64];
    unsigned int hn = 0;
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *d = BN_new(), *order = BN_new();
    EC_POINT *pub = EC_POINT_new(g);
    em_status st = EM_ERR_INTERNAL;
    if (ctx && d && order && pub && EVP_Digest(seed, seed_count, h, &hn, EVP_sha512(), NULL)
        && EC_GROUP_get_order(g, order, ctx) && BN_bin2bn(h, (int)hn, d) && BN_nnmod(d, d, order, ctx)) {
        if (BN_is_zero(d)) BN_one(d);
        if (EC_KEY_set_private_key(ec, d) && EC_POINT_mul(g, pub, d, NULL, NULL, ctx) && EC_KEY_set_public_key(ec, pub)) {
            EVP_PKEY *pk = EVP_PKEY_new();
            if (pk && EVP_PKEY_assign_EC_KEY(pk, ec)) {
                ec = NULL;
                em_key *k = malloc(sizeof *k);
                if (k) { k->pkey = pk; *out = k; st = EM_OK; } else EVP_PKEY_free(pk);
            } else EVP_PKEY_free(pk);
        }
    }
    if (st != EM_OK) em_put_message(message, message_size, "EC key derivation failed");
    EC_POINT_free(pub); BN_free(order); BN_clear_free(d); BN_CTX_free(ctx); EC_KEY_free(ec);
    OPENSSL_cleanse(h, sizeof h);
    return st;
}

em_status em_key_rsa_generate(int32_t bits, em_key **out, char *message, size_t message_size) {
    ERR_clear_error();
    *out = NULL;
    if (bits < 1024 || bits > 8192) { em_put_message(message, message_size, "RSA key size must be 1024…8192 bits"); return EM_ERR_INVALID_ARGUMENT; }
    EVP_PKEY *pk = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
    if (!pk) { em_put_message(message, message_size, "RSA key generation failed"); return EM_ERR_INTERNAL; }
    em_key *k = malloc(sizeof *k);
    if (!k) { EVP_PKEY_free(pk); return EM_ERR_INTERNAL; }
    k->pkey = pk;
    *out = k;
    return EM_OK;
}

void em_key_free(em_key *key) {
    if (!key) return;
    EVP_PKEY_free(key->pkey);
    free(key);
}

static X509_NAME *parse_name(const char *spec) {
    X509_NAME *n = X509_NAME_new();
    if (!n || !spec) return n;
    char *copy = strdup(spec);
    if (!copy) { X509_NAME_free(n); return NULL; }
    char *save = NULL;
    for (char *part = strtok_r(copy, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
        char *eq = strchr(part, '=');
        if (!eq) continue;
        *eq = 0;
        if (!X509_NAME_add_entry_by_txt(n, part, MBSTRING_UTF8, (const unsigned char *)(eq + 1), -1, -1, 0)) {
            X509_NAME_free(n); free(copy); return NULL;
        }
    }
    free(copy);
    return n;
}

static int add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value) {
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
    if (!e) return 0;
    int ok = X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
    return ok;
}

em_status em_cert_create(const em_cert_spec *spec, const em_key *subject_key, const em_cert *issuer,
                         const em_key *issuer_key, em_cert **out, char *message, size_t message_size) {
    ERR_clear_error();
    *out = NULL;
    const EVP_MD *md = EVP_get_digestbyname(spec->digest ? spec->digest : "SHA256");
    if (!md) { em_put_message(message, message_size, "unknown digest"); return EM_ERR_INVALID_ARGUMENT; }
    X509 *x = X509_new();
    X509_NAME *name = parse_name(spec->subject);
    BIGNUM *sn = BN_bin2bn(spec->serial, (int)spec->serial_count, NULL);
    int ok = x && name && sn && X509_set_version(x, 2);
    if (ok) {
        ASN1_INTEGER *ai = BN_to_ASN1_INTEGER(sn, NULL);
        ok = ai && X509_set_serialNumber(x, ai);
        ASN1_INTEGER_free(ai);
    }
    ok = ok && X509_set_subject_name(x, name)
            && X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer->x) : name)
            && ASN1_TIME_set(X509_getm_notBefore(x), (time_t)spec->not_before)
            && ASN1_TIME_set(X509_getm_notAfter(x), (time_t)spec->not_after)
            && X509_set_pubkey(x, subject_key->pkey);
    if (ok) {
        X509V3_CTX ctx;
        X509V3_set_ctx(&ctx, issuer ? issuer->x : x, x, NULL, NULL, 0);
        char ku[160] = "critical";
        const struct { int bit; const char *name; } kus[] = {
            {EM_KU_DIGITAL_SIGNATURE, "digitalSignature"}, {EM_KU_NON_REPUDIATION, "nonRepudiation"},
            {EM_KU_KEY_ENCIPHERMENT, "keyEncipherment"}, {EM_KU_DATA_ENCIPHERMENT, "dataEncipherment"},
            {EM_KU_KEY_AGREEMENT, "keyAgreement"}, {EM_KU_KEY_CERT_SIGN, "keyCertSign"}, {EM_KU_CRL_SIGN, "cRLSign"}};
        for (size_t i = 0; i < sizeof kus / sizeof kus[0]; i++)
            if (spec->key_usage & kus[i].bit) { strcat(ku, ","); strcat(ku, kus[i].name); }
        ok = add_ext(x, &ctx, NID_subject_key_identifier, "hash")
             && add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always")
             && (!spec->is_ca || add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE,pathlen:0"))
             && (spec->key_usage == 0 || add_ext(x, &ctx, NID_key_usage, ku));
    }
    ok = ok && X509_sign(x, issuer_key->pkey, md) > 0;
    BN_free(sn);
    X509_NAME_free(name);
    if (!ok) { X509_free(x); em_put_message(message, message_size, "certificate creation failed"); return EM_ERR_INTERNAL; }
    em_cert *c = malloc(sizeof *c);
    if (!c) { X509_free(x); return EM_ERR_INTERNAL; }
    c->x = x;
    *out = c;
    return EM_OK;
}

em_status em_crl_create(const em_cert *issuer, const em_key *issuer_key, const uint8_t *const *serials,
                        const size_t *serial_counts, int32_t count, int64_t revocation_time, int64_t this_update,
                        int64_t next_update, const char *digest, em_crl **out, char *message, size_t message_size) {
    ERR_clear_error();
    *out = NULL;
    const EVP_MD *md = EVP_get_digestbyname(digest ? digest : "SHA256");
    if (!md) { em_put_message(message, message_size, "unknown digest"); return EM_ERR_INVALID_ARGUMENT; }
    X509_CRL *c = X509_CRL_new();
    ASN1_TIME *tu = ASN1_TIME_set(NULL, (time_t)this_update), *nu = ASN1_TIME_set(NULL, (time_t)next_update);
    ASN1_TIME *rt = ASN1_TIME_set(NULL, (time_t)revocation_time);
    int ok = c && tu && nu && rt && X509_CRL_set_version(c, 1) && X509_CRL_set_issuer_name(c, X509_get_subject_name(issuer->x))
             && X509_CRL_set1_lastUpdate(c, tu) && X509_CRL_set1_nextUpdate(c, nu);
    for (int32_t i = 0; ok && i < count; i++) {
        X509_REVOKED *r = X509_REVOKED_new();
        BIGNUM *bn = BN_bin2bn(serials[i], (int)serial_counts[i], NULL);
        ASN1_INTEGER *ai = bn ? BN_to_ASN1_INTEGER(bn, NULL) : NULL;
        ok = r && ai && X509_REVOKED_set_serialNumber(r, ai) && X509_REVOKED_set_revocationDate(r, rt) && X509_CRL_add0_revoked(c, r);
        if (!ok) X509_REVOKED_free(r);
        ASN1_INTEGER_free(ai);
        BN_free(bn);
    }
    if (ok) {
        X509_CRL_sort(c);
        X509V3_CTX ctx;
        X509V3_set_ctx(&ctx, issuer->x, NULL, NULL, c, 0);
        X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, NID_authority_key_identifier, "keyid:always");
        ok = e && X509_CRL_add_ext(c, e, -1);
        X509_EXTENSION_free(e);
        ASN1_INTEGER *num = ASN1_INTEGER_new();
        ok = ok && num && ASN1_INTEGER_set(num, 1) && X509_CRL_add1_ext_i2d(c, NID_crl_number, num, 0, 0);
        ASN1_INTEGER_free(num);
    }
    ok = ok && X509_CRL_sign(c, issuer_key->pkey, md) > 0;
    ASN1_TIME_free(tu); ASN1_TIME_free(nu); ASN1_TIME_free(rt);
    if (!ok) { X509_CRL_free(c); em_put_message(message, message_size, "CRL creation failed"); return EM_ERR_INTERNAL; }
    em_crl *r = malloc(sizeof *r);
    if (!r) { X509_CRL_free(c); return EM_ERR_INTERNAL; }
    r->c = c;
    *out = r;
    return EM_OK;
}

em_status em_cms_sign(const uint8_t *content, size_t count, const char *content_type_oid, const em_cert *signer,
                      const em_key *key, const char *digest, int64_t signing_time, em_bytes *out,
                      char *message, size_t message_size) {
    ERR_clear_error();
    out->data = NULL; out->count = 0;
    const EVP_MD *md = EVP_get_digestbyname(digest ? digest : "SHA256");
    ASN1_OBJECT *oid = content_type_oid ? OBJ_txt2obj(content_type_oid, 1) : NULL;
    if (!md || !oid || count > INT32_MAX) { ASN1_OBJECT_free(oid); em_put_message(message, message_size, "bad digest or content type"); return EM_ERR_INVALID_ARGUMENT; }
    unsigned int flags = CMS_PARTIAL | CMS_BINARY | CMS_NOSMIMECAP;
    CMS_ContentInfo *cms = CMS_sign(NULL, NULL, NULL, NULL, flags);
    BIO *in = BIO_new_mem_buf(content, (int)count);
    ASN1_TIME *t = ASN1_TIME_set(NULL, (time_t)signing_time);
    int ok = cms && in && t && CMS_set1_eContentType(cms, oid);
    CMS_SignerInfo *si = ok ? CMS_add1_signer(cms, signer->x, key->pkey, md, flags) : NULL;
    ok = ok && si && CMS_signed_add1_attr_by_NID(si, NID_pkcs9_signingTime, t->type, t, -1)
            && CMS_final(cms, in, NULL, CMS_BINARY);
    unsigned char *buf = NULL;
    int n = ok ? i2d_CMS_ContentInfo(cms, &buf) : -1;
    em_status st = EM_ERR_INTERNAL;
    if (n > 0 && em_bytes_out(out, buf, (size_t)n)) st = EM_OK;
    else em_put_message(message, message_size, "CMS signing failed");
    OPENSSL_free(buf);
    ASN1_TIME_free(t);
    BIO_free(in);
    CMS_ContentInfo_free(cms);
    ASN1_OBJECT_free(oid);
    return st;
}
