// The pool of parsed OpenCV dnn networks that CVision's model handles share (internal to the
// target, C++ only). A cv::dnn::Net is not safe to run from two threads at once, so each handle
// keeps the verified model bytes and parses one more copy when every copy is busy; a copy goes back
// to the pool after its forward pass, whether that pass returned or threw. One copy per thread that
// runs the model at the same time: a server runs one request per thread, and OpenCV's own parallel
// loops are switched off (cv::setNumThreads(1)) because these small networks gain nothing from them.
#pragma once

#include "cvision.h"
#include "model_file.hpp"

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace cvision_internal {

/// Copies of one network, parsed on demand by `parse` from bytes the owner verified; pooled.
class NetPool {
  public:
    /// `parse` builds one network copy (it may throw cv::Exception for a malformed model).
    explicit NetPool(std::function<cv::dnn::Net()> parse) : parse_(std::move(parse)) {}

    /// An idle copy, or a newly parsed one (CPU backend and target). Give it back with `release`.
    std::unique_ptr<cv::dnn::Net> acquire() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!idle_.empty()) {
                auto n = std::move(idle_.back());
                idle_.pop_back();
                return n;
            }
            copies_++;
        }
        auto net = std::make_unique<cv::dnn::Net>(parse_());
        net->setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
        net->setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
        return net;
    }

    /// Puts a copy back into the pool.
    void release(std::unique_ptr<cv::dnn::Net> net) {
        std::lock_guard<std::mutex> lock(mutex_);
        idle_.push_back(std::move(net));
    }

    /// One forward pass of `blob` (into the layer `input`, "" = the network's input) on a pooled
    /// copy, reading `output` ("" = the last layer); the output is copied out of the network.
    cv::Mat forward(const cv::Mat &blob, const std::string &input = "", const std::string &output = "") {
        auto net = acquire();
        cv::Mat out;
        try {
            net->setInput(blob, input);
            out = net->forward(output).clone();
        } catch (...) {
            release(std::move(net));
            throw;
        }
        release(std::move(net));
        return out;
    }

    /// How many copies have been parsed so far (the pool's size).
    int copies() {
        std::lock_guard<std::mutex> lock(mutex_);
        return copies_;
    }

  private:
    std::function<cv::dnn::Net()> parse_;
    std::mutex mutex_;
    std::vector<std::unique_ptr<cv::dnn::Net>> idle_;
    int copies_ = 0;
};

/// Runs `body` (returning a cv_status) and maps every exception to a status and a message
/// prefixed by `what`: cv::Exception → `cv_error` (CV_ERR_INTERNAL for a run, CV_ERR_MODEL for a
/// load), std::bad_alloc → CV_ERR_OUT_OF_MEMORY, any other std::exception → CV_ERR_INTERNAL.
template <typename Body>
cv_status guarded(const std::string &what, char *message, size_t size, Body body, cv_status cv_error = CV_ERR_INTERNAL) {
    try {
        return body();
    } catch (const cv::Exception &e) {
        set_message(message, size, what + ": " + e.what());
        return cv_error;
    } catch (const std::bad_alloc &) {
        set_message(message, size, "out of memory in " + what);
        return CV_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        set_message(message, size, what + ": " + e.what());
        return CV_ERR_INTERNAL;
    }
}

/// `guarded` for loading a model: runs `body` and maps a cv::Exception to CV_ERR_MODEL ("`what`
/// `path` does not load in OpenCV dnn: …"), std::bad_alloc to CV_ERR_OUT_OF_MEMORY and any other
/// std::exception to CV_ERR_INTERNAL.
template <typename Body> cv_status guarded_load(const std::string &what, const std::string &path, char *message, size_t size, Body body) {
    try {
        return body();
    } catch (const cv::Exception &e) {
        set_message(message, size, what + " " + path + " does not load in OpenCV dnn: " + e.what());
        return CV_ERR_MODEL;
    } catch (const std::bad_alloc &) {
        set_message(message, size, "out of memory loading the " + what);
        return CV_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        set_message(message, size, what + ": " + e.what());
        return CV_ERR_INTERNAL;
    }
}

} // namespace cvision_internal
