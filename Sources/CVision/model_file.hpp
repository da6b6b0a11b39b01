// What CVision's dnn model loaders share (internal to the target, C++ only): the message buffer,
// SHA-256 in hex (libsodium), and reading a model file whose SHA-256 must match the one committed
// beside it — checked on the very bytes that are then parsed, so a file swapped or altered on disk
// is refused, never run.
#pragma once

#include "cvision.h"

#include <sodium.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace cvision_internal {

/// Writes `text` into the caller's `message` buffer of `size` bytes (truncated, NUL-terminated).
inline void set_message(char *message, size_t size, const std::string &text) {
    if (message && size) std::snprintf(message, size, "%s", text.c_str());
}

/// SHA-256 of `count` bytes, 64 lower-case hex digits. libsodium must be initialised.
inline std::string sha256_hex(const void *bytes, size_t count) {
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, static_cast<const unsigned char *>(bytes), count);
    static const char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * sizeof digest);
    for (unsigned char b : digest) {
        out.push_back(digits[b >> 4]);
        out.push_back(digits[b & 15]);
    }
    return out;
}

/// Reads `path` into `bytes` and checks its SHA-256 against `want` (64 hex digits, any case).
/// `what` names the file in the messages ("PAD model", "face recognition model").
/// CV_ERR_MODEL when it cannot be read, CV_ERR_MODEL_INTEGRITY when the digest differs.
template <typename Byte>
cv_status read_verified(const char *path, const char *want, const std::string &what, std::vector<Byte> &bytes, char *message,
                        size_t size) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        set_message(message, size, what + " file " + path + " not found or unreadable");
        return CV_ERR_MODEL;
    }
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (sodium_init() < 0) {
        set_message(message, size, "libsodium failed to initialise");
        return CV_ERR_INTERNAL;
    }
    const std::string got = sha256_hex(bytes.data(), bytes.size());
    std::string expected(want);
    for (char &c : expected) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (got != expected) {
        set_message(message, size,
                    what + " file " + path + " fails its SHA-256 check (got " + got + ", want " + expected +
                        "); it was altered or replaced: restore it from the repository");
        return CV_ERR_MODEL_INTEGRITY;
    }
    return CV_OK;
}

} // namespace cvision_internal
