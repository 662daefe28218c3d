/* metrics.h - jprof-server's own counters and their Prometheus text form.
 *
 * Counters are process-wide, updated from any HTTP thread under one mutex
 * (cheap next to a request). Store and partition figures are read from the
 * store when /metrics is scraped. Ownership: caller storage (metrics_init /
 * metrics_cleanup). Thread-safe. */
#ifndef JP_SERVER_METRICS_H
#define JP_SERVER_METRICS_H

#include <pthread.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "server/store.h"

/* Outcome of an ingest request, with the reason it is counted under. */
typedef enum metrics_ingest {
    MI_ACCEPTED = 0,
    MI_DUPLICATE,
    MI_REJ_MALFORMED,    /* 400 */
    MI_REJ_TOO_LARGE,    /* 413 */
    MI_REJ_UNAUTHORIZED, /* 401 */
    MI_REJ_FORBIDDEN,    /* 403 */
    MI_REJ_UNSUPPORTED,  /* 415 */
    MI_REJ_OVERLOAD,     /* 429 */
    MI_REJ_UNAVAILABLE,  /* 503 */
    MI_REJ_INTERNAL,     /* 500 */
    MI_COUNT
} metrics_ingest;

typedef enum metrics_refuse { MR_RETENTION = 0, MR_FUTURE, MR_COUNT } metrics_refuse;

/* Request latency histogram per route group. */
typedef enum metrics_route { MRT_INGEST = 0, MRT_QUERY, MRT_OTHER, MRT_COUNT } metrics_route;
#define METRICS_BUCKETS 12

typedef struct metrics {
    pthread_mutex_t mu;
    uint64_t ingest[MI_COUNT];
    uint64_t refused[MR_COUNT];
    uint64_t stack_rows, windows, bytes_in;
    uint64_t status[6]; /* 1xx..5xx by first digit (index 1..5) */
    uint64_t hist[MRT_COUNT][METRICS_BUCKETS + 1];
    double hist_sum[MRT_COUNT];
    uint64_t hist_count[MRT_COUNT];
    int64_t started_ns;
} metrics;

void metrics_init(metrics *m);
void metrics_cleanup(metrics *m);
void metrics_ingest_count(metrics *m, metrics_ingest what);
void metrics_refused_count(metrics *m, metrics_refuse why, uint64_t n);
void metrics_rows_count(metrics *m, uint64_t windows, uint64_t rows, uint64_t bytes);
void metrics_request_done(metrics *m, metrics_route r, int status, int64_t ns);
/* A stable label value of an outcome ("accepted", "malformed", ...). */
const char *metrics_ingest_name(metrics_ingest what);

/* Appends the Prometheus exposition (text format 0.0.4). */
void metrics_render(metrics *m, store *st, int retention_days, jp_strbuf *out);

#endif
