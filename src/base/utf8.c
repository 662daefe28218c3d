/* utf8.c - UTF-8 validation (see utf8.h). */
#include "base/utf8.h"

size_t jp_utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t need;
    unsigned min;
    if ((c & 0xe0) == 0xc0) {
        need = 2;
        min = 0x80;
        c &= 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
        need = 3;
        min = 0x800;
        c &= 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
        need = 4;
        min = 0x10000;
        c &= 0x07;
    } else {
        return 0;
    }
    if (n < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    return need;
}

size_t jp_utf8_first_bad(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = jp_utf8_len(s + i, n - i);
        if (!k)
            return i;
        i += k;
    }
    return n;
}
