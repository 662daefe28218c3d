/* ch_int.h - internals shared by the ClickHouse store's files:
 *   ch_http.c           HTTP requests (libcurl handle pool), output parsing, escaping
 *   store_clickhouse.c  open, schema, writes, retention, ops table
 *   ch_query.c          the read ops
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

#define CH_SCHEMA_VERSION 2
#define CH_POOL_MAX 8 /* idle curl handles kept for connection reuse */
/* jprof_rollup_1m buckets: windows by the minute their start_ns falls in */
#define CH_MINUTE_NS (60 * JP_NS_PER_SEC)

typedef struct ch_reject {
    char *collector, *reason;
    int64_t time_ns;
} ch_reject;

typedef struct ch_store {
    char *url; /* scheme://host:port/path, no query, no credentials */
    char *user, *password, *database;
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
    jp_u64map known_stacks; /* hash(day, stack id) -> 1: stored (cache only) */
    uint64_t attempt_seq;
    uint64_t rollup_errors; /* roll-up inserts that failed (those minutes read raw rows) */
    /* batch ids this process is writing now: a second write of the same id
     * waits for the first, so within one replica exactly one is accepted */
    char **inflight;
    size_t ninflight, inflight_cap;
    pthread_cond_t inflight_cv;
} ch_store;

/* The committed, winning write attempt of every batch: readers keep a row
 * only when its attempt is in this set (see store_clickhouse.c). */
#define CH_VISIBLE                                                                                 \
    " attempt IN (SELECT min(attempt) FROM jprof_ingest WHERE outcome = 0 GROUP BY batch_id)"

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
/* A statement without rows (DDL, ALTER); with out, its text answer (capped).
 * use_db false runs it without the default database (CREATE DATABASE). */
jp_err ch_exec(ch_store *st, const char *sql, bool use_db, jp_strbuf *out, jp_error *err);
/* INSERT INTO table FORMAT TabSeparated with body rows. */
jp_err ch_insert(ch_store *st, const char *table, const jp_strbuf *rows, jp_error *err);
/* Frees the pooled handles. */
void ch_http_cleanup(ch_store *st);

/* 'quoted' SQL string literal. */
void ch_sql_str(jp_strbuf *b, const char *s);
/* A TabSeparated field (escaped), NULL as "". */
void ch_tsv_str(jp_strbuf *b, const char *s, size_t len);
/* A TabSeparated Array(String) field from n strings. */
void ch_tsv_str_array(jp_strbuf *b, const char *const *s, size_t n);
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

/* Read ops (ch_query.c). */
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
