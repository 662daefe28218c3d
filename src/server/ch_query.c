/* The ClickHouse store's read side. Every query restricts the day
 * partitions and the sort-key prefix (namespace, service, kind, time), sees
 * only committed batches (ch_visible), lets ClickHouse aggregate, and streams
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

void cq_init(cq *q, store *s, const store_filter *f, const store_budget *b, store_query_info *info)
{
    q->st = s->impl;
    q->f = f;
    q->b = b;
    q->info = info;
    q->t0 = jp_time_mono_ns();
    q->shard_gone = false;
    memset(info, 0, sizeof *info);
    jp_strbuf_init(&q->sql, 0);
}

jp_err cq_done(cq *q, jp_err rc)
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
typedef struct cq_shards {
    char names[96];
    size_t len;
} cq_shards;

static bool cq_shard_row(json_t *row, void *ctx)
{
    cq_shards *s = ctx;
    int n = snprintf(s->names + s->len, sizeof s->names - s->len, "%s%llu", s->len ? ", " : "",
                     (unsigned long long)ch_u64(row, 0));
    if (n > 0 && (size_t)n < sizeof s->names - s->len)
        s->len += (size_t)n;
    return true;
}

/* "shard 2 (127.0.0.1:9001, 127.0.0.1:9002)": which shards a "Code: 279"
 * (all connection tries failed) names, from its "(host:port)" parts and the
 * cluster's layout. */
static void cq_missing_shards(ch_store *st, const char *msg, char *out, size_t len)
{
    char addrs[4][64];
    size_t n = 0;
    jp_strbuf q;
    jp_strbuf_init(&q, 0);
    jp_strbuf_puts(&q, "SELECT DISTINCT shard_num FROM system.clusters WHERE cluster = ");
    ch_sql_str(&q, st->cluster);
    jp_strbuf_puts(&q, " AND (0");
    for (const char *p = msg; n < 4 && (p = strchr(p, '(')) != NULL; p++) {
        const char *colon = strchr(p, ':'), *close = strchr(p, ')');
        if (!colon || !close || colon > close || close - p > 60 || close - colon < 2)
            continue;
        snprintf(addrs[n], sizeof addrs[n], "%.*s", (int)(close - p - 1), p + 1);
        bool dup = false;
        for (size_t i = 0; i < n; i++)
            dup |= !strcmp(addrs[i], addrs[n]);
        if (dup)
            continue;
        jp_strbuf_puts(&q, " OR (host_address = ");
        char host[64];
        snprintf(host, sizeof host, "%.*s", (int)(colon - p - 1), p + 1);
        ch_sql_str(&q, host);
        jp_strbuf_printf(&q, " AND port = %ld)", strtol(colon + 1, NULL, 10));
        n++;
    }
    jp_strbuf_puts(&q, ") ORDER BY shard_num");
    cq_shards sh = {0};
    ch_result res;
    ch_select_opts o = {.use_db = false};
    if (n)
        ch_select_with(st, q.data, &o, cq_shard_row, &sh, &res, NULL);
    jp_strbuf_cleanup(&q);
    size_t at = (size_t)snprintf(out, len, "shard %s (", sh.len ? sh.names : "?");
    for (size_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%s", i ? ", " : "", addrs[i]);
    if (at < len)
        snprintf(out + at, len - at, ")");
}

jp_err cq_run(cq *q, ch_row_fn fn, void *ctx, ch_result *res, jp_error *err)
{
    store_budget left;
    memset(res, 0, sizeof *res);
    if (!cq_budget(q, &left))
        return JP_OK;
    jp_error e;
    jp_error_init(&e);
    ch_select_opts o = {.b = q->b ? &left : NULL,
                        .use_db = true,
                        .settings = q->shard_gone ? "skip_unavailable_shards=1" : NULL};
    jp_err rc = ch_select_with(q->st, q->sql.data, &o, fn, ctx, res, &e);
    if (rc && q->st->cluster && !res->rows &&
        (strstr(e.msg, "Code: 32,") || strstr(e.msg, "Code: 210,"))) {
        /* a node of the cluster just died under a pooled connection: the
         * next try finds it refusing (279, below) or a live replica */
        rc = ch_select_with(q->st, q->sql.data, &o, fn, ctx, res, &e);
    }
    if (rc && q->st->cluster && strstr(e.msg, "Code: 279") && !res->rows) {
        /* every replica of a shard is down: the other shards still answer
         * (this query and the op's next ones), and the answer says which
         * one is missing */
        char which[200];
        cq_missing_shards(q->st, e.msg, which, sizeof which);
        q->shard_gone = true;
        o.settings = "skip_unavailable_shards=1";
        rc = ch_select_with(q->st, q->sql.data, &o, fn, ctx, res, &e);
        if (!rc)
            store_info_partial(q->info, "%s unreachable: the answer lacks its data", which);
    }
    if (rc) {
        if (err)
            *err = e;
        return rc;
    }
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

void cq_eq(jp_strbuf *s, const char *col, const char *v)
{
    if (!v)
        return;
    jp_strbuf_printf(s, " AND %s = ", col);
    ch_sql_str(s, v);
}

void cq_conds(cq *q, const char *time_col, bool kind)
{
    const store_filter *f = q->f;
    jp_strbuf *s = &q->sql;
    jp_strbuf_puts(s, "day >= '");
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
    jp_strbuf_puts(s, " AND");
    /* a batch reaches the server at most a day before its windows' and
     * documents' days (main.c caps --max-clock-skew at a day) */
    ch_visible(s, q->st, store_day_of(f->from_ns) - 1);
}

void cq_where(cq *q, const char *time_col, bool kind)
{
    jp_strbuf_puts(&q->sql, " WHERE ");
    cq_conds(q, time_col, kind);
}

void ch_visible(jp_strbuf *s, const ch_store *st, int64_t from_day)
{
    jp_strbuf_printf(s, " attempt IN (SELECT min(attempt) FROM %s.jprof_ingest WHERE outcome = 0",
                     st->local_db);
    if (from_day != INT64_MIN) {
        jp_strbuf_puts(s, " AND day >= '");
        ch_day_str(s, from_day < 0 ? 0 : from_day);
        jp_strbuf_putc(s, '\'');
    }
    jp_strbuf_puts(s, " GROUP BY batch_id)");
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
                   "SELECT collector, countIf(outcome = 0 AND part = 0), countIf(outcome = 1), "
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
                     "' AND received_ns >= %lld AND received_ns < %lld AND (outcome != 0 OR",
                     (long long)f->from_ns, (long long)f->to_ns);
    ch_visible(&q.sql, q.st, store_day_of(f->from_ns));
    jp_strbuf_puts(&q.sql, ") GROUP BY collector ORDER BY collector");
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
/* Per day: windows, stack rows, stacks, documents, batches; {V} stands for
 * the visibility condition (rows of attempts that did not win are stored but
 * not counted). */
static const char cq_days_sql[] =
    "SELECT toString(day), sum(w), sum(r), sum(s), sum(d), sum(b) FROM ("
    "SELECT day, count() AS w, sum(nrows) AS r, " CQ_Z " AS s, " CQ_Z " AS d, " CQ_Z
    " AS b FROM jprof_windows WHERE {V} GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", toUInt64(uniqExact(stack_id)), " CQ_Z ", " CQ_Z
    " FROM jprof_stacks GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", " CQ_Z ", count(), " CQ_Z
    " FROM jprof_statuses WHERE {V} GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", " CQ_Z ", count(), " CQ_Z
    " FROM jprof_snapshots WHERE {V} GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", " CQ_Z ", count(), " CQ_Z
    " FROM jprof_deadlocks WHERE {V} GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", " CQ_Z ", count(), " CQ_Z
    " FROM jprof_gc WHERE {V} GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", " CQ_Z ", count(), " CQ_Z
    " FROM jprof_heaps WHERE {V} GROUP BY day UNION ALL "
    "SELECT day, " CQ_Z ", " CQ_Z ", " CQ_Z ", " CQ_Z ", countIf(outcome = 0 AND part = 0)"
    " FROM jprof_ingest WHERE outcome = 0 AND {V} GROUP BY day) GROUP BY day";

jp_err ch_days(store *s, store_day_cb cb, void *ctx, jp_error *err)
{
    ch_store *st = s->impl;
    int64_t t0 = jp_time_mono_ns();
    cq_days d = {.retention_days = st->retention_days};
    ch_result res;
    jp_strbuf sql, vis;
    jp_strbuf_init(&sql, 0);
    jp_strbuf_init(&vis, 0);
    ch_visible(&vis, st, INT64_MIN);
    for (const char *p = cq_days_sql; *p;) {
        if (!strncmp(p, "{V}", 3)) {
            jp_strbuf_append(&sql, vis.data, vis.len);
            p += 3;
        } else {
            jp_strbuf_putc(&sql, *p++);
        }
    }
    jp_err rc = ch_select(st, sql.data, NULL, cq_day_counts, &d, &res, err);
    jp_strbuf_cleanup(&sql);
    jp_strbuf_cleanup(&vis);
    if (!rc) {
        jp_strbuf q;
        jp_strbuf_init(&q, 0);
        jp_strbuf_puts(&q, "SELECT partition, sum(bytes_on_disk) FROM ");
        ch_parts_table(st, &q);
        jp_strbuf_puts(&q, " WHERE active AND database = ");
        ch_sql_str(&q, st->local_db);
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
