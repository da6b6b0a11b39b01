// Image codecs and pixel operations beneath the readers (Imaging): JPEG (libjpeg-turbo) and PNG (libpng simplified
// API) decoding with limits checked before allocation, EXIF orientation, resampling, cropping and
// encoding. libjpeg reports errors through longjmp, so the functions that call it keep no C++
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

extern "C" void ci_free(void *pointer) { std::free(pointer); }

namespace {

void set_message(char *message, size_t size, const char *text) {
    if (message && size) std::snprintf(message, size, "%s", text);
}

// MARK: - EXIF orientation

uint32_t rd16(const uint8_t *p, bool le) { return le ? (p[0] | p[1] << 8) : (p[0] << 8 | p[1]); }
uint32_t rd32(const uint8_t *p, bool le) {
    return le ? (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24)
              : (uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]));
}

/// Orientation (tag 0x0112) from a TIFF structure (the body of EXIF); 1 when absent or malformed.
int tiff_orientation(const uint8_t *t, size_t n) {
    if (n < 8) return 1;
    bool le;
    if (t[0] == 'I' && t[1] == 'I') le = true;
    else if (t[0] == 'M' && t[1] == 'M') le = false;
    else return 1;
    if (rd16(t + 2, le) != 42) return 1;
    uint32_t ifd = rd32(t + 4, le);
    if (ifd > n || n - ifd < 2) return 1;
    uint32_t entries = rd16(t + ifd, le);
    for (uint32_t i = 0; i < entries; i++) {
        size_t e = size_t(ifd) + 2 + size_t(i) * 12;
        if (e + 12 > n) return 1;
        if (rd16(t + e, le) == 0x0112) {
            uint32_t type = rd16(t + e + 2, le);
            uint32_t v = type == 3 ? rd16(t + e + 8, le) : type == 4 ? rd32(t + e + 8, le) : 1;
            return (v >= 1 && v <= 8) ? int(v) : 1;
        }
    }
    return 1;
}

/// EXIF orientation of a PNG from its eXIf chunk (PNG 1.5 extension), scanning chunks up to IDAT.
int png_orientation(const uint8_t *d, size_t n) {
    size_t p = 8;
    while (p + 12 <= n) {
        uint32_t len = rd32(d + p, false);
        const uint8_t *type = d + p + 4;
        if (std::memcmp(type, "IDAT", 4) == 0 || std::memcmp(type, "IEND", 4) == 0) break;
        if (len > n - p - 12) break;
        if (std::memcmp(type, "eXIf", 4) == 0) return tiff_orientation(d + p + 8, len);
        p += 12 + size_t(len);
    }
    return 1;
}

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
            return tiff_orientation(m->data + 6, m->data_length - 6);
    }
    return 1;
}

ci_status decode_jpeg(const uint8_t *data, size_t count, uint64_t max_pixels, ci_bitmap *out,
                      ci_image_info *info, char *message, size_t message_size) {
    jpeg_decompress_struct cinfo;
    JpegError err;
    std::memset(&err, 0, sizeof err);
    uint8_t *volatile pixels = nullptr;
    uint8_t *volatile row = nullptr;
    volatile int stage = 0; // 0 header, 1 scanlines
    cinfo.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = jpeg_error_exit;
    err.mgr.emit_message = jpeg_emit;
    if (setjmp(err.jump)) {
        std::free(pixels);
        std::free(row);
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
    if (uint64_t(cinfo.image_width) * uint64_t(cinfo.image_height) > max_pixels) {
        jpeg_destroy_decompress(&cinfo);
        char text[160];
        std::snprintf(text, sizeof text, "JPEG of %u × %u pixels exceeds the limit of %llu pixels",
                      cinfo.image_width, cinfo.image_height, (unsigned long long)max_pixels);
        set_message(message, message_size, text);
        return CI_ERR_TOO_MANY_PIXELS;
    }
    bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    bool gray = cinfo.jpeg_color_space == JCS_GRAYSCALE;
    cinfo.out_color_space = cmyk ? JCS_CMYK : gray ? JCS_GRAYSCALE : JCS_RGB;
    // Bound libjpeg's own working memory (progressive coefficient buffers) as well.
    cinfo.mem->max_memory_to_use = long(std::min<uint64_t>(max_pixels * 16 + (64 << 20), 4ull << 30));
    jpeg_start_decompress(&cinfo);
    stage = 1;
    const int channels = gray ? 1 : 3;
    const size_t w = cinfo.output_width, h = cinfo.output_height;
    pixels = static_cast<uint8_t *>(std::malloc(w * h * channels));
    row = static_cast<uint8_t *>(std::malloc(w * cinfo.output_components));
    if (!pixels || !row) {
        std::free(pixels);
        std::free(row);
        jpeg_destroy_decompress(&cinfo);
        set_message(message, message_size, "out of memory decoding JPEG");
        return CI_ERR_OUT_OF_MEMORY;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        size_t y = cinfo.output_scanline;
        JSAMPROW rows[1] = {cmyk ? row : pixels + y * w * channels};
        if (jpeg_read_scanlines(&cinfo, rows, 1) != 1) break;
        if (cmyk) {
            // Adobe CMYK JPEGs store inverted samples: R = C·K/255 with C, K as stored.
            uint8_t *dst = pixels + y * w * 3;
            const bool inverted = cinfo.saw_Adobe_marker;
            for (size_t x = 0; x < w; x++) {
                int c = row[4 * x], m = row[4 * x + 1], yy = row[4 * x + 2], k = row[4 * x + 3];
                if (!inverted) { c = 255 - c; m = 255 - m; yy = 255 - yy; k = 255 - k; }
                dst[3 * x] = uint8_t((c * k + 127) / 255);
                dst[3 * x + 1] = uint8_t((m * k + 127) / 255);
                dst[3 * x + 2] = uint8_t((yy * k + 127) / 255);
            }
        }
        if (err.hit_eof) longjmp(err.jump, 1);
    }
    if (err.hit_eof) longjmp(err.jump, 1);
    jpeg_finish_decompress(&cinfo);
    if (err.hit_eof) longjmp(err.jump, 1);
    jpeg_destroy_decompress(&cinfo);
    std::free(row);
    out->width = int32_t(w);
    out->height = int32_t(h);
    out->channels = channels;
    out->pixels = pixels;
    return CI_OK;
}

// MARK: - PNG

ci_status decode_png(const uint8_t *data, size_t count, uint64_t max_pixels, ci_bitmap *out,
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
    uint64_t width = rd32(data + 16, false), height = rd32(data + 20, false);
    info->width = int64_t(width);
    info->height = int64_t(height);
    info->orientation = png_orientation(data, count);
    if (width == 0 || height == 0) {
        set_message(message, message_size, "PNG declares a zero width or height");
        return CI_ERR_CORRUPT;
    }
    if (width * height > max_pixels) {
        char text[160];
        std::snprintf(text, sizeof text, "PNG of %llu × %llu pixels exceeds the limit of %llu pixels",
                      (unsigned long long)width, (unsigned long long)height, (unsigned long long)max_pixels);
        set_message(message, message_size, text);
        return CI_ERR_TOO_MANY_PIXELS;
    }
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
    out->width = int32_t(image.width);
    out->height = int32_t(image.height);
    out->channels = int32_t(channels);
    out->pixels = pixels;
    png_image_free(&image);
    return CI_OK;
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

} // namespace

// MARK: - C interface

extern "C" ci_status ci_image_decode(const uint8_t *data, size_t count, uint64_t max_pixels, int apply_orientation,
                                     ci_bitmap *out, ci_image_info *info, char *message, size_t message_size) {
    try {
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
            status = decode_jpeg(data, count, max_pixels, out, info, message, message_size);
        } else if (count >= 8 && std::memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0) {
            info->format = CI_FORMAT_PNG;
            status = decode_png(data, count, max_pixels, out, info, message, message_size);
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
