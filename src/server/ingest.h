/* ingest.h - what every ingest route shares (ingest.c): jprof's own batches
 * and raw JFR there, OpenTelemetry profiles (ingest_otlp.c) and Pyroscope's
 * /ingest (ingest_pyroscope.c) build a batch from what they are sent and go
 * through the same steps, so every route has the same auth, limits,
 * idempotency and errors:
 *   ingest_authorize  an ingest token (namespace ns in scope when known)
 *   ingest_body       the body after Content-Encoding (zstd, gzip, identity)
 *                     within --max-decompressed
 *   ingest_refuse     a body that does not decode: 400, 413 (a limit), with
 *                     the decoder's message, counted for /metrics and the
 *                     collector's ingestion health
 *   ingest_in_scope   every namespace the batch writes is in the token's scope
 *   ingest_write      windows out of the retention or in the future refused,
 *                     the rest written durably; a batch id seen before is a
 *                     duplicate (nothing written twice)
 * Each fills the response on failure and returns false. Handlers run on the
 * server's handler threads; nothing here keeps state between requests. */
#ifndef JP_SERVER_INGEST_H
#define JP_SERVER_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/server.h"
#include "wire/batch.h"

bool ingest_authorize(srv_req *r, srv_resp *o, const char *ns);

/* *out is r->body or a heap copy (*owned, the caller frees it). */
bool ingest_body(srv_req *r, srv_resp *o, const uint8_t **out, size_t *len, uint8_t **owned);

/* rc from a decoder: JP_ERR_LIMIT -> 413, anything else -> 400 (code
 * "unsupported" for JP_ERR_UNSUPPORTED, else "malformed"). collector may be
 * NULL. */
void ingest_refuse(srv_req *r, srv_resp *o, jp_err rc, const char *msg, const char *collector);

bool ingest_in_scope(srv_req *r, srv_resp *o, const jp_batch *b);

/* A query parameter naming a target (namespace, service, pod): *out NULL
 * when absent or empty; 400 when longer than 253 bytes or with control
 * characters. */
bool ingest_name_arg(srv_req *r, srv_resp *o, const char *key, const char **out);

/* Reads a JFR recording into p with threads (what can be read of a damaged
 * one, if anything); *start, *end its range (0 unknown); 400 when nothing
 * can be read. */
bool ingest_read_jfr(srv_req *r, srv_resp *o, const uint8_t *data, size_t len,
                     const char *collector, jp_profile *p, int64_t *start, int64_t *end);

/* What the write did, for an answer. */
typedef struct ingest_result {
    const store_write_result *res;
    const char *refused_json; /* [{"window":I,"code":C,"reason":R},...] without brackets */
    uint64_t nrefused;        /* windows refused (retention, future) */
} ingest_result;

/* Writes the success answer; NULL in ingest_write means the JSON one. */
typedef void (*ingest_answer_fn)(srv_req *r, srv_resp *o, const jp_batch *b,
                                 const ingest_result *ir);

void ingest_write(srv_req *r, srv_resp *o, jp_batch *b, ingest_answer_fn answer);
/* jprof's answer: {"status": "accepted"|"duplicate", "batch_id", "windows",
 * "stack_rows", "new_stacks", "documents", "documents_refused",
 * "windows_refused": [...]} (docs/API.md). */
void ingest_answer_json(srv_req *r, srv_resp *o, const jp_batch *b, const ingest_result *ir);

/* A stable batch id "PREFIX-HASH-LEN" of a body and the strings that name
 * where it goes, so the same upload twice is a duplicate. */
void ingest_id(const char *prefix, const uint8_t *data, size_t len, const char *const *parts,
               size_t nparts, char *out, size_t outlen);

/* Adds to b a status of target t as pushed from elsewhere: state "active",
 * mode "pushed", engine (the format: "otlp", "pyroscope") and a message
 * naming the sender, at now (the Status screen shows where data came from). */
void ingest_status_pushed(jp_batch *b, const jp_batch_target *t, const char *engine,
                          const char *message);

#endif
