// CImaging — a thin C interface over the image codecs (libjpeg-turbo, libpng, libexif) and the pixel
// operations beneath the readers (decode with limits checked before allocation, EXIF orientation,
// resize, crop, grey/RGB conversion, JPEG/PNG encoding). Plain C so Swift imports it directly; the
// implementation is C++17 compiled at -O2 in every configuration. No C++ exception ever crosses
// this interface: every fallible function returns a `ci_status` and writes a message into the
// caller's buffer. Thread safety: every function is reentrant (no shared state).
//
// Pixel buffers are 8-bit, interleaved, row-major without padding: `channels` is 1 (grey) or 3
// (R, G, B). Buffers written by a function are allocated by the caller unless documented otherwise.
#ifndef CIMAGING_H
#define CIMAGING_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/// Result of every fallible call. The message buffer names the detail.
typedef enum ci_status {
    CI_OK = 0,
    CI_ERR_EMPTY = 1,              ///< zero bytes of input
    CI_ERR_NOT_IMAGE = 2,          ///< no known image signature
    CI_ERR_UNSUPPORTED_FORMAT = 3, ///< a recognised image format that is not JPEG or PNG
    CI_ERR_TRUNCATED = 4,          ///< the data ends before the image does
    CI_ERR_TOO_MANY_PIXELS = 5,    ///< width × height above the caller's limit (nothing allocated)
    CI_ERR_CORRUPT = 6,            ///< the decoder rejected the data
    CI_ERR_INVALID_ARGUMENT = 7,   ///< bad dimensions, rectangle or option
    CI_ERR_OUT_OF_MEMORY = 8,
    CI_ERR_INTERNAL = 10,          ///< any other failure inside a codec
} ci_status;

/// Source formats.
enum { CI_FORMAT_UNKNOWN = 0, CI_FORMAT_JPEG = 1, CI_FORMAT_PNG = 2 };

/// What the decoder learned about the input; filled as far as it got, also on error
/// (so a `CI_ERR_TOO_MANY_PIXELS` reports the declared width and height).
typedef struct ci_image_info {
    int32_t format;      ///< CI_FORMAT_*
    int64_t width;       ///< declared width before orientation, pixels
    int64_t height;      ///< declared height before orientation, pixels
    int32_t orientation; ///< EXIF orientation tag 1…8 (1 when absent)
} ci_image_info;

/// A pixel buffer allocated by CImaging (malloc); release with `ci_free`.
typedef struct ci_bitmap {
    int32_t width;
    int32_t height;
    int32_t channels; ///< 1 or 3
    uint8_t *pixels;  ///< width × height × channels bytes
} ci_bitmap;

/// Bytes allocated by CImaging (malloc); release with `ci_free`.
typedef struct ci_bytes {
    uint8_t *data;
    size_t count;
} ci_bytes;

void ci_free(void *pointer);

/// Decodes JPEG or PNG bytes. Greyscale sources decode to 1 channel, everything else to RGB (alpha is
/// composited on black, 16-bit samples reduced to 8, palettes expanded, CMYK converted). Refuses
/// images whose declared width × height exceeds `max_pixels` before allocating pixel memory.
/// When `apply_orientation` is non-zero the EXIF orientation (JPEG APP1, PNG eXIf; read with libexif)
/// is applied so the result is upright.
ci_status ci_image_decode(const uint8_t *data, size_t count, uint64_t max_pixels, int apply_orientation,
                          ci_bitmap *out, ci_image_info *info, char *message, size_t message_size);

/// What to decode: a part of the upright image, at most a given size.
typedef struct ci_decode_request {
    uint64_t max_pixels;       ///< refuse images whose declared width × height exceeds this (nothing allocated)
    int32_t apply_orientation; ///< non-zero: apply the EXIF orientation; the region is then in upright pixels
    int32_t max_dimension;     ///< the output's longer side at most this many pixels (0: the region's own size)
    int32_t region_x;          ///< the part to decode, full-resolution pixels of the (upright) image;
    int32_t region_y;          ///< region_width 0 means the whole image
    int32_t region_width;
    int32_t region_height;
} ci_decode_request;

/// Decodes the region of `request` (the whole image when its width is 0) scaled so that the longer
/// side is at most `max_dimension`: the output is round(w·s) × round(h·s) of the region's w × h with
/// s = min(1, max_dimension / max(w, h)). JPEG: libjpeg-turbo DCT scaling by m/8 (the smallest m
/// that keeps at least the output size), only the needed scanlines and iMCU columns, then area
/// averaging to the exact size — peak memory about the scaled region, not the image (progressive
/// JPEGs still hold libjpeg's coefficient buffer of the whole image). PNG: row by row, each row of
/// the region resampled as it arrives (memory: the output plus a row); interlaced PNGs are decoded
/// whole, then cut and resampled. The whole image at full size decodes exactly as `ci_image_decode`.
/// `CI_ERR_INVALID_ARGUMENT` when the region lies outside the image.
ci_status ci_image_decode_request(const uint8_t *data, size_t count, const ci_decode_request *request,
                                  ci_bitmap *out, ci_image_info *info, char *message, size_t message_size);

/// Applies EXIF orientation `orientation` (1…8) to `src`; `dst` holds width × height × channels bytes
/// and is width-by-height for 1–4, height-by-width for 5–8.
ci_status ci_image_orient(const uint8_t *src, int32_t width, int32_t height, int32_t channels,
                          int32_t orientation, uint8_t *dst);

/// RGB → grey (ITU-R BT.601 luma, rounded) for `pixel_count` pixels.
void ci_rgb_to_gray(const uint8_t *rgb, size_t pixel_count, uint8_t *gray);
/// Grey → RGB (replicated) for `pixel_count` pixels.
void ci_gray_to_rgb(const uint8_t *gray, size_t pixel_count, uint8_t *rgb);

/// Resamples to `dst_width` × `dst_height`: area averaging along an axis that shrinks, bilinear
/// interpolation (pixel-centre aligned) along one that grows.
ci_status ci_image_resize(const uint8_t *src, int32_t width, int32_t height, int32_t channels,
                          uint8_t *dst, int32_t dst_width, int32_t dst_height);

/// Copies the rectangle (x, y, w, h), which must lie inside the image, into `dst` (w × h × channels).
ci_status ci_image_crop(const uint8_t *src, int32_t width, int32_t height, int32_t channels,
                        int32_t x, int32_t y, int32_t w, int32_t h, uint8_t *dst);

/// Baseline JPEG (4:2:0 for RGB), quality 1…100. `out->data` is malloc'd.
ci_status ci_encode_jpeg(const uint8_t *src, int32_t width, int32_t height, int32_t channels, int32_t quality,
                         ci_bytes *out, char *message, size_t message_size);
/// 8-bit PNG. `out->data` is malloc'd.
ci_status ci_encode_png(const uint8_t *src, int32_t width, int32_t height, int32_t channels,
                        ci_bytes *out, char *message, size_t message_size);

#ifdef __cplusplus
}
#endif
#endif
