/* The embedded store's read side. Every query opens the day files it needs
 * read-only (WAL lets it run while the writer commits), reads only the rows
 * its filter and time range select, and keeps memory bounded by distinct
 * targets or stacks, never by rows. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/sqlite_int.h"

/* ---- common pieces ---- */

typedef struct sq_q {
    sq_store *st;
    const store_filter *f;
    const store_budget *b;
    store_query_info *info;
    int64_t t0;
} sq_q;

static void q_init(sq_q *q, store *s, const store_filter *f, const store_budget *b,
                   store_query_info *info)
{
    q->st = s->impl;
    q->f = f;
    q->b = b;
    q->info = info;
    q->t0 = jp_time_mono_ns();
    memset(info, 0, sizeof *info);
}

static jp_err q_done(sq_q *q, jp_err rc)
{
    sq_stats_query(q->st, jp_time_mono_ns() - q->t0, rc != JP_OK);
    return rc;
}

/* True when a budget has run out (and marks the answer partial). */
static bool q_over(sq_q *q, uint64_t next_rows)
{
    if (store_info_time_over(q->info, q->b, q->t0))
        return true;
    if (q->b && q->b->max_rows && q->info->rows_scanned + next_rows > q->b->max_rows) {
        store_info_partial(q->info, "row budget of %llu rows exceeded",
                           (unsigned long long)q->b->max_rows);
        return true;
    }
    return false;
}

/* Days with files in [from, to), ascending. */
static size_t q_days(sq_q *q, int64_t *days)
{
    int64_t all[SQ_MAX_DAYS];
    size_t n = sq_list_days(q->st, all, SQ_MAX_DAYS), out = 0;
    int64_t lo = store_day_of(q->f->from_ns), hi = store_day_of(q->f->to_ns - 1);
    for (size_t i = 0; i < n; i++)
        if (all[i] >= lo && all[i] <= hi)
            days[out++] = all[i];
    return out;
}

static const char q_target_sql[] =
    "SELECT id,ns,service,pod,cluster,workload,container,node,pid,jvm_start,jvm FROM targets "
    "WHERE (?1 IS NULL OR ns=?1) AND (?2 IS NULL OR service=?2) AND (?3 IS NULL OR pod=?3) "
    "ORDER BY ns,service,pod";

static sqlite3_stmt *q_targets_stmt(sqlite3 *db, const store_filter *f)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, q_target_sql, -1, &s, NULL) != SQLITE_OK)
        return NULL;
    if (f->ns)
        sqlite3_bind_text(s, 1, f->ns, -1, SQLITE_STATIC);
    if (f->service)
        sqlite3_bind_text(s, 2, f->service, -1, SQLITE_STATIC);
    if (f->pod)
        sqlite3_bind_text(s, 3, f->pod, -1, SQLITE_STATIC);
    return s;
}

static char *q_col_dup(sqlite3_stmt *s, int i)
{
    const char *t = (const char *)sqlite3_column_text(s, i);
    return t && *t ? jp_xstrdup(t) : NULL;
}

/* Target identity from columns first..first+10 of a q_target_sql-shaped row. */
static void q_target_read(sqlite3_stmt *s, int first, jp_batch_target *t)
{
    t->ns = q_col_dup(s, first + 1);
    t->service = q_col_dup(s, first + 2);
    t->pod = q_col_dup(s, first + 3);
    t->cluster = q_col_dup(s, first + 4);
    t->workload = q_col_dup(s, first + 5);
    t->container = q_col_dup(s, first + 6);
    t->node = q_col_dup(s, first + 7);
    t->pid = sqlite3_column_int64(s, first + 8);
    t->jvm_start_ns = sqlite3_column_int64(s, first + 9);
    t->jvm = q_col_dup(s, first + 10);
}

static int q_strcmp0(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int q_target_cmp(const jp_batch_target *a, const jp_batch_target *b)
{
    int c = q_strcmp0(a->ns, b->ns);
    if (!c)
        c = q_strcmp0(a->service, b->service);
    if (!c)
        c = q_strcmp0(a->pod, b->pod);
    return c;
}

static jp_err q_open_fail(sq_q *q, int64_t day, const jp_error *e)
{
    char d[16];
    store_day_format(day, d, sizeof d);
    (void)e;
    q->info->partial = true;
    snprintf(q->info->partial_reason, sizeof q->info->partial_reason, "day %s unreadable", d);
    return JP_OK;
}

/* One day of the query read-only, or NULL with the query marked partial:
 * an unreadable day costs its rows, not the whole answer. */
static sqlite3 *q_open_day(sq_q *q, int64_t day)
{
    jp_error e;
    jp_error_init(&e);
    sqlite3 *db = sq_open_ro(q->st, day, &e);
    if (!db)
        q_open_fail(q, day, &e);
    return db;
}

/* ---- rows keyed across days (targets, ingestion) ---- */

/* Entries of `size` bytes, one per key, in the order first seen: the day
 * functions fill them, q_keyed_collect() sorts them, the caller frees their
 * contents and then q_keyed_cleanup(). */
typedef struct q_keyed {
    void *list;
    size_t n, cap, size;
    jp_u64map idx;
} q_keyed;

/* The entry of `key`; a new one is zeroed and *fresh set. Valid until the
 * next call (the list may move). */
static void *q_keyed_get(q_keyed *k, uint64_t key, bool *fresh)
{
    uint64_t v;
    *fresh = !jp_u64map_get(&k->idx, key, &v);
    if (*fresh) {
        k->list = jp_xgrow(k->list, &k->cap, k->n + 1, k->size);
        v = k->n++;
        memset((char *)k->list + v * k->size, 0, k->size);
        jp_u64map_put(&k->idx, key, v);
    }
    return (char *)k->list + v * k->size;
}

/* Hands every day of the query to `day`, oldest first, while the budget
 * lasts; then sorts the entries with `cmp`. */
static void q_keyed_collect(sq_q *q, q_keyed *k, size_t size,
                            void (*day)(sq_q *q, sqlite3 *db, q_keyed *k),
                            int (*cmp)(const void *, const void *))
{
    k->list = NULL;
    k->n = k->cap = 0;
    k->size = size;
    jp_u64map_init(&k->idx);
    int64_t days[SQ_MAX_DAYS];
    size_t nd = q_days(q, days);
    for (size_t i = 0; i < nd && !q_over(q, 0); i++) {
        sqlite3 *db = q_open_day(q, days[i]);
        if (!db)
            continue;
        day(q, db, k);
        sqlite3_close(db);
    }
    if (k->n)
        qsort(k->list, k->n, k->size, cmp);
}

static void q_keyed_cleanup(q_keyed *k)
{
    free(k->list);
    jp_u64map_cleanup(&k->idx);
}

/* ---- targets ---- */

typedef struct q_tentry {
    jp_batch_target t;
    uint32_t kinds;
    uint64_t windows;
    int64_t first, last, status_time, until;
    char *state, *reason, *mode;
} q_tentry;

static int q_tentry_cmp(const void *a, const void *b)
{
    return q_target_cmp(&((const q_tentry *)a)->t, &((const q_tentry *)b)->t);
}

static q_tentry *q_tentry_find(q_keyed *k, sqlite3_stmt *ts)
{
    const char *ns = (const char *)sqlite3_column_text(ts, 1);
    const char *sv = (const char *)sqlite3_column_text(ts, 2);
    const char *pod = (const char *)sqlite3_column_text(ts, 3);
    bool fresh;
    q_tentry *e = q_keyed_get(k, sq_target_key(ns, sv, pod), &fresh);
    if (fresh)
        q_target_read(ts, 0, &e->t);
    return e;
}

static void q_targets_day(sq_q *q, sqlite3 *db, q_keyed *k)
{
    sqlite3_stmt *ts = q_targets_stmt(db, q->f), *ws = NULL, *ss = NULL;
    sqlite3_prepare_v2(db,
                       "SELECT kind,count(*),min(start),max(end) FROM windows WHERE target=?1 "
                       "AND start>=?2 AND start<?3 GROUP BY kind",
                       -1, &ws, NULL);
    sqlite3_prepare_v2(
        db,
        "SELECT time,state,reason,mode,until_time FROM statuses WHERE target=?1 AND time>=?2 AND "
        "time<?3 ORDER BY time DESC LIMIT 1",
        -1, &ss, NULL);
    while (ts && ws && ss && sqlite3_step(ts) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(ts, 0);
        q->info->rows_scanned++;
        q_tentry *e = NULL;
        sqlite3_bind_int64(ws, 1, id);
        sqlite3_bind_int64(ws, 2, q->f->from_ns);
        sqlite3_bind_int64(ws, 3, q->f->to_ns);
        while (sqlite3_step(ws) == SQLITE_ROW) {
            if (!e)
                e = q_tentry_find(k, ts);
            int kind = sqlite3_column_int(ws, 0);
            int64_t first = sqlite3_column_int64(ws, 2), last = sqlite3_column_int64(ws, 3);
            if (kind >= 0 && kind < JP_KIND_COUNT)
                e->kinds |= 1u << kind;
            e->windows += (uint64_t)sqlite3_column_int64(ws, 1);
            if (!e->first || first < e->first)
                e->first = first;
            if (last > e->last)
                e->last = last;
        }
        sqlite3_reset(ws);
        sqlite3_bind_int64(ss, 1, id);
        sqlite3_bind_int64(ss, 2, q->f->from_ns);
        sqlite3_bind_int64(ss, 3, q->f->to_ns);
        if (sqlite3_step(ss) == SQLITE_ROW) {
            if (!e)
                e = q_tentry_find(k, ts);
            int64_t t = sqlite3_column_int64(ss, 0);
            if (t >= e->status_time) {
                free(e->state);
                free(e->reason);
                free(e->mode);
                e->status_time = t;
                e->state = q_col_dup(ss, 1);
                e->reason = q_col_dup(ss, 2);
                e->mode = q_col_dup(ss, 3);
                e->until = sqlite3_column_int64(ss, 4);
            }
            if (!e->first || t < e->first)
                e->first = t;
            if (t > e->last)
                e->last = t;
        }
        sqlite3_reset(ss);
    }
    sqlite3_finalize(ts);
    sqlite3_finalize(ws);
    sqlite3_finalize(ss);
}

jp_err sq_targets(store *s, const store_filter *f, const store_budget *b, store_target_cb cb,
                  void *ctx, store_query_info *info, jp_error *err)
{
    sq_q q;
    q_init(&q, s, f, b, info);
    q_keyed k;
    q_keyed_collect(&q, &k, sizeof(q_tentry), q_targets_day, q_tentry_cmp);
    for (size_t i = 0; i < k.n; i++) {
        q_tentry *e = (q_tentry *)k.list + i;
        store_target_row row = {.target = &e->t,
                                .kinds = e->kinds,
                                .windows = e->windows,
                                .first_ns = e->first,
                                .last_ns = e->last,
                                .state = e->state,
                                .reason = e->reason,
                                .mode = e->mode,
                                .until_ns = e->until};
        if (!info->stopped && !cb(&row, ctx))
            info->stopped = true;
        jp_batch_target_cleanup(&e->t);
        free(e->state);
        free(e->reason);
        free(e->mode);
    }
    q_keyed_cleanup(&k);
    (void)err;
    return q_done(&q, JP_OK);
}

/* ---- flame: aggregate stack rows of the selected windows ---- */

typedef struct q_flame_ctx {
    sq_q *q;
    ZSTD_DCtx *dctx;
    uint8_t *buf;
    size_t buf_cap;
    uint64_t want_thread;
    store_flame_totals *totals;
} q_flame_ctx;

/* Buckets whose rollup this query reads, sorted (windows starting in them
 * are skipped). */
typedef struct q_cover {
    int64_t *b;
    size_t n, cap;
} q_cover;

static bool q_covered(const q_cover *cv, int64_t start)
{
    int64_t b = start / SQ_ROLLUP_NS;
    size_t lo = 0, hi = cv->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cv->b[mid] == b)
            return true;
        if (cv->b[mid] < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* Reads the rows of one result set (windows of a target, or rollups) into
 * the aggregate. Columns: start, end, period, events, flags, nrows, data
 * [, windows, bucket]. */
static void q_flame_rows(q_flame_ctx *c, sqlite3_stmt *st, wb_agg *a, q_cover *cv, bool rollup)
{
    sq_q *q = c->q;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
        if (!rollup && cv->n && q_covered(cv, start))
            continue; /* summed in its bucket's rollup */
        uint64_t nrows = (uint64_t)sqlite3_column_int64(st, 5);
        if (q_over(q, nrows))
            break;
        if (q->b && q->b->max_stacks && a->n > q->b->max_stacks) {
            store_info_partial(q->info, "more than %llu distinct stacks",
                               (unsigned long long)q->b->max_stacks);
            break;
        }
        const void *z = sqlite3_column_blob(st, 6);
        size_t zlen = (size_t)sqlite3_column_bytes(st, 6), got;
        uint64_t rows = 0;
        if (!wb_unpack(c->dctx, z, zlen, nrows, &c->buf, &c->buf_cap, &got) ||
            !wb_decode(c->buf, got, c->want_thread, a, &rows)) {
            store_info_partial(q->info, "a stored window is damaged");
            continue;
        }
        if (rollup) {
            cv->b = jp_xgrow(cv->b, &cv->cap, cv->n + 1, sizeof *cv->b);
            cv->b[cv->n++] = sqlite3_column_int64(st, 8);
        }
        uint64_t nwin = rollup ? (uint64_t)sqlite3_column_int64(st, 7) : 1;
        q->info->rows_scanned += rows;
        q->info->windows_scanned += nwin;
        q->info->bytes_scanned += zlen;
        store_flame_totals *t = c->totals;
        int flags = sqlite3_column_int(st, 4);
        t->windows += nwin;
        t->events += (uint64_t)sqlite3_column_int64(st, 3);
        t->any_dropped |= (flags & 1) != 0;
        t->any_truncated |= (flags & 2) != 0;
        if (!t->first_ns || start < t->first_ns)
            t->first_ns = start;
        if (end >= t->last_ns) {
            t->last_ns = end;
            t->period_ns = sqlite3_column_int64(st, 2);
        }
    }
    sqlite3_reset(st);
}

/* The rollups of the whole buckets inside [from, to) (service-level queries
 * only: a pod filter needs the windows themselves). */
static void q_flame_rollups(q_flame_ctx *c, sqlite3 *db, wb_agg *a, q_cover *cv)
{
    const store_filter *f = c->q->f;
    int64_t b0 = (f->from_ns + SQ_ROLLUP_NS - 1) / SQ_ROLLUP_NS, b1 = f->to_ns / SQ_ROLLUP_NS;
    sqlite3_stmt *st = NULL;
    if (f->pod || b0 >= b1 ||
        sqlite3_prepare_v2(db,
                           "SELECT first,last,period,events,flags,nrows,data,windows,bucket FROM "
                           "rollup_1m WHERE ns=?1 AND service=?2 AND kind=?3 AND bucket>=?4 AND "
                           "bucket<?5 ORDER BY bucket",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_text(st, 1, f->ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, f->service, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, f->kind);
    sqlite3_bind_int64(st, 4, b0);
    sqlite3_bind_int64(st, 5, b1);
    q_flame_rows(c, st, a, cv, true);
    sqlite3_finalize(st);
}

/* Resolves frames and thread names of the aggregate and hands rows over. */
static bool q_flame_emit(sq_q *q, sqlite3 *db, wb_agg *a, store_stack_cb cb, void *ctx)
{
    sqlite3_stmt *ss = NULL, *th = NULL;
    sqlite3_prepare_v2(db, "SELECT depth,truncated,frames,kinds FROM stacks WHERE id=?", -1, &ss,
                       NULL);
    sqlite3_prepare_v2(db, "SELECT name FROM threads WHERE id=?", -1, &th, NULL);
    const char **names = NULL;
    size_t *lens = NULL, names_cap = 0, lens_cap = 0;
    char *thread = NULL;
    uint64_t thread_id = 0;
    bool go = ss && th;
    for (size_t i = 0; i < a->n && go; i++) {
        wb_cell *c = &a->cells[i];
        sqlite3_bind_int64(ss, 1, (int64_t)c->stack);
        if (sqlite3_step(ss) != SQLITE_ROW) {
            store_info_partial(q->info, "a stack of a stored window is missing");
            sqlite3_reset(ss);
            continue;
        }
        const char *fr = sqlite3_column_blob(ss, 2);
        size_t flen = (size_t)sqlite3_column_bytes(ss, 2);
        uint32_t depth = 0;
        /* split "a\nb\nc" in place of pointers; lengths carry the ends */
        for (size_t p = 0, start = 0; fr && p <= flen; p++)
            if (p == flen || fr[p] == '\n') {
                names = jp_xgrow(names, &names_cap, depth + 1, sizeof *names);
                lens = jp_xgrow(lens, &lens_cap, depth + 1, sizeof *lens);
                names[depth] = fr + start;
                lens[depth] = p - start;
                depth++;
                start = p + 1;
            }
        if (c->thread && c->thread != thread_id) {
            free(thread);
            thread = NULL;
            sqlite3_bind_int64(th, 1, (int64_t)c->thread);
            if (sqlite3_step(th) == SQLITE_ROW)
                thread = q_col_dup(th, 0);
            sqlite3_reset(th);
            thread_id = c->thread;
        }
        const uint8_t *kinds = sqlite3_column_blob(ss, 3);
        if (kinds && (size_t)sqlite3_column_bytes(ss, 3) != depth)
            kinds = NULL; /* not this stack's: colour nothing rather than wrongly */
        store_stack_row row = {.stack_id = c->stack,
                               .frames = names,
                               .frame_lens = lens,
                               .frame_kinds = kinds,
                               .depth = depth,
                               .truncated = sqlite3_column_int(ss, 1) != 0,
                               .thread = c->thread ? (thread ? thread : "[unknown thread]") : NULL,
                               .samples = c->samples,
                               .value = c->value};
        if (!cb(&row, ctx)) {
            q->info->stopped = true;
            go = false;
        }
        sqlite3_reset(ss);
    }
    free(names);
    free(lens);
    free(thread);
    sqlite3_finalize(ss);
    sqlite3_finalize(th);
    return go;
}

static int wb_cell_cmp_thread(const void *x, const void *y)
{
    const wb_cell *a = x, *b = y;
    return a->thread < b->thread ? -1 : a->thread > b->thread;
}

jp_err sq_flame(store *s, const store_filter *f, const store_budget *b, store_stack_cb cb,
                void *ctx, store_flame_totals *totals, store_query_info *info, jp_error *err)
{
    sq_q q;
    q_init(&q, s, f, b, info); /* store_flame checked f and zeroed *totals */
    q_flame_ctx c = {.q = &q, .dctx = ZSTD_createDCtx(), .totals = totals};
    if (f->thread)
        c.want_thread = wb_thread_id(f->thread, strlen(f->thread));
    int64_t days[SQ_MAX_DAYS];
    size_t nd = q_days(&q, days);
    bool go = true;
    for (size_t i = 0; i < nd && go && !q.info->partial; i++) {
        sqlite3 *db = q_open_day(&q, days[i]);
        if (!db)
            continue;
        wb_agg a = {0};
        q_cover cv = {0};
        q_flame_rollups(&c, db, &a, &cv);
        sqlite3_stmt *ts = q_targets_stmt(db, f), *ws = NULL;
        sqlite3_prepare_v2(db,
                           "SELECT start,end,period,events,flags,nrows,data FROM windows WHERE "
                           "target=?1 AND kind=?2 AND start>=?3 AND start<?4 ORDER BY start",
                           -1, &ws, NULL);
        while (ts && ws && sqlite3_step(ts) == SQLITE_ROW && !q.info->partial) {
            sqlite3_bind_int64(ws, 1, sqlite3_column_int64(ts, 0));
            sqlite3_bind_int(ws, 2, f->kind);
            sqlite3_bind_int64(ws, 3, f->from_ns);
            sqlite3_bind_int64(ws, 4, f->to_ns);
            q_flame_rows(&c, ws, &a, &cv, false);
        }
        free(cv.b);
        sqlite3_finalize(ts);
        sqlite3_finalize(ws);
        wb_agg_compact(&a);
        /* rows of one thread together, so thread names are looked up once */
        if (a.n && f->thread == NULL)
            qsort(a.cells, a.n, sizeof *a.cells, wb_cell_cmp_thread);
        go = q_flame_emit(&q, db, &a, cb, ctx);
        wb_agg_free(&a);
        sqlite3_close(db);
    }
    ZSTD_freeDCtx(c.dctx);
    free(c.buf);
    return q_done(&q, JP_OK);
}

/* ---- documents ---- */

typedef struct q_snap {
    jp_batch_target t;
    int64_t day, time, rowid;
} q_snap;

static int q_snap_cmp(const void *a, const void *b)
{
    const q_snap *x = a, *y = b;
    int c = q_strcmp0(x->t.pod, y->t.pod);
    return c ? c : q_target_cmp(&x->t, &y->t);
}

static void q_snap_day(sq_q *q, sqlite3 *db, int64_t day, q_snap **list, size_t *n, size_t *cap,
                       jp_u64map *idx)
{
    sqlite3_stmt *ts = q_targets_stmt(db, q->f), *ss = NULL;
    sqlite3_prepare_v2(db,
                       "SELECT rowid,time FROM snapshots WHERE target=?1 AND time>=?2 AND "
                       "time<?3 ORDER BY time DESC LIMIT 1",
                       -1, &ss, NULL);
    while (ts && ss && sqlite3_step(ts) == SQLITE_ROW) {
        sqlite3_bind_int64(ss, 1, sqlite3_column_int64(ts, 0));
        sqlite3_bind_int64(ss, 2, q->f->from_ns);
        sqlite3_bind_int64(ss, 3, q->f->to_ns);
        if (sqlite3_step(ss) == SQLITE_ROW) {
            q->info->rows_scanned++;
            int64_t rowid = sqlite3_column_int64(ss, 0), t = sqlite3_column_int64(ss, 1);
            uint64_t key = sq_target_key((const char *)sqlite3_column_text(ts, 1),
                                         (const char *)sqlite3_column_text(ts, 2),
                                         (const char *)sqlite3_column_text(ts, 3)),
                     v;
            q_snap *e;
            if (jp_u64map_get(idx, key, &v)) {
                e = &(*list)[v];
                /* idx maps a target to its index in *list, set only below after
                 * the list has grown: a hit means *list holds it */
                // NOLINTNEXTLINE(clang-analyzer-core.NullDereference): see above
                if (e->time >= t)
                    goto next;
            } else {
                *list = jp_xgrow(*list, cap, *n + 1, sizeof **list);
                e = &(*list)[*n];
                memset(e, 0, sizeof *e);
                q_target_read(ts, 0, &e->t);
                jp_u64map_put(idx, key, (*n)++);
            }
            e->day = day;
            e->time = t;
            e->rowid = rowid;
        }
    next:
        sqlite3_reset(ss);
    }
    sqlite3_finalize(ts);
    sqlite3_finalize(ss);
}

jp_err sq_snapshots_latest(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                           void *ctx, store_query_info *info, jp_error *err)
{
    sq_q q;
    q_init(&q, s, f, b, info);
    int64_t days[SQ_MAX_DAYS];
    size_t nd = q_days(&q, days), n = 0, cap = 0;
    q_snap *list = NULL;
    jp_u64map idx;
    jp_u64map_init(&idx);
    for (size_t i = nd; i-- > 0 && !q_over(&q, 0);) {
        sqlite3 *db = q_open_day(&q, days[i]);
        if (!db)
            continue;
        q_snap_day(&q, db, days[i], &list, &n, &cap, &idx);
        sqlite3_close(db);
    }
    if (n)
        qsort(list, n, sizeof *list, q_snap_cmp);
    for (size_t i = 0; i < n; i++) {
        q_snap *e = &list[i];
        jp_error e2;
        jp_error_init(&e2);
        sqlite3 *db = info->stopped ? NULL : sq_open_ro(q.st, e->day, &e2);
        sqlite3_stmt *js = NULL;
        if (db && sqlite3_prepare_v2(db, "SELECT json FROM snapshots WHERE rowid=?", -1, &js,
                                     NULL) == SQLITE_OK) {
            sqlite3_bind_int64(js, 1, e->rowid);
            if (sqlite3_step(js) == SQLITE_ROW) {
                store_doc_row row = {.target = &e->t,
                                     .time_ns = e->time,
                                     .json = (const char *)sqlite3_column_text(js, 0),
                                     .json_len = (size_t)sqlite3_column_bytes(js, 0)};
                q.info->bytes_scanned += row.json_len;
                if (!cb(&row, ctx))
                    info->stopped = true;
            }
        }
        sqlite3_finalize(js);
        sqlite3_close(db);
        jp_batch_target_cleanup(&e->t);
    }
    free(list);
    jp_u64map_cleanup(&idx);
    (void)err;
    return q_done(&q, JP_OK);
}

/* Deadlocks and statuses: newest first over the days, newest day first. */
static jp_err q_docs_newest(store *s, const store_filter *f, const store_budget *b, const char *sql,
                            bool status, store_doc_cb cb, void *ctx, store_query_info *info)
{
    sq_q q;
    q_init(&q, s, f, b, info);
    int64_t days[SQ_MAX_DAYS];
    size_t nd = q_days(&q, days);
    for (size_t i = nd; i-- > 0 && !info->stopped && !q_over(&q, 1);) {
        sqlite3 *db = q_open_day(&q, days[i]);
        if (!db)
            continue;
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
            if (f->ns)
                sqlite3_bind_text(st, 1, f->ns, -1, SQLITE_STATIC);
            if (f->service)
                sqlite3_bind_text(st, 2, f->service, -1, SQLITE_STATIC);
            if (f->pod)
                sqlite3_bind_text(st, 3, f->pod, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 4, f->from_ns);
            sqlite3_bind_int64(st, 5, f->to_ns);
            while (!q_over(&q, 1) && sqlite3_step(st) == SQLITE_ROW) {
                q.info->rows_scanned++;
                jp_batch_target t = {0};
                q_target_read(st, 0, &t);
                store_doc_row row = {.target = &t, .time_ns = sqlite3_column_int64(st, 11)};
                if (status) {
                    row.state = (const char *)sqlite3_column_text(st, 12);
                    row.reason = (const char *)sqlite3_column_text(st, 13);
                    row.message = (const char *)sqlite3_column_text(st, 14);
                    row.engine = (const char *)sqlite3_column_text(st, 15);
                    row.mode = (const char *)sqlite3_column_text(st, 16);
                    row.until_ns = sqlite3_column_int64(st, 17);
                    if (row.mode && !*row.mode)
                        row.mode = NULL;
                    if (row.reason && !*row.reason)
                        row.reason = NULL;
                } else {
                    row.json = (const char *)sqlite3_column_text(st, 12);
                    row.json_len = (size_t)sqlite3_column_bytes(st, 12);
                }
                bool go = cb(&row, ctx);
                jp_batch_target_cleanup(&t);
                if (!go) {
                    info->stopped = true;
                    break;
                }
            }
        }
        sqlite3_finalize(st);
        sqlite3_close(db);
    }
    return q_done(&q, JP_OK);
}

#define Q_DOC_TARGET                                                                               \
    "SELECT t.id,t.ns,t.service,t.pod,t.cluster,t.workload,t.container,t.node,t.pid,"              \
    "t.jvm_start,t.jvm,"
#define Q_DOC_WHERE                                                                                \
    " JOIN targets t ON t.id=d.target WHERE (?1 IS NULL OR t.ns=?1) AND (?2 IS NULL OR "           \
    "t.service=?2) AND (?3 IS NULL OR t.pod=?3) AND d.time>=?4 AND d.time<?5 "                     \
    "ORDER BY d.time DESC"

jp_err sq_deadlocks(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                    void *ctx, store_query_info *info, jp_error *err)
{
    (void)err;
    return q_docs_newest(s, f, b, Q_DOC_TARGET "d.time,d.json FROM deadlocks d" Q_DOC_WHERE, false,
                         cb, ctx, info);
}

jp_err sq_heaps(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb, void *ctx,
                store_query_info *info, jp_error *err)
{
    (void)err;
    return q_docs_newest(s, f, b, Q_DOC_TARGET "d.time,d.json FROM heaps d" Q_DOC_WHERE, false, cb,
                         ctx, info);
}

jp_err sq_gc(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb, void *ctx,
             store_query_info *info, jp_error *err)
{
    (void)err;
    return q_docs_newest(s, f, b, Q_DOC_TARGET "d.time,d.json FROM gc d" Q_DOC_WHERE, false, cb,
                         ctx, info);
}

jp_err sq_statuses(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                   void *ctx, store_query_info *info, jp_error *err)
{
    (void)err;
    return q_docs_newest(s, f, b,
                         Q_DOC_TARGET
                         "d.time,d.state,d.reason,d.message,d.engine,d.mode,d.until_time "
                         "FROM statuses "
                         "d" Q_DOC_WHERE,
                         true, cb, ctx, info);
}

/* ---- ingestion ---- */

typedef struct q_ing {
    store_ingest_row r;
    char *collector, *version, *reject;
    int64_t latest_ok; /* receive time of the row the queue counters came from */
    int64_t latest_reject;
    int64_t latest_version;
} q_ing;

static int q_ing_cmp(const void *a, const void *b)
{
    return strcmp(((const q_ing *)a)->collector, ((const q_ing *)b)->collector);
}

static void q_ing_day(sq_q *q, sqlite3 *db, q_keyed *rows)
{
    sqlite3_stmt *st = NULL;
    /* SQLite returns the bare columns of the row that holds max(received) */
    static const char sum_sql[] =
        "SELECT collector,sum(outcome=0),sum(outcome=1),sum(outcome=2),sum(windows),sum(rows),"
        "sum(bytes),min(received),max(CASE WHEN heartbeat THEN received END),max(received) "
        "FROM ingest_log "
        "WHERE received>=?1 AND received<?2 GROUP BY collector";
    static const char last_sql[] =
        "SELECT collector,max(received),q_batches,q_bytes,q_now,q_oldest FROM ingest_log "
        "WHERE received>=?1 AND received<?2 AND outcome<2 AND q_batches IS NOT NULL "
        "GROUP BY collector";
    static const char ver_sql[] =
        "SELECT collector,max(received),version FROM ingest_log WHERE received>=?1 AND "
        "received<?2 AND outcome<2 AND version IS NOT NULL AND version!='' GROUP BY collector";
    static const char rej_sql[] =
        "SELECT collector,max(received),reason FROM ingest_log WHERE received>=?1 AND "
        "received<?2 AND outcome=2 GROUP BY collector";
    const char *sqls[4] = {sum_sql, last_sql, rej_sql, ver_sql};
    for (int k = 0; k < 4; k++) {
        if (sqlite3_prepare_v2(db, sqls[k], -1, &st, NULL) != SQLITE_OK)
            continue;
        sqlite3_bind_int64(st, 1, q->f->from_ns);
        sqlite3_bind_int64(st, 2, q->f->to_ns);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *c = (const char *)sqlite3_column_text(st, 0);
            c = c ? c : "";
            bool fresh;
            q_ing *e = q_keyed_get(rows, jp_hash_bytes(c, strlen(c)), &fresh);
            if (fresh)
                e->collector = jp_xstrdup(c);
            q->info->rows_scanned++;
            int64_t t = sqlite3_column_int64(st, 1);
            if (k == 0) {
                e->r.accepted += (uint64_t)sqlite3_column_int64(st, 1);
                e->r.duplicate += (uint64_t)sqlite3_column_int64(st, 2);
                e->r.rejected += (uint64_t)sqlite3_column_int64(st, 3);
                e->r.windows += (uint64_t)sqlite3_column_int64(st, 4);
                e->r.stack_rows += (uint64_t)sqlite3_column_int64(st, 5);
                e->r.bytes += (uint64_t)sqlite3_column_int64(st, 6);
                int64_t first = sqlite3_column_int64(st, 7), hb = sqlite3_column_int64(st, 8);
                if (!e->r.first_ns || first < e->r.first_ns)
                    e->r.first_ns = first;
                if (hb > e->r.last_heartbeat_ns)
                    e->r.last_heartbeat_ns = hb;
                /* every batch counts as seen, as in ClickHouse's max(received_ns): a
                 * sender without a version or queue (OTLP, Pyroscope) has no other row */
                t = sqlite3_column_int64(st, 9);
            } else if (k == 1 && t >= e->latest_ok) {
                e->latest_ok = t;
                e->r.queue_dropped_batches = (uint64_t)sqlite3_column_int64(st, 2);
                e->r.queue_dropped_bytes = (uint64_t)sqlite3_column_int64(st, 3);
                e->r.queue_bytes = (uint64_t)sqlite3_column_int64(st, 4);
                e->r.queue_oldest_dropped_ns = sqlite3_column_int64(st, 5);
            } else if (k == 3 && t >= e->latest_version) {
                e->latest_version = t;
                free(e->version);
                e->version = q_col_dup(st, 2);
            } else if (k == 2 && t >= e->latest_reject) {
                e->latest_reject = t;
                free(e->reject);
                e->reject = q_col_dup(st, 2);
            }
            if (t > e->r.last_ns)
                e->r.last_ns = t;
        }
        sqlite3_finalize(st);
    }
}

jp_err sq_ingestion(store *s, const store_filter *f, const store_budget *b, store_ingest_cb cb,
                    void *ctx, store_query_info *info, jp_error *err)
{
    sq_q q;
    q_init(&q, s, f, b, info);
    q_keyed k;
    q_keyed_collect(&q, &k, sizeof(q_ing), q_ing_day, q_ing_cmp);
    for (size_t i = 0; i < k.n; i++) {
        q_ing *e = (q_ing *)k.list + i;
        e->r.collector = e->collector;
        e->r.version = e->version;
        e->r.last_reject_reason = e->reject;
        if (!info->stopped && !cb(&e->r, ctx))
            info->stopped = true;
        free(e->collector);
        free(e->version);
        free(e->reject);
    }
    q_keyed_cleanup(&k);
    (void)err;
    return q_done(&q, JP_OK);
}

/* ---- retention view ---- */

static uint64_t q_count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    uint64_t v = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static uint64_t q_file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

jp_err sq_days(store *s, store_day_cb cb, void *ctx, jp_error *err)
{
    sq_store *st = s->impl;
    int64_t t0 = jp_time_mono_ns();
    int64_t days[SQ_MAX_DAYS];
    size_t n = sq_list_days(st, days, SQ_MAX_DAYS);
    jp_strbuf p;
    jp_strbuf_init(&p, 0);
    for (size_t i = 0; i < n; i++) {
        store_day_row row = {.day = days[i],
                             .expires_ns = (days[i] + st->retention_days) * STORE_DAY_NS};
        sq_day_path(st, days[i], &p);
        row.bytes = q_file_size(p.data);
        jp_strbuf_puts(&p, "-wal");
        row.bytes += q_file_size(p.data);
        sqlite3 *db = sq_open_ro(st, days[i], err);
        if (db) {
            row.windows = q_count(db, "SELECT count(*) FROM windows");
            row.stack_rows = q_count(db, "SELECT total(nrows) FROM windows");
            row.stacks = q_count(db, "SELECT count(*) FROM stacks");
            row.docs = q_count(db, "SELECT (SELECT count(*) FROM statuses)+(SELECT count(*) "
                                   "FROM snapshots)+(SELECT count(*) FROM deadlocks)+(SELECT "
                                   "count(*) FROM gc)+(SELECT count(*) FROM heaps)");
            row.batches = q_count(db, "SELECT count(*) FROM batches");
            sqlite3_close(db);
        }
        if (!cb(&row, ctx))
            break;
    }
    jp_strbuf_cleanup(&p);
    sq_stats_query(st, jp_time_mono_ns() - t0, false);
    return JP_OK;
}
