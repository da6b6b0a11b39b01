// CEMRTD — definitions shared by the shim's C files and never exported to Swift.
#ifndef CEMRTD_INTERNAL_H
#define CEMRTD_INTERNAL_H
#include <openssl/evp.h>

/// A private key (test PKI, specimen chips): an OpenSSL EVP_PKEY owned by the handle.
struct em_key { EVP_PKEY *pkey; };

#endif
