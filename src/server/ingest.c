/* ingest.c - POST /api/v1/ingest (agent batches) and /api/v1/ingest/jfr
 * (a raw JFR recording parsed here), and the steps every ingest route shares
 * (ingest.h). Validation first, then one durable store write; the answer
 * tells the sender whether a retry can help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jfr/jfr.h"
#include "server/ingest.h"
#include "wire/gzip.h"
#include "wire/zstd_frame.h"

static bool ingest_encoding_is(const srv_req *r, const char *name)
{
    return r->content_encoding && !strcasecmp(r->content_encoding, name);
}

bool ingest_body(srv_req *r, srv_resp *o, const uint8_t **out, size_t *len, uint8_t **owned)
{
    *owned = NULL;
    *out = r->body ? r->body : (const uint8_t *)"";
    *len = r->body_len;
    bool zstd = ingest_encoding_is(r, "zstd"), gzip = ingest_encoding_is(r, "gzip");
    if (r->content_encoding && *r->content_encoding && !ingest_encoding_is(r, "identity") &&
        !zstd && !gzip) {
        srv_error(o, 415, "unsupported",
                  "Content-Encoding '%.40s' is not supported (zstd, gzip, identity)",
                  r->content_encoding);
        metrics_ingest_count(&r->s->m, MI_REJ_UNSUPPORTED);
        return false;
    }
    if (!zstd && !gzip)
        return true;
    jp_error e;
    jp_error_init(&e);
    size_t cap = r->s->cfg.max_decompressed;
    jp_err rc = zstd ? jp_zstd_decompress(r->body, r->body_len, cap, owned, len, &e)
                     : jp_gzip_decompress(r->body, r->body_len, cap, owned, len, &e);
    if (rc == JP_ERR_LIMIT) {
        srv_error(o, 413, "too_large", "decompressed body exceeds the limit of %zu bytes", cap);
        metrics_ingest_count(&r->s->m, MI_REJ_TOO_LARGE);
        return false;
    }
    if (rc) {
        srv_error(o, 400, "malformed", "%s body: %s", zstd ? "zstd" : "gzip", e.msg);
        metrics_ingest_count(&r->s->m, MI_REJ_MALFORMED);
        return false;
    }
    *out = *owned;
    return true;
}

bool ingest_authorize(srv_req *r, srv_resp *o, const char *ns)
{
    if (srv_authorize(r, o, AUTH_INGEST, ns))
        return true;
    metrics_ingest_count(&r->s->m, o->status == 401 ? MI_REJ_UNAUTHORIZED : MI_REJ_FORBIDDEN);
    return false;
}

void ingest_refuse(srv_req *r, srv_resp *o, jp_err rc, const char *msg, const char *collector)
{
    srv *s = r->s;
    if (rc == JP_ERR_LIMIT) {
        srv_error(o, 413, "too_large", "%s", msg);
        metrics_ingest_count(&s->m, MI_REJ_TOO_LARGE);
    } else {
        srv_error(o, 400, rc == JP_ERR_UNSUPPORTED ? "unsupported" : "malformed", "%s", msg);
        metrics_ingest_count(&s->m, MI_REJ_MALFORMED);
    }
    s->st->ops->note_rejected(s->st, collector, msg, store_now_ns());
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

bool ingest_in_scope(srv_req *r, srv_resp *o, const jp_batch *b)
{
    const char *ns = ingest_out_of_scope(r, b);
    if (!ns)
        return true;
    srv_error(o, 403, "forbidden", "batch writes to namespace '%s' outside the token's scope", ns);
    metrics_ingest_count(&r->s->m, MI_REJ_FORBIDDEN);
    return false;
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
void ingest_answer_json(srv_req *r, srv_resp *o, const jp_batch *b, const ingest_result *ir)
{
    (void)r;
    const store_write_result *res = ir->res;
    o->status = 200;
    o->ctype = "application/json";
    jp_strbuf_puts(&o->body, "{\"status\":");
    jw_cstr(&o->body, res->duplicate ? "duplicate" : "accepted");
    jp_strbuf_puts(&o->body, ",\"batch_id\":");
    jw_cstr(&o->body, b->id);
    jp_strbuf_printf(&o->body,
                     ",\"windows\":%llu,\"stack_rows\":%llu,\"new_stacks\":%llu,\"documents\":%llu,"
                     "\"documents_refused\":%llu,\"windows_refused\":[%s]}\n",
                     (unsigned long long)res->windows, (unsigned long long)res->stack_rows,
                     (unsigned long long)res->new_stacks, (unsigned long long)res->docs,
                     (unsigned long long)res->docs_refused, ir->refused_json);
}

/* The store holds what it encoded: the batch's bulk goes while the write
 * waits (the answer needs only its id and figures). */
static void ingest_shed(void *ctx)
{
    jp_batch_shed(ctx);
}

void ingest_write(srv_req *r, srv_resp *o, jp_batch *b, ingest_answer_fn answer)
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
    store_write_opts opt = {
        .skip_windows = skip, .body_bytes = r->body_len, .release = ingest_shed, .release_ctx = b};
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
        ingest_result ir = {&res, jp_strbuf_str(&refused), nold + nfuture};
        (answer ? answer : ingest_answer_json)(r, o, b, &ir);
    }
    jp_strbuf_cleanup(&refused);
    free(skip);
}

void ingest_id(const char *prefix, const uint8_t *data, size_t len, const char *const *parts,
               size_t nparts, char *out, size_t outlen)
{
    uint64_t h = jp_hash_bytes(data, len);
    for (size_t i = 0; i < nparts; i++)
        h = jp_hash_combine(
            h, jp_hash_bytes(parts[i] ? parts[i] : "", parts[i] ? strlen(parts[i]) : 0));
    snprintf(out, outlen, "%s-%016llx-%zu", prefix, (unsigned long long)h, len);
}

void ingest_status_pushed(jp_batch *b, const jp_batch_target *t, const char *engine,
                          const char *message)
{
    b->statuses = jp_xgrow(b->statuses, &b->statuses_cap, b->nstatuses + 1, sizeof *b->statuses);
    jp_batch_status *st = &b->statuses[b->nstatuses++];
    memset(st, 0, sizeof *st);
    jp_batch_target_copy(&st->target, t);
    st->time_ns = store_now_ns();
    st->state = jp_xstrdup("active");
    st->mode = jp_xstrdup("pushed");
    st->engine = jp_xstrdup(engine);
    st->message = message ? jp_xstrdup(message) : NULL;
}

void ingest_batch(srv_req *r, srv_resp *o)
{
    if (!ingest_authorize(r, o, NULL))
        return;
    const uint8_t *body;
    size_t len;
    uint8_t *owned;
    if (!ingest_body(r, o, &body, &len, &owned))
        return;
    jp_batch b;
    jp_batch_init(&b);
    jp_error e;
    jp_error_init(&e);
    jp_err rc = jp_batch_json_decode((const char *)body, len, &r->s->cfg.limits, &b, &e);
    /* the batch owns copies of what it needs: the decompressed text (a few
     * MB) is not kept while the write waits for its group */
    free(owned);
    if (rc)
        ingest_refuse(r, o, rc == JP_ERR_LIMIT ? rc : JP_ERR_FORMAT, e.msg, b.collector);
    else if (ingest_in_scope(r, o, &b))
        ingest_write(r, o, &b, NULL);
    jp_batch_cleanup(&b);
}

bool ingest_name_arg(srv_req *r, srv_resp *o, const char *key, const char **out)
{
    const char *v = srv_arg(r, key);
    *out = v && *v ? v : NULL;
    if (!*out)
        return true;
    const char *why = strlen(v) > 253 ? "is longer than 253 bytes" : NULL;
    for (const char *p = v; *p && !why; p++)
        if ((unsigned char)*p < 0x20)
            why = "has control characters";
    if (!why)
        return true;
    srv_error(o, 400, "malformed", "query parameter '%s' %s", key, why);
    metrics_ingest_count(&r->s->m, MI_REJ_MALFORMED);
    return false;
}

static bool ingest_jfr_args(srv_req *r, srv_resp *o, const char **ns, const char **svc,
                            const char **pod)
{
    if (!ingest_name_arg(r, o, "namespace", ns) || !ingest_name_arg(r, o, "service", svc) ||
        !ingest_name_arg(r, o, "pod", pod))
        return false;
    if (!*pod)
        *pod = "upload";
    const char *missing = !*ns ? "namespace" : !*svc ? "service" : NULL;
    if (!missing)
        return true;
    srv_error(o, 400, "malformed", "query parameter '%s' is required", missing);
    metrics_ingest_count(&r->s->m, MI_REJ_MALFORMED);
    return false;
}

bool ingest_read_jfr(srv_req *r, srv_resp *o, const uint8_t *data, size_t len,
                     const char *collector, jp_profile *p, int64_t *start, int64_t *end)
{
    jfr_options opt;
    jfr_options_init(&opt);
    opt.threads = true;
    opt.jobs = r->s->cfg.jfr_jobs > 0 ? r->s->cfg.jfr_jobs : 1;
    jfr_report rep;
    jfr_report_init(&rep);
    jp_err rc = jfr_read_buffer(data, len, "upload.jfr", &opt, p, &rep);
    if (rc && (!rep.partial || rep.events_used == 0)) {
        char msg[600];
        snprintf(msg, sizeof msg, "not a readable JFR recording: %s", rep.error.msg);
        ingest_refuse(r, o, JP_ERR_FORMAT, msg, collector);
        return false;
    }
    *start = rep.start_ns ? rep.start_ns : p->start_ns;
    *end = rep.end_ns ? rep.end_ns : p->end_ns;
    return true;
}

void ingest_jfr(srv_req *r, srv_resp *o)
{
    const char *ns, *svc, *pod;
    if (!ingest_jfr_args(r, o, &ns, &svc, &pod) || !ingest_authorize(r, o, ns))
        return;
    const uint8_t *body;
    size_t len;
    uint8_t *owned;
    if (!ingest_body(r, o, &body, &len, &owned))
        return;
    jp_profile *p = jp_profile_new();
    jp_batch b;
    jp_batch_init(&b);
    int64_t start, end;
    if (!ingest_read_jfr(r, o, body, len, "jfr-upload", p, &start, &end))
        goto out;
    char id[64];
    const char *parts[3] = {ns, svc, pod};
    ingest_id("jfr", body, len, parts, 3, id, sizeof id);
    free(owned); /* the recording is read: not kept while the write waits */
    owned = NULL;
    b.id = jp_xstrdup(id);
    b.collector = jp_xstrdup("jfr-upload");
    b.sent_ns = store_now_ns();
    jp_batch_target t = {.ns = (char *)ns, .service = (char *)svc, .pod = (char *)pod};
    if (!start)
        start = end = store_now_ns();
    jp_batch_add_profile(&b, p, &t, start, end < start ? start : end);
    if (!b.nwindows)
        ingest_refuse(r, o, JP_ERR_FORMAT,
                      "the recording has no profile events (cpu, wall, alloc, lock, park)",
                      "jfr-upload");
    else
        ingest_write(r, o, &b, NULL);
out:
    jp_batch_cleanup(&b);
    jp_profile_free(p);
    free(owned);
}
