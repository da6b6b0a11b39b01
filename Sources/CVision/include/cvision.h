// CVision — a thin C interface over dlib (face detection, landmarks, 128-d embeddings) and the
// image codecs. Plain C so Swift imports it directly; the implementation is C++17 compiled at -O2.
#ifndef CVISION_H
#define CVISION_H
#ifdef __cplusplus
extern "C" {
#endif

/// The dlib version this shim was built against, e.g. "19.24.0". Static storage; never NULL.
const char *cv_dlib_version(void);

#ifdef __cplusplus
}
#endif
#endif
