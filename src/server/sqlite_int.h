/* sqlite_int.h - internals shared by the embedded store's writer
 * (store_sqlite.c) and its readers (sqlite_query.c). Not for other modules. */
#ifndef JP_SERVER_SQLITE_INT_H
#define JP_SERVER_SQLITE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/hash.h"
#include "base/strbuf.h"
#include "server/store.h"
#include "server/winblob.h"

/* A day file's schema (meta.schema_version). Version 2 added statuses.mode
 * and statuses.until_time (the target's policy: continuous, temporary until
 * T, disabled); version 3 the gc table (GC summaries per window, created at
 * open like every table); version 4 the heaps table (class histograms);
 * sq_migrate() brings an older file up to date when the server opens it. */
#define SQ_SCHEMA_VERSION "4"
#define SQ_MAX_DAYS 64 /* day files a store looks at (retention is at most 7) */

typedef struct sq_req sq_req;
typedef struct sq_day sq_day;
typedef struct sq_reject sq_reject;

typedef struct sq_store {
    char *dir;
    int retention_days;
    /* the writer thread and its queue */
    pthread_t writer;
    bool writer_started;
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done;
    sq_req *head, *tail;
    size_t queued;
    bool stopping;
    sq_reject *rejects; /* note_rejected() records waiting for the writer */
    size_t nrejects;
    /* writer-only state */
    sq_day *days[SQ_MAX_DAYS];
    size_t ndays;
    jp_u64map batch_ids; /* hash(batch id) -> day + 1 (0 = forgotten) */
    /* stats */
    pthread_mutex_t stats_mu;
    store_stats stats;
} sq_store;

/* "DIR/jprof-YYYY-MM-DD.db" */
void sq_day_path(const sq_store *st, int64_t day, jp_strbuf *out);
/* Day numbers of the existing files, ascending; returns the count. */
size_t sq_list_days(const sq_store *st, int64_t *days, size_t max);
/* Opens a day read-only (NULL when the file is missing or unreadable; err says). */
sqlite3 *sq_open_ro(const sq_store *st, int64_t day, jp_error *err);
/* Hash of a target's (namespace, service, pod) key. */
uint64_t sq_target_key(const char *ns, const char *service, const char *pod);

void sq_stats_query(sq_store *st, int64_t ns, bool error);

/* Read ops (sqlite_query.c). */
jp_err sq_targets(store *s, const store_filter *f, const store_budget *b, store_target_cb cb,
                  void *ctx, store_query_info *info, jp_error *err);
jp_err sq_flame(store *s, const store_filter *f, const store_budget *b, store_stack_cb cb,
                void *ctx, store_flame_totals *totals, store_query_info *info, jp_error *err);
jp_err sq_snapshots_latest(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                           void *ctx, store_query_info *info, jp_error *err);
jp_err sq_deadlocks(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                    void *ctx, store_query_info *info, jp_error *err);
jp_err sq_statuses(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                   void *ctx, store_query_info *info, jp_error *err);
jp_err sq_heaps(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb, void *ctx,
                store_query_info *info, jp_error *err);
jp_err sq_gc(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb, void *ctx,
             store_query_info *info, jp_error *err);
jp_err sq_ingestion(store *s, const store_filter *f, const store_budget *b, store_ingest_cb cb,
                    void *ctx, store_query_info *info, jp_error *err);
jp_err sq_days(store *s, store_day_cb cb, void *ctx, jp_error *err);

/* Blob of one window's rows: varint thread count, that many u64 thread ids,
 * then per row u64 stack id, varint thread slot (0 none, k = ids[k-1]),
 * varint samples, varint value; zstd-compressed. */

/* ---- writer internals (store_sqlite.c, sqlite_write.c) ---- */

enum {
    ST_TARGET,
    ST_STACK,
    ST_THREAD,
    ST_WINDOW,
    ST_STATUS,
    ST_SNAPSHOT,
    ST_DEADLOCK,
    ST_GC,
    ST_HEAP,
    ST_BATCH,
    ST_LOG,
    ST_BATCH_FIND,
    ST_ROLLUP_DEL,
    ST_COUNT
};

/* One day file as the writer holds it. */
struct sq_day {
    int64_t day;
    sqlite3 *db;
    sqlite3_stmt *st[ST_COUNT];
    jp_u64map stacks;  /* stack id -> 1: already stored today */
    jp_u64map threads; /* thread id -> 1 */
    jp_u64map targets; /* sq_target_key -> row id */
    bool in_tx;
};

/* One window's rows, encoded and compressed before the writer sees them. */

/* A queued request: a batch to write or a retention run. */
struct sq_req {
    int type;
    const jp_batch *b;
    const store_write_opts *opt;
    store_write_result *res;
    int retention_days;
    uint32_t removed;
    jp_error *err;
    jp_err rc;
    bool done;
    bool duplicate;   /* writer scratch */
    uint64_t *tids;   /* thread id per batch thread name */
    wb_window *blobs; /* per window (empty for skipped windows) */
    sq_req *next;
};

/* JP_ERR_NOSPACE for a full data directory, else JP_ERR_IO (after a failed call on db). */
jp_err sq_db_code(sqlite3 *db);
jp_err sq_db_fail(sqlite3 *db, const char *what, jp_error *err);
/* Binds text (NULL as ""), borrowed until the statement is reset. */
void sq_bind_text(sqlite3_stmt *s, int i, const char *v);
/* Steps a statement to its end, resets it and clears its bindings. */
jp_err sq_step_done(sq_day *d, sqlite3_stmt *s, const char *what, jp_error *err);
/* A document goes into its day only if that day is retained and not after tomorrow. */
bool sq_doc_day_ok(int64_t day, int64_t now, int retention);
/* Writes everything of request r that belongs to day d (inside the caller's transaction). */
jp_err sq_write_part(sq_store *st, sq_day *d, sq_req *r, int64_t now, jp_strbuf *tmp,
                     jp_error *err);

/* ---- rollups (sqlite_rollup.c) ---- */

#define SQ_ROLLUP_NS (60LL * 1000000000LL) /* one-minute buckets */

/* Builds up to max missing rollups of finished buckets (writer thread only).
 * Returns how many were built. */
uint32_t sq_rollup_run(sq_store *st, size_t max);
/* The writer's connection to a day (opening or creating it). */
jp_err sq_day_get(sq_store *st, int64_t day, sq_day **out, jp_error *err);

#endif
