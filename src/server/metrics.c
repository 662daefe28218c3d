#include "server/metrics.h"

#include <string.h>

#include "base/timeutil.h"

static const double bucket_s[METRICS_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                 0.1,   0.25,   0.5,   1,    2.5,   10};
static const char *const ingest_names[MI_COUNT] = {
    "accepted",  "duplicate",   "malformed", "too_large",   "unauthorized",
    "forbidden", "unsupported", "overload",  "unavailable", "internal"};
static const char *const route_names[MRT_COUNT] = {"ingest", "query", "other"};

void metrics_init(metrics *m)
{
    memset(m, 0, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
    m->started_ns = jp_time_now_ns();
}

void metrics_cleanup(metrics *m)
{
    pthread_mutex_destroy(&m->mu);
}

const char *metrics_ingest_name(metrics_ingest what)
{
    return (unsigned)what < MI_COUNT ? ingest_names[what] : "unknown";
}

void metrics_ingest_count(metrics *m, metrics_ingest what)
{
    pthread_mutex_lock(&m->mu);
    m->ingest[what]++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_refused_count(metrics *m, metrics_refuse why, uint64_t n)
{
    pthread_mutex_lock(&m->mu);
    m->refused[why] += n;
    pthread_mutex_unlock(&m->mu);
}

void metrics_rows_count(metrics *m, uint64_t windows, uint64_t rows, uint64_t bytes)
{
    pthread_mutex_lock(&m->mu);
    m->windows += windows;
    m->stack_rows += rows;
    m->bytes_in += bytes;
    pthread_mutex_unlock(&m->mu);
}

void metrics_request_done(metrics *m, metrics_route r, int status, int64_t ns)
{
    double s = (double)ns / 1e9;
    pthread_mutex_lock(&m->mu);
    int b = 0;
    while (b < METRICS_BUCKETS && s > bucket_s[b])
        b++;
    m->hist[r][b]++;
    m->hist_sum[r] += s;
    m->hist_count[r]++;
    if (status >= 100 && status < 600)
        m->status[status / 100]++;
    pthread_mutex_unlock(&m->mu);
}

typedef struct day_ctx {
    jp_strbuf *out;
    int64_t oldest, now;
    int64_t lag_ns;
    int retention;
    jp_strbuf rows, bytes;
} day_ctx;

static bool metrics_day(const store_day_row *d, void *vctx)
{
    day_ctx *c = vctx;
    char day[16];
    store_day_format(d->day, day, sizeof day);
    jp_strbuf_printf(&c->rows, "jprof_server_store_partition_rows{day=\"%s\"} %llu\n", day,
                     (unsigned long long)d->stack_rows);
    jp_strbuf_printf(&c->bytes, "jprof_server_store_partition_bytes{day=\"%s\"} %llu\n", day,
                     (unsigned long long)d->bytes);
    if (c->oldest == INT64_MAX || d->day < c->oldest)
        c->oldest = d->day;
    /* retention lag: how long a day has outlived its expiry */
    if (c->now > d->expires_ns && c->now - d->expires_ns > c->lag_ns)
        c->lag_ns = c->now - d->expires_ns;
    return true;
}

static void metrics_render_store(store *st, int retention_days, jp_strbuf *o)
{
    store_stats ss;
    st->ops->stats(st, &ss);
    jp_strbuf_printf(o,
                     "# HELP jprof_server_store_up 1 when the last store operation worked.\n"
                     "# TYPE jprof_server_store_up gauge\njprof_server_store_up{store=\"%s\"} %d\n",
                     st->ops->name, ss.available ? 1 : 0);
    jp_strbuf_printf(o,
                     "# TYPE jprof_server_store_writes_total counter\n"
                     "jprof_server_store_writes_total %llu\n"
                     "# TYPE jprof_server_store_write_errors_total counter\n"
                     "jprof_server_store_write_errors_total %llu\n"
                     "# TYPE jprof_server_store_commits_total counter\n"
                     "jprof_server_store_commits_total %llu\n"
                     "# TYPE jprof_server_store_write_seconds_total counter\n"
                     "jprof_server_store_write_seconds_total %.6f\n"
                     "# TYPE jprof_server_store_queries_total counter\n"
                     "jprof_server_store_queries_total %llu\n"
                     "# TYPE jprof_server_store_query_errors_total counter\n"
                     "jprof_server_store_query_errors_total %llu\n"
                     "# TYPE jprof_server_store_query_seconds_total counter\n"
                     "jprof_server_store_query_seconds_total %.6f\n"
                     "# TYPE jprof_server_retention_runs_total counter\n"
                     "jprof_server_retention_runs_total %llu\n"
                     "# TYPE jprof_server_retention_days_removed_total counter\n"
                     "jprof_server_retention_days_removed_total %llu\n"
                     "# TYPE jprof_server_retention_last_run_timestamp_seconds gauge\n"
                     "jprof_server_retention_last_run_timestamp_seconds %.3f\n"
                     "# TYPE jprof_server_retention_days gauge\n"
                     "jprof_server_retention_days %d\n",
                     (unsigned long long)ss.writes, (unsigned long long)ss.write_errors,
                     (unsigned long long)ss.commits, (double)ss.write_ns_total / 1e9,
                     (unsigned long long)ss.queries, (unsigned long long)ss.query_errors,
                     (double)ss.query_ns_total / 1e9, (unsigned long long)ss.retention_runs,
                     (unsigned long long)ss.retention_days_removed,
                     (double)ss.retention_last_run_ns / 1e9, retention_days);
    day_ctx c = {.out = o, .oldest = INT64_MAX, .now = store_now_ns(), .retention = retention_days};
    jp_strbuf_init(&c.rows, 0);
    jp_strbuf_init(&c.bytes, 0);
    jp_error e;
    jp_error_init(&e);
    st->ops->days(st, metrics_day, &c, &e);
    jp_strbuf_puts(o, "# HELP jprof_server_store_partition_rows Stack rows stored per day.\n"
                      "# TYPE jprof_server_store_partition_rows gauge\n");
    jp_strbuf_puts(o, jp_strbuf_str(&c.rows));
    jp_strbuf_puts(o, "# HELP jprof_server_store_partition_bytes Bytes stored per day.\n"
                      "# TYPE jprof_server_store_partition_bytes gauge\n");
    jp_strbuf_puts(o, jp_strbuf_str(&c.bytes));
    jp_strbuf_printf(o,
                     "# HELP jprof_server_store_oldest_day_timestamp_seconds Start of the oldest "
                     "retained day (0 when empty).\n"
                     "# TYPE jprof_server_store_oldest_day_timestamp_seconds gauge\n"
                     "jprof_server_store_oldest_day_timestamp_seconds %lld\n"
                     "# HELP jprof_server_retention_lag_seconds How long the most overdue day has "
                     "outlived its expiry (0 when retention is on time).\n"
                     "# TYPE jprof_server_retention_lag_seconds gauge\n"
                     "jprof_server_retention_lag_seconds %.3f\n",
                     c.oldest == INT64_MAX ? 0LL : (long long)(c.oldest * 86400),
                     (double)c.lag_ns / 1e9);
    jp_strbuf_cleanup(&c.rows);
    jp_strbuf_cleanup(&c.bytes);
}

void metrics_render(metrics *m, store *st, int retention_days, jp_strbuf *o)
{
    pthread_mutex_lock(&m->mu);
    metrics snap = *m;
    pthread_mutex_unlock(&m->mu);
    jp_strbuf_puts(o, "# HELP jprof_server_ingest_batches_total Ingest requests by outcome.\n"
                      "# TYPE jprof_server_ingest_batches_total counter\n");
    for (int i = 0; i < MI_COUNT; i++)
        jp_strbuf_printf(o,
                         "jprof_server_ingest_batches_total{outcome=\"%s\",reason=\"%s\"} %llu\n",
                         i == MI_ACCEPTED    ? "accepted"
                         : i == MI_DUPLICATE ? "duplicate"
                                             : "rejected",
                         ingest_names[i], (unsigned long long)snap.ingest[i]);
    jp_strbuf_printf(o,
                     "# HELP jprof_server_ingest_windows_refused_total Profile windows refused.\n"
                     "# TYPE jprof_server_ingest_windows_refused_total counter\n"
                     "jprof_server_ingest_windows_refused_total{reason=\"retention\"} %llu\n"
                     "jprof_server_ingest_windows_refused_total{reason=\"future\"} %llu\n"
                     "# TYPE jprof_server_ingest_windows_total counter\n"
                     "jprof_server_ingest_windows_total %llu\n"
                     "# TYPE jprof_server_ingest_stack_rows_total counter\n"
                     "jprof_server_ingest_stack_rows_total %llu\n"
                     "# TYPE jprof_server_ingest_bytes_total counter\n"
                     "jprof_server_ingest_bytes_total %llu\n",
                     (unsigned long long)snap.refused[MR_RETENTION],
                     (unsigned long long)snap.refused[MR_FUTURE], (unsigned long long)snap.windows,
                     (unsigned long long)snap.stack_rows, (unsigned long long)snap.bytes_in);
    jp_strbuf_puts(o, "# TYPE jprof_server_http_responses_total counter\n");
    for (int i = 1; i < 6; i++)
        jp_strbuf_printf(o, "jprof_server_http_responses_total{code=\"%dxx\"} %llu\n", i,
                         (unsigned long long)snap.status[i]);
    jp_strbuf_puts(o, "# HELP jprof_server_http_request_duration_seconds Request latency.\n"
                      "# TYPE jprof_server_http_request_duration_seconds histogram\n");
    for (int r = 0; r < MRT_COUNT; r++) {
        uint64_t cum = 0;
        for (int b = 0; b < METRICS_BUCKETS; b++) {
            cum += snap.hist[r][b];
            jp_strbuf_printf(o,
                             "jprof_server_http_request_duration_seconds_bucket{route=\"%s\","
                             "le=\"%g\"} %llu\n",
                             route_names[r], bucket_s[b], (unsigned long long)cum);
        }
        cum += snap.hist[r][METRICS_BUCKETS];
        jp_strbuf_printf(
            o,
            "jprof_server_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} "
            "%llu\n"
            "jprof_server_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n"
            "jprof_server_http_request_duration_seconds_count{route=\"%s\"} %llu\n",
            route_names[r], (unsigned long long)cum, route_names[r], snap.hist_sum[r],
            route_names[r], (unsigned long long)snap.hist_count[r]);
    }
    jp_strbuf_printf(o,
                     "# TYPE jprof_server_start_time_seconds gauge\n"
                     "jprof_server_start_time_seconds %.3f\n",
                     (double)snap.started_ns / 1e9);
    metrics_render_store(st, retention_days, o);
}
