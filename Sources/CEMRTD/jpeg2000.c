// CEMRTD — OpenJPEG half: JPEG 2000 decode (DG2 portraits) and encode (specimen chips) in memory (cemrtd.h).
#include "cemrtd.h"
#include <openjpeg-2.5/openjpeg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *em_openjpeg_version(void) { return opj_version(); }

typedef struct mem_stream {
    uint8_t *data;      // read: the input; write: the growing output
    size_t count;
    size_t capacity;    // write only
    size_t pos;
} mem_stream;

typedef struct message_sink { char *message; size_t size; int written; } message_sink;

static void on_error(const char *msg, void *client) {
    message_sink *s = client;
    if (s && s->message && s->size && !s->written) {
        snprintf(s->message, s->size, "JPEG 2000: %s", msg);
        size_t n = strlen(s->message);
        while (n > 0 && (s->message[n - 1] == '\n' || s->message[n - 1] == '\r')) s->message[--n] = 0;
        s->written = 1;
    }
}
static void on_quiet(const char *msg, void *client) { (void)msg; (void)client; }

static OPJ_SIZE_T mem_read(void *buffer, OPJ_SIZE_T n, void *user) {
    mem_stream *m = user;
    if (m->pos >= m->count) return (OPJ_SIZE_T)-1;
    size_t k = m->count - m->pos < n ? m->count - m->pos : n;
    memcpy(buffer, m->data + m->pos, k);
    m->pos += k;
    return k;
}
static OPJ_OFF_T mem_skip(OPJ_OFF_T n, void *user) {
    mem_stream *m = user;
    if (n < 0) {
        if ((size_t)(-n) > m->pos) return -1;
        m->pos -= (size_t)(-n);
        return n;
    }
    size_t room = m->count > m->pos ? m->count - m->pos : 0;
    size_t k = (size_t)n < room ? (size_t)n : room;
    m->pos += k;
    return (OPJ_OFF_T)k;
}
static OPJ_BOOL mem_seek(OPJ_OFF_T n, void *user) {
    mem_stream *m = user;
    if (n < 0 || (size_t)n > m->count) return OPJ_FALSE;
    m->pos = (size_t)n;
    return OPJ_TRUE;
}

static int grow(mem_stream *m, size_t need) {
    if (need <= m->capacity) return 1;
    size_t cap = m->capacity ? m->capacity : 65536;
    while (cap < need) cap *= 2;
    uint8_t *d = realloc(m->data, cap);
    if (!d) return 0;
    memset(d + m->capacity, 0, cap - m->capacity);
    m->data = d;
    m->capacity = cap;
    return 1;
}
static OPJ_SIZE_T mem_write(void *buffer, OPJ_SIZE_T n, void *user) {
    mem_stream *m = user;
    if (!grow(m, m->pos + n)) return (OPJ_SIZE_T)-1;
    memcpy(m->data + m->pos, buffer, n);
    m->pos += n;
    if (m->pos > m->count) m->count = m->pos;
    return n;
}
static OPJ_OFF_T mem_wskip(OPJ_OFF_T n, void *user) {
    mem_stream *m = user;
    if (n < 0 || !grow(m, m->pos + (size_t)n)) return -1;
    m->pos += (size_t)n;
    if (m->pos > m->count) m->count = m->pos;
    return n;
}
static OPJ_BOOL mem_wseek(OPJ_OFF_T n, void *user) {
    mem_stream *m = user;
    if (n < 0 || !grow(m, (size_t)n)) return OPJ_FALSE;
    m->pos = (size_t)n;
    if (m->pos > m->count) m->count = m->pos;
    return OPJ_TRUE;
}

static int sample8(const opj_image_comp_t *c, int32_t v) {
    if (c->sgnd) v += 1 << (c->prec - 1);
    if (c->prec > 8) v >>= (c->prec - 8);
    else if (c->prec < 8) v <<= (8 - c->prec);
    return v < 0 ? 0 : (v > 255 ? 255 : v);
}

static int clamp255(double v) { return v < 0 ? 0 : (v > 255 ? 255 : (int)(v + 0.5)); }

em_status em_jpeg2000_decode(const uint8_t *data, size_t count, uint64_t max_pixels, em_bitmap *out,
                             int64_t *declared_width, int64_t *declared_height, char *message, size_t message_size) {
    memset(out, 0, sizeof *out);
    if (declared_width) *declared_width = 0;
    if (declared_height) *declared_height = 0;
    if (message && message_size) message[0] = 0;
    if (!data || count < 12) { if (message) snprintf(message, message_size, "JPEG 2000: too few bytes"); return EM_ERR_PARSE; }
    static const uint8_t jp2_sig[12] = {0, 0, 0, 0x0c, 0x6a, 0x50, 0x20, 0x20, 0x0d, 0x0a, 0x87, 0x0a};
    static const uint8_t j2k_sig[4] = {0xff, 0x4f, 0xff, 0x51};
    OPJ_CODEC_FORMAT fmt;
    if (memcmp(data, jp2_sig, 12) == 0) fmt = OPJ_CODEC_JP2;
    else if (memcmp(data, j2k_sig, 4) == 0) fmt = OPJ_CODEC_J2K;
    else { if (message) snprintf(message, message_size, "JPEG 2000: no JP2 or J2K signature"); return EM_ERR_PARSE; }

    mem_stream m = {(uint8_t *)data, count, 0, 0};
    message_sink sink = {message, message_size, 0};
    opj_stream_t *s = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
    opj_codec_t *codec = opj_create_decompress(fmt);
    opj_image_t *img = NULL;
    em_status st = EM_ERR_PARSE;
    if (!s || !codec) { st = EM_ERR_INTERNAL; goto done; }
    opj_stream_set_user_data(s, &m, NULL);
    opj_stream_set_user_data_length(s, count);
    opj_stream_set_read_function(s, mem_read);
    opj_stream_set_skip_function(s, mem_skip);
    opj_stream_set_seek_function(s, mem_seek);
    opj_set_error_handler(codec, on_error, &sink);
    opj_set_warning_handler(codec, on_quiet, NULL);
    opj_set_info_handler(codec, on_quiet, NULL);
    opj_dparameters_t p;
    opj_set_default_decoder_parameters(&p);
    if (!opj_setup_decoder(codec, &p) || !opj_read_header(s, codec, &img) || !img) {
        if (!sink.written && message) snprintf(message, message_size, "JPEG 2000: unreadable header");
        goto done;
    }
    int64_t w = (int64_t)img->x1 - img->x0, h = (int64_t)img->y1 - img->y0;
    if (declared_width) *declared_width = w;
    if (declared_height) *declared_height = h;
    if (w <= 0 || h <= 0 || img->numcomps == 0) { if (message) snprintf(message, message_size, "JPEG 2000: empty image"); goto done; }
    if ((uint64_t)w * (uint64_t)h > max_pixels) {
        if (message) snprintf(message, message_size, "JPEG 2000: %lld x %lld pixels exceed the limit", (long long)w, (long long)h);
        st = EM_ERR_TOO_LARGE;
        goto done;
    }
    if (!opj_decode(codec, s, img) || !opj_end_decompress(codec, s)) {
        if (!sink.written && message) snprintf(message, message_size, "JPEG 2000: decoding failed");
        goto done;
    }
    opj_image_comp_t *c0 = &img->comps[0];
    if (!c0->data || c0->w == 0 || c0->h == 0) { if (message) snprintf(message, message_size, "JPEG 2000: no pixel data"); goto done; }
    for (OPJ_UINT32 i = 0; i < img->numcomps && i < 3; i++)
        if (!img->comps[i].data || img->comps[i].prec == 0 || img->comps[i].prec > 31 || img->comps[i].dx == 0 || img->comps[i].dy == 0) {
            if (message) snprintf(message, message_size, "JPEG 2000: unusable component %u", i);
            goto done;
        }
    int W = (int)c0->w, H = (int)c0->h;
    int channels = img->numcomps >= 3 ? 3 : 1;
    uint8_t *px = malloc((size_t)W * H * channels);
    if (!px) { st = EM_ERR_INTERNAL; goto done; }
    int ycc = img->color_space == OPJ_CLRSPC_SYCC || img->color_space == OPJ_CLRSPC_EYCC;
    if (channels == 3 && img->color_space == OPJ_CLRSPC_UNSPECIFIED && (img->comps[1].dx != c0->dx || img->comps[1].dy != c0->dy))
        ycc = 1;   // subsampled chroma with no colour space named: YCbCr (as OpenJPEG's own tools assume)
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            int v[3];
            for (int k = 0; k < channels; k++) {
                const opj_image_comp_t *c = &img->comps[k];
                OPJ_UINT32 cx = (OPJ_UINT32)((uint64_t)x * c0->dx / c->dx), cy = (OPJ_UINT32)((uint64_t)y * c0->dy / c->dy);
                if (cx >= c->w) cx = c->w - 1;
                if (cy >= c->h) cy = c->h - 1;
                v[k] = sample8(c, c->data[(size_t)cy * c->w + cx]);
            }
            uint8_t *o = px + ((size_t)y * W + x) * channels;
            if (channels == 1) { o[0] = (uint8_t)v[0]; continue; }
            if (ycc) {
                double Y = v[0], cb = v[1] - 128.0, cr = v[2] - 128.0;
                o[0] = (uint8_t)clamp255(Y + 1.402 * cr);
                o[1] = (uint8_t)clamp255(Y - 0.344136 * cb - 0.714136 * cr);
                o[2] = (uint8_t)clamp255(Y + 1.772 * cb);
            } else {
                o[0] = (uint8_t)v[0]; o[1] = (uint8_t)v[1]; o[2] = (uint8_t)v[2];
            }
        }
    }
    out->width = W;
    out->height = H;
    out->channels = channels;
    out->pixels = px;
    st = EM_OK;
done:
    if (img) opj_image_destroy(img);
    if (codec) opj_destroy_codec(codec);
    if (s) opj_stream_destroy(s);
    return st;
}

em_status em_jpeg2000_encode(const uint8_t *pixels, int32_t width, int32_t height, int32_t channels,
                             float compression_ratio, em_bytes *out, char *message, size_t message_size) {
    out->data = NULL; out->count = 0;
    if (message && message_size) message[0] = 0;
    if (!pixels || width <= 0 || height <= 0 || (channels != 1 && channels != 3) || (int64_t)width * height > 100000000) {
        if (message) snprintf(message, message_size, "JPEG 2000: bad image dimensions");
        return EM_ERR_INVALID_ARGUMENT;
    }
    opj_cparameters_t p;
    opj_set_default_encoder_parameters(&p);
    p.tcp_numlayers = 1;
    p.tcp_rates[0] = compression_ratio > 1 ? compression_ratio : 0;   // 0: lossless
    p.cp_disto_alloc = 1;
    p.irreversible = compression_ratio > 1;
    p.tcp_mct = channels == 3 ? 1 : 0;
    int res = 1, m = width < height ? width : height;
    while (res < 6 && (m >> res) >= 8) res++;
    p.numresolution = res;
    opj_image_cmptparm_t cp[3];
    memset(cp, 0, sizeof cp);
    for (int k = 0; k < channels; k++) { cp[k].dx = 1; cp[k].dy = 1; cp[k].w = (OPJ_UINT32)width; cp[k].h = (OPJ_UINT32)height; cp[k].prec = 8; cp[k].sgnd = 0; }
    opj_image_t *img = opj_image_create((OPJ_UINT32)channels, cp, channels == 3 ? OPJ_CLRSPC_SRGB : OPJ_CLRSPC_GRAY);
    if (!img) return EM_ERR_INTERNAL;
    img->x0 = 0; img->y0 = 0; img->x1 = (OPJ_UINT32)width; img->y1 = (OPJ_UINT32)height;
    size_t n = (size_t)width * height;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < channels; k++) img->comps[k].data[i] = pixels[i * channels + k];
    mem_stream ms = {NULL, 0, 0, 0};
    message_sink sink = {message, message_size, 0};
    opj_codec_t *codec = opj_create_compress(OPJ_CODEC_JP2);
    opj_stream_t *s = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_FALSE);
    em_status st = EM_ERR_INTERNAL;
    if (codec && s) {
        opj_set_error_handler(codec, on_error, &sink);
        opj_set_warning_handler(codec, on_quiet, NULL);
        opj_set_info_handler(codec, on_quiet, NULL);
        opj_stream_set_user_data(s, &ms, NULL);
        opj_stream_set_write_function(s, mem_write);
        opj_stream_set_skip_function(s, mem_wskip);
        opj_stream_set_seek_function(s, mem_wseek);
        if (opj_setup_encoder(codec, &p, img) && opj_start_compress(codec, img, s) && opj_encode(codec, s) && opj_end_compress(codec, s)) {
            out->data = ms.data;
            out->count = ms.count;
            ms.data = NULL;
            st = EM_OK;
        } else if (!sink.written && message) {
            snprintf(message, message_size, "JPEG 2000: encoding failed");
        }
    }
    free(ms.data);
    if (s) opj_stream_destroy(s);
    if (codec) opj_destroy_codec(codec);
    opj_image_destroy(img);
    return st;
}
