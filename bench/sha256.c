/* SPDX-License-Identifier: Apache-2.0 */
#include "sha256.h"

#include <openssl/evp.h>
#include <stdio.h>

static void to_hex(const unsigned char *md, unsigned len, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < len; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[2 * len] = 0;
}

int bench_sha256_buf(const void *data, size_t len, char hex[BENCH_SHA256_HEX])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
        return -1;
    to_hex(md, mdlen, hex);
    return 0;
}

int bench_sha256_file(const char *path, char hex[BENCH_SHA256_HEX])
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = -1;
    if (ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
        unsigned char buf[1 << 16];
        size_t n;
        int ok = 1;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            if (!EVP_DigestUpdate(ctx, buf, n)) {
                ok = 0;
                break;
            }
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned mdlen = 0;
        if (ok && !ferror(f) && EVP_DigestFinal_ex(ctx, md, &mdlen) && mdlen == 32) {
            to_hex(md, mdlen, hex);
            rc = 0;
        }
    }
    EVP_MD_CTX_free(ctx);
    fclose(f);
    return rc;
}
