/* ingest.c - POST /api/v1/ingest (agent batches) and /api/v1/ingest/jfr
 * (a raw JFR recording parsed here). Validation first, then one durable
 * store write; the answer tells the agent whether a retry can help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jfr/jfr.h"
#include "server/server.h"
#include "wire/zstd_frame.h"

static bool ingest_is_zstd(const srv_req *r)
{
    return r->content_encoding && !strcasecmp(r->content_encoding, "zstd");
}

/* The body after Content-Encoding: *out is r->body or a heap copy (*owned). */
static bool ingest_body(srv_req *r, srv_resp *o, const uint8_t **out, size_t *len, uint8_t **owned)
{
    *owned = NULL;
    *out = r->body ? r->body : (const uint8_t *)"";
    *len = r->body_len;
    if (r->content_encoding && *r->content_encoding &&
        strcasecmp(r->content_encoding, "identity") && !ingest_is_zstd(r)) {
        srv_error(o, 415, "unsupported",
                  "Content-Encoding '%.40s' is not supported (zstd, identity)",
                  r->content_encoding);
        metrics_ingest_count(&r->s->m, MI_REJ_UNSUPPORTED);
        return false;
    }
    if (!ingest_is_zstd(r))
        return true;
    jp_error e;
    jp_error_init(&e);
    jp_err rc =
        jp_zstd_decompress(r->body, r->body_len, r->s->cfg.max_decompressed, owned, len, &e);
    if (rc == JP_ERR_LIMIT) {
        srv_error(o, 413, "too_large", "decompressed body exceeds the limit of %zu bytes",
                  r->s->cfg.max_decompressed);
        metrics_ingest_count(&r->s->m, MI_REJ_TOO_LARGE);
        return false;
    }
    if (rc) {
        srv_error(o, 400, "malformed", "zstd body: %s", e.msg);
        metrics_ingest_count(&r->s->m, MI_REJ_MALFORMED);
        return false;
    }
    *out = *owned;
    return true;
}

/* Every namespace the batch writes to must be in the token's scope. */
static const char *ingest_out_of_scope(const srv_req *r, const jp_batch *b)
{
    if (r->s->cfg.insecure_no_auth || auth_all_namespaces(r->tok))
        return NULL;
    for (size_t i = 0; i < b->nwindows; i++)
        if (!auth_in_scope(r->tok, b->windows[i].target.ns))
            return b->windows[i].target.ns;
    for (size_t i = 0; i < b->nstatuses; i++)
        if (!auth_in_scope(r->tok, b->statuses[i].target.ns))
            return b->statuses[i].target.ns;
    for (size_t i = 0; i < b->nsnapshots; i++)
        if (!auth_in_scope(r->tok, b->snapshots[i].target.ns))
            return b->snapshots[i].target.ns;
    for (size_t i = 0; i < b->ndeadlocks; i++)
        if (!auth_in_scope(r->tok, b->deadlocks[i].target.ns))
            return b->deadlocks[i].target.ns;
    for (size_t i = 0; i < b->ngcs; i++)
        if (!auth_in_scope(r->tok, b->gcs[i].target.ns))
            return b->gcs[i].target.ns;
    return NULL;
}

static void ingest_store_error(srv *s, srv_resp *o, jp_err rc, const jp_error *e)
{
    if (rc == JP_ERR_TIMEOUT) {
        srv_error(o, 429, "overload", "store busy, retry later: %s", e->msg);
        metrics_ingest_count(&s->m, MI_REJ_OVERLOAD);
    } else if (rc == JP_ERR_NOSPACE) {
        /* retryable: nothing of the batch is kept, space may come back */
        srv_error(o, 503, "unavailable", "the store's disk is full, retry later: %s", e->msg);
        metrics_ingest_count(&s->m, MI_REJ_UNAVAILABLE);
    } else if (rc == JP_ERR_IO || rc == JP_ERR_PROTOCOL) {
        srv_error(o, 503, "unavailable", "store unavailable, retry later: %s", e->msg);
        metrics_ingest_count(&s->m, MI_REJ_UNAVAILABLE);
    } else if (rc == JP_ERR_LIMIT) {
        srv_error(o, 413, "too_large", "%s", e->msg);
        metrics_ingest_count(&s->m, MI_REJ_TOO_LARGE);
    } else {
        srv_error(o, 500, "internal", "store: %s", e->msg);
        metrics_ingest_count(&s->m, MI_REJ_INTERNAL);
    }
}

/* Refuses windows outside the retention or starting in the future (a
 * collector's clock ahead by more than --max-clock-skew: stored, such a
 * window would sit where no query looks and survive retention), writes the
 * rest durably, and answers with what happened to each part; "code" in each
 * refusal is "retention" or "future" (the agent counts them by it). */
static void ingest_write(srv_req *r, srv_resp *o, const jp_batch *b)
{
    srv *s = r->s;
    int64_t now = store_now_ns();
    bool *skip = jp_xcalloc(b->nwindows + 1, sizeof *skip);
    jp_strbuf refused;
    jp_strbuf_init(&refused, 0);
    uint64_t nold = 0, nfuture = 0;
    for (size_t i = 0; i < b->nwindows; i++) {
        const char *why;
        const char *code = store_window_refusal(b->windows[i].start_ns, now, s->cfg.retention_days,
                                                s->cfg.max_clock_skew_ns, &why);
        if (!code)
            continue;
        if (code[0] == 'f')
            nfuture++;
        else
            nold++;
        skip[i] = true;
        if (refused.len < 64 * 1024)
            jp_strbuf_printf(&refused, "%s{\"window\":%zu,\"code\":\"%s\",\"reason\":\"%s\"}",
                             refused.len ? "," : "", i, code, why);
    }
    if (nold)
        metrics_refused_count(&s->m, MR_RETENTION, nold);
    if (nfuture)
        metrics_refused_count(&s->m, MR_FUTURE, nfuture);
    store_write_opts opt = {.skip_windows = skip, .body_bytes = r->body_len};
    store_write_result res;
    memset(&res, 0, sizeof res);
    jp_error e;
    jp_error_init(&e);
    jp_err rc = s->st->ops->write_batch(s->st, b, &opt, &res, &e);
    if (rc) {
        ingest_store_error(s, o, rc, &e);
    } else {
        metrics_ingest_count(&s->m, res.duplicate ? MI_DUPLICATE : MI_ACCEPTED);
        if (!res.duplicate)
            metrics_rows_count(&s->m, res.windows, res.stack_rows, r->body_len);
        o->status = 200;
        o->ctype = "application/json";
        jp_strbuf_puts(&o->body, "{\"status\":");
        jw_cstr(&o->body, res.duplicate ? "duplicate" : "accepted");
        jp_strbuf_puts(&o->body, ",\"batch_id\":");
        jw_cstr(&o->body, b->id);
        jp_strbuf_printf(
            &o->body,
            ",\"windows\":%llu,\"stack_rows\":%llu,\"new_stacks\":%llu,\"documents\":%llu,"
            "\"documents_refused\":%llu,\"windows_refused\":[%s]}\n",
            (unsigned long long)res.windows, (unsigned long long)res.stack_rows,
            (unsigned long long)res.new_stacks, (unsigned long long)res.docs,
            (unsigned long long)res.docs_refused, jp_strbuf_str(&refused));
    }
    jp_strbuf_cleanup(&refused);
    free(skip);
}

void ingest_batch(srv_req *r, srv_resp *o)
{
    srv *s = r->s;
    if (!srv_authorize(r, o, AUTH_INGEST, NULL)) {
        metrics_ingest_count(&s->m, o->status == 401 ? MI_REJ_UNAUTHORIZED : MI_REJ_FORBIDDEN);
        return;
    }
    const uint8_t *body;
    size_t len;
    uint8_t *owned;
    if (!ingest_body(r, o, &body, &len, &owned))
        return;
    jp_batch b;
    jp_batch_init(&b);
    jp_error e;
    jp_error_init(&e);
    jp_err rc = jp_batch_json_decode((const char *)body, len, &s->cfg.limits, &b, &e);
    const char *ns;
    if (rc == JP_ERR_LIMIT) {
        srv_error(o, 413, "too_large", "%s", e.msg);
        metrics_ingest_count(&s->m, MI_REJ_TOO_LARGE);
        s->st->ops->note_rejected(s->st, b.collector, e.msg, store_now_ns());
    } else if (rc) {
        srv_error(o, 400, "malformed", "%s", e.msg);
        metrics_ingest_count(&s->m, MI_REJ_MALFORMED);
        s->st->ops->note_rejected(s->st, b.collector, e.msg, store_now_ns());
    } else if ((ns = ingest_out_of_scope(r, &b))) {
        srv_error(o, 403, "forbidden", "batch writes to namespace '%s' outside the token's scope",
                  ns);
        metrics_ingest_count(&s->m, MI_REJ_FORBIDDEN);
    } else {
        ingest_write(r, o, &b);
    }
    jp_batch_cleanup(&b);
    free(owned);
}

/* A stable id for an uploaded recording, so the same file twice is a duplicate. */
static void ingest_jfr_id(const uint8_t *data, size_t len, const char *ns, const char *svc,
                          const char *pod, char *out, size_t outlen)
{
    uint64_t h = jp_hash_bytes(data, len);
    h = jp_hash_combine(h, jp_hash_bytes(ns, strlen(ns)));
    h = jp_hash_combine(h, jp_hash_bytes(svc, strlen(svc)));
    h = jp_hash_combine(h, jp_hash_bytes(pod, strlen(pod)));
    snprintf(out, outlen, "jfr-%016llx-%zu", (unsigned long long)h, len);
}

static bool ingest_jfr_args(srv_req *r, srv_resp *o, const char **ns, const char **svc,
                            const char **pod)
{
    *ns = srv_arg(r, "namespace");
    *svc = srv_arg(r, "service");
    *pod = srv_arg(r, "pod");
    if (!*pod || !**pod)
        *pod = "upload";
    const char *vals[3] = {*ns, *svc, *pod};
    const char *names[3] = {"namespace", "service", "pod"};
    for (int i = 0; i < 3; i++) {
        if (!vals[i] || !*vals[i]) {
            srv_error(o, 400, "malformed", "query parameter '%s' is required", names[i]);
            return false;
        }
        if (strlen(vals[i]) > 253) {
            srv_error(o, 400, "malformed", "query parameter '%s' is longer than 253 bytes",
                      names[i]);
            return false;
        }
        for (const char *p = vals[i]; *p; p++)
            if ((unsigned char)*p < 0x20) {
                srv_error(o, 400, "malformed", "query parameter '%s' has control characters",
                          names[i]);
                return false;
            }
    }
    return true;
}

void ingest_jfr(srv_req *r, srv_resp *o)
{
    srv *s = r->s;
    const char *ns, *svc, *pod;
    if (!ingest_jfr_args(r, o, &ns, &svc, &pod)) {
        metrics_ingest_count(&s->m, MI_REJ_MALFORMED);
        return;
    }
    if (!srv_authorize(r, o, AUTH_INGEST, ns)) {
        metrics_ingest_count(&s->m, o->status == 401 ? MI_REJ_UNAUTHORIZED : MI_REJ_FORBIDDEN);
        return;
    }
    const uint8_t *body;
    size_t len;
    uint8_t *owned;
    if (!ingest_body(r, o, &body, &len, &owned))
        return;
    jp_profile *p = jp_profile_new();
    jfr_options opt;
    jfr_options_init(&opt);
    opt.threads = true;
    jfr_report rep;
    jfr_report_init(&rep);
    jp_err rc = jfr_read_buffer(body, len, "upload.jfr", &opt, p, &rep);
    jp_batch b;
    jp_batch_init(&b);
    if (rc && (!rep.partial || rep.events_used == 0)) {
        srv_error(o, 400, "malformed", "not a readable JFR recording: %s", rep.error.msg);
        metrics_ingest_count(&s->m, MI_REJ_MALFORMED);
        goto out;
    }
    char id[64];
    ingest_jfr_id(body, len, ns, svc, pod, id, sizeof id);
    b.id = jp_xstrdup(id);
    b.collector = jp_xstrdup("jfr-upload");
    b.sent_ns = store_now_ns();
    jp_batch_target t = {.ns = (char *)ns, .service = (char *)svc, .pod = (char *)pod};
    int64_t start = rep.start_ns ? rep.start_ns : p->start_ns;
    int64_t end = rep.end_ns ? rep.end_ns : p->end_ns;
    if (!start)
        start = end = store_now_ns();
    jp_batch_add_profile(&b, p, &t, start, end < start ? start : end);
    if (!b.nwindows) {
        srv_error(o, 400, "malformed",
                  "the recording has no profile events (cpu, wall, alloc, "
                  "lock, park)");
        metrics_ingest_count(&s->m, MI_REJ_MALFORMED);
        goto out;
    }
    ingest_write(r, o, &b);
out:
    jp_batch_cleanup(&b);
    jp_profile_free(p);
    free(owned);
}
