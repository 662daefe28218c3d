/* base64.c - base64 decoding (see base64.h). */
#include "base/base64.h"

#include <stdlib.h>

#include "base/xalloc.h"

static int b64val(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+')
        return 62;
    if (ch == '/')
        return 63;
    return -1;
}

jp_err jp_base64_decode(const char *s, size_t len, uint8_t **out, size_t *out_len, jp_error *err)
{
    uint8_t *o = jp_xmalloc(len / 4 * 3 + 4);
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '=' || ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
            continue;
        int v = b64val(ch);
        if (v < 0) {
            free(o);
            return jp_error_set(err, JP_ERR_FORMAT, "invalid base64 at byte %zu", i);
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[n++] = (uint8_t)(acc >> bits);
        }
    }
    *out = o;
    *out_len = n;
    return JP_OK;
}
