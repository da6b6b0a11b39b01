// CEMRTD — definitions shared by the shim's C files and never exported to Swift.
#ifndef CEMRTD_INTERNAL_H
#define CEMRTD_INTERNAL_H
#include <openssl/evp.h>
#include <stddef.h>
#include "cemrtd.h"

/// A private key (test PKI, specimen chips): an OpenSSL EVP_PKEY owned by the handle.
struct em_key { EVP_PKEY *pkey; };

/// Writes `text` into `message` (at most `size` bytes, NUL-terminated), followed by OpenSSL's last queued error
/// in parentheses when there is one; clears OpenSSL's error queue either way. (crypto.c)
void em_put_message(char *message, size_t size, const char *text);

/// Copies `count` bytes into a fresh malloc'd `out->data` (released by `em_free`). 0 when out of memory. (crypto.c)
int em_bytes_out(em_bytes *out, const unsigned char *data, size_t count);

#endif
