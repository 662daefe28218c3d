#include "agent/run.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/cgroup.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jvm/cleanup.h"
#include "jvm/proc.h"

#define ANN_MAX (JP_POD_ANN_MAX + AGENT_HOST_ANN_MAX + 1)

typedef struct slot {
    agent_target t;
    jp_kv ann[ANN_MAX]; /* owned strings */
    size_t nann;
    const char *block_reason; /* not profiled whatever the annotations say */
    char block_message[200];
} slot;

typedef struct run_state {
    const agent_run_opts *o;
    slot **slots;
    size_t n, cap;
    jp_pod_list pods;
    bool synced;
} run_state;

static char *dup0(const char *s)
{
    return s && *s ? jp_xstrdup(s) : NULL;
}

static void ann_clear(slot *s)
{
    for (size_t i = 0; i < s->nann; i++) {
        free((char *)s->ann[i].key);
        free((char *)s->ann[i].value);
    }
    s->nann = 0;
}

static void ann_add(slot *s, const char *k, const char *v)
{
    if (s->nann == ANN_MAX)
        return;
    s->ann[s->nann].key = jp_xstrdup(k);
    s->ann[s->nann].value = jp_xstrdup(v);
    s->nann++;
}

static void id_set(agent_target *t, const agent_run_opts *o, const char *ns, const char *svc,
                   const char *pod, const char *container, const char *workload)
{
    jp_batch_target_cleanup(&t->id);
    t->id.cluster = dup0(o->cluster);
    t->id.ns = dup0(ns);
    t->id.service = dup0(svc);
    t->id.pod = dup0(pod);
    t->id.container = dup0(container);
    t->id.workload = dup0(workload);
    t->id.node = dup0(o->node);
    t->id.pid = t->proc.pid;
    t->id.jvm_start_ns = t->proc.start_ns;
    t->id.jvm = dup0(t->jvm);
}

/* ---- naming a JVM ---- */

static void identify_host(run_state *rs, slot *s)
{
    const agent_run_opts *o = rs->o;
    char path[64], svc[256] = "", pod[320];
    static char cmd[65536];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)s->t.proc.pid);
    ssize_t n = jvm_read_small_file(path, cmd, sizeof cmd);
    if (n > 0)
        agent_host_service(cmd, (size_t)n, svc, sizeof svc);
    if (!svc[0])
        snprintf(svc, sizeof svc, "pid-%d", (int)s->t.proc.pid);
    snprintf(pod, sizeof pod, "%.250s:%d", o->node ? o->node : "host", (int)s->t.proc.pid);
    id_set(&s->t, o, o->ns, svc, pod, NULL, NULL);
    ann_clear(s);
    s->block_reason = NULL;
    const agent_host_entry *e =
        o->config ? agent_host_config_match(o->config, s->t.proc.pid, svc) : NULL;
    if (o->all || e)
        ann_add(s, JP_ANN_PROFILE, "continuous");
    for (size_t i = 0; e && i < e->nann; i++)
        ann_add(s, e->ann[i].key, e->ann[i].value);
}

static const jp_pod *find_pod(run_state *rs, const agent_cgroup *cg, const char **container)
{
    for (size_t i = 0; i < rs->pods.count; i++) {
        const jp_pod *p = &rs->pods.items[i];
        for (size_t c = 0; cg->container_id[0] && c < p->ncontainers; c++)
            if (p->containers[c].id && strcmp(p->containers[c].id, cg->container_id) == 0) {
                *container = p->containers[c].name;
                return p;
            }
    }
    for (size_t i = 0; cg->pod_uid[0] && i < rs->pods.count; i++)
        if (strcmp(rs->pods.items[i].uid, cg->pod_uid) == 0) {
            *container = NULL;
            return &rs->pods.items[i];
        }
    return NULL;
}

static void identify_k8s(run_state *rs, slot *s)
{
    agent_cgroup cg;
    agent_cgroup_read(s->t.proc.pid, &cg, NULL);
    const char *container = NULL;
    const jp_pod *p = find_pod(rs, &cg, &container);
    ann_clear(s);
    s->block_reason = NULL;
    if (!p) {
        /* named as in host mode, so the skip still shows up somewhere */
        identify_host(rs, s);
        ann_clear(s);
        if (!cg.container_id[0] && !cg.pod_uid[0]) {
            s->block_reason = "not_in_pod";
            snprintf(s->block_message, sizeof s->block_message,
                     "pid %d runs outside any container on this node", (int)s->t.proc.pid);
        } else {
            s->block_reason = rs->synced ? "pod_unknown" : "pods_not_synced";
            snprintf(s->block_message, sizeof s->block_message,
                     "container %.12s is not in a known pod of this node", cg.container_id);
        }
        return;
    }
    char svc[JP_POD_STR_MAX + 1], wl[JP_POD_STR_MAX + 32];
    jp_pod_service(p, svc, sizeof svc, wl, sizeof wl);
    id_set(&s->t, rs->o, p->ns, svc, p->name, container, wl);
    for (size_t i = 0; i < p->nann; i++)
        ann_add(s, p->ann[i].key, p->ann[i].value);
}

/* ---- discovery ---- */

static slot *find_slot(run_state *rs, const jvm_proc *p)
{
    for (size_t i = 0; i < rs->n; i++)
        if (rs->slots[i]->t.proc.pid == p->pid && rs->slots[i]->t.proc.start_ns == p->start_ns &&
            !rs->slots[i]->t.gone)
            return rs->slots[i];
    return NULL;
}

static void discover(run_state *rs, int64_t now_mono)
{
    const agent_run_opts *o = rs->o;
    if (o->mode == AGENT_RUN_K8S) {
        jp_pod_list_cleanup(&rs->pods);
        rs->synced = agent_k8s_pods_copy(o->k8s, &rs->pods);
    }
    jvm_proc_list l = {0};
    jp_error err;
    jp_error_init(&err);
    if (jvm_proc_list_local(&l, &err) != JP_OK)
        return; /* /proc unreadable this round: keep what we know */
    for (size_t i = 0; i < rs->n; i++)
        rs->slots[i]->t.seen = false;
    for (size_t i = 0; i < l.count; i++) {
        slot *s = find_slot(rs, &l.items[i]);
        if (!s) {
            s = jp_xcalloc(1, sizeof *s);
            agent_target_init(&s->t, &l.items[i], now_mono);
            // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
            rs->slots = jp_xgrow(rs->slots, &rs->cap, rs->n + 1, sizeof *rs->slots);
            rs->slots[rs->n++] = s;
        } else {
            /* fresh flags (maps change: someone may load a profiler) */
            s->t.proc.async_profiler = l.items[i].async_profiler;
            s->t.proc.attach_disabled = l.items[i].attach_disabled;
        }
        s->t.seen = true;
        if (o->mode == AGENT_RUN_K8S)
            identify_k8s(rs, s);
        else
            identify_host(rs, s);
    }
    for (size_t i = 0; i < rs->n; i++)
        if (!rs->slots[i]->t.seen && !rs->slots[i]->t.gone)
            agent_target_mark_gone(&rs->slots[i]->t);
    atomic_store(&o->metrics->jvms_discovered, l.count);
    jvm_proc_list_cleanup(&l);
}

static void step_all(run_state *rs, int64_t now_mono)
{
    const agent_run_opts *o = rs->o;
    int64_t now = jp_time_now_ns();
    uint64_t eligible = 0, active = 0;
    for (size_t i = 0; i < rs->n; i++) {
        slot *s = rs->slots[i];
        if (s->t.gone)
            continue;
        jp_policy_eval(s->ann, s->nann, now, &o->defaults, &s->t.policy);
        if (s->block_reason && s->t.policy.mode != JP_POLICY_DISABLED) {
            s->t.policy.profile = false;
            s->t.policy.reason = s->block_reason;
            snprintf(s->t.policy.message, sizeof s->t.policy.message, "%s", s->block_message);
        }
        agent_target_step(&s->t, &o->collect, now_mono);
        eligible += s->t.policy.profile;
        active += agent_target_recording(&s->t);
    }
    atomic_store(&o->metrics->jvms_eligible, eligible);
    atomic_store(&o->metrics->jvms_active, active);
}

/* ---- status ---- */

static void status_add(jp_batch *b, const agent_target *t, int64_t now)
{
    b->statuses = jp_xgrow(b->statuses, &b->statuses_cap, b->nstatuses + 1, sizeof *b->statuses);
    jp_batch_status *st = &b->statuses[b->nstatuses++];
    memset(st, 0, sizeof *st);
    jp_batch_target_copy(&st->target, &t->id);
    if (!st->target.ns)
        st->target.ns = jp_xstrdup("");
    st->time_ns = now;
    st->state = jp_xstrdup(t->state ? t->state : "skipped");
    st->reason = dup0(t->reason);
    st->message = dup0(t->message);
    st->engine = agent_target_engine(t) ? jp_xstrdup(agent_target_engine(t)) : NULL;
    st->mode = jp_xstrdup(jp_policy_mode_name(t->policy.mode));
    st->until_ns = t->policy.until_ns;
}

/* Moves the target's pending documents into the batch. */
static void docs_move(jp_batch *b, agent_target *t)
{
    for (size_t i = 0; i < t->ndocs; i++) {
        uint8_t k = t->doc_kinds[i];
        jp_batch_doc **arr = k == AGENT_DOC_HEAP       ? &b->heaps
                             : k == AGENT_DOC_DEADLOCK ? &b->deadlocks
                                                       : &b->snapshots;
        size_t *n = k == AGENT_DOC_HEAP       ? &b->nheaps
                    : k == AGENT_DOC_DEADLOCK ? &b->ndeadlocks
                                              : &b->nsnapshots;
        size_t *cap = k == AGENT_DOC_HEAP       ? &b->heaps_cap
                      : k == AGENT_DOC_DEADLOCK ? &b->deadlocks_cap
                                                : &b->snapshots_cap;
        *arr = jp_xgrow(*arr, cap, *n + 1, sizeof **arr);
        (*arr)[(*n)++] = t->docs[i];
    }
    t->ndocs = 0;
}

static void send_status(run_state *rs)
{
    const agent_run_opts *o = rs->o;
    if (!o->uploader)
        return;
    int64_t now = jp_time_now_ns();
    jp_batch b;
    jp_batch_init(&b);
    b.heartbeat = true;
    for (size_t i = 0; i < rs->n; i++) {
        agent_target *t = &rs->slots[i]->t;
        if (!t->id.service && !t->id.ns)
            continue;
        status_add(&b, t, now);
        docs_move(&b, t);
    }
    jp_error err;
    jp_error_init(&err);
    if (agent_upload_add(o->uploader, &b, now, &err) == JP_ERR_LIMIT) {
        /* too many documents for one batch: send the statuses alone */
        for (size_t i = 0; i < b.nsnapshots; i++) {
            jp_batch_target_cleanup(&b.snapshots[i].target);
            free(b.snapshots[i].json);
        }
        for (size_t i = 0; i < b.ndeadlocks; i++) {
            jp_batch_target_cleanup(&b.deadlocks[i].target);
            free(b.deadlocks[i].json);
        }
        for (size_t i = 0; i < b.nheaps; i++) {
            jp_batch_target_cleanup(&b.heaps[i].target);
            free(b.heaps[i].json);
        }
        b.nsnapshots = b.ndeadlocks = b.nheaps = 0;
        agent_upload_add(o->uploader, &b, now, &err);
    }
    jp_batch_cleanup(&b);
}

static json_t *jstr_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *pods_json(run_state *rs, int64_t now)
{
    json_t *a = json_array();
    for (size_t i = 0; i < rs->pods.count; i++) {
        const jp_pod *p = &rs->pods.items[i];
        jp_policy pol;
        jp_policy_eval(p->ann, p->nann, now, &rs->o->defaults, &pol);
        char svc[JP_POD_STR_MAX + 1], wl[JP_POD_STR_MAX + 32], until[40] = "";
        jp_pod_service(p, svc, sizeof svc, wl, sizeof wl);
        if (pol.until_ns)
            jp_rfc3339_format(pol.until_ns, until, sizeof until);
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:o, s:s, s:o}",
                                           "namespace", p->ns, "pod", p->name, "service", svc,
                                           "workload", wl, "mode", jp_policy_mode_name(pol.mode),
                                           "profile", pol.profile, "reason",
                                           jstr_or_null(pol.reason), "message", pol.message,
                                           "until", until[0] ? json_string(until) : json_null()));
    }
    return a;
}

static json_t *targets_json(run_state *rs)
{
    json_t *a = json_array();
    for (size_t i = 0; i < rs->n; i++) {
        const agent_target *t = &rs->slots[i]->t;
        json_t *o =
            json_pack("{s:i, s:o, s:o, s:o, s:o, s:s, s:o, s:s, s:s, s:b, s:I, s:s}", "pid",
                      (int)t->proc.pid, "namespace", jstr_or_null(t->id.ns), "service",
                      jstr_or_null(t->id.service), "pod", jstr_or_null(t->id.pod), "container",
                      jstr_or_null(t->id.container), "state", t->state ? t->state : "skipped",
                      "reason", jstr_or_null(t->reason), "message", t->message, "mode",
                      jp_policy_mode_name(t->policy.mode), "recording", agent_target_recording(t),
                      "windows", (json_int_t)t->windows, "main_class", t->proc.main_class);
        if (o && agent_target_engine(t))
            json_object_set_new(o, "engine", json_string(agent_target_engine(t)));
        if (o)
            json_array_append_new(a, o);
    }
    return a;
}

static void publish_status(run_state *rs)
{
    const agent_run_opts *o = rs->o;
    int64_t now = jp_time_now_ns();
    char when[40];
    jp_rfc3339_format(now, when, sizeof when);
    json_t *root = json_pack("{s:s, s:s, s:s, s:o}", "collector", o->collect.collector, "mode",
                             o->mode == AGENT_RUN_K8S ? "k8s" : "host", "time", when, "targets",
                             targets_json(rs));
    if (o->uploader) {
        uint64_t db = 0, dbytes = 0;
        int64_t oldest = 0;
        size_t qb = 0;
        char errbuf[256], refbuf[384], od[40] = "";
        agent_uploader_stats(o->uploader, &db, &dbytes, &oldest, &qb);
        agent_uploader_last_error(o->uploader, errbuf, sizeof errbuf);
        agent_uploader_last_refused(o->uploader, refbuf, sizeof refbuf);
        if (oldest)
            jp_rfc3339_format(oldest, od, sizeof od);
        json_object_set_new(
            root, "upload",
            json_pack("{s:I, s:I, s:I, s:o, s:s, s:I, s:I, s:s}", "queue_bytes", (json_int_t)qb,
                      "dropped_batches", (json_int_t)db, "dropped_bytes", (json_int_t)dbytes,
                      "oldest_dropped", od[0] ? json_string(od) : json_null(), "last_error", errbuf,
                      "windows_refused_future",
                      (json_int_t)atomic_load(&o->metrics->windows_refused_future),
                      "windows_refused_retention",
                      (json_int_t)atomic_load(&o->metrics->windows_refused_retention),
                      "last_refused", refbuf));
    }
    if (o->mode == AGENT_RUN_K8S) {
        char errbuf[256];
        agent_k8s_last_error(o->k8s, errbuf, sizeof errbuf);
        json_object_set_new(root, "k8s",
                            json_pack("{s:b, s:s, s:o, s:o}", "synced", rs->synced, "error", errbuf,
                                      "resource_version", jstr_or_null(rs->pods.resource_version),
                                      "pods", pods_json(rs, now)));
    }
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    agent_metrics_set_status(o->metrics, text ? text : jp_xstrdup("{}"));
    /* skipped targets by reason */
    const char *reasons[AGENT_REASONS_MAX];
    uint64_t counts[AGENT_REASONS_MAX];
    size_t nr = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const agent_target *t = &rs->slots[i]->t;
        if (!t->reason || strcmp(t->state ? t->state : "", "active") == 0)
            continue;
        size_t k = 0;
        while (k < nr && strcmp(reasons[k], t->reason) != 0)
            k++;
        if (k == nr && nr < AGENT_REASONS_MAX) {
            reasons[nr] = t->reason;
            counts[nr++] = 0;
        }
        if (k < nr)
            counts[k]++;
    }
    agent_metrics_set_skipped(o->metrics, reasons, counts, nr);
}

/* Drops targets whose exit was already reported. */
static void reap(run_state *rs)
{
    size_t w = 0;
    for (size_t i = 0; i < rs->n; i++) {
        slot *s = rs->slots[i];
        if (s->t.gone) {
            ann_clear(s);
            agent_target_cleanup(&s->t);
            free(s);
            continue;
        }
        rs->slots[w++] = s;
    }
    rs->n = w;
}

static void nap(int64_t ns, volatile sig_atomic_t *stop)
{
    while (ns > 0 && !*stop) {
        int64_t step = ns > 200000000 ? 200000000 : ns;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)step};
        nanosleep(&ts, NULL);
        ns -= step;
    }
}

void agent_run(const agent_run_opts *o, volatile sig_atomic_t *stop)
{
    run_state rs = {.o = o};
    jp_pod_list_init(&rs.pods);
    int64_t next_scan = 0, next_status = jp_time_mono_ns() + o->status_ns;
    while (!*stop) {
        int64_t now = jp_time_mono_ns();
        if (now >= next_scan) {
            discover(&rs, now);
            next_scan = now + o->scan_ns;
        }
        step_all(&rs, now);
        publish_status(&rs);
        if (jp_time_mono_ns() >= next_status) {
            send_status(&rs);
            reap(&rs);
            next_status = jp_time_mono_ns() + o->status_ns;
        }
        nap(now + o->tick_ns - jp_time_mono_ns(), stop);
    }
    for (size_t i = 0; i < rs.n; i++)
        agent_target_shutdown(&rs.slots[i]->t, &o->collect);
    publish_status(&rs);
    send_status(&rs);
    for (size_t i = 0; i < rs.n; i++)
        rs.slots[i]->t.gone = true;
    reap(&rs);
    free(rs.slots);
    jp_pod_list_cleanup(&rs.pods);
    jvm_cleanup_run_all();
}
