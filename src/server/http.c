/* http.c - libmicrohttpd glue: routing, bodies with a cap, auth, static
 * files, per-request state freed in the completion callback, and the
 * handler threads (libmicrohttpd's thread pool polls the connections; a
 * request with a complete body is suspended, run on one of --threads handler
 * threads, and resumed with its answer). */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/server.h"
#include "server/web.h"

void srv_log(const char *fmt, ...)
{
    char ts[40];
    jp_rfc3339_format(jp_time_now_ns(), ts, sizeof ts);
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s jprof-server: %s\n", ts, line);
}

/* ---- JSON helpers ---- */

void jw_str(jp_strbuf *b, const char *s, size_t len)
{
    jp_strbuf_putc(b, '"');
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
            continue;
        jp_strbuf_append(b, s + run, i - run);
        run = i + 1;
        if (c == '"' || c == '\\') {
            jp_strbuf_putc(b, '\\');
            jp_strbuf_putc(b, (char)c);
        } else {
            jp_strbuf_printf(b, "\\u%04x", c);
        }
    }
    jp_strbuf_append(b, s + run, len - run);
    jp_strbuf_putc(b, '"');
}

void jw_cstr(jp_strbuf *b, const char *s)
{
    if (s)
        jw_str(b, s, strlen(s));
    else
        jp_strbuf_puts(b, "null");
}

void jw_time(jp_strbuf *b, int64_t ns)
{
    if (!ns) {
        jp_strbuf_puts(b, "null");
        return;
    }
    char t[40];
    jp_rfc3339_format(ns, t, sizeof t);
    jp_strbuf_printf(b, "\"%s\"", t);
}

void srv_error(srv_resp *o, int status, const char *code, const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->status = status;
    o->ctype = "application/json";
    jp_strbuf_reset(&o->body);
    jp_strbuf_printf(&o->body, "{\"error\":{\"status\":%d,\"code\":", status);
    jw_cstr(&o->body, code);
    jp_strbuf_puts(&o->body, ",\"message\":");
    jw_cstr(&o->body, msg);
    jp_strbuf_puts(&o->body, "}}\n");
    if (status == 429)
        o->retry_after = 1;
    else if (status == 503)
        o->retry_after = 5;
}

const char *srv_arg(const srv_req *r, const char *key)
{
    return api_args_get(r->args, key);
}

bool srv_authorize(srv_req *r, srv_resp *o, auth_role role, const char *ns)
{
    if (r->s->cfg.insecure_no_auth)
        return true;
    if (!r->tok) {
        srv_error(o, 401, "unauthorized",
                  "missing or unknown bearer token (Authorization: Bearer TOKEN)");
        return false;
    }
    if (!auth_has_role(r->tok, role)) {
        srv_error(o, 403, "forbidden", "a %s token may not do this (needs %s)",
                  auth_role_name(r->tok),
                  role == AUTH_INGEST ? "ingest"
                  : role == AUTH_READ ? "read"
                                      : "admin");
        return false;
    }
    if (ns && !auth_in_scope(r->tok, ns)) {
        srv_error(o, 403, "forbidden", "namespace '%s' is outside this token's scope", ns);
        return false;
    }
    return true;
}

/* ---- per-connection state ---- */

/* A request handed to a handler thread: everything the handler reads is
 * copied out of the connection first, because libmicrohttpd owns the
 * connection while it is suspended. */
typedef struct conn_state {
    jp_strbuf body;
    bool too_large;
    bool answered;
    int64_t t0;
    metrics_route route;
    int status;
    /* the handler's job (state under the pool's lock once queued) */
    struct MHD_Connection *conn;
    const struct route *rt;
    char *url, *method, *content_encoding, *content_type, *accept;
    const auth_token *tok;
    char *query;   /* the raw query string (http_on_uri), NULL when none */
    api_args args; /* ... parsed (api_query.c) before the handler runs */
    bool started;  /* the access handler has seen the request */
    bool queued, done;
    srv_resp resp;
    struct conn_state *next;
} conn_state;

/* HTTP Basic credentials (RFC 7617) carrying a token: Pyroscope's agents
 * send the server URL's user and password so, and an OpenTelemetry
 * collector's basicauth extension too. The password is tried first, then the
 * user (a URL written http://TOKEN@host:8480 has no password). */
static const auth_token *http_basic_token(srv *s, const char *b64)
{
    uint8_t *raw = NULL;
    size_t n = 0;
    if (jp_base64_decode(b64, strlen(b64), &raw, &n, NULL) != JP_OK)
        return NULL;
    const auth_token *tok = NULL;
    uint8_t *colon = memchr(raw, ':', n);
    if (colon) {
        size_t user = (size_t)(colon - raw), pass = n - user - 1;
        if (pass)
            tok = auth_lookup(s->auth, (const char *)colon + 1, pass);
        if (!tok && user)
            tok = auth_lookup(s->auth, (const char *)raw, user);
    }
    if (raw)
        memset(raw, 0, n);
    free(raw);
    return tok;
}

/* The request's token: "Authorization: Bearer TOKEN", or Basic as above. */
static const auth_token *http_token(srv *s, struct MHD_Connection *c)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (h && !strncasecmp(h, "Basic ", 6)) {
        h += 6;
        while (*h == ' ')
            h++;
        return strlen(h) <= 4 * AUTH_TOKEN_MAX ? http_basic_token(s, h) : NULL;
    }
    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return NULL;
    h += 7;
    while (*h == ' ')
        h++;
    size_t len = strlen(h);
    while (len && (h[len - 1] == ' ' || h[len - 1] == '\t'))
        len--;
    return auth_lookup(s->auth, h, len);
}

static enum MHD_Result http_send(struct MHD_Connection *c, conn_state *cs, srv_resp *o, bool head)
{
    size_t len = o->body.len;
    char *data = jp_strbuf_take(&o->body);
    struct MHD_Response *resp;
    if (head || o->status == 304) {
        free(data);
        data = NULL; /* a failed response below must not free it again */
        resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    } else if (o->static_body) {
        free(data);
        data = NULL;
        resp = MHD_create_response_from_buffer(o->static_len, (void *)o->static_body,
                                               MHD_RESPMEM_PERSISTENT);
    } else {
        resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    }
    if (!resp) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            o->ctype ? o->ctype : "application/json");
    /* on every answer, pages and JSON alike (web.h) */
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Content-Security-Policy", WEB_CSP);
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
                            o->cache_control ? o->cache_control : "no-store");
    if (o->etag)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, o->etag);
    if (o->disposition[0])
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, o->disposition);
    if (o->status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (o->retry_after) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", o->retry_after);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)o->status, resp);
    MHD_destroy_response(resp);
    cs->status = o->status;
    cs->answered = true;
    return rc;
}

/* ---- routing ---- */

typedef void (*handler_fn)(srv_req *, srv_resp *);

static const struct route {
    const char *method, *path;
    handler_fn fn;
    metrics_route group;
} routes[] = {
    {"POST", "/api/v1/ingest", ingest_batch, MRT_INGEST},
    {"POST", "/api/v1/ingest/jfr", ingest_jfr, MRT_INGEST},
    {"POST", "/v1development/profiles", ingest_otlp, MRT_INGEST},
    {"POST", "/ingest", ingest_pyroscope, MRT_INGEST},
    {"GET", "/api/v1/services", api_services, MRT_QUERY},
    {"GET", "/api/v1/flamegraph", api_flamegraph, MRT_QUERY},
    {"GET", "/api/v1/flamegraph/diff", api_flamegraph_diff, MRT_QUERY},
    {"GET", "/api/v1/top", api_top, MRT_QUERY},
    {"GET", "/api/v1/threads", api_threads, MRT_QUERY},
    {"GET", "/api/v1/deadlocks", api_deadlocks, MRT_QUERY},
    {"GET", "/api/v1/gc", api_gc, MRT_QUERY},
    {"GET", "/api/v1/heap", api_heap, MRT_QUERY},
    {"GET", "/api/v1/targets", api_targets, MRT_QUERY},
    {"GET", "/api/v1/ingestion", api_ingestion, MRT_QUERY},
    {"GET", "/api/v1/retention", api_retention, MRT_QUERY},
};

static const struct route *http_route(const char *url, bool *path_known, const char *method)
{
    *path_known = false;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (!strcmp(url, routes[i].path)) {
            *path_known = true;
            if (!strcmp(method, routes[i].method) ||
                (!strcmp(method, "HEAD") && !strcmp(routes[i].method, "GET")))
                return &routes[i];
        }
    return NULL;
}

static void http_metrics(srv_req *r, srv_resp *o)
{
    if (!r->s->cfg.metrics_open && !r->s->cfg.insecure_no_auth) {
        if (!r->tok) {
            srv_error(o, 401, "unauthorized", "missing or unknown bearer token");
            return;
        }
    }
    o->status = 200;
    o->ctype = "text/plain; version=0.0.4; charset=utf-8";
    jp_strbuf_reset(&o->body);
    metrics_render(&r->s->m, r->s->st, r->s->cfg.retention_days, &o->body);
}

/* Requests answered at once in libmicrohttpd's thread (no store involved):
 * health, the web page, unknown paths and methods. Returns false when the
 * request needs a handler thread (*rt set). */
static bool http_inline(srv *s, struct MHD_Connection *c, const char *url, const char *method,
                        srv_resp *o, const struct route **rt)
{
    bool known;
    *rt = http_route(url, &known, method);
    if (*rt || !strcmp(url, "/metrics"))
        return false;
    if (!known && !strcmp(url, "/healthz")) {
        o->status = 200;
        o->ctype = "text/plain; charset=utf-8";
        jp_strbuf_puts(&o->body, "ok\n");
    } else if (!known && !strncmp(url, "/api/", 5)) {
        srv_error(o, 404, "not_found", "no API endpoint %s", url);
    } else if (!known && (!strcmp(method, "GET") || !strcmp(method, "HEAD"))) {
        web_serve(s, url,
                  MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH),
                  o);
    } else {
        /* an API route with another method, or a page asked for with neither GET nor HEAD */
        srv_error(o, 405, "method_not_allowed", "%s is not allowed on %s", method, url);
    }
    return true;
}

/* Runs in a handler thread, on the copies in cs. */
static void http_dispatch(srv *s, conn_state *cs, srv_resp *o)
{
    srv_req r = {.s = s, .args = &cs->args, .method = cs->method, .url = cs->url, .tok = cs->tok};
    r.body = (const uint8_t *)cs->body.data;
    r.body_len = cs->body.len;
    r.content_encoding = cs->content_encoding;
    r.content_type = cs->content_type;
    r.accept = cs->accept;
    if (cs->rt) {
        cs->route = cs->rt->group;
        cs->rt->fn(&r, o);
    } else {
        http_metrics(&r, o);
    }
    if (o->status >= 500)
        srv_log("%s %s -> %d", cs->method, cs->url, o->status);
}

/* ---- the handler threads ----
 * libmicrohttpd's own pool threads each poll many connections, so a handler
 * that blocks (a batch waiting for its durable group commit, a query of up
 * to --query-budget, a ClickHouse round trip) would stall every other
 * connection of that polling thread. So the polling threads only move bytes:
 * a request with a complete body is suspended and queued here, a handler
 * thread runs it, and resumes the connection with the answer. */

struct srv_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    conn_state *head, *tail;
    bool stop;
    int nthreads;
    pthread_t *tids;
    srv *s;
};

static void *http_worker(void *arg)
{
    srv_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stop)
            pthread_cond_wait(&p->cv, &p->mu);
        if (!p->head)
            break; /* stopping, and the queue is drained */
        conn_state *cs = p->head;
        p->head = cs->next;
        if (!p->head)
            p->tail = NULL;
        pthread_mutex_unlock(&p->mu);
        http_dispatch(p->s, cs, &cs->resp);
        pthread_mutex_lock(&p->mu);
        cs->done = true;
        /* resumed under the lock: the pool outlives no suspended connection */
        MHD_resume_connection(cs->conn);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void http_enqueue(srv_pool *p, conn_state *cs)
{
    pthread_mutex_lock(&p->mu);
    cs->next = NULL;
    if (p->tail)
        p->tail->next = cs;
    else
        p->head = cs;
    p->tail = cs;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static int http_ncores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

static srv_pool *http_pool_start(srv *s)
{
    srv_pool *p = jp_xcalloc(1, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->s = s;
    p->nthreads = s->cfg.workers > 0 ? s->cfg.workers : 4 * http_ncores();
    p->tids = jp_xcalloc((size_t)p->nthreads, sizeof *p->tids);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1024 * 1024);
    for (int i = 0; i < p->nthreads; i++)
        if (pthread_create(&p->tids[i], &attr, http_worker, p) != 0) {
            p->nthreads = i; /* fewer threads, still correct */
            break;
        }
    pthread_attr_destroy(&attr);
    return p;
}

/* Finishes the queued requests, then joins the threads. */
static void http_pool_stop(srv_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->tids[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->tids);
    free(p);
}

static conn_state *http_new_state(srv *s, const char *uri)
{
    conn_state *cs = jp_xcalloc(1, sizeof *cs);
    jp_strbuf_init(&cs->body, s->cfg.max_body);
    cs->t0 = jp_time_mono_ns();
    cs->route = MRT_OTHER;
    const char *qm = uri ? strchr(uri, '?') : NULL;
    if (qm)
        cs->query = jp_xstrdup(qm + 1);
    return cs;
}

/* libmicrohttpd's URI log callback: it sees the request line's URI as
 * received, before any decoding, so the query string is parsed here by
 * api_query.c (the one parser, also fuzzed) rather than by libmicrohttpd. Its
 * result is the request's state (*con_cls); http_on_completed frees it. */
static void *http_on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)c;
    return http_new_state(cls, uri);
}

/* Splits and decodes the query string of a request for a handler; false
 * with a 400 answer in o when it is malformed. */
static bool http_parse_query(conn_state *cs, srv_resp *o)
{
    jp_error e;
    jp_error_init(&e);
    const char *q = cs->query ? cs->query : "";
    if (api_args_parse(q, strlen(q), &cs->args, &e) == JP_OK)
        return true;
    srv_error(o, 400, "malformed", "%s", e.msg);
    return false;
}

static enum MHD_Result http_on_request(void *cls, struct MHD_Connection *c, const char *url,
                                       const char *method, const char *version, const char *upload,
                                       size_t *upload_size, void **con_cls)
{
    srv *s = cls;
    conn_state *cs = *con_cls;
    (void)version;
    if (!cs || !cs->started) {
        if (!cs)
            cs = http_new_state(s, NULL);
        cs->started = true;
        *con_cls = cs;
        /* refuse a declared oversize body before reading any of it */
        const char *cl =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->cfg.max_body) {
            srv_resp o = {.status = 413};
            jp_strbuf_init(&o.body, 0);
            srv_error(&o, 413, "too_large", "body of %s bytes exceeds the limit of %zu bytes", cl,
                      s->cfg.max_body);
            cs->route = MRT_INGEST;
            metrics_ingest_count(&s->m, MI_REJ_TOO_LARGE);
            return http_send(c, cs, &o, false);
        }
        return MHD_YES;
    }
    if (cs->answered) {
        *upload_size = 0; /* discard the rest of a refused body */
        return MHD_YES;
    }
    if (*upload_size) {
        if (!cs->too_large && jp_strbuf_append(&cs->body, upload, *upload_size) != JP_OK)
            cs->too_large = true;
        *upload_size = 0;
        return MHD_YES;
    }
    if (cs->done) { /* resumed by a handler thread: its answer */
        enum MHD_Result rc = http_send(c, cs, &cs->resp, !strcmp(method, "HEAD"));
        jp_strbuf_cleanup(&cs->resp.body);
        return rc;
    }
    srv_resp o = {.status = 500};
    jp_strbuf_init(&o.body, 0);
    const struct route *rt = NULL;
    if (cs->too_large) {
        srv_error(&o, 413, "too_large", "body exceeds the limit of %zu bytes", s->cfg.max_body);
        cs->route = MRT_INGEST;
        metrics_ingest_count(&s->m, MI_REJ_TOO_LARGE);
    } else if (http_inline(s, c, url, method, &o, &rt)) {
        /* answered in o */
    } else if (!http_parse_query(cs, &o)) {
        if (rt)
            cs->route = rt->group; /* a malformed query string: 400, counted on its route */
    } else {
        jp_strbuf_cleanup(&o.body);
        cs->conn = c;
        cs->rt = rt;
        cs->url = jp_xstrdup(url);
        cs->method = jp_xstrdup(method);
        const char *ce =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_ENCODING);
        cs->content_encoding = ce ? jp_xstrdup(ce) : NULL;
        const char *ct =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        cs->content_type = ct ? jp_xstrdup(ct) : NULL;
        const char *ac = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
        cs->accept = ac ? jp_xstrdup(ac) : NULL;
        cs->tok = http_token(s, c);
        cs->resp.status = 500;
        jp_strbuf_init(&cs->resp.body, 0);
        cs->queued = true;
        MHD_suspend_connection(c);
        http_enqueue(s->pool, cs);
        return MHD_YES;
    }
    enum MHD_Result rc = http_send(c, cs, &o, !strcmp(method, "HEAD"));
    jp_strbuf_cleanup(&o.body);
    return rc;
}

/* Per-request state lives until here, whatever happened to the request. */
static void http_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
    srv *s = cls;
    conn_state *cs = *con_cls;
    (void)c;
    (void)toe;
    if (!cs)
        return;
    if (cs->started) /* not a request libmicrohttpd refused before the handler saw it */
        metrics_request_done(&s->m, cs->route, cs->status, jp_time_mono_ns() - cs->t0);
    jp_strbuf_cleanup(&cs->body);
    jp_strbuf_cleanup(&cs->resp.body); /* idempotent; empty unless never sent */
    api_args_free(&cs->args);
    free(cs->query);
    free(cs->url);
    free(cs->method);
    free(cs->content_encoding);
    free(cs->content_type);
    free(cs->accept);
    free(cs);
    *con_cls = NULL;
}

/* ---- the daemon ---- */

static char *http_read_file(const char *path, jp_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        jp_error_set(err, JP_ERR_IO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    jp_strbuf b;
    jp_strbuf_init(&b, 1u << 20);
    char chunk[4096];
    size_t n;
    bool ok = true;
    while (ok && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ok = jp_strbuf_append(&b, chunk, n) == JP_OK;
    fclose(f);
    if (!ok) {
        jp_strbuf_cleanup(&b);
        jp_error_set(err, JP_ERR_LIMIT, "%s: larger than 1 MiB", path);
        return NULL;
    }
    return jp_strbuf_take(&b);
}

/* "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT" (loopback). */
static jp_err http_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len,
                                jp_error *err)
{
    memset(ss, 0, sizeof *ss);
    const char *colon = strrchr(s, ':');
    if (!colon)
        return jp_error_set(err, JP_ERR_USAGE, "--listen %s: expected ADDR:PORT", s);
    char *end;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || end == colon + 1 || port > 65535)
        return jp_error_set(err, JP_ERR_USAGE, "--listen %s: bad port", s);
    char host[128];
    size_t hl = (size_t)(colon - s);
    if (hl >= sizeof host)
        return jp_error_set(err, JP_ERR_USAGE, "--listen %s: address too long", s);
    memcpy(host, s, hl);
    host[hl] = '\0';
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        host[hl - 1] = '\0';
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
            return jp_error_set(err, JP_ERR_USAGE, "--listen %s: bad IPv6 address", s);
        *len = sizeof *a6;
        return JP_OK;
    }
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    if (!hl)
        memcpy(host, "127.0.0.1", 10);
    if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
        return jp_error_set(err, JP_ERR_USAGE, "--listen %s: bad IPv4 address", s);
    *len = sizeof *a4;
    return JP_OK;
}

bool srv_listen_is_loopback(const char *listen)
{
    struct sockaddr_storage ss;
    socklen_t len;
    if (http_parse_listen(listen, &ss, &len, NULL) != JP_OK)
        return false;
    if (ss.ss_family == AF_INET)
        return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
    return IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
}

static void http_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];
    (void)cls;
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && line[n - 1] == '\n')
        line[--n] = '\0';
    srv_log("http: %s", line);
}

jp_err srv_http_start(srv *s, void **daemon, jp_error *err)
{
    struct sockaddr_storage ss;
    socklen_t slen;
    jp_err rc = http_parse_listen(s->cfg.listen, &ss, &slen, err);
    if (rc)
        return rc;
    /* libmicrohttpd's pool of polling threads moves the bytes; handlers run
     * on our own threads (srv_pool above) with the connection suspended, so
     * idle keep-alive connections cost no thread and a blocked handler holds
     * up no other connection. */
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    char *cert = NULL, *key = NULL;
    if (s->cfg.tls_cert || s->cfg.tls_key) {
        if (!s->cfg.tls_cert || !s->cfg.tls_key)
            return jp_error_set(err, JP_ERR_USAGE, "--tls-cert and --tls-key go together");
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
            return jp_error_set(err, JP_ERR_UNSUPPORTED, "this libmicrohttpd has no TLS support");
        if (!(cert = http_read_file(s->cfg.tls_cert, err)) ||
            !(key = http_read_file(s->cfg.tls_key, err))) {
            free(cert);
            return err->code;
        }
        flags |= MHD_USE_TLS;
    }
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)http_mhd_log, NULL},
        {MHD_OPTION_SOCK_ADDR, 0, &ss},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)http_on_completed, s},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)http_on_uri, s},
        {MHD_OPTION_CONNECTION_TIMEOUT, 60, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)s->cfg.threads, NULL},
        {MHD_OPTION_THREAD_POOL_SIZE,
         (intptr_t)(s->cfg.io_threads > 0 ? s->cfg.io_threads : http_ncores()), NULL},
        {MHD_OPTION_THREAD_STACK_SIZE, 256 * 1024, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, 256 * 1024, NULL},
        {cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, cert},
        {cert ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, key},
        {MHD_OPTION_END, 0, NULL},
    };
    s->pool = http_pool_start(s);
    struct MHD_Daemon *d = MHD_start_daemon(flags, 0, NULL, NULL, http_on_request, s,
                                            MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    /* MHD may keep pointing at the PEM text: it lives until srv_http_stop */
    s->tls_pem[0] = cert;
    s->tls_pem[1] = key;
    if (!d) {
        http_pool_stop(s->pool);
        s->pool = NULL;
        return jp_error_set(err, JP_ERR_IO, "cannot listen on %s (in use, or not allowed?)",
                            s->cfg.listen);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : 0;
    *daemon = d;
    return JP_OK;
}

/* No new connections; the queued requests are answered and their
 * connections resumed (libmicrohttpd must not stop with suspended ones). */
void srv_http_stop(srv *s, void *daemon)
{
    /* the listening socket is ours to close once the daemon is stopped */
    MHD_socket lfd = daemon ? MHD_quiesce_daemon(daemon) : MHD_INVALID_SOCKET;
    http_pool_stop(s->pool);
    s->pool = NULL;
    if (daemon)
        MHD_stop_daemon(daemon);
    if (lfd != MHD_INVALID_SOCKET)
        close(lfd);
    for (int i = 0; i < 2; i++) {
        if (s->tls_pem[i])
            memset(s->tls_pem[i], 0, strlen(s->tls_pem[i]));
        free(s->tls_pem[i]);
        s->tls_pem[i] = NULL;
    }
}
