// Face-quality region statistics (FaceKit `FaceQuality`): crop, resample, mean, contrast and the
// variance of the Laplacian of a grey region. The crop and resample are CImaging's.
#include "cvision.h"
#include "cimaging.h"

#include <algorithm>
#include <cmath>
#include <vector>

extern "C" cv_status cv_region_statistics(const uint8_t *gray, int32_t width, int32_t height, int32_t x, int32_t y,
                                          int32_t w, int32_t h, int32_t sample_size, double *mean, double *stddev,
                                          double *laplacian_variance) {
    int32_t x0 = std::max(0, x), y0 = std::max(0, y);
    int32_t x1 = int32_t(std::min<int64_t>(width, int64_t(x) + w)), y1 = int32_t(std::min<int64_t>(height, int64_t(y) + h));
    if (x1 - x0 < 2 || y1 - y0 < 2 || sample_size < 3 || sample_size > 4096) return CV_ERR_INVALID_ARGUMENT;
    try {
        const int cw = x1 - x0, ch = y1 - y0, n = sample_size;
        std::vector<uint8_t> crop(size_t(cw) * ch), sample(size_t(n) * n);
        ci_image_crop(gray, width, height, 1, x0, y0, cw, ch, crop.data());
        ci_image_resize(crop.data(), cw, ch, 1, sample.data(), n, n);
        double sum = 0, sum2 = 0;
        for (uint8_t v : sample) { sum += v; sum2 += double(v) * v; }
        const double count = double(n) * n;
        *mean = sum / count;
        *stddev = std::sqrt(std::max(0.0, sum2 / count - *mean * *mean));
        double ls = 0, ls2 = 0;
        for (int r = 1; r < n - 1; r++)
            for (int c = 1; c < n - 1; c++) {
                const uint8_t *p = sample.data() + size_t(r) * n + c;
                double l = double(p[-1]) + p[1] + p[-n] + p[n] - 4.0 * p[0];
                ls += l;
                ls2 += l * l;
            }
        const double m = double(n - 2) * (n - 2);
        *laplacian_variance = ls2 / m - (ls / m) * (ls / m);
        return CV_OK;
    } catch (...) {
        return CV_ERR_OUT_OF_MEMORY;
    }
}
