#include "agent/collect.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jfr/jfr.h"
#include "jvm/histogram.h"
#include "jvm/jfc.h"
#include "jvm/targetfs.h"
#include "wire/heap_json.h"
#include "wire/snapshot_json.h"

#define BACKOFF_MAX_NS (600 * JP_NS_PER_SEC)

void agent_collect_opts_init(agent_collect_opts *o)
{
    memset(o, 0, sizeof *o);
    o->window_ns = 60 * JP_NS_PER_SEC;
    o->jfr_jobs = 1;
    o->jfr_settings = JVM_ENGINE_JFR_OWN;
    o->cpu_interval_ns = 50 * JP_NS_PER_MS;
    o->dense_cpu_interval_ns = 10 * JP_NS_PER_MS;
    o->snapshot_low_ns = 60 * JP_NS_PER_SEC;
    o->snapshot_high_ns = 15 * JP_NS_PER_SEC;
    o->snap_source = JVM_SNAP_AUTO;
    o->collector = "jprof-agent";
    o->min_tmp_free = 64 << 20;
}

void agent_target_init(agent_target *t, const jvm_proc *p, int64_t now_mono)
{
    memset(t, 0, sizeof *t);
    t->proc = *p;
    t->seen_mono = now_mono;
    t->state = "skipped";
    /* the process CPU of the first snapshot counts from here, as the probe
     * and the local source count theirs from the attach (no "CPU ?" for a
     * pod's first snapshot); the heap is read with each snapshot */
    t->prev_stat.cpu_ns = jvm_proc_cpu_ns(p->pid);
    t->prev_stat.mono_ns = jp_time_mono_ns();
    t->prev_stat.heap_used = t->prev_stat.heap_committed = -1;
}

static void docs_clear(agent_target *t)
{
    for (size_t i = 0; i < t->ndocs; i++) {
        jp_batch_target_cleanup(&t->docs[i].target);
        free(t->docs[i].json);
    }
    t->ndocs = 0;
}

void agent_target_cleanup(agent_target *t)
{
    jvm_engine_free(t->engine);
    docs_clear(t);
    jp_snapshot_free(t->prev_snapshot);
    jp_batch_target_cleanup(&t->id);
    memset(t, 0, sizeof *t);
}

const char *agent_reason_for_error(jp_err e)
{
    switch (e) {
    case JP_ERR_PERMISSION:
        return "attach_permission";
    case JP_ERR_TIMEOUT:
        return "attach_timeout";
    case JP_ERR_EXITED:
    case JP_ERR_NOT_FOUND:
        return "exited";
    case JP_ERR_ATTACH_DISABLED:
        return "attach_disabled";
    case JP_ERR_AGENT_REFUSED:
        return "agent_refused";
    case JP_ERR_CONFLICT:
        return "conflict";
    case JP_ERR_NOT_JVM:
        return "unsupported_jvm";
    case JP_ERR_PROTOCOL:
        return "recording_failed";
    case JP_ERR_NOSPACE:
        return "target_disk_full";
    case JP_ERR_LIMIT:
    case JP_ERR_IO:
    case JP_ERR_FORMAT:
    case JP_ERR_TRUNCATED:
        return "read_failed";
    default:
        return "attach_failed";
    }
}

static void set_status(agent_target *t, const char *state, const char *reason, const char *msg)
{
    t->state = state;
    t->reason = reason;
    snprintf(t->message, sizeof t->message, "%.300s", msg ? msg : "");
}

static uint64_t rnd(void)
{
    uint64_t v;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v)
        v = (uint64_t)jp_time_mono_ns() * 0x9e3779b97f4a7c15ULL;
    return v;
}

/* The window length for this round: +-10 % jitter. */
static int64_t jittered(int64_t w)
{
    int64_t span = w / 5;
    return w - span / 2 + (span > 0 ? (int64_t)(rnd() % (uint64_t)span) : 0);
}

static void fail(agent_target *t, const agent_collect_opts *o, jp_err rc, const jp_error *err,
                 int64_t now_mono)
{
    const char *reason = agent_reason_for_error(rc);
    bool exited = strcmp(reason, "exited") == 0;
    set_status(t, exited ? "exited" : "failed", reason, err->msg);
    if (exited && t->engine)
        jvm_engine_forget(t->engine); /* its session ended with it */
    bool attach = rc == JP_ERR_PERMISSION || rc == JP_ERR_TIMEOUT || rc == JP_ERR_ATTACH_DISABLED ||
                  rc == JP_ERR_AGENT_REFUSED || rc == JP_ERR_NOT_JVM;
    if (o->metrics)
        atomic_fetch_add(attach ? &o->metrics->attach_failures : &o->metrics->recording_failures,
                         1);
    t->failures++;
    int64_t d = o->window_ns / 4 > 0 ? o->window_ns / 4 : JP_NS_PER_SEC;
    for (unsigned i = 1; i < t->failures && d < BACKOFF_MAX_NS; i++)
        d *= 2;
    if (d > BACKOFF_MAX_NS)
        d = BACKOFF_MAX_NS;
    t->retry_mono = now_mono + d;
}

/* JP_ERR_NOSPACE when the target's /tmp is below o->min_tmp_free. A running
 * session is stopped then, its window lost: a JFR repository that cannot be
 * written makes the JDK shut the JVM down ("irrecoverable error in Jfr"). */
static jp_err check_tmp_space(agent_target *t, const agent_collect_opts *o, jp_error *err)
{
    uint64_t avail;
    if (!o->min_tmp_free || jvm_tmp_free_bytes(&t->proc, &avail, NULL) != JP_OK ||
        avail >= o->min_tmp_free)
        return JP_OK; /* a statvfs that fails is not a full disk: the steps say what fails */
    bool was = agent_target_recording(t);
    if (was)
        jvm_engine_stop(t->engine, NULL);
    return jp_error_set(err, JP_ERR_NOSPACE,
                        "no space left: the target's /tmp has %llu KiB free, below %llu KiB: %s "
                        "(the JDK stops the JVM when its recording cannot be written)",
                        (unsigned long long)(avail / 1024),
                        (unsigned long long)(o->min_tmp_free / 1024),
                        was ? "recording stopped, this window is lost" : "not recording");
}

/* ---- the engine's windows ---- */

/* Makes the engine on the first step: fixed for the agent's run. */
static jp_err ensure_engine(agent_target *t, const agent_collect_opts *o, jp_error *err)
{
    if (t->engine)
        return JP_OK;
    jvm_engine_opts eo;
    jvm_engine_opts_init(&eo);
    eo.kind = o->asprof_lib ? JVM_ENGINE_ASPROF : JVM_ENGINE_JFR;
    eo.session = AGENT_SESSION;
    eo.collector = o->collector;
    eo.asprof_lib = o->asprof_lib;
    eo.jfr_settings = o->jfr_settings;
    return jvm_engine_new(&t->proc, &eo, &t->engine, err);
}

bool agent_target_recording(const agent_target *t)
{
    return t->engine && jvm_engine_running(t->engine);
}

const char *agent_target_engine(const agent_target *t)
{
    return t->engine && (agent_target_recording(t) || t->windows) ? jvm_engine_name(t->engine)
                                                                  : NULL;
}

/* Queues a parsed window; its own time range wins over the given one. */
static void upload_window(agent_target *t, const agent_collect_opts *o, jp_profile *p,
                          const jfr_report *rep, int64_t start_ns, int64_t end_ns)
{
    if (rep->partial && o->metrics)
        atomic_fetch_add(&o->metrics->recording_failures, 1);
    if (p->start_ns && p->end_ns > p->start_ns) {
        start_ns = p->start_ns;
        end_ns = p->end_ns;
    }
    if (o->uploader)
        agent_upload_profile(o->uploader, p, &t->id, start_ns, end_ns);
    if (o->metrics)
        atomic_fetch_add(&o->metrics->windows_collected, 1);
    t->windows++;
}

static void parse_options(const agent_target *t, const agent_collect_opts *o, jfr_options *jo)
{
    jfr_options_init(jo);
    jo->kinds = t->policy.kinds;
    jo->threads = true;
    jo->jobs = o->jfr_jobs > 0 ? o->jfr_jobs : 1;
}

/* Finishes the running window: the engine stops, reads and parses it; the
 * profile is queued. */
static jp_err finish_window(agent_target *t, const agent_collect_opts *o, jp_error *err)
{
    jfr_options jo;
    parse_options(t, o, &jo);
    jfr_report rep;
    jfr_report_init(&rep);
    jp_profile *p = jp_profile_new();
    jp_err rc = jvm_engine_finish(t->engine, &jo, p, &rep, err);
    if (rc == JP_OK)
        upload_window(t, o, p, &rep, t->window_start_ns, jp_time_now_ns());
    jp_profile_free(p);
    return rc;
}

/* The JVM's name and version for the target identity (one attach per run). */
static void read_version(agent_target *t)
{
    jvm_reply r;
    if (jvm_jcmd(&t->proc, NULL, "VM.version", &r, NULL) != JP_OK)
        return;
    /* "OpenJDK 64-Bit Server VM version 17.0.15+6-Debian-1deb12u1" */
    for (char *line = r.text; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        const char *v = memmem(line, n, " version ", 9);
        if (v) {
            snprintf(t->jvm, sizeof t->jvm, "%.*s %.*s", (int)(v - line), line,
                     (int)(n - (size_t)(v + 9 - line)), v + 9);
            break;
        }
        line = nl ? nl + 1 : NULL;
    }
    t->jdk_major = jvm_jdk_major(r.text);
    jvm_reply_cleanup(&r);
    free(t->id.jvm);
    t->id.jvm = t->jvm[0] ? jp_xstrdup(t->jvm) : NULL;
}

/* Once per agent run: an earlier run's session still going is taken over
 * and its data queued as a window (its start is unknown here; the
 * recording's own range wins when known). */
static jp_err check_earlier(agent_target *t, const agent_collect_opts *o, jp_error *err)
{
    read_version(t);
    jfr_options jo;
    parse_options(t, o, &jo);
    jfr_report rep;
    jfr_report_init(&rep);
    jp_profile *p = jp_profile_new();
    bool found = false, salvaged = false;
    jp_err rc = jvm_engine_recover(t->engine, &jo, p, &rep, &found, &salvaged, err);
    int64_t now = jp_time_now_ns();
    if (rc == JP_OK && salvaged)
        upload_window(t, o, p, &rep, now - o->window_ns, now);
    else if (rc == JP_OK && rep.partial && o->metrics)
        atomic_fetch_add(&o->metrics->recording_failures, 1);
    jp_profile_free(p);
    t->recovered = rc == JP_OK && found;
    t->checked = rc == JP_OK;
    return rc;
}

/* Starts the next window: dense cpu sampling in a temporary window
 * (someone is looking at an incident), sparse when profiled continuously. */
static jp_err start_window(agent_target *t, const agent_collect_opts *o, int64_t now_mono,
                           jp_error *err)
{
    jvm_engine_window w;
    jvm_engine_window_init(&w);
    w.kinds = t->policy.kinds;
    w.jdk_major = t->jdk_major;
    w.cpu_interval_ns =
        t->policy.mode == JP_POLICY_TEMPORARY ? o->dense_cpu_interval_ns : o->cpu_interval_ns;
    jp_err rc = jvm_engine_start(t->engine, &w, err);
    if (rc != JP_OK)
        return rc;
    t->window_start_ns = jp_time_now_ns();
    t->window_end_mono = now_mono + jittered(o->window_ns);
    return JP_OK;
}

/* ---- thread snapshots ---- */

static void add_doc(agent_target *t, const char *json, agent_doc_kind kind, int64_t time_ns)
{
    if (t->ndocs == AGENT_DOCS_MAX) { /* keep the newest */
        jp_batch_target_cleanup(&t->docs[0].target);
        free(t->docs[0].json);
        memmove(&t->docs[0], &t->docs[1], (AGENT_DOCS_MAX - 1) * sizeof t->docs[0]);
        memmove(&t->doc_kinds[0], &t->doc_kinds[1], (AGENT_DOCS_MAX - 1) * sizeof t->doc_kinds[0]);
        t->ndocs--;
    }
    jp_batch_doc *d = &t->docs[t->ndocs];
    memset(d, 0, sizeof *d);
    jp_batch_target_copy(&d->target, &t->id);
    d->time_ns = time_ns;
    d->json = jp_xstrdup(json);
    d->len = strlen(json);
    t->doc_kinds[t->ndocs] = (uint8_t)kind;
    t->ndocs++;
}

/* The batch identity of the target, as docs/API.md wants it on documents
 * (the snapshot's own "target" only knows the process). */
static json_t *target_json(const agent_target *t)
{
    const jp_batch_target *id = &t->id;
    json_t *o = json_object();
    const struct {
        const char *k, *v;
    } f[] = {{"namespace", id->ns ? id->ns : ""},
             {"service", id->service},
             {"pod", id->pod},
             {"cluster", id->cluster},
             {"workload", id->workload},
             {"container", id->container},
             {"node", id->node},
             {"jvm", id->jvm},
             {"main_class", t->proc.main_class},
             {"user", t->proc.user}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].v)
            json_object_set_new(o, f[i].k, json_string(f[i].v));
    json_object_set_new(o, "pid", json_integer(t->proc.pid));
    if (t->proc.start_ns)
        json_object_set_new(o, "jvm_start", json_integer(t->proc.start_ns));
    return o;
}

/* Adds {"target": identity, "time": ns, <key>: obj} (docs/API.md, "Thread
 * snapshot" and "Deadlock"); with key NULL the members of obj are merged in
 * (deadlock entries are sent as they are, with target and time added). */
static void add_json_doc(agent_target *t, const char *key, json_t *obj, agent_doc_kind kind,
                         int64_t when)
{
    json_t *doc = key ? json_object() : json_copy(obj);
    if (key)
        json_object_set(doc, key, obj);
    json_object_set_new(doc, "target", target_json(t));
    json_object_set_new(doc, "time", json_integer(when));
    char *text = json_dumps(doc, JSON_COMPACT);
    if (text)
        add_doc(t, text, kind, when);
    free(text);
    json_decref(doc);
}

static void take_snapshot(agent_target *t, const agent_collect_opts *o)
{
    jvm_snap_opts so;
    jvm_snap_opts_init(&so);
    so.source = o->snap_source;
    jp_snapshot *snap = NULL;
    jp_error fb, err;
    jp_error_init(&fb);
    jp_error_init(&err);
    jp_err rc = jvm_snapshot_take(&t->proc, NULL, &so, &snap, &fb, &err);
    if (rc != JP_OK) {
        if (o->metrics)
            atomic_fetch_add(&o->metrics->snapshot_failures, 1);
        return;
    }
    if (o->metrics)
        atomic_fetch_add(&o->metrics->snapshots_taken, 1);
    /* the header's figures (process CPU since the previous snapshot, heap),
     * which jprof-top -s and the page show for the pod */
    jvm_procstat now;
    jvm_procstat_read(&t->proc, NULL, &now);
    jvm_procstat_to_snapshot(&t->prev_stat, &now, snap);
    t->prev_stat = now;
    jp_snapjson_target st = {.pid = (int)t->proc.pid,
                             .main_class = t->proc.main_class,
                             .user = t->proc.user,
                             .start_ns = t->proc.start_ns};
    jp_snapjson_opts jo;
    jp_snapjson_opts_init(&jo);
    jo.max_frames = 64;
    json_t *j = jp_snapshot_json(snap, t->prev_snapshot, &st, &jo);
    int64_t when = snap->taken_ns ? snap->taken_ns : jp_time_now_ns();
    add_json_doc(t, "snapshot", j, AGENT_DOC_SNAPSHOT, when);
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(j, "deadlocks"), i, d)
    {
        if (json_is_object(d))
            add_json_doc(t, NULL, d, AGENT_DOC_DEADLOCK, when);
    }
    json_decref(j);
    jp_snapshot_free(t->prev_snapshot);
    t->prev_snapshot = snap;
}

static void maybe_snapshot(agent_target *t, const agent_collect_opts *o, int64_t now_mono)
{
    if (t->policy.threads == JP_THREADS_OFF || now_mono < t->next_snapshot_mono)
        return;
    int64_t every = t->policy.threads == JP_THREADS_HIGH ? o->snapshot_high_ns : o->snapshot_low_ns;
    t->next_snapshot_mono = now_mono + every;
    take_snapshot(t, o);
}

/* ---- class histograms (jprof.io/heap-histogram) ---- */

static void take_heap(agent_target *t, const agent_collect_opts *o)
{
    jp_heap_histo h;
    jp_heap_histo_init(&h);
    jp_error err;
    jp_error_init(&err);
    if (jvm_histogram_take(&t->proc, NULL, false, &h, &err) != JP_OK) {
        if (o->metrics)
            atomic_fetch_add(&o->metrics->heap_histogram_failures, 1);
        jp_heap_histo_cleanup(&h);
        return;
    }
    if (o->metrics)
        atomic_fetch_add(&o->metrics->heap_histograms_taken, 1);
    t->heap_took_ns = h.took_ns;
    t->heaps++;
    json_t *j = jp_heap_histo_json(&h, JP_BATCH_HEAP_CLASSES);
    add_json_doc(t, "histogram", j, AGENT_DOC_HEAP, h.time_ns);
    json_decref(j);
    jp_heap_histo_cleanup(&h);
}

static void maybe_heap(agent_target *t, const agent_collect_opts *o, int64_t now_mono)
{
    if (!t->policy.heap_every_ns) {
        t->next_heap_mono = 0; /* a later window starts with one */
        return;
    }
    if (t->next_heap_mono && now_mono < t->next_heap_mono)
        return;
    t->next_heap_mono = now_mono + t->policy.heap_every_ns;
    take_heap(t, o);
}

/* ---- the step ---- */

static void stop_for_policy(agent_target *t, const agent_collect_opts *o)
{
    jp_error err;
    jp_error_init(&err);
    if (agent_target_recording(t)) {
        finish_window(t, o, &err);
        jvm_engine_release(t->engine);
    }
    bool was_active = t->windows > 0 || strcmp(t->state, "active") == 0;
    set_status(t, was_active ? "stopped" : "skipped", t->policy.reason, t->policy.message);
}

static bool gate(agent_target *t, const agent_collect_opts *o, int64_t now_mono)
{
    if (t->proc.attach_disabled) {
        set_status(t, "skipped", "attach_disabled",
                   "the JVM runs with -XX:+DisableAttachMechanism");
        return false;
    }
    /* the maps are read only while no session of ours runs */
    if (!agent_target_recording(t) && jvm_engine_foreign(t->engine, NULL) == JP_ERR_CONFLICT) {
        set_status(t, "skipped", "conflict",
                   "an async-profiler someone else loaded is active; jprof leaves this JVM alone");
        return false;
    }
    int64_t uptime = t->proc.uptime_ns + (now_mono - t->seen_mono);
    if (uptime < t->policy.startup_delay_ns) {
        char msg[96];
        snprintf(msg, sizeof msg, "profiling starts %llds after JVM start",
                 (long long)(t->policy.startup_delay_ns / JP_NS_PER_SEC));
        set_status(t, "waiting", "startup_delay", msg);
        return false;
    }
    if (now_mono < t->retry_mono)
        return false; /* keeps the failure status until the retry */
    return true;
}

/* The status message of an active target. */
static const char *active_message(const agent_target *t)
{
    jvm_engine_window w;
    jvm_engine_window_init(&w);
    w.kinds = t->policy.kinds;
    w.jdk_major = t->jdk_major;
    if (jvm_engine_kind_of(t->engine) == JVM_ENGINE_JFR &&
        jvm_engine_unsupported(t->engine, t->policy.kinds))
        return "wall, nativemem, live and nativelock need async-profiler; the JDK engine records "
               "the other kinds";
    if (jvm_engine_kind_of(t->engine) == JVM_ENGINE_ASPROF &&
        (t->policy.kinds & (1u << JP_KIND_IO)))
        return "io comes from the JDK's own I/O events: async-profiler records the other kinds";
    if (jvm_engine_records_cputime(t->engine, &w))
        return "JDK 25: cpu also recorded as cputime (jdk.CPUTimeSample, CPU-time sampling)";
    return t->recovered ? "recovered the session of an earlier agent run" : "";
}

/* The status message: base, then what the heap histograms do (each one
 * pauses the JVM, so the status says how long the last one took). */
static void heap_message(const agent_target *t, const char *base, char *buf, size_t len)
{
    const char *sep = *base ? "; " : "";
    if (t->policy.heap_every_ns && t->heaps)
        snprintf(buf, len,
                 "%s%sclass histogram every %llds, the last paused the JVM %.0f ms (a full GC and "
                 "a heap walk)",
                 base, sep, (long long)(t->policy.heap_every_ns / JP_NS_PER_SEC),
                 (double)t->heap_took_ns / 1e6);
    else if (t->policy.heap_every_ns)
        snprintf(buf, len, "%s%sclass histogram every %llds", base, sep,
                 (long long)(t->policy.heap_every_ns / JP_NS_PER_SEC));
    else if (t->policy.heap_outside)
        snprintf(buf, len,
                 "%s%s%s applies in a profile-until window only: no class histogram taken", base,
                 sep, JP_ANN_HEAP);
    else
        snprintf(buf, len, "%s", base);
}

void agent_target_step(agent_target *t, const agent_collect_opts *o, int64_t now_mono)
{
    if (t->gone)
        return;
    jp_error err;
    jp_error_init(&err);
    jp_err rc = ensure_engine(t, o, &err);
    if (rc == JP_OK && !t->policy.profile) {
        stop_for_policy(t, o);
        return;
    }
    if (rc == JP_OK && !gate(t, o, now_mono))
        return;
    if (rc == JP_OK && !t->checked)
        rc = check_earlier(t, o, &err);
    if (rc == JP_OK)
        rc = check_tmp_space(t, o, &err);
    if (rc == JP_OK && agent_target_recording(t) && now_mono >= t->window_end_mono)
        rc = finish_window(t, o, &err);
    if (rc == JP_OK && !agent_target_recording(t))
        rc = start_window(t, o, now_mono, &err);
    if (rc != JP_OK) {
        fail(t, o, rc, &err, now_mono);
        return;
    }
    t->failures = 0;
    maybe_heap(t, o, now_mono);
    char msg[sizeof t->message];
    heap_message(t, active_message(t), msg, sizeof msg);
    set_status(t, "active", NULL, msg);
    maybe_snapshot(t, o, now_mono);
}

void agent_target_mark_gone(agent_target *t)
{
    /* Its /proc/PID/root is gone: the engine removes what is still
     * reachable (files on a root shared with us) and its marker - a JVM
     * that exited mid-window failed its last stop, and its marker names a
     * session nobody can recover. */
    if (t->engine)
        jvm_engine_forget(t->engine);
    t->gone = true;
    set_status(t, "exited", "exited", "the JVM exited");
}

void agent_target_shutdown(agent_target *t, const agent_collect_opts *o)
{
    bool was = agent_target_recording(t);
    jp_error err;
    jp_error_init(&err);
    if (was)
        finish_window(t, o, &err);
    /* also when a failing target still holds files of the engine */
    if (t->engine && !t->gone)
        jvm_engine_release(t->engine);
    if (was)
        set_status(t, "stopped", "agent_stopped", "the agent is shutting down");
}
