/* batch_json.h - the JSON form of an upload batch (docs/API.md, "Ingest").
 *
 * Decoding is for untrusted input: every count is checked against a limit
 * before anything is allocated for it, and every error names the field it is
 * about ("windows[2].rows[17][1]: samples must be an integer >= 0").
 * JP_ERR_FORMAT means malformed (HTTP 400); JP_ERR_LIMIT means a limit was
 * passed (HTTP 413).
 *
 * Ownership: decode fills a jp_batch the caller initialised and cleans up
 * (also on error). encode returns heap text for the caller to free().
 * Thread-safe (no shared state). */
#ifndef JP_WIRE_BATCH_JSON_H
#define JP_WIRE_BATCH_JSON_H

#include <stddef.h>

#include "base/error.h"
#include "wire/batch.h"

typedef struct jp_batch_limits {
    size_t max_windows;   /* profile windows per batch */
    size_t max_frames;    /* entries of the frame-name table */
    size_t max_threads;   /* entries of the thread-name table */
    size_t max_stacks;    /* entries of the stack table */
    size_t max_depth;     /* frames per stack */
    size_t max_rows;      /* rows over all windows */
    size_t max_docs;      /* statuses + snapshots + deadlocks */
    size_t max_string;    /* bytes of one string */
    size_t max_doc_bytes; /* bytes of one snapshot / deadlock as compact JSON */
} jp_batch_limits;

/* 1,000 windows, 200,000 frames, 100,000 threads, 200,000 stacks, depth 2,048,
 * 2,000,000 rows, 10,000 docs, 4 KiB strings, 8 MiB per document. */
void jp_batch_limits_default(jp_batch_limits *l);

jp_err jp_batch_json_decode(const char *text, size_t len, const jp_batch_limits *lim, jp_batch *out,
                            jp_error *err);

/* Compact JSON of a batch (times as integer ns fields). Never NULL. */
char *jp_batch_json_encode(const jp_batch *b, size_t *len);

#endif
