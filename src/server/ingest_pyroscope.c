/* ingest_pyroscope.c - POST /ingest as Pyroscope servers take it, from
 * Pyroscope's Java agent (async-profiler inside) and its other agents:
 *   name=APP[.KIND]{k=v,...}  the series (wire/pyroscope.h: target, labels)
 *   from, until               the profile's range, UNIX seconds
 *   format=jfr                a JFR recording: a multipart/form-data body with
 *                             a `jfr` part (and an optional `labels` part),
 *                             or the recording as the body; parts may be gzipped
 *   format=pprof              a pprof profile (gzipped or not): the body, or a
 *                             multipart `profile` part
 *   sampleRate                Hz, the period of cpu/wall when the data has none
 *   spyName                   the agent ("javaspy"), named on the Status screen
 *   units, aggregationType    accepted, not needed (the data says)
 * jprof's auth in front: the token as the password or user of HTTP Basic (a
 * Pyroscope agent's server URL http://jprof:TOKEN@host:8480, or its basic-auth
 * settings), or a bearer token. One batch per request, written through the
 * steps of ingest.h; the answer is jprof's JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/xalloc.h"
#include "server/ingest.h"
#include "wire/gzip.h"
#include "wire/multipart.h"
#include "wire/pprof_decode.h"
#include "wire/pyroscope.h"

enum { PY_PARTS_MAX = 8 };

/* What the request says besides its body. */
typedef struct py_req {
    const char *name, *format, *spy;
    int64_t from_ns, until_ns; /* 0 when not given */
    int64_t period_ns;         /* from sampleRate, 0 when not given */
    jp_batch_target target;
    const char *kind_hint;
} py_req;

/* A UNIX time: seconds, or milliseconds, micro- or nanoseconds by size. */
static bool py_time(const char *v, int64_t *ns)
{
    char *end;
    unsigned long long t = strtoull(v, &end, 10);
    if (!*v || *end || t > 9000000000000000000ULL)
        return false;
    *ns = t < 100000000000ULL         ? (int64_t)t * 1000000000
          : t < 100000000000000ULL    ? (int64_t)t * 1000000
          : t < 100000000000000000ULL ? (int64_t)t * 1000
                                      : (int64_t)t;
    return true;
}

static bool py_args(srv_req *r, srv_resp *o, py_req *q)
{
    memset(q, 0, sizeof *q);
    q->name = srv_arg(r, "name");
    q->format = srv_arg(r, "format");
    q->spy = srv_arg(r, "spyName");
    const char *from = srv_arg(r, "from"), *until = srv_arg(r, "until");
    const char *rate = srv_arg(r, "sampleRate");
    if ((from && !py_time(from, &q->from_ns)) || (until && !py_time(until, &q->until_ns))) {
        srv_error(o, 400, "malformed", "query parameters 'from' and 'until' are UNIX times");
        return false;
    }
    if (q->from_ns && q->until_ns && q->until_ns < q->from_ns) {
        srv_error(o, 400, "malformed", "'until' is before 'from'");
        return false;
    }
    if (rate) {
        char *end;
        unsigned long hz = strtoul(rate, &end, 10);
        if (!*rate || *end || hz == 0 || hz > 1000000) {
            srv_error(o, 400, "malformed", "query parameter 'sampleRate' is 1 to 1000000 (Hz)");
            return false;
        }
        q->period_ns = 1000000000LL / (int64_t)hz;
    }
    if (q->spy && (strlen(q->spy) > 64 || strpbrk(q->spy, "\r\n\t"))) {
        srv_error(o, 400, "malformed", "query parameter 'spyName' is at most 64 plain characters");
        return false;
    }
    jp_error e;
    jp_error_init(&e);
    if (jp_pyroscope_name(q->name, srv_arg(r, "namespace"), r->s->cfg.limits.max_string, &q->target,
                          &q->kind_hint, &e) != JP_OK) {
        srv_error(o, 400, "malformed", "%s", e.msg);
        return false;
    }
    return true;
}

/* The payload: a multipart part (`jfr`, or `profile` for pprof) or the
 * whole body, gunzipped when gzipped; *labels the `labels` part, if any. */
static bool py_payload(srv_req *r, srv_resp *o, const uint8_t *body, size_t len, bool jfr,
                       jp_mp_part *parts, const uint8_t **data, size_t *dlen, uint8_t **owned,
                       const jp_mp_part **labels)
{
    *data = body;
    *dlen = len;
    *owned = NULL;
    *labels = NULL;
    char boundary[JP_MULTIPART_BOUNDARY_MAX + 1];
    jp_error e;
    jp_error_init(&e);
    jp_err rc = jp_multipart_boundary(r->content_type, boundary, sizeof boundary, &e);
    if (rc == JP_OK) {
        size_t n;
        if ((rc = jp_multipart_parse(body, len, boundary, parts, PY_PARTS_MAX, &n, &e))) {
            ingest_refuse(r, o, rc, e.msg, "pyroscope");
            return false;
        }
        const char *want = jfr ? "jfr" : "profile";
        const jp_mp_part *p = jp_multipart_find(parts, n, want);
        if (!p) {
            srv_error(o, 400, "malformed", "multipart body without a '%s' part", want);
            metrics_ingest_count(&r->s->m, MI_REJ_MALFORMED);
            return false;
        }
        *data = p->data;
        *dlen = p->len;
        *labels = jp_multipart_find(parts, n, "labels");
    } else if (rc != JP_ERR_NOT_FOUND) {
        ingest_refuse(r, o, rc, e.msg, "pyroscope");
        return false;
    }
    if (!jfr || !jp_gzip_is(*data, *dlen))
        return true; /* the pprof decoder inflates a gzipped profile itself */
    size_t n;
    if ((rc = jp_gzip_decompress(*data, *dlen, r->s->cfg.max_decompressed, owned, &n, &e))) {
        ingest_refuse(r, o, rc, e.msg, "pyroscope");
        return false;
    }
    *data = *owned;
    *dlen = n;
    return true;
}

/* The labels part: checked for its shape (its per-sample contexts are not
 * stored). */
static bool py_labels(srv_req *r, srv_resp *o, const jp_mp_part *labels)
{
    const uint8_t *data = labels->data;
    size_t len = labels->len;
    uint8_t *plain = NULL;
    jp_error e;
    jp_error_init(&e);
    uint64_t contexts, strings;
    jp_err rc = JP_OK;
    if (jp_gzip_is(data, len) &&
        !(rc = jp_gzip_decompress(data, len, r->s->cfg.max_decompressed, &plain, &len, &e)))
        data = plain;
    if (!rc)
        rc = jp_pyroscope_labels(data, len, &contexts, &strings, &e);
    free(plain);
    if (!rc)
        return true;
    jp_error_prefix(&e, "labels part: ");
    ingest_refuse(r, o, rc, e.msg, "pyroscope");
    return false;
}

/* The profile of the payload: JFR through the JFR reader, pprof through
 * wire/pprof_decode.h. */
static bool py_profile(srv_req *r, srv_resp *o, bool jfr, const uint8_t *data, size_t len,
                       jp_profile *p, int64_t *start, int64_t *end)
{
    jp_error e;
    jp_error_init(&e);
    if (!jfr) {
        jp_otlp_limits lim;
        jp_otlp_limits_default(&lim, &r->s->cfg.limits);
        jp_err rc = jp_pprof_decode(data, len, &lim, r->s->cfg.max_decompressed, p, &e);
        if (rc)
            ingest_refuse(r, o, rc, e.msg, "pyroscope");
        *start = p->start_ns;
        *end = p->end_ns;
        return rc == JP_OK;
    }
    return ingest_read_jfr(r, o, data, len, "pyroscope", p, start, end);
}

/* One batch: the profile's windows for the target, and its status. */
static void py_batch(const py_req *q, const jp_profile *p, int64_t start, int64_t end,
                     const uint8_t *data, size_t len, jp_batch *b)
{
    char id[64], from[24], until[24];
    snprintf(from, sizeof from, "%lld", (long long)q->from_ns);
    snprintf(until, sizeof until, "%lld", (long long)q->until_ns);
    const char *parts[4] = {q->name, from, until, q->format};
    ingest_id("pyroscope", data, len, parts, 4, id, sizeof id);
    b->id = jp_xstrdup(id);
    b->collector = jp_xstrdup("pyroscope");
    b->collector_version = q->spy && *q->spy ? jp_xstrdup(q->spy) : NULL;
    b->sent_ns = store_now_ns();
    if (q->from_ns) {
        start = q->from_ns;
        end = q->until_ns ? q->until_ns : q->from_ns;
    }
    if (!start)
        start = end = store_now_ns();
    jp_batch_add_profile(b, p, &q->target, start, end < start ? start : end);
    for (size_t i = 0; i < b->nwindows; i++) {
        jp_batch_window *w = &b->windows[i];
        if (!w->period_ns && q->period_ns && (w->kind == JP_KIND_CPU || w->kind == JP_KIND_WALL))
            w->period_ns = q->period_ns;
    }
    char msg[200];
    snprintf(msg, sizeof msg, "Pyroscope ingest (format %s) from %s", q->format,
             q->spy && *q->spy ? q->spy : "a Pyroscope agent");
    if (b->nwindows)
        ingest_status_pushed(b, &q->target, "pyroscope", msg);
}

/* format=jfr or pprof; Pyroscope's default (folded) and its other text
 * formats are refused by name. */
static bool py_format(srv_req *r, srv_resp *o, py_req *q, bool *jfr)
{
    if (!q->format || !*q->format)
        q->format = "folded";
    *jfr = !strcmp(q->format, "jfr");
    if (*jfr || !strcmp(q->format, "pprof"))
        return true;
    srv_error(o, 415, "unsupported",
              "format '%.40s' is not supported: jprof takes format=jfr and format=pprof (the "
              "default, folded, and the other text formats are not read)",
              q->format);
    metrics_ingest_count(&r->s->m, MI_REJ_UNSUPPORTED);
    return false;
}

void ingest_pyroscope(srv_req *r, srv_resp *o)
{
    py_req q;
    bool jfr;
    if (!py_args(r, o, &q)) {
        metrics_ingest_count(&r->s->m, MI_REJ_MALFORMED);
        jp_batch_target_cleanup(&q.target);
        return;
    }
    const uint8_t *body, *data;
    size_t len, dlen;
    uint8_t *owned = NULL, *part_owned = NULL;
    jp_mp_part parts[PY_PARTS_MAX];
    const jp_mp_part *labels;
    jp_profile *p = jp_profile_new();
    jp_batch b;
    jp_batch_init(&b);
    int64_t start = 0, end = 0;
    if (!ingest_authorize(r, o, q.target.ns) || !py_format(r, o, &q, &jfr) ||
        !ingest_body(r, o, &body, &len, &owned))
        goto out;
    if (!py_payload(r, o, body, len, jfr, parts, &data, &dlen, &part_owned, &labels) ||
        (labels && !py_labels(r, o, labels)) || !py_profile(r, o, jfr, data, dlen, p, &start, &end))
        goto out;
    py_batch(&q, p, start, end, data, dlen, &b);
    if (!b.nwindows) {
        ingest_refuse(r, o, JP_ERR_FORMAT,
                      "the profile has no samples of a kind jprof stores (cpu, wall, alloc, "
                      "lock, ...)",
                      "pyroscope");
        goto out;
    }
    if (ingest_in_scope(r, o, &b))
        ingest_write(r, o, &b, NULL);
out:
    jp_batch_cleanup(&b);
    jp_profile_free(p);
    jp_batch_target_cleanup(&q.target);
    free(part_owned);
    free(owned);
}
