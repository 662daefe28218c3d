#include "tui/batch_server.h"

#include <string.h>

#include "base/timeutil.h"
#include "model/units.h"
#include "tui/batch.h"
#include "tui/exit.h"
#include "tui/report_diff.h"
#include "tui/report_gc.h"
#include "tui/report_profile.h"
#include "tui/report_service.h"
#include "tui/source_server.h"
#include "wire/query_json.h"

static json_t *copy_of(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return v ? json_deep_copy(v) : json_null();
}

/* The JVMs of the service that have a stored snapshot, each in the shape
 * of `jprof-top -b -p PID --format json` (the same model, the same
 * analyses, the same printer whatever the source). */
static json_t *jvms_json(tui_client *r)
{
    tui_target_opts o;
    tui_target_opts_init(&o);
    json_t *out = json_array(), *e;
    size_t i;
    json_array_foreach(json_object_get(r->threads, "targets"), i, e)
    {
        tui_target *l = tui_server_target(r, e, &o);
        if (!l)
            continue;
        json_array_append_new(out, tui_report_target_json(l));
        tui_target_free(l);
    }
    return out;
}

/* The "gc" object of the last 15 minutes (wire/gc_json.h), null when the
 * server has no GC endpoint (an older jprof-server). */
static json_t *gc_json(tui_client *r, const char *pod)
{
    json_t *a = NULL;
    jp_error err;
    jp_error_init(&err);
    if (tui_client_gc(r, "-15m", "now", pod, 1, &a, &err) != JP_OK)
        return json_null();
    json_t *g = copy_of(a, "gc");
    json_decref(a);
    return g;
}

json_t *tui_batch_server_json(tui_client *r, const char *pod)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:s?,s:o,s:o,s:o,s:o,s:o,s:o}", "via", "server", "server",
                     r->base, "namespace", r->ns, "service", r->svc, "pod", pod, "kinds",
                     copy_of(r->service, "kinds"), "targets", copy_of(r->targets, "targets"),
                     "history", copy_of(r->targets, "history"), "ingestion",
                     copy_of(r->ingestion, "collectors"), "jvms", jvms_json(r), "gc",
                     gc_json(r, pod));
}

/* --format gc: the lines of the GC screen (tui/report_gc.h) over the range,
 * with the service's top allocators when it has allocation profiles. */
static int gc_view(tui_client *r, const tui_args *o, FILE *out, FILE *errout)
{
    jp_error err;
    jp_error_init(&err);
    const char *from = o->from_text ? o->from_text : "-15m", *to = o->to_text ? o->to_text : "now";
    json_t *a = NULL;
    if (tui_client_gc(r, from, to, o->pod, 78, &a, &err) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        return tui_client_exit_status(r);
    }
    tui_gc_data d;
    char why[200];
    if (!tui_gc_from_api(a, &d, why, sizeof why)) {
        fprintf(errout, "jprof-top: jprof-server's GC answer is not understood: %s\n", why);
        json_decref(a);
        return TUI_EXIT_ERROR;
    }
    const json_t *meta = json_object_get(a, "meta");
    bool partial = json_is_true(json_object_get(meta, "partial"));
    if (partial)
        fprintf(errout, "jprof-top: PARTIAL: %s\n",
                jp_query_str(meta, "partial_reason") ? jp_query_str(meta, "partial_reason") : "?");
    jp_profile *p = NULL;
    tui_client_flame_meta m;
    if ((tui_client_kinds(r) & (1u << JP_KIND_ALLOC)) &&
        tui_client_profile(r, 1u << JP_KIND_ALLOC, from, to, o->pod, 200000, &p, &m, &err) != JP_OK)
        fprintf(errout, "jprof-top: top allocators left out: %s\n", err.msg);
    tui_lines ls;
    tui_lines_init(&ls);
    tui_report_gc_data(&d, p, 80, 10, &ls);
    jp_err rc = tui_lines_write(&ls, out);
    tui_lines_cleanup(&ls);
    tui_gc_data_cleanup(&d);
    jp_profile_free(p);
    json_decref(a);
    if (rc != JP_OK)
        return TUI_EXIT_ERROR;
    return partial ? TUI_EXIT_PARTIAL : TUI_EXIT_OK;
}

static int snapshot_view(tui_client *r, const tui_args *o, FILE *out, FILE *errout)
{
    jp_error err;
    jp_error_init(&err);
    if (tui_client_refresh(r, o->pod, &err) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        return tui_client_exit_status(r);
    }
    if (o->format == TUI_FORMAT_JSON)
        return tui_write_json_line(out, tui_batch_server_json(r, o->pod), 0, &err) == JP_OK
                   ? TUI_EXIT_OK
                   : TUI_EXIT_ERROR;
    tui_lines ls;
    tui_lines_init(&ls);
    tui_report_service_header(r, &ls);
    tui_lines_add(&ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_report_service_status(r, &ls);
    jp_err rc = tui_lines_write(&ls, out);
    tui_lines_cleanup(&ls);
    /* each JVM as `jprof-top -b -p PID` prints one */
    tui_target_opts lo;
    tui_target_opts_init(&lo);
    json_t *e;
    size_t i, n = 0;
    json_array_foreach(json_object_get(r->threads, "targets"), i, e)
    {
        tui_target *l = rc == JP_OK ? tui_server_target(r, e, &lo) : NULL;
        if (!l)
            continue;
        fputc('\n', out);
        rc = tui_report_target_write(l, TUI_FORMAT_TEXT, 0, out);
        tui_target_free(l);
        n++;
    }
    if (rc == JP_OK && !n)
        fprintf(errout, "jprof-top: no thread snapshot of %s/%s%s%s in the last day\n", r->ns,
                r->svc, o->pod ? " pod " : "", o->pod ? o->pod : "");
    return rc == JP_OK ? TUI_EXIT_OK : TUI_EXIT_ERROR;
}

/* The server's top table in the layout of --jfr --format top. */
static int top_view(tui_client *r, const tui_args *o, const char *from, const char *to, FILE *out,
                    FILE *errout)
{
    jp_error err;
    jp_error_init(&err);
    json_t *a = NULL;
    if (tui_client_top(r, o->kind, from, to, o->pod, 100000, o->by_value, &a, &err) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        return tui_client_exit_status(r);
    }
    const json_t *m = json_object_get(a, "meta");
    long long samples = jp_query_int(m, "samples", 0), value = jp_query_int(m, "total", 0);
    long long events = jp_query_int(m, "events", 0);
    const char *f = jp_query_str(m, "from"), *t = jp_query_str(m, "to");
    bool partial = json_is_true(json_object_get(m, "partial"));
    tui_top_head h = {.kind = o->kind,
                      .by_value = o->by_value,
                      .events = events > 0 ? (uint64_t)events : 0,
                      .samples = samples > 0 ? (uint64_t)samples : 0,
                      .value = value > 0 ? (uint64_t)value : 0,
                      .from = f ? f : "?",
                      .to = t ? t : "?",
                      .partial = partial};
    uint64_t all = o->by_value ? h.value : h.samples;
    tui_write_top_head(out, &h);
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(a, "rows"), i, row)
    {
        long long self = jp_query_int(row, "self", 0), tot = jp_query_int(row, "total", 0);
        const char *name = jp_query_str(row, "name");
        if ((self <= 0 && tot <= 0) || !name)
            continue;
        tui_write_top_row(out, o->kind, o->by_value, all, self > 0 ? (uint64_t)self : 0,
                          tot > 0 ? (uint64_t)tot : 0, name, strlen(name));
    }
    if (!samples)
        fprintf(errout, "jprof-top: no %s data for %s/%s%s%s from %s to %s\n",
                jp_kind_name(o->kind), r->ns, r->svc, o->pod ? " pod " : "", o->pod ? o->pod : "",
                f ? f : from, t ? t : to);
    if (partial)
        fprintf(errout, "jprof-top: PARTIAL: %s\n",
                jp_query_str(m, "partial_reason") ? jp_query_str(m, "partial_reason") : "");
    json_decref(a);
    return partial ? TUI_EXIT_PARTIAL : TUI_EXIT_OK;
}

int tui_batch_server_diff_open(tui_client *r, const tui_args *o, bool threads, jp_diff **d,
                               char *cur_label, char *base_label, size_t label_len, FILE *errout)
{
    jp_error err;
    jp_error_init(&err);
    *d = NULL;
    const char *from = o->from_text ? o->from_text : "-15m", *to = o->to_text ? o->to_text : "now";
    jp_profile *cur = NULL, *base = NULL;
    tui_client_flame_meta m, bm;
    if (tui_client_diff(r, o->kind, from, to, o->pod, &o->base, 200000, &cur, &base, &m, &bm,
                        &err) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        return tui_client_exit_status(r);
    }
    const char *bpod = o->base.pod ? (*o->base.pod ? o->base.pod : "all pods") : o->pod;
    snprintf(cur_label, label_len, "%s:%s%s%s %s..%s", r->ns, r->svc, o->pod ? " pod " : "",
             o->pod ? o->pod : "", m.from, m.to);
    snprintf(base_label, label_len, "%s:%s%s%s %s..%s", r->ns, r->svc, bpod ? " pod " : "",
             bpod ? bpod : "", bm.from, bm.to);
    int status = TUI_EXIT_OK;
    if (!jp_profile_has_kind(cur, o->kind) && !jp_profile_has_kind(base, o->kind)) {
        fprintf(errout, "jprof-top: no %s data in %s nor in the baseline %s\n",
                jp_kind_name(o->kind), cur_label, base_label);
        status = TUI_EXIT_ERROR;
    } else if (jp_diff_new(base, cur, o->kind, threads, o->by_value, (jp_diff_norm)o->diff_norm, d,
                           &err) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        status = TUI_EXIT_USAGE;
    }
    if (status == TUI_EXIT_OK && m.partial)
        fprintf(errout, "jprof-top: PARTIAL: %s\n", m.partial_reason);
    jp_profile_free(cur);
    jp_profile_free(base);
    return status == TUI_EXIT_OK && m.partial ? TUI_EXIT_PARTIAL : status;
}

static int diff_view(tui_client *r, const tui_args *o, FILE *out, FILE *errout)
{
    jp_diff *d = NULL;
    char cl[256], bl[256];
    int status = tui_batch_server_diff_open(r, o, false, &d, cl, bl, sizeof cl, errout);
    if (!d)
        return status;
    jp_error err;
    jp_error_init(&err);
    if (tui_diff_write(out, d, o->format, bl, cl, &err) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        status = TUI_EXIT_ERROR;
    }
    jp_diff_free(d);
    return status;
}

static int profile_view(tui_client *r, const tui_args *o, FILE *out, FILE *errout)
{
    if (o->has_base)
        return diff_view(r, o, out, errout);
    jp_error err;
    jp_error_init(&err);
    const char *from = o->from_text ? o->from_text : "-15m", *to = o->to_text ? o->to_text : "now";
    if (o->format == TUI_FORMAT_TOP)
        return top_view(r, o, from, to, out, errout);
    jp_profile *p = NULL;
    tui_client_flame_meta m;
    /* the server's cap: a batch wants the whole tree */
    if (tui_client_profile(r, 1u << o->kind, from, to, o->pod, 200000, &p, &m, &err) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        return tui_client_exit_status(r);
    }
    jfr_report rep;
    jfr_report_init(&rep);
    jp_rfc3339_parse(m.from, &rep.start_ns, NULL);
    jp_rfc3339_parse(m.to, &rep.end_ns, NULL);
    rep.partial = m.partial;
    jp_err rc;
    jp_batch_target t = {.ns = (char *)r->ns, .service = (char *)r->svc, .pod = (char *)o->pod};
    if (o->format == TUI_FORMAT_JSON)
        rc = tui_write_json(out, p, &rep, o->kind, false, o->by_value, &err);
    else if (o->format == TUI_FORMAT_PPROF)
        rc = tui_write_pprof(out, p, o->kind, false, &err);
    else if (o->format == TUI_FORMAT_OTLP)
        rc = tui_write_otlp(out, p, o->kind, false, &t, &err);
    else
        rc = tui_write_collapsed(out, p, o->kind, false, o->by_value, &err);
    if (rc == JP_OK && !jp_profile_has_kind(p, o->kind))
        fprintf(errout, "jprof-top: no %s data for %s/%s%s%s from %s to %s\n",
                jp_kind_name(o->kind), r->ns, r->svc, o->pod ? " pod " : "", o->pod ? o->pod : "",
                m.from, m.to);
    if (m.partial)
        fprintf(errout, "jprof-top: PARTIAL: %s\n", m.partial_reason);
    jp_profile_free(p);
    if (rc != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        return TUI_EXIT_ERROR;
    }
    return m.partial ? TUI_EXIT_PARTIAL : TUI_EXIT_OK;
}

int tui_batch_server_run(tui_client *r, const tui_args *o, FILE *out, FILE *errout)
{
    int rc = o->format == TUI_FORMAT_GC ? gc_view(r, o, out, errout)
             : o->has_kind              ? profile_view(r, o, out, errout)
                                        : snapshot_view(r, o, out, errout);
    if (fflush(out) != 0 && rc == TUI_EXIT_OK) {
        fprintf(errout, "jprof-top: cannot write the output\n");
        return TUI_EXIT_ERROR;
    }
    return rc;
}
