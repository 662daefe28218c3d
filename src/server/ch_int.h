/* ch_int.h - internals shared by the ClickHouse store's files:
 *   ch_http.c           HTTP requests (libcurl handle pool), output parsing,
 *                       escaping, RowBinary encoding
 *   store_clickhouse.c  open, retention, ops table
 *   ch_schema.c         the tables, on one server or a cluster
 *   ch_write.c          the write path: rows encoded by the caller, group commit
 *   ch_stage.c          new stacks: staged by the writes, stored before a commit
 *   ch_rollup.c         the per-minute roll-up, summed in memory
 *   ch_query.c          the read ops
 *   ch_flame.c          the flame op (blobs aggregated here)
 * Not for other modules. */
#ifndef JP_SERVER_CH_INT_H
#define JP_SERVER_CH_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/hash.h"
#include "base/timeutil.h"
#include "base/strbuf.h"
#include "server/store.h"
#include "server/winblob.h"

#define CH_SCHEMA_VERSION 3
#define CH_POOL_MAX 32 /* idle curl handles kept for connection reuse */
#define CH_WRITERS 2   /* groups written at once (ch_write.c) */
/* roll-up buckets: windows by the minute their start_ns falls in */
#define CH_MINUTE_NS (60 * JP_NS_PER_SEC)

typedef struct ch_wreq ch_wreq;     /* one write waiting for its group (ch_write.c) */
typedef struct ch_rollup ch_rollup; /* the roll-up being summed (ch_rollup.c) */
typedef struct ch_frames ch_frames; /* stacks' frames read before (ch_flame.c) */
typedef struct ch_stage ch_stage;   /* new stacks waiting to be stored (ch_stage.c) */
typedef struct ch_rshare ch_rshare; /* a batch's share of the roll-up (ch_rollup.c) */

typedef struct ch_reject {
    char *collector, *reason;
    int64_t time_ns;
} ch_reject;

#define CH_URLS_MAX 16 /* servers of --clickhouse URL,URL,... */

typedef struct ch_store {
    char *url;               /* the first of urls (messages, describe) */
    char *urls[CH_URLS_MAX]; /* scheme://host:port/path, no query, no credentials */
    size_t nurls;
    size_t url_at; /* the one that answered last (under pool_mu) */
    char *user, *password, *database;
    char *local_db;            /* where the MergeTree tables are: database itself on one server */
    char *cluster;             /* --clickhouse-cluster, NULL on one server */
    uint64_t shards, replicas; /* of the cluster, as system.clusters says at open */
    int retention_days;
    long connect_timeout_ms, write_timeout_ms;
    char version[64];
    int ver_major, ver_minor;
    bool has_ttl, has_lowcard;

    pthread_mutex_t pool_mu;
    void *pool[CH_POOL_MAX]; /* CURL * */
    size_t npool;

    pthread_mutex_t mu; /* everything below */
    store_stats stats;
    ch_reject *rejects; /* note_rejected() rows waiting for the next flush */
    size_t nrejects;
    pthread_rwlock_t stacks_lock;    /* known_stacks (writes ask it, the writers fill it) */
    pthread_mutex_t stacks_write_mu; /* one writer stores new stacks at a time */
    jp_u64map known_stacks;          /* hash(day, stack id) -> 1: stored (cache only) */
    uint64_t attempt_seq;
    uint64_t rollup_errors; /* roll-up inserts that failed (those minutes read raw rows) */
    /* batch ids this process is writing now: a second write of the same id
     * waits for the first, so within one replica exactly one is accepted */
    char **inflight;
    size_t ninflight, inflight_cap;
    pthread_cond_t inflight_cv;
    /* the group commit: writes queue here, writer threads flush them
     * together (ch_write.c) */
    ch_wreq *wq_head, *wq_tail;
    size_t wq_len, wq_bytes;
    size_t writers_busy; /* writers with a group in hand */
    pthread_cond_t wq_work, wq_done;
    pthread_t writers[CH_WRITERS];
    size_t nwriters;
    bool writer_started, stopping;
    uint64_t flushes;            /* groups written */
    const char *insert_settings; /* URL settings of every INSERT, NULL none */
    const char *marker_settings; /* and of the look for commit markers */
    ch_rollup *rollup;
    ch_frames *frames;
    ch_stage *stage;
    bool legacy_samples; /* a jprof_samples table of schema 1-2 (one row per stack) is there */
} ch_store;

/* Appends " attempt IN (...)": the committed, winning write attempt of
 * every batch whose markers were received on from_day or later
 * (INT64_MIN: all). Readers keep a row only when its attempt is in this set
 * (see ch_write.c). The markers are read from the local table of the node
 * that runs the query: in a cluster each shard decides for its own rows,
 * whose markers it holds. */
void ch_visible(jp_strbuf *s, const ch_store *st, int64_t from_day);

/* What a SELECT reported besides its rows (FORMAT JSONCompact). */
typedef struct ch_result {
    bool have_stats;
    uint64_t rows_read, bytes_read, rows_before_limit;
    uint64_t rows;     /* rows delivered to the callback */
    uint64_t bad_rows; /* rows that did not parse */
    int64_t wall_ns;
    bool stopped; /* the row callback returned false */
} ch_result;

/* One row of JSONCompact output (a JSON array); return false to stop. */
typedef bool (*ch_row_fn)(json_t *row, void *ctx);

/* SELECT sql FORMAT JSONCompact, rows streamed to fn. The budget travels as
 * ClickHouse settings (max_execution_time, max_rows_to_read, break modes);
 * NULL = none. */
jp_err ch_select(ch_store *st, const char *sql, const store_budget *b, ch_row_fn fn, void *ctx,
                 ch_result *res, jp_error *err);
/* ch_select with more to say: no default database (use_db false: system
 * tables before the database exists), extra settings ("name=value&...")
 * in the URL. */
typedef struct ch_select_opts {
    const store_budget *b;
    bool use_db;
    const char *settings;
} ch_select_opts;
jp_err ch_select_with(ch_store *st, const char *sql, const ch_select_opts *o, ch_row_fn fn,
                      void *ctx, ch_result *res, jp_error *err);
/* A statement without rows (DDL, ALTER); with out, its text answer (capped).
 * use_db false runs it without the default database (CREATE DATABASE). */
jp_err ch_exec(ch_store *st, const char *sql, bool use_db, jp_strbuf *out, jp_error *err);
/* ch_exec with extra settings ("name=value&...", or NULL) in the URL. */
jp_err ch_exec_set(ch_store *st, const char *sql, bool use_db, const char *settings, jp_strbuf *out,
                   jp_error *err);
/* INSERT INTO table FORMAT TabSeparated with body rows. */
jp_err ch_insert(ch_store *st, const char *table, const jp_strbuf *rows, jp_error *err);
/* INSERT INTO table (columns) FORMAT format (columns NULL: all, in order),
 * with extra settings ("name=value&...", or NULL) in the URL. */
jp_err ch_insert_fmt(ch_store *st, const char *table, const char *columns, const char *format,
                     const jp_strbuf *rows, const char *settings, jp_error *err);
/* An INSERT body sent from where its pieces are, in this order, without
 * copying them into one buffer first. */
typedef struct ch_seg {
    const char *p;
    size_t len;
} ch_seg;
typedef struct ch_segs {
    const ch_seg *seg;
    size_t n, total; /* total: the sum of the lengths */
} ch_segs;
/* ch_insert_fmt with the body in pieces. */
jp_err ch_insert_segs(ch_store *st, const char *table, const char *columns, const char *format,
                      const ch_segs *rows, const char *settings, jp_error *err);
/* Frees the pooled handles. */
void ch_http_cleanup(ch_store *st);

/* 'quoted' SQL string literal. */
void ch_sql_str(jp_strbuf *b, const char *s);
/* A TabSeparated field (escaped), NULL as "". */
void ch_tsv_str(jp_strbuf *b, const char *s, size_t len);
/* A TabSeparated Array(String) field from n strings. */
void ch_tsv_str_array(jp_strbuf *b, const char *const *s, size_t n);
/* RowBinary values: UInt8/32/64, Int64, Date (a day number), String (NULL
 * as ""). */
void ch_rb_u8(jp_strbuf *b, uint64_t v);
void ch_rb_u32(jp_strbuf *b, uint64_t v);
void ch_rb_u64(jp_strbuf *b, uint64_t v);
void ch_rb_i64(jp_strbuf *b, int64_t v);
void ch_rb_day(jp_strbuf *b, int64_t day);
void ch_rb_str(jp_strbuf *b, const char *s, size_t len);
void ch_rb_cstr(jp_strbuf *b, const char *s);
/* 'YYYY-MM-DD' of a day number. */
void ch_day_str(jp_strbuf *b, int64_t day);

/* Values of a JSONCompact row (64-bit integers arrive as strings). */
uint64_t ch_u64(json_t *row, size_t i);
int64_t ch_i64(json_t *row, size_t i);
/* A string cell, NULL when it is empty or not a string. */
const char *ch_str(json_t *row, size_t i, size_t *len);
/* Day number of a 'YYYY-MM-DD' cell, INT64_MIN when malformed. */
int64_t ch_day(json_t *row, size_t i);

void ch_stats_query(ch_store *st, int64_t ns, bool error);
void ch_set_available(ch_store *st, bool up);
/* Writes the buffered rejections into the ingestion log (best effort). */
void ch_flush_rejects(ch_store *st);

/* The write path (ch_write.c). */
jp_err ch_write_batch(store *s, const jp_batch *b, const store_write_opts *opt,
                      store_write_result *res, jp_error *err);
void ch_note_rejected(store *s, const char *collector, const char *reason, int64_t time_ns);
/* Starts the writer thread / flushes what is queued and stops it (no-op
 * when it never started). */
void ch_writer_start(ch_store *st);
void ch_writer_stop(ch_store *st);

/* New stacks (ch_stage.c). ch_stage_stacks, on the request's thread:
 * stages the stacks of b's windows (skip as in store_write_opts) that are
 * neither stored nor staged (their rows encoded, their frames remembered);
 * returns whether any of them is not stored yet (the write's group must
 * then flush before its commit); *fresh: how many this call staged.
 * ch_stage_flush: once it returns JP_OK, every stack staged before it was
 * called is stored. */
void ch_stage_init(ch_store *st);
void ch_stage_cleanup(ch_store *st);
bool ch_stage_stacks(ch_store *st, const jp_batch *b, const bool *skip, uint64_t *fresh);
jp_err ch_stage_flush(ch_store *st, const char *settings, jp_error *err);

/* The roll-up (ch_rollup.c): a batch's share taken when it is encoded
 * (ch_rshare_window takes each window's blob from wb, with the names of its
 * threads; tids from wb_thread_ids), added once the batch is committed (the
 * roll-up keeps a reference; ch_rshare_free drops the caller's); write the
 * minutes that are over (all: everything). */
void ch_rollup_init(ch_store *st);
ch_rshare *ch_rshare_new(void);
void ch_rshare_window(ch_rshare *s, const jp_batch *b, size_t wi, const uint64_t *tids,
                      wb_window *wb);
void ch_rshare_free(ch_rshare *s);
void ch_rollup_add(ch_store *st, ch_rshare *s);
void ch_rollup_flush(ch_store *st, bool all);
void ch_rollup_cleanup(ch_store *st);

/* Creates or repairs the tables, checks and records the schema version,
 * adds missing columns, notes legacy tables (ch_schema.c). */
jp_err ch_schema(ch_store *st, jp_error *err);
/* "system.parts", or the function that reads it on one replica of every
 * shard. */
void ch_parts_table(const ch_store *st, jp_strbuf *q);
/* Every day-partitioned table name, older versions' included. */
extern const char *const ch_day_tables[];
extern const size_t ch_nday_tables;

/* ---- what the read ops share (ch_query.c) ---- */

/* One read op in progress: the store, its filter and budget, the SQL being
 * built, the time it started. */
typedef struct cq {
    ch_store *st;
    const store_filter *f;
    const store_budget *b;
    store_query_info *info;
    int64_t t0;
    jp_strbuf sql;
    bool shard_gone; /* a shard had no replica: its data is left out (and said so) */
} cq;

void cq_init(cq *q, store *s, const store_filter *f, const store_budget *b, store_query_info *info);
/* Counts the op into the stats, frees the SQL, returns rc. */
jp_err cq_done(cq *q, jp_err rc);
/* Runs q->sql with what is left of the budget, accounts its statistics and
 * marks the answer partial when a budget broke it. */
jp_err cq_run(cq *q, ch_row_fn fn, void *ctx, ch_result *res, jp_error *err);
/* " AND col = 'v'" (nothing when v is NULL). */
void cq_eq(jp_strbuf *s, const char *col, const char *v);
/* The conditions of a WHERE: day partitions of [from, to), the time column
 * in [from, to), the target filter (kind too when asked), and committed
 * batches only; cq_where puts " WHERE " first. */
void cq_conds(cq *q, const char *time_col, bool kind);
void cq_where(cq *q, const char *time_col, bool kind);

/* The frames cache of the flame op (ch_flame.c). */
void ch_frames_init(ch_store *st);
void ch_frames_cleanup(ch_store *st);
/* Keeps the frames of stack si of b, just stored (queries then need not
 * read them back). */
void ch_frames_remember(ch_store *st, const jp_batch *b, uint32_t si);

/* Read ops (ch_query.c; the flame in ch_flame.c). */
jp_err ch_targets(store *s, const store_filter *f, const store_budget *b, store_target_cb cb,
                  void *ctx, store_query_info *info, jp_error *err);
jp_err ch_flame(store *s, const store_filter *f, const store_budget *b, store_stack_cb cb,
                void *ctx, store_flame_totals *totals, store_query_info *info, jp_error *err);
jp_err ch_snapshots_latest(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                           void *ctx, store_query_info *info, jp_error *err);
jp_err ch_heaps(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb, void *ctx,
                store_query_info *info, jp_error *err);
jp_err ch_gc(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb, void *ctx,
             store_query_info *info, jp_error *err);
jp_err ch_deadlocks(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                    void *ctx, store_query_info *info, jp_error *err);
jp_err ch_statuses(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                   void *ctx, store_query_info *info, jp_error *err);
jp_err ch_ingestion(store *s, const store_filter *f, const store_budget *b, store_ingest_cb cb,
                    void *ctx, store_query_info *info, jp_error *err);
jp_err ch_days(store *s, store_day_cb cb, void *ctx, jp_error *err);

#endif
