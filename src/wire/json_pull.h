/* json_pull.h - a small pull parser for large, flat JSON (upload batches).
 *
 * jansson builds a tree of every value; a batch of 2,000 stacks holds some
 * 50,000 of them, and building and freeing that tree was half of the
 * server's ingest CPU. This parser hands out one token at a time from the
 * caller's buffer instead. It checks the full JSON grammar (RFC 8259),
 * UTF-8 in strings, and nesting depth, and reports errors with the byte
 * offset. Strings with escapes are decoded into a scratch buffer.
 *
 * Ownership: caller storage (jpull_init / jpull_cleanup); the input buffer
 * is borrowed and must outlive the parser. A string token's text is valid
 * until the next call. Not thread-safe. */
#ifndef JP_WIRE_JSON_PULL_H
#define JP_WIRE_JSON_PULL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

#define JPULL_MAX_DEPTH 64

typedef enum jpull_tok {
    JPULL_ERROR = 0,
    JPULL_END,       /* the document is complete */
    JPULL_OBJ_BEGIN, /* { */
    JPULL_OBJ_END,   /* } */
    JPULL_ARR_BEGIN, /* [ */
    JPULL_ARR_END,   /* ] */
    JPULL_KEY,       /* an object key (text in str/len) */
    JPULL_STRING,
    JPULL_INT,  /* an integer that fits int64 (value in i) */
    JPULL_REAL, /* any other number (value in d) */
    JPULL_TRUE,
    JPULL_FALSE,
    JPULL_NULL
} jpull_tok;

typedef struct jpull {
    const char *buf;
    size_t len, pos;
    /* nesting: 'o' object, 'a' array; expect says what may come next */
    char stack[JPULL_MAX_DEPTH];
    int depth;
    int expect; /* internal state */
    bool done;
    /* the current token */
    const char *str;
    size_t slen;
    int64_t i;
    double d;
    size_t tok_start; /* offset where the current value started (for raw capture) */
    jp_strbuf scratch;
    char err[160];
} jpull;

void jpull_init(jpull *p, const char *buf, size_t len);
void jpull_cleanup(jpull *p);

/* The next token. After JPULL_ERROR, p->err says what and where. */
jpull_tok jpull_next(jpull *p);

/* Skips the value whose first token `t` was just returned (nested values
 * entirely). Returns false on a syntax error. */
bool jpull_skip(jpull *p, jpull_tok t);

/* Skips the value whose first token `t` was just returned and gives its raw
 * text [*start, *end) in the input (for handing a sub-document to another
 * parser). */
bool jpull_capture(jpull *p, jpull_tok t, size_t *start, size_t *end);

#endif
