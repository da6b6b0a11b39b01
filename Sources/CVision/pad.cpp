// Texture presentation-attack detection (PAD) through OpenCV's dnn module: an ONNX image
// classifier (MiniFASNet, minivision-ai/Silent-Face-Anti-Spoofing, Apache-2.0) run on a face crop.
// The model file's SHA-256 (libsodium) is checked on the very bytes that are parsed, so a file
// swapped or altered on disk is refused, never run. Every exception is caught here.
#include "cvision.h"
#include "model_file.hpp"

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/imgproc.hpp>
#include <sodium.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

void pad_message(char *message, size_t size, const std::string &text) { cvision_internal::set_message(message, size, text); }

} // namespace

struct cv_pad_model {
    std::vector<unsigned char> bytes; // the verified ONNX file, kept to build more network copies
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
};

extern "C" cv_status cv_sha256_file(const char *path, char *hex_out, char *message, size_t message_size) {
    try {
        std::ifstream in(path, std::ios::binary);
        if (!in) {
            pad_message(message, message_size, std::string("cannot read ") + path);
            return CV_ERR_MODEL;
        }
        std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (sodium_init() < 0) {
            pad_message(message, message_size, "libsodium failed to initialise");
            return CV_ERR_INTERNAL;
        }
        std::snprintf(hex_out, 65, "%s", cvision_internal::sha256_hex(bytes.data(), bytes.size()).c_str());
        return CV_OK;
    } catch (...) {
        pad_message(message, message_size, std::string("cannot hash ") + path);
        return CV_ERR_INTERNAL;
    }
}

extern "C" cv_status cv_pad_model_load(const char *path, const char *sha256_hex, cv_pad_model **out, char *message,
                                       size_t message_size) {
    *out = nullptr;
    if (!path || !sha256_hex || std::string(sha256_hex).size() != 64) {
        pad_message(message, message_size, "PAD model: a path and a 64-digit SHA-256 are required");
        return CV_ERR_INVALID_ARGUMENT;
    }
    try {
        auto model = std::make_unique<cv_pad_model>();
        const cv_status status = cvision_internal::read_verified(path, sha256_hex, "PAD model", model->bytes, message, message_size);
        if (status != CV_OK) return status;
        // One network per thread: the tiny 80×80 networks gain nothing from OpenCV's own
        // parallel loops, and a server runs one request per thread already.
        cv::setNumThreads(1);
        model->release(model->acquire()); // parse once now, so a malformed file fails here
        *out = model.release();
        return CV_OK;
    } catch (const cv::Exception &e) {
        pad_message(message, message_size, std::string("PAD model ") + path + " does not load in OpenCV dnn: " + e.what());
        return CV_ERR_MODEL;
    } catch (const std::bad_alloc &) {
        pad_message(message, message_size, "out of memory loading the PAD model");
        return CV_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        pad_message(message, message_size, std::string("PAD model: ") + e.what());
        return CV_ERR_INTERNAL;
    }
}

extern "C" void cv_pad_model_destroy(cv_pad_model *model) { delete model; }

extern "C" int32_t cv_pad_model_copies(cv_pad_model *model) {
    std::lock_guard<std::mutex> lock(model->mutex);
    return model->copies;
}

extern "C" cv_status cv_pad_crop_box(int32_t width, int32_t height, double left, double top, double right, double bottom,
                                     double scale, int32_t *x, int32_t *y, int32_t *w, int32_t *h) {
    const double bw = right - left, bh = bottom - top;
    if (width < 2 || height < 2 || !(bw > 0) || !(bh > 0) || !(scale > 0) || !std::isfinite(scale)) return CV_ERR_INVALID_ARGUMENT;
    // Silent-Face-Anti-Spoofing `CropImage._get_new_box`: the box scaled about its centre, the
    // scale capped so the crop fits the image, then shifted (not clipped) back inside it.
    const double s = std::min({(height - 1) / bh, (width - 1) / bw, scale});
    const double nw = bw * s, nh = bh * s;
    const double cx = left + bw / 2, cy = top + bh / 2;
    double x0 = cx - nw / 2, y0 = cy - nh / 2, x1 = cx + nw / 2, y1 = cy + nh / 2;
    if (x0 < 0) { x1 -= x0; x0 = 0; }
    if (y0 < 0) { y1 -= y0; y0 = 0; }
    if (x1 > width - 1) { x0 -= x1 - (width - 1); x1 = width - 1; }
    if (y1 > height - 1) { y0 -= y1 - (height - 1); y1 = height - 1; }
    const int ix0 = std::max(0, int(x0)), iy0 = std::max(0, int(y0));
    const int ix1 = std::min(width - 1, int(x1)), iy1 = std::min(height - 1, int(y1));
    if (ix1 <= ix0 || iy1 <= iy0) return CV_ERR_INVALID_ARGUMENT;
    *x = ix0; *y = iy0; *w = ix1 - ix0 + 1; *h = iy1 - iy0 + 1; // upstream slices [y0 : y1 + 1]
    return CV_OK;
}

extern "C" cv_status cv_pad_classify(cv_pad_model *model, const uint8_t *rgb, int32_t width, int32_t height, double left,
                                     double top, double right, double bottom, double scale, int32_t input_size,
                                     float *probabilities, int32_t classes, char *message, size_t message_size) {
    if (!model || !rgb || width < 2 || height < 2 || input_size < 8 || input_size > 1024 || classes < 1 || classes > 16) {
        pad_message(message, message_size, "PAD classify: invalid model, image, input size or class count");
        return CV_ERR_INVALID_ARGUMENT;
    }
    int32_t x, y, w, h;
    if (cv_pad_crop_box(width, height, left, top, right, bottom, scale, &x, &y, &w, &h) != CV_OK) {
        pad_message(message, message_size, "PAD classify: the face box does not fit the image");
        return CV_ERR_INVALID_ARGUMENT;
    }
    try {
        // The caller's RGB buffer, read in place; the crop is resized (bilinear, as upstream's
        // cv2.resize) and turned to BGR, raw 0–255 values, NCHW.
        const cv::Mat image(height, width, CV_8UC3, const_cast<uint8_t *>(rgb));
        cv::Mat crop, bgr;
        cv::resize(image(cv::Rect(x, y, w, h)), crop, cv::Size(input_size, input_size), 0, 0, cv::INTER_LINEAR);
        cv::cvtColor(crop, bgr, cv::COLOR_RGB2BGR);
        const cv::Mat blob = cv::dnn::blobFromImage(bgr, 1.0, cv::Size(), cv::Scalar(), false, false, CV_32F);
        auto net = model->acquire();
        cv::Mat logits;
        try {
            net->setInput(blob);
            logits = net->forward().clone();
        } catch (...) {
            model->release(std::move(net));
            throw;
        }
        model->release(std::move(net));
        if (int(logits.total()) != classes) {
            pad_message(message, message_size, "PAD classify: the model has " + std::to_string(logits.total()) + " outputs, expected " +
                                                   std::to_string(classes));
            return CV_ERR_MODEL;
        }
        const float *z = logits.ptr<float>();
        float top_logit = z[0];
        for (int i = 1; i < classes; i++) top_logit = std::max(top_logit, z[i]);
        double sum = 0;
        for (int i = 0; i < classes; i++) sum += std::exp(double(z[i] - top_logit));
        for (int i = 0; i < classes; i++) probabilities[i] = float(std::exp(double(z[i] - top_logit)) / sum);
        return CV_OK;
    } catch (const cv::Exception &e) {
        pad_message(message, message_size, std::string("PAD classify: ") + e.what());
        return CV_ERR_INTERNAL;
    } catch (const std::bad_alloc &) {
        pad_message(message, message_size, "out of memory in PAD classification");
        return CV_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        pad_message(message, message_size, std::string("PAD classify: ") + e.what());
        return CV_ERR_INTERNAL;
    }
}
