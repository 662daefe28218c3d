/* ch_rollup.c - the ClickHouse store's per-minute roll-up, built in memory.
 *
 * Every committed window is added here, summed per (namespace, service,
 * kind, minute of its start) and per (stack, thread) over all pods and all
 * agents whose batches this process wrote. Once a minute is over by
 * CH_ROLLUP_DELAY (the agents upload a window when it ends) and no window
 * came for it in CH_ROLLUP_IDLE, its sums go to jprof_rollup as one row,
 * with the number of windows, stack rows, samples and value they cover. A query takes a minute from
 * the roll-up only when the roll-up rows of that minute cover exactly what jprof_windows says of
 * its visible windows (ch_query.c): several rows of one minute (from other replicas, or late
 * windows written after the first) add up; a minute whose roll-up was lost (a crash, a failed
 * insert), doubled (two replicas accepting one batch) or is still in memory is read from the raw
 * rows, so answers stay exact. Memory is bounded: past CH_ROLLUP_ENTRIES
 * everything pending is written at once. The sums travel as the window
 * blob both stores use (winblob.h), with the thread names beside it.
 *
 * A commit only files its batch's share (ch_rshare: each window's blob, as
 * the write encoded it for jprof_windows, and the names of its threads)
 * under its minutes; the sums are made
 * when a minute is written, off the path of the writes waiting for their
 * answer (as the embedded store's roll-up pass), or when the shares filed
 * pass CH_ROLLUP_PENDING rows (then they are summed at once, and memory is
 * that of the sums). A share holds the compressed blob, not the rows: a
 * copy of every row (32 bytes each, 19 MB for bench/server/run's 600,000)
 * was fresh memory for every batch of a first load, each page of it a
 * page fault (docs/PERFORMANCE.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/ch_int.h"
#include "server/winblob.h"

#define CH_ROLLUP_DELAY (30 * JP_NS_PER_SEC) /* after the minute's end, at least */
#define CH_ROLLUP_IDLE (5 * JP_NS_PER_SEC)   /* and this long without a new window */
#define CH_ROLLUP_AGE (300 * JP_NS_PER_SEC)  /* a minute kept longer is written anyway */
#define CH_ROLLUP_ENTRIES (4u << 20)         /* (stack, thread) sums held at most */
#define CH_ROLLUP_PENDING (2u << 20)         /* rows filed, not summed, at most */

/* A batch's share of the roll-up: what ch_rollup_add needs of its windows,
 * kept while the write is encoded, so that the batch itself can go while
 * the write waits for its group. */
typedef struct ch_rwin {
    char *ns, *service;
    int kind;
    int64_t minute;
    uint64_t n; /* its rows */
    uint64_t samples, value;
    void *z; /* its blob (winblob.h), zstd */
    size_t zlen;
    char **threads; /* the names of the thread ids in the blob */
    uint64_t *tids;
    size_t nthreads;
} ch_rwin;

struct ch_rshare {
    int refs; /* the write's, and one per window filed (atomic) */
    ch_rwin *w;
    size_t nw, cap;
};

/* A share's window filed under an accumulator. */
typedef struct ch_rref {
    ch_rshare *s;
    size_t w;
} ch_rref;

/* One (namespace, service, kind, minute). */
typedef struct ch_racc {
    char *ns, *service;
    int kind;
    int64_t minute;
    int64_t born, last; /* jp_time_mono_ns() when it was made, last added to */
    uint64_t windows, nrows, samples, value;
    struct ch_rref *refs; /* shares' windows filed, not summed yet */
    size_t nrefs, refs_cap;
    uint64_t pending; /* their rows */
    bool broken;      /* a blob did not decode: the minute is not written */
    wb_agg agg;       /* (stack, thread id) -> sums */
    char **threads;   /* the names of the thread ids in agg, each once */
    size_t nthreads, threads_cap;
    jp_u64map tidx; /* thread id -> 1 */
} ch_racc;

struct ch_rollup {
    pthread_mutex_t mu;
    ch_racc **acc;
    size_t n, cap;
    jp_u64map idx; /* hash(ns, service, kind, minute) -> index + 1 (probing) */
    size_t entries;
    uint64_t pending; /* rows filed in all accumulators */
};

static uint64_t ch_racc_key(const char *ns, const char *service, int kind, int64_t minute)
{
    uint64_t h =
        jp_hash_combine(jp_hash_bytes(ns, strlen(ns)), jp_hash_bytes(service, strlen(service)));
    return jp_hash_combine(h, jp_hash_u64((uint64_t)minute * 64 + (uint64_t)kind));
}

static void ch_racc_free(ch_racc *a)
{
    if (!a)
        return;
    free(a->ns);
    free(a->service);
    for (size_t i = 0; i < a->nrefs; i++)
        ch_rshare_free(a->refs[i].s);
    free(a->refs);
    wb_agg_free(&a->agg);
    for (size_t i = 0; i < a->nthreads; i++)
        free(a->threads[i]);
    free(a->threads);
    jp_u64map_cleanup(&a->tidx);
    free(a);
}

static ch_racc *ch_racc_get(ch_rollup *r, const char *ns, const char *service, int kind,
                            int64_t minute)
{
    uint64_t key = ch_racc_key(ns, service, kind, minute), v;
    while (jp_u64map_get(&r->idx, key, &v)) {
        ch_racc *a = r->acc[v - 1];
        if (a->kind == kind && a->minute == minute && !strcmp(a->ns, ns) &&
            !strcmp(a->service, service))
            return a;
        key++;
    }
    ch_racc *a = jp_xcalloc(1, sizeof *a);
    a->ns = jp_xstrdup(ns);
    a->service = jp_xstrdup(service);
    a->kind = kind;
    a->minute = minute;
    a->born = jp_time_mono_ns();
    jp_u64map_init(&a->tidx);
    // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
    r->acc = jp_xgrow(r->acc, &r->cap, r->n + 1, sizeof *r->acc);
    r->acc[r->n++] = a;
    jp_u64map_put(&r->idx, key, r->n);
    return a;
}

static void ch_racc_thread(ch_racc *a, uint64_t tid, const char *name)
{
    bool fresh;
    jp_u64map_upsert(&a->tidx, tid, 1, &fresh);
    if (!fresh)
        return;
    a->threads = jp_xgrow(a->threads, &a->threads_cap, a->nthreads + 1, sizeof *a->threads);
    a->threads[a->nthreads++] = jp_xstrdup(name);
}

ch_rshare *ch_rshare_new(void)
{
    ch_rshare *s = jp_xcalloc(1, sizeof *s);
    s->refs = 1;
    return s;
}

void ch_rshare_window(ch_rshare *s, const jp_batch *b, size_t wi, const uint64_t *tids,
                      wb_window *wb)
{
    const jp_batch_window *w = &b->windows[wi];
    if (w->start_ns < 0)
        return;
    s->w = jp_xgrow(s->w, &s->cap, s->nw + 1, sizeof *s->w);
    ch_rwin *sw = &s->w[s->nw++];
    *sw = (ch_rwin){.ns = jp_xstrdup(w->target.ns ? w->target.ns : ""),
                    .service = jp_xstrdup(w->target.service ? w->target.service : ""),
                    .kind = (int)w->kind,
                    .minute = w->start_ns / CH_MINUTE_NS,
                    .n = w->nrows,
                    .samples = wb->samples,
                    .value = wb->value,
                    .z = jp_xrealloc(wb->z, wb->zlen ? wb->zlen : 1), /* its bound, trimmed */
                    .zlen = wb->zlen,
                    .nthreads = wb->nthreads};
    wb->z = NULL;
    if (!sw->nthreads)
        return;
    sw->threads = jp_xcalloc(sw->nthreads, sizeof *sw->threads);
    sw->tids = jp_xcalloc(sw->nthreads, sizeof *sw->tids);
    for (size_t t = 0; t < sw->nthreads; t++) {
        sw->threads[t] = jp_xstrdup(b->threads[wb->threads[t]]);
        sw->tids[t] = tids[wb->threads[t]];
    }
}

void ch_rshare_free(ch_rshare *s)
{
    if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    for (size_t i = 0; i < s->nw; i++) {
        ch_rwin *w = &s->w[i];
        free(w->ns);
        free(w->service);
        free(w->z);
        for (size_t t = 0; t < w->nthreads; t++)
            free(w->threads[t]);
        free(w->threads);
        free(w->tids);
    }
    free(s->w);
    free(s);
}

/* Sums the shares filed under a into its aggregate and lets them go. */
static void ch_racc_fold(ch_racc *a)
{
    ZSTD_DCtx *dctx = a->nrefs ? ZSTD_createDCtx() : NULL;
    uint8_t *buf = NULL;
    size_t cap = 0, len;
    a->broken |= a->nrefs && !dctx;
    for (size_t i = 0; i < a->nrefs; i++) {
        const ch_rwin *w = &a->refs[i].s->w[a->refs[i].w];
        for (size_t t = 0; t < w->nthreads; t++)
            ch_racc_thread(a, w->tids[t], w->threads[t]);
        uint64_t rows = 0;
        if (!a->broken && (!wb_unpack(dctx, w->z, w->zlen, w->n, &buf, &cap, &len) ||
                           !wb_decode(buf, len, 0, &a->agg, &rows) || rows != w->n))
            a->broken = true;
        ch_rshare_free(a->refs[i].s);
    }
    ZSTD_freeDCtx(dctx);
    free(buf);
    a->nrefs = 0;
    a->pending = 0;
}

void ch_rollup_add(ch_store *st, ch_rshare *s)
{
    ch_rollup *r = st->rollup;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < s->nw; i++) {
        const ch_rwin *w = &s->w[i];
        ch_racc *a = ch_racc_get(r, w->ns, w->service, w->kind, w->minute);
        a->last = jp_time_mono_ns();
        a->windows++;
        a->nrows += w->n;
        a->samples += w->samples;
        a->value += w->value;
        a->refs = jp_xgrow(a->refs, &a->refs_cap, a->nrefs + 1, sizeof *a->refs);
        a->refs[a->nrefs++] = (ch_rref){.s = s, .w = i};
        __atomic_add_fetch(&s->refs, 1, __ATOMIC_ACQ_REL);
        a->pending += w->n;
        r->pending += w->n;
    }
    if (r->pending > CH_ROLLUP_PENDING) {
        for (size_t i = 0; i < r->n; i++) {
            ch_racc *a = r->acc[i];
            size_t before = a->agg.n;
            ch_racc_fold(a);
            r->entries += a->agg.n - before;
        }
        r->pending = 0;
    }
    pthread_mutex_unlock(&r->mu);
}

/* jprof_rollup's row of one minute (CH_ROLLUP_COLS); a's sums are packed
 * for it (nothing can be added afterwards). */
static void ch_racc_encode(ch_racc *a, jp_strbuf *o)
{
    void *z = NULL;
    size_t zlen = 0;
    jp_error e;
    jp_error_init(&e);
    ch_racc_fold(a);
    if (a->broken)
        return; /* that minute is read raw */
    wb_agg_compact(&a->agg);
    if (wb_agg_encode(&a->agg, &z, &zlen, &e) != JP_OK)
        return; /* that minute is read raw */
    ch_rb_day(o, store_day_of(a->minute * CH_MINUTE_NS));
    ch_rb_cstr(o, a->ns);
    ch_rb_cstr(o, a->service);
    ch_rb_u8(o, (uint64_t)a->kind);
    ch_rb_u32(o, (uint64_t)a->minute);
    ch_rb_u64(o, a->windows);
    ch_rb_u64(o, a->nrows);
    ch_rb_u64(o, a->samples);
    ch_rb_u64(o, a->value);
    jp_strbuf_put_varint(o, a->nthreads);
    for (size_t i = 0; i < a->nthreads; i++)
        ch_rb_cstr(o, a->threads[i]);
    ch_rb_str(o, z, zlen);
    free(z);
}

#define CH_ROLLUP_COLS                                                                             \
    "day, ns, service, kind, minute, windows, nrows, samples, value, threads, blob"

void ch_rollup_flush(ch_store *st, bool all)
{
    ch_rollup *r = st->rollup;
    int64_t now = store_now_ns(), mono = jp_time_mono_ns();
    jp_strbuf rows;
    jp_strbuf_init(&rows, 0);
    pthread_mutex_lock(&r->mu);
    all |= r->entries > CH_ROLLUP_ENTRIES;
    size_t keep = 0, ndone = 0;
    // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
    ch_racc **done = jp_xcalloc(r->n + 1, sizeof *done);
    for (size_t i = 0; i < r->n; i++) {
        ch_racc *a = r->acc[i];
        if (all || mono - a->born >= CH_ROLLUP_AGE ||
            ((a->minute + 1) * CH_MINUTE_NS + CH_ROLLUP_DELAY <= now &&
             mono - a->last >= CH_ROLLUP_IDLE)) {
            r->entries -= a->agg.n;
            r->pending -= a->pending;
            done[ndone++] = a;
        } else {
            r->acc[keep++] = a;
        }
    }
    if (keep != r->n) {
        r->n = keep;
        jp_u64map_clear(&r->idx);
        for (size_t i = 0; i < r->n; i++) {
            ch_racc *a = r->acc[i];
            uint64_t key = ch_racc_key(a->ns, a->service, a->kind, a->minute), v;
            while (jp_u64map_get(&r->idx, key, &v))
                key++;
            jp_u64map_put(&r->idx, key, i + 1);
        }
    }
    pthread_mutex_unlock(&r->mu);
    /* summed and encoded outside the lock: commits go on filing meanwhile */
    for (size_t i = 0; i < ndone; i++) {
        ch_racc_encode(done[i], &rows);
        ch_racc_free(done[i]);
    }
    free(done);
    if (!rows.len) {
        jp_strbuf_cleanup(&rows);
        return;
    }
    /* no deduplication: two flushes may carry equal rows, both are meant */
    char settings[96];
    snprintf(settings, sizeof settings, "insert_deduplicate=0%s%s", st->insert_settings ? "&" : "",
             st->insert_settings ? st->insert_settings : "");
    jp_error e;
    jp_error_init(&e);
    /* lost on failure: those minutes are read from the raw rows */
    if (ch_insert_fmt(st, "jprof_rollup", CH_ROLLUP_COLS, "RowBinary", &rows, settings, &e)) {
        pthread_mutex_lock(&st->mu);
        st->rollup_errors++;
        pthread_mutex_unlock(&st->mu);
    }
    jp_strbuf_cleanup(&rows);
}

void ch_rollup_init(ch_store *st)
{
    ch_rollup *r = jp_xcalloc(1, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    jp_u64map_init(&r->idx);
    st->rollup = r;
}

void ch_rollup_cleanup(ch_store *st)
{
    ch_rollup *r = st->rollup;
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        ch_racc_free(r->acc[i]);
    free(r->acc);
    jp_u64map_cleanup(&r->idx);
    pthread_mutex_destroy(&r->mu);
    free(r);
    st->rollup = NULL;
}
