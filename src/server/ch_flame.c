/* ch_flame.c - the ClickHouse store's flame op.
 *
 * A service-level flame query reads each whole minute of the range from
 * jprof_rollup (every pod of the service summed per stack and thread,
 * ch_rollup.c) when that minute's roll-up rows cover exactly its visible
 * windows in jprof_windows: same number of windows, of stack rows, of
 * samples and of value. Every other minute (the partial ones at the edges,
 * the ones whose roll-up is missing, incomplete or doubled, all of a
 * pod-filtered query) comes from the windows' own blobs. Either way the sums
 * are those of the committed windows, so the answer is the same.
 *
 * ClickHouse selects the blobs (by partition, sort key and visibility);
 * they are decoded and summed here, per (stack, thread), with memory bound
 * by distinct stacks (the embedded store's aggregation, winblob.h); the
 * heaviest stacks then get their frames (kept in memory once read, else
 * from jprof_stacks a chunk at a time), and go to the caller heaviest
 * first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/ch_int.h"
#include "server/winblob.h"

#define CQ_FRAMES_CHUNK 4096 /* stacks per frames query */

#define CQ_RUNS_MAX 64 /* ranges of roll-up minutes in one query */

typedef struct cq_minute {
    int64_t minute;
    uint64_t windows, rows, samples, value;
} cq_minute;

typedef struct cq_tot {
    store_flame_totals *t;
    uint64_t nrows;
    cq_minute *mins; /* minutes with visible windows, ascending */
    size_t nmins, mins_cap;
    int64_t last_end;
} cq_tot;

/* minute, windows, events, dropped, truncated, period (of the latest end),
 * first start, last end, rows, samples, value */
static bool cq_totals_row(json_t *row, void *ctx)
{
    cq_tot *c = ctx;
    store_flame_totals *t = c->t;
    uint64_t windows = ch_u64(row, 1);
    if (!windows)
        return true;
    int64_t first = ch_i64(row, 6), last = ch_i64(row, 7);
    if (!t->windows || first < t->first_ns)
        t->first_ns = first;
    if (!t->windows || last >= c->last_end) {
        c->last_end = last;
        t->last_ns = last;
        t->period_ns = ch_i64(row, 5);
    }
    t->windows += windows;
    t->events += ch_u64(row, 2);
    t->any_dropped |= ch_u64(row, 3) != 0;
    t->any_truncated |= ch_u64(row, 4) != 0;
    uint64_t rows = ch_u64(row, 8);
    c->nrows += rows;
    c->mins = jp_xgrow(c->mins, &c->mins_cap, c->nmins + 1, sizeof *c->mins);
    c->mins[c->nmins++] = (cq_minute){.minute = ch_i64(row, 0),
                                      .windows = windows,
                                      .rows = rows,
                                      .samples = ch_u64(row, 9),
                                      .value = ch_u64(row, 10)};
    return true;
}

typedef struct cq_runs {
    const cq_tot *tot;
    size_t at;                                /* next minute of tot to compare */
    int64_t lo[CQ_RUNS_MAX], hi[CQ_RUNS_MAX]; /* roll-up minutes, inclusive */
    size_t n;
    uint64_t minutes; /* minutes read from the roll-up */
} cq_runs;

/* minute, windows, rows, samples, value of the roll-up rows, summed per
 * minute, ascending: a minute that matches its windows joins (or starts) a
 * run */
static bool cq_marker_row(json_t *row, void *ctx)
{
    cq_runs *r = ctx;
    const cq_tot *t = r->tot;
    int64_t minute = ch_i64(row, 0);
    while (r->at < t->nmins && t->mins[r->at].minute < minute)
        r->at++;
    if (r->at >= t->nmins || t->mins[r->at].minute != minute)
        return true;
    const cq_minute *m = &t->mins[r->at];
    if (m->windows != ch_u64(row, 1) || m->rows != ch_u64(row, 2) || m->samples != ch_u64(row, 3) ||
        m->value != ch_u64(row, 4))
        return true;
    r->minutes++;
    if (r->n && r->hi[r->n - 1] == minute - 1) {
        r->hi[r->n - 1] = minute;
        return true;
    }
    if (r->n == CQ_RUNS_MAX) {
        r->minutes--; /* read raw: the query stays small */
        return true;
    }
    r->lo[r->n] = r->hi[r->n] = minute;
    r->n++;
    return true;
}

/* " AND day ..." of the range (both tables' partitions) */
static void cq_days_where(cq *q)
{
    jp_strbuf_puts(&q->sql, "day >= '");
    ch_day_str(&q->sql, store_day_of(q->f->from_ns));
    jp_strbuf_puts(&q->sql, "' AND day <= '");
    ch_day_str(&q->sql, store_day_of(q->f->to_ns - 1));
    jp_strbuf_puts(&q->sql, "'");
}

/* The minutes of the range that the roll-up can serve, as runs. */
static jp_err cq_rollup_runs(cq *q, const cq_tot *tot, cq_runs *runs, jp_error *err)
{
    const store_filter *f = q->f;
    memset(runs, 0, sizeof *runs);
    runs->tot = tot;
    if (f->pod || f->from_ns < 0 || !tot->nmins)
        return JP_OK;
    /* whole minutes inside [from, to) */
    int64_t lo = (f->from_ns + CH_MINUTE_NS - 1) / CH_MINUTE_NS, hi = f->to_ns / CH_MINUTE_NS - 1;
    if (lo > hi)
        return JP_OK;
    jp_strbuf_reset(&q->sql);
    jp_strbuf_puts(&q->sql, "SELECT minute, sum(windows), sum(nrows), sum(samples), sum(value) "
                            "FROM jprof_rollup WHERE ");
    cq_days_where(q);
    cq_eq(&q->sql, "ns", f->ns);
    cq_eq(&q->sql, "service", f->service);
    jp_strbuf_printf(&q->sql,
                     " AND kind = %d AND minute >= %lld AND minute <= %lld "
                     "GROUP BY minute ORDER BY minute",
                     f->kind, (long long)lo, (long long)hi);
    ch_result res;
    return cq_run(q, cq_marker_row, runs, &res, err);
}

/* The running aggregate of the blobs read. */
typedef struct cf {
    cq *q;
    wb_agg agg;
    uint64_t want_thread; /* wb_thread_id of the thread filter, 0 none */
    jp_u64map tidx;       /* thread id -> index + 1 into names */
    char **names;
    size_t nnames, names_cap;
    uint64_t rows; /* stack rows decoded */
    uint8_t *raw, *buf;
    size_t raw_cap, buf_cap;
    ZSTD_DCtx *dctx;
    uint64_t bad; /* blobs that did not decode */
    bool stop;    /* a budget ran out */
} cf;

static void cf_name(cf *c, const char *name, size_t len)
{
    uint64_t tid = wb_thread_id(name, len);
    bool fresh;
    jp_u64map_upsert(&c->tidx, tid, c->nnames + 1, &fresh);
    if (!fresh)
        return;
    c->names = jp_xgrow(c->names, &c->names_cap, c->nnames + 1, sizeof *c->names);
    c->names[c->nnames++] = jp_xstrndup(name, len);
}

static const char *cf_thread(const cf *c, uint64_t tid)
{
    uint64_t v;
    return tid && jp_u64map_get(&c->tidx, tid, &v) ? c->names[v - 1] : NULL;
}

static int cf_hex(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* Stops reading when a budget ran out (the answer says which). */
static bool cf_budget(cf *c)
{
    const store_budget *b = c->q->b;
    if (b && b->max_rows && c->rows > b->max_rows) {
        store_info_partial(c->q->info, "row budget of %llu rows exceeded",
                           (unsigned long long)b->max_rows);
        c->stop = true;
    } else if (b && b->max_stacks && c->agg.n > b->max_stacks) {
        store_info_partial(c->q->info, "more than %llu distinct stacks",
                           (unsigned long long)b->max_stacks);
        c->stop = true;
    } else if (store_info_time_over(c->q->info, b, c->q->t0)) {
        c->stop = true;
    }
    return !c->stop;
}

/* nrows, threads, hex(blob) of a window or a roll-up minute */
static bool cf_blob_row(json_t *row, void *ctx)
{
    cf *c = ctx;
    json_t *th = json_array_get(row, 1);
    for (size_t i = 0; i < json_array_size(th); i++) {
        json_t *n = json_array_get(th, i);
        if (json_is_string(n))
            cf_name(c, json_string_value(n), json_string_length(n));
    }
    size_t hl;
    const char *hex = ch_str(row, 2, &hl);
    if (!hex || hl % 2) {
        c->bad++;
        return true;
    }
    c->raw = jp_xgrow(c->raw, &c->raw_cap, hl / 2 + 1, 1);
    for (size_t i = 0; i < hl / 2; i++) {
        int hi = cf_hex(hex[2 * i]), lo = cf_hex(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            c->bad++;
            return true;
        }
        c->raw[i] = (uint8_t)(hi << 4 | lo);
    }
    size_t len;
    if (!wb_unpack(c->dctx, c->raw, hl / 2, ch_u64(row, 0), &c->buf, &c->buf_cap, &len) ||
        !wb_decode(c->buf, len, c->want_thread, &c->agg, &c->rows))
        c->bad++;
    return cf_budget(c);
}

/* stack_id, thread, samples, value of a schema 1-2 jprof_samples */
static bool cf_flat_row(json_t *row, void *ctx)
{
    cf *c = ctx;
    size_t tl;
    const char *t = ch_str(row, 1, &tl);
    uint64_t tid = 0;
    if (t) {
        cf_name(c, t, tl);
        tid = wb_thread_id(t, tl);
    }
    wb_agg_add(&c->agg, ch_u64(row, 0), tid, ch_u64(row, 2), ch_u64(row, 3));
    c->rows++;
    return cf_budget(c);
}

/* " AND (col in the ranges)" */
static void cf_ranges(jp_strbuf *s, const char *col, const int64_t (*r)[2], size_t n)
{
    jp_strbuf_puts(s, " AND (");
    for (size_t i = 0; i < n; i++)
        jp_strbuf_printf(s, "%s(%s >= %lld AND %s < %lld)", i ? " OR " : "", col,
                         (long long)r[i][0], col, (long long)r[i][1]);
    jp_strbuf_puts(s, ")");
}

/* Reads the raw windows in the gaps between the roll-up runs, then the
 * roll-up of the runs, into c. */
static jp_err cf_read(cf *c, const cq_runs *runs, jp_error *err)
{
    cq *q = c->q;
    const store_filter *f = q->f;
    int64_t at = f->from_ns, gaps[CQ_RUNS_MAX + 1][2], mins[CQ_RUNS_MAX][2];
    size_t ngaps = 0;
    for (size_t i = 0; i <= runs->n; i++) {
        int64_t end = i < runs->n ? runs->lo[i] * CH_MINUTE_NS : f->to_ns;
        if (end > at) {
            gaps[ngaps][0] = at;
            gaps[ngaps++][1] = end;
        }
        if (i < runs->n) {
            at = (runs->hi[i] + 1) * CH_MINUTE_NS;
            mins[i][0] = runs->lo[i];
            mins[i][1] = runs->hi[i] + 1;
        }
    }
    ch_result res;
    jp_err rc = JP_OK;
    /* raw: the windows' blobs; a schema 1-2 window has none, its rows are
     * in jprof_samples */
    for (int legacy = 0; ngaps && !rc && !c->stop && legacy <= q->st->legacy_samples; legacy++) {
        jp_strbuf_reset(&q->sql);
        jp_strbuf_puts(&q->sql, legacy ? "SELECT stack_id, thread, sum(samples), sum(value) FROM "
                                         "jprof_samples"
                                       : "SELECT nrows, threads, hex(blob) FROM jprof_windows");
        cq_where(q, "start_ns", true);
        if (legacy)
            cq_eq(&q->sql, "thread", f->thread);
        else
            jp_strbuf_puts(&q->sql, " AND blob != ''");
        if (runs->n)
            cf_ranges(&q->sql, "start_ns", (const int64_t(*)[2])gaps, ngaps);
        if (legacy)
            jp_strbuf_puts(&q->sql, " GROUP BY stack_id, thread");
        rc = cq_run(q, legacy ? cf_flat_row : cf_blob_row, c, &res, err);
    }
    if (!rc && !c->stop && runs->n) {
        jp_strbuf_reset(&q->sql);
        jp_strbuf_puts(&q->sql, "SELECT nrows, threads, hex(blob) FROM jprof_rollup WHERE ");
        cq_days_where(q);
        cq_eq(&q->sql, "ns", f->ns);
        cq_eq(&q->sql, "service", f->service);
        jp_strbuf_printf(&q->sql, " AND kind = %d", f->kind);
        cf_ranges(&q->sql, "minute", (const int64_t(*)[2])mins, runs->n);
        rc = cq_run(q, cf_blob_row, c, &res, err);
    }
    if (!rc && c->bad)
        store_info_partial(q->info, "%llu stored windows could not be read",
                           (unsigned long long)c->bad);
    return rc;
}

/* A cell and the rank of its thread's name, for sorting. */
typedef struct cf_sorted {
    wb_cell c;
    size_t rank;
} cf_sorted;

/* heaviest first; ties by stack, then thread name */
static int cf_sorted_cmp(const void *x, const void *y)
{
    const cf_sorted *a = x, *b = y;
    if (a->c.value != b->c.value)
        return a->c.value > b->c.value ? -1 : 1;
    if (a->c.stack != b->c.stack)
        return a->c.stack < b->c.stack ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static int cf_str_cmp(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Orders the compacted cells (names sorted once, ranks compared after). */
static void cf_sort(cf *c)
{
    size_t n = c->agg.n;
    char **sorted = jp_xcalloc(c->nnames + 1, sizeof *sorted);
    memcpy(sorted, c->names, c->nnames * sizeof *sorted);
    qsort(sorted, c->nnames, sizeof *sorted, cf_str_cmp);
    jp_u64map rank; /* thread id -> rank + 1 */
    jp_u64map_init(&rank);
    for (size_t i = 0; i < c->nnames; i++)
        jp_u64map_put(&rank, wb_thread_id(sorted[i], strlen(sorted[i])), i + 1);
    cf_sorted *v = jp_xcalloc(n + 1, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = 0;
        if (c->agg.cells[i].thread)
            jp_u64map_get(&rank, c->agg.cells[i].thread, &r);
        v[i] = (cf_sorted){.c = c->agg.cells[i], .rank = r};
    }
    qsort(v, n, sizeof *v, cf_sorted_cmp);
    for (size_t i = 0; i < n; i++)
        c->agg.cells[i] = v[i].c;
    free(v);
    free(sorted);
    jp_u64map_cleanup(&rank);
}

/* ---- frames ----
 * The frames of a stack never change, and the same stacks come back in
 * query after query (a dashboard, a service's pods): they are kept here,
 * per store, up to CH_FRAMES_CACHE bytes, and only the stacks not cached
 * are asked from jprof_stacks. An entry is immutable and counted: a query
 * holds its own reference while it hands the frames to its caller, so
 * dropping the cache (when full) never pulls them away. */

#define CH_FRAMES_CACHE (64u << 20)

typedef struct ch_fent {
    int refs; /* __atomic */
    uint32_t depth;
    bool truncated, kinds; /* kinds: every frame's kind is known */
    size_t bytes;
    const char **names;
    size_t *lens;
    uint8_t *kind;
} ch_fent;

struct ch_frames {
    pthread_rwlock_t lock;
    jp_u64map idx; /* stack id -> (uintptr_t)entry */
    size_t bytes;
};

static void ch_fent_unref(ch_fent *e)
{
    if (e && __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(e);
}

void ch_frames_init(ch_store *st)
{
    ch_frames *f = jp_xcalloc(1, sizeof *f);
    pthread_rwlock_init(&f->lock, NULL);
    jp_u64map_init(&f->idx);
    st->frames = f;
}

static void ch_frames_clear(ch_frames *f)
{
    for (size_t i = 0; i < f->idx.cap; i++)
        if (f->idx.used[i])
            ch_fent_unref((ch_fent *)(uintptr_t)f->idx.vals[i]);
    jp_u64map_clear(&f->idx);
    f->bytes = 0;
}

void ch_frames_cleanup(ch_store *st)
{
    ch_frames *f = st->frames;
    if (!f)
        return;
    ch_frames_clear(f);
    jp_u64map_cleanup(&f->idx);
    pthread_rwlock_destroy(&f->lock);
    free(f);
    st->frames = NULL;
}

/* An entry (one reference, the caller's) from a row stack_id, truncated,
 * frames, kinds. */
static ch_fent *ch_fent_new(json_t *row)
{
    json_t *fr = json_array_get(row, 2), *kj = json_array_get(row, 3);
    size_t depth = json_array_size(fr), text = 0;
    for (size_t i = 0; i < depth; i++)
        text += json_is_string(json_array_get(fr, i))
                    ? json_string_length(json_array_get(fr, i)) + 1
                    : 2;
    size_t bytes = sizeof(ch_fent) + depth * (sizeof(char *) + sizeof(size_t) + 1) + text;
    ch_fent *e = jp_xcalloc(1, bytes);
    e->refs = 1;
    e->depth = (uint32_t)depth;
    e->truncated = ch_u64(row, 1) != 0;
    e->bytes = bytes;
    e->names = (const char **)(e + 1);
    e->lens = (size_t *)(e->names + depth);
    e->kind = (uint8_t *)(e->lens + depth);
    char *p = (char *)(e->kind + depth);
    /* the frame kinds when stored for every frame (an older row has []) */
    e->kinds = json_array_size(kj) == depth && depth;
    for (size_t i = 0; i < depth; i++) {
        json_t *v = json_array_get(fr, i);
        const char *n = json_is_string(v) ? json_string_value(v) : "?";
        size_t len = json_is_string(v) ? json_string_length(v) : 1;
        memcpy(p, n, len);
        p[len] = '\0';
        e->names[i] = p;
        e->lens[i] = len;
        p += len + 1;
        json_int_t k = e->kinds ? json_integer_value(json_array_get(kj, i)) : 0;
        e->kind[i] = k >= 0 && k < JP_FRAME_KIND_COUNT ? (uint8_t)k : JP_FRAME_UNKNOWN;
    }
    return e;
}

/* An entry (one reference, the caller's) of a batch's stack. */
static ch_fent *ch_fent_of_batch(const jp_batch *b, uint32_t si)
{
    const jp_batch_stack *s = &b->stacks[si];
    size_t depth = s->depth, text = 0;
    for (size_t i = 0; i < depth; i++)
        text += strlen(b->frames[s->frames[i]]) + 1;
    size_t bytes = sizeof(ch_fent) + depth * (sizeof(char *) + sizeof(size_t) + 1) + text;
    ch_fent *e = jp_xcalloc(1, bytes);
    e->refs = 1;
    e->depth = (uint32_t)depth;
    e->truncated = s->truncated;
    e->bytes = bytes;
    e->names = (const char **)(e + 1);
    e->lens = (size_t *)(e->names + depth);
    e->kind = (uint8_t *)(e->lens + depth);
    e->kinds = b->nframe_kinds && depth;
    char *p = (char *)(e->kind + depth);
    for (size_t i = 0; i < depth; i++) {
        const char *n = b->frames[s->frames[i]];
        size_t len = strlen(n);
        memcpy(p, n, len + 1);
        e->names[i] = p;
        e->lens[i] = len;
        p += len + 1;
        e->kind[i] = e->kinds ? (uint8_t)jp_batch_frame_kind(b, s->frames[i]) : JP_FRAME_UNKNOWN;
    }
    return e;
}

/* The cached entry of a stack with a reference for the caller, or NULL. */
static ch_fent *ch_frames_get(ch_frames *f, uint64_t stack)
{
    uint64_t v;
    ch_fent *e = NULL;
    pthread_rwlock_rdlock(&f->lock);
    if (jp_u64map_get(&f->idx, stack, &v)) {
        e = (ch_fent *)(uintptr_t)v;
        __atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
    }
    pthread_rwlock_unlock(&f->lock);
    return e;
}

static void ch_frames_put(ch_frames *f, uint64_t stack, ch_fent *e)
{
    pthread_rwlock_wrlock(&f->lock);
    uint64_t v;
    if (!jp_u64map_get(&f->idx, stack, &v)) {
        if (f->bytes + e->bytes > CH_FRAMES_CACHE)
            ch_frames_clear(f);
        __atomic_add_fetch(&e->refs, 1, __ATOMIC_ACQ_REL);
        jp_u64map_put(&f->idx, stack, (uint64_t)(uintptr_t)e);
        f->bytes += e->bytes;
    }
    pthread_rwlock_unlock(&f->lock);
}

void ch_frames_remember(ch_store *st, const jp_batch *b, uint32_t si)
{
    ch_fent *e = ch_fent_of_batch(b, si);
    ch_frames_put(st->frames, b->stacks[si].id, e);
    ch_fent_unref(e);
}

typedef struct cf_emit {
    store_stack_cb cb;
    void *ctx;
    uint64_t missing;
    bool stopped;
} cf_emit;

/* A chunk's entries: stack id -> entry (a reference each). */
typedef struct cf_chunk {
    jp_u64map idx;
    ch_frames *cache;
} cf_chunk;

/* stack_id, truncated, frames, kinds of a stack not cached */
static bool cf_frames_row(json_t *row, void *ctx)
{
    cf_chunk *k = ctx;
    uint64_t stack = ch_u64(row, 0), v;
    if (jp_u64map_get(&k->idx, stack, &v) && v)
        return true;
    ch_fent *e = ch_fent_new(row);
    ch_frames_put(k->cache, stack, e);
    jp_u64map_put(&k->idx, stack, (uint64_t)(uintptr_t)e);
    return true;
}

static void cf_emit_one(cf_emit *e, const cf *c, const wb_cell *cell, const ch_fent *f)
{
    store_stack_row r = {.stack_id = cell->stack,
                         .frames = f->names,
                         .frame_lens = f->lens,
                         .frame_kinds = f->kinds ? f->kind : NULL,
                         .depth = f->depth,
                         .truncated = f->truncated,
                         .thread = cf_thread(c, cell->thread),
                         .samples = cell->samples,
                         .value = cell->value};
    e->stopped = !e->cb(&r, e->ctx);
}

/* The cells in order, a chunk of stacks at a time: their frames from the
 * cache, the rest from jprof_stacks in one query. */
static jp_err cf_emit_all(cf *c, cf_emit *e, jp_error *err)
{
    cq *q = c->q;
    const wb_cell *cells = c->agg.cells;
    size_t n = c->agg.n;
    jp_err rc = JP_OK;
    for (size_t at = 0; at < n && !rc && !e->stopped;) {
        cf_chunk k = {.cache = q->st->frames};
        jp_u64map_init(&k.idx);
        jp_strbuf_reset(&q->sql);
        jp_strbuf_puts(&q->sql, "SELECT stack_id, any(truncated), any(frames), any(kinds) FROM "
                                "jprof_stacks WHERE ");
        cq_days_where(q);
        jp_strbuf_puts(&q->sql, " AND stack_id IN (");
        size_t end = at, ask = 0;
        for (; end < n && k.idx.count < CQ_FRAMES_CHUNK; end++) {
            uint64_t v;
            if (jp_u64map_get(&k.idx, cells[end].stack, &v))
                continue;
            ch_fent *f = ch_frames_get(k.cache, cells[end].stack);
            jp_u64map_put(&k.idx, cells[end].stack, (uint64_t)(uintptr_t)f);
            if (!f)
                jp_strbuf_printf(&q->sql, "%s%llu", ask++ ? "," : "",
                                 (unsigned long long)cells[end].stack);
        }
        jp_strbuf_puts(&q->sql, ") GROUP BY stack_id");
        ch_result res;
        if (ask)
            rc = cq_run(q, cf_frames_row, &k, &res, err);
        for (; !rc && at < end && !e->stopped; at++) {
            uint64_t v = 0;
            jp_u64map_get(&k.idx, cells[at].stack, &v);
            if (v)
                cf_emit_one(e, c, &cells[at], (const ch_fent *)(uintptr_t)v);
            else
                e->missing++;
        }
        at = end;
        for (size_t i = 0; i < k.idx.cap; i++)
            if (k.idx.used[i])
                ch_fent_unref((ch_fent *)(uintptr_t)k.idx.vals[i]);
        jp_u64map_cleanup(&k.idx);
    }
    return rc;
}

static void cf_cleanup(cf *c)
{
    wb_agg_free(&c->agg);
    jp_u64map_cleanup(&c->tidx);
    for (size_t i = 0; i < c->nnames; i++)
        free(c->names[i]);
    free(c->names);
    free(c->raw);
    free(c->buf);
    ZSTD_freeDCtx(c->dctx);
}

jp_err ch_flame(store *s, const store_filter *f, const store_budget *b, store_stack_cb cb,
                void *ctx, store_flame_totals *totals, store_query_info *info, jp_error *err)
{
    cq q;
    cq_init(&q, s, f, b, info); /* store_flame checked f and zeroed *totals */
    ch_result res;
    jp_strbuf_printf(&q.sql,
                     "SELECT intDiv(start_ns, %lld) AS mi, count(), sum(events), max(dropped), "
                     "max(truncated), argMax(period_ns, end_ns), min(start_ns), max(end_ns), "
                     "sum(nrows), sum(samples), sum(value) FROM jprof_windows",
                     (long long)CH_MINUTE_NS);
    cq_where(&q, "start_ns", true);
    jp_strbuf_puts(&q.sql, " GROUP BY mi ORDER BY mi");
    cq_tot tot = {.t = totals};
    cq_runs runs;
    cf c = {.q = &q, .dctx = ZSTD_createDCtx()};
    cf_emit e = {.cb = cb, .ctx = ctx};
    jp_u64map_init(&c.tidx);
    if (f->thread)
        c.want_thread = wb_thread_id(f->thread, strlen(f->thread));
    jp_err rc = cq_run(&q, cq_totals_row, &tot, &res, err);
    /* a partial answer stops here when a budget ran out, not when a shard
     * is missing (the rest is read from the others) */
    if (!rc && (!info->partial || q.shard_gone))
        rc = cq_rollup_runs(&q, &tot, &runs, err);
    if (rc || (info->partial && !q.shard_gone))
        goto out;
    info->windows_scanned = totals->windows;
    rc = cf_read(&c, &runs, err);
    if (rc)
        goto out;
    wb_agg_compact(&c.agg);
    if (c.agg.n > 1)
        cf_sort(&c);
    /* the heaviest stacks first, so a cut answer keeps what matters */
    if (b && b->max_stacks && c.agg.n > b->max_stacks)
        c.agg.n = b->max_stacks;
    rc = cf_emit_all(&c, &e, err);
    if (!rc && e.stopped)
        info->stopped = true;
    if (!rc && e.missing)
        store_info_partial(info, "a stack of a stored window is missing");
    /* what the caller calls rows: the stack rows read (roll-up rows count
     * as one each) */
    info->rows_scanned = c.rows;
out:
    free(tot.mins);
    cf_cleanup(&c);
    return cq_done(&q, rc);
}
