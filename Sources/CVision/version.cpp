#include "cvision.h"
#include <dlib/revision.h>

#define CV_STR2(x) #x
#define CV_STR(x) CV_STR2(x)

extern "C" const char *cv_dlib_version(void) {
    return CV_STR(DLIB_MAJOR_VERSION) "." CV_STR(DLIB_MINOR_VERSION) "." CV_STR(DLIB_PATCH_VERSION);
}
