// CVision — a thin C interface over dlib (face detection, landmarks, 128-d embeddings) and OpenCV's
// dnn module (texture presentation-attack detection); images are decoded, resized and encoded by
// CImaging (cimaging.h). Plain C so Swift imports it directly; the implementation is C++17 compiled
// at -O2 in every configuration. No C++ exception ever crosses this interface:
// every fallible function returns a `cv_status` and writes a message into the caller's buffer.
//
// Pixel buffers are 8-bit, interleaved, row-major without padding: `channels` is 1 (grey) or 3
// (R, G, B). Buffers written by a function are allocated by the caller unless documented otherwise.
#ifndef CVISION_H
#define CVISION_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/// The dlib version this shim was built against, e.g. "19.24.0". Static storage; never NULL.
const char *cv_dlib_version(void);

/// Sets the BLAS thread count when the BLAS is OpenBLAS (returns 1), else returns 0. Benchmarks use
/// it to measure on one core.
int cv_set_blas_threads(int threads);

/// Result of every fallible call. The message buffer names the detail.
typedef enum cv_status {
    CV_OK = 0,
    CV_ERR_EMPTY = 1,              ///< zero bytes of input
    CV_ERR_NOT_IMAGE = 2,          ///< no known image signature
    CV_ERR_UNSUPPORTED_FORMAT = 3, ///< a recognised image format that is not JPEG or PNG
    CV_ERR_TRUNCATED = 4,          ///< the data ends before the image does
    CV_ERR_TOO_MANY_PIXELS = 5,    ///< width × height above the caller's limit (nothing allocated)
    CV_ERR_CORRUPT = 6,            ///< the decoder rejected the data
    CV_ERR_INVALID_ARGUMENT = 7,   ///< bad dimensions, rectangle or option
    CV_ERR_OUT_OF_MEMORY = 8,
    CV_ERR_MODEL = 9,              ///< a model file is missing or unreadable
    CV_ERR_INTERNAL = 10,          ///< any other failure inside dlib, OpenCV or a codec
    CV_ERR_MODEL_INTEGRITY = 11,   ///< a model file's SHA-256 differs from the expected one (nothing was parsed)
} cv_status;

/// Statistics of a grey region for face quality: the rectangle (x, y, w, h) — clipped to the
/// image — is resampled to `sample_size` × `sample_size` (area averaging / bilinear), then
/// `mean` and `stddev` of the grey levels (0…255) and the variance of the 4-neighbour Laplacian
/// (grey levels²) over the interior are computed.
cv_status cv_region_statistics(const uint8_t *gray, int32_t width, int32_t height, int32_t x, int32_t y,
                               int32_t w, int32_t h, int32_t sample_size, double *mean, double *stddev,
                               double *laplacian_variance);

// MARK: - Face engine (dlib)

/// An engine holding dlib's models; thread-safe. Models load lazily, once, on first use (or by
/// `cv_engine_load`); networks and the HOG scanner are kept in a pool of per-thread copies.
typedef struct cv_engine cv_engine;

/// Model files (the mask bits of `cv_engine_load`).
enum {
    CV_MODEL_SHAPE5 = 1,  ///< shape_predictor_5_face_landmarks.dat
    CV_MODEL_SHAPE68 = 2, ///< shape_predictor_68_face_landmarks.dat
    CV_MODEL_RESNET = 4,  ///< dlib_face_recognition_resnet_model_v1.dat
    CV_MODEL_MMOD = 8,    ///< mmod_human_face_detector.dat
};

/// Detectors.
enum { CV_DETECTOR_HOG = 0, CV_DETECTOR_CNN = 1 };

/// Creates an engine reading model files from `models_dir`; those load lazily. The HOG detector is
/// made now: from `hog_path` (dlib `serialize` of `get_frontal_face_detector()`, as written by
/// `cv_hog_detector_export`), whose bytes must hash to `hog_sha256` (64 hex digits) before they are
/// parsed (a few ms), or, when `hog_path` is NULL, by dlib's `get_frontal_face_detector()` itself,
/// which decodes the detector from compressed text compiled into dlib (~1.4 s of one core).
/// CV_ERR_MODEL_INTEGRITY when the file's hash differs; CV_ERR_MODEL when it is missing or does not parse.
cv_status cv_engine_create(const char *models_dir, const char *hog_path, const char *hog_sha256,
                           cv_engine **out, char *message, size_t message_size);
/// Writes dlib's `get_frontal_face_detector()` to `path` with dlib's `serialize` (the shipped
/// `frontal_face_detector.dat`) and its SHA-256 (64 hex digits and NUL) to `hex_out`.
cv_status cv_hog_detector_export(const char *path, char *hex_out, char *message, size_t message_size);
void cv_engine_destroy(cv_engine *engine);
/// Loads the models in `mask` now (each file once per engine). CV_ERR_MODEL names a missing file.
cv_status cv_engine_load(cv_engine *engine, int32_t mask, char *message, size_t message_size);
/// Number of per-thread worker copies created so far (for benchmarks).
int32_t cv_engine_worker_count(cv_engine *engine);

/// One detected face: box in input-image pixels (may extend past the borders), the detector's
/// score and which of its sub-detectors fired.
typedef struct cv_detection {
    double left, top, right, bottom;
    double confidence;       ///< HOG: SVM margin (0 = dlib's threshold); CNN: MMOD score
    int32_t detector_index;  ///< HOG sub-detector (0 front, 1 left, 2 right, 3 front rotated left, 4 front rotated right); CNN: 0
} cv_detection;

/// Detects faces in an RGB image. The image is resampled by `scale` first (0.5 halves it, 2 doubles
/// it) and boxes are mapped back to input pixels. Writes up to `capacity` detections, best first;
/// `*count` is the total found.
cv_status cv_detect(cv_engine *engine, const uint8_t *rgb, int32_t width, int32_t height, int32_t detector,
                    double scale, double adjust_threshold, cv_detection *out, int32_t capacity, int32_t *count,
                    char *message, size_t message_size);

/// Landmarks (5 or 68 points) inside a face box; writes `points` (x, y) pairs to `xy`.
cv_status cv_landmarks(cv_engine *engine, const uint8_t *rgb, int32_t width, int32_t height, double left, double top,
                       double right, double bottom, int32_t points, double *xy, char *message, size_t message_size);

/// The 128-d face descriptor (dlib ResNet v1) of the face whose 5 or 68 landmarks are `xy`: the
/// face is aligned to a 150×150 chip with padding 0.25 and passed through the network; with
/// `jitter` > 1 the descriptors of that many randomly jittered chips (fixed seed) are averaged.
cv_status cv_embed(cv_engine *engine, const uint8_t *rgb, int32_t width, int32_t height, const double *xy,
                   int32_t points, int32_t jitter, float *descriptor, char *message, size_t message_size);

/// The aligned face chip (`size` × `size` RGB) for 5 or 68 landmarks, as dlib's
/// `get_face_chip_details(shape, size, padding)` + `extract_image_chip`.
cv_status cv_face_chip(const uint8_t *rgb, int32_t width, int32_t height, const double *xy, int32_t points,
                       int32_t size, double padding, uint8_t *out, char *message, size_t message_size);

// MARK: - Texture PAD (OpenCV dnn)

/// An ONNX face-crop classifier (e.g. MiniFASNet) loaded through OpenCV's dnn module; thread-safe
/// (a pool of per-thread network copies built from the verified bytes).
typedef struct cv_pad_model cv_pad_model;

/// SHA-256 of a file's bytes as 64 lowercase hex digits (+ NUL) written to `hex_out` (65 bytes).
cv_status cv_sha256_file(const char *path, char *hex_out, char *message, size_t message_size);

/// Reads the ONNX file at `path`, checks the SHA-256 of the bytes read against `sha256_hex`
/// (64 hex digits) and only then parses them (OpenCV `readNetFromONNX` from memory), so the
/// network that runs is the one whose hash was checked. CV_ERR_MODEL_INTEGRITY on a mismatch,
/// CV_ERR_MODEL when the file is missing or does not parse. Sets OpenCV to one thread per call.
cv_status cv_pad_model_load(const char *path, const char *sha256_hex, cv_pad_model **out, char *message, size_t message_size);
void cv_pad_model_destroy(cv_pad_model *model);
/// Network copies created so far (for benchmarks).
int32_t cv_pad_model_copies(cv_pad_model *model);

/// The crop rectangle of the Silent-Face-Anti-Spoofing input protocol (`CropImage._get_new_box`):
/// the box (exclusive right/bottom) scaled by `scale` about its centre, the scale capped so the
/// crop fits the image, then shifted back inside it. Writes x, y, w, h in image pixels.
cv_status cv_pad_crop_box(int32_t width, int32_t height, double left, double top, double right, double bottom,
                          double scale, int32_t *x, int32_t *y, int32_t *w, int32_t *h);

/// Classifies the face crop of an RGB image: `cv_pad_crop_box(…, scale)`, resized (bilinear) to
/// `input_size`² pixels, BGR, raw 0–255 values, NCHW; writes the softmax of the `classes` logits.
cv_status cv_pad_classify(cv_pad_model *model, const uint8_t *rgb, int32_t width, int32_t height, double left, double top,
                          double right, double bottom, double scale, int32_t input_size, float *probabilities,
                          int32_t classes, char *message, size_t message_size);

/// The face detector MiniFASNet's crops are defined on (Silent-Face-Anti-Spoofing's RetinaFace,
/// Caffe), loaded through OpenCV's dnn module; thread-safe (a pool of per-thread network copies).
typedef struct cv_pad_detector cv_pad_detector;

/// Reads the Caffe `prototxt` and `model` files, checks each one's SHA-256 (64 hex digits) on the
/// bytes read and only then parses them (`readNetFromCaffe` from memory). CV_ERR_MODEL_INTEGRITY on
/// a mismatch, CV_ERR_MODEL when a file is missing or does not parse.
cv_status cv_pad_detector_load(const char *prototxt_path, const char *prototxt_sha256, const char *model_path,
                               const char *model_sha256, cv_pad_detector **out, char *message, size_t message_size);
void cv_pad_detector_destroy(cv_pad_detector *detector);

/// Detects faces in the region (x, y, w, h) of an RGB image as upstream's `Detection.get_bbox` does:
/// a region of at least `input_side`² pixels is resized to about that many keeping its aspect
/// ratio, BGR, means (104, 117, 123) subtracted. Writes up to `max_boxes` detections, most confident
/// first, 5 floats each: left, top, right, bottom (image pixels) and confidence (0…1); `count` says how many.
cv_status cv_pad_detect(cv_pad_detector *detector, const uint8_t *rgb, int32_t width, int32_t height, int32_t x, int32_t y,
                        int32_t w, int32_t h, int32_t input_side, float *boxes, int32_t max_boxes, int32_t *count,
                        char *message, size_t message_size);

#ifdef __cplusplus
}
#endif
#endif
