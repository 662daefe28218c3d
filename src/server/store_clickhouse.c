/* The ClickHouse store: open, schema, writes, retention. Reads live in
 * ch_query.c, HTTP in ch_http.c.
 *
 * How a batch is written without transactions, and deduplicated with no
 * state in this process (so replicas can share one ClickHouse):
 *   1. SELECT the batch id's commit markers (accepted rows of jprof_ingest,
 *      ordered by batch id, so this is a point lookup). Found: duplicate.
 *   2. Pick an attempt id: milliseconds since the epoch << 22 | 22 random
 *      bits, so attempts made later compare larger. INSERT the stacks the
 *      day lacks, then samples, windows, statuses, snapshots, deadlocks and
 *      GC summaries,
 *      every row tagged with the attempt id. Readers ignore these rows
 *      until step 4: they only see rows whose attempt is the smallest
 *      committed attempt of its batch id (CH_VISIBLE in ch_int.h).
 *   3. Look for markers again: another writer committed meanwhile ->
 *      duplicate (our rows stay invisible; retention removes them).
 *   4. INSERT the marker (the ingest row, outcome 0, with our attempt id).
 *      From here on the whole batch is visible at once.
 *   5. Read the smallest committed attempt back: not ours -> duplicate.
 * A write that fails anywhere before 4 leaves nothing visible and records no
 * batch id, so the agent's retry writes it again cleanly. Readers pick one
 * attempt per batch id, so data is never counted twice, whatever the timing.
 * Within one process, writes of the same batch id are serialised (the
 * second waits for the first, then finds its marker), so exactly one is
 * accepted. The remaining race is across replicas, in the acknowledgement
 * only: two replicas writing
 * the same batch id at the same moment, both passing 3 before either runs
 * 4, where the one with the larger attempt id reads back in 5 before the
 * other's marker lands: both answer "accepted" (the data still counts once;
 * the ingestion log shows one accepted batch). The window is the time
 * between 3 and 5 of the other writer, a few milliseconds.
 *
 * A status/snapshot/deadlock/GC summary whose day is not retained, or is
 * after tomorrow, is refused (docs_refused), as in the embedded store. */
#include "server/store_clickhouse.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/ch_int.h"
#include "wire/gc_json.h"

#define CH_REJECTS_MAX 4096
#define CH_KNOWN_STACKS_MAX (4u << 20) /* cache entries before it is cleared */
#define CH_IN_CHUNK 2000               /* stack ids per existence query */
#define CH_TTL_DAYS (STORE_RETENTION_MAX_DAYS + 1)

static const char *const ch_tables[] = {
    "jprof_samples",   "jprof_windows", "jprof_stacks",    "jprof_statuses", "jprof_snapshots",
    "jprof_deadlocks", "jprof_ingest",  "jprof_rollup_1m", "jprof_gc",       "jprof_heaps"};
#define CH_NTABLES (sizeof ch_tables / sizeof *ch_tables)

/* ---- schema ---- */

#define CH_IDENT                                                                                   \
    "cluster {S}, workload {S}, container {S}, node {S}, pid Int64, jvm_start_ns Int64, "          \
    "jvm {S}"

/* Version 1. {S} stands for the type of short repeated strings
 * (LowCardinality where the server has it), {TTL} for the TTL clause (empty
 * on old servers): see ch_schema_expand(). */
static const char *const ch_schema_v1[] = {
    "CREATE TABLE IF NOT EXISTS jprof_samples (day Date, ns {S}, service {S}, pod {S}, "
    "kind UInt8, start_ns Int64, stack_id UInt64, thread {S}, samples UInt64, value UInt64, "
    "attempt UInt64) ENGINE = MergeTree PARTITION BY day "
    "ORDER BY (ns, service, kind, start_ns, stack_id){TTL}",
    "CREATE TABLE IF NOT EXISTS jprof_windows (day Date, ns {S}, service {S}, pod {S}, "
    "kind UInt8, start_ns Int64, end_ns Int64, period_ns Int64, events UInt64, dropped UInt8, "
    "truncated UInt8, nrows UInt64, samples UInt64, value UInt64, " CH_IDENT ", attempt UInt64) "
    "ENGINE = MergeTree PARTITION BY day ORDER BY (ns, service, kind, start_ns){TTL}",
    "CREATE TABLE IF NOT EXISTS jprof_stacks (day Date, stack_id UInt64, truncated UInt8, "
    "depth UInt32, frames Array(String), kinds Array(UInt8)) ENGINE = ReplacingMergeTree "
    "PARTITION BY day "
    "ORDER BY stack_id{TTL}",
    "CREATE TABLE IF NOT EXISTS jprof_statuses (day Date, ns {S}, service {S}, pod {S}, "
    "time_ns Int64, state {S}, reason {S}, message String, engine {S}, " CH_IDENT
    ", attempt UInt64, mode {S}, until_ns Int64) ENGINE = MergeTree PARTITION BY day "
    "ORDER BY (ns, service, time_ns){TTL}",
    "CREATE TABLE IF NOT EXISTS jprof_snapshots (day Date, ns {S}, service {S}, pod {S}, "
    "time_ns Int64, json String, " CH_IDENT ", attempt UInt64) ENGINE = MergeTree "
    "PARTITION BY day ORDER BY (ns, service, pod, time_ns){TTL}",
    "CREATE TABLE IF NOT EXISTS jprof_deadlocks (day Date, ns {S}, service {S}, pod {S}, "
    "time_ns Int64, json String, " CH_IDENT ", attempt UInt64) ENGINE = MergeTree "
    "PARTITION BY day ORDER BY (ns, service, time_ns){TTL}",
    "CREATE TABLE IF NOT EXISTS jprof_ingest (day Date, received_ns Int64, batch_id String, "
    "attempt UInt64, outcome UInt8, collector {S}, version {S}, reason String, "
    "windows UInt64, rows UInt64, bytes UInt64, heartbeat UInt8, q_batches UInt64, "
    "q_bytes UInt64, q_now UInt64, q_oldest Int64) ENGINE = MergeTree PARTITION BY day "
    "ORDER BY (batch_id, attempt){TTL}",
    /* The per-minute roll-up of every pod of a service (see ch_put_rollup):
     * added to version 1 without a new version number, because it only adds
     * a table. A database made before it gets the table at the next open;
     * its minutes have no roll-up markers and are read from jprof_samples,
     * exactly, until retention drops them. An older jprof-server can still
     * use the database: the minutes it writes lack markers and are read the
     * same way. */
    "CREATE TABLE IF NOT EXISTS jprof_rollup_1m (day Date, ns {S}, service {S}, kind UInt8, "
    "minute UInt32, m UInt8, stack_id UInt64, thread {S}, samples UInt64, value UInt64, "
    "rows UInt64, windows UInt64) ENGINE = SummingMergeTree((samples, value, rows, windows)) "
    "PARTITION BY day ORDER BY (ns, service, kind, m, minute, stack_id, thread){TTL}",
    /* GC summaries per window (json: the record of wire/gc_json.h, which
     * merges; the pause numbers also as columns for SQL users). Like the
     * roll-up, it only adds a table: no new version number, so an older
     * jprof-server keeps using the database (and ignores the table). */
    "CREATE TABLE IF NOT EXISTS jprof_gc (day Date, ns {S}, service {S}, pod {S}, "
    "time_ns Int64, json String, " CH_IDENT ", attempt UInt64, end_ns Int64, "
    "collections UInt64, pauses UInt64, pause_total_ns Int64, pause_max_ns Int64) "
    "ENGINE = MergeTree PARTITION BY day ORDER BY (ns, service, time_ns){TTL}",
    /* Class histograms (json: the document {"target", "time", "histogram"}
     * of wire/heap_json.h). Only adds a table, as jprof_gc did. */
    "CREATE TABLE IF NOT EXISTS jprof_heaps (day Date, ns {S}, service {S}, pod {S}, "
    "time_ns Int64, json String, " CH_IDENT ", attempt UInt64) ENGINE = MergeTree "
    "PARTITION BY day ORDER BY (ns, service, pod, time_ns){TTL}",
};

/* Columns added after version 1, in the order they were added (ALTER TABLE
 * ADD COLUMN appends, so a migrated table has the same column order as a new
 * one). Version 2: the policy mode and window end of a status, the frame
 * kinds of a stack. */
static const struct {
    const char *table, *column, *type;
} ch_columns_added[] = {
    {"jprof_statuses", "mode", "{S}"},
    {"jprof_statuses", "until_ns", "Int64"},
    {"jprof_stacks", "kinds", "Array(UInt8)"},
};

static void ch_schema_expand(jp_strbuf *q, const char *tpl, const char *str, const char *ttl);

static bool ch_count_row(json_t *row, void *ctx)
{
    *(uint64_t *)ctx = ch_u64(row, 0);
    return true;
}

/* Adds the columns a table made by an older server lacks (checked in
 * system.columns: 18.16 has no ADD COLUMN IF NOT EXISTS). */
static jp_err ch_add_columns(ch_store *st, const char *str, jp_error *err)
{
    jp_strbuf q;
    jp_strbuf_init(&q, 0);
    jp_err rc = JP_OK;
    for (size_t i = 0; !rc && i < sizeof ch_columns_added / sizeof *ch_columns_added; i++) {
        uint64_t have = 0;
        ch_result res;
        jp_strbuf_reset(&q);
        jp_strbuf_puts(&q, "SELECT count() FROM system.columns WHERE database = ");
        ch_sql_str(&q, st->database);
        jp_strbuf_printf(&q, " AND table = '%s' AND name = '%s'", ch_columns_added[i].table,
                         ch_columns_added[i].column);
        rc = ch_select(st, q.data, NULL, ch_count_row, &have, &res, err);
        if (rc || have)
            continue;
        jp_strbuf_reset(&q);
        jp_strbuf_printf(&q, "ALTER TABLE %s ADD COLUMN %s ", ch_columns_added[i].table,
                         ch_columns_added[i].column);
        ch_schema_expand(&q, ch_columns_added[i].type, str, "");
        rc = ch_exec(st, q.data, true, NULL, err);
    }
    jp_strbuf_cleanup(&q);
    return rc;
}

/* "19.6.2.11" -> 19, 6 */
static void ch_parse_version(ch_store *st, const char *v)
{
    snprintf(st->version, sizeof st->version, "%s", v);
    char *nl = strpbrk(st->version, "\r\n");
    if (nl)
        *nl = '\0';
    char *end;
    st->ver_major = (int)strtol(st->version, &end, 10);
    st->ver_minor = *end == '.' ? (int)strtol(end + 1, NULL, 10) : 0;
    /* TTL came in 19.6; LowCardinality stopped being experimental in 19.x,
     * stay conservative and use it from 20.1 on */
    st->has_ttl = st->ver_major > 19 || (st->ver_major == 19 && st->ver_minor >= 6);
    st->has_lowcard = st->ver_major >= 20;
}

typedef struct ch_one {
    uint64_t a, b;
    bool got;
} ch_one;

static bool ch_one_row(json_t *row, void *ctx)
{
    ch_one *o = ctx;
    o->a = ch_u64(row, 0);
    o->b = ch_u64(row, 1);
    o->got = true;
    return true;
}

/* Copies a schema template with {S} and {TTL} replaced. */
static void ch_schema_expand(jp_strbuf *q, const char *tpl, const char *str, const char *ttl)
{
    while (*tpl) {
        if (strncmp(tpl, "{S}", 3) == 0) {
            jp_strbuf_puts(q, str);
            tpl += 3;
        } else if (strncmp(tpl, "{TTL}", 5) == 0) {
            jp_strbuf_puts(q, ttl);
            tpl += 5;
        } else {
            jp_strbuf_putc(q, *tpl++);
        }
    }
}

static jp_err ch_schema(ch_store *st, jp_error *err)
{
    jp_strbuf q, out;
    jp_strbuf_init(&q, 0);
    jp_strbuf_init(&out, 4096);
    jp_strbuf_puts(&q, "CREATE DATABASE IF NOT EXISTS ");
    jp_strbuf_puts(&q, st->database);
    jp_err rc = ch_exec(st, q.data, false, NULL, err);
    if (!rc)
        rc = ch_exec(st,
                     "CREATE TABLE IF NOT EXISTS jprof_schema (version UInt32, applied_ns Int64, "
                     "server String) ENGINE = MergeTree ORDER BY version",
                     true, NULL, err);
    ch_one cur = {0};
    ch_result res;
    if (!rc)
        rc = ch_select(st, "SELECT max(version), count() FROM jprof_schema", NULL, ch_one_row, &cur,
                       &res, err);
    if (!rc && cur.a > CH_SCHEMA_VERSION)
        rc = jp_error_set(err, JP_ERR_UNSUPPORTED,
                          "clickhouse database %s has schema version %llu, newer than this "
                          "jprof-server understands (%d): upgrade jprof-server",
                          st->database, (unsigned long long)cur.a, CH_SCHEMA_VERSION);
    /* CREATE ... IF NOT EXISTS every time: cheap, and it repairs a table
     * someone dropped by hand */
    char ttl[64] = "";
    if (st->has_ttl)
        snprintf(ttl, sizeof ttl, " TTL day + toIntervalDay(%d)", CH_TTL_DAYS);
    const char *str = st->has_lowcard ? "LowCardinality(String)" : "String";
    for (size_t i = 0; !rc && i < sizeof ch_schema_v1 / sizeof *ch_schema_v1; i++) {
        jp_strbuf_reset(&q);
        ch_schema_expand(&q, ch_schema_v1[i], str, ttl);
        rc = ch_exec(st, q.data, true, NULL, err);
    }
    if (!rc)
        rc = ch_add_columns(st, str, err);
    if (!rc && cur.a < CH_SCHEMA_VERSION) {
        jp_strbuf_reset(&q);
        jp_strbuf_printf(&q, "%d\t%lld\t", CH_SCHEMA_VERSION, (long long)jp_time_now_ns());
        ch_tsv_str(&q, "jprof-server " PACKAGE_VERSION, strlen("jprof-server " PACKAGE_VERSION));
        jp_strbuf_putc(&q, '\n');
        rc = ch_insert(st, "jprof_schema", &q, err);
    }
    jp_strbuf_cleanup(&q);
    jp_strbuf_cleanup(&out);
    return rc;
}

/* ---- writes ---- */

static uint64_t ch_attempt_new(ch_store *st)
{
    pthread_mutex_lock(&st->mu);
    uint64_t seq = ++st->attempt_seq;
    pthread_mutex_unlock(&st->mu);
    uint64_t r = jp_hash_combine(jp_hash_u64((uint64_t)jp_time_mono_ns()),
                                 jp_hash_combine((uint64_t)getpid(), seq));
    uint64_t ms = (uint64_t)(jp_time_now_ns() / 1000000);
    return (ms << 22) | (r & ((1u << 22) - 1));
}

/* Number of commit markers of a batch id, and the winning attempt. */
static jp_err ch_markers(ch_store *st, const char *id, uint64_t *count, uint64_t *winner,
                         jp_error *err)
{
    jp_strbuf q;
    jp_strbuf_init(&q, 0);
    jp_strbuf_puts(&q, "SELECT count(), min(attempt) FROM jprof_ingest WHERE batch_id = ");
    ch_sql_str(&q, id);
    jp_strbuf_puts(&q, " AND outcome = 0");
    ch_one o = {0};
    ch_result res;
    jp_err rc = ch_select(st, q.data, NULL, ch_one_row, &o, &res, err);
    *count = o.a;
    *winner = o.b;
    jp_strbuf_cleanup(&q);
    return rc;
}

static void ch_tsv_u64(jp_strbuf *b, uint64_t v, char sep)
{
    jp_strbuf_printf(b, "%llu%c", (unsigned long long)v, sep);
}

static void ch_tsv_i64(jp_strbuf *b, int64_t v, char sep)
{
    jp_strbuf_printf(b, "%lld%c", (long long)v, sep);
}

static void ch_tsv_field(jp_strbuf *b, const char *s, char sep)
{
    ch_tsv_str(b, s, s ? strlen(s) : 0);
    jp_strbuf_putc(b, sep);
}

/* day, ns, service, pod */
static void ch_tsv_target_key(jp_strbuf *b, int64_t day, const jp_batch_target *t)
{
    ch_day_str(b, day);
    jp_strbuf_putc(b, '\t');
    ch_tsv_field(b, t->ns, '\t');
    ch_tsv_field(b, t->service, '\t');
    ch_tsv_field(b, t->pod, '\t');
}

/* the identity columns (CH_IDENT) */
static void ch_tsv_ident(jp_strbuf *b, const jp_batch_target *t)
{
    ch_tsv_field(b, t->cluster, '\t');
    ch_tsv_field(b, t->workload, '\t');
    ch_tsv_field(b, t->container, '\t');
    ch_tsv_field(b, t->node, '\t');
    ch_tsv_i64(b, t->pid, '\t');
    ch_tsv_i64(b, t->jvm_start_ns, '\t');
    ch_tsv_field(b, t->jvm, '\t');
}

typedef struct ch_wctx {
    ch_store *st;
    const jp_batch *b;
    const store_write_opts *opt;
    store_write_result *res;
    uint64_t attempt;
    int64_t now;
    jp_u64map need;    /* hash(day, stack id) -> (day << 32 | stack index) + 1, still unknown */
    jp_strbuf rows, q; /* scratch */
} ch_wctx;

static bool ch_window_skipped(const ch_wctx *w, size_t i)
{
    return w->opt && w->opt->skip_windows && w->opt->skip_windows[i];
}

static uint64_t ch_stack_key(int64_t day, uint64_t id)
{
    return jp_hash_combine(jp_hash_u64((uint64_t)day), id);
}

static bool ch_known_row(json_t *row, void *ctx)
{
    jp_u64map *need = ctx;
    int64_t day = ch_day(row, 0);
    uint64_t id = ch_u64(row, 1), v;
    uint64_t key = ch_stack_key(day, id);
    if (jp_u64map_get(need, key, &v))
        jp_u64map_put(need, key, 0); /* stored already */
    return true;
}

/* Which of the batch's (day, stack) pairs ClickHouse has: asked in chunks so
 * a query never grows past the server's max_query_size. */
static jp_err ch_stacks_lookup(ch_wctx *w, const uint64_t *ids, size_t n, jp_error *err)
{
    jp_err rc = JP_OK;
    for (size_t at = 0; at < n && !rc; at += CH_IN_CHUNK) {
        size_t end = at + CH_IN_CHUNK < n ? at + CH_IN_CHUNK : n;
        jp_strbuf_reset(&w->q);
        jp_strbuf_puts(&w->q,
                       "SELECT toString(day), stack_id FROM jprof_stacks WHERE stack_id IN (");
        for (size_t i = at; i < end; i++)
            jp_strbuf_printf(&w->q, "%s%llu", i > at ? "," : "", (unsigned long long)ids[i]);
        jp_strbuf_puts(&w->q, ") GROUP BY day, stack_id");
        ch_result res;
        rc = ch_select(w->st, w->q.data, NULL, ch_known_row, &w->need, &res, err);
    }
    return rc;
}

static void ch_need_stack(ch_wctx *w, int64_t day, uint32_t si)
{
    uint64_t key = ch_stack_key(day, w->b->stacks[si].id), v;
    pthread_mutex_lock(&w->st->mu);
    bool known = jp_u64map_get(&w->st->known_stacks, key, &v);
    pthread_mutex_unlock(&w->st->mu);
    if (!known && !jp_u64map_get(&w->need, key, &v))
        jp_u64map_put(&w->need, key, ((uint64_t)(day - INT32_MIN) << 32 | si) + 1);
}

/* Stores the stacks each written day lacks. */
static jp_err ch_put_stacks(ch_wctx *w, jp_error *err)
{
    const jp_batch *b = w->b;
    for (size_t i = 0; i < b->nwindows; i++) {
        if (ch_window_skipped(w, i))
            continue;
        const jp_batch_window *win = &b->windows[i];
        int64_t day = store_day_of(win->start_ns);
        for (size_t r = 0; r < win->nrows; r++)
            ch_need_stack(w, day, win->rows[r].stack);
    }
    if (!w->need.count)
        return JP_OK;
    uint64_t *ids = jp_xcalloc(w->need.count, sizeof *ids);
    size_t n = 0;
    for (size_t k = 0; k < w->need.cap; k++)
        if (w->need.used[k] && w->need.vals[k])
            ids[n++] = b->stacks[(w->need.vals[k] - 1) & 0xffffffffu].id;
    jp_err rc = ch_stacks_lookup(w, ids, n, err);
    free(ids);
    if (rc)
        return rc;
    const char **names = NULL;
    size_t names_cap = 0;
    jp_strbuf_reset(&w->rows);
    for (size_t k = 0; k < w->need.cap; k++) {
        if (!w->need.used[k] || !w->need.vals[k])
            continue;
        uint64_t v = w->need.vals[k] - 1;
        int64_t day = (int64_t)(v >> 32) + INT32_MIN;
        const jp_batch_stack *s = &b->stacks[v & 0xffffffffu];
        names = jp_xgrow(names, &names_cap, s->depth + 1, sizeof *names);
        for (uint32_t f = 0; f < s->depth; f++)
            names[f] = b->frames[s->frames[f]];
        ch_day_str(&w->rows, day);
        jp_strbuf_putc(&w->rows, '\t');
        ch_tsv_u64(&w->rows, s->id, '\t');
        ch_tsv_u64(&w->rows, s->truncated, '\t');
        ch_tsv_u64(&w->rows, s->depth, '\t');
        ch_tsv_str_array(&w->rows, names, s->depth);
        /* the frame kinds, root first ([] when the agent sent none) */
        jp_strbuf_puts(&w->rows, "\t[");
        for (uint32_t f = 0; b->nframe_kinds && f < s->depth; f++)
            jp_strbuf_printf(&w->rows, "%s%u", f ? "," : "",
                             (unsigned)jp_batch_frame_kind(b, s->frames[f]));
        jp_strbuf_puts(&w->rows, "]\n");
        w->res->new_stacks++;
    }
    free(names);
    if (w->rows.len)
        rc = ch_insert(w->st, "jprof_stacks", &w->rows, err);
    if (!rc) {
        pthread_mutex_lock(&w->st->mu);
        if (w->st->known_stacks.count > CH_KNOWN_STACKS_MAX)
            jp_u64map_clear(&w->st->known_stacks);
        for (size_t k = 0; k < w->need.cap; k++)
            if (w->need.used[k])
                jp_u64map_put(&w->st->known_stacks, w->need.keys[k], 1);
        pthread_mutex_unlock(&w->st->mu);
    }
    return rc;
}

static jp_err ch_put_windows(ch_wctx *w, jp_error *err)
{
    const jp_batch *b = w->b;
    jp_strbuf_reset(&w->rows);
    jp_strbuf_reset(&w->q); /* the windows table's rows */
    for (size_t i = 0; i < b->nwindows; i++) {
        if (ch_window_skipped(w, i))
            continue;
        const jp_batch_window *win = &b->windows[i];
        int64_t day = store_day_of(win->start_ns);
        uint64_t samples = 0, value = 0;
        for (size_t r = 0; r < win->nrows; r++) {
            const jp_batch_row *row = &win->rows[r];
            ch_tsv_target_key(&w->rows, day, &win->target);
            ch_tsv_u64(&w->rows, (uint64_t)win->kind, '\t');
            ch_tsv_i64(&w->rows, win->start_ns, '\t');
            ch_tsv_u64(&w->rows, b->stacks[row->stack].id, '\t');
            ch_tsv_field(&w->rows,
                         row->thread == JP_BATCH_NO_THREAD ? NULL : b->threads[row->thread], '\t');
            ch_tsv_u64(&w->rows, row->samples, '\t');
            ch_tsv_u64(&w->rows, row->value, '\t');
            ch_tsv_u64(&w->rows, w->attempt, '\n');
            samples += row->samples;
            value += row->value;
        }
        ch_tsv_target_key(&w->q, day, &win->target);
        ch_tsv_u64(&w->q, (uint64_t)win->kind, '\t');
        ch_tsv_i64(&w->q, win->start_ns, '\t');
        ch_tsv_i64(&w->q, win->end_ns, '\t');
        ch_tsv_i64(&w->q, win->period_ns, '\t');
        ch_tsv_u64(&w->q, win->events, '\t');
        ch_tsv_u64(&w->q, win->dropped, '\t');
        ch_tsv_u64(&w->q, win->truncated, '\t');
        ch_tsv_u64(&w->q, win->nrows, '\t');
        ch_tsv_u64(&w->q, samples, '\t');
        ch_tsv_u64(&w->q, value, '\t');
        ch_tsv_ident(&w->q, &win->target);
        ch_tsv_u64(&w->q, w->attempt, '\n');
        w->res->windows++;
        w->res->stack_rows += win->nrows;
    }
    jp_err rc = JP_OK;
    if (w->rows.len)
        rc = ch_insert(w->st, "jprof_samples", &w->rows, err);
    if (!rc && w->q.len)
        rc = ch_insert(w->st, "jprof_windows", &w->q, err);
    return rc;
}

/* A document goes into its own day if that day is retained and not beyond
 * tomorrow (a skewed clock must not create partitions retention ignores). */
static bool ch_doc_day_ok(const ch_wctx *w, int64_t t_ns)
{
    int64_t day = store_day_of(t_ns);
    return store_day_retained(day, w->now, w->st->retention_days) &&
           day <= store_day_of(w->now) + 1;
}

static jp_err ch_put_docs(ch_wctx *w, jp_error *err)
{
    const jp_batch *b = w->b;
    jp_strbuf_reset(&w->rows);
    for (size_t i = 0; i < b->nstatuses; i++) {
        const jp_batch_status *s = &b->statuses[i];
        if (!ch_doc_day_ok(w, s->time_ns)) {
            w->res->docs_refused++;
            continue;
        }
        ch_tsv_target_key(&w->rows, store_day_of(s->time_ns), &s->target);
        ch_tsv_i64(&w->rows, s->time_ns, '\t');
        ch_tsv_field(&w->rows, s->state, '\t');
        ch_tsv_field(&w->rows, s->reason, '\t');
        ch_tsv_field(&w->rows, s->message, '\t');
        ch_tsv_field(&w->rows, s->engine, '\t');
        ch_tsv_ident(&w->rows, &s->target);
        ch_tsv_u64(&w->rows, w->attempt, '\t');
        ch_tsv_field(&w->rows, s->mode, '\t');
        ch_tsv_i64(&w->rows, s->until_ns, '\n');
        w->res->docs++;
    }
    jp_err rc = JP_OK;
    if (w->rows.len)
        rc = ch_insert(w->st, "jprof_statuses", &w->rows, err);
    const jp_batch_doc *lists[3] = {b->snapshots, b->deadlocks, b->heaps};
    size_t counts[3] = {b->nsnapshots, b->ndeadlocks, b->nheaps};
    const char *tables[3] = {"jprof_snapshots", "jprof_deadlocks", "jprof_heaps"};
    for (int l = 0; l < 3 && !rc; l++) {
        jp_strbuf_reset(&w->rows);
        for (size_t i = 0; i < counts[l]; i++) {
            const jp_batch_doc *d = &lists[l][i];
            if (!ch_doc_day_ok(w, d->time_ns)) {
                w->res->docs_refused++;
                continue;
            }
            ch_tsv_target_key(&w->rows, store_day_of(d->time_ns), &d->target);
            ch_tsv_i64(&w->rows, d->time_ns, '\t');
            ch_tsv_str(&w->rows, d->json, d->len);
            jp_strbuf_putc(&w->rows, '\t');
            ch_tsv_ident(&w->rows, &d->target);
            ch_tsv_u64(&w->rows, w->attempt, '\n');
            w->res->docs++;
        }
        if (w->rows.len)
            rc = ch_insert(w->st, tables[l], &w->rows, err);
    }
    jp_strbuf_reset(&w->rows);
    for (size_t i = 0; i < b->ngcs && !rc; i++) {
        const jp_batch_gc *g = &b->gcs[i];
        const jp_gc_summary *gs = &g->w.s;
        if (!ch_doc_day_ok(w, gs->from_ns)) {
            w->res->docs_refused++;
            continue;
        }
        json_t *j = jp_gc_window_json(&g->w);
        char *text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        if (!text)
            return jp_error_set(err, JP_ERR_NOMEM, "GC summary: cannot encode");
        ch_tsv_target_key(&w->rows, store_day_of(gs->from_ns), &g->target);
        ch_tsv_i64(&w->rows, gs->from_ns, '\t');
        ch_tsv_str(&w->rows, text, strlen(text));
        free(text);
        jp_strbuf_putc(&w->rows, '\t');
        ch_tsv_ident(&w->rows, &g->target);
        ch_tsv_u64(&w->rows, w->attempt, '\t');
        ch_tsv_i64(&w->rows, gs->to_ns, '\t');
        ch_tsv_u64(&w->rows, gs->collections, '\t');
        ch_tsv_u64(&w->rows, gs->pauses, '\t');
        ch_tsv_i64(&w->rows, gs->pause_total_ns, '\t');
        ch_tsv_i64(&w->rows, gs->pause_max_ns, '\n');
        w->res->docs++;
    }
    if (!rc && w->rows.len)
        rc = ch_insert(w->st, "jprof_gc", &w->rows, err);
    return rc;
}

/* The roll-up of the batch's windows, written once the batch is committed
 * and ours: per window its rows (m = 0), then one marker row (m = 1) with
 * windows = 1 and the window's row count and sums. SummingMergeTree adds
 * them up per (service, kind, minute, stack, thread); rows = 1 on every
 * data row keeps a row of zero samples and value from being merged away.
 * A query uses a minute's roll-up only when its markers equal what
 * jprof_windows says of that minute's visible windows (ch_query.c), so a
 * roll-up insert that failed, landed twice, or came from two replicas
 * accepting the same batch only sends that minute back to the raw rows.
 * The marker follows its rows in one INSERT: if ClickHouse splits the
 * insert into blocks, a marker never lands without its rows. m comes before
 * minute in the sort key, so the markers of a range are read without the
 * rows between them. */
static void ch_put_rollup(ch_wctx *w)
{
    const jp_batch *b = w->b;
    jp_strbuf_reset(&w->rows);
    for (size_t i = 0; i < b->nwindows; i++) {
        const jp_batch_window *win = &b->windows[i];
        if (ch_window_skipped(w, i) || win->start_ns < 0)
            continue;
        jp_strbuf_reset(&w->q); /* "day\tns\tservice\tkind\tminute\t" */
        ch_day_str(&w->q, store_day_of(win->start_ns));
        jp_strbuf_putc(&w->q, '\t');
        ch_tsv_field(&w->q, win->target.ns, '\t');
        ch_tsv_field(&w->q, win->target.service, '\t');
        ch_tsv_u64(&w->q, (uint64_t)win->kind, '\t');
        ch_tsv_u64(&w->q, (uint64_t)(win->start_ns / CH_MINUTE_NS), '\t');
        uint64_t samples = 0, value = 0;
        for (size_t r = 0; r < win->nrows; r++) {
            const jp_batch_row *row = &win->rows[r];
            jp_strbuf_append(&w->rows, w->q.data, w->q.len);
            jp_strbuf_puts(&w->rows, "0\t");
            ch_tsv_u64(&w->rows, b->stacks[row->stack].id, '\t');
            ch_tsv_field(&w->rows,
                         row->thread == JP_BATCH_NO_THREAD ? NULL : b->threads[row->thread], '\t');
            ch_tsv_u64(&w->rows, row->samples, '\t');
            ch_tsv_u64(&w->rows, row->value, '\t');
            jp_strbuf_puts(&w->rows, "1\t0\n");
            samples += row->samples;
            value += row->value;
        }
        jp_strbuf_append(&w->rows, w->q.data, w->q.len);
        jp_strbuf_printf(&w->rows, "1\t0\t\t%llu\t%llu\t%llu\t1\n", (unsigned long long)samples,
                         (unsigned long long)value, (unsigned long long)win->nrows);
    }
    if (!w->rows.len)
        return;
    /* the batch is stored and acknowledged either way: a failure here only
     * costs speed (its minutes are read from jprof_samples) */
    jp_error e;
    jp_error_init(&e);
    if (ch_insert(w->st, "jprof_rollup_1m", &w->rows, &e) != JP_OK) {
        pthread_mutex_lock(&w->st->mu);
        w->st->rollup_errors++;
        pthread_mutex_unlock(&w->st->mu);
    }
}

/* One ingestion-log row (outcome 0 accepted = the commit marker, 1
 * duplicate, 2 rejected). */
static void ch_tsv_ingest(jp_strbuf *o, int64_t received, const jp_batch *b, uint64_t attempt,
                          int outcome, const char *reason, const store_write_result *res,
                          uint64_t bytes)
{
    ch_day_str(o, store_day_of(received));
    jp_strbuf_putc(o, '\t');
    ch_tsv_i64(o, received, '\t');
    ch_tsv_field(o, b ? b->id : NULL, '\t');
    ch_tsv_u64(o, attempt, '\t');
    ch_tsv_u64(o, (uint64_t)outcome, '\t');
    ch_tsv_field(o, b ? b->collector : NULL, '\t');
    ch_tsv_field(o, b ? b->collector_version : NULL, '\t');
    ch_tsv_field(o, reason, '\t');
    ch_tsv_u64(o, res ? res->windows : 0, '\t');
    ch_tsv_u64(o, res ? res->stack_rows : 0, '\t');
    ch_tsv_u64(o, bytes, '\t');
    ch_tsv_u64(o, b ? b->heartbeat : 0, '\t');
    ch_tsv_u64(o, b ? b->queue_dropped_batches : 0, '\t');
    ch_tsv_u64(o, b ? b->queue_dropped_bytes : 0, '\t');
    ch_tsv_u64(o, b ? b->queue_bytes : 0, '\t');
    /* q_oldest -1: the batch did not report its queue (queries skip the row,
     * as the embedded store's NULL) */
    ch_tsv_i64(o, b && b->has_queue ? b->queue_oldest_dropped_ns : -1, '\n');
}

static jp_err ch_log_duplicate(ch_wctx *w, jp_error *err)
{
    memset(w->res, 0, sizeof *w->res);
    w->res->duplicate = true;
    jp_strbuf_reset(&w->rows);
    ch_tsv_ingest(&w->rows, w->now, w->b, 0, 1, NULL, NULL, w->opt ? w->opt->body_bytes : 0);
    return ch_insert(w->st, "jprof_ingest", &w->rows, err);
}

static jp_err ch_write_steps(ch_wctx *w, bool *committed, jp_error *err)
{
    uint64_t n, winner;
    jp_err rc = ch_markers(w->st, w->b->id, &n, &winner, err);
    if (rc)
        return rc;
    if (n)
        return ch_log_duplicate(w, err);
    w->attempt = ch_attempt_new(w->st);
    if ((rc = ch_put_stacks(w, err)) || (rc = ch_put_windows(w, err)) || (rc = ch_put_docs(w, err)))
        return rc;
    if ((rc = ch_markers(w->st, w->b->id, &n, &winner, err)))
        return rc;
    if (n)
        return ch_log_duplicate(w, err);
    jp_strbuf_reset(&w->rows);
    ch_tsv_ingest(&w->rows, w->now, w->b, w->attempt, 0, NULL, w->res,
                  w->opt ? w->opt->body_bytes : 0);
    if ((rc = ch_insert(w->st, "jprof_ingest", &w->rows, err)))
        return rc;
    *committed = true;
    if ((rc = ch_markers(w->st, w->b->id, &n, &winner, err)))
        return rc;
    if (winner != w->attempt) {
        /* another writer's attempt won: ours is committed but never visible */
        memset(w->res, 0, sizeof *w->res);
        w->res->duplicate = true;
        return JP_OK;
    }
    ch_put_rollup(w);
    return JP_OK;
}

static bool ch_inflight_has(ch_store *st, const char *id)
{
    for (size_t i = 0; i < st->ninflight; i++)
        if (!strcmp(st->inflight[i], id))
            return true;
    return false;
}

static void ch_inflight_enter(ch_store *st, const char *id)
{
    pthread_mutex_lock(&st->mu);
    while (ch_inflight_has(st, id))
        pthread_cond_wait(&st->inflight_cv, &st->mu);
    st->inflight =
        jp_xgrow(st->inflight, &st->inflight_cap, st->ninflight + 1, sizeof *st->inflight);
    st->inflight[st->ninflight++] = jp_xstrdup(id);
    pthread_mutex_unlock(&st->mu);
}

static void ch_inflight_leave(ch_store *st, const char *id)
{
    pthread_mutex_lock(&st->mu);
    for (size_t i = 0; i < st->ninflight; i++)
        if (!strcmp(st->inflight[i], id)) {
            free(st->inflight[i]);
            st->inflight[i] = st->inflight[--st->ninflight];
            break;
        }
    pthread_cond_broadcast(&st->inflight_cv);
    pthread_mutex_unlock(&st->mu);
}

static jp_err ch_write_batch(store *s, const jp_batch *b, const store_write_opts *opt,
                             store_write_result *res, jp_error *err)
{
    ch_store *st = s->impl;
    int64_t t0 = jp_time_mono_ns();
    ch_inflight_enter(st, b->id);
    memset(res, 0, sizeof *res);
    ch_wctx w = {.st = st, .b = b, .opt = opt, .res = res, .now = store_now_ns()};
    jp_u64map_init(&w.need);
    jp_strbuf_init(&w.rows, 0);
    jp_strbuf_init(&w.q, 0);
    bool committed = false;
    jp_err rc = ch_write_steps(&w, &committed, err);
    ch_inflight_leave(st, b->id);
    if (rc == JP_OK)
        ch_flush_rejects(st);
    jp_u64map_cleanup(&w.need);
    jp_strbuf_cleanup(&w.rows);
    jp_strbuf_cleanup(&w.q);
    pthread_mutex_lock(&st->mu);
    st->stats.writes++;
    st->stats.write_errors += rc != JP_OK;
    st->stats.commits += committed;
    st->stats.write_ns_total += (uint64_t)(jp_time_mono_ns() - t0);
    pthread_mutex_unlock(&st->mu);
    if (rc && !committed)
        memset(res, 0, sizeof *res);
    return rc;
}

static void ch_note_rejected(store *s, const char *collector, const char *reason, int64_t time_ns)
{
    ch_store *st = s->impl;
    pthread_mutex_lock(&st->mu);
    if (st->nrejects < CH_REJECTS_MAX) {
        st->rejects = jp_xreallocarray(st->rejects, st->nrejects + 1, sizeof *st->rejects);
        ch_reject *r = &st->rejects[st->nrejects++];
        r->collector = jp_xstrdup(collector ? collector : "");
        r->reason = jp_xstrdup(reason ? reason : "");
        r->time_ns = time_ns;
    }
    pthread_mutex_unlock(&st->mu);
}

/* Called after successful writes, before ingestion queries, by retention and
 * at close. Rejections that cannot be written go back to the buffer. */
void ch_flush_rejects(ch_store *st)
{
    pthread_mutex_lock(&st->mu);
    ch_reject *rej = st->rejects;
    size_t n = st->nrejects;
    st->rejects = NULL;
    st->nrejects = 0;
    pthread_mutex_unlock(&st->mu);
    if (!n)
        return;
    jp_strbuf rows;
    jp_strbuf_init(&rows, 0);
    for (size_t i = 0; i < n; i++) {
        jp_batch fake;
        jp_batch_init(&fake);
        fake.collector = rej[i].collector;
        ch_tsv_ingest(&rows, rej[i].time_ns, &fake, 0, 2, rej[i].reason, NULL, 0);
    }
    jp_error e;
    jp_error_init(&e);
    bool ok = ch_insert(st, "jprof_ingest", &rows, &e) == JP_OK;
    jp_strbuf_cleanup(&rows);
    pthread_mutex_lock(&st->mu);
    if (!ok && st->nrejects + n <= CH_REJECTS_MAX) {
        st->rejects = jp_xreallocarray(st->rejects, st->nrejects + n, sizeof *st->rejects);
        memcpy(st->rejects + st->nrejects, rej, n * sizeof *rej);
        st->nrejects += n;
        n = 0;
    }
    pthread_mutex_unlock(&st->mu);
    for (size_t i = 0; i < n; i++) {
        free(rej[i].collector);
        free(rej[i].reason);
    }
    free(rej);
}

/* ---- retention ---- */

typedef struct ch_parts {
    ch_store *st;
    int retention_days;
    int64_t now;
    int64_t days[64];
    size_t ndays;
    jp_strbuf drops; /* "table\tday\n" */
} ch_parts;

static bool ch_part_row(json_t *row, void *ctx)
{
    ch_parts *p = ctx;
    const char *table = ch_str(row, 0, NULL);
    int64_t day = ch_day(row, 1);
    if (!table || day == INT64_MIN || store_day_retained(day, p->now, p->retention_days))
        return true;
    jp_strbuf_printf(&p->drops, "%s\t", table);
    ch_day_str(&p->drops, day);
    jp_strbuf_putc(&p->drops, '\n');
    bool seen = false;
    for (size_t i = 0; i < p->ndays; i++)
        seen |= p->days[i] == day;
    if (!seen && p->ndays < sizeof p->days / sizeof *p->days)
        p->days[p->ndays++] = day;
    return true;
}

static jp_err ch_enforce_retention(store *s, int retention_days, uint32_t *removed, jp_error *err)
{
    ch_store *st = s->impl;
    ch_parts p = {.st = st, .retention_days = retention_days, .now = store_now_ns()};
    jp_strbuf_init(&p.drops, 0);
    jp_strbuf q;
    jp_strbuf_init(&q, 0);
    jp_strbuf_puts(&q, "SELECT table, partition FROM system.parts WHERE active AND database = ");
    ch_sql_str(&q, st->database);
    jp_strbuf_puts(&q, " AND table IN (");
    for (size_t i = 0; i < CH_NTABLES; i++) {
        jp_strbuf_puts(&q, i ? ", " : "");
        ch_sql_str(&q, ch_tables[i]);
    }
    jp_strbuf_puts(&q, ") GROUP BY table, partition ORDER BY partition");
    ch_result res;
    ch_flush_rejects(st);
    jp_err rc = ch_select(st, q.data, NULL, ch_part_row, &p, &res, err);
    /* drop every expired (table, day); a partition dropped twice is harmless */
    char *line = p.drops.data;
    while (!rc && line && *line) {
        char *nl = strchr(line, '\n'), *tab = strchr(line, '\t');
        if (!nl || !tab || tab > nl)
            break;
        jp_strbuf_reset(&q);
        jp_strbuf_printf(&q, "ALTER TABLE %.*s DROP PARTITION '%.*s'", (int)(tab - line), line,
                         (int)(nl - tab - 1), tab + 1);
        rc = ch_exec(st, q.data, true, NULL, err);
        line = nl + 1;
    }
    if (removed)
        *removed = rc ? 0 : (uint32_t)p.ndays;
    pthread_mutex_lock(&st->mu);
    st->stats.retention_runs++;
    if (!rc)
        st->stats.retention_days_removed += p.ndays;
    st->stats.retention_last_run_ns = p.now;
    pthread_mutex_unlock(&st->mu);
    jp_strbuf_cleanup(&p.drops);
    jp_strbuf_cleanup(&q);
    return rc;
}

/* ---- ops ---- */

static void ch_stats(store *s, store_stats *out)
{
    ch_store *st = s->impl;
    pthread_mutex_lock(&st->mu);
    *out = st->stats;
    pthread_mutex_unlock(&st->mu);
}

static void ch_close(store *s)
{
    if (!s)
        return;
    ch_store *st = s->impl;
    if (st->url)
        ch_flush_rejects(st);
    for (size_t i = 0; i < st->nrejects; i++) {
        free(st->rejects[i].collector);
        free(st->rejects[i].reason);
    }
    free(st->rejects);
    ch_http_cleanup(st);
    jp_u64map_cleanup(&st->known_stacks);
    free(st->inflight);
    pthread_cond_destroy(&st->inflight_cv);
    pthread_mutex_destroy(&st->mu);
    pthread_mutex_destroy(&st->pool_mu);
    free(st->url);
    free(st->user);
    if (st->password) {
        memset(st->password, 0, strlen(st->password));
        free(st->password);
    }
    free(st->database);
    free(st);
    free(s);
}

static const store_ops ch_ops = {
    .name = "clickhouse",
    .close = ch_close,
    .write_batch = ch_write_batch,
    .note_rejected = ch_note_rejected,
    .targets = ch_targets,
    .flame = ch_flame,
    .snapshots_latest = ch_snapshots_latest,
    .deadlocks = ch_deadlocks,
    .gc = ch_gc,
    .heaps = ch_heaps,
    .statuses = ch_statuses,
    .ingestion = ch_ingestion,
    .days = ch_days,
    .enforce_retention = ch_enforce_retention,
    .stats = ch_stats,
};

/* ---- open ---- */

static char *ch_url_part(CURLU *u, CURLUPart part, unsigned flags)
{
    char *v = NULL;
    if (curl_url_get(u, part, &v, flags) != CURLUE_OK)
        return NULL;
    char *r = jp_xstrdup(v);
    curl_free(v);
    return r;
}

/* database=NAME from the URL's query string (other parameters are refused:
 * settings belong to the server's own profile). */
static jp_err ch_url_query(const char *query, char **database, jp_error *err)
{
    const char *p = query;
    while (p && *p) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (len > 9 && strncmp(p, "database=", 9) == 0) {
            char *raw = jp_xstrndup(p + 9, len - 9);
            int olen = 0;
            char *dec = curl_easy_unescape(NULL, raw, 0, &olen);
            free(raw);
            free(*database);
            *database = jp_xstrdup(dec ? dec : "");
            curl_free(dec);
        } else if (len) {
            return jp_error_set(err, JP_ERR_USAGE,
                                "--clickhouse: unknown URL parameter '%.*s' (only database=)",
                                (int)(len < 40 ? len : 40), p);
        }
        p = amp ? amp + 1 : NULL;
    }
    return JP_OK;
}

static jp_err ch_parse_url(ch_store *st, const store_clickhouse_options *o, jp_error *err)
{
    CURLU *u = curl_url();
    jp_err rc = JP_OK;
    char *query = NULL, *scheme = NULL;
    if (!u || curl_url_set(u, CURLUPART_URL, o->url, 0) != CURLUE_OK) {
        rc = jp_error_set(err, JP_ERR_USAGE, "--clickhouse: not a URL: %s",
                          o->url ? o->url : "(none)");
        goto out;
    }
    scheme = ch_url_part(u, CURLUPART_SCHEME, 0);
    if (!scheme || (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
        rc = jp_error_set(err, JP_ERR_USAGE, "--clickhouse: the URL must be http:// or https://");
        goto out;
    }
    st->user = ch_url_part(u, CURLUPART_USER, CURLU_URLDECODE);
    st->password = ch_url_part(u, CURLUPART_PASSWORD, CURLU_URLDECODE);
    query = ch_url_part(u, CURLUPART_QUERY, 0);
    if ((rc = ch_url_query(query, &st->database, err)))
        goto out;
    curl_url_set(u, CURLUPART_USER, NULL, 0);
    curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
    curl_url_set(u, CURLUPART_QUERY, NULL, 0);
    curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
    st->url = ch_url_part(u, CURLUPART_URL, 0);
    if (!st->url)
        rc = jp_error_set(err, JP_ERR_USAGE, "--clickhouse: cannot use URL %s", o->url);
out:
    free(query);
    free(scheme);
    curl_url_cleanup(u);
    return rc;
}

static bool ch_ident_ok(const char *s)
{
    if (!s || !*s || strlen(s) > 64 || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

static void ch_override(char **dst, const char *v)
{
    if (!v)
        return;
    if (*dst)
        memset(*dst, 0, strlen(*dst));
    free(*dst);
    *dst = jp_xstrdup(v);
}

/* First line of a file, without its newline. */
static jp_err ch_read_password(const char *path, char **out, jp_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return jp_error_set(err, JP_ERR_IO, "--clickhouse-password-file %s: %s", path,
                            strerror(errno));
    char buf[1024];
    if (!fgets(buf, sizeof buf, f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\r\n")] = '\0';
    ch_override(out, buf);
    memset(buf, 0, sizeof buf);
    return JP_OK;
}

static jp_err ch_config(ch_store *st, const store_clickhouse_options *o, const store_config *cfg,
                        jp_error *err)
{
    if (cfg->retention_days < 1 || cfg->retention_days > STORE_RETENTION_MAX_DAYS)
        return jp_error_set(err, JP_ERR_USAGE, "retention must be 1..%d days",
                            STORE_RETENTION_MAX_DAYS);
    st->retention_days = cfg->retention_days;
    jp_err rc = ch_parse_url(st, o, err);
    if (rc)
        return rc;
    ch_override(&st->user, o->user);
    if (o->password_file) {
        if ((rc = ch_read_password(o->password_file, &st->password, err)))
            return rc;
    } else if (!o->password && getenv("JPROF_CLICKHOUSE_PASSWORD")) {
        ch_override(&st->password, getenv("JPROF_CLICKHOUSE_PASSWORD"));
    }
    ch_override(&st->password, o->password);
    ch_override(&st->database, o->database);
    if (!st->user || !*st->user)
        ch_override(&st->user, "default");
    if (!st->password)
        st->password = jp_xstrdup("");
    if (!st->database || !*st->database)
        ch_override(&st->database, "jprof");
    if (!ch_ident_ok(st->database))
        return jp_error_set(err, JP_ERR_USAGE,
                            "clickhouse database name '%.64s': use letters, digits and _",
                            st->database);
    st->connect_timeout_ms =
        o->connect_timeout_ns > 0 ? (long)(o->connect_timeout_ns / 1000000) : 2000;
    st->write_timeout_ms = o->write_timeout_ns > 0 ? (long)(o->write_timeout_ns / 1000000) : 60000;
    if (st->connect_timeout_ms < 1)
        st->connect_timeout_ms = 1;
    if (st->write_timeout_ms < 1)
        st->write_timeout_ms = 1;
    return JP_OK;
}

static pthread_once_t ch_curl_once = PTHREAD_ONCE_INIT;
static void ch_curl_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

jp_err store_clickhouse_open(const store_clickhouse_options *o, const store_config *cfg,
                             store **out, jp_error *err)
{
    *out = NULL;
    pthread_once(&ch_curl_once, ch_curl_init);
    ch_store *st = jp_xcalloc(1, sizeof *st);
    pthread_mutex_init(&st->mu, NULL);
    pthread_mutex_init(&st->pool_mu, NULL);
    pthread_cond_init(&st->inflight_cv, NULL);
    jp_u64map_init(&st->known_stacks);
    store *s = jp_xcalloc(1, sizeof *s);
    s->ops = &ch_ops;
    s->impl = st;
    jp_strbuf v;
    jp_strbuf_init(&v, 4096);
    jp_err rc = ch_config(st, o, cfg, err);
    if (!rc)
        rc = ch_exec(st, "SELECT version()", false, &v, err);
    if (!rc) {
        ch_parse_version(st, jp_strbuf_str(&v));
        if (st->ver_major < 18 || (st->ver_major == 18 && st->ver_minor < 16))
            rc = jp_error_set(err, JP_ERR_UNSUPPORTED,
                              "clickhouse %s is too old: 18.16 or newer is needed", st->version);
    }
    if (!rc)
        rc = ch_schema(st, err);
    uint32_t removed;
    if (!rc)
        rc = ch_enforce_retention(s, st->retention_days, &removed, err);
    jp_strbuf_cleanup(&v);
    if (rc) {
        jp_error_prefix(err, "clickhouse store: ");
        ch_close(s);
        return rc;
    }
    st->stats.available = true;
    *out = s;
    return JP_OK;
}

void store_clickhouse_describe(const store *s, char *buf, size_t len)
{
    const ch_store *st = s->impl;
    snprintf(buf, len, "clickhouse %s at %s, database %s, user %s%s%s", st->version, st->url,
             st->database, st->user, st->has_ttl ? ", TTL" : "",
             st->has_lowcard ? ", LowCardinality" : "");
}
