/* input.h - bounded readers for JFR's wire encoding (internal to src/jfr).
 *
 * Every reader takes a cursor (`*pp`) and the end of the readable range and
 * returns false, leaving the cursor where it was, when the value would run
 * past `end`. Nothing here allocates or keeps state, so all of it is
 * thread-safe. Inline because the event loop calls these for every field. */
#ifndef JP_JFR_INPUT_H
#define JP_JFR_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JFR_LIKELY(x) __builtin_expect(!!(x), 1)
#define JFR_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Slow path of jfr_varint: multi-byte forms, including padded non-minimal
 * ones. JFR's variant of LEB128 stops after 9 bytes and the 9th byte carries
 * 8 full bits, so a 64-bit value never needs a 10th byte. */
static inline bool jfr_varint_slow(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        if (p >= end)
            return false;
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (b < 0x80) {
            *out = v;
            *pp = p;
            return true;
        }
    }
    if (p >= end)
        return false;
    v |= (uint64_t)*p++ << 56;
    *out = v;
    *pp = p;
    return true;
}

/* One compressed integer (short, char, int, long and every pool key). */
static inline bool jfr_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (JFR_LIKELY(p < end) && *p < 0x80) {
        *out = *p;
        *pp = p + 1;
        return true;
    }
    return jfr_varint_slow(pp, end, out);
}

/* Skips one compressed integer without assembling its value. */
static inline bool jfr_varint_skip(const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = *pp;
    for (int i = 0; i < 8; i++) {
        if (p >= end)
            return false;
        if (*p++ < 0x80) {
            *pp = p;
            return true;
        }
    }
    if (p >= end)
        return false;
    *pp = p + 1;
    return true;
}

/* Eight bytes as a little-endian number whatever the host's byte order and
 * alignment: byte loads, which compilers merge into one load where the
 * host allows it. The caller ensures the eight bytes are readable. */
static inline uint64_t jfr_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

/* Skips k compressed integers ending at or before `end`. `lim` is where the
 * readable bytes end (at or past `end`): when eight bytes can be read, the
 * k-th byte without its high bit is found with a few word operations (the
 * common case: event fields are short varints); otherwise, or when the k
 * integers span more than eight bytes, byte by byte. Always inlined, as
 * jfr_varint_w: the event loop inlines them several times over, and GCC
 * stops short of it otherwise (a call an integer: +3 ns an event). */
static inline __attribute__((always_inline)) bool
jfr_varints_skip(const uint8_t **pp, const uint8_t *end, const uint8_t *lim, unsigned k)
{
    const uint8_t *p = *pp;
    if (JFR_LIKELY(lim - p >= 8)) {
        uint64_t m = ~jfr_le64(p) & 0x8080808080808080ULL; /* bytes that end an integer */
        /* 0 stays 0: fewer than k ends in these bytes. One or two integers
         * are the common skips: no loop for them. */
        if (k >= 2)
            m &= m - 1;
        for (unsigned i = 2; i < k; i++)
            m &= m - 1;
        if (JFR_LIKELY(m)) {
            p += (__builtin_ctzll(m) >> 3) + 1;
            if (JFR_UNLIKELY(p > end))
                return false;
            *pp = p;
            return true;
        }
    }
    for (unsigned i = 0; i < k; i++)
        if (!jfr_varint_skip(&p, end))
            return false;
    *pp = p;
    return true;
}

/* The value of an integer of at most four bytes whose bytes alone (the
 * others zero) are the low bytes of y: its seven-bit groups packed by two
 * mask-and-shift steps instead of a loop over the bytes. */
static inline __attribute__((always_inline)) uint32_t jfr_varint_pack32(uint32_t y)
{
    y &= 0x7f7f7f7fu;
    y = (y & 0x007f007fu) | (y & 0x7f007f00u) >> 1;
    return (y & 0x00003fffu) | (y & 0x3fff0000u) >> 2;
}

/* The value of an integer whose `bits` / 8 bytes (at most four, high bits
 * set on all but the last) are the low bytes of w: the seven-bit groups are
 * gathered by mask-and-shift steps instead of a loop over the bytes. */
static inline __attribute__((always_inline)) uint32_t jfr_varint_gather32(uint32_t w, unsigned bits)
{
    return jfr_varint_pack32(w & (~0u >> ((32 - bits) & 31)));
}

static inline __attribute__((always_inline)) uint64_t jfr_varint_gather(uint64_t w, unsigned bits)
{
    /* up to four bytes (stack and class keys, sizes): the same steps on 32
     * bits, two of them, with short constants */
    if (JFR_LIKELY(bits <= 32))
        return jfr_varint_gather32((uint32_t)w, bits);
    uint64_t x = w & (~0ULL >> (64 - bits)) & 0x7f7f7f7f7f7f7f7fULL;
    x = (x & 0x007f007f007f007fULL) | (x & 0x7f007f007f007f00ULL) >> 1;
    x = (x & 0x00003fff00003fffULL) | (x & 0x3fff00003fff0000ULL) >> 2;
    return (x & 0x000000000fffffffULL) | (x & 0x0fffffff00000000ULL) >> 4;
}

/* One compressed integer ending at or before `end`, reading whole words
 * where `lim` (the end of the readable bytes, at or past `end`) allows. */
static inline __attribute__((always_inline)) bool
jfr_varint_w(const uint8_t **pp, const uint8_t *end, const uint8_t *lim, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (JFR_LIKELY(p < end) && *p < 0x80) {
        *out = *p;
        *pp = p + 1;
        return true;
    }
    if (JFR_LIKELY(lim - p >= 8)) {
        uint64_t w = jfr_le64(p);
        uint64_t m = ~w & 0x8080808080808080ULL;
        if (JFR_LIKELY(m)) {
            unsigned bits = (unsigned)__builtin_ctzll(m) + 1; /* 8 x the integer's bytes */
            p += bits >> 3;
            if (JFR_UNLIKELY(p > end))
                return false;
            *out = jfr_varint_gather(w, bits);
            *pp = p;
            return true;
        }
    }
    return jfr_varint_slow(pp, end, out);
}

/* Skips n raw bytes. */
static inline bool jfr_bytes_skip(const uint8_t **pp, const uint8_t *end, uint64_t n)
{
    if (n > (uint64_t)(end - *pp))
        return false;
    *pp += n;
    return true;
}

static inline uint16_t jfr_be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint64_t jfr_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* ---- strings ---- */

/* The six string encodings: a tag byte, then the payload. */
enum {
    JFR_STR_NULL = 0,
    JFR_STR_EMPTY = 1,
    JFR_STR_POOL = 2,   /* varlong key into the java.lang.String pool */
    JFR_STR_UTF8 = 3,   /* varint byte length + bytes */
    JFR_STR_CHARS = 4,  /* varint count + count varints, UTF-16 units */
    JFR_STR_LATIN1 = 5, /* varint byte length + bytes */
};

/* A string as found on the wire; payload points into the input. */
typedef struct jfr_str {
    uint8_t enc;
    uint64_t n;       /* bytes (UTF8, LATIN1), units (CHARS), key (POOL) */
    const uint8_t *p; /* payload start (UTF8, LATIN1, CHARS) */
    const uint8_t *e; /* payload end */
} jfr_str;

/* Reads a string's tag and extent, validating that the whole payload lies
 * before `end`. Returns false on overrun or an unknown tag. */
static inline bool jfr_str_read(const uint8_t **pp, const uint8_t *end, jfr_str *s)
{
    const uint8_t *p = *pp;
    if (p >= end)
        return false;
    s->enc = *p++;
    s->n = 0;
    s->p = s->e = NULL;
    switch (s->enc) {
    case JFR_STR_NULL:
    case JFR_STR_EMPTY:
        break;
    case JFR_STR_POOL:
        if (!jfr_varint(&p, end, &s->n))
            return false;
        break;
    case JFR_STR_UTF8:
    case JFR_STR_LATIN1:
        if (!jfr_varint(&p, end, &s->n) || s->n > (uint64_t)(end - p))
            return false;
        s->p = p;
        p += s->n;
        s->e = p;
        break;
    case JFR_STR_CHARS:
        /* Each unit takes at least one byte: check the count before the walk. */
        if (!jfr_varint(&p, end, &s->n) || s->n > (uint64_t)(end - p))
            return false;
        s->p = p;
        for (uint64_t i = 0; i < s->n; i++)
            if (!jfr_varint_skip(&p, end))
                return false;
        s->e = p;
        break;
    default:
        return false;
    }
    *pp = p;
    return true;
}

static inline bool jfr_str_skip(const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = *pp;
    if (JFR_LIKELY(p < end) && (*p == JFR_STR_UTF8 || *p == JFR_STR_LATIN1)) {
        uint64_t n;
        p++;
        if (!jfr_varint(&p, end, &n) || n > (uint64_t)(end - p))
            return false;
        *pp = p + n;
        return true;
    }
    jfr_str s;
    return jfr_str_read(pp, end, &s);
}

#endif
