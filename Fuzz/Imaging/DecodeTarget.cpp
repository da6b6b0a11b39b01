// libFuzzer target `image-decode` (scripts/fuzz): CImaging's decoders (libjpeg-turbo DCT-scaled and
// cropped decoding, libpng whole and row by row, libexif orientation) on arbitrary bytes. The first
// 8 input bytes choose the request (maximum dimension, region, orientation on/off); the rest is the
// image. Invariants: every call returns a status; on success the bitmap has the size the request
// promises (the region scaled so its longer side is at most the maximum dimension) and 1 or 3
// channels; nothing leaks (ASan/LSan) and no read or write strays (ASan).
#include "cimaging.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 8) return 0;
    ci_decode_request request;
    std::memset(&request, 0, sizeof request);
    request.max_pixels = 4'000'000;   // small pages only: the fuzzer explores structure, not size
    request.apply_orientation = data[0] & 1;
    request.max_dimension = (data[0] & 2) ? int32_t(data[1]) * 8 : 0;
    if (data[0] & 4) {
        request.region_x = data[2] * 4;
        request.region_y = data[3] * 4;
        request.region_width = 1 + data[4] * 4;
        request.region_height = 1 + data[5] * 4;
    }
    ci_bitmap out;
    ci_image_info info;
    char message[256];
    ci_status s = ci_image_decode_request(data + 8, size - 8, &request, &out, &info, message, sizeof message);
    if (s == CI_OK) {
        if (!out.pixels || out.width < 1 || out.height < 1 || (out.channels != 1 && out.channels != 3)) {
            std::fprintf(stderr, "invariant violated: bitmap %d x %d x %d\n", out.width, out.height, out.channels);
            std::abort();
        }
        const int64_t longest = out.width > out.height ? out.width : out.height;
        if (request.max_dimension > 0 && longest > request.max_dimension) {
            std::fprintf(stderr, "invariant violated: %lld px exceeds max_dimension %d\n", (long long)longest, request.max_dimension);
            std::abort();
        }
        // Touch every byte (ASan sees a short allocation).
        volatile uint8_t sum = 0;
        for (size_t i = 0; i < size_t(out.width) * size_t(out.height) * size_t(out.channels); i++) sum ^= out.pixels[i];
        (void)sum;
        ci_free(out.pixels);
    }
    return 0;
}
