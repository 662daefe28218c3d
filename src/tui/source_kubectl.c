/* source_kubectl.c - a pod through `kubectl exec` as a source of the
 * screens (source.h): jprof-probe streamed into the container
 * (kube/kube.h) takes the snapshots and records the profile window there;
 * what comes back is the model the local-pid source gives. The GC screen
 * is the probe's GC summary of that window (it reads the JFR it records in
 * the pod with the same model), drawn as for a recording. */
#include "tui/source_kubectl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "tui/report_gc.h"
#include "tui/target.h"

typedef struct kctx {
    kube_session *s;
    bool recording;
} kctx;

static kctx *ctx_of(const tui_target *l)
{
    return l->src;
}

static jp_err k_refresh(tui_target *l, jp_snapshot **out, jp_error *err)
{
    int64_t t0 = jp_time_mono_ns();
    jp_err rc = kube_session_snapshot(ctx_of(l)->s, out, err);
    l->snapshot_ms = (double)(jp_time_mono_ns() - t0) / 1e6;
    return rc;
}

/* The kinds of the Flame screen: what the JDK's "profile" settings give. */
#define KUBE_PROF_KINDS                                                                            \
    ((1u << JP_KIND_CPU) | (1u << JP_KIND_ALLOC) | (1u << JP_KIND_LOCK) | (1u << JP_KIND_PARK))

static jp_err k_prof_start(tui_target *l, jp_error *err)
{
    kctx *k = ctx_of(l);
    jp_err rc = kube_session_profile_start(k->s, KUBE_PROF_KINDS, 0, l->opts.window_ns, err);
    if (rc == JP_OK) {
        k->recording = true;
        l->prof.started_mono = jp_time_mono_ns();
    }
    return rc;
}

static jp_err k_prof_read(tui_target *l, jp_profile **out, jfr_report *rep, bool *tail,
                          jp_error *err)
{
    *tail = false;
    jp_err rc = kube_session_profile_read(ctx_of(l)->s, out, err);
    if (rc != JP_OK)
        return rc;
    /* the probe sends the window's stacks: its span is the window, or less
     * right after the start */
    int64_t now = jp_time_now_ns();
    int64_t since = jp_time_mono_ns() - l->prof.started_mono;
    rep->end_ns = now;
    rep->start_ns = now - (since < l->opts.window_ns ? since : l->opts.window_ns);
    return JP_OK;
}

static void k_prof_stop(tui_target *l)
{
    kctx *k = ctx_of(l);
    if (!k->recording)
        return;
    k->recording = false;
    jp_error err;
    jp_error_init(&err);
    kube_session_profile_stop(k->s, &err); /* the probe stops it at bye in any case */
}

static const char *k_prof_engine(const tui_target *l)
{
    (void)l;
    return "the JDK Flight Recorder";
}

static bool k_alive(const tui_target *l)
{
    return kube_session_alive(ctx_of(l)->s);
}

static void k_prof_label(const tui_target *l, char *buf, size_t len)
{
    snprintf(buf, len, "JFR window %.0fs in the pod", (double)l->opts.window_ns / 1e9);
}

/* The window's summary from the probe; one window, so no pause sparkline
 * (the pauses' times stay in the pod). */
static void k_gc(tui_target *l, int width, tui_lines *ls)
{
    const jp_gc_window *w = kube_session_gc(ctx_of(l)->s);
    const jp_profile *p = l->prof.profile;
    if (!p && !w) {
        tui_lines_add(ls, TUI_STYLE_DIM, 0,
                      "recording in the pod; the GC summary comes with the first window");
        return;
    }
    tui_gc_data d = {
        .recorded = w != NULL,
        .span = "the window",
        .none = "GC: the probe sent no GC summary for this window (no collection yet, or an "
                "older jprof-probe)"};
    if (w) {
        d.s = w->s;
        d.window_ns = w->s.to_ns > w->s.from_ns ? w->s.to_ns - w->s.from_ns : 0;
    }
    tui_report_gc_data(&d, p, width, 10, ls);
}

static void k_close(tui_target *l)
{
    kctx *k = ctx_of(l);
    if (!k)
        return;
    kube_session_close(k->s); /* bye: the probe removes itself and its files */
    free(k);
    l->src = NULL;
}

kube_session *tui_kubectl_session(const tui_target *l)
{
    return l->ops->close == k_close && l->src ? ctx_of(l)->s : NULL;
}

/* A class histogram through the probe in the pod (it pauses the JVM: only
 * when the user asks). */
static jp_err k_heap(tui_target *l, bool all, jp_error *err)
{
    jp_heap_histo h;
    jp_heap_histo_init(&h);
    jp_err rc = kube_session_heap(ctx_of(l)->s, all, &h, err);
    if (rc == JP_OK)
        tui_heap_add(&l->histograms, &h);
    jp_heap_histo_cleanup(&h);
    return rc;
}

/* The container's other JVMs, when it runs more than one. */
static void k_status(const tui_target *l, tui_lines *ls)
{
    char others[1024];
    if (kube_hello_others(kube_session_hello(ctx_of(l)->s), others, sizeof others))
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "other JVMs in the container: %s", others);
}

size_t tui_kubectl_others(const tui_target *l, char *buf, size_t len)
{
    kube_session *s = tui_kubectl_session(l);
    buf[0] = '\0';
    return s ? kube_hello_others(kube_session_hello(s), buf, len) : 0;
}

static const tui_source_ops kubectl_ops = {
    .name = "kubectl",
    .heap = k_heap,
    .status = k_status,
    .how = "kubectl exec into the pod, jprof-probe in the container",
    .prof_engine = k_prof_engine,
    .alive = k_alive,
    .gc = k_gc,
    .refresh = k_refresh,
    .prof_start = k_prof_start,
    .prof_read = k_prof_read,
    .prof_stop = k_prof_stop,
    .prof_label = k_prof_label,
    .close = k_close,
};

jp_err tui_kubectl_open(const kube_opts *ko, const char *pod, const char *container,
                        const jp_pod *p, const tui_target_opts *o, tui_target **out, jp_error *err)
{
    *out = NULL;
    kube_session *s = NULL;
    jp_err rc = kube_session_open(ko, pod, container, p, &s, err);
    if (rc != JP_OK)
        return rc;
    const kube_hello *h = kube_session_hello(s);
    if (!h->has_jvm) {
        rc = jp_error_set(err, h->error_code, "pod %s, container %s: no JVM to inspect%s%s", pod,
                          kube_session_container(s), h->error[0] ? ": " : "", h->error);
        kube_session_close(s);
        return rc;
    }
    kctx *k = jp_xcalloc(1, sizeof *k);
    k->s = s;
    tui_target *l = tui_target_new(o, &kubectl_ops, k);
    l->proc.pid = h->jvm_pid;
    snprintf(l->proc.main_class, sizeof l->proc.main_class, "%s", h->main_class);
    snprintf(l->proc.user, sizeof l->proc.user, "%s", h->user);
    l->proc.start_ns = h->jvm_start_ns;
    l->proc.uptime_ns = h->jvm_uptime_ns;
    snprintf(l->jvm_version, sizeof l->jvm_version, "%s", h->jvm_version);
    snprintf(l->where, sizeof l->where, "pod %s%s%s/%s", ko->ns ? ko->ns : "", ko->ns ? "/" : "",
             pod, kube_session_container(s));
    /* the probe picks the snapshot source; only Thread.print in a pod */
    l->snap.source = JVM_SNAP_THREAD_PRINT;
    *out = l;
    return JP_OK;
}

/* ---- the pods of a service ---- */

typedef struct kpick {
    kube_opts ko;
    char *service, *container;
    jp_pod_list pods;
    bool listed; /* pods holds a list not shown yet: the first scan uses it */
} kpick;

static jp_err kp_scan(tui_picker *p, tui_pick_list *out, jp_error *err)
{
    kpick *k = p->ctx;
    out->count = 0;
    if (!k->listed) {
        jp_pod_list_cleanup(&k->pods);
        jp_pod_list_init(&k->pods);
        jp_err rc = kube_pods_for_service(&k->ko, k->service, &k->pods, err);
        if (rc != JP_OK)
            return rc;
    }
    k->listed = false;
    for (size_t i = 0; i < k->pods.count; i++) {
        const jp_pod *pod = &k->pods.items[i];
        tui_pick_row *r = tui_pick_list_add(out);
        snprintf(r->text, sizeof r->text, "%-48.48s %-24.24s %s", pod->name ? pod->name : "?",
                 pod->node ? pod->node : "-", pod->phase ? pod->phase : "?");
        r->disabled = pod->phase && strcmp(pod->phase, "Running") != 0;
    }
    return JP_OK;
}

static jp_err kp_open(tui_picker *p, size_t i, const tui_target_opts *o, tui_target **out,
                      jp_error *err)
{
    kpick *k = p->ctx;
    if (i >= k->pods.count)
        return jp_error_set(err, JP_ERR_NOT_FOUND, "no such pod in the list");
    const jp_pod *pod = &k->pods.items[i];
    if (pod->phase && strcmp(pod->phase, "Running") != 0)
        return jp_error_set(err, JP_ERR_USAGE, "pod %s is %s, not Running", pod->name, pod->phase);
    return tui_kubectl_open(&k->ko, pod->name, k->container, pod, o, out, err);
}

static void kp_free(tui_picker *p)
{
    kpick *k = p->ctx;
    jp_pod_list_cleanup(&k->pods);
    free(k->service);
    free(k->container);
    free(k);
}

tui_picker *tui_picker_kubectl(const kube_opts *ko, const char *service, const char *container,
                               jp_pod_list *pods)
{
    tui_picker *p = jp_xcalloc(1, sizeof *p);
    kpick *k = jp_xcalloc(1, sizeof *k);
    k->ko = *ko;
    k->service = jp_xstrdup(service);
    k->container = container ? jp_xstrdup(container) : NULL;
    jp_pod_list_init(&k->pods);
    if (pods) {
        k->pods = *pods;
        k->listed = true;
        jp_pod_list_init(pods);
    }
    snprintf(p->title, sizeof p->title, "pods of service %s%s%s", ko->ns ? ko->ns : "",
             ko->ns ? "/" : "", service);
    snprintf(p->head, sizeof p->head, "%-48s %-24s %s", "POD", "NODE", "PHASE");
    snprintf(p->empty, sizeof p->empty, "no pod found for service %s", service);
    p->rescan_ns = 0; /* kubectl is slow to ask: r is not needed, Enter opens */
    p->scan = kp_scan;
    p->open = kp_open;
    p->free = kp_free;
    p->ctx = k;
    return p;
}
