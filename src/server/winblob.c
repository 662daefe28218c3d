/* winblob.c - the stored form of a profile window's rows, and their
 * aggregation (see winblob.h). */
#include "server/winblob.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/hash.h"
#include "base/xalloc.h"

uint64_t wb_thread_id(const char *name, size_t len)
{
    uint64_t h = jp_hash_bytes(name, len);
    return h ? h : 1;
}

bool wb_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t c = *(*p)++;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

uint64_t *wb_thread_ids(const jp_batch *b)
{
    uint64_t *t = jp_xcalloc(b->nthreads + 1, sizeof *t);
    for (size_t i = 0; i < b->nthreads; i++)
        t[i] = wb_thread_id(b->threads[i], strlen(b->threads[i]));
    return t;
}

void wb_agg_grow(wb_agg *a)
{
    size_t ncap = a->cap ? a->cap * 2 : 4096;
    wb_cell *nc = jp_xcalloc(ncap, sizeof *nc);
    uint8_t *nu = jp_xcalloc(ncap, 1);
    for (size_t i = 0; i < a->cap; i++) {
        if (!a->used[i])
            continue;
        size_t k = (size_t)(a->cells[i].stack ^ a->cells[i].thread) & (ncap - 1);
        while (nu[k])
            k = (k + 1) & (ncap - 1);
        nc[k] = a->cells[i];
        nu[k] = 1;
    }
    free(a->cells);
    free(a->used);
    a->cells = nc;
    a->used = nu;
    a->cap = ncap;
}

void wb_agg_add(wb_agg *a, uint64_t stack, uint64_t thread, uint64_t samples, uint64_t value)
{
    if (2 * (a->n + 1) > a->cap)
        wb_agg_grow(a);
    size_t mask = a->cap - 1, k = (size_t)(stack ^ thread) & mask;
    while (a->used[k]) {
        wb_cell *c = &a->cells[k];
        if (c->stack == stack && c->thread == thread) {
            c->samples += samples;
            c->value += value;
            return;
        }
        k = (k + 1) & mask;
    }
    a->used[k] = 1;
    a->cells[k] = (wb_cell){stack, thread, samples, value};
    a->n++;
}

/* Packs the used slots to the front (for sorting and emitting). */
void wb_agg_compact(wb_agg *a)
{
    size_t w = 0;
    for (size_t i = 0; i < a->cap; i++)
        if (a->used[i])
            a->cells[w++] = a->cells[i];
}

void wb_agg_free(wb_agg *a)
{
    free(a->cells);
    free(a->used);
}

/* Varint with a one-byte fast path (most samples and thread slots are small). */
static inline bool wb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    if (*p < end && !(**p & 0x80)) {
        *v = *(*p)++;
        return true;
    }
    return wb_get_varint(p, end, v);
}

static uint64_t wb_u64le(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Decodes one window blob into the aggregate; false when it is corrupt. */
bool wb_decode(const uint8_t *p, size_t len, uint64_t want_thread, wb_agg *a, uint64_t *rows)
{
    const uint8_t *end = p + len;
    uint64_t nthreads;
    if (!wb_get_varint(&p, end, &nthreads) || nthreads > (uint64_t)(end - p) / 8)
        return false;
    const uint8_t *tids = p;
    p += nthreads * 8;
    while (p < end) {
        uint64_t slot, samples, value;
        if (end - p < 8)
            return false;
        uint64_t stack = wb_u64le(p);
        p += 8;
        if (!wb_varint(&p, end, &slot) || !wb_varint(&p, end, &samples) ||
            !wb_varint(&p, end, &value) || slot > nthreads)
            return false;
        uint64_t tid = slot ? wb_u64le(tids + (slot - 1) * 8) : 0;
        (*rows)++;
        if (want_thread && tid != want_thread)
            continue;
        wb_agg_add(a, stack, tid, samples, value);
    }
    return true;
}

static void wb_put_u64(jp_strbuf *b, uint64_t v)
{
    uint8_t x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    jp_strbuf_append(b, x, 8);
}

jp_err wb_agg_encode(const wb_agg *a, void **z, size_t *zlen, jp_error *err)
{
    /* thread slots: distinct thread ids of the cells */
    jp_u64map slots;
    jp_u64map_init(&slots);
    jp_strbuf ids, rows;
    jp_strbuf_init(&ids, 0);
    jp_strbuf_init(&rows, 0);
    uint64_t nthreads = 0;
    for (size_t i = 0; i < a->n; i++) {
        const wb_cell *c = &a->cells[i];
        uint64_t slot = 0;
        if (c->thread) {
            bool ins;
            slot = *jp_u64map_upsert(&slots, c->thread, nthreads + 1, &ins);
            if (ins) {
                nthreads++;
                wb_put_u64(&ids, c->thread);
            }
        }
        wb_put_u64(&rows, c->stack);
        jp_strbuf_put_varint(&rows, slot);
        jp_strbuf_put_varint(&rows, c->samples);
        jp_strbuf_put_varint(&rows, c->value);
    }
    jp_strbuf blob;
    jp_strbuf_init(&blob, 0);
    jp_strbuf_put_varint(&blob, nthreads);
    jp_strbuf_append(&blob, ids.data ? ids.data : "", ids.len);
    jp_strbuf_append(&blob, rows.data ? rows.data : "", rows.len);
    jp_strbuf_cleanup(&ids);
    jp_strbuf_cleanup(&rows);
    jp_u64map_cleanup(&slots);
    size_t bound = ZSTD_compressBound(blob.len);
    *z = jp_xmalloc(bound);
    *zlen = ZSTD_compress(*z, bound, blob.data ? blob.data : "", blob.len, 1);
    jp_strbuf_cleanup(&blob);
    if (ZSTD_isError(*zlen)) {
        free(*z);
        *z = NULL;
        return jp_error_set(err, JP_ERR_INTERNAL, "zstd: %s", ZSTD_getErrorName(*zlen));
    }
    return JP_OK;
}

bool wb_unpack(void *dctx, const void *z, size_t zlen, uint64_t nrows, uint8_t **buf, size_t *cap,
               size_t *len)
{
    unsigned long long size = ZSTD_getFrameContentSize(z, zlen);
    /* the stored row count bounds the decoded size: a damaged blob cannot inflate */
    uint64_t max = 64 + nrows * 56;
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > max)
        return false;
    *buf = jp_xgrow(*buf, cap, size + 1, 1);
    size_t got = ZSTD_decompressDCtx(dctx, *buf, *cap, z, zlen);
    if (ZSTD_isError(got))
        return false;
    *len = got;
    return true;
}

static void wb_put_u64le(jp_strbuf *b, uint64_t v)
{
    uint8_t x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    jp_strbuf_append(b, x, 8);
}

/* Encodes and compresses one window's rows. Runs on the request's own
 * thread, so the single writer thread only inserts ready blobs. */
jp_err wb_window_encode(const jp_batch *b, size_t wi, const uint64_t *tids, wb_window *out,
                        jp_error *err)
{
    const jp_batch_window *w = &b->windows[wi];
    memset(out, 0, sizeof *out);
    jp_u64map slots; /* thread id -> slot (1-based) */
    jp_u64map_init(&slots);
    size_t cap = 0;
    jp_strbuf blob;
    jp_strbuf_init(&blob, 0);
    for (size_t r = 0; r < w->nrows; r++) {
        const jp_batch_row *row = &w->rows[r];
        out->samples += row->samples;
        out->value += row->value;
        if (row->thread == JP_BATCH_NO_THREAD)
            continue;
        bool ins;
        jp_u64map_upsert(&slots, tids[row->thread], out->nthreads + 1, &ins);
        if (ins) {
            out->threads = jp_xgrow(out->threads, &cap, out->nthreads + 1, sizeof *out->threads);
            out->threads[out->nthreads++] = row->thread;
        }
    }
    jp_strbuf_put_varint(&blob, out->nthreads);
    for (size_t i = 0; i < out->nthreads; i++)
        wb_put_u64le(&blob, tids[out->threads[i]]);
    for (size_t r = 0; r < w->nrows; r++) {
        const jp_batch_row *row = &w->rows[r];
        uint64_t slot = 0;
        if (row->thread != JP_BATCH_NO_THREAD)
            jp_u64map_get(&slots, tids[row->thread], &slot);
        wb_put_u64le(&blob, b->stacks[row->stack].id);
        jp_strbuf_put_varint(&blob, slot);
        jp_strbuf_put_varint(&blob, row->samples);
        jp_strbuf_put_varint(&blob, row->value);
    }
    jp_u64map_cleanup(&slots);
    size_t bound = ZSTD_compressBound(blob.len);
    out->z = jp_xmalloc(bound);
    size_t zlen = ZSTD_compress(out->z, bound, blob.data ? blob.data : "", blob.len, 1);
    jp_strbuf_cleanup(&blob);
    if (ZSTD_isError(zlen))
        return jp_error_set(err, JP_ERR_INTERNAL, "zstd: %s", ZSTD_getErrorName(zlen));
    out->zlen = zlen;
    return JP_OK;
}

void wb_window_cleanup(wb_window *w)
{
    free(w->z);
    free(w->threads);
    memset(w, 0, sizeof *w);
}
