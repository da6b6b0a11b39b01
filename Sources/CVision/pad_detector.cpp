// The face detector of Silent-Face-Anti-Spoofing (minivision-ai, Apache-2.0): a RetinaFace network
// (MobileNet backbone, trained on WIDER FACE) in Caffe format, run through OpenCV's dnn module the
// way the repository's `Detection.get_bbox` runs it. MiniFASNet's crops (the box scaled 2.7 / 4.0)
// are defined on this detector's boxes, which are taller and looser than dlib's HOG boxes. Both
// files' SHA-256 (libsodium) are checked on the very bytes that are parsed. Every exception is
// caught here.
#include "cvision.h"
#include "model_file.hpp"

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/imgproc.hpp>
#include <sodium.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

void detector_message(char *message, size_t size, const std::string &text) { cvision_internal::set_message(message, size, text); }

/// Reads `path` and checks its SHA-256 against `want` (64 hex digits, any case).
cv_status read_verified(const char *path, const char *want, std::vector<char> &bytes, char *message, size_t size) {
    return cvision_internal::read_verified(path, want, "PAD detector", bytes, message, size);
}

} // namespace

struct cv_pad_detector {
    std::vector<char> prototxt, model; // the verified files, kept to build more network copies
    std::mutex mutex;
    std::vector<std::unique_ptr<cv::dnn::Net>> idle;

    std::unique_ptr<cv::dnn::Net> acquire() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (!idle.empty()) {
                auto n = std::move(idle.back());
                idle.pop_back();
                return n;
            }
        }
        auto net = std::make_unique<cv::dnn::Net>(
            cv::dnn::readNetFromCaffe(prototxt.data(), prototxt.size(), model.data(), model.size()));
        net->setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
        net->setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
        return net;
    }

    void release(std::unique_ptr<cv::dnn::Net> net) {
        std::lock_guard<std::mutex> lock(mutex);
        idle.push_back(std::move(net));
    }
};

extern "C" cv_status cv_pad_detector_load(const char *prototxt_path, const char *prototxt_sha256, const char *model_path,
                                          const char *model_sha256, cv_pad_detector **out, char *message, size_t message_size) {
    *out = nullptr;
    if (!prototxt_path || !model_path || !prototxt_sha256 || !model_sha256 || std::string(prototxt_sha256).size() != 64 ||
        std::string(model_sha256).size() != 64) {
        detector_message(message, message_size, "PAD detector: two paths and two 64-digit SHA-256 values are required");
        return CV_ERR_INVALID_ARGUMENT;
    }
    try {
        auto detector = std::make_unique<cv_pad_detector>();
        cv_status status = read_verified(prototxt_path, prototxt_sha256, detector->prototxt, message, message_size);
        if (status != CV_OK) return status;
        status = read_verified(model_path, model_sha256, detector->model, message, message_size);
        if (status != CV_OK) return status;
        cv::setNumThreads(1);
        detector->release(detector->acquire()); // parse once now, so a malformed file fails here
        *out = detector.release();
        return CV_OK;
    } catch (const cv::Exception &e) {
        detector_message(message, message_size, std::string("PAD detector does not load in OpenCV dnn: ") + e.what());
        return CV_ERR_MODEL;
    } catch (const std::bad_alloc &) {
        detector_message(message, message_size, "out of memory loading the PAD detector");
        return CV_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        detector_message(message, message_size, std::string("PAD detector: ") + e.what());
        return CV_ERR_INTERNAL;
    }
}

extern "C" void cv_pad_detector_destroy(cv_pad_detector *detector) { delete detector; }

extern "C" cv_status cv_pad_detect(cv_pad_detector *detector, const uint8_t *rgb, int32_t width, int32_t height, int32_t x,
                                   int32_t y, int32_t w, int32_t h, int32_t input_side, float *boxes, int32_t max_boxes,
                                   int32_t *count, char *message, size_t message_size) {
    *count = 0;
    if (!detector || !rgb || width < 2 || height < 2 || input_side < 32 || input_side > 2048 || max_boxes < 1 || !boxes) {
        detector_message(message, message_size, "PAD detect: invalid detector, image, input side or output buffer");
        return CV_ERR_INVALID_ARGUMENT;
    }
    if (x < 0 || y < 0 || w < 2 || h < 2 || x + w > width || y + h > height) {
        detector_message(message, message_size, "PAD detect: the region does not fit the image");
        return CV_ERR_INVALID_ARGUMENT;
    }
    try {
        // `Detection.get_bbox`: an image of at least side² pixels is resized (bilinear) to about
        // side² pixels keeping its aspect ratio; BGR, the means (104, 117, 123) subtracted, scale 1.
        const cv::Mat image(height, width, CV_8UC3, const_cast<uint8_t *>(rgb));
        const cv::Mat region = image(cv::Rect(x, y, w, h));
        cv::Mat resized, bgr;
        const double side = double(input_side);
        if (double(w) * double(h) >= side * side) {
            const double aspect = double(w) / double(h);
            const int rw = std::max(1, int(side * std::sqrt(aspect))), rh = std::max(1, int(side / std::sqrt(aspect)));
            cv::resize(region, resized, cv::Size(rw, rh), 0, 0, cv::INTER_LINEAR);
        } else {
            resized = region;
        }
        cv::cvtColor(resized, bgr, cv::COLOR_RGB2BGR);
        const cv::Mat blob = cv::dnn::blobFromImage(bgr, 1.0, cv::Size(), cv::Scalar(104, 117, 123), false, false, CV_32F);
        auto net = detector->acquire();
        cv::Mat detections;
        try {
            net->setInput(blob, "data");
            detections = net->forward("detection_out").clone();
        } catch (...) {
            detector->release(std::move(net));
            throw;
        }
        detector->release(std::move(net));
        // detection_out: 1 × 1 × N × 7 (image id, label, confidence, left, top, right, bottom in 0…1).
        if (detections.dims != 4 || detections.size[3] != 7) {
            detector_message(message, message_size, "PAD detect: unexpected detector output shape");
            return CV_ERR_MODEL;
        }
        const int n = detections.size[2];
        const float *d = detections.ptr<float>();
        std::vector<int> order(n);
        for (int i = 0; i < n; i++) order[i] = i;
        std::sort(order.begin(), order.end(), [&](int a, int b) { return d[a * 7 + 2] > d[b * 7 + 2]; });
        int written = 0;
        for (int k = 0; k < n && written < max_boxes; k++) {
            const float *r = d + order[k] * 7;
            if (!(r[2] > 0) || !std::isfinite(r[3]) || !std::isfinite(r[4]) || !std::isfinite(r[5]) || !std::isfinite(r[6])) continue;
            float *o = boxes + written * 5;
            o[0] = float(x) + r[3] * float(w);
            o[1] = float(y) + r[4] * float(h);
            o[2] = float(x) + r[5] * float(w);
            o[3] = float(y) + r[6] * float(h);
            o[4] = r[2];
            written++;
        }
        *count = written;
        return CV_OK;
    } catch (const cv::Exception &e) {
        detector_message(message, message_size, std::string("PAD detect: ") + e.what());
        return CV_ERR_INTERNAL;
    } catch (const std::bad_alloc &) {
        detector_message(message, message_size, "out of memory in PAD detection");
        return CV_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        detector_message(message, message_size, std::string("PAD detect: ") + e.what());
        return CV_ERR_INTERNAL;
    }
}
