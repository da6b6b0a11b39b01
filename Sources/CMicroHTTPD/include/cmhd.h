// CMicroHTTPD — C wrappers over libmicrohttpd for what Swift cannot call directly (variadic
// MHD_start_daemon, option lists, constants that do not import). See INTEROP-NOTES.md.
#ifndef CMHD_H
#define CMHD_H
#ifdef __cplusplus
extern "C" {
#endif

/// The libmicrohttpd version string, e.g. "0.9.75". Never NULL.
const char *cmhd_version(void);

#ifdef __cplusplus
}
#endif
#endif
