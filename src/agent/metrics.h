/* metrics.h - the agent's own health: counters, gauges, and a tiny HTTP
 * responder for /metrics (Prometheus text), /status (the latest status of
 * every target and pod, JSON) and /healthz.
 *
 * Counters are C11 atomics so any thread may bump them; the skipped-by-reason
 * gauges and the status text are replaced as a whole once per cycle under a
 * lock. The responder is one thread around poll(): one connection at a time,
 * requests capped at AGENT_HTTP_REQ_MAX bytes and a 2 s read timeout, GET
 * only. (libmicrohttpd is for jprof-server only, ARCHITECTURE.md.)
 *
 * Ownership: agent_metrics is caller storage (init/cleanup); the status
 * text given to agent_metrics_set_status is taken (heap). Thread-safe. */
#ifndef JP_AGENT_METRICS_H
#define JP_AGENT_METRICS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define AGENT_HTTP_REQ_MAX 8192
#define AGENT_REASONS_MAX 32

typedef struct agent_metrics {
    /* gauges set by the main loop each cycle */
    atomic_uint_fast64_t jvms_discovered, jvms_eligible, jvms_active;
    /* counters */
    atomic_uint_fast64_t attach_failures, recording_failures, windows_collected;
    atomic_uint_fast64_t snapshots_taken, snapshot_failures;
    atomic_uint_fast64_t heap_histograms_taken, heap_histogram_failures;
    atomic_uint_fast64_t uploads_ok, uploads_retried, uploads_rejected, uploads_dropped;
    /* windows of accepted batches the server refused (clock ahead, too old) */
    atomic_uint_fast64_t windows_refused_future, windows_refused_retention;
    atomic_uint_fast64_t upload_dropped_bytes, batches_queued, batches_split, too_large;
    atomic_uint_fast64_t queue_bytes;      /* gauge */
    atomic_int_fast64_t last_upload_ok_ns; /* gauge, 0 never */
    atomic_uint_fast64_t k8s_lists, k8s_relists_gone, k8s_watch_events, k8s_errors;
    atomic_uint_fast64_t k8s_pods; /* gauge */
    pthread_mutex_t lock;
    char reasons[AGENT_REASONS_MAX][32]; /* skipped targets by reason (under lock) */
    uint64_t reason_counts[AGENT_REASONS_MAX];
    size_t nreasons;
    char *status_json; /* under lock */
    /* responder */
    int listen_fd, stop_pipe[2];
    pthread_t thread;
    int running;
} agent_metrics;

void agent_metrics_init(agent_metrics *m);
void agent_metrics_cleanup(agent_metrics *m); /* stops the responder */

/* Replaces the skipped-by-reason gauges. */
void agent_metrics_set_skipped(agent_metrics *m, const char *const *reasons, const uint64_t *counts,
                               size_t n);
/* Replaces the /status document (takes the heap string). */
void agent_metrics_set_status(agent_metrics *m, char *json);

/* Prometheus text exposition of everything (heap, free()). */
char *agent_metrics_render(agent_metrics *m);

/* Binds "ADDR:PORT" (IPv4 or [IPv6]; port 0 picks one) and starts the
 * responder thread. *bound_port (may be NULL) receives the port. */
jp_err agent_metrics_listen(agent_metrics *m, const char *addr, int *bound_port, jp_error *err);

/* Handles one raw request (exposed for tests): the response text, heap. */
char *agent_metrics_respond(agent_metrics *m, const char *req, size_t len, size_t *out_len);

#endif
