/* The embedded store's writer side: open, day files, group commit, retention.
 * Reads live in sqlite_query.c. */
#include "server/store_sqlite.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "base/failinj.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/sqlite_int.h"

#define SQ_QUEUE_MAX 256 /* batches waiting for the writer before 503 */
#define SQ_GROUP_MAX 64  /* batches sharing one commit */
#define SQ_REJECTS_MAX 4096
#define SQ_ROLLUP_EVERY_NS (30 * JP_NS_PER_SEC)

enum { SQ_REQ_WRITE, SQ_REQ_RETENTION, SQ_REQ_ROLLUP };

struct sq_reject {
    char *collector, *reason;
    int64_t time_ns;
};

static const char *const sq_stmt_sql[ST_COUNT] = {
    [ST_TARGET] = "INSERT INTO targets(ns,service,pod,cluster,workload,container,node,pid,"
                  "jvm_start,jvm) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10) "
                  "ON CONFLICT(ns,service,pod) DO UPDATE SET cluster=?4,workload=?5,"
                  "container=?6,node=?7,pid=?8,jvm_start=?9,jvm=?10 RETURNING id",
    [ST_STACK] = "INSERT OR IGNORE INTO stacks(id,truncated,depth,frames,kinds) VALUES(?,?,?,?,?)",
    [ST_THREAD] = "INSERT OR IGNORE INTO threads(id,name) VALUES(?,?)",
    [ST_WINDOW] = "INSERT OR IGNORE INTO windows(batch,idx,target,kind,start,end,period,events,"
                  "flags,nrows,samples,value,data) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_STATUS] = "INSERT OR IGNORE INTO statuses(batch,idx,target,time,state,reason,message,"
                  "engine,mode,until_time) VALUES(?,?,?,?,?,?,?,?,?,?)",
    [ST_SNAPSHOT] = "INSERT OR IGNORE INTO snapshots(batch,idx,target,time,json) VALUES(?,?,?,?,?)",
    [ST_DEADLOCK] = "INSERT OR IGNORE INTO deadlocks(batch,idx,target,time,json) VALUES(?,?,?,?,?)",
    [ST_GC] = "INSERT OR IGNORE INTO gc(batch,idx,target,time,end_time,json) VALUES(?,?,?,?,?,?)",
    [ST_HEAP] = "INSERT OR IGNORE INTO heaps(batch,idx,target,time,json) VALUES(?,?,?,?,?)",
    [ST_BATCH] = "INSERT OR IGNORE INTO batches(id,received) VALUES(?,?)",
    [ST_LOG] = "INSERT INTO ingest_log(received,collector,version,outcome,batch,reason,windows,"
               "rows,bytes,heartbeat,q_batches,q_bytes,q_now,q_oldest) "
               "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_BATCH_FIND] = "SELECT 1 FROM batches WHERE id=?",
    [ST_ROLLUP_DEL] = "DELETE FROM rollup_1m WHERE ns=? AND service=? AND kind=? AND bucket=?",
};

static const char sq_schema[] =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
    "INSERT OR IGNORE INTO meta VALUES('schema_version','" SQ_SCHEMA_VERSION "');"
    "CREATE TABLE IF NOT EXISTS targets(id INTEGER PRIMARY KEY, ns TEXT NOT NULL,"
    " service TEXT NOT NULL, pod TEXT NOT NULL, cluster TEXT, workload TEXT, container TEXT,"
    " node TEXT, pid INTEGER, jvm_start INTEGER, jvm TEXT, UNIQUE(ns,service,pod));"
    "CREATE TABLE IF NOT EXISTS stacks(id INTEGER PRIMARY KEY, truncated INTEGER,"
    " depth INTEGER, frames BLOB, kinds BLOB);"
    "CREATE TABLE IF NOT EXISTS threads(id INTEGER PRIMARY KEY, name TEXT);"
    "CREATE TABLE IF NOT EXISTS windows(batch INTEGER, idx INTEGER, target INTEGER,"
    " kind INTEGER, start INTEGER, end INTEGER, period INTEGER, events INTEGER,"
    " flags INTEGER, nrows INTEGER, samples INTEGER, value INTEGER, data BLOB,"
    " UNIQUE(batch,idx));"
    "CREATE INDEX IF NOT EXISTS windows_q ON windows(target,kind,start,end);"
    "CREATE TABLE IF NOT EXISTS statuses(batch INTEGER, idx INTEGER, target INTEGER,"
    " time INTEGER, state TEXT, reason TEXT, message TEXT, engine TEXT, mode TEXT,"
    " until_time INTEGER, UNIQUE(batch,idx));"
    "CREATE INDEX IF NOT EXISTS statuses_t ON statuses(time);"
    "CREATE INDEX IF NOT EXISTS statuses_tt ON statuses(target,time);"
    "CREATE TABLE IF NOT EXISTS snapshots(batch INTEGER, idx INTEGER, target INTEGER,"
    " time INTEGER, json TEXT, UNIQUE(batch,idx));"
    "CREATE INDEX IF NOT EXISTS snapshots_t ON snapshots(target,time);"
    "CREATE TABLE IF NOT EXISTS deadlocks(batch INTEGER, idx INTEGER, target INTEGER,"
    " time INTEGER, json TEXT, UNIQUE(batch,idx));"
    "CREATE INDEX IF NOT EXISTS deadlocks_t ON deadlocks(time);"
    "CREATE TABLE IF NOT EXISTS gc(batch INTEGER, idx INTEGER, target INTEGER,"
    " time INTEGER, end_time INTEGER, json TEXT, UNIQUE(batch,idx));"
    "CREATE INDEX IF NOT EXISTS gc_t ON gc(time);"
    "CREATE TABLE IF NOT EXISTS heaps(batch INTEGER, idx INTEGER, target INTEGER,"
    " time INTEGER, json TEXT, UNIQUE(batch,idx));"
    "CREATE INDEX IF NOT EXISTS heaps_t ON heaps(target,time);"
    "CREATE TABLE IF NOT EXISTS batches(id TEXT PRIMARY KEY, received INTEGER);"
    "CREATE TABLE IF NOT EXISTS ingest_log(received INTEGER, collector TEXT, version TEXT,"
    " outcome INTEGER, batch TEXT, reason TEXT, windows INTEGER, rows INTEGER, bytes INTEGER,"
    " heartbeat INTEGER, q_batches INTEGER, q_bytes INTEGER, q_now INTEGER, q_oldest INTEGER);"
    "CREATE INDEX IF NOT EXISTS ingest_log_t ON ingest_log(collector,received);"
    "CREATE INDEX IF NOT EXISTS ingest_log_r ON ingest_log(received);"
    "CREATE TABLE IF NOT EXISTS rollup_1m(ns TEXT, service TEXT, kind INTEGER, bucket INTEGER,"
    " windows INTEGER, events INTEGER, flags INTEGER, first INTEGER, last INTEGER,"
    " period INTEGER, nrows INTEGER, data BLOB, PRIMARY KEY(ns, service, kind, bucket));";

/* ---- small helpers shared with the readers ---- */

void sq_day_path(const sq_store *st, int64_t day, jp_strbuf *out)
{
    char d[16];
    store_day_format(day, d, sizeof d);
    jp_strbuf_reset(out);
    jp_strbuf_printf(out, "%s/jprof-%s.db", st->dir, d);
}

static int sq_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

size_t sq_list_days(const sq_store *st, int64_t *days, size_t max)
{
    DIR *d = opendir(st->dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        /* jprof-YYYY-MM-DD.db: the date is checked by the RFC 3339 parser */
        const char *nm = e->d_name;
        if (strlen(nm) != 19 || strncmp(nm, "jprof-", 6) != 0 || strcmp(nm + 16, ".db") != 0)
            continue;
        char iso[32];
        snprintf(iso, sizeof iso, "%.10sT00:00:00Z", nm + 6);
        int64_t ns;
        if (jp_rfc3339_parse(iso, &ns, NULL) != JP_OK)
            continue;
        days[n++] = store_day_of(ns);
    }
    closedir(d);
    qsort(days, n, sizeof *days, sq_cmp_i64);
    return n;
}

sqlite3 *sq_open_ro(const sq_store *st, int64_t day, jp_error *err)
{
    jp_strbuf p;
    jp_strbuf_init(&p, 0);
    sq_day_path(st, day, &p);
    sqlite3 *db = NULL;
    if (access(p.data, F_OK) != 0) {
        jp_strbuf_cleanup(&p);
        return NULL;
    }
    int rc = sqlite3_open_v2(p.data, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        jp_error_set(err, JP_ERR_IO, "%s: %s", p.data, db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        db = NULL;
    } else {
        sqlite3_busy_timeout(db, 5000);
    }
    jp_strbuf_cleanup(&p);
    return db;
}

uint64_t sq_target_key(const char *ns, const char *service, const char *pod)
{
    uint64_t h = jp_hash_bytes(ns ? ns : "", ns ? strlen(ns) : 0);
    h = jp_hash_combine(h, jp_hash_bytes(service ? service : "", service ? strlen(service) : 0));
    return jp_hash_combine(h, jp_hash_bytes(pod ? pod : "", pod ? strlen(pod) : 0));
}

void sq_stats_query(sq_store *st, int64_t ns, bool error)
{
    pthread_mutex_lock(&st->stats_mu);
    st->stats.queries++;
    st->stats.query_ns_total += (uint64_t)ns;
    if (error)
        st->stats.query_errors++;
    pthread_mutex_unlock(&st->stats_mu);
}

/* ---- day files (writer) ---- */

static void sq_day_close(sq_day *d)
{
    if (!d)
        return;
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(d->st[i]);
    sqlite3_close(d->db);
    jp_u64map_cleanup(&d->stacks);
    jp_u64map_cleanup(&d->threads);
    jp_u64map_cleanup(&d->targets);
    free(d);
}

/* JP_ERR_NOSPACE when the data directory's file system is full (SQLite
 * says SQLITE_FULL, or an I/O error whose errno is ENOSPC/EDQUOT), so
 * ingest can say why its 503 will pass; JP_ERR_IO otherwise. */
jp_err sq_db_code(sqlite3 *db)
{
    if (!db)
        return JP_ERR_IO;
    int e = sqlite3_system_errno(db);
    if (sqlite3_errcode(db) == SQLITE_FULL || e == ENOSPC || e == EDQUOT)
        return JP_ERR_NOSPACE;
    return JP_ERR_IO;
}

jp_err sq_db_fail(sqlite3 *db, const char *what, jp_error *err)
{
    return jp_error_set(err, sq_db_code(db), "sqlite: %s: %s", what, db ? sqlite3_errmsg(db) : "?");
}

/* Has table tab a column col? */
static bool sq_has_column(sqlite3 *db, const char *tab, const char *col)
{
    sqlite3_stmt *q = NULL;
    bool found = false;
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", tab);
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK)
        while (!found && sqlite3_step(q) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(q, 1);
            found = name && strcmp(name, col) == 0;
        }
    sqlite3_finalize(q);
    return found;
}

static bool sq_meta_is(sqlite3 *db, const char *key, const char *value)
{
    sqlite3_stmt *q = NULL;
    bool same = false;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key=?", -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
        if (sqlite3_step(q) == SQLITE_ROW) {
            const char *v = (const char *)sqlite3_column_text(q, 0);
            same = v && !strcmp(v, value);
        }
    }
    sqlite3_finalize(q);
    return same;
}

/* Columns added since schema 1 (version 2: the policy of a status, the frame
 * kinds of a stack). */
static const struct {
    const char *table, *column, *type;
} sq_columns_added[] = {
    {"statuses", "mode", "TEXT"},
    {"statuses", "until_time", "INTEGER"},
    {"stacks", "kinds", "BLOB"},
};

/* Brings a day file written by an older server to SQ_SCHEMA_VERSION (the
 * server opens every retained day read-write at start, so readers never see
 * an old file). */
static jp_err sq_migrate(sqlite3 *db, const char *path, jp_error *err)
{
    jp_strbuf q;
    jp_strbuf_init(&q, 0);
    jp_strbuf_puts(&q, "BEGIN;");
    /* new tables come with the schema text; the version still moves on */
    bool any = !sq_meta_is(db, "schema_version", SQ_SCHEMA_VERSION);
    for (size_t i = 0; i < sizeof sq_columns_added / sizeof *sq_columns_added; i++)
        if (!sq_has_column(db, sq_columns_added[i].table, sq_columns_added[i].column)) {
            jp_strbuf_printf(&q, "ALTER TABLE %s ADD COLUMN %s %s;", sq_columns_added[i].table,
                             sq_columns_added[i].column, sq_columns_added[i].type);
            any = true;
        }
    jp_strbuf_puts(&q, "UPDATE meta SET value='" SQ_SCHEMA_VERSION "' WHERE key='schema_version';"
                       "COMMIT;");
    char *msg = NULL;
    jp_err rc = JP_OK;
    if (any && sqlite3_exec(db, q.data, NULL, NULL, &msg) != SQLITE_OK) {
        rc = jp_error_set(err, JP_ERR_IO, "%s: migrating to schema %s: %s", path, SQ_SCHEMA_VERSION,
                          msg ? msg : "?");
        sqlite3_free(msg);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    jp_strbuf_cleanup(&q);
    return rc;
}

static jp_err sq_day_open_rw(sq_store *st, int64_t day, sq_day **out, jp_error *err)
{
    jp_strbuf p;
    jp_strbuf_init(&p, 0);
    sq_day_path(st, day, &p);
    sq_day *d = jp_xcalloc(1, sizeof *d);
    d->day = day;
    jp_u64map_init(&d->stacks);
    jp_u64map_init(&d->threads);
    jp_u64map_init(&d->targets);
    jp_err rc = JP_OK;
    if (sqlite3_open_v2(p.data, &d->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        rc = jp_error_set(err, sq_db_code(d->db), "%s: %s", p.data,
                          d->db ? sqlite3_errmsg(d->db) : "cannot open");
        goto out;
    }
    sqlite3_busy_timeout(d->db, 10000);
    char *msg = NULL;
    if (sqlite3_exec(d->db, sq_schema, NULL, NULL, &msg) != SQLITE_OK) {
        rc = jp_error_set(err, sq_db_code(d->db), "%s: schema: %s", p.data, msg ? msg : "?");
        sqlite3_free(msg);
        goto out;
    }
    rc = sq_migrate(d->db, p.data, err);
    if (rc)
        goto out;
    /* a new day file must survive a crash too: sync its directory entry */
    int dfd = open(st->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    for (int i = 0; i < ST_COUNT; i++)
        if (sqlite3_prepare_v3(d->db, sq_stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &d->st[i],
                               NULL) != SQLITE_OK) {
            rc = sq_db_fail(d->db, sq_stmt_sql[i], err);
            goto out;
        }
out:
    jp_strbuf_cleanup(&p);
    if (rc) {
        sq_day_close(d);
        d = NULL;
    }
    *out = d;
    return rc;
}

/* The writer's open day, opening (and creating) it on first use. Keeps at
 * most SQ_MAX_DAYS open; the oldest is closed first. */
jp_err sq_day_get(sq_store *st, int64_t day, sq_day **out, jp_error *err)
{
    for (size_t i = 0; i < st->ndays; i++)
        if (st->days[i]->day == day) {
            *out = st->days[i];
            return JP_OK;
        }
    if (st->ndays == SQ_MAX_DAYS) {
        sq_day_close(st->days[0]);
        // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
        memmove(st->days, st->days + 1, (SQ_MAX_DAYS - 1) * sizeof *st->days);
        st->ndays--;
    }
    jp_err rc = sq_day_open_rw(st, day, out, err);
    if (!rc)
        st->days[st->ndays++] = *out;
    return rc;
}

/* ---- the group commit ---- */

static jp_err sq_exec(sq_day *d, const char *sql, jp_error *err)
{
    char *msg = NULL;
    if (jp_fail_inject("sqlite exec"))
        return jp_error_set(err, JP_ERR_IO, "sqlite: %s: injected failure (JPROF_FAIL_AT)", sql);
    if (sqlite3_exec(d->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        jp_err rc = jp_error_set(err, sq_db_code(d->db), "sqlite: %s: %s", sql, msg ? msg : "?");
        sqlite3_free(msg);
        return rc;
    }
    return JP_OK;
}

/* Was this batch id recorded before (any retained day, or earlier in this group)? */
static bool sq_is_duplicate(sq_store *st, sq_req **reqs, size_t i)
{
    const char *id = reqs[i]->b->id;
    for (size_t k = 0; k < i; k++)
        if (reqs[k]->type == SQ_REQ_WRITE && !reqs[k]->duplicate && !strcmp(reqs[k]->b->id, id))
            return true;
    uint64_t v;
    if (!jp_u64map_get(&st->batch_ids, jp_hash_bytes(id, strlen(id)), &v) || !v)
        return false;
    /* the hash says "seen on day v-1": confirm with the exact id */
    sq_day *d;
    jp_error e;
    jp_error_init(&e);
    if (sq_day_get(st, (int64_t)v - 1, &d, &e) != JP_OK)
        return false;
    sqlite3_stmt *s = d->st[ST_BATCH_FIND];
    sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
    bool found = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_reset(s);
    return found;
}

static jp_err sq_log(sq_day *d, int64_t now, const jp_batch *b, int outcome, const char *reason,
                     const store_write_result *res, uint64_t bytes, jp_error *err)
{
    sqlite3_stmt *s = d->st[ST_LOG];
    sqlite3_bind_int64(s, 1, now);
    sq_bind_text(s, 2, b ? b->collector : NULL);
    if (b && b->collector_version)
        sq_bind_text(s, 3, b->collector_version);
    sqlite3_bind_int(s, 4, outcome);
    if (b)
        sq_bind_text(s, 5, b->id);
    if (reason)
        sq_bind_text(s, 6, reason);
    sqlite3_bind_int64(s, 7, res ? (int64_t)res->windows : 0);
    sqlite3_bind_int64(s, 8, res ? (int64_t)res->stack_rows : 0);
    sqlite3_bind_int64(s, 9, (int64_t)bytes);
    if (b)
        sqlite3_bind_int(s, 10, b->heartbeat);
    if (b && b->has_queue) { /* NULL when the batch did not report its queue */
        sqlite3_bind_int64(s, 11, (int64_t)b->queue_dropped_batches);
        sqlite3_bind_int64(s, 12, (int64_t)b->queue_dropped_bytes);
        sqlite3_bind_int64(s, 13, (int64_t)b->queue_bytes);
        sqlite3_bind_int64(s, 14, b->queue_oldest_dropped_ns);
    }
    return sq_step_done(d, s, "ingest log insert", err);
}

/* Batch ids, the ingestion log and pending rejections: the last commit of a
 * group, in today's file. Once it commits the batches are acknowledged. */
static jp_err sq_write_ledger(sq_store *st, sq_day *d, sq_req **reqs, size_t n, int64_t now,
                              sq_reject *rej, size_t nrej, jp_error *err)
{
    jp_err rc = JP_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        sq_req *r = reqs[i];
        if (r->type != SQ_REQ_WRITE)
            continue;
        uint64_t bytes = r->opt ? r->opt->body_bytes : 0;
        if (!r->duplicate) {
            sqlite3_stmt *s = d->st[ST_BATCH];
            sqlite3_bind_text(s, 1, r->b->id, -1, SQLITE_STATIC);
            sqlite3_bind_int64(s, 2, now);
            rc = sq_step_done(d, s, "batch insert", err);
        }
        if (!rc)
            rc = sq_log(d, now, r->b, r->duplicate ? 1 : 0, NULL, r->res, bytes, err);
    }
    for (size_t i = 0; i < nrej && !rc; i++) {
        jp_batch fake;
        jp_batch_init(&fake);
        fake.collector = rej[i].collector;
        sqlite3_stmt *s = d->st[ST_LOG];
        (void)s;
        rc = sq_log(d, rej[i].time_ns, &fake, 2, rej[i].reason, NULL, 0, err);
    }
    (void)st;
    return rc;
}

static int64_t sq_add_day(int64_t *days, size_t *n, int64_t day)
{
    for (size_t i = 0; i < *n; i++)
        if (days[i] == day)
            return day;
    if (*n < SQ_MAX_DAYS)
        days[(*n)++] = day;
    return day;
}

/* Days a group writes to, ascending, today (the ledger) not included. */
static size_t sq_group_days(sq_store *st, sq_req **reqs, size_t n, int64_t now, int64_t *days)
{
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        sq_req *r = reqs[i];
        if (r->type != SQ_REQ_WRITE || r->duplicate)
            continue;
        const jp_batch *b = r->b;
        for (size_t k = 0; k < b->nwindows; k++)
            if (!(r->opt && r->opt->skip_windows && r->opt->skip_windows[k]))
                sq_add_day(days, &nd, store_day_of(b->windows[k].start_ns));
        const jp_batch_doc *lists[3] = {b->snapshots, b->deadlocks, b->heaps};
        size_t counts[3] = {b->nsnapshots, b->ndeadlocks, b->nheaps};
        for (int l = 0; l < 3; l++)
            for (size_t k = 0; k < counts[l]; k++) {
                int64_t day = store_day_of(lists[l][k].time_ns);
                if (sq_doc_day_ok(day, now, st->retention_days))
                    sq_add_day(days, &nd, day);
                else
                    r->res->docs_refused++;
            }
        for (size_t k = 0; k < b->ngcs; k++) {
            int64_t day = store_day_of(b->gcs[k].w.s.from_ns);
            if (sq_doc_day_ok(day, now, st->retention_days))
                sq_add_day(days, &nd, day);
            else
                r->res->docs_refused++;
        }
        for (size_t k = 0; k < b->nstatuses; k++) {
            int64_t day = store_day_of(b->statuses[k].time_ns);
            if (sq_doc_day_ok(day, now, st->retention_days))
                sq_add_day(days, &nd, day);
            else
                r->res->docs_refused++;
        }
    }
    int64_t today = store_day_of(now);
    size_t out = 0;
    for (size_t i = 0; i < nd; i++)
        if (days[i] != today)
            days[out++] = days[i];
    if (out > 1)
        qsort(days, out, sizeof *days, sq_cmp_i64);
    return out;
}

/* One transaction on one day: all non-duplicate batches' parts (+ ledger). */
static jp_err sq_day_tx(sq_store *st, int64_t day, bool ledger, sq_req **reqs, size_t n,
                        int64_t now, sq_reject *rej, size_t nrej, jp_error *err)
{
    sq_day *d;
    jp_err rc = sq_day_get(st, day, &d, err);
    if (rc)
        return rc;
    if ((rc = sq_exec(d, "BEGIN IMMEDIATE", err)))
        return rc;
    jp_strbuf tmp;
    jp_strbuf_init(&tmp, 0);
    for (size_t i = 0; i < n && !rc; i++)
        if (reqs[i]->type == SQ_REQ_WRITE && !reqs[i]->duplicate)
            rc = sq_write_part(st, d, reqs[i], now, &tmp, err);
    if (!rc && ledger)
        rc = sq_write_ledger(st, d, reqs, n, now, rej, nrej, err);
    if (!rc)
        rc = sq_exec(d, "COMMIT", err);
    if (rc) {
        sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
        /* caches may name rows the rollback removed */
        jp_u64map_clear(&d->stacks);
        jp_u64map_clear(&d->threads);
        jp_u64map_clear(&d->targets);
    }
    jp_strbuf_cleanup(&tmp);
    return rc;
}

static void sq_group_write(sq_store *st, sq_req **reqs, size_t n, sq_reject *rej, size_t nrej)
{
    int64_t t0 = jp_time_mono_ns(), now = store_now_ns(), today = store_day_of(now);
    for (size_t i = 0; i < n; i++) {
        if (reqs[i]->type != SQ_REQ_WRITE)
            continue;
        memset(reqs[i]->res, 0, sizeof *reqs[i]->res);
        reqs[i]->duplicate = sq_is_duplicate(st, reqs, i);
    }
    int64_t days[SQ_MAX_DAYS];
    size_t nd = sq_group_days(st, reqs, n, now, days);
    jp_error e;
    jp_error_init(&e);
    jp_err rc = JP_OK;
    for (size_t i = 0; i < nd && !rc; i++)
        rc = sq_day_tx(st, days[i], false, reqs, n, now, NULL, 0, &e);
    if (!rc)
        rc = sq_day_tx(st, today, true, reqs, n, now, rej, nrej, &e);
    for (size_t i = 0; i < n; i++) {
        sq_req *r = reqs[i];
        if (r->type != SQ_REQ_WRITE)
            continue;
        r->rc = rc;
        if (rc) {
            jp_error_set(r->err, rc, "%s", e.msg);
            continue;
        }
        r->res->duplicate = r->duplicate;
        if (r->duplicate) {
            uint64_t refused = r->res->docs_refused;
            memset(r->res, 0, sizeof *r->res);
            r->res->duplicate = true;
            (void)refused;
        } else {
            const char *id = r->b->id;
            jp_u64map_put(&st->batch_ids, jp_hash_bytes(id, strlen(id)), (uint64_t)today + 1);
        }
    }
    pthread_mutex_lock(&st->stats_mu);
    st->stats.commits += nd + 1;
    st->stats.write_ns_total += (uint64_t)(jp_time_mono_ns() - t0);
    for (size_t i = 0; i < n; i++)
        if (reqs[i]->type == SQ_REQ_WRITE) {
            st->stats.writes++;
            st->stats.write_errors += rc != JP_OK;
        }
    st->stats.available = rc == JP_OK;
    pthread_mutex_unlock(&st->stats_mu);
}

/* ---- retention (runs on the writer thread) ---- */

static void sq_unlink_day(sq_store *st, int64_t day)
{
    jp_strbuf p;
    jp_strbuf_init(&p, 0);
    sq_day_path(st, day, &p);
    size_t base = p.len;
    const char *sfx[] = {"", "-wal", "-shm", "-journal"};
    for (int i = 0; i < 4; i++) {
        p.len = base;
        jp_strbuf_puts(&p, sfx[i]);
        unlink(p.data);
    }
    jp_strbuf_cleanup(&p);
}

static uint32_t sq_retention_run(sq_store *st, int retention_days)
{
    int64_t now = store_now_ns();
    int64_t days[SQ_MAX_DAYS];
    size_t n = sq_list_days(st, days, SQ_MAX_DAYS);
    uint32_t removed = 0;
    for (size_t i = 0; i < n; i++) {
        if (store_day_retained(days[i], now, retention_days))
            continue;
        for (size_t k = 0; k < st->ndays; k++)
            if (st->days[k]->day == days[i]) {
                sq_day_close(st->days[k]);
                // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
                memmove(st->days + k, st->days + k + 1, (st->ndays - k - 1) * sizeof *st->days);
                st->ndays--;
                break;
            }
        sq_unlink_day(st, days[i]);
        /* forget that day's batch ids */
        for (size_t k = 0; k < st->batch_ids.cap; k++)
            if (st->batch_ids.used[k] && st->batch_ids.vals[k] == (uint64_t)days[i] + 1)
                st->batch_ids.vals[k] = 0;
        removed++;
    }
    pthread_mutex_lock(&st->stats_mu);
    st->stats.retention_runs++;
    st->stats.retention_days_removed += removed;
    st->stats.retention_last_run_ns = now;
    pthread_mutex_unlock(&st->stats_mu);
    return removed;
}

/* ---- the writer thread ---- */

static void *sq_writer_main(void *arg)
{
    sq_store *st = arg;
    sq_req *group[SQ_GROUP_MAX];
    int64_t last_rollup = jp_time_mono_ns();
    pthread_mutex_lock(&st->mu);
    for (;;) {
        for (;;) {
            /* every 30 s, busy or not: rollups of finished buckets (bounded work) */
            if (jp_time_mono_ns() - last_rollup >= SQ_ROLLUP_EVERY_NS && !st->stopping) {
                pthread_mutex_unlock(&st->mu);
                sq_rollup_run(st, 256);
                pthread_mutex_lock(&st->mu);
                last_rollup = jp_time_mono_ns();
            }
            if (st->head || st->nrejects || st->stopping)
                break;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += SQ_ROLLUP_EVERY_NS / JP_NS_PER_SEC;
            pthread_cond_timedwait(&st->cv_work, &st->mu, &ts);
        }
        if (!st->head && !st->nrejects && st->stopping)
            break;
        size_t n = 0;
        while (st->head && n < SQ_GROUP_MAX) {
            group[n++] = st->head;
            st->head = st->head->next;
            st->queued--;
        }
        if (!st->head)
            st->tail = NULL;
        sq_reject *rej = st->rejects;
        size_t nrej = st->nrejects;
        st->rejects = NULL;
        st->nrejects = 0;
        pthread_mutex_unlock(&st->mu);

        /* a retention request runs before the writes of its group */
        sq_req *writes[SQ_GROUP_MAX];
        size_t w = 0;
        for (size_t i = 0; i < n; i++)
            if (group[i]->type == SQ_REQ_RETENTION)
                group[i]->removed = sq_retention_run(st, group[i]->retention_days);
            else if (group[i]->type == SQ_REQ_ROLLUP)
                group[i]->removed = sq_rollup_run(st, (size_t)group[i]->retention_days);
            else
                writes[w++] = group[i];
        if (w || nrej)
            sq_group_write(st, writes, w, rej, nrej);
        for (size_t i = 0; i < nrej; i++) {
            free(rej[i].collector);
            free(rej[i].reason);
        }
        free(rej);

        pthread_mutex_lock(&st->mu);
        for (size_t i = 0; i < n; i++)
            group[i]->done = true;
        pthread_cond_broadcast(&st->cv_done);
    }
    pthread_mutex_unlock(&st->mu);
    return NULL;
}

/* Queues a request and waits for the writer to finish it. */
static jp_err sq_submit(sq_store *st, sq_req *r, jp_error *err)
{
    pthread_mutex_lock(&st->mu);
    if (st->stopping) {
        pthread_mutex_unlock(&st->mu);
        return jp_error_set(err, JP_ERR_IO, "store is closing");
    }
    if (st->queued >= SQ_QUEUE_MAX) {
        pthread_mutex_unlock(&st->mu);
        return jp_error_set(err, JP_ERR_TIMEOUT, "store overloaded: %d batches waiting to commit",
                            SQ_QUEUE_MAX);
    }
    r->next = NULL;
    r->done = false;
    if (st->tail)
        st->tail->next = r;
    else
        st->head = r;
    st->tail = r;
    st->queued++;
    pthread_cond_signal(&st->cv_work);
    while (!r->done)
        pthread_cond_wait(&st->cv_done, &st->mu);
    pthread_mutex_unlock(&st->mu);
    return r->rc;
}

/* ---- ops ---- */

static jp_err sq_write_batch(store *s, const jp_batch *b, const store_write_opts *opt,
                             store_write_result *res, jp_error *err)
{
    sq_req r = {.type = SQ_REQ_WRITE, .b = b, .opt = opt, .res = res, .err = err};
    /* the CPU-heavy part (row encoding, compression) runs here, in parallel */
    r.tids = wb_thread_ids(b);
    r.blobs = jp_xcalloc(b->nwindows + 1, sizeof *r.blobs);
    jp_err rc = JP_OK;
    for (size_t i = 0; i < b->nwindows && !rc; i++)
        if (!(opt && opt->skip_windows && opt->skip_windows[i]))
            rc = wb_window_encode(b, i, r.tids, &r.blobs[i], err);
    if (!rc)
        rc = sq_submit(s->impl, &r, err);
    for (size_t i = 0; i < b->nwindows; i++)
        wb_window_cleanup(&r.blobs[i]);
    free(r.blobs);
    free(r.tids);
    return rc;
}

static void sq_note_rejected(store *s, const char *collector, const char *reason, int64_t time_ns)
{
    sq_store *st = s->impl;
    pthread_mutex_lock(&st->mu);
    if (st->nrejects < SQ_REJECTS_MAX && !st->stopping) {
        st->rejects = jp_xreallocarray(st->rejects, st->nrejects + 1, sizeof *st->rejects);
        sq_reject *r = &st->rejects[st->nrejects++];
        r->collector = jp_xstrdup(collector ? collector : "");
        r->reason = jp_xstrdup(reason ? reason : "");
        r->time_ns = time_ns;
        pthread_cond_signal(&st->cv_work);
    }
    pthread_mutex_unlock(&st->mu);
}

static jp_err sq_enforce_retention(store *s, int retention_days, uint32_t *removed, jp_error *err)
{
    sq_req r = {.type = SQ_REQ_RETENTION, .retention_days = retention_days, .err = err};
    jp_err rc = sq_submit(s->impl, &r, err);
    if (removed)
        *removed = r.removed;
    return rc;
}

jp_err store_sqlite_rollup(store *s, uint32_t *built, jp_error *err)
{
    sq_req r = {.type = SQ_REQ_ROLLUP, .retention_days = 100000, .err = err};
    jp_err rc = sq_submit(s->impl, &r, err);
    if (built)
        *built = r.removed;
    return rc;
}

static void sq_stats(store *s, store_stats *out)
{
    sq_store *st = s->impl;
    pthread_mutex_lock(&st->stats_mu);
    *out = st->stats;
    pthread_mutex_unlock(&st->stats_mu);
}

static void sq_close(store *s)
{
    if (!s)
        return;
    sq_store *st = s->impl;
    if (st->writer_started) {
        pthread_mutex_lock(&st->mu);
        st->stopping = true;
        pthread_cond_broadcast(&st->cv_work);
        pthread_mutex_unlock(&st->mu);
        pthread_join(st->writer, NULL);
    }
    for (size_t i = 0; i < st->ndays; i++)
        sq_day_close(st->days[i]);
    for (size_t i = 0; i < st->nrejects; i++) {
        free(st->rejects[i].collector);
        free(st->rejects[i].reason);
    }
    free(st->rejects);
    jp_u64map_cleanup(&st->batch_ids);
    pthread_mutex_destroy(&st->mu);
    pthread_mutex_destroy(&st->stats_mu);
    pthread_cond_destroy(&st->cv_work);
    pthread_cond_destroy(&st->cv_done);
    free(st->dir);
    free(st);
    free(s);
}

static const store_ops sq_ops = {
    .name = "sqlite",
    .close = sq_close,
    .write_batch = sq_write_batch,
    .note_rejected = sq_note_rejected,
    .targets = sq_targets,
    .flame = sq_flame,
    .snapshots_latest = sq_snapshots_latest,
    .deadlocks = sq_deadlocks,
    .gc = sq_gc,
    .heaps = sq_heaps,
    .statuses = sq_statuses,
    .ingestion = sq_ingestion,
    .days = sq_days,
    .enforce_retention = sq_enforce_retention,
    .stats = sq_stats,
};

/* Loads the batch ids of every retained day so duplicates are recognised
 * after a restart. */
static jp_err sq_load_batch_ids(sq_store *st, jp_error *err)
{
    int64_t days[SQ_MAX_DAYS];
    size_t n = sq_list_days(st, days, SQ_MAX_DAYS);
    for (size_t i = 0; i < n; i++) {
        sq_day *d;
        jp_err rc = sq_day_get(st, days[i], &d, err);
        if (rc)
            return rc;
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(d->db, "SELECT id FROM batches", -1, &q, NULL) != SQLITE_OK)
            return sq_db_fail(d->db, "batch ids", err);
        while (sqlite3_step(q) == SQLITE_ROW) {
            const char *id = (const char *)sqlite3_column_text(q, 0);
            if (id)
                jp_u64map_put(&st->batch_ids, jp_hash_bytes(id, strlen(id)), (uint64_t)days[i] + 1);
        }
        sqlite3_finalize(q);
    }
    return JP_OK;
}

jp_err store_sqlite_open(const char *data_dir, const store_config *cfg, store **out, jp_error *err)
{
    *out = NULL;
    if (cfg->retention_days < 1 || cfg->retention_days > STORE_RETENTION_MAX_DAYS)
        return jp_error_set(err, JP_ERR_USAGE, "retention must be 1..%d days",
                            STORE_RETENTION_MAX_DAYS);
    if (mkdir(data_dir, 0750) != 0 && errno != EEXIST)
        return jp_error_set(err, JP_ERR_IO, "%s: cannot create: %s", data_dir, strerror(errno));
    if (access(data_dir, R_OK | W_OK | X_OK) != 0)
        return jp_error_set(err, JP_ERR_PERMISSION, "%s: %s", data_dir, strerror(errno));
    sq_store *st = jp_xcalloc(1, sizeof *st);
    st->dir = jp_xstrdup(data_dir);
    st->retention_days = cfg->retention_days;
    pthread_mutex_init(&st->mu, NULL);
    pthread_mutex_init(&st->stats_mu, NULL);
    pthread_cond_init(&st->cv_work, NULL);
    pthread_cond_init(&st->cv_done, NULL);
    jp_u64map_init(&st->batch_ids);
    st->stats.available = true;
    store *s = jp_xcalloc(1, sizeof *s);
    s->ops = &sq_ops;
    s->impl = st;
    sq_retention_run(st, st->retention_days);
    jp_err rc = sq_load_batch_ids(st, err);
    if (!rc && pthread_create(&st->writer, NULL, sq_writer_main, st) != 0)
        rc = jp_error_set(err, JP_ERR_INTERNAL, "cannot start the writer thread");
    if (rc) {
        sq_close(s);
        return rc;
    }
    st->writer_started = true;
    *out = s;
    return JP_OK;
}
