#include "cmhd.h"
#include <microhttpd.h>

const char *cmhd_version(void) { return MHD_get_version(); }
