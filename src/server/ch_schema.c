/* ch_schema.c - the ClickHouse store's tables: created or repaired at open,
 * on one server or on every node of a cluster, migrated from older schema
 * versions, and the newer ClickHouse features used where the server has
 * them.
 *
 * One server: MergeTree-family tables in the database. A cluster
 * (--clickhouse-cluster NAME, from the server's <remote_servers>): the same
 * tables as Replicated*MergeTree in DATABASE_local on every node (created
 * ON CLUSTER, replicated through ZooKeeper or ClickHouse Keeper under
 * /clickhouse/tables/{shard}/DATABASE_local/TABLE, with the server's
 * {shard} and {replica} macros), and a Distributed table of the same name in
 * DATABASE over each, which the store reads and writes. Rows are sharded by
 * target (namespace, pod): one pod's windows, documents and commit markers
 * on one shard, a service's spread over all; stacks by stack id; the
 * roll-up by service. The read and write SQL is the same in both modes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "server/ch_int.h"

#define CH_TTL_DAYS (STORE_RETENTION_MAX_DAYS + 1)
#define CH_DDL_TIMEOUT_S 60 /* ON CLUSTER statements wait this long for every node */

#define CH_IDENT                                                                                   \
    "cluster {S}, workload {S}, container {S}, node {S}, pid Int64, jvm_start_ns Int64, "          \
    "jvm {S}"
#define CH_BY_TARGET "cityHash64(ns, pod)"

typedef struct ch_table {
    const char *name;
    const char *cols;   /* {S}: the type of short repeated strings */
    const char *engine; /* MergeTree family, without "Replicated" */
    const char *order;
    bool by_day;       /* PARTITION BY day, and the TTL */
    const char *shard; /* the Distributed table's sharding expression */
} ch_table;

/* Schema version 3: a window's stack rows are a blob in its row of
 * jprof_windows (winblob.h). Version 1-2 databases also have jprof_samples
 * (one row per stack row, read for the windows without a blob as long as it
 * exists: ch_flame.c) and jprof_rollup_1m (no longer read; its minutes come
 * from the raw rows until retention drops them). */
static const ch_table ch_schema_tables[] = {
    {"jprof_windows",
     "day Date, ns {S}, service {S}, pod {S}, kind UInt8, start_ns Int64, end_ns Int64, "
     "period_ns Int64, events UInt64, dropped UInt8, truncated UInt8, nrows UInt64, "
     "samples UInt64, value UInt64, " CH_IDENT ", attempt UInt64, threads Array(String), "
     "blob String",
     "MergeTree", "(ns, service, kind, start_ns)", true, CH_BY_TARGET},
    {"jprof_stacks",
     "day Date, stack_id UInt64, truncated UInt8, depth UInt32, frames Array(String), "
     "kinds Array(UInt8)",
     "ReplacingMergeTree", "stack_id", true, "stack_id"},
    {"jprof_statuses",
     "day Date, ns {S}, service {S}, pod {S}, time_ns Int64, state {S}, reason {S}, "
     "message String, engine {S}, " CH_IDENT ", attempt UInt64, mode {S}, until_ns Int64",
     "MergeTree", "(ns, service, time_ns)", true, CH_BY_TARGET},
    {"jprof_snapshots",
     "day Date, ns {S}, service {S}, pod {S}, time_ns Int64, json String, " CH_IDENT
     ", attempt UInt64",
     "MergeTree", "(ns, service, pod, time_ns)", true, CH_BY_TARGET},
    {"jprof_deadlocks",
     "day Date, ns {S}, service {S}, pod {S}, time_ns Int64, json String, " CH_IDENT
     ", attempt UInt64",
     "MergeTree", "(ns, service, time_ns)", true, CH_BY_TARGET},
    /* the ingestion log; its accepted rows are the commit markers */
    {"jprof_ingest",
     "day Date, received_ns Int64, batch_id String, attempt UInt64, outcome UInt8, "
     "collector {S}, version {S}, reason String, windows UInt64, rows UInt64, bytes UInt64, "
     "heartbeat UInt8, q_batches UInt64, q_bytes UInt64, q_now UInt64, q_oldest Int64, "
     "ns {S}, pod {S}, part UInt32, parts UInt32",
     "MergeTree", "(batch_id, attempt)", true, CH_BY_TARGET},
    /* the per-minute roll-up of every pod of a service (ch_rollup.c) */
    {"jprof_rollup",
     "day Date, ns {S}, service {S}, kind UInt8, minute UInt32, windows UInt64, nrows UInt64, "
     "samples UInt64, value UInt64, threads Array(String), blob String",
     "MergeTree", "(ns, service, kind, minute)", true, "cityHash64(ns, service)"},
    /* GC summaries per window (json: the record of wire/gc_json.h, which
     * merges; the pause numbers also as columns for SQL users) */
    {"jprof_gc",
     "day Date, ns {S}, service {S}, pod {S}, time_ns Int64, json String, " CH_IDENT
     ", attempt UInt64, end_ns Int64, collections UInt64, pauses UInt64, pause_total_ns Int64, "
     "pause_max_ns Int64",
     "MergeTree", "(ns, service, time_ns)", true, CH_BY_TARGET},
    /* class histograms (json: the document {"target", "time", "histogram"}
     * of wire/heap_json.h) */
    {"jprof_heaps",
     "day Date, ns {S}, service {S}, pod {S}, time_ns Int64, json String, " CH_IDENT
     ", attempt UInt64",
     "MergeTree", "(ns, service, pod, time_ns)", true, CH_BY_TARGET},
    {"jprof_schema", "version UInt32, applied_ns Int64, server String", "MergeTree", "version",
     false, "rand()"},
};
#define CH_NSCHEMA (sizeof ch_schema_tables / sizeof *ch_schema_tables)

/* Every day-partitioned table retention looks at, the older versions' too. */
const char *const ch_day_tables[] = {"jprof_windows",   "jprof_stacks",    "jprof_statuses",
                                     "jprof_snapshots", "jprof_deadlocks", "jprof_ingest",
                                     "jprof_rollup",    "jprof_gc",        "jprof_heaps",
                                     "jprof_samples",   "jprof_rollup_1m"};
const size_t ch_nday_tables = sizeof ch_day_tables / sizeof *ch_day_tables;

/* Columns added after version 1, in the order they were added (ALTER TABLE
 * ADD COLUMN appends, so a migrated table has the same column order as a new
 * one). Version 2: the policy mode and window end of a status, the frame
 * kinds of a stack. Version 3: a commit marker per part (the target a
 * batch's rows belong to, see ch_write.c), a window's rows as a blob. */
static const struct {
    const char *table, *column, *type;
} ch_columns_added[] = {
    {"jprof_statuses", "mode", "{S}"},
    {"jprof_statuses", "until_ns", "Int64"},
    {"jprof_stacks", "kinds", "Array(UInt8)"},
    {"jprof_ingest", "ns", "{S}"},
    {"jprof_ingest", "pod", "{S}"},
    {"jprof_ingest", "part", "UInt32"},
    {"jprof_ingest", "parts", "UInt32"},
    {"jprof_windows", "threads", "Array(String)"},
    {"jprof_windows", "blob", "String"},
};

/* Copies a template with {S} replaced. */
static void ch_schema_expand(jp_strbuf *q, const char *tpl, const char *str)
{
    while (*tpl) {
        if (strncmp(tpl, "{S}", 3) == 0) {
            jp_strbuf_puts(q, str);
            tpl += 3;
        } else {
            jp_strbuf_putc(q, *tpl++);
        }
    }
}

static const char *ch_str_type(const ch_store *st)
{
    return st->has_lowcard ? "LowCardinality(String)" : "String";
}

static void ch_on_cluster(const ch_store *st, jp_strbuf *q)
{
    if (st->cluster)
        jp_strbuf_printf(q, " ON CLUSTER %s", st->cluster);
}

/* DDL: on a cluster every node must answer within CH_DDL_TIMEOUT_S */
static jp_err ch_ddl(ch_store *st, const char *sql, jp_error *err)
{
    char set[64];
    snprintf(set, sizeof set, "distributed_ddl_task_timeout=%d", CH_DDL_TIMEOUT_S);
    return ch_exec_set(st, sql, false, st->cluster ? set : NULL, NULL, err);
}

static jp_err ch_create_table(ch_store *st, const ch_table *t, jp_strbuf *q, jp_error *err)
{
    jp_strbuf_reset(q);
    jp_strbuf_printf(q, "CREATE TABLE IF NOT EXISTS %s.%s", st->local_db, t->name);
    ch_on_cluster(st, q);
    jp_strbuf_puts(q, " (");
    ch_schema_expand(q, t->cols, ch_str_type(st));
    if (st->cluster)
        jp_strbuf_printf(q,
                         ") ENGINE = Replicated%s('/clickhouse/tables/{shard}/%s/%s', "
                         "'{replica}')",
                         t->engine, st->local_db, t->name);
    else
        jp_strbuf_printf(q, ") ENGINE = %s", t->engine);
    if (t->by_day)
        jp_strbuf_puts(q, " PARTITION BY day");
    jp_strbuf_printf(q, " ORDER BY %s", t->order);
    if (t->by_day && st->has_ttl)
        jp_strbuf_printf(q, " TTL day + toIntervalDay(%d)", CH_TTL_DAYS);
    jp_err rc = ch_ddl(st, q->data, err);
    if (rc || !st->cluster)
        return rc;
    jp_strbuf_reset(q);
    jp_strbuf_printf(q, "CREATE TABLE IF NOT EXISTS %s.%s", st->database, t->name);
    ch_on_cluster(st, q);
    jp_strbuf_printf(q, " AS %s.%s ENGINE = Distributed(%s, %s, %s, %s)", st->local_db, t->name,
                     st->cluster, st->local_db, t->name, t->shard);
    return ch_ddl(st, q->data, err);
}

static bool ch_count_row(json_t *row, void *ctx)
{
    *(uint64_t *)ctx = ch_u64(row, 0);
    return true;
}

/* A count from the system tables (no default database: it may not exist yet). */
static jp_err ch_count(ch_store *st, const char *sql, uint64_t *n, jp_error *err)
{
    ch_result res;
    ch_select_opts o = {.use_db = false};
    *n = 0;
    return ch_select_with(st, sql, &o, ch_count_row, n, &res, err);
}

typedef struct ch_two {
    uint64_t a, b;
} ch_two;

static bool ch_two_row(json_t *row, void *ctx)
{
    ch_two *o = ctx;
    o->a = ch_u64(row, 0);
    o->b = ch_u64(row, 1);
    return true;
}

/* Adds the columns a table made by an older server lacks (checked in
 * system.columns: 18.16 has no ADD COLUMN IF NOT EXISTS); on a cluster to
 * the local table and the Distributed one. */
static jp_err ch_add_columns(ch_store *st, jp_strbuf *q, jp_error *err)
{
    jp_err rc = JP_OK;
    for (size_t i = 0; !rc && i < sizeof ch_columns_added / sizeof *ch_columns_added; i++) {
        ch_two n = {0}; /* the table's columns, the one looked for */
        ch_result res;
        jp_strbuf_reset(q);
        jp_strbuf_printf(q,
                         "SELECT count(), countIf(name = '%s') FROM system.columns "
                         "WHERE database = ",
                         ch_columns_added[i].column);
        ch_sql_str(q, st->local_db);
        jp_strbuf_printf(q, " AND table = '%s'", ch_columns_added[i].table);
        ch_select_opts so = {.use_db = false};
        rc = ch_select_with(st, q->data, &so, ch_two_row, &n, &res, err);
        uint64_t table = n.a, have = n.b;
        if (rc || have || !table)
            continue; /* a table of an older version that this one no longer makes */
        for (int dist = 0; !rc && dist <= (st->cluster != NULL); dist++) {
            jp_strbuf_reset(q);
            jp_strbuf_printf(q, "ALTER TABLE %s.%s", dist ? st->database : st->local_db,
                             ch_columns_added[i].table);
            ch_on_cluster(st, q);
            jp_strbuf_printf(q, " ADD COLUMN %s ", ch_columns_added[i].column);
            ch_schema_expand(q, ch_columns_added[i].type, ch_str_type(st));
            rc = ch_ddl(st, q->data, err);
        }
    }
    return rc;
}

/* On a cluster, true when this node has every table already: no DDL then,
 * so a jprof-server starts while a node of the cluster is down. */
static jp_err ch_cluster_ready(ch_store *st, jp_strbuf *q, bool *ready, jp_error *err)
{
    jp_strbuf_reset(q);
    jp_strbuf_puts(q, "SELECT count() FROM system.tables WHERE database IN (");
    ch_sql_str(q, st->database);
    jp_strbuf_puts(q, ", ");
    ch_sql_str(q, st->local_db);
    jp_strbuf_puts(q, ") AND name IN (");
    for (size_t i = 0; i < CH_NSCHEMA; i++) {
        jp_strbuf_puts(q, i ? ", " : "");
        ch_sql_str(q, ch_schema_tables[i].name);
    }
    jp_strbuf_puts(q, ")");
    uint64_t n = 0;
    jp_err rc = ch_count(st, q->data, &n, err);
    *ready = !rc && n == 2 * CH_NSCHEMA;
    return rc;
}

static jp_err ch_schema_version(ch_store *st, jp_strbuf *q, jp_error *err)
{
    ch_two cur = {0};
    ch_result res;
    jp_err rc = ch_select(st, "SELECT max(version), count() FROM jprof_schema", NULL, ch_two_row,
                          &cur, &res, err);
    if (!rc && cur.a > CH_SCHEMA_VERSION)
        return jp_error_set(err, JP_ERR_UNSUPPORTED,
                            "clickhouse database %s has schema version %llu, newer than this "
                            "jprof-server understands (%d): upgrade jprof-server",
                            st->database, (unsigned long long)cur.a, CH_SCHEMA_VERSION);
    if (rc || cur.a >= CH_SCHEMA_VERSION)
        return rc;
    jp_strbuf_reset(q);
    jp_strbuf_printf(q, "%d\t%lld\t", CH_SCHEMA_VERSION, (long long)jp_time_now_ns());
    ch_tsv_str(q, "jprof-server " PACKAGE_VERSION, strlen("jprof-server " PACKAGE_VERSION));
    jp_strbuf_putc(q, '\n');
    return ch_insert(st, "jprof_schema", q, err);
}

jp_err ch_schema(ch_store *st, jp_error *err)
{
    jp_strbuf q;
    jp_strbuf_init(&q, 0);
    bool ready = false;
    jp_err rc = st->cluster ? ch_cluster_ready(st, &q, &ready, err) : JP_OK;
    /* CREATE ... IF NOT EXISTS every time on one server: cheap, and it
     * repairs a table someone dropped by hand */
    for (int d = 0; !rc && !ready && d <= (st->cluster != NULL); d++) {
        jp_strbuf_reset(&q);
        jp_strbuf_printf(&q, "CREATE DATABASE IF NOT EXISTS %s", d ? st->local_db : st->database);
        ch_on_cluster(st, &q);
        rc = ch_ddl(st, q.data, err);
    }
    for (size_t i = 0; !rc && !ready && i < CH_NSCHEMA; i++)
        rc = ch_create_table(st, &ch_schema_tables[i], &q, err);
    if (!rc)
        rc = ch_schema_version(st, &q, err);
    if (!rc)
        rc = ch_add_columns(st, &q, err);
    uint64_t legacy = 0;
    if (!rc) {
        jp_strbuf_reset(&q);
        jp_strbuf_puts(&q, "SELECT count() FROM system.tables WHERE database = ");
        ch_sql_str(&q, st->local_db);
        jp_strbuf_puts(&q, " AND name = 'jprof_samples'");
        rc = ch_count(st, q.data, &legacy, err);
    }
    st->legacy_samples = legacy > 0;
    jp_strbuf_cleanup(&q);
    return rc;
}

void ch_parts_table(const ch_store *st, jp_strbuf *q)
{
    if (st->cluster)
        jp_strbuf_printf(q, "cluster('%s', system, parts)", st->cluster);
    else
        jp_strbuf_puts(q, "system.parts");
}
