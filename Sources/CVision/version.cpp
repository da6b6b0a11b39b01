#include "cvision.h"
#include <dlib/revision.h>

#define CV_STR2(x) #x
#define CV_STR(x) CV_STR2(x)

extern "C" const char *cv_dlib_version(void) {
    return CV_STR(DLIB_MAJOR_VERSION) "." CV_STR(DLIB_MINOR_VERSION) "." CV_STR(DLIB_PATCH_VERSION);
}

#include <dlfcn.h>

extern "C" int cv_set_blas_threads(int threads) {
    // OpenBLAS (Debian's default libblas) exports openblas_set_num_threads; other BLASes may not.
    using setter = void (*)(int);
    if (auto f = reinterpret_cast<setter>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
        f(threads);
        return 1;
    }
    return 0;
}
