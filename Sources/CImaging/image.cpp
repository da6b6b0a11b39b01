// Image codecs and pixel operations beneath the readers (Imaging): JPEG (libjpeg-turbo, DCT-scaled and
// cropped decoding) and PNG (libpng, whole image or row by row) decoding with limits checked before
// allocation, EXIF orientation (libexif), resampling, cropping and encoding. libjpeg reports errors through longjmp, so the functions that call it keep no C++
// objects with destructors alive across `setjmp`.
#include "cimaging.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <algorithm>
#include <vector>
#include <new>

#include <jpeglib.h>
#include <jerror.h>
#include <png.h>
#include <libexif/exif-data.h>

extern "C" void ci_free(void *pointer) { std::free(pointer); }

namespace {

void set_message(char *message, size_t size, const char *text) {
    if (message && size) std::snprintf(message, size, "%s", text);
}

// MARK: - EXIF orientation (libexif)

uint32_t rd32be(const uint8_t *p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]); }

/// Orientation (tag 0x0112 in IFD0) of an EXIF block as libexif reads it: `exif` is the APP1 body
/// starting "Exif\0\0" (JPEG) or the bare TIFF structure (PNG eXIf, `bare`). 1 when absent, malformed
/// or outside 1…8. libexif's "follow the specification" option is off so nothing is added or changed.
int exif_orientation(const uint8_t *exif, size_t n, bool bare) {
    if (n < 8 || n > 0xFFFFFF) return 1;
    std::vector<uint8_t> owned;
    if (bare) {
        owned.reserve(n + 6);
        owned.insert(owned.end(), {'E', 'x', 'i', 'f', 0, 0});
        owned.insert(owned.end(), exif, exif + n);
        exif = owned.data();
        n = owned.size();
    }
    ExifData *ed = exif_data_new();
    if (!ed) return 1;
    exif_data_unset_option(ed, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
    exif_data_load_data(ed, exif, unsigned(n));
    int value = 1;
    if (ExifEntry *e = exif_content_get_entry(ed->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION)) {
        const ExifByteOrder order = exif_data_get_byte_order(ed);
        if (e->data && e->components >= 1) {
            if (e->format == EXIF_FORMAT_SHORT && e->size >= 2) value = exif_get_short(e->data, order);
            else if (e->format == EXIF_FORMAT_LONG && e->size >= 4) value = int(exif_get_long(e->data, order));
        }
    }
    exif_data_unref(ed);
    return (value >= 1 && value <= 8) ? value : 1;
}

/// EXIF orientation of a PNG from its eXIf chunk (PNG 1.5 extension), scanning chunks up to IDAT.
int png_orientation(const uint8_t *d, size_t n) {
    size_t p = 8;
    while (p + 12 <= n) {
        uint32_t len = rd32be(d + p);
        const uint8_t *type = d + p + 4;
        if (std::memcmp(type, "IDAT", 4) == 0 || std::memcmp(type, "IEND", 4) == 0) break;
        if (len > n - p - 12) break;
        if (std::memcmp(type, "eXIf", 4) == 0) return exif_orientation(d + p + 8, len, true);
        p += 12 + size_t(len);
    }
    return 1;
}

// MARK: - Resampling

/// Source taps for each output index along one axis.
struct Taps {
    std::vector<int> start, count;
    std::vector<float> weight; // flattened, `maxTaps` per output
    int maxTaps = 0;
};

Taps make_taps(int src, int dst) {
    Taps t;
    t.start.resize(dst);
    t.count.resize(dst);
    const double scale = double(src) / dst;
    if (scale > 1.0) {
        // Area averaging: output i covers source [i·scale, (i+1)·scale).
        t.maxTaps = int(std::ceil(scale)) + 2;
        t.weight.assign(size_t(dst) * t.maxTaps, 0.f);
        for (int i = 0; i < dst; i++) {
            double a = i * scale, b = (i + 1) * scale;
            int s = int(std::floor(a)), e = std::min(src, int(std::ceil(b)));
            t.start[i] = s;
            t.count[i] = e - s;
            for (int k = s; k < e; k++) {
                double overlap = std::min(b, double(k + 1)) - std::max(a, double(k));
                t.weight[size_t(i) * t.maxTaps + (k - s)] = float(overlap / scale);
            }
        }
    } else {
        t.maxTaps = 2;
        t.weight.assign(size_t(dst) * 2, 0.f);
        for (int i = 0; i < dst; i++) {
            double x = (i + 0.5) * scale - 0.5;
            if (x < 0) x = 0;
            int x0 = int(std::floor(x));
            if (x0 >= src - 1) { x0 = src - 1; x = x0; }
            double f = x - x0;
            t.start[i] = x0;
            t.count[i] = (x0 + 1 < src) ? 2 : 1;
            t.weight[size_t(i) * 2] = float(1 - f);
            if (t.count[i] == 2) t.weight[size_t(i) * 2 + 1] = float(f);
            else t.weight[size_t(i) * 2] = 1.f;
        }
    }
    return t;
}

// MARK: - Requests: region and size

/// A decoding request resolved against the image: the stored-pixel rectangle to decode and the size
/// (in stored orientation) of the output.
struct Plan {
    int64_t x = 0, y = 0, w = 0, h = 0;  ///< stored pixels
    int64_t out_w = 0, out_h = 0;        ///< output size before orientation
    int orientation = 1;                 ///< applied after decoding (1 when not applied)
};

/// Maps the upright rectangle of `request` (whole image when its width is 0) to stored pixels for
/// orientation `o` of a stored W × H image, and the output size for `max_dimension`.
bool make_plan(const ci_decode_request *request, int64_t W, int64_t H, int o, Plan *plan) {
    const bool swap = o >= 5;
    const int64_t UW = swap ? H : W, UH = swap ? W : H;
    int64_t rx = 0, ry = 0, rw = UW, rh = UH;
    if (request && request->region_width > 0) {
        rx = request->region_x; ry = request->region_y; rw = request->region_width; rh = request->region_height;
        if (rx < 0 || ry < 0 || rh <= 0 || rx + rw > UW || ry + rh > UH) return false;
    }
    // Corners of the upright rectangle in stored coordinates (the inverse of `ci_image_orient`).
    auto stored = [&](int64_t x, int64_t y, int64_t *sx, int64_t *sy) {
        switch (o) {
        case 2: *sx = W - 1 - x; *sy = y; break;
        case 3: *sx = W - 1 - x; *sy = H - 1 - y; break;
        case 4: *sx = x; *sy = H - 1 - y; break;
        case 5: *sx = y; *sy = x; break;
        case 6: *sx = y; *sy = H - 1 - x; break;
        case 7: *sx = W - 1 - y; *sy = H - 1 - x; break;
        case 8: *sx = W - 1 - y; *sy = x; break;
        default: *sx = x; *sy = y; break;
        }
    };
    int64_t ax, ay, bx, by;
    stored(rx, ry, &ax, &ay);
    stored(rx + rw - 1, ry + rh - 1, &bx, &by);
    plan->x = std::min(ax, bx); plan->y = std::min(ay, by);
    plan->w = std::max(ax, bx) - plan->x + 1; plan->h = std::max(ay, by) - plan->y + 1;
    plan->orientation = o;
    double scale = 1;
    const int64_t longSide = std::max(rw, rh);
    if (request && request->max_dimension > 0 && longSide > request->max_dimension) scale = double(request->max_dimension) / double(longSide);
    plan->out_w = std::max<int64_t>(1, int64_t(std::llround(double(plan->w) * scale)));
    plan->out_h = std::max<int64_t>(1, int64_t(std::llround(double(plan->h) * scale)));
    return true;
}

/// Area-averaging resampler fed one source row at a time: a region of `src_w` × `src_h` pixels
/// becomes `dst_w` × `dst_h` with the taps of `ci_image_resize`, keeping only the output rows still
/// open (two when shrinking) instead of the whole source.
struct RowResampler {
    Taps tx, ty;
    int c, dst_w, dst_h;
    uint8_t *dst;
    int first_open = 0;
    std::vector<std::vector<float>> open; // accumulators of rows first_open, first_open + 1, …
    std::vector<float> hrow;

    RowResampler(int src_w, int src_h, int dst_w, int dst_h, int channels, uint8_t *out)
        : tx(make_taps(src_w, dst_w)), ty(make_taps(src_h, dst_h)), c(channels), dst_w(dst_w), dst_h(dst_h), dst(out),
          hrow(size_t(dst_w) * channels) {}

    /// Source row `r` (0-based within the region), `src_w` × `c` bytes.
    void push(int r, const uint8_t *row) {
        for (int x = 0; x < dst_w; x++) {
            const float *wt = tx.weight.data() + size_t(x) * tx.maxTaps;
            for (int k = 0; k < c; k++) {
                float acc = 0;
                for (int j = 0; j < tx.count[x]; j++) acc += wt[j] * row[(tx.start[x] + j) * c + k];
                hrow[size_t(x) * c + k] = acc;
            }
        }
        for (int i = first_open; i < dst_h && ty.start[i] <= r; i++) {
            const int j = r - ty.start[i];
            if (j >= ty.count[i]) continue;
            size_t slot = size_t(i - first_open);
            while (open.size() <= slot) open.emplace_back(hrow.size(), 0.f);
            const float w = ty.weight[size_t(i) * ty.maxTaps + j];
            std::vector<float> &acc = open[slot];
            for (size_t q = 0; q < hrow.size(); q++) acc[q] += w * hrow[q];
        }
        // Rows whose last tap was this one are complete.
        while (first_open < dst_h && ty.start[first_open] + ty.count[first_open] - 1 <= r) {
            uint8_t *o = dst + size_t(first_open) * dst_w * c;
            if (open.empty()) open.emplace_back(hrow.size(), 0.f);
            for (size_t q = 0; q < hrow.size(); q++) {
                float v = open[0][q] + 0.5f;
                o[q] = v <= 0 ? 0 : v >= 255 ? 255 : uint8_t(v);
            }
            open.erase(open.begin());
            first_open++;
        }
    }
};

// MARK: - JPEG

struct JpegError {
    jpeg_error_mgr mgr;
    std::jmp_buf jump;
    bool hit_eof;
    char text[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr cinfo) {
    JpegError *e = reinterpret_cast<JpegError *>(cinfo->err);
    (*cinfo->err->format_message)(cinfo, e->text);
    std::longjmp(e->jump, 1);
}

void jpeg_emit(j_common_ptr cinfo, int level) {
    JpegError *e = reinterpret_cast<JpegError *>(cinfo->err);
    if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) e->hit_eof = true;
}

int jpeg_orientation(j_decompress_ptr cinfo) {
    for (jpeg_saved_marker_ptr m = cinfo->marker_list; m; m = m->next) {
        if (m->marker == JPEG_APP0 + 1 && m->data_length > 6 && std::memcmp(m->data, "Exif\0\0", 6) == 0)
            return exif_orientation(m->data, m->data_length, false);
    }
    return 1;
}

/// Decodes the stored-pixel rectangle of `plan` at `plan.out_w` × `plan.out_h` (orientation is the
/// caller's): libjpeg's DCT scaling by m/8 to the smallest size at least the output's, only the
/// rows needed (`jpeg_skip_scanlines`) and the iMCU columns needed (`jpeg_crop_scanline`), then
/// area averaging to the exact size. The whole image at full size takes the plain path (every
/// scanline, `jpeg_finish_decompress`), as before requests existed.
ci_status decode_jpeg(const uint8_t *data, size_t count, const ci_decode_request *request, ci_bitmap *out,
                      ci_image_info *info, char *message, size_t message_size) {
    jpeg_decompress_struct cinfo;
    JpegError err;
    std::memset(&err, 0, sizeof err);
    uint8_t *volatile pixels = nullptr;
    uint8_t *volatile row = nullptr;
    uint8_t *volatile region = nullptr;
    volatile int stage = 0; // 0 header, 1 scanlines
    cinfo.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = jpeg_error_exit;
    err.mgr.emit_message = jpeg_emit;
    if (setjmp(err.jump)) {
        std::free(pixels);
        std::free(row);
        std::free(region);
        jpeg_destroy_decompress(&cinfo);
        if (err.hit_eof) {
            set_message(message, message_size, stage == 0 ? "JPEG data ends inside the header"
                                                          : "JPEG data ends before the image is complete");
            return CI_ERR_TRUNCATED;
        }
        char text[JMSG_LENGTH_MAX + 32];
        std::snprintf(text, sizeof text, "JPEG decoder: %s", err.text);
        set_message(message, message_size, text);
        return CI_ERR_CORRUPT;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, const_cast<unsigned char *>(data), (unsigned long)count);
    jpeg_save_markers(&cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_read_header(&cinfo, TRUE);
    if (err.hit_eof) longjmp(err.jump, 1);
    info->width = cinfo.image_width;
    info->height = cinfo.image_height;
    info->orientation = jpeg_orientation(&cinfo);
    if (uint64_t(cinfo.image_width) * uint64_t(cinfo.image_height) > request->max_pixels) {
        jpeg_destroy_decompress(&cinfo);
        char text[160];
        std::snprintf(text, sizeof text, "JPEG of %u × %u pixels exceeds the limit of %llu pixels",
                      cinfo.image_width, cinfo.image_height, (unsigned long long)request->max_pixels);
        set_message(message, message_size, text);
        return CI_ERR_TOO_MANY_PIXELS;
    }
    Plan plan;
    if (!make_plan(request, cinfo.image_width, cinfo.image_height, request->apply_orientation ? info->orientation : 1, &plan)) {
        jpeg_destroy_decompress(&cinfo);
        set_message(message, message_size, "decode region lies outside the image");
        return CI_ERR_INVALID_ARGUMENT;
    }
    const bool whole = plan.w == cinfo.image_width && plan.h == cinfo.image_height;
    const bool plain = whole && plan.out_w == plan.w && plan.out_h == plan.h;
    // DCT scaling m/8: the smallest m whose region is at least the output's size.
    int m = 8;
    if (!plain) {
        for (m = 1; m < 8; m++) {
            if ((plan.w * m + 7) / 8 >= plan.out_w && (plan.h * m + 7) / 8 >= plan.out_h) break;
        }
    }
    cinfo.scale_num = unsigned(m);
    cinfo.scale_denom = 8;
    bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    bool gray = cinfo.jpeg_color_space == JCS_GRAYSCALE;
    cinfo.out_color_space = cmyk ? JCS_CMYK : gray ? JCS_GRAYSCALE : JCS_RGB;
    // Bound libjpeg's own working memory (progressive coefficient buffers) as well.
    cinfo.mem->max_memory_to_use = long(std::min<uint64_t>(request->max_pixels * 16 + (64 << 20), 4ull << 30));
    jpeg_start_decompress(&cinfo);
    stage = 1;
    const int channels = gray ? 1 : 3;
    // The region in scaled pixels.
    const int64_t fullW = cinfo.output_width, fullH = cinfo.output_height;
    int64_t x0 = plain ? 0 : std::min<int64_t>(fullW - 1, plan.x * m / 8);
    int64_t x1 = plain ? fullW : std::max<int64_t>(x0 + 1, std::min<int64_t>(fullW, ((plan.x + plan.w) * m + 7) / 8));
    int64_t y0 = plain ? 0 : std::min<int64_t>(fullH - 1, plan.y * m / 8);
    int64_t y1 = plain ? fullH : std::max<int64_t>(y0 + 1, std::min<int64_t>(fullH, ((plan.y + plan.h) * m + 7) / 8));
    JDIMENSION cropX = JDIMENSION(x0), cropW = JDIMENSION(x1 - x0);
    if (x0 > 0 || x1 < fullW) jpeg_crop_scanline(&cinfo, &cropX, &cropW);   // widens to iMCU boundaries
    const size_t rw = size_t(x1 - x0), rh = size_t(y1 - y0), decodedW = cinfo.output_width;
    const size_t skipX = size_t(x0) - cropX;
    region = static_cast<uint8_t *>(std::malloc(rw * rh * channels));
    row = static_cast<uint8_t *>(std::malloc(decodedW * cinfo.output_components));
    if (!region || !row) {
        std::free(region);
        std::free(row);
        jpeg_destroy_decompress(&cinfo);
        set_message(message, message_size, "out of memory decoding JPEG");
        return CI_ERR_OUT_OF_MEMORY;
    }
    if (y0 > 0) jpeg_skip_scanlines(&cinfo, JDIMENSION(y0));
    while (cinfo.output_scanline < JDIMENSION(y1)) {
        size_t y = cinfo.output_scanline - size_t(y0);
        const bool direct = !cmyk && skipX == 0 && decodedW == rw;
        JSAMPROW rows[1] = {direct ? region + y * rw * channels : row};
        if (jpeg_read_scanlines(&cinfo, rows, 1) != 1) break;
        uint8_t *dst = region + y * rw * channels;
        if (cmyk) {
            // Adobe CMYK JPEGs store inverted samples: R = C·K/255 with C, K as stored.
            const bool inverted = cinfo.saw_Adobe_marker;
            for (size_t x = 0; x < rw; x++) {
                const uint8_t *p = row + 4 * (x + skipX);
                int c = p[0], mm = p[1], yy = p[2], k = p[3];
                if (!inverted) { c = 255 - c; mm = 255 - mm; yy = 255 - yy; k = 255 - k; }
                dst[3 * x] = uint8_t((c * k + 127) / 255);
                dst[3 * x + 1] = uint8_t((mm * k + 127) / 255);
                dst[3 * x + 2] = uint8_t((yy * k + 127) / 255);
            }
        } else if (!direct) {
            std::memcpy(dst, row + skipX * channels, rw * channels);
        }
        if (err.hit_eof) longjmp(err.jump, 1);
    }
    if (err.hit_eof) longjmp(err.jump, 1);
    if (plain) {
        jpeg_finish_decompress(&cinfo);
        if (err.hit_eof) longjmp(err.jump, 1);
    }
    jpeg_destroy_decompress(&cinfo);
    std::free(row);
    row = nullptr;
    if (rw == size_t(plan.out_w) && rh == size_t(plan.out_h)) {
        pixels = region;
    } else {
        pixels = static_cast<uint8_t *>(std::malloc(size_t(plan.out_w) * plan.out_h * channels));
        ci_status s = pixels ? ci_image_resize(region, int32_t(rw), int32_t(rh), channels, pixels,
                                               int32_t(plan.out_w), int32_t(plan.out_h)) : CI_ERR_OUT_OF_MEMORY;
        std::free(region);
        if (s != CI_OK) {
            std::free(pixels);
            set_message(message, message_size, "out of memory resampling JPEG");
            return CI_ERR_OUT_OF_MEMORY;
        }
    }
    out->width = int32_t(plan.out_w);
    out->height = int32_t(plan.out_h);
    out->channels = channels;
    out->pixels = pixels;
    return CI_OK;
}

// MARK: - PNG

/// libpng's error and warning callbacks for the row-by-row reader: errors jump back with the message.
struct PngRowError {
    char text[200];
};

void png_row_error(png_structp png, png_const_charp msg) {
    PngRowError *e = static_cast<PngRowError *>(png_get_error_ptr(png));
    std::snprintf(e->text, sizeof e->text, "%s", msg ? msg : "error");
    png_longjmp(png, 1);
}

void png_row_warning(png_structp, png_const_charp) {}

struct PngSource {
    const uint8_t *data;
    size_t count, at;
};

void png_row_read(png_structp png, png_bytep out, png_size_t n) {
    PngSource *src = static_cast<PngSource *>(png_get_io_ptr(png));
    if (n > src->count - src->at) png_error(png, "unexpected end of data");
    std::memcpy(out, src->data + src->at, n);
    src->at += n;
}

/// Row by row with libpng's progressive-free reader (`png_read_row`): only the rows of the plan's
/// rectangle are kept, each resampled into the output as it arrives (`RowResampler`), so memory is
/// the output plus a row instead of the whole image. Alpha is composited on black and 16-bit samples
/// reduced to 8, as in the whole-image path. Not for interlaced images (Adam7 delivers every row in
/// seven passes).
ci_status decode_png_rows(const uint8_t *data, size_t count, const Plan &plan, ci_bitmap *out,
                          char *message, size_t message_size) {
    PngRowError err;
    std::memset(&err, 0, sizeof err);
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &err, png_row_error, png_row_warning);
    if (!png) { set_message(message, message_size, "out of memory decoding PNG"); return CI_ERR_OUT_OF_MEMORY; }
    png_infop pinfo = png_create_info_struct(png);
    uint8_t *volatile pixels = nullptr;
    uint8_t *volatile row = nullptr;
    uint8_t *volatile conv = nullptr;
    RowResampler *volatile sampler = nullptr;
    PngSource src = {data, count, 0};
    if (!pinfo || setjmp(png_jmpbuf(png))) {
        delete sampler;
        std::free(pixels);
        std::free(row);
        std::free(conv);
        png_destroy_read_struct(&png, pinfo ? &pinfo : nullptr, nullptr);
        const bool truncated = std::strstr(err.text, "end of data") || std::strstr(err.text, "Not enough") ||
                               std::strstr(err.text, "Read Error") || std::strstr(err.text, "unexpected end");
        char text[256];
        std::snprintf(text, sizeof text, truncated ? "PNG data ends before the image is complete (%s)" : "PNG decoder image data: %s",
                      err.text[0] ? err.text : "out of memory");
        set_message(message, message_size, text);
        return truncated ? CI_ERR_TRUNCATED : CI_ERR_CORRUPT;
    }
    png_set_read_fn(png, &src, png_row_read);
    png_read_info(png, pinfo);
    const int colorType = png_get_color_type(png, pinfo);
    png_set_expand(png);
    png_set_strip_16(png);
    png_read_update_info(png, pinfo);
    const int inChannels = png_get_channels(png, pinfo);
    const bool gray = (colorType & PNG_COLOR_MASK_COLOR) == 0;
    const bool alpha = inChannels == 2 || inChannels == 4;
    const int channels = gray ? 1 : 3;
    const size_t W = png_get_image_width(png, pinfo);
    row = static_cast<uint8_t *>(std::malloc(png_get_rowbytes(png, pinfo)));
    conv = static_cast<uint8_t *>(std::malloc(size_t(plan.w) * channels));
    pixels = static_cast<uint8_t *>(std::malloc(size_t(plan.out_w) * plan.out_h * channels));
    if (!row || !conv || !pixels) png_error(png, "out of memory");
    sampler = new RowResampler(int(plan.w), int(plan.h), int(plan.out_w), int(plan.out_h), channels, pixels);
    (void)W;
    for (int64_t y = 0; y < plan.y + plan.h; y++) {
        png_read_row(png, row, nullptr);
        if (y < plan.y) continue;
        const uint8_t *in = row + size_t(plan.x) * inChannels;
        for (int64_t x = 0; x < plan.w; x++) {
            const uint8_t *p = in + size_t(x) * inChannels;
            const int a = alpha ? p[inChannels - 1] : 255;
            for (int k = 0; k < channels; k++) conv[size_t(x) * channels + k] = uint8_t((p[k] * a + 127) / 255);
        }
        sampler->push(int(y - plan.y), conv);
    }
    delete sampler;
    std::free(row);
    std::free(conv);
    png_destroy_read_struct(&png, &pinfo, nullptr);
    out->width = int32_t(plan.out_w);
    out->height = int32_t(plan.out_h);
    out->channels = channels;
    out->pixels = pixels;
    return CI_OK;
}

ci_status decode_png(const uint8_t *data, size_t count, const ci_decode_request *request, ci_bitmap *out,
                     ci_image_info *info, char *message, size_t message_size) {
    // Read the IHDR ourselves first so the limit is checked before libpng allocates anything big.
    if (count < 33) {
        set_message(message, message_size, "PNG data ends inside the header");
        return CI_ERR_TRUNCATED;
    }
    if (std::memcmp(data + 12, "IHDR", 4) != 0) {
        set_message(message, message_size, "PNG without an IHDR chunk");
        return CI_ERR_CORRUPT;
    }
    uint64_t width = rd32be(data + 16), height = rd32be(data + 20);
    info->width = int64_t(width);
    info->height = int64_t(height);
    info->orientation = png_orientation(data, count);
    if (width == 0 || height == 0) {
        set_message(message, message_size, "PNG declares a zero width or height");
        return CI_ERR_CORRUPT;
    }
    if (width * height > request->max_pixels) {
        char text[160];
        std::snprintf(text, sizeof text, "PNG of %llu × %llu pixels exceeds the limit of %llu pixels",
                      (unsigned long long)width, (unsigned long long)height, (unsigned long long)request->max_pixels);
        set_message(message, message_size, text);
        return CI_ERR_TOO_MANY_PIXELS;
    }
    if (width > 0x7FFFFFFF || height > 0x7FFFFFFF) {
        set_message(message, message_size, "PNG declares a width or height above 2^31");
        return CI_ERR_CORRUPT;
    }
    Plan plan;
    if (!make_plan(request, int64_t(width), int64_t(height), request->apply_orientation ? info->orientation : 1, &plan)) {
        set_message(message, message_size, "decode region lies outside the image");
        return CI_ERR_INVALID_ARGUMENT;
    }
    const bool plain = plan.x == 0 && plan.y == 0 && uint64_t(plan.w) == width && uint64_t(plan.h) == height &&
                       plan.out_w == plan.w && plan.out_h == plan.h;
    const bool interlaced = data[28] != 0;
    if (!plain && !interlaced) return decode_png_rows(data, count, plan, out, message, message_size);
    png_image image;
    std::memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    auto fail = [&](const char *what) {
        const char *m = image.message;
        bool truncated = std::strstr(m, "end of data") || std::strstr(m, "Not enough") ||
                         std::strstr(m, "Read Error") || std::strstr(m, "unexpected end");
        char text[256];
        std::snprintf(text, sizeof text, truncated ? "PNG data ends before the image is complete (%s)"
                                                   : "PNG decoder %s: %s", truncated ? m : what, m);
        set_message(message, message_size, text);
        png_image_free(&image);
        return truncated ? CI_ERR_TRUNCATED : CI_ERR_CORRUPT;
    };
    if (!png_image_begin_read_from_memory(&image, data, count)) return fail("header");
    const bool gray = (image.format & PNG_FORMAT_FLAG_COLOR) == 0;
    image.format = gray ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    const size_t channels = gray ? 1 : 3;
    const size_t size = size_t(image.width) * image.height * channels;
    uint8_t *pixels = static_cast<uint8_t *>(std::malloc(size));
    if (!pixels) {
        png_image_free(&image);
        set_message(message, message_size, "out of memory decoding PNG");
        return CI_ERR_OUT_OF_MEMORY;
    }
    png_color background = {0, 0, 0};
    if (!png_image_finish_read(&image, &background, pixels, 0, nullptr)) {
        std::free(pixels);
        return fail("image data");
    }
    png_image_free(&image);
    if (!plain) {
        // Interlaced: the whole image was decoded; cut and resample the plan's part of it.
        const size_t cw = size_t(plan.w), ch = size_t(plan.h);
        uint8_t *cut = static_cast<uint8_t *>(std::malloc(cw * ch * channels));
        uint8_t *scaled = static_cast<uint8_t *>(std::malloc(size_t(plan.out_w) * plan.out_h * channels));
        if (!cut || !scaled) {
            std::free(cut); std::free(scaled); std::free(pixels);
            set_message(message, message_size, "out of memory decoding PNG");
            return CI_ERR_OUT_OF_MEMORY;
        }
        ci_image_crop(pixels, int32_t(width), int32_t(height), int32_t(channels), int32_t(plan.x), int32_t(plan.y),
                      int32_t(cw), int32_t(ch), cut);
        std::free(pixels);
        ci_image_resize(cut, int32_t(cw), int32_t(ch), int32_t(channels), scaled, int32_t(plan.out_w), int32_t(plan.out_h));
        std::free(cut);
        pixels = scaled;
    }
    out->width = int32_t(plan.out_w);
    out->height = int32_t(plan.out_h);
    out->channels = int32_t(channels);
    out->pixels = pixels;
    return CI_OK;
}

} // namespace

// MARK: - C interface

extern "C" ci_status ci_image_decode(const uint8_t *data, size_t count, uint64_t max_pixels, int apply_orientation,
                                     ci_bitmap *out, ci_image_info *info, char *message, size_t message_size) {
    ci_decode_request request;
    std::memset(&request, 0, sizeof request);
    request.max_pixels = max_pixels;
    request.apply_orientation = apply_orientation;
    return ci_image_decode_request(data, count, &request, out, info, message, message_size);
}

extern "C" ci_status ci_image_decode_request(const uint8_t *data, size_t count, const ci_decode_request *request,
                                             ci_bitmap *out, ci_image_info *info, char *message, size_t message_size) {
    try {
        if (!request || request->max_dimension < 0 || request->region_width < 0 || request->region_height < 0) {
            set_message(message, message_size, "invalid decode request");
            return CI_ERR_INVALID_ARGUMENT;
        }
        const int apply_orientation = request->apply_orientation;
        std::memset(out, 0, sizeof *out);
        std::memset(info, 0, sizeof *info);
        info->orientation = 1;
        if (!data || count == 0) {
            set_message(message, message_size, "no image data (zero bytes)");
            return CI_ERR_EMPTY;
        }
        ci_status status;
        if (count >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) {
            info->format = CI_FORMAT_JPEG;
            status = decode_jpeg(data, count, request, out, info, message, message_size);
        } else if (count >= 8 && std::memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0) {
            info->format = CI_FORMAT_PNG;
            status = decode_png(data, count, request, out, info, message, message_size);
        } else if (count < 8 && ((data[0] == 0xFF && (count < 2 || data[1] == 0xD8)) ||
                                 std::memcmp(data, "\x89PNG\r\n\x1a\n", count) == 0)) {
            set_message(message, message_size, "image data ends inside the signature");
            return CI_ERR_TRUNCATED;
        } else {
            const char *name = nullptr;
            if (count >= 6 && (std::memcmp(data, "GIF87a", 6) == 0 || std::memcmp(data, "GIF89a", 6) == 0)) name = "GIF";
            else if (count >= 12 && std::memcmp(data, "RIFF", 4) == 0 && std::memcmp(data + 8, "WEBP", 4) == 0) name = "WebP";
            else if (count >= 2 && data[0] == 'B' && data[1] == 'M') name = "BMP";
            else if (count >= 4 && (std::memcmp(data, "II*\0", 4) == 0 || std::memcmp(data, "MM\0*", 4) == 0)) name = "TIFF";
            else if (count >= 12 && std::memcmp(data + 4, "ftyp", 4) == 0) name = "HEIF/ISO-BMFF";
            else if (count >= 12 && std::memcmp(data, "\0\0\0\x0cjP  ", 8) == 0) name = "JPEG 2000";
            else if (count >= 4 && std::memcmp(data, "\xff\x4f\xff\x51", 4) == 0) name = "JPEG 2000 codestream";
            if (name) {
                char text[128];
                std::snprintf(text, sizeof text, "%s images are not supported (JPEG and PNG are)", name);
                set_message(message, message_size, text);
                return CI_ERR_UNSUPPORTED_FORMAT;
            }
            set_message(message, message_size, "not an image: no JPEG or PNG signature");
            return CI_ERR_NOT_IMAGE;
        }
        if (status != CI_OK) return status;
        if (apply_orientation && info->orientation != 1) {
            size_t size = size_t(out->width) * out->height * out->channels;
            uint8_t *turned = static_cast<uint8_t *>(std::malloc(size));
            if (!turned) {
                ci_free(out->pixels);
                std::memset(out, 0, sizeof *out);
                set_message(message, message_size, "out of memory applying orientation");
                return CI_ERR_OUT_OF_MEMORY;
            }
            ci_image_orient(out->pixels, out->width, out->height, out->channels, info->orientation, turned);
            std::free(out->pixels);
            out->pixels = turned;
            if (info->orientation >= 5) std::swap(out->width, out->height);
        }
        return CI_OK;
    } catch (const std::bad_alloc &) {
        set_message(message, message_size, "out of memory decoding image");
        return CI_ERR_OUT_OF_MEMORY;
    } catch (...) {
        set_message(message, message_size, "unexpected failure decoding image");
        return CI_ERR_INTERNAL;
    }
}

extern "C" ci_status ci_image_orient(const uint8_t *src, int32_t width, int32_t height, int32_t channels,
                                     int32_t orientation, uint8_t *dst) {
    if (orientation < 1 || orientation > 8 || width <= 0 || height <= 0 || (channels != 1 && channels != 3))
        return CI_ERR_INVALID_ARGUMENT;
    const long w = width, h = height, c = channels;
    const bool swap = orientation >= 5;
    const long dw = swap ? h : w, dh = swap ? w : h;
    for (long y = 0; y < dh; y++) {
        uint8_t *out = dst + y * dw * c;
        for (long x = 0; x < dw; x++) {
            long sx, sy;
            switch (orientation) {
            case 2: sx = w - 1 - x; sy = y; break;
            case 3: sx = w - 1 - x; sy = h - 1 - y; break;
            case 4: sx = x; sy = h - 1 - y; break;
            case 5: sx = y; sy = x; break;
            case 6: sx = y; sy = h - 1 - x; break;
            case 7: sx = w - 1 - y; sy = h - 1 - x; break;
            case 8: sx = w - 1 - y; sy = x; break;
            default: sx = x; sy = y; break;
            }
            const uint8_t *in = src + (sy * w + sx) * c;
            for (long k = 0; k < c; k++) out[x * c + k] = in[k];
        }
    }
    return CI_OK;
}

extern "C" void ci_rgb_to_gray(const uint8_t *rgb, size_t pixel_count, uint8_t *gray) {
    for (size_t i = 0; i < pixel_count; i++) {
        const uint8_t *p = rgb + 3 * i;
        gray[i] = uint8_t((299 * p[0] + 587 * p[1] + 114 * p[2] + 500) / 1000);
    }
}

extern "C" void ci_gray_to_rgb(const uint8_t *gray, size_t pixel_count, uint8_t *rgb) {
    for (size_t i = 0; i < pixel_count; i++) rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = gray[i];
}

extern "C" ci_status ci_image_resize(const uint8_t *src, int32_t width, int32_t height, int32_t channels,
                                     uint8_t *dst, int32_t dst_width, int32_t dst_height) {
    if (width <= 0 || height <= 0 || dst_width <= 0 || dst_height <= 0 || (channels != 1 && channels != 3))
        return CI_ERR_INVALID_ARGUMENT;
    try {
        const int c = channels;
        if (width == dst_width && height == dst_height) {
            std::memcpy(dst, src, size_t(width) * height * c);
            return CI_OK;
        }
        Taps tx = make_taps(width, dst_width), ty = make_taps(height, dst_height);
        // Horizontal pass into a float buffer (height × dst_width), then vertical pass.
        std::vector<float> mid(size_t(height) * dst_width * c);
        for (int y = 0; y < height; y++) {
            const uint8_t *row = src + size_t(y) * width * c;
            float *o = mid.data() + size_t(y) * dst_width * c;
            for (int x = 0; x < dst_width; x++) {
                const float *wt = tx.weight.data() + size_t(x) * tx.maxTaps;
                for (int k = 0; k < c; k++) {
                    float acc = 0;
                    for (int j = 0; j < tx.count[x]; j++) acc += wt[j] * row[(tx.start[x] + j) * c + k];
                    o[x * c + k] = acc;
                }
            }
        }
        const size_t rowLen = size_t(dst_width) * c;
        std::vector<float> acc(rowLen);
        for (int y = 0; y < dst_height; y++) {
            std::fill(acc.begin(), acc.end(), 0.f);
            const float *wt = ty.weight.data() + size_t(y) * ty.maxTaps;
            for (int j = 0; j < ty.count[y]; j++) {
                const float *in = mid.data() + size_t(ty.start[y] + j) * rowLen;
                const float w = wt[j];
                for (size_t i = 0; i < rowLen; i++) acc[i] += w * in[i];
            }
            uint8_t *o = dst + size_t(y) * rowLen;
            for (size_t i = 0; i < rowLen; i++) {
                float v = acc[i] + 0.5f;
                o[i] = v <= 0 ? 0 : v >= 255 ? 255 : uint8_t(v);
            }
        }
        return CI_OK;
    } catch (...) {
        return CI_ERR_OUT_OF_MEMORY;
    }
}

extern "C" ci_status ci_image_crop(const uint8_t *src, int32_t width, int32_t height, int32_t channels,
                                   int32_t x, int32_t y, int32_t w, int32_t h, uint8_t *dst) {
    if (x < 0 || y < 0 || w <= 0 || h <= 0 || int64_t(x) + w > width || int64_t(y) + h > height ||
        (channels != 1 && channels != 3))
        return CI_ERR_INVALID_ARGUMENT;
    for (int32_t r = 0; r < h; r++)
        std::memcpy(dst + size_t(r) * w * channels, src + (size_t(y + r) * width + x) * channels, size_t(w) * channels);
    return CI_OK;
}

extern "C" ci_status ci_encode_jpeg(const uint8_t *src, int32_t width, int32_t height, int32_t channels, int32_t quality,
                                    ci_bytes *out, char *message, size_t message_size) {
    out->data = nullptr;
    out->count = 0;
    if (width <= 0 || height <= 0 || (channels != 1 && channels != 3) || quality < 1 || quality > 100 ||
        width > 65500 || height > 65500) {
        set_message(message, message_size, "JPEG encoder: invalid dimensions, channels or quality");
        return CI_ERR_INVALID_ARGUMENT;
    }
    jpeg_compress_struct cinfo;
    JpegError err;
    std::memset(&err, 0, sizeof err);
    unsigned char *volatile buffer = nullptr;
    unsigned long size = 0;
    cinfo.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = jpeg_error_exit;
    if (setjmp(err.jump)) {
        jpeg_destroy_compress(&cinfo);
        std::free(buffer);
        char text[JMSG_LENGTH_MAX + 32];
        std::snprintf(text, sizeof text, "JPEG encoder: %s", err.text);
        set_message(message, message_size, text);
        return CI_ERR_INTERNAL;
    }
    jpeg_create_compress(&cinfo);
    unsigned char *buf = nullptr;
    jpeg_mem_dest(&cinfo, &buf, &size);
    cinfo.image_width = JDIMENSION(width);
    cinfo.image_height = JDIMENSION(height);
    cinfo.input_components = channels;
    cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row[1] = {const_cast<uint8_t *>(src) + size_t(cinfo.next_scanline) * width * channels};
        jpeg_write_scanlines(&cinfo, row, 1);
    }
    jpeg_finish_compress(&cinfo);
    buffer = buf;
    jpeg_destroy_compress(&cinfo);
    out->data = buffer;
    out->count = size;
    return CI_OK;
}

extern "C" ci_status ci_encode_png(const uint8_t *src, int32_t width, int32_t height, int32_t channels,
                                   ci_bytes *out, char *message, size_t message_size) {
    out->data = nullptr;
    out->count = 0;
    if (width <= 0 || height <= 0 || (channels != 1 && channels != 3)) {
        set_message(message, message_size, "PNG encoder: invalid dimensions or channels");
        return CI_ERR_INVALID_ARGUMENT;
    }
    png_image image;
    std::memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = png_uint_32(width);
    image.height = png_uint_32(height);
    image.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    png_alloc_size_t size = 0;
    if (!png_image_write_get_memory_size(image, size, 0, src, 0, nullptr)) {
        char text[256];
        std::snprintf(text, sizeof text, "PNG encoder: %s", image.message);
        set_message(message, message_size, text);
        png_image_free(&image);
        return CI_ERR_INTERNAL;
    }
    uint8_t *buffer = static_cast<uint8_t *>(std::malloc(size));
    if (!buffer) {
        set_message(message, message_size, "out of memory encoding PNG");
        return CI_ERR_OUT_OF_MEMORY;
    }
    if (!png_image_write_to_memory(&image, buffer, &size, 0, src, 0, nullptr)) {
        char text[256];
        std::snprintf(text, sizeof text, "PNG encoder: %s", image.message);
        set_message(message, message_size, text);
        std::free(buffer);
        png_image_free(&image);
        return CI_ERR_INTERNAL;
    }
    out->data = buffer;
    out->count = size;
    return CI_OK;
}
