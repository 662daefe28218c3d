/* ingest_otlp.c - POST /v1development/profiles: OpenTelemetry profiles over
 * OTLP/HTTP (protobuf, gzip or not), as an OpenTelemetry collector, the
 * OpenTelemetry eBPF profiler, async-profiler or Pyroscope's Java agent send
 * them. The message becomes one batch: per target (wire/otlp_decode.h says
 * how attributes name it) one window per kind and a status saying the data
 * was pushed over OTLP, written through the steps of ingest.h.
 *
 * The answer is OTLP's ExportProfilesServiceResponse (protobuf; windows out
 * of the retention are its partial_success) unless the client accepts JSON,
 * then jprof's ingest answer. Errors are jprof's JSON errors, with OTLP's
 * status codes: 400 and 413 are final, 429 and 503 worth a retry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "server/ingest.h"
#include "wire/otlp_decode.h"
#include "wire/protobuf.h"

/* ExportProfilesServiceResponse.partial_success and its fields */
enum { OTLP_RESP_PARTIAL = 1, OTLP_PARTIAL_REJECTED = 1, OTLP_PARTIAL_MESSAGE = 2 };

static void otlp_answer(srv_req *r, srv_resp *o, const jp_batch *b, const ingest_result *ir)
{
    if (r->accept && strstr(r->accept, "json")) { /* a person with curl */
        ingest_answer_json(r, o, b, ir);
        return;
    }
    o->status = 200;
    o->ctype = "application/x-protobuf";
    jp_strbuf_reset(&o->body);
    if (!ir->nrefused)
        return; /* an empty response: everything was taken */
    jp_strbuf part;
    jp_strbuf_init(&part, 0);
    char msg[200];
    int n = snprintf(msg, sizeof msg,
                     "%llu of %zu profile windows refused: older than the retention or in the "
                     "future (batch %s)",
                     (unsigned long long)ir->nrefused, b->nwindows, b->id);
    jp_pb_put_uint(&part, OTLP_PARTIAL_REJECTED, ir->nrefused);
    jp_pb_put_bytes(&part, OTLP_PARTIAL_MESSAGE, msg, n > 0 ? (size_t)n : 0);
    jp_pb_put_message(&o->body, OTLP_RESP_PARTIAL, &part);
    jp_strbuf_cleanup(&part);
}

/* Optional ?namespace=, ?service=, ?pod=: what names a target whose
 * attributes do not. */
static bool otlp_defaults(srv_req *r, srv_resp *o, jp_batch_target *df)
{
    const char *ns, *svc, *pod;
    if (!ingest_name_arg(r, o, "namespace", &ns) || !ingest_name_arg(r, o, "service", &svc) ||
        !ingest_name_arg(r, o, "pod", &pod))
        return false;
    df->ns = (char *)ns;
    df->service = (char *)svc;
    df->pod = (char *)pod;
    return true;
}

/* The request must be OTLP/HTTP's binary protobuf (OTLP/JSON is not read). */
static bool otlp_content_type(srv_req *r, srv_resp *o)
{
    const char *ct = r->content_type;
    if (!ct || !*ct || !strncasecmp(ct, "application/x-protobuf", 22) ||
        !strncasecmp(ct, "application/octet-stream", 24))
        return true;
    srv_error(o, 415, "unsupported",
              "Content-Type '%.60s' is not supported: send OTLP/HTTP protobuf "
              "(application/x-protobuf); OTLP/JSON is not read",
              ct);
    metrics_ingest_count(&r->s->m, MI_REJ_UNSUPPORTED);
    return false;
}

/* The batch of a decoded message: per target its windows and a status. */
static void otlp_batch(const jp_otlp_result *res, jp_batch *b)
{
    char msg[200];
    snprintf(msg, sizeof msg, "OpenTelemetry profiles pushed by %s",
             res->scope ? res->scope : "an OTLP exporter");
    int64_t now = store_now_ns();
    for (size_t i = 0; i < res->ntargets; i++) {
        const jp_otlp_target *t = &res->targets[i];
        int64_t start = t->start_ns ? t->start_ns : now;
        int64_t end = t->end_ns > start ? t->end_ns : start;
        if (jp_batch_add_profile(b, t->profile, &t->target, start, end))
            ingest_status_pushed(b, &t->target, "otlp", msg);
    }
}

void ingest_otlp(srv_req *r, srv_resp *o)
{
    jp_batch_target df;
    memset(&df, 0, sizeof df);
    if (!ingest_authorize(r, o, NULL) || !otlp_content_type(r, o))
        return;
    if (!otlp_defaults(r, o, &df))
        return;
    const uint8_t *body;
    size_t len;
    uint8_t *owned;
    if (!ingest_body(r, o, &body, &len, &owned))
        return;
    jp_otlp_limits lim;
    jp_otlp_limits_default(&lim, &r->s->cfg.limits);
    jp_otlp_result res;
    jp_otlp_result_init(&res);
    jp_error e;
    jp_error_init(&e);
    jp_batch b;
    jp_batch_init(&b);
    jp_err rc = jp_otlp_decode(body, len, &lim, &df, &res, &e);
    if (rc) {
        ingest_refuse(r, o, rc, e.msg, "otlp");
        goto out;
    }
    char id[64];
    const char *parts[3] = {df.ns, df.service, df.pod};
    ingest_id("otlp", body, len, parts, 3, id, sizeof id);
    b.id = jp_xstrdup(id);
    b.collector = jp_xstrdup("otlp");
    b.collector_version = res.scope ? jp_xstrdup(res.scope) : NULL;
    b.sent_ns = store_now_ns();
    otlp_batch(&res, &b);
    if (b.nwindows > r->s->cfg.limits.max_windows) {
        snprintf(e.msg, sizeof e.msg, "OTLP profiles: %zu windows (targets x kinds), more than %zu",
                 b.nwindows, r->s->cfg.limits.max_windows);
        ingest_refuse(r, o, JP_ERR_LIMIT, e.msg, "otlp");
    } else if (ingest_in_scope(r, o, &b)) {
        ingest_write(r, o, &b, otlp_answer);
    }
out:
    jp_batch_cleanup(&b);
    jp_otlp_result_cleanup(&res);
    free(owned);
}
