/* server.h - jprof-server's shared request context: configuration, the
 * store, tokens, metrics, and the request/response pair handlers work on.
 *
 * Handlers (ingest.c, api.c) fill a srv_resp; http.c turns it into an HTTP
 * response. Handlers run on http.c's handler threads, several at once, and
 * block on nothing but the store, whose calls carry their own budgets. They
 * read the request only through srv_req (copied out of the connection).
 * Ownership: srv_resp.body is freed by http.c after the response is queued;
 * the request's body is borrowed for the call. */
#ifndef JP_SERVER_SERVER_H
#define JP_SERVER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "server/api_query.h"
#include "server/auth.h"
#include "server/metrics.h"
#include "server/store.h"
#include "wire/batch_json.h"

typedef struct srv_config {
    const char *listen;   /* "ADDR:PORT"; default 127.0.0.1:8480 */
    const char *data_dir; /* embedded store */
    const char *tokens_file;
    const char *tls_cert, *tls_key;
    const char *web_dir;   /* serve the page from here; NULL = the embedded copy */
    const char *port_file; /* write the bound port here (tests use port 0) */
    int retention_days;
    bool insecure_no_auth;
    bool metrics_open;       /* /metrics without a token */
    int threads;             /* --max-connections: concurrent connections */
    int workers;             /* --threads: handler threads (0 = 4 per core) */
    int io_threads;          /* libmicrohttpd's polling threads (0 = 1 per core) */
    size_t max_body;         /* bytes on the wire */
    size_t max_decompressed; /* bytes after zstd */
    jp_batch_limits limits;
    int64_t query_budget_ns;
    int64_t max_clock_skew_ns; /* windows starting later than now + this are refused */
    uint64_t query_max_rows;
    uint64_t query_max_stacks;
    int64_t retention_interval_ns;
    int jfr_jobs; /* --jfr-jobs: threads decoding one uploaded recording */
} srv_config;

typedef struct srv_pool srv_pool; /* http.c: the handler threads and their queue */

typedef struct srv {
    srv_config cfg;
    store *st;
    auth_table *auth;
    metrics m;
    uint16_t port;
    char *tls_pem[2]; /* certificate and key text while the daemon runs */
    srv_pool *pool;
} srv;

typedef struct srv_req {
    srv *s;
    const api_args *args; /* the query string, parsed before the handler runs */
    const char *method, *url;
    const auth_token *tok;
    const uint8_t *body;
    size_t body_len;
    const char *content_encoding;
    const char *content_type; /* NULL when not sent */
    const char *accept;       /* NULL when not sent */
} srv_req;

typedef struct srv_resp {
    int status;
    jp_strbuf body;
    const char *ctype;
    int retry_after; /* seconds, 0 = none */
    /* static files (web.c): a body that lives as long as the process, sent
     * instead of `body` when set; its ETag and Cache-Control (NULL: no-store) */
    const unsigned char *static_body;
    size_t static_len;
    const char *etag, *cache_control;
    char disposition[160]; /* Content-Disposition ("attachment; filename=..."), "" none */
} srv_resp;

/* A query-string argument, or NULL. */
const char *srv_arg(const srv_req *r, const char *key);

/* Sets an error answer: {"error": {"status", "code", "message"}}. */
void srv_error(srv_resp *o, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* JSON output helpers. */
void jw_str(jp_strbuf *b, const char *s, size_t len);
void jw_cstr(jp_strbuf *b, const char *s); /* NULL -> null */
void jw_time(jp_strbuf *b, int64_t ns);    /* 0 -> null */

/* Requires a role, and for reads a namespace in scope. On failure fills o
 * (401/403) and returns false. ns may be NULL (no namespace involved). */
bool srv_authorize(srv_req *r, srv_resp *o, auth_role role, const char *ns);

/* Handlers. */
void ingest_batch(srv_req *r, srv_resp *o);
void ingest_jfr(srv_req *r, srv_resp *o);
void ingest_otlp(srv_req *r, srv_resp *o);      /* ingest_otlp.c */
void ingest_pyroscope(srv_req *r, srv_resp *o); /* ingest_pyroscope.c */
void api_services(srv_req *r, srv_resp *o);
void api_flamegraph(srv_req *r, srv_resp *o);
void api_top(srv_req *r, srv_resp *o);
void api_threads(srv_req *r, srv_resp *o);
void api_deadlocks(srv_req *r, srv_resp *o);
void api_gc(srv_req *r, srv_resp *o);
void api_heap(srv_req *r, srv_resp *o);
void api_targets(srv_req *r, srv_resp *o);
void api_ingestion(srv_req *r, srv_resp *o);
void api_retention(srv_req *r, srv_resp *o);
void api_flamegraph_diff(srv_req *r, srv_resp *o);

/* The HTTP daemon (http.c). */
jp_err srv_http_start(srv *s, void **daemon, jp_error *err);
void srv_http_stop(srv *s, void *daemon);
/* True when --listen names a loopback address (127.0.0.0/8, ::1). */
bool srv_listen_is_loopback(const char *listen);
void srv_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
