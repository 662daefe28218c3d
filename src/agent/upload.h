/* upload.h - sending batches to jprof-server: ids, size cap, bounded queue,
 * retries.
 *
 * agent_upload_add() stamps a batch (id, collector, the queue's drop
 * counters), encodes it as JSON (wire/batch_json.h), refuses it with
 * JP_ERR_LIMIT when the JSON passes max_batch_bytes (the caller splits, see
 * agent_upload_profile), compresses it with zstd and queues it. A sender
 * thread POSTs the queue front to SERVER/api/v1/ingest with
 * `Content-Encoding: zstd` and `Authorization: Bearer <token>` (the token file
 * is re-read before every attempt, so a rotated token is picked up):
 *   2xx            done (duplicates are 2xx too: the id makes retries safe)
 *   400, 413       refused for good: counted, never retried
 *   anything else  (connection errors, 401/403, 429, 5xx) retried after an
 *                  exponential back-off with full jitter, bounded by
 *                  backoff_max; the batch keeps its id.
 * Batch ids: "<collector>-<agent start>-<sequence>-<random>", unique per
 * batch, at most JP_BATCH_ID_MAX bytes.
 *
 * Ownership: agent_uploader_new/_free; _free stops the thread after trying
 * to send what is queued for at most flush_ns. Thread-safe: any thread may
 * add batches. */
#ifndef JP_AGENT_UPLOAD_H
#define JP_AGENT_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "agent/metrics.h"
#include "base/error.h"
#include "model/profile.h"
#include "wire/batch.h"

typedef struct agent_upload_opts {
    const char
        *server; /* base URL(s), e.g. http://127.0.0.1:8080 (comma-separated: tried in turn) */
    const char *token_file; /* NULL: no Authorization header */
    const char *ca_file;    /* NULL: the system CAs */
    const char *collector;  /* e.g. "jprof-agent@node-1" */
    const char *version;
    size_t queue_bytes;     /* default 64 MiB */
    size_t max_batch_bytes; /* JSON bytes before compression; default 8 MiB */
    int64_t timeout_ns;     /* one POST; default 30 s */
    int64_t backoff_min_ns; /* default 1 s */
    int64_t backoff_max_ns; /* default 5 min */
} agent_upload_opts;

void agent_upload_opts_init(agent_upload_opts *o);

typedef struct agent_uploader agent_uploader;

/* Starts the sender thread. m (may be NULL) receives the counters. */
jp_err agent_uploader_new(const agent_upload_opts *o, agent_metrics *m, agent_uploader **out,
                          jp_error *err);
void agent_uploader_free(agent_uploader *u, int64_t flush_ns);

/* Queues a batch (its id, collector and queue fields are overwritten).
 * data_ns: start of its oldest window (0 when none). JP_ERR_LIMIT when its
 * JSON is larger than max_batch_bytes (nothing is queued). */
jp_err agent_upload_add(agent_uploader *u, jp_batch *b, int64_t data_ns, jp_error *err);

/* Queues the windows of one profile, splitting by kind and then by rows
 * until each batch fits max_batch_bytes. Returns the batches queued; a
 * single row that cannot fit is counted in metrics too_large. */
size_t agent_upload_profile(agent_uploader *u, const jp_profile *p, const jp_batch_target *target,
                            int64_t start_ns, int64_t end_ns);

/* Drop counters of the queue (for status). */
void agent_uploader_stats(agent_uploader *u, uint64_t *dropped_batches, uint64_t *dropped_bytes,
                          int64_t *oldest_dropped_ns, size_t *queued_bytes);

/* The latest refusal or failure ("" after a success following a failure). */
void agent_uploader_last_error(agent_uploader *u, char *buf, size_t len);
/* The latest windows of an accepted batch the server refused (time, count,
 * batch, reason: clock ahead, or older than the retention); "" when none. */
void agent_uploader_last_refused(agent_uploader *u, char *buf, size_t len);

/* The delay before retry number `attempt` (1, 2, ...): a random value in
 * [d/2, d] with d = min(max, min * 2^(attempt-1)). Exposed for tests. */
int64_t agent_backoff_ns(unsigned attempt, int64_t min_ns, int64_t max_ns, uint64_t rnd);

#endif
