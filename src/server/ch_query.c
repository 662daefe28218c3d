/* The ClickHouse store's read side. Every query restricts the day
 * partitions and the sort-key prefix (namespace, service, kind, time), sees
 * only committed batches (CH_VISIBLE), lets ClickHouse aggregate, and streams
 * the answer row by row. Budgets travel as ClickHouse settings with the
 * "break" overflow modes, so ClickHouse stops reading and still answers; the
 * statistics block at the end of the answer (rows_read) and the wall time
 * tell whether it stopped, and the answer is then marked partial. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/ch_int.h"

/* ---- common pieces ---- */

typedef struct cq {
    ch_store *st;
    const store_filter *f;
    const store_budget *b;
    store_query_info *info;
    int64_t t0;
    jp_strbuf sql;
} cq;

static void cq_init(cq *q, store *s, const store_filter *f, const store_budget *b,
                    store_query_info *info)
{
    q->st = s->impl;
    q->f = f;
    q->b = b;
    q->info = info;
    q->t0 = jp_time_mono_ns();
    memset(info, 0, sizeof *info);
    jp_strbuf_init(&q->sql, 0);
}

static jp_err cq_done(cq *q, jp_err rc)
{
    ch_stats_query(q->st, jp_time_mono_ns() - q->t0, rc != JP_OK);
    jp_strbuf_cleanup(&q->sql);
    return rc;
}

/* The budget left for the next query; false when the time is used up. */
static bool cq_budget(cq *q, store_budget *left)
{
    memset(left, 0, sizeof *left);
    if (!q->b)
        return true;
    *left = *q->b;
    if (q->b->time_ns) {
        if (store_info_time_over(q->info, q->b, q->t0))
            return false;
        left->time_ns = q->b->time_ns - (jp_time_mono_ns() - q->t0);
        if (left->time_ns < 1)
            left->time_ns = 1;
    }
    return true;
}

/* Runs q->sql, accounts its statistics and tells whether a budget broke it. */
static jp_err cq_run(cq *q, ch_row_fn fn, void *ctx, ch_result *res, jp_error *err)
{
    store_budget left;
    memset(res, 0, sizeof *res);
    if (!cq_budget(q, &left))
        return JP_OK;
    jp_err rc = ch_select(q->st, q->sql.data, q->b ? &left : NULL, fn, ctx, res, err);
    if (rc)
        return rc;
    q->info->rows_scanned += res->rows_read;
    q->info->bytes_scanned += res->bytes_read;
    /* with the break modes ClickHouse stops once it has read more rows
     * than allowed, or once its whole-second time limit passed */
    if (q->b && q->b->max_rows && res->rows_read > left.max_rows)
        store_info_partial(q->info, "row budget of %llu rows exceeded",
                           (unsigned long long)q->b->max_rows);
    if (q->b && q->b->time_ns) {
        int64_t secs = (left.time_ns + JP_NS_PER_SEC - 1) / JP_NS_PER_SEC;
        if (res->wall_ns >= (secs ? secs : 1) * JP_NS_PER_SEC)
            store_info_partial(q->info, "time budget of %llu ms exceeded",
                               (unsigned long long)(q->b->time_ns / 1000000));
        else
            store_info_time_over(q->info, q->b, q->t0);
    }
    if (res->bad_rows)
        store_info_partial(q->info, "%llu stored rows could not be read",
                           (unsigned long long)res->bad_rows);
    return JP_OK;
}

static void cq_eq(jp_strbuf *s, const char *col, const char *v)
{
    if (!v)
        return;
    jp_strbuf_printf(s, " AND %s = ", col);
    ch_sql_str(s, v);
}

/* WHERE: day partitions of [from, to), the time column in [from, to), the
 * target filter, and committed batches only. */
static void cq_where(cq *q, const char *time_col, bool kind)
{
    const store_filter *f = q->f;
    jp_strbuf *s = &q->sql;
    jp_strbuf_puts(s, " WHERE day >= '");
    ch_day_str(s, store_day_of(f->from_ns));
    jp_strbuf_puts(s, "' AND day <= '");
    ch_day_str(s, store_day_of(f->to_ns - 1));
    jp_strbuf_printf(s, "' AND %s >= %lld AND %s < %lld", time_col, (long long)f->from_ns, time_col,
                     (long long)f->to_ns);
    cq_eq(s, "ns", f->ns);
    cq_eq(s, "service", f->service);
    cq_eq(s, "pod", f->pod);
    if (kind)
        jp_strbuf_printf(s, " AND kind = %d", f->kind);
    jp_strbuf_puts(s, " AND" CH_VISIBLE);
}

/* argMax(identity, t) of the columns in CH_IDENT order */
static void cq_ident_cols(jp_strbuf *s, const char *t)
{
    static const char *const cols[] = {"cluster", "workload",     "container", "node",
                                       "pid",     "jvm_start_ns", "jvm"};
    for (size_t i = 0; i < 7; i++)
        jp_strbuf_printf(s, "%sargMax(%s, %s)", i ? ", " : "", cols[i], t);
}

static char *cq_dup(json_t *row, size_t i)
{
    const char *s = ch_str(row, i, NULL);
    return s ? jp_xstrdup(s) : NULL;
}

/* Target from columns ns, service, pod at 0..2 and identity at first..first+6. */
static void cq_target_read(json_t *row, size_t first, jp_batch_target *t)
{
    t->ns = cq_dup(row, 0);
    t->service = cq_dup(row, 1);
    t->pod = cq_dup(row, 2);
    t->cluster = cq_dup(row, first);
    t->workload = cq_dup(row, first + 1);
    t->container = cq_dup(row, first + 2);
    t->node = cq_dup(row, first + 3);
    t->pid = ch_i64(row, first + 4);
    t->jvm_start_ns = ch_i64(row, first + 5);
    t->jvm = cq_dup(row, first + 6);
}

static int cq_strcmp0(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

/* ---- targets ---- */

typedef struct cq_tentry {
    jp_batch_target t;
    uint32_t kinds;
    uint64_t windows;
    int64_t first, last, ident_time, until;
    char *state, *reason, *mode;
} cq_tentry;

typedef struct cq_tlist {
    cq_tentry *e;
    size_t n, cap;
    jp_u64map idx; /* hash(ns, service, pod) -> index + probe (see cq_tfind) */
} cq_tlist;

static uint64_t cq_tkey(json_t *row)
{
    uint64_t h = 0;
    for (size_t i = 0; i < 3; i++) {
        size_t len;
        const char *s = ch_str(row, i, &len);
        h = jp_hash_combine(h, jp_hash_bytes(s ? s : "", len));
    }
    return h;
}

static bool cq_tsame(const cq_tentry *e, json_t *row)
{
    return !cq_strcmp0(e->t.ns, ch_str(row, 0, NULL)) &&
           !cq_strcmp0(e->t.service, ch_str(row, 1, NULL)) &&
           !cq_strcmp0(e->t.pod, ch_str(row, 2, NULL));
}

static cq_tentry *cq_tfind(cq_tlist *l, json_t *row, bool *fresh)
{
    uint64_t key = cq_tkey(row), v;
    while (jp_u64map_get(&l->idx, key, &v)) {
        if (cq_tsame(&l->e[v], row)) {
            *fresh = false;
            return &l->e[v];
        }
        key++;
    }
    l->e = jp_xgrow(l->e, &l->cap, l->n + 1, sizeof *l->e);
    cq_tentry *e = &l->e[l->n];
    memset(e, 0, sizeof *e);
    jp_u64map_put(&l->idx, key, l->n++);
    *fresh = true;
    return e;
}

/* ns, service, pod, kinds, windows, first, last, ident(7) at 7, latest start */
static bool cq_twin_row(json_t *row, void *ctx)
{
    cq_tlist *l = ctx;
    bool fresh;
    cq_tentry *e = cq_tfind(l, row, &fresh);
    cq_target_read(row, 7, &e->t);
    e->ident_time = ch_i64(row, 14);
    e->kinds = (uint32_t)ch_u64(row, 3);
    e->windows = ch_u64(row, 4);
    e->first = ch_i64(row, 5);
    e->last = ch_i64(row, 6);
    return true;
}

/* ns, service, pod, state, reason, first, last, ident(7) at 7 */
static bool cq_tstatus_row(json_t *row, void *ctx)
{
    cq_tlist *l = ctx;
    bool fresh;
    cq_tentry *e = cq_tfind(l, row, &fresh);
    int64_t first = ch_i64(row, 5), last = ch_i64(row, 6);
    if (fresh || last > e->ident_time) {
        jp_batch_target_cleanup(&e->t);
        cq_target_read(row, 7, &e->t);
        e->ident_time = last;
    }
    e->state = cq_dup(row, 3);
    e->reason = cq_dup(row, 4);
    e->mode = cq_dup(row, 14);
    e->until = ch_i64(row, 15);
    if (e->mode && !*e->mode) {
        free(e->mode);
        e->mode = NULL;
    }
    if (fresh || first < e->first)
        e->first = first;
    if (fresh || last > e->last)
        e->last = last;
    return true;
}

static int cq_tentry_cmp(const void *a, const void *b)
{
    const jp_batch_target *x = &((const cq_tentry *)a)->t, *y = &((const cq_tentry *)b)->t;
    int c = cq_strcmp0(x->ns, y->ns);
    if (!c)
        c = cq_strcmp0(x->service, y->service);
    return c ? c : cq_strcmp0(x->pod, y->pod);
}

jp_err ch_targets(store *s, const store_filter *f, const store_budget *b, store_target_cb cb,
                  void *ctx, store_query_info *info, jp_error *err)
{
    cq q;
    cq_init(&q, s, f, b, info);
    cq_tlist l = {0};
    jp_u64map_init(&l.idx);
    ch_result res;
    jp_strbuf_puts(&q.sql, "SELECT ns, service, pod, groupBitOr(bitShiftLeft(toUInt32(1), kind)), "
                           "count(), min(start_ns), max(end_ns), ");
    cq_ident_cols(&q.sql, "start_ns");
    jp_strbuf_puts(&q.sql, ", max(start_ns) FROM jprof_windows");
    cq_where(&q, "start_ns", false);
    jp_strbuf_puts(&q.sql, " GROUP BY ns, service, pod");
    jp_err rc = cq_run(&q, cq_twin_row, &l, &res, err);
    if (!rc) {
        jp_strbuf_reset(&q.sql);
        jp_strbuf_puts(&q.sql, "SELECT ns, service, pod, argMax(state, time_ns), "
                               "argMax(reason, time_ns), min(time_ns), max(time_ns), ");
        cq_ident_cols(&q.sql, "time_ns");
        jp_strbuf_puts(&q.sql, ", argMax(mode, time_ns), argMax(until_ns, time_ns) "
                               "FROM jprof_statuses");
        cq_where(&q, "time_ns", false);
        jp_strbuf_puts(&q.sql, " GROUP BY ns, service, pod");
        rc = cq_run(&q, cq_tstatus_row, &l, &res, err);
    }
    if (l.n)
        qsort(l.e, l.n, sizeof *l.e, cq_tentry_cmp);
    for (size_t i = 0; i < l.n; i++) {
        cq_tentry *e = &l.e[i];
        store_target_row row = {.target = &e->t,
                                .kinds = e->kinds,
                                .windows = e->windows,
                                .first_ns = e->first,
                                .last_ns = e->last,
                                .state = e->state,
                                .reason = e->reason,
                                .mode = e->mode,
                                .until_ns = e->until};
        if (!rc && !info->stopped && !cb(&row, ctx))
            info->stopped = true;
        jp_batch_target_cleanup(&e->t);
        free(e->state);
        free(e->reason);
        free(e->mode);
    }
    free(l.e);
    jp_u64map_cleanup(&l.idx);
    return cq_done(&q, rc);
}

/* ---- flame ---- */

/* A service-level flame query reads each whole minute of the range from
 * jprof_rollup_1m (every pod of the service summed per stack and thread,
 * about pods times fewer rows) when that minute's roll-up markers equal its
 * visible windows in jprof_windows: same number of windows, of stack rows,
 * of samples and of value. Every other minute (the partial ones at the
 * edges, the ones whose roll-up is missing, incomplete or doubled, all of a
 * pod-filtered query) comes from jprof_samples. Either way the sums are
 * those of the committed windows, so the answer is the same. */

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

/* minute, windows, rows, samples, value of the roll-up markers, ascending:
 * a minute that matches its windows joins (or starts) a run */
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
    jp_strbuf_puts(&q->sql, "SELECT minute, sum(windows), sum(rows), sum(samples), sum(value) "
                            "FROM jprof_rollup_1m WHERE ");
    cq_days_where(q);
    cq_eq(&q->sql, "ns", f->ns);
    cq_eq(&q->sql, "service", f->service);
    jp_strbuf_printf(&q->sql,
                     " AND kind = %d AND minute >= %lld AND minute <= %lld AND m = 1 "
                     "GROUP BY minute ORDER BY minute",
                     f->kind, (long long)lo, (long long)hi);
    ch_result res;
    return cq_run(q, cq_marker_row, runs, &res, err);
}

typedef struct cq_flame {
    cq *q;
    store_stack_cb cb;
    void *ctx;
    const char **names;
    size_t *lens;
    uint8_t *kinds;
    size_t names_cap, lens_cap, kinds_cap;
    uint64_t missing;
} cq_flame;

/* stack_id, thread, samples, value, found, truncated, frames, kinds */
static bool cq_stack_row(json_t *row, void *ctx)
{
    cq_flame *c = ctx;
    if (!ch_u64(row, 4)) {
        c->missing++;
        return true;
    }
    json_t *fr = json_array_get(row, 6);
    size_t depth = json_array_size(fr);
    c->names = jp_xgrow(c->names, &c->names_cap, depth + 1, sizeof *c->names);
    c->lens = jp_xgrow(c->lens, &c->lens_cap, depth + 1, sizeof *c->lens);
    for (size_t i = 0; i < depth; i++) {
        json_t *v = json_array_get(fr, i);
        c->names[i] = json_is_string(v) ? json_string_value(v) : "?";
        c->lens[i] = json_is_string(v) ? json_string_length(v) : 1;
    }
    /* the frame kinds when stored for every frame (an older row has []) */
    json_t *kj = json_array_get(row, 7);
    bool kinds = json_array_size(kj) == depth && depth;
    c->kinds = jp_xgrow(c->kinds, &c->kinds_cap, depth + 1, 1);
    for (size_t i = 0; kinds && i < depth; i++) {
        json_int_t k = json_integer_value(json_array_get(kj, i));
        c->kinds[i] = k >= 0 && k < JP_FRAME_KIND_COUNT ? (uint8_t)k : JP_FRAME_UNKNOWN;
    }
    store_stack_row r = {.stack_id = ch_u64(row, 0),
                         .frames = c->names,
                         .frame_lens = c->lens,
                         .frame_kinds = kinds ? c->kinds : NULL,
                         .depth = (uint32_t)depth,
                         .truncated = ch_u64(row, 5) != 0,
                         .thread = ch_str(row, 1, NULL),
                         .samples = ch_u64(row, 2),
                         .value = ch_u64(row, 3)};
    return c->cb(&r, c->ctx);
}

/* The rows to aggregate: (stack_id, thread, samples, value) of the raw
 * windows outside the roll-up runs, and of the roll-up inside them. The raw
 * part names the time ranges it reads (not "NOT the runs"), so the primary
 * key skips the rest; with no such range it is left out. */
static void cq_flame_source(cq *q, const cq_runs *runs)
{
    jp_strbuf *s = &q->sql;
    const store_filter *f = q->f;
    int64_t at = f->from_ns, gaps[CQ_RUNS_MAX + 1][2];
    size_t ngaps = 0;
    for (size_t i = 0; i <= runs->n; i++) {
        int64_t end = i < runs->n ? runs->lo[i] * CH_MINUTE_NS : f->to_ns;
        if (end > at) {
            gaps[ngaps][0] = at;
            gaps[ngaps++][1] = end;
        }
        if (i < runs->n)
            at = (runs->hi[i] + 1) * CH_MINUTE_NS;
    }
    if (ngaps) {
        jp_strbuf_puts(s, "SELECT stack_id, thread, samples, value FROM jprof_samples");
        cq_where(q, "start_ns", true);
        cq_eq(s, "thread", f->thread);
        if (runs->n) {
            jp_strbuf_puts(s, " AND (");
            for (size_t i = 0; i < ngaps; i++)
                jp_strbuf_printf(s, "%s(start_ns >= %lld AND start_ns < %lld)", i ? " OR " : "",
                                 (long long)gaps[i][0], (long long)gaps[i][1]);
            jp_strbuf_puts(s, ")");
        }
    }
    if (!runs->n)
        return;
    if (ngaps)
        jp_strbuf_puts(s, " UNION ALL ");
    jp_strbuf_puts(s, "SELECT stack_id, thread, samples, value FROM jprof_rollup_1m WHERE ");
    cq_days_where(q);
    cq_eq(s, "ns", f->ns);
    cq_eq(s, "service", f->service);
    jp_strbuf_printf(s, " AND kind = %d AND m = 0", f->kind);
    cq_eq(s, "thread", f->thread);
    jp_strbuf_puts(s, " AND (");
    for (size_t i = 0; i < runs->n; i++)
        jp_strbuf_printf(s, "%s(minute >= %lld AND minute <= %lld)", i ? " OR " : "",
                         (long long)runs->lo[i], (long long)runs->hi[i]);
    jp_strbuf_puts(s, ")");
}

jp_err ch_flame(store *s, const store_filter *f, const store_budget *b, store_stack_cb cb,
                void *ctx, store_flame_totals *totals, store_query_info *info, jp_error *err)
{
    cq q;
    cq_init(&q, s, f, b, info);
    store_flame_totals tot_local;
    if (!totals)
        totals = &tot_local;
    memset(totals, 0, sizeof *totals);
    if (!f->ns || !f->service || f->kind < 0 || f->kind >= JP_KIND_COUNT)
        return cq_done(&q, jp_error_set(err, JP_ERR_USAGE, "flame needs namespace, service, kind"));
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
    cq_flame c = {.q = &q, .cb = cb, .ctx = ctx};
    jp_err rc = cq_run(&q, cq_totals_row, &tot, &res, err);
    if (!rc && !info->partial)
        rc = cq_rollup_runs(&q, &tot, &runs, err);
    if (rc || info->partial)
        goto out;
    info->windows_scanned = totals->windows;
    jp_strbuf_reset(&q.sql);
    jp_strbuf_puts(&q.sql,
                   "SELECT stack_id, thread, samples, value, found, truncated, frames, kinds "
                   "FROM (SELECT stack_id, thread, sum(samples) AS samples, "
                   "sum(value) AS value FROM (");
    cq_flame_source(&q, &runs);
    jp_strbuf_puts(&q.sql, ") GROUP BY stack_id, thread) ANY LEFT JOIN (SELECT stack_id, "
                           "toUInt8(1) AS found, any(truncated) AS truncated, any(frames) AS "
                           "frames, any(kinds) AS kinds FROM jprof_stacks WHERE ");
    cq_days_where(&q);
    jp_strbuf_puts(&q.sql, " AND stack_id IN (SELECT stack_id FROM (");
    cq_flame_source(&q, &runs);
    /* the heaviest stacks first, so a cut answer keeps what matters */
    jp_strbuf_puts(&q.sql, ")) GROUP BY stack_id) USING stack_id ORDER BY value DESC, stack_id, "
                           "thread");
    if (b && b->max_stacks)
        jp_strbuf_printf(&q.sql, " LIMIT %llu", (unsigned long long)b->max_stacks);
    rc = cq_run(&q, cq_stack_row, &c, &res, err);
    if (!rc && res.stopped)
        info->stopped = true;
    if (!rc && b && b->max_stacks && res.rows_before_limit > b->max_stacks)
        store_info_partial(q.info, "more than %llu distinct stacks",
                           (unsigned long long)b->max_stacks);
    if (!rc && c.missing)
        store_info_partial(q.info, "a stack of a stored window is missing");
    /* what the caller calls rows: the stack rows of the matched windows
     * (ClickHouse's own rows_read also counts index granules, the roll-up
     * and the visibility subquery; it is what the row budget is checked
     * against) */
    info->rows_scanned = tot.nrows;
out:
    free(tot.mins);
    free(c.names);
    free(c.lens);
    free(c.kinds);
    return cq_done(&q, rc);
}

/* ---- documents ---- */

typedef struct cq_docs {
    store_doc_cb cb;
    void *ctx;
    bool status;
} cq_docs;

/* ns, service, pod, ident(7) at 3, time at 10, then json or state, reason,
 * message, engine, mode, until_ns */
static bool cq_doc_row(json_t *row, void *ctx)
{
    cq_docs *d = ctx;
    jp_batch_target t = {0};
    cq_target_read(row, 3, &t);
    store_doc_row r = {.target = &t, .time_ns = ch_i64(row, 10)};
    if (d->status) {
        r.state = ch_str(row, 11, NULL);
        r.reason = ch_str(row, 12, NULL);
        r.message = ch_str(row, 13, NULL);
        r.engine = ch_str(row, 14, NULL);
        r.mode = ch_str(row, 15, NULL);
        r.until_ns = ch_i64(row, 16);
        if (r.mode && !*r.mode)
            r.mode = NULL;
        if (!r.state)
            r.state = "";
    } else {
        r.json = ch_str(row, 11, &r.json_len);
        if (!r.json) {
            r.json = "{}";
            r.json_len = 2;
        }
    }
    bool go = d->cb(&r, d->ctx);
    jp_batch_target_cleanup(&t);
    return go;
}

static jp_err cq_docs_run(cq *q, cq_docs *d, jp_error *err)
{
    ch_result res;
    jp_err rc = cq_run(q, cq_doc_row, d, &res, err);
    if (!rc && res.stopped)
        q->info->stopped = true;
    return rc;
}

jp_err ch_snapshots_latest(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                           void *ctx, store_query_info *info, jp_error *err)
{
    cq q;
    cq_init(&q, s, f, b, info);
    jp_strbuf_puts(&q.sql, "SELECT ns, service, pod, ");
    cq_ident_cols(&q.sql, "time_ns");
    jp_strbuf_puts(&q.sql, ", max(time_ns), argMax(json, time_ns) FROM jprof_snapshots");
    cq_where(&q, "time_ns", false);
    jp_strbuf_puts(&q.sql, " GROUP BY ns, service, pod ORDER BY pod, ns, service");
    cq_docs d = {.cb = cb, .ctx = ctx};
    return cq_done(&q, cq_docs_run(&q, &d, err));
}

static jp_err cq_newest(store *s, const store_filter *f, const store_budget *b, bool status,
                        const char *table, store_doc_cb cb, void *ctx, store_query_info *info,
                        jp_error *err)
{
    cq q;
    cq_init(&q, s, f, b, info);
    jp_strbuf_puts(&q.sql, "SELECT ns, service, pod, cluster, workload, container, node, pid, "
                           "jvm_start_ns, jvm, time_ns, ");
    jp_strbuf_puts(&q.sql,
                   status ? "state, reason, message, engine, mode, until_ns FROM " : "json FROM ");
    jp_strbuf_puts(&q.sql, table);
    cq_where(&q, "time_ns", false);
    jp_strbuf_puts(&q.sql, " ORDER BY time_ns DESC");
    cq_docs d = {.cb = cb, .ctx = ctx, .status = status};
    return cq_done(&q, cq_docs_run(&q, &d, err));
}

jp_err ch_deadlocks(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                    void *ctx, store_query_info *info, jp_error *err)
{
    return cq_newest(s, f, b, false, "jprof_deadlocks", cb, ctx, info, err);
}

jp_err ch_heaps(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb, void *ctx,
                store_query_info *info, jp_error *err)
{
    return cq_newest(s, f, b, false, "jprof_heaps", cb, ctx, info, err);
}

jp_err ch_gc(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb, void *ctx,
             store_query_info *info, jp_error *err)
{
    return cq_newest(s, f, b, false, "jprof_gc", cb, ctx, info, err);
}

jp_err ch_statuses(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                   void *ctx, store_query_info *info, jp_error *err)
{
    return cq_newest(s, f, b, true, "jprof_statuses", cb, ctx, info, err);
}

/* ---- ingestion ---- */

typedef struct cq_ing {
    store_ingest_cb cb;
    void *ctx;
} cq_ing;

static bool cq_ing_row(json_t *row, void *ctx)
{
    cq_ing *c = ctx;
    store_ingest_row r = {.collector = ch_str(row, 0, NULL),
                          .accepted = ch_u64(row, 1),
                          .duplicate = ch_u64(row, 2),
                          .rejected = ch_u64(row, 3),
                          .windows = ch_u64(row, 4),
                          .stack_rows = ch_u64(row, 5),
                          .bytes = ch_u64(row, 6),
                          .first_ns = ch_i64(row, 7),
                          .last_heartbeat_ns = ch_i64(row, 8),
                          .version = ch_str(row, 9, NULL),
                          .queue_dropped_batches = ch_u64(row, 10),
                          .queue_dropped_bytes = ch_u64(row, 11),
                          .queue_bytes = ch_u64(row, 12),
                          .queue_oldest_dropped_ns = ch_i64(row, 13),
                          .last_reject_reason = ch_str(row, 14, NULL),
                          .last_ns = ch_i64(row, 15)};
    if (!r.collector)
        r.collector = "";
    return c->cb(&r, c->ctx);
}

jp_err ch_ingestion(store *s, const store_filter *f, const store_budget *b, store_ingest_cb cb,
                    void *ctx, store_query_info *info, jp_error *err)
{
    cq q;
    cq_init(&q, s, f, b, info);
    ch_flush_rejects(q.st);
    jp_strbuf_puts(&q.sql,
                   "SELECT collector, countIf(outcome = 0), countIf(outcome = 1), "
                   "countIf(outcome = 2), sum(windows), sum(rows), sum(bytes), min(received_ns), "
                   "maxIf(received_ns, heartbeat = 1), "
                   "argMaxIf(version, received_ns, outcome < 2 AND version != ''), "
                   /* the latest batch that reported its queue (q_oldest -1: it did not) */
                   "argMaxIf(q_batches, received_ns, outcome < 2 AND q_oldest >= 0), "
                   "argMaxIf(q_bytes, received_ns, outcome < 2 AND q_oldest >= 0), "
                   "argMaxIf(q_now, received_ns, outcome < 2 AND q_oldest >= 0), "
                   "argMaxIf(q_oldest, received_ns, outcome < 2 AND q_oldest >= 0), "
                   "argMaxIf(reason, received_ns, outcome = 2), max(received_ns) "
                   "FROM jprof_ingest WHERE day >= '");
    ch_day_str(&q.sql, store_day_of(f->from_ns));
    jp_strbuf_puts(&q.sql, "' AND day <= '");
    ch_day_str(&q.sql, store_day_of(f->to_ns - 1));
    jp_strbuf_printf(&q.sql,
                     "' AND received_ns >= %lld AND received_ns < %lld AND "
                     "(outcome != 0 OR" CH_VISIBLE ") GROUP BY collector ORDER BY collector",
                     (long long)f->from_ns, (long long)f->to_ns);
    cq_ing c = {.cb = cb, .ctx = ctx};
    ch_result res;
    jp_err rc = cq_run(&q, cq_ing_row, &c, &res, err);
    if (!rc && res.stopped)
        info->stopped = true;
    return cq_done(&q, rc);
}

/* ---- retention view ---- */

typedef struct cq_days {
    store_day_row *rows;
    size_t n, cap;
    int retention_days;
} cq_days;

static store_day_row *cq_day_get(cq_days *d, int64_t day)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].day == day)
            return &d->rows[i];
    d->rows = jp_xgrow(d->rows, &d->cap, d->n + 1, sizeof *d->rows);
    store_day_row *r = &d->rows[d->n++];
    memset(r, 0, sizeof *r);
    r->day = day;
    r->expires_ns = (day + d->retention_days) * STORE_DAY_NS;
    return r;
}

static bool cq_day_counts(json_t *row, void *ctx)
{
    int64_t day = ch_day(row, 0);
    if (day == INT64_MIN)
        return true;
    store_day_row *r = cq_day_get(ctx, day);
    r->windows += ch_u64(row, 1);
    r->stack_rows += ch_u64(row, 2);
    r->stacks += ch_u64(row, 3);
    r->docs += ch_u64(row, 4);
    r->batches += ch_u64(row, 5);
    return true;
}

static bool cq_day_bytes(json_t *row, void *ctx)
{
    int64_t day = ch_day(row, 0);
    if (day != INT64_MIN)
        cq_day_get(ctx, day)->bytes += ch_u64(row, 1);
    return true;
}

static int cq_day_cmp(const void *a, const void *b)
{
    int64_t x = ((const store_day_row *)a)->day, y = ((const store_day_row *)b)->day;
    return x < y ? -1 : x > y;
}

#define CQ_Z "toUInt64(0)"
static const char cq_days_sql[] =
    "SELECT toString(day), sum(w), sum(r), sum(s), sum(d), sum(b) FROM ("
    "SELECT day, count() AS w, sum(nrows) AS r, " CQ_Z " AS s, " CQ_Z " AS d, " CQ_Z
    " AS b FROM jprof_windows GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", toUInt64(uniqExact(stack_id)), " CQ_Z ", " CQ_Z
    " FROM jprof_stacks GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", " CQ_Z ", count(), " CQ_Z
    " FROM jprof_statuses GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", " CQ_Z ", count(), " CQ_Z
    " FROM jprof_snapshots GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", " CQ_Z ", count(), " CQ_Z
    " FROM jprof_deadlocks GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", " CQ_Z ", count(), " CQ_Z
    " FROM jprof_gc GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", " CQ_Z ", count(), " CQ_Z
    " FROM jprof_heaps GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", " CQ_Z ", " CQ_Z ", countIf(outcome = 0)"
    " FROM jprof_ingest GROUP BY day) GROUP BY day";

jp_err ch_days(store *s, store_day_cb cb, void *ctx, jp_error *err)
{
    ch_store *st = s->impl;
    int64_t t0 = jp_time_mono_ns();
    cq_days d = {.retention_days = st->retention_days};
    ch_result res;
    jp_err rc = ch_select(st, cq_days_sql, NULL, cq_day_counts, &d, &res, err);
    if (!rc) {
        jp_strbuf q;
        jp_strbuf_init(&q, 0);
        jp_strbuf_puts(&q, "SELECT partition, sum(bytes_on_disk) FROM system.parts WHERE active "
                           "AND database = ");
        ch_sql_str(&q, st->database);
        jp_strbuf_puts(&q, " AND table LIKE 'jprof\\\\_%' AND table != 'jprof_schema' "
                           "GROUP BY partition");
        rc = ch_select(st, q.data, NULL, cq_day_bytes, &d, &res, err);
        jp_strbuf_cleanup(&q);
    }
    if (!rc && d.n)
        qsort(d.rows, d.n, sizeof *d.rows, cq_day_cmp);
    for (size_t i = 0; !rc && i < d.n; i++)
        if (!cb(&d.rows[i], ctx))
            break;
    free(d.rows);
    ch_stats_query(st, jp_time_mono_ns() - t0, rc != JP_OK);
    return rc;
}
