// CVision — face recognition and 5-point landmarks through OpenCV's dnn module (ONNX): a network
// whose file is checked against its SHA-256 before it is parsed, the similarity alignment of a face
// to a model's 5-point template, and two model protocols on top of them: a recognition network's
// embedding of the aligned face (e.g. Intel's face-reidentification-retail-0095) and a landmark
// regressor's 5 points on a face box (e.g. Intel's landmarks-regression-retail-0009). Plain C, as
// cvision.h; no C++ exception crosses this interface.
#ifndef CVISION_RECOGNITION_H
#define CVISION_RECOGNITION_H
#include "cvision.h"

#ifdef __cplusplus
extern "C" {
#endif

/// An ONNX network read from a file whose bytes hashed to the expected SHA-256, parsed from those
/// same bytes by OpenCV 4.6 `readNetFromONNX`; thread-safe (a pool of per-thread copies built from
/// the verified bytes, each run with OpenCV's CPU backend).
typedef struct cv_net cv_net;

/// Reads `path`, checks the SHA-256 of the bytes read against `sha256_hex` (64 hex digits) and only
/// then parses them. `what` names the model in messages ("face recognition model"). Errors:
/// CV_ERR_MODEL_INTEGRITY on a hash mismatch (nothing parsed), CV_ERR_MODEL when the file is
/// missing or does not parse, CV_ERR_INVALID_ARGUMENT without a path or a 64-digit hash.
cv_status cv_net_load(const char *path, const char *sha256_hex, const char *what, cv_net **out, char *message,
                      size_t message_size);
void cv_net_destroy(cv_net *net);
/// Network copies created so far (for benchmarks).
int32_t cv_net_copies(cv_net *net);

/// The least-squares similarity transform (rotation, uniform scale, translation; no reflection —
/// Umeyama 1991 in 2-D) taking the `count` points `src_xy` (x, y pairs) to `dst_xy`; writes the
/// 2×3 matrix [a −b tx; b a ty] row-major to `m6`. CV_ERR_INVALID_ARGUMENT for fewer than 2
/// points, coincident source points or non-finite values.
cv_status cv_similarity_transform(const double *src_xy, const double *dst_xy, int32_t count, double *m6);

/// The face of an RGB image aligned to a template: `cv_similarity_transform(xy → template_xy)`,
/// then the image warped by it (bilinear, black outside the image) to `size` × `size` RGB in `out`.
cv_status cv_face_align(const uint8_t *rgb, int32_t width, int32_t height, const double *xy, const double *template_xy,
                        int32_t count, int32_t size, uint8_t *out, char *message, size_t message_size);

/// A recognition network's embedding of the face whose `count` points are `xy`: the face aligned
/// to `template_xy` at `size` × `size` (`cv_face_align`), as BGR with raw 0–255 values, NCHW float
/// (no mean, no scale), forward; the network's `dims` outputs are written to `embedding` as they
/// come (not normalised). CV_ERR_MODEL when the network has another number of outputs.
cv_status cv_recognition_embed(cv_net *net, const uint8_t *rgb, int32_t width, int32_t height, const double *xy,
                               const double *template_xy, int32_t count, int32_t size, float *embedding, int32_t dims,
                               char *message, size_t message_size);

/// The same on an already aligned `size` × `size` RGB face (`rgb`), e.g. a crop saved by
/// `cv_face_align`: BGR, raw 0–255, NCHW float, forward, `dims` outputs.
cv_status cv_recognition_embed_aligned(cv_net *net, const uint8_t *rgb, int32_t size, float *embedding, int32_t dims,
                                       char *message, size_t message_size);

/// A landmark regressor's points on a face box: the box (left, top, right, bottom, image pixels; it
/// may extend past the image, black there) resampled bilinearly to `input_size` × `input_size`,
/// BGR raw 0–255, NCHW float, forward; the network's 2 × `points` outputs are (x, y) in 0…1 of the
/// box; written to `xy` in image pixels.
cv_status cv_landmarks_regress(cv_net *net, const uint8_t *rgb, int32_t width, int32_t height, double left, double top,
                               double right, double bottom, int32_t input_size, int32_t points, double *xy, char *message,
                               size_t message_size);

/// The raw outputs of a landmark regressor on an `input_size` × `input_size` RGB crop (`rgb`), the
/// 2 × `points` values (0…1 of the crop) written to `out` as they come.
cv_status cv_landmarks_regress_crop(cv_net *net, const uint8_t *rgb, int32_t input_size, int32_t points, float *out,
                                    char *message, size_t message_size);

#ifdef __cplusplus
}
#endif
#endif
