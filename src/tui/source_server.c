/* source_server.c - one target of a service as jprof-server knows it, as a
 * source of the screens (source.h), and the list of the service's targets.
 *
 * The snapshot is the newest one the agent uploaded for the target (the
 * whole snapshot, /api/v1/threads?full=1), rebuilt into the model so the
 * screens run the same analyses as on a live JVM; its busy evidence is the
 * CPU between the agent's last two snapshots, which the stored snapshot
 * carries. The Flame screen is the server's flame graph over a range (< >
 * step 5m 15m 1h 6h 24h) of the target's pod or of every pod (a); the GC
 * screen the GC summaries the agents stored over the same range and pods
 * (/api/v1/gc), drawn as for a recording (tui/gc_report.h). */
#include "tui/source_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "tui/report_gc.h"
#include "wire/heap_json.h"
#include "tui/report_service.h"
#include "tui/report_target.h"
#include "wire/query_json.h"
#include "wire/snapshot_json.h"

#define FLAME_MAX_NODES 20000
/* a flame graph is read again after this long, or when range or scope change */
#define FLAME_FRESH_NS (60 * JP_NS_PER_SEC)

typedef struct sctx {
    tui_client *r;
    char pod[256];
    long long pid; /* -1: any JVM of the pod */
    int range;     /* index into tui_range_names */
    bool all_pods; /* Flame: the whole service */
    bool dirty;
    int64_t read_mono;
    json_t *snap;  /* the stored snapshot shown */
    bool borrowed; /* r is the caller's (batch output) */
    /* the GC screen's last answer and what it was for */
    json_t *gc;
    int64_t gc_mono;
    int gc_range, gc_width;
    bool gc_all;
    char gc_err[sizeof(jp_error){0}.msg];
} sctx;

static sctx *ctx_of(const tui_target *l)
{
    return l->src;
}

static int64_t range_ns(int range)
{
    int64_t ns = 15 * 60 * JP_NS_PER_SEC;
    jp_error err;
    jp_error_init(&err);
    jp_duration_parse(tui_range_names[range], &ns, &err);
    return ns;
}

/* The entry of /threads for our target, or NULL. */
static const json_t *our_entry(const sctx *k)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(k->r->threads, "targets"), i, e)
    {
        const json_t *t = json_object_get(e, "target");
        const char *pod = jp_query_str(t, "pod");
        if (pod && !strcmp(pod, k->pod) && (k->pid < 0 || jp_query_int(t, "pid", -1) == k->pid))
            return e;
    }
    return NULL;
}

static bool pod_is(const json_t *row, const char *pod)
{
    const char *p = jp_query_str(json_object_get(row, "target"), "pod");
    return p && !strcmp(p, pod);
}

/* Whether the targets list says pod's profiles are pushed by another
 * profiler (mode "pushed": OTLP, Pyroscope; no agent, no thread snapshot);
 * then l's title names that source, with the engine of its newest status. */
static bool pushed_source(const tui_client *r, const char *pod, tui_target *l)
{
    bool pushed = false;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r->targets, "targets"), i, e)
    {
        const char *mode = jp_query_str(e, "mode");
        if (pod_is(e, pod) && mode && !strcmp(mode, "pushed")) {
            pushed = true;
            l->proc.pid = (pid_t)jp_query_int(json_object_get(e, "target"), "pid", 0);
        }
    }
    if (!pushed)
        return false;
    const char *engine = NULL;
    json_array_foreach(json_object_get(r->targets, "history"), i, e)
    {
        if (!engine && pod_is(e, pod))
            engine = jp_query_str(e, "engine");
    }
    snprintf(l->source_label, sizeof l->source_label, "pushed%s%s%s", engine ? " (" : "",
             engine ? engine : "", engine ? ")" : "");
    l->profiles_only = true;
    return true;
}

static void header_from(tui_target *l, const json_t *entry, const json_t *snap)
{
    const json_t *t = json_object_get(entry, "target");
    const json_t *st = json_object_get(snap, "target");
    long long pid = jp_query_int(st, "pid", jp_query_int(t, "pid", 0));
    l->proc.pid = (pid_t)pid;
    const char *s;
    if ((s = jp_query_str(st, "main_class")))
        snprintf(l->proc.main_class, sizeof l->proc.main_class, "%s", s);
    if ((s = jp_query_str(st, "user")))
        snprintf(l->proc.user, sizeof l->proc.user, "%s", s);
    if ((s = jp_query_str(st, "jvm")) || (s = jp_query_str(t, "jvm"))) {
        snprintf(l->jvm_vm, sizeof l->jvm_vm, "%s", s);
        /* "OpenJDK 64-Bit Server VM 17.0.16+8-Debian-1" -> "JDK 17.0.16", as -p says */
        const char *v = strrchr(s, ' ');
        v = v ? v + 1 : s;
        if (*v >= '0' && *v <= '9')
            snprintf(l->jvm_version, sizeof l->jvm_version, "JDK %.*s", (int)strcspn(v, "+ "), v);
        else
            snprintf(l->jvm_version, sizeof l->jvm_version, "%s", s);
    }
    if ((s = jp_query_str(st, "start")) || (s = jp_query_str(t, "jvm_start")))
        jp_rfc3339_parse(s, &l->proc.start_ns, NULL);
    if (l->proc.start_ns > 0)
        l->proc.uptime_ns = jp_time_now_ns() - l->proc.start_ns;
}

/* A stored snapshot knows when it was taken; its JVM's age then. */
static void snapshot_uptime(const tui_target *l, jp_snapshot *s)
{
    if (s->uptime_ns <= 0 && l->proc.start_ns > 0 && s->taken_ns > l->proc.start_ns)
        s->uptime_ns = s->taken_ns - l->proc.start_ns;
}

static jp_err s_refresh(tui_target *l, jp_snapshot **out, jp_error *err)
{
    sctx *k = ctx_of(l);
    /* the threads of our pod; the Status screen lists every pod */
    jp_err rc = tui_client_refresh_pod(k->r, k->pod, NULL, err);
    if (rc != JP_OK)
        return rc;
    l->snapshot_ms = k->r->cost_ms;
    const json_t *e = our_entry(k);
    const json_t *snap = json_object_get(json_object_get(e, "summary"), "snapshot");
    jp_snapshot *s = snap ? jp_snapshot_from_json(snap) : NULL;
    if (!s && pushed_source(k->r, k->pod, l))
        return jp_error_set(err, JP_ERR_NOT_FOUND,
                            "pod %s: profiles %s by another profiler, no thread snapshots "
                            "(F8: its flame graph, F9: its status)",
                            k->pod, l->source_label);
    if (!s)
        return jp_error_set(err, JP_ERR_NOT_FOUND,
                            "jprof-server has no thread snapshot of pod %s in the last day "
                            "(S: its status)",
                            k->pod);
    json_decref(k->snap);
    k->snap = json_deep_copy(snap);
    header_from(l, e, snap);
    snapshot_uptime(l, s);
    *out = s;
    return JP_OK;
}

static void s_busy(const tui_target *l, jp_busy_list *out)
{
    jp_snapshot_busy_from_json(ctx_of(l)->snap, l->cur, out);
}

/* The server's profile evidence of this target: per-thread CPU of its
 * newest cpu windows, as /threads ranked them (% of one core over the
 * window's span). */
static void s_cpu(const tui_target *l, jp_cpu_evidence *out)
{
    const json_t *busy = json_object_get(json_object_get(our_entry(ctx_of(l)), "summary"), "busy");
    const json_t *w = json_object_get(busy, "window");
    double secs = json_number_value(json_object_get(w, "seconds"));
    if (!json_is_object(w) || secs <= 0)
        return;
    jp_rfc3339_parse(jp_query_str(w, "start"), &out->start_ns, NULL);
    jp_rfc3339_parse(jp_query_str(w, "end"), &out->end_ns, NULL);
    out->windows = (unsigned)jp_query_int(w, "windows", 1);
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(busy, "threads"), i, t)
    {
        const json_t *pct = json_object_get(t, "profile_cpu_pct");
        const char *name = jp_query_str(t, "name");
        if (!name || !json_is_number(pct) || json_number_value(pct) <= 0)
            continue;
        double ns = json_number_value(pct) / 100.0 * secs * 1e9;
        jp_cpu_evidence_add(out, name, strlen(name), (uint64_t)ns, 1);
    }
}

static jp_err s_prof_start(tui_target *l, jp_error *err)
{
    (void)err;
    ctx_of(l)->dirty = true; /* nothing to start: the agents record */
    l->prof.started_mono = jp_time_mono_ns();
    return JP_OK;
}

static jp_err s_prof_read(tui_target *l, jp_profile **out, jfr_report *rep, bool *tail,
                          jp_error *err)
{
    sctx *k = ctx_of(l);
    *tail = false;
    *out = NULL;
    if (!k->dirty && jp_time_mono_ns() - k->read_mono < FLAME_FRESH_NS)
        return JP_OK; /* unchanged */
    char from[16];
    snprintf(from, sizeof from, "-%s", tui_range_names[k->range]);
    tui_client_flame_meta m;
    jp_err rc = tui_client_profile(k->r, 0, from, "now", k->all_pods ? NULL : k->pod,
                                   FLAME_MAX_NODES, out, &m, err);
    if (rc != JP_OK)
        return rc;
    k->dirty = false;
    k->read_mono = jp_time_mono_ns();
    l->opts.window_ns = range_ns(k->range);
    jp_rfc3339_parse(m.from, &rep->start_ns, NULL);
    jp_rfc3339_parse(m.to, &rep->end_ns, NULL);
    rep->partial = m.partial;
    if (m.partial)
        jp_error_set(&rep->error, JP_ERR_LIMIT, "%s", m.partial_reason);
    return JP_OK;
}

static void s_prof_stop(tui_target *l)
{
    ctx_of(l)->dirty = true;
}

static void s_prof_label(const tui_target *l, char *buf, size_t len)
{
    const sctx *k = ctx_of(l);
    snprintf(buf, len, "%s/%s last %s, %s%s", k->r->ns, k->r->svc, tui_range_names[k->range],
             k->all_pods ? "all pods" : "pod ", k->all_pods ? "" : k->pod);
}

static bool s_flame_key(tui_target *l, int key, char *msg, size_t len)
{
    sctx *k = ctx_of(l);
    switch (key) {
    case '<':
    case ',':
    case '>':
    case '.': {
        int r = k->range + (key == '<' || key == ',' ? -1 : 1);
        if (r < 0 || r >= TUI_RANGE_COUNT) {
            snprintf(msg, len, "range stays %s (5m 15m 1h 6h 24h)", tui_range_names[k->range]);
            return false;
        }
        k->range = r;
        snprintf(msg, len, "flame range: last %s", tui_range_names[r]);
        break;
    }
    case 'a':
        k->all_pods = !k->all_pods;
        snprintf(msg, len, "flame of %s%s", k->all_pods ? "all pods" : "pod ",
                 k->all_pods ? "" : k->pod);
        break;
    default:
        return false;
    }
    k->dirty = true;
    return true;
}

static void s_status(const tui_target *l, tui_lines *ls)
{
    const sctx *k = ctx_of(l);
    char age[24] = "?";
    const json_t *e = our_entry(k);
    if (e)
        tui_format_age(json_number_value(json_object_get(e, "age_seconds")), age, sizeof age);
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "server: %s, snapshot %s old, flame range %s (%s)",
                  k->r->base, age, tui_range_names[k->range],
                  k->all_pods ? "all pods" : "this pod");
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_report_service_status(k->r, ls);
}

/* The GC screen: /api/v1/gc over the Flame range and pods, read again
 * when they change or the answer is older than FLAME_FRESH_NS. */
static void s_gc(tui_target *l, int width, tui_lines *ls)
{
    sctx *k = ctx_of(l);
    int points = width - 2 < 8 ? 8 : width - 2 > 200 ? 200 : width - 2;
    if (!k->gc || k->gc_range != k->range || k->gc_all != k->all_pods || k->gc_width != width ||
        jp_time_mono_ns() - k->gc_mono >= FLAME_FRESH_NS) {
        char from[16];
        snprintf(from, sizeof from, "-%s", tui_range_names[k->range]);
        jp_error err;
        jp_error_init(&err);
        json_t *a = NULL;
        k->gc_mono = jp_time_mono_ns();
        if (tui_client_gc(k->r, from, "now", k->all_pods ? NULL : k->pod, points, &a, &err) ==
            JP_OK) {
            json_decref(k->gc);
            k->gc = a;
            k->gc_range = k->range;
            k->gc_all = k->all_pods;
            k->gc_width = width;
            k->gc_err[0] = 0;
        } else {
            snprintf(k->gc_err, sizeof k->gc_err, "%s", err.msg);
        }
    }
    if (k->gc_err[0])
        tui_lines_add(ls, TUI_STYLE_WARN, 0, "GC summaries not read: %s", k->gc_err);
    if (!k->gc)
        return;
    tui_gc_data d;
    char why[200];
    if (!tui_gc_from_api(k->gc, &d, why, sizeof why)) {
        tui_lines_add(ls, TUI_STYLE_WARN, 0, "jprof-server's GC answer is not understood: %s", why);
        return;
    }
    /* the top allocators of the Flame window, when it has the alloc kind */
    const jp_profile *p = l->prof.profile;
    tui_report_gc_data(&d, p, width, 10, ls);
    tui_gc_data_cleanup(&d);
}

/* The Heap screen: what the agent stored for this pod over the Flame
 * range (jprof.io/heap-histogram windows); nothing is taken from here. */
static jp_err s_heap(tui_target *l, bool all, jp_error *err)
{
    (void)all;
    sctx *k = ctx_of(l);
    char from[16], why[200];
    snprintf(from, sizeof from, "-%s", tui_range_names[k->range]);
    json_t *a = NULL;
    jp_err rc = tui_client_heap(k->r, from, "now", k->pod, 1000, &a, err);
    if (rc != JP_OK)
        return rc;
    const json_t *p = json_array_get(json_object_get(a, "pods"), 0);
    jp_heap_histo latest, names;
    jp_heap_growth g;
    jp_heap_histo_init(&latest);
    jp_heap_histo_init(&names);
    jp_heap_growth_init(&g);
    const json_t *gj = json_object_get(p, "growth");
    if (!p) {
        rc = jp_error_set(err, JP_ERR_NOT_FOUND,
                          "no class histogram of pod %s stored in the last %s: the agent takes "
                          "them only in a temporary window that asks (jprof.io/heap-histogram)",
                          k->pod, tui_range_names[k->range]);
    } else if (!jp_heap_histo_from_json(json_object_get(p, "latest"), &latest, JP_HEAP_MAX_CLASSES,
                                        why, sizeof why) ||
               (json_is_object(gj) &&
                !jp_heap_growth_from_json(gj, &g, &names, JP_HEAP_MAX_CLASSES, why, sizeof why))) {
        rc = jp_error_set(err, JP_ERR_PROTOCOL, "jprof-server's heap answer: %s", why);
    } else {
        json_int_t n = json_integer_value(json_object_get(p, "histograms"));
        tui_heap_set_stored(&l->histograms, &latest, &g, &names,
                            n > 0 && n < UINT32_MAX ? (uint32_t)n : 1);
    }
    jp_heap_histo_cleanup(&latest);
    jp_heap_histo_cleanup(&names);
    jp_heap_growth_cleanup(&g);
    json_decref(a);
    return rc;
}

static void s_close(tui_target *l)
{
    sctx *k = ctx_of(l);
    if (!k)
        return;
    json_decref(k->gc);
    if (!k->borrowed)
        tui_client_free(k->r);
    json_decref(k->snap);
    free(k);
    l->src = NULL;
}

static const tui_source_ops server_ops = {
    .name = "server",
    .how = "jprof-server: what the agents recorded and uploaded",
    .refresh = s_refresh,
    .prof_start = s_prof_start,
    .prof_read = s_prof_read,
    .prof_stop = s_prof_stop,
    .prof_label = s_prof_label,
    .close = s_close,
    .busy = s_busy,
    .cpu = s_cpu,
    .status = s_status,
    .flame_key = s_flame_key,
    .gc = s_gc,
    .heap = s_heap,
    .heap_stored = true,
};

/* A connection of our own for each target (the list keeps its own). */
static jp_err connect_copy(const tui_client_opts *ro, tui_client **out, jp_error *err)
{
    tui_client *r = tui_client_new(ro);
    jp_err rc = tui_client_connect(r, err);
    if (rc != JP_OK) {
        tui_client_free(r);
        return rc;
    }
    *out = r;
    return JP_OK;
}

jp_err tui_server_open(const tui_client_opts *ro, const char *pod, long long pid, int range,
                       const tui_target_opts *o, tui_target **out, jp_error *err)
{
    *out = NULL;
    tui_client *r = NULL;
    jp_err rc = connect_copy(ro, &r, err);
    if (rc != JP_OK)
        return rc;
    *out = tui_server_open_on(r, pod, pid, range, o);
    return JP_OK;
}

tui_target *tui_server_open_on(tui_client *r, const char *pod, long long pid, int range,
                               const tui_target_opts *o)
{
    sctx *k = jp_xcalloc(1, sizeof *k);
    k->r = r;
    snprintf(k->pod, sizeof k->pod, "%s", pod);
    k->pid = pid;
    k->range = range >= 0 && range < TUI_RANGE_COUNT ? range : 1;
    k->dirty = true;
    tui_target_opts lo = *o;
    lo.window_ns = range_ns(k->range);
    tui_target *l = tui_target_new(&lo, &server_ops, k);
    snprintf(l->where, sizeof l->where, "%s/%s pod %s", r->ns, r->svc, pod);
    /* what the connection already read is the first screen */
    const json_t *e = our_entry(k);
    const json_t *snap = json_object_get(json_object_get(e, "summary"), "snapshot");
    jp_snapshot *s = snap ? jp_snapshot_from_json(snap) : NULL;
    if (s) {
        k->snap = json_deep_copy(snap);
        header_from(l, e, snap);
        snapshot_uptime(l, s);
        tui_target_accept(l, s);
    } else {
        pushed_source(r, pod, l);
    }
    return l;
}

tui_target *tui_server_target(tui_client *r, const json_t *entry, const tui_target_opts *o)
{
    const json_t *t = json_object_get(entry, "target");
    const char *pod = jp_query_str(t, "pod");
    const json_t *snap = json_object_get(json_object_get(entry, "summary"), "snapshot");
    if (!pod || !json_is_object(snap))
        return NULL;
    tui_target *l = tui_server_open_on(r, pod, jp_query_int(t, "pid", -1), 1, o);
    ctx_of(l)->borrowed = true;
    if (!l->cur) {
        tui_target_free(l);
        return NULL;
    }
    return l;
}

/* ---- the targets of a service ---- */

typedef struct spick {
    tui_client_opts ro;
    tui_client *r;
    int range;
    json_t *targets; /* the rows' targets, in order */
} spick;

static jp_err sp_scan(tui_picker *p, tui_pick_list *out, jp_error *err)
{
    spick *k = p->ctx;
    out->count = 0;
    /* the list needs the targets only, not every pod's whole snapshot */
    jp_err rc = tui_client_refresh_targets(k->r, err);
    if (rc != JP_OK)
        return rc;
    json_decref(k->targets);
    k->targets = json_incref(json_object_get(k->r->targets, "targets"));
    size_t i;
    json_t *t;
    json_array_foreach(k->targets, i, t)
    {
        tui_pick_row *row = tui_pick_list_add(out);
        row->disabled = tui_report_service_target_row(t, row->text, sizeof row->text);
    }
    return JP_OK;
}

static jp_err sp_open(tui_picker *p, size_t i, const tui_target_opts *o, tui_target **out,
                      jp_error *err)
{
    spick *k = p->ctx;
    const json_t *id = json_object_get(json_array_get(k->targets, i), "target");
    const char *pod = jp_query_str(id, "pod");
    if (!pod)
        return jp_error_set(err, JP_ERR_NOT_FOUND, "no such target in the list");
    return tui_server_open(&k->ro, pod, jp_query_int(id, "pid", -1), k->range, o, out, err);
}

static void sp_free(tui_picker *p)
{
    spick *k = p->ctx;
    json_decref(k->targets);
    tui_client_free(k->r);
    free(k);
}

tui_picker *tui_picker_server(tui_client *r, const tui_client_opts *ro, int range)
{
    tui_picker *p = jp_xcalloc(1, sizeof *p);
    spick *k = jp_xcalloc(1, sizeof *k);
    k->ro = *ro;
    k->r = r;
    k->range = range;
    snprintf(p->title, sizeof p->title, "pods and JVMs of %s/%s on jprof-server", r->ns, r->svc);
    tui_report_service_target_head(p->head, sizeof p->head);
    snprintf(p->empty, sizeof p->empty, "no target of %s/%s reported in the last day", r->ns,
             r->svc);
    p->rescan_ns = 5 * JP_NS_PER_SEC;
    p->scan = sp_scan;
    p->open = sp_open;
    p->free = sp_free;
    p->ctx = k;
    return p;
}

jp_err tui_server_first(tui_client *r, const char *pod, char *buf, size_t len, long long *pid,
                        jp_error *err)
{
    jp_err rc = tui_client_refresh(r, pod, err);
    if (rc != JP_OK)
        return rc;
    /* the newest snapshot (the server lists the latest per target) */
    const json_t *best = NULL;
    double best_age = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r->threads, "targets"), i, e)
    {
        double age = json_number_value(json_object_get(e, "age_seconds"));
        const json_t *t = json_object_get(e, "target");
        if (!jp_query_str(t, "pod") || (pod && strcmp(jp_query_str(t, "pod"), pod)))
            continue;
        if (!best || age < best_age) {
            best = t;
            best_age = age;
        }
    }
    /* none: a pod whose profiles another profiler pushes has no snapshots */
    json_array_foreach(json_object_get(r->targets, "targets"), i, e)
    {
        const char *mode = jp_query_str(e, "mode");
        const json_t *t = json_object_get(e, "target");
        if (!best && mode && !strcmp(mode, "pushed") && jp_query_str(t, "pod") &&
            (!pod || !strcmp(jp_query_str(t, "pod"), pod)))
            best = t;
    }
    if (!best)
        return jp_error_set(err, JP_ERR_NOT_FOUND, "no thread snapshot of %s%s in the last day",
                            pod ? "pod " : "any pod of the service", pod ? pod : "");
    snprintf(buf, len, "%s", jp_query_str(best, "pod"));
    *pid = jp_query_int(best, "pid", -1);
    return JP_OK;
}
