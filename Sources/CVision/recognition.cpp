// Face recognition and 5-point landmark regression through OpenCV's dnn module (cvision_recognition.h).
// A network's file is hashed (libsodium SHA-256) and the very bytes that matched are parsed, so a
// file altered or replaced on disk is refused, never run. Every exception is caught here.
#include "cvision_recognition.h"
#include "model_file.hpp"

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/imgproc.hpp>
#include <sodium.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

using cvision_internal::read_verified;

void say(char *message, size_t size, const std::string &text) { cvision_internal::set_message(message, size, text); }

/// Runs `body` and maps every exception to a status and message (`what` prefixes it).
template <typename Body> cv_status guarded(const char *what, char *message, size_t size, Body body) {
    try {
        return body();
    } catch (const cv::Exception &e) {
        say(message, size, std::string(what) + ": " + e.what());
        return CV_ERR_INTERNAL;
    } catch (const std::bad_alloc &) {
        say(message, size, std::string("out of memory in ") + what);
        return CV_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        say(message, size, std::string(what) + ": " + e.what());
        return CV_ERR_INTERNAL;
    }
}

} // namespace

struct cv_net {
    std::string what;
    std::vector<unsigned char> bytes; // the verified ONNX file, kept to build more copies
    std::mutex mutex;
    std::vector<std::unique_ptr<cv::dnn::Net>> idle;
    int copies = 0;

    std::unique_ptr<cv::dnn::Net> acquire() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (!idle.empty()) {
                auto n = std::move(idle.back());
                idle.pop_back();
                return n;
            }
            copies++;
        }
        auto net = std::make_unique<cv::dnn::Net>(
            cv::dnn::readNetFromONNX(reinterpret_cast<const char *>(bytes.data()), bytes.size()));
        net->setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
        net->setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
        return net;
    }

    void release(std::unique_ptr<cv::dnn::Net> net) {
        std::lock_guard<std::mutex> lock(mutex);
        idle.push_back(std::move(net));
    }

    /// One forward pass of `blob` on a pooled copy; the output copied out.
    cv::Mat forward(const cv::Mat &blob) {
        auto net = acquire();
        cv::Mat out;
        try {
            net->setInput(blob);
            out = net->forward().clone();
        } catch (...) {
            release(std::move(net));
            throw;
        }
        release(std::move(net));
        return out;
    }
};

extern "C" cv_status cv_net_load(const char *path, const char *sha256_hex_expected, const char *what, cv_net **out, char *message,
                                 size_t message_size) {
    *out = nullptr;
    const std::string name = what && *what ? what : "model";
    if (!path || !sha256_hex_expected || std::string(sha256_hex_expected).size() != 64) {
        say(message, message_size, name + ": a path and a 64-digit SHA-256 are required");
        return CV_ERR_INVALID_ARGUMENT;
    }
    try {
        auto net = std::make_unique<cv_net>();
        net->what = name;
        const cv_status status = read_verified(path, sha256_hex_expected, name, net->bytes, message, message_size);
        if (status != CV_OK) return status;
        // One thread per network call: a server runs one request per thread already, and the
        // benchmarks measure one core.
        cv::setNumThreads(1);
        net->release(net->acquire()); // parse once now, so a malformed file fails here
        *out = net.release();
        return CV_OK;
    } catch (const cv::Exception &e) {
        say(message, message_size, name + " " + path + " does not load in OpenCV dnn: " + e.what());
        return CV_ERR_MODEL;
    } catch (const std::bad_alloc &) {
        say(message, message_size, "out of memory loading the " + name);
        return CV_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        say(message, message_size, name + ": " + e.what());
        return CV_ERR_INTERNAL;
    }
}

extern "C" void cv_net_destroy(cv_net *net) { delete net; }

extern "C" int32_t cv_net_copies(cv_net *net) {
    std::lock_guard<std::mutex> lock(net->mutex);
    return net->copies;
}

extern "C" cv_status cv_similarity_transform(const double *src, const double *dst, int32_t count, double *m) {
    if (!src || !dst || !m || count < 2) return CV_ERR_INVALID_ARGUMENT;
    double sx = 0, sy = 0, dx = 0, dy = 0;
    for (int i = 0; i < count; i++) {
        if (!std::isfinite(src[2 * i]) || !std::isfinite(src[2 * i + 1]) || !std::isfinite(dst[2 * i]) || !std::isfinite(dst[2 * i + 1]))
            return CV_ERR_INVALID_ARGUMENT;
        sx += src[2 * i]; sy += src[2 * i + 1]; dx += dst[2 * i]; dy += dst[2 * i + 1];
    }
    sx /= count; sy /= count; dx /= count; dy /= count;
    // Centred points; the least-squares a = s·cos θ, b = s·sin θ of q ≈ [a −b; b a] p (Umeyama 1991, 2-D).
    double num_a = 0, num_b = 0, norm = 0;
    for (int i = 0; i < count; i++) {
        const double px = src[2 * i] - sx, py = src[2 * i + 1] - sy, qx = dst[2 * i] - dx, qy = dst[2 * i + 1] - dy;
        num_a += px * qx + py * qy;
        num_b += px * qy - py * qx;
        norm += px * px + py * py;
    }
    if (!(norm > 1e-12)) return CV_ERR_INVALID_ARGUMENT;
    const double a = num_a / norm, b = num_b / norm;
    m[0] = a; m[1] = -b; m[2] = dx - (a * sx - b * sy);
    m[3] = b; m[4] = a;  m[5] = dy - (b * sx + a * sy);
    return CV_OK;
}

namespace {

/// The aligned `size` × `size` RGB face (cv_face_align's work), or CV_ERR_INVALID_ARGUMENT.
cv_status align(const uint8_t *rgb, int32_t width, int32_t height, const double *xy, const double *template_xy, int32_t count,
                int32_t size, cv::Mat &out, char *message, size_t message_size) {
    if (!rgb || width < 2 || height < 2 || !xy || !template_xy || count < 2 || size < 8 || size > 1024) {
        say(message, message_size, "face alignment: invalid image, points or size");
        return CV_ERR_INVALID_ARGUMENT;
    }
    double m[6];
    if (cv_similarity_transform(xy, template_xy, count, m) != CV_OK) {
        say(message, message_size, "face alignment: the points are not finite or coincide");
        return CV_ERR_INVALID_ARGUMENT;
    }
    const cv::Mat image(height, width, CV_8UC3, const_cast<uint8_t *>(rgb));
    const cv::Mat transform(2, 3, CV_64F, m);
    cv::warpAffine(image, out, transform, cv::Size(size, size), cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar(0, 0, 0));
    return CV_OK;
}

/// An RGB image as the BGR, raw 0–255, NCHW float blob the Intel models read.
cv::Mat bgr_blob(const cv::Mat &rgb) {
    cv::Mat bgr;
    cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
    return cv::dnn::blobFromImage(bgr, 1.0, cv::Size(), cv::Scalar(), false, false, CV_32F);
}

cv_status copy_outputs(const cv::Mat &outputs, float *dst, int32_t count, const std::string &what, char *message, size_t message_size) {
    if (int(outputs.total()) != count || outputs.depth() != CV_32F) {
        say(message, message_size, what + ": the network has " + std::to_string(outputs.total()) + " outputs, expected " + std::to_string(count));
        return CV_ERR_MODEL;
    }
    const float *v = outputs.ptr<float>();
    for (int i = 0; i < count; i++) {
        if (!std::isfinite(v[i])) {
            say(message, message_size, what + ": the network gave a non-finite output");
            return CV_ERR_INTERNAL;
        }
        dst[i] = v[i];
    }
    return CV_OK;
}

} // namespace

extern "C" cv_status cv_face_align(const uint8_t *rgb, int32_t width, int32_t height, const double *xy, const double *template_xy,
                                   int32_t count, int32_t size, uint8_t *out, char *message, size_t message_size) {
    if (!out) return CV_ERR_INVALID_ARGUMENT;
    return guarded("face alignment", message, message_size, [&] {
        cv::Mat aligned;
        const cv_status s = align(rgb, width, height, xy, template_xy, count, size, aligned, message, message_size);
        if (s != CV_OK) return s;
        for (int y = 0; y < size; y++) std::memcpy(out + size_t(y) * size * 3, aligned.ptr<uint8_t>(y), size_t(size) * 3);
        return CV_OK;
    });
}

extern "C" cv_status cv_recognition_embed(cv_net *net, const uint8_t *rgb, int32_t width, int32_t height, const double *xy,
                                          const double *template_xy, int32_t count, int32_t size, float *embedding, int32_t dims,
                                          char *message, size_t message_size) {
    if (!net || !embedding || dims < 1 || dims > 4096) {
        say(message, message_size, "face recognition: invalid network or output size");
        return CV_ERR_INVALID_ARGUMENT;
    }
    return guarded(net->what.c_str(), message, message_size, [&] {
        cv::Mat aligned;
        const cv_status s = align(rgb, width, height, xy, template_xy, count, size, aligned, message, message_size);
        if (s != CV_OK) return s;
        return copy_outputs(net->forward(bgr_blob(aligned)), embedding, dims, net->what, message, message_size);
    });
}

extern "C" cv_status cv_recognition_embed_aligned(cv_net *net, const uint8_t *rgb, int32_t size, float *embedding, int32_t dims,
                                                  char *message, size_t message_size) {
    if (!net || !rgb || !embedding || size < 8 || size > 1024 || dims < 1 || dims > 4096) {
        say(message, message_size, "face recognition: invalid network, face or output size");
        return CV_ERR_INVALID_ARGUMENT;
    }
    return guarded(net->what.c_str(), message, message_size, [&] {
        const cv::Mat face(size, size, CV_8UC3, const_cast<uint8_t *>(rgb));
        return copy_outputs(net->forward(bgr_blob(face)), embedding, dims, net->what, message, message_size);
    });
}

extern "C" cv_status cv_landmarks_regress(cv_net *net, const uint8_t *rgb, int32_t width, int32_t height, double left, double top,
                                          double right, double bottom, int32_t input_size, int32_t points, double *xy, char *message,
                                          size_t message_size) {
    const double bw = right - left, bh = bottom - top;
    if (!net || !rgb || width < 2 || height < 2 || !(bw >= 4) || !(bh >= 4) || !std::isfinite(left) || !std::isfinite(top) ||
        input_size < 8 || input_size > 1024 || points < 1 || points > 128 || !xy) {
        say(message, message_size, "landmark regression: invalid network, image, box or sizes");
        return CV_ERR_INVALID_ARGUMENT;
    }
    return guarded(net->what.c_str(), message, message_size, [&] {
        // The box resampled to input_size² by an affine map (so a box past the border reads black there).
        const double sx = input_size / bw, sy = input_size / bh;
        const double m[6] = {sx, 0, -left * sx, 0, sy, -top * sy};
        const cv::Mat image(height, width, CV_8UC3, const_cast<uint8_t *>(rgb));
        cv::Mat crop;
        cv::warpAffine(image, crop, cv::Mat(2, 3, CV_64F, const_cast<double *>(m)), cv::Size(input_size, input_size), cv::INTER_LINEAR,
                       cv::BORDER_CONSTANT, cv::Scalar(0, 0, 0));
        std::vector<float> normalised(size_t(points) * 2);
        const cv_status s = copy_outputs(net->forward(bgr_blob(crop)), normalised.data(), points * 2, net->what, message, message_size);
        if (s != CV_OK) return s;
        for (int i = 0; i < points; i++) {
            xy[2 * i] = left + double(normalised[2 * i]) * bw;
            xy[2 * i + 1] = top + double(normalised[2 * i + 1]) * bh;
        }
        return CV_OK;
    });
}

extern "C" cv_status cv_landmarks_regress_crop(cv_net *net, const uint8_t *rgb, int32_t input_size, int32_t points, float *out,
                                               char *message, size_t message_size) {
    if (!net || !rgb || !out || input_size < 8 || input_size > 1024 || points < 1 || points > 128) {
        say(message, message_size, "landmark regression: invalid network, crop or sizes");
        return CV_ERR_INVALID_ARGUMENT;
    }
    return guarded(net->what.c_str(), message, message_size, [&] {
        const cv::Mat crop(input_size, input_size, CV_8UC3, const_cast<uint8_t *>(rgb));
        return copy_outputs(net->forward(bgr_blob(crop)), out, points * 2, net->what, message, message_size);
    });
}
