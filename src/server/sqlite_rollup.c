/* Rollups: per (namespace, service, kind) and one-minute bucket, the sum of
 * every window of every pod that starts in it, in the window blob format.
 *
 * A service-level flame query over an hour of 10 pods reads 60 rollups
 * instead of 600 windows; only the partial minutes at the edges of the range
 * and the newest minutes (not rolled up yet) are read from the windows. The
 * writer thread builds a bucket's rollup once the bucket is over (plus a
 * grace period for uploads in flight) and deletes it again whenever another
 * window lands in it, so a rollup is always exactly the sum of its windows. */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/sqlite_int.h"

#define SQ_ROLLUP_GRACE_NS (2 * 60 * JP_NS_PER_SEC)

typedef struct sq_bucket {
    char *ns, *service;
    int kind;
    int64_t bucket;
} sq_bucket;

static const char sq_todo_sql[] =
    "SELECT t.ns, t.service, w.kind, w.start / ?1 AS b FROM windows w JOIN targets t ON "
    "t.id = w.target WHERE w.start < ?2 AND NOT EXISTS (SELECT 1 FROM rollup_1m r WHERE "
    "r.ns = t.ns AND r.service = t.service AND r.kind = w.kind AND r.bucket = w.start / ?1) "
    "GROUP BY 1, 2, 3, 4 LIMIT ?3";

static const char sq_windows_sql[] =
    "SELECT w.start, w.end, w.period, w.events, w.flags, w.nrows, w.data FROM windows w JOIN "
    "targets t ON t.id = w.target WHERE t.ns = ?1 AND t.service = ?2 AND w.kind = ?3 AND "
    "w.start >= ?4 AND w.start < ?5";

static const char sq_insert_sql[] =
    "INSERT OR REPLACE INTO rollup_1m(ns, service, kind, bucket, windows, events, flags, first, "
    "last, period, nrows, data) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)";

/* Sums the windows of one bucket and stores the rollup (in its own transaction). */
static jp_err sq_rollup_build(sq_day *d, const sq_bucket *bk, void *dctx, uint8_t **buf,
                              size_t *cap, jp_error *err)
{
    sqlite3_stmt *ws = NULL, *ins = NULL;
    wb_agg a = {0};
    jp_err rc = JP_OK;
    int64_t first = 0, last = 0, period = 0;
    uint64_t windows = 0, events = 0;
    int flags = 0;
    if (sqlite3_prepare_v2(d->db, sq_windows_sql, -1, &ws, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(d->db, sq_insert_sql, -1, &ins, NULL) != SQLITE_OK) {
        rc = sq_db_fail(d->db, "rollup", err);
        goto out;
    }
    sqlite3_bind_text(ws, 1, bk->ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(ws, 2, bk->service, -1, SQLITE_STATIC);
    sqlite3_bind_int(ws, 3, bk->kind);
    sqlite3_bind_int64(ws, 4, bk->bucket * SQ_ROLLUP_NS);
    sqlite3_bind_int64(ws, 5, (bk->bucket + 1) * SQ_ROLLUP_NS);
    while (sqlite3_step(ws) == SQLITE_ROW) {
        size_t len;
        uint64_t rows;
        if (!wb_unpack(dctx, sqlite3_column_blob(ws, 6), (size_t)sqlite3_column_bytes(ws, 6),
                       (uint64_t)sqlite3_column_int64(ws, 5), buf, cap, &len) ||
            !wb_decode(*buf, len, 0, &a, &rows))
            continue; /* a damaged window stays unrolled: queries report it */
        int64_t s = sqlite3_column_int64(ws, 0), e = sqlite3_column_int64(ws, 1);
        if (!first || s < first)
            first = s;
        if (e >= last) {
            last = e;
            period = sqlite3_column_int64(ws, 2);
        }
        events += (uint64_t)sqlite3_column_int64(ws, 3);
        flags |= sqlite3_column_int(ws, 4);
        windows++;
    }
    if (!windows)
        goto out;
    wb_agg_compact(&a);
    void *z;
    size_t zlen;
    if ((rc = wb_agg_encode(&a, &z, &zlen, err)))
        goto out;
    sqlite3_bind_text(ins, 1, bk->ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 2, bk->service, -1, SQLITE_STATIC);
    sqlite3_bind_int(ins, 3, bk->kind);
    sqlite3_bind_int64(ins, 4, bk->bucket);
    sqlite3_bind_int64(ins, 5, (int64_t)windows);
    sqlite3_bind_int64(ins, 6, (int64_t)events);
    sqlite3_bind_int(ins, 7, flags);
    sqlite3_bind_int64(ins, 8, first);
    sqlite3_bind_int64(ins, 9, last);
    sqlite3_bind_int64(ins, 10, period);
    sqlite3_bind_int64(ins, 11, (int64_t)a.n);
    sqlite3_bind_blob(ins, 12, z, (int)zlen, free);
    if (sqlite3_step(ins) != SQLITE_DONE)
        rc = sq_db_fail(d->db, "rollup insert", err);
out:
    sqlite3_finalize(ws);
    sqlite3_finalize(ins);
    wb_agg_free(&a);
    return rc;
}

/* The buckets of day d that are over and have no rollup yet (at most max). */
static size_t sq_rollup_todo(sq_day *d, int64_t cutoff, size_t max, sq_bucket *out)
{
    sqlite3_stmt *q = NULL;
    size_t n = 0;
    if (sqlite3_prepare_v2(d->db, sq_todo_sql, -1, &q, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(q, 1, SQ_ROLLUP_NS);
    sqlite3_bind_int64(q, 2, cutoff);
    sqlite3_bind_int64(q, 3, (int64_t)max);
    while (n < max && sqlite3_step(q) == SQLITE_ROW) {
        const char *ns = (const char *)sqlite3_column_text(q, 0);
        const char *sv = (const char *)sqlite3_column_text(q, 1);
        out[n++] = (sq_bucket){.ns = jp_xstrdup(ns ? ns : ""),
                               .service = jp_xstrdup(sv ? sv : ""),
                               .kind = sqlite3_column_int(q, 2),
                               .bucket = sqlite3_column_int64(q, 3)};
    }
    sqlite3_finalize(q);
    return n;
}

uint32_t sq_rollup_run(sq_store *st, size_t max)
{
    int64_t now = store_now_ns();
    /* a bucket is over once its end plus the grace period has passed */
    int64_t cutoff = ((now - SQ_ROLLUP_GRACE_NS) / SQ_ROLLUP_NS) * SQ_ROLLUP_NS;
    int64_t days[SQ_MAX_DAYS];
    size_t nd = sq_list_days(st, days, SQ_MAX_DAYS);
    sq_bucket *todo = jp_xcalloc(max + 1, sizeof *todo);
    void *dctx = ZSTD_createDCtx();
    uint8_t *buf = NULL;
    size_t cap = 0;
    uint32_t built = 0;
    /* the two newest days: where windows arrive and queries look (a window
     * arriving later than that is still served, from the windows table) */
    for (size_t i = nd; i-- > 0 && i + 2 >= nd && built < max;) {
        if (!store_day_retained(days[i], now, st->retention_days))
            continue;
        sq_day *d;
        jp_error e;
        jp_error_init(&e);
        if (sq_day_get(st, days[i], &d, &e) != JP_OK)
            continue;
        size_t n = sq_rollup_todo(d, cutoff, max - built, todo);
        for (size_t k = 0; k < n; k++) {
            if (sqlite3_exec(d->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK) {
                bool ok = sq_rollup_build(d, &todo[k], dctx, &buf, &cap, &e) == JP_OK;
                ok = ok && sqlite3_exec(d->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
                if (!ok)
                    sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
                built += ok;
            }
            free(todo[k].ns);
            free(todo[k].service);
        }
    }
    free(buf);
    ZSTD_freeDCtx(dctx);
    free(todo);
    return built;
}
