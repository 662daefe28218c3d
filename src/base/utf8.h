/* utf8.h - UTF-8 validation for text from outside (query strings, JSON,
 * protobuf strings): overlong forms, surrogates and values above U+10FFFF
 * are invalid, as RFC 3629 says. Pure functions; thread-safe. */
#ifndef JP_BASE_UTF8_H
#define JP_BASE_UTF8_H

#include <stddef.h>

/* Length (1-4) of the valid UTF-8 sequence at s (n > 0 bytes available),
 * or 0 when none starts there. */
size_t jp_utf8_len(const unsigned char *s, size_t n);

/* Offset of the first byte of s[0..n) that starts no valid sequence, or n
 * when all of it is valid. */
size_t jp_utf8_first_bad(const unsigned char *s, size_t n);

#endif
