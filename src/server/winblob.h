/* winblob.h - the stored form of a profile window's rows, shared by both
 * stores, and the aggregation of such rows.
 *
 * A window blob: varint nthreads, nthreads u64le thread ids (wb_thread_id of
 * the names), then per row u64le stack id, varint thread slot (0 none, else
 * 1-based into the ids), varint samples, varint value; zstd-compressed.
 * The embedded store keeps one per window in its day file; the ClickHouse
 * store one per window row of jprof_windows and one per minute of its
 * roll-up, with the thread names beside it. The aggregate (stack, thread
 * id) -> sums is what flame queries and roll-ups build from them.
 *
 * Ownership: a wb_window owns its z and threads (wb_window_cleanup); a
 * wb_agg its cells (wb_agg_free). Not thread-safe. */
#ifndef JP_SERVER_WINBLOB_H
#define JP_SERVER_WINBLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "wire/batch.h"

/* Thread id of a thread name (0 is reserved for "no thread"). */
uint64_t wb_thread_id(const char *name, size_t len);
/* wb_thread_id of every thread name of a batch (heap, free()). */
uint64_t *wb_thread_ids(const jp_batch *b);
/* Reads a varint; false at the end of the buffer or past 64 bits. */
bool wb_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);

/* One window's rows, encoded. */
typedef struct wb_window {
    void *z;
    size_t zlen;
    uint64_t samples, value;
    uint32_t *threads; /* batch thread indexes used by the window */
    size_t nthreads;
} wb_window;

/* Encodes and compresses window wi of b (tids from wb_thread_ids). */
jp_err wb_window_encode(const jp_batch *b, size_t wi, const uint64_t *tids, wb_window *out,
                        jp_error *err);
void wb_window_cleanup(wb_window *w);

typedef struct wb_cell {
    uint64_t stack, thread, samples, value;
} wb_cell;

/* (stack, thread) -> sums. Stack ids are already well-mixed 64-bit hashes,
 * so the table indexes by them directly: this loop runs once per stored row
 * and dominates a flame query. Open addressing, linear probing, <= 50% full. */
typedef struct wb_agg {
    wb_cell *cells; /* slots; stack == 0 && thread == 0 && !used means empty */
    uint8_t *used;
    size_t cap, n;
} wb_agg;

void wb_agg_grow(wb_agg *a);
void wb_agg_add(wb_agg *a, uint64_t stack, uint64_t thread, uint64_t samples, uint64_t value);
/* Packs the used slots to the front: cells[0..n) afterwards. */
void wb_agg_compact(wb_agg *a);
void wb_agg_free(wb_agg *a);
/* Adds a decoded window blob (uncompressed) to a; want_thread 0 = all.
 * *rows gets the rows read. False when the blob is damaged. */
bool wb_decode(const uint8_t *p, size_t len, uint64_t want_thread, wb_agg *a, uint64_t *rows);
/* Encodes a compacted aggregate in the window blob format, zstd-compressed
 * (*z heap, free()). */
jp_err wb_agg_encode(const wb_agg *a, void **z, size_t *zlen, jp_error *err);
/* Decompresses a stored blob of nrows rows into *buf (grown as needed),
 * refusing anything larger than nrows can explain. */
bool wb_unpack(void *dctx, const void *z, size_t zlen, uint64_t nrows, uint8_t **buf, size_t *cap,
               size_t *len);

#endif
