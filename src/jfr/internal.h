/* internal.h - limits, error context and warnings shared by the src/jfr files.
 *
 * Not used outside src/jfr. Errors always name the input, the 1-based chunk
 * and the absolute byte offset ("app.jfr: chunk 2 @0x1a2b: ..."), so every
 * reader carries a jfr_where describing where it is. */
#ifndef JP_JFR_INTERNAL_H
#define JP_JFR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "jfr/input.h"
#include "jfr/jfr.h"

#define JFR_NONE UINT32_MAX

/* Caps on what the input may ask for. Each one bounds a loop or a recursion
 * that a hostile file could otherwise drive forever or very deep. */
#define JFR_HEADER_SIZE 68
#define JFR_MAX_META_DEPTH 64       /* metadata element tree nesting */
#define JFR_MAX_NEST 32             /* inline struct nesting inside a value */
#define JFR_MAX_CHECKPOINTS 1000000 /* checkpoint events in one chunk's chain */
#define JFR_MAX_STACK_DEPTH 65536   /* frames kept per stack; the rest is cut */
#define JFR_MAX_TEXT 65536          /* bytes of one decoded string */
#define JFR_MAX_REF_HOPS 8          /* pool -> pool indirections for one string */
#define JFR_MAX_PLAN_OPS 4096       /* ops in one compiled event plan */

/* Saturating arithmetic for times read from the input, which may be absurd. */
static inline int64_t jfr_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* double -> int64 without the undefined behaviour of an out-of-range cast. */
static inline int64_t jfr_d2i(double d)
{
    if (d != d)
        return 0;
    if (d >= 9.2e18)
        return INT64_MAX;
    if (d <= -9.2e18)
        return INT64_MIN;
    return (int64_t)d;
}

/* Where a reader is, for error messages. */
typedef struct jfr_where {
    const uint8_t *base; /* bytes of the input in memory (NULL: none) ... */
    uint64_t base_off;   /* ... starting at this offset of the input */
    const char *name;    /* label of the input (file name) */
    uint32_t chunk;      /* 1-based chunk number */
    jp_error *err;       /* receives the message */
} jfr_where;

/* Fills w->err with "name: chunk N @0xOFF: <fmt>" and returns code; OFF is
 * w->base_off + (at - w->base), or w->base_off when at is NULL. */
jp_err jfr_fail(const jfr_where *w, jp_err code, const uint8_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Warning categories, each reported once per input. */
enum {
    JFR_WARN_MISSING_STACK,
    JFR_WARN_MISSING_METHOD,
    JFR_WARN_MISSING_CLASS,
    JFR_WARN_MISSING_SYMBOL,
    JFR_WARN_MISSING_THREAD,
    JFR_WARN_MISSING_FRAMETYPE,
    JFR_WARN_MISSING_STRING,
    JFR_WARN_UNKNOWN_FRAMETYPE,
    JFR_WARN_DEEP_STACK,
    JFR_WARN_PERIOD_ASSUMED,
    JFR_WARN_PERIOD_CHANGED,
    JFR_WARN_SHAPE,
    JFR_WARN_FLAGS,
    JFR_WARN_PREV_CHUNK,
    JFR_WARN__COUNT
};

/* The reader gives every chunk a warner of its own (chunks may decode in
 * parallel); the chunks' warnings are merged in file order, keeping the
 * first of each category (see jfr_warner_merge). */
typedef struct jfr_warner {
    jfr_report *rep;
    const char *name;
    uint32_t chunk;
    uint32_t seen;                 /* bit per category already reported */
    uint8_t cat[JFR_MAX_WARNINGS]; /* category of rep->warnings[i] */
} jfr_warner;

/* Records a warning "name: chunk N: <fmt>" unless its category was seen. */
void jfr_warn(jfr_warner *wn, unsigned category, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds the warnings of src (one chunk's) to dst unless dst already has one
 * of the same category. */
void jfr_warner_merge(jfr_warner *dst, const jfr_warner *src);

/* Appends the UTF-8 form of a UTF8/LATIN1/CHARS/EMPTY string to out, cut at
 * JFR_MAX_TEXT bytes. NULL and POOL strings append nothing (the caller
 * resolves pool keys). */
void jfr_text_append(jp_strbuf *out, const jfr_str *s);

#endif
