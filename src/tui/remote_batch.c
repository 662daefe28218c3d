#include "tui/remote_batch.h"

#include <string.h>

#include "base/timeutil.h"
#include "model/units.h"
#include "tui/batch.h"
#include "tui/remote_report.h"
#include "wire/query_json.h"

static json_t *copy_of(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return v ? json_deep_copy(v) : json_null();
}

static const json_t *snapshot_threads(const json_t *summary)
{
    const json_t *snap = json_object_get(summary, "snapshot");
    const json_t *inner = json_object_get(snap, "snapshot");
    return json_object_get(json_is_object(inner) ? inner : snap, "threads");
}

/* A thread as scripts want it: id, name, state, cpu_ns, cpu_pct (the busy
 * ranking's), its evidence and stack (the snapshot's when there is one). */
static json_t *thread_json(const json_t *t, const json_t *snap)
{
    json_t *o = json_object();
    static const char *const keys[] = {"id",
                                       "name",
                                       "state",
                                       "cpu_ns",
                                       "cpu_pct",
                                       "cpu_confidence",
                                       "evidence",
                                       "profile_cpu_pct",
                                       "snapshot_cpu_pct",
                                       "why"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        json_object_set_new(o, keys[i], copy_of(t, keys[i]));
    const json_t *stack = json_object_get(t, "stack"), *st;
    const char *name = jp_query_str(t, "name");
    size_t k;
    json_array_foreach(snap, k, st)
    {
        const char *n = jp_query_str(st, "name");
        if (!json_is_array(stack) && n && name && !strcmp(n, name))
            stack = json_object_get(st, "stack");
    }
    json_object_set_new(o, "stack",
                        json_is_array(stack) ? json_deep_copy(stack) : copy_of(t, "stack_top"));
    return o;
}

static void per_target(const tui_remote *r, json_t *threads, json_t *locks)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r->threads, "targets"), i, e)
    {
        const json_t *sum = json_object_get(e, "summary");
        const json_t *snap = snapshot_threads(sum);
        /* the server's ranking, whatever order the agent listed threads in */
        const json_t *list = json_object_get(json_object_get(sum, "busy"), "threads");
        if (!json_array_size(list) && json_is_array(snap))
            list = snap;
        json_t *ts = json_array(), *t;
        size_t k;
        json_array_foreach(list, k, t) json_array_append_new(ts, thread_json(t, snap));
        json_array_append_new(threads, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "target",
                                                 copy_of(e, "target"), "time", copy_of(e, "time"),
                                                 "age_seconds", copy_of(e, "age_seconds"),
                                                 "threads_total", copy_of(sum, "threads_total"),
                                                 "states", copy_of(sum, "states"), "busy",
                                                 copy_of(sum, "busy"), "threads", ts));
        json_array_append_new(locks, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "target",
                                               copy_of(e, "target"), "time", copy_of(e, "time"),
                                               "contention", copy_of(sum, "contention"), "locks",
                                               copy_of(sum, "locks"), "idle", copy_of(sum, "idle"),
                                               "blocked", copy_of(sum, "blocked")));
    }
}

/* Deadlocks as {target, time, threads: [{name, id, waits_for, holds, stack}]}
 * with locks as "Class@id" text, whichever form the agent sent. */
static json_t *deadlocks_json(const tui_remote *r)
{
    json_t *out = json_array(), *d;
    size_t i;
    json_array_foreach(json_object_get(r->deadlocks, "deadlocks"), i, d)
    {
        const json_t *dl = json_object_get(d, "deadlock");
        if (!json_is_object(dl))
            dl = d;
        json_t *ts = json_array(), *t;
        size_t k;
        json_array_foreach(json_object_get(dl, "threads"), k, t)
        {
            char w[256], h[256];
            tui_lock_text(json_object_get(t, "waits_for"), w, sizeof w);
            tui_lock_text(json_object_get(t, "holds"), h, sizeof h);
            json_array_append_new(ts, json_pack("{s:o,s:o,s:s,s:s,s:o}", "name", copy_of(t, "name"),
                                                "id", copy_of(t, "id"), "waits_for", w, "holds", h,
                                                "stack", copy_of(t, "stack")));
        }
        json_array_append_new(out, json_pack("{s:o,s:o,s:o}", "target", copy_of(d, "target"),
                                             "time", copy_of(d, "time"), "threads", ts));
    }
    return out;
}

json_t *tui_remote_json(const tui_remote *r, const char *pod)
{
    json_t *threads = json_array(), *locks = json_array();
    per_target(r, threads, locks);
    return json_pack("{s:s,s:s,s:s,s:s,s:s?,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "source", "server",
                     "server", r->base, "namespace", r->ns, "service", r->svc, "pod", pod, "kinds",
                     copy_of(r->service, "kinds"), "targets", copy_of(r->targets, "targets"),
                     "history", copy_of(r->targets, "history"), "threads", threads, "locks", locks,
                     "deadlocks", deadlocks_json(r), "ingestion",
                     copy_of(r->ingestion, "collectors"));
}

static int snapshot_view(tui_remote *r, const tui_rbatch_opts *o, FILE *out, FILE *errout)
{
    jp_error err;
    jp_error_init(&err);
    if (tui_remote_refresh(r, o->pod, &err) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        return tui_remote_exit_status(r);
    }
    if (o->format == TUI_FORMAT_JSON) {
        json_t *j = tui_remote_json(r, o->pod);
        int rc = json_dumpf(j, out, JSON_COMPACT);
        json_decref(j);
        fputc('\n', out);
        return rc ? TUI_EXIT_ERROR : TUI_EXIT_OK;
    }
    tui_lines ls;
    tui_lines_init(&ls);
    tui_rreport_header(r, &ls);
    tui_lines_add(&ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_rreport_status(r, &ls);
    tui_lines_add(&ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_lines_add(&ls, TUI_STYLE_TITLE, 0, "== threads (latest snapshot per pod)");
    tui_rreport_threads(r, 20, 1, &ls);
    tui_lines_add(&ls, TUI_STYLE_TITLE, 0, "== locks");
    tui_rreport_locks(r, &ls);
    tui_lines_add(&ls, TUI_STYLE_TITLE, 0, "== deadlocks");
    tui_rreport_deadlocks(r, &ls);
    jp_err rc = tui_lines_write(&ls, out);
    tui_lines_cleanup(&ls);
    return rc == JP_OK ? TUI_EXIT_OK : TUI_EXIT_ERROR;
}

static void top_cell(jp_kind k, bool by_value, uint64_t v, char *buf, size_t len)
{
    if (by_value)
        jp_format_value(k, 1, v, buf, len);
    else
        snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* The server's top table in the layout of --jfr --format top. */
static int top_view(tui_remote *r, const tui_rbatch_opts *o, const char *from, const char *to,
                    FILE *out, FILE *errout)
{
    jp_error err;
    jp_error_init(&err);
    json_t *a = NULL;
    if (tui_remote_top(r, o->kind, from, to, o->pod, 100000, o->by_value, &a, &err) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        return tui_remote_exit_status(r);
    }
    const json_t *m = json_object_get(a, "meta");
    long long samples = jp_query_int(m, "samples", 0), value = jp_query_int(m, "total", 0);
    uint64_t all = o->by_value ? (uint64_t)value : (uint64_t)samples;
    char total[32];
    jp_format_value(o->kind, 1, (uint64_t)(value > 0 ? value : 0), total, sizeof total);
    const char *f = jp_query_str(m, "from"), *t = jp_query_str(m, "to");
    bool partial = json_is_true(json_object_get(m, "partial"));
    fprintf(out,
            "# kind %s  unit %s  value %s  events %lld  samples %lld  total %s  from %s  to %s%s\n",
            jp_kind_name(o->kind), o->by_value ? jp_kind_unit(o->kind) : "samples",
            o->by_value ? "total" : "samples", jp_query_int(m, "events", 0), samples, total,
            f ? f : "?", t ? t : "?", partial ? "  PARTIAL" : "");
    fprintf(out, "%10s %6s %10s %6s  %s\n", "SELF", "SELF%", "TOTAL", "TOTAL%", "NAME");
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(a, "rows"), i, row)
    {
        long long self = jp_query_int(row, "self", 0), tot = jp_query_int(row, "total", 0);
        const char *name = jp_query_str(row, "name");
        if ((self <= 0 && tot <= 0) || !name)
            continue;
        char sb[32], tb[32];
        top_cell(o->kind, o->by_value, (uint64_t)self, sb, sizeof sb);
        top_cell(o->kind, o->by_value, (uint64_t)tot, tb, sizeof tb);
        fprintf(out, "%10s %5.1f%% %10s %5.1f%%  %s\n", sb,
                all ? 100.0 * (double)self / (double)all : 0.0, tb,
                all ? 100.0 * (double)tot / (double)all : 0.0, name);
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

static int profile_view(tui_remote *r, const tui_rbatch_opts *o, FILE *out, FILE *errout)
{
    jp_error err;
    jp_error_init(&err);
    const char *from = o->from ? o->from : "-15m", *to = o->to ? o->to : "now";
    if (o->format == TUI_FORMAT_TOP)
        return top_view(r, o, from, to, out, errout);
    jp_profile *p = NULL;
    tui_remote_flame_meta m;
    /* the server's cap: a batch wants the whole tree */
    if (tui_remote_profile(r, 1u << o->kind, from, to, o->pod, 200000, &p, &m, &err) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        return tui_remote_exit_status(r);
    }
    jfr_report rep;
    jfr_report_init(&rep);
    jp_rfc3339_parse(m.from, &rep.start_ns, NULL);
    jp_rfc3339_parse(m.to, &rep.end_ns, NULL);
    rep.partial = m.partial;
    jp_err rc;
    if (o->format == TUI_FORMAT_JSON)
        rc = tui_write_json(out, p, &rep, o->kind, false, o->by_value, &err);
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

int tui_remote_batch_run(tui_remote *r, const tui_rbatch_opts *o, FILE *out, FILE *errout)
{
    int rc = o->has_kind ? profile_view(r, o, out, errout) : snapshot_view(r, o, out, errout);
    if (fflush(out) != 0 && rc == TUI_EXIT_OK) {
        fprintf(errout, "jprof-top: cannot write the output\n");
        return TUI_EXIT_ERROR;
    }
    return rc;
}
