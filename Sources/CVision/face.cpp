// The dlib face engine behind CVision's C interface: HOG and MMOD-CNN face detection, 5- and
// 68-point shape predictors, and the ResNet-34-like 128-d face descriptor (dlib's
// dnn_face_recognition_ex network). All dlib network templates live in this one translation unit
// so they compile once. Every exception is caught here and returned as a cv_status.
#include "cvision.h"
#include "cimaging.h"

#include <dlib/dnn.h>
#include <dlib/image_processing.h>
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_transforms.h>

#include <sodium.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace dlib;

namespace {

// MARK: - Networks (from dlib's examples, same layer definitions as the published model files)

// dnn_face_recognition_ex.cpp: the face descriptor network.
template <template <int, template <typename> class, int, typename> class block, int N,
          template <typename> class BN, typename SUBNET>
using residual = add_prev1<block<N, BN, 1, tag1<SUBNET>>>;
template <template <int, template <typename> class, int, typename> class block, int N,
          template <typename> class BN, typename SUBNET>
using residual_down = add_prev2<avg_pool<2, 2, 2, 2, skip1<tag2<block<N, BN, 2, tag1<SUBNET>>>>>>;
template <int N, template <typename> class BN, int stride, typename SUBNET>
using block = BN<con<N, 3, 3, 1, 1, relu<BN<con<N, 3, 3, stride, stride, SUBNET>>>>>;
template <int N, typename SUBNET> using ares = relu<residual<block, N, affine, SUBNET>>;
template <int N, typename SUBNET> using ares_down = relu<residual_down<block, N, affine, SUBNET>>;
template <typename SUBNET> using alevel0 = ares_down<256, SUBNET>;
template <typename SUBNET> using alevel1 = ares<256, ares<256, ares_down<256, SUBNET>>>;
template <typename SUBNET> using alevel2 = ares<128, ares<128, ares_down<128, SUBNET>>>;
template <typename SUBNET> using alevel3 = ares<64, ares<64, ares<64, ares_down<64, SUBNET>>>>;
template <typename SUBNET> using alevel4 = ares<32, ares<32, ares<32, SUBNET>>>;
using anet_type = loss_metric<fc_no_bias<128, avg_pool_everything<alevel0<alevel1<alevel2<alevel3<alevel4<
    max_pool<3, 3, 2, 2, relu<affine<con<32, 7, 7, 2, 2, input_rgb_image_sized<150>>>>>>>>>>>>>;

// dnn_mmod_face_detection_ex.cpp: the MMOD CNN face detector.
template <long num_filters, typename SUBNET> using con5d = con<num_filters, 5, 5, 2, 2, SUBNET>;
template <long num_filters, typename SUBNET> using con5 = con<num_filters, 5, 5, 1, 1, SUBNET>;
template <typename SUBNET>
using downsampler = relu<affine<con5d<32, relu<affine<con5d<32, relu<affine<con5d<16, SUBNET>>>>>>>>>;
template <typename SUBNET> using rcon5 = relu<affine<con5<45, SUBNET>>>;
using mmod_net = loss_mmod<con<1, 9, 9, 1, 1, rcon5<rcon5<rcon5<downsampler<input_rgb_image_pyramid<pyramid_down<6>>>>>>>>;

// MARK: - A read-only view of caller memory as a dlib image (no copy)

} // namespace

namespace cvision {
struct RGBView {
    const rgb_pixel *data;
    long width, height;
};
// The generic-image interface dlib finds by argument-dependent lookup.
inline long num_rows(const RGBView &v) { return v.height; }
inline long num_columns(const RGBView &v) { return v.width; }
inline const void *image_data(const RGBView &v) { return v.data; }
inline long width_step(const RGBView &v) { return v.width * 3; }
} // namespace cvision

namespace dlib {
template <> struct image_traits<cvision::RGBView> { typedef rgb_pixel pixel_type; };
} // namespace dlib

using cvision::RGBView;

namespace {

void set_message(char *message, size_t size, const std::string &text) {
    if (message && size) std::snprintf(message, size, "%s", text.c_str());
}

struct Worker {
    frontal_face_detector hog;
    std::unique_ptr<anet_type> net;
    std::unique_ptr<mmod_net> cnn;
};

const char *model_file(int model) {
    switch (model) {
    case CV_MODEL_SHAPE5: return "shape_predictor_5_face_landmarks.dat";
    case CV_MODEL_SHAPE68: return "shape_predictor_68_face_landmarks.dat";
    case CV_MODEL_RESNET: return "dlib_face_recognition_resnet_model_v1.dat";
    default: return "mmod_human_face_detector.dat";
    }
}

/// Thrown inside this file only; becomes CV_ERR_MODEL.
struct ModelError {
    std::string text;
};

/// Thrown inside this file only; becomes CV_ERR_MODEL_INTEGRITY.
struct IntegrityError {
    std::string text;
};

full_object_detection shape_from(const double *xy, int points) {
    std::vector<point> parts(points);
    double l = 1e18, t = 1e18, r = -1e18, b = -1e18;
    for (int i = 0; i < points; i++) {
        parts[i] = point(std::lround(xy[2 * i]), std::lround(xy[2 * i + 1]));
        l = std::min(l, xy[2 * i]); r = std::max(r, xy[2 * i]);
        t = std::min(t, xy[2 * i + 1]); b = std::max(b, xy[2 * i + 1]);
    }
    return full_object_detection(rectangle(std::lround(l), std::lround(t), std::lround(r), std::lround(b)), parts);
}

} // namespace

struct cv_engine {
    std::string dir;
    std::mutex mutex;
    std::unique_ptr<shape_predictor> sp5, sp68;
    std::unique_ptr<anet_type> net;
    std::unique_ptr<mmod_net> cnn;
    // Set by cv_engine_create: the shipped serialised detector (frontal_face_detector.dat), or
    // dlib's get_frontal_face_detector() when no file is given (the export tool, the equality test).
    frontal_face_detector hog;
    std::vector<std::unique_ptr<Worker>> idle;
    int workers = 0;

    std::string path(int model) const { return dir + "/" + model_file(model); }

    template <typename T> void load_locked(std::unique_ptr<T> &slot, int model) {
        if (slot) return;
        std::string p = path(model);
        struct stat st;
        if (stat(p.c_str(), &st) != 0)
            throw ModelError{std::string("model file ") + model_file(model) + " not found in " + dir +
                             "; run scripts/bootstrap (or set IDV_MODELS_DIR to the folder holding it)"};
        auto value = std::make_unique<T>();
        try {
            deserialize(p) >> *value;
        } catch (const std::exception &e) {
            throw ModelError{std::string("model file ") + p + " is unreadable (" + e.what() +
                             "); run scripts/bootstrap to fetch it again"};
        }
        slot = std::move(value);
    }

    void load(int mask) {
        std::lock_guard<std::mutex> lock(mutex);
        if (mask & CV_MODEL_SHAPE5) load_locked(sp5, CV_MODEL_SHAPE5);
        if (mask & CV_MODEL_SHAPE68) load_locked(sp68, CV_MODEL_SHAPE68);
        if (mask & CV_MODEL_RESNET) load_locked(net, CV_MODEL_RESNET);
        if (mask & CV_MODEL_MMOD) load_locked(cnn, CV_MODEL_MMOD);
    }

    const shape_predictor &predictor(int points) {
        std::lock_guard<std::mutex> lock(mutex);
        if (points == 5) { load_locked(sp5, CV_MODEL_SHAPE5); return *sp5; }
        load_locked(sp68, CV_MODEL_SHAPE68);
        return *sp68;
    }

    std::unique_ptr<Worker> acquire() {
        std::lock_guard<std::mutex> lock(mutex);
        if (!idle.empty()) {
            auto w = std::move(idle.back());
            idle.pop_back();
            return w;
        }
        auto w = std::make_unique<Worker>();
        w->hog = hog;
        workers++;
        return w;
    }

    void release(std::unique_ptr<Worker> w) {
        std::lock_guard<std::mutex> lock(mutex);
        idle.push_back(std::move(w));
    }

    anet_type &net_of(Worker &w) {
        if (!w.net) {
            std::lock_guard<std::mutex> lock(mutex);
            load_locked(net, CV_MODEL_RESNET);
            w.net = std::make_unique<anet_type>(*net);
        }
        return *w.net;
    }

    mmod_net &cnn_of(Worker &w) {
        if (!w.cnn) {
            std::lock_guard<std::mutex> lock(mutex);
            load_locked(cnn, CV_MODEL_MMOD);
            w.cnn = std::make_unique<mmod_net>(*cnn);
        }
        return *w.cnn;
    }
};

namespace {

/// Borrows a worker for the duration of a call.
struct Lease {
    cv_engine *engine;
    std::unique_ptr<Worker> worker;
    explicit Lease(cv_engine *e) : engine(e), worker(e->acquire()) {}
    ~Lease() { engine->release(std::move(worker)); }
};

template <typename Body> cv_status guarded(char *message, size_t message_size, Body body) {
    try {
        return body();
    } catch (const ModelError &e) {
        set_message(message, message_size, e.text);
        return CV_ERR_MODEL;
    } catch (const IntegrityError &e) {
        set_message(message, message_size, e.text);
        return CV_ERR_MODEL_INTEGRITY;
    } catch (const std::bad_alloc &) {
        set_message(message, message_size, "out of memory in the face engine");
        return CV_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        set_message(message, message_size, std::string("face engine: ") + e.what());
        return CV_ERR_INTERNAL;
    } catch (...) {
        set_message(message, message_size, "face engine: unknown failure");
        return CV_ERR_INTERNAL;
    }
}

bool valid_image(const uint8_t *rgb, int32_t width, int32_t height) {
    return rgb && width > 0 && height > 0 && int64_t(width) * height <= (int64_t(1) << 31);
}

matrix<rgb_pixel> to_matrix(const uint8_t *rgb, int32_t width, int32_t height, double scale) {
    long w = std::max(1L, std::lround(width * scale)), h = std::max(1L, std::lround(height * scale));
    matrix<rgb_pixel> m(h, w);
    static_assert(sizeof(rgb_pixel) == 3, "rgb_pixel is packed R, G, B");
    if (w == width && h == height) std::memcpy(&m(0, 0), rgb, size_t(w) * h * 3);
    else if (ci_image_resize(rgb, width, height, 3, reinterpret_cast<uint8_t *>(&m(0, 0)), int32_t(w), int32_t(h)) != CI_OK)
        throw std::runtime_error("resampling for detection failed");
    return m;
}

} // namespace

namespace {

std::string hex_digest(const std::string &bytes) {
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size());
    static const char *digits = "0123456789abcdef";
    std::string out;
    for (unsigned char b : digest) { out += digits[b >> 4]; out += digits[b & 15]; }
    return out;
}

/// The HOG detector from `path` (dlib `serialize` of `get_frontal_face_detector()`), its bytes checked
/// against `sha256_hex` before they are parsed.
frontal_face_detector load_hog(const char *path, const char *sha256_hex) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ModelError{std::string("HOG face detector file ") + path + " not found or unreadable"};
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
    std::string want(sha256_hex);
    for (char &c : want) c = char(std::tolower(static_cast<unsigned char>(c)));
    const std::string got = hex_digest(bytes);
    if (got != want)
        throw IntegrityError{std::string("HOG face detector file ") + path + " fails its SHA-256 check (got " + got +
                             ", want " + want + "); it was altered or replaced: restore it from the repository"};
    std::istringstream stream(bytes);
    frontal_face_detector hog;
    try {
        deserialize(hog, stream);
    } catch (const std::exception &e) {
        throw ModelError{std::string("HOG face detector file ") + path + " does not parse (" + e.what() + ")"};
    }
    return hog;
}

} // namespace

extern "C" cv_status cv_engine_create(const char *models_dir, const char *hog_path, const char *hog_sha256,
                                      cv_engine **out, char *message, size_t message_size) {
    *out = nullptr;
    if (hog_path && (!hog_sha256 || std::string(hog_sha256).size() != 64)) {
        set_message(message, message_size, "face engine: a HOG detector file needs its 64-digit SHA-256");
        return CV_ERR_INVALID_ARGUMENT;
    }
    return guarded(message, message_size, [&] {
        auto e = std::make_unique<cv_engine>();
        e->dir = models_dir ? models_dir : ".";
        e->hog = hog_path ? load_hog(hog_path, hog_sha256) : get_frontal_face_detector();
        *out = e.release();
        return CV_OK;
    });
}

extern "C" cv_status cv_hog_detector_export(const char *path, char *hex_out, char *message, size_t message_size) {
    if (!path || !hex_out) {
        set_message(message, message_size, "HOG export: a path and a 65-byte hash buffer are required");
        return CV_ERR_INVALID_ARGUMENT;
    }
    return guarded(message, message_size, [&] {
        std::ostringstream stream;
        serialize(get_frontal_face_detector(), stream);
        const std::string bytes = stream.str();
        std::ofstream file(path, std::ios::binary | std::ios::trunc);
        file.write(bytes.data(), std::streamsize(bytes.size()));
        file.close();
        if (!file) throw std::runtime_error(std::string("cannot write ") + path);
        if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
        std::snprintf(hex_out, 65, "%s", hex_digest(bytes).c_str());
        return CV_OK;
    });
}

extern "C" void cv_engine_destroy(cv_engine *engine) { delete engine; }

extern "C" cv_status cv_engine_load(cv_engine *engine, int32_t mask, char *message, size_t message_size) {
    return guarded(message, message_size, [&] {
        engine->load(mask);
        return CV_OK;
    });
}

extern "C" int32_t cv_engine_worker_count(cv_engine *engine) {
    std::lock_guard<std::mutex> lock(engine->mutex);
    return engine->workers;
}

extern "C" cv_status cv_detect(cv_engine *engine, const uint8_t *rgb, int32_t width, int32_t height, int32_t detector,
                               double scale, double adjust_threshold, cv_detection *out, int32_t capacity,
                               int32_t *count, char *message, size_t message_size) {
    *count = 0;
    if (!valid_image(rgb, width, height) || !(scale > 0.01 && scale <= 8) || (detector != CV_DETECTOR_HOG && detector != CV_DETECTOR_CNN)) {
        set_message(message, message_size, "detect: invalid image, scale or detector");
        return CV_ERR_INVALID_ARGUMENT;
    }
    return guarded(message, message_size, [&] {
        std::vector<rect_detection> found;
        Lease lease(engine);
        const double sx = double(std::max(1L, std::lround(width * scale))) / width;
        const double sy = double(std::max(1L, std::lround(height * scale))) / height;
        if (detector == CV_DETECTOR_HOG) {
            if (sx == 1.0 && sy == 1.0) {
                RGBView view{reinterpret_cast<const rgb_pixel *>(rgb), width, height};
                lease.worker->hog(view, found, adjust_threshold);
            } else {
                matrix<rgb_pixel> img = to_matrix(rgb, width, height, scale);
                lease.worker->hog(img, found, adjust_threshold);
            }
        } else {
            mmod_net &net = engine->cnn_of(*lease.worker);
            matrix<rgb_pixel> img = to_matrix(rgb, width, height, scale);
            for (const mmod_rect &d : net(img)) {
                if (d.detection_confidence < adjust_threshold) continue;
                found.push_back(rect_detection{d.detection_confidence, 0, d.rect});
            }
        }
        std::sort(found.begin(), found.end(), [](const rect_detection &a, const rect_detection &b) {
            return a.detection_confidence > b.detection_confidence;
        });
        *count = int32_t(found.size());
        for (int32_t i = 0; i < std::min<int32_t>(capacity, int32_t(found.size())); i++) {
            const rectangle &r = found[i].rect;
            out[i].left = r.left() / sx;
            out[i].top = r.top() / sy;
            out[i].right = (r.right() + 1) / sx;
            out[i].bottom = (r.bottom() + 1) / sy;
            out[i].confidence = found[i].detection_confidence;
            out[i].detector_index = int32_t(found[i].weight_index);
        }
        return CV_OK;
    });
}

extern "C" cv_status cv_landmarks(cv_engine *engine, const uint8_t *rgb, int32_t width, int32_t height, double left,
                                  double top, double right, double bottom, int32_t points, double *xy,
                                  char *message, size_t message_size) {
    if (!valid_image(rgb, width, height) || (points != 5 && points != 68) || !(right > left) || !(bottom > top)) {
        set_message(message, message_size, "landmarks: invalid image, box or point count (5 or 68)");
        return CV_ERR_INVALID_ARGUMENT;
    }
    return guarded(message, message_size, [&] {
        const shape_predictor &sp = engine->predictor(points);
        RGBView view{reinterpret_cast<const rgb_pixel *>(rgb), width, height};
        // dlib rectangles are inclusive; our boxes have exclusive right/bottom edges.
        rectangle box(std::lround(left), std::lround(top), std::lround(right) - 1, std::lround(bottom) - 1);
        full_object_detection shape = sp(view, box);
        for (int i = 0; i < points; i++) {
            xy[2 * i] = shape.part(i).x();
            xy[2 * i + 1] = shape.part(i).y();
        }
        return CV_OK;
    });
}

extern "C" cv_status cv_embed(cv_engine *engine, const uint8_t *rgb, int32_t width, int32_t height, const double *xy,
                              int32_t points, int32_t jitter, float *descriptor, char *message, size_t message_size) {
    if (!valid_image(rgb, width, height) || (points != 5 && points != 68) || jitter < 0 || jitter > 1000) {
        set_message(message, message_size, "embed: invalid image, point count (5 or 68) or jitter (0…1000)");
        return CV_ERR_INVALID_ARGUMENT;
    }
    return guarded(message, message_size, [&] {
        RGBView view{reinterpret_cast<const rgb_pixel *>(rgb), width, height};
        matrix<rgb_pixel> chip;
        extract_image_chip(view, get_face_chip_details(shape_from(xy, points), 150, 0.25), chip);
        Lease lease(engine);
        anet_type &net = engine->net_of(*lease.worker);
        matrix<float, 0, 1> d;
        if (jitter <= 1) {
            d = net(chip);
        } else {
            dlib::rand rnd(0);
            std::vector<matrix<rgb_pixel>> crops;
            crops.reserve(jitter);
            for (int i = 0; i < jitter; i++) crops.push_back(jitter_image(chip, rnd));
            std::vector<matrix<float, 0, 1>> all = net(crops, 16);
            d = all[0];
            for (size_t i = 1; i < all.size(); i++) d += all[i];
            d /= float(all.size());
        }
        for (long i = 0; i < 128; i++) descriptor[i] = d(i);
        return CV_OK;
    });
}

extern "C" cv_status cv_face_chip(const uint8_t *rgb, int32_t width, int32_t height, const double *xy, int32_t points,
                                  int32_t size, double padding, uint8_t *out, char *message, size_t message_size) {
    if (!valid_image(rgb, width, height) || (points != 5 && points != 68) || size < 8 || size > 4096 ||
        !(padding >= 0 && padding <= 4)) {
        set_message(message, message_size, "face chip: invalid image, point count, size (8…4096) or padding (0…4)");
        return CV_ERR_INVALID_ARGUMENT;
    }
    return guarded(message, message_size, [&] {
        RGBView view{reinterpret_cast<const rgb_pixel *>(rgb), width, height};
        matrix<rgb_pixel> chip;
        extract_image_chip(view, get_face_chip_details(shape_from(xy, points), unsigned(size), padding), chip);
        std::memcpy(out, &chip(0, 0), size_t(size) * size * 3);
        return CV_OK;
    });
}
