/* json_pull.h - a small pull parser for large, flat JSON (upload batches).
 *
 * Why it exists next to jansson: jansson builds a tree of every value before
 * anything can be read, and a batch is mostly small values (some 50,000 in
 * a batch of 2,000 stacks; millions in a large one). That tree costs both
 * CPU and memory. This parser hands out one token at a time from the
 * caller's buffer, so the only memory the decoder needs is the decoded
 * batch itself. Measured with bench/wire/run (docs/PERFORMANCE.md,
 * "Decoding an ingest batch", 2026-11-25, 2 shared vCPUs): batch_json.c on
 * this parser against json_loadb + json_decref alone (a lower bound for a
 * decoder on jansson, which would still walk the tree into the batch):
 *
 *   batch                          pull: cpu, peak RSS   jansson tree: cpu, peak RSS
 *   0.4 MB, 2,000 stacks x 1 win   1.7 ms, +0.9 MB       5.8-6.0 ms, +2.7 MB
 *   39 MB, 100,000 x 10 windows    309-319 ms, +54 MB    668-722 ms, +329 MB
 *
 * i.e. 2-3.5x less CPU, and 6x less memory on large batches: the tree alone
 * is 8.4x the text, so at the server's 128 MB decompressed-body cap one
 * request would need about 1 GB with jansson. The small objects of a batch
 * (targets, statuses, snapshots) are still cut out and read with jansson.
 *
 * It checks the full JSON grammar (RFC 8259), UTF-8 in strings, and nesting
 * depth, and reports errors with the byte offset. Strings with escapes are
 * decoded into a scratch buffer. Fuzzed through the batch decoder
 * (tests/fuzz/fuzz_batch_json.c, scripts/fuzz batch_json).
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
