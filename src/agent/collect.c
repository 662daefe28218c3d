#include "agent/collect.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jfr/jfr.h"
#include "jvm/attach.h"
#include "jvm/cleanup.h"
#include "jvm/jfc.h"
#include "jvm/recorder.h"
#include "jvm/targetfs.h"
#include "wire/snapshot_json.h"

#define BACKOFF_MAX_NS (600 * JP_NS_PER_SEC)

void agent_collect_opts_init(agent_collect_opts *o)
{
    memset(o, 0, sizeof *o);
    o->window_ns = 60 * JP_NS_PER_SEC;
    o->jfr_settings = AGENT_JFR_SETTINGS_OWN;
    o->cpu_interval_ns = 50 * JP_NS_PER_MS;
    o->dense_cpu_interval_ns = 10 * JP_NS_PER_MS;
    o->snapshot_low_ns = 60 * JP_NS_PER_SEC;
    o->snapshot_high_ns = 15 * JP_NS_PER_SEC;
    o->snap_source = JVM_SNAP_AUTO;
    o->collector = "jprof-agent";
}

void agent_target_init(agent_target *t, const jvm_proc *p, int64_t now_mono)
{
    memset(t, 0, sizeof *t);
    t->proc = *p;
    t->seen_mono = now_mono;
    t->state = "skipped";
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
    if (t->cleanup)
        jvm_cleanup_unregister(t->cleanup);
    if (t->asprof)
        agent_asprof_remove_all(&t->ap);
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

static void marker_remove(const agent_target *t);

static void fail(agent_target *t, const agent_collect_opts *o, jp_err rc, const jp_error *err,
                 int64_t now_mono)
{
    const char *reason = agent_reason_for_error(rc);
    bool exited = strcmp(reason, "exited") == 0;
    set_status(t, exited ? "exited" : "failed", reason, err->msg);
    if (exited)
        marker_remove(t); /* its session ended with it */
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

/* ---- the session marker in the target's /tmp/jprof ---- */

/* One marker per JVM: in host mode the JVMs share one /tmp. */
static void marker_path(const agent_target *t, char *file, size_t flen)
{
    snprintf(file, flen, "/proc/%d/root%s/%s-%d", (int)t->proc.pid, AGENT_MARKER_DIR,
             AGENT_MARKER_NAME, (int)t->proc.nspid);
}

static void marker_write(agent_target *t, const agent_collect_opts *o)
{
    if (agent_jprof_dir_ensure(&t->proc, NULL) != JP_OK)
        return;
    char file[192];
    marker_path(t, file, sizeof file);
    /* known now, while /proc/PID/root exists: after the JVM exits only
     * this says the marker is still in our own /tmp/jprof */
    t->marker_shared = jvm_proc_shares_root(&t->proc);
    json_t *m = json_pack("{s:s, s:s, s:s, s:i, s:I}", "collector", o->collector, "recording",
                          AGENT_RECORDING_NAME, "engine", t->asprof ? AGENT_ASPROF_ENGINE : "jfr",
                          "agent_pid", (int)getpid(), "started", (json_int_t)jp_time_now_ns());
    if (!m)
        return;
    if (t->asprof) {
        json_object_set_new(m, "library", json_string(t->ap.lib.inner));
        json_object_set_new(m, "file", json_string(t->ap.out.inner));
    }
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    /* a fresh file each time: never written through a planted link */
    unlink(file);
    int fd = text ? open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644) : -1;
    if (fd >= 0) {
        size_t n = strlen(text);
        if (write(fd, text, n) != (ssize_t)n) {
            /* a partial marker is treated like none */
        }
        close(fd);
    }
    free(text);
}

/* Reads an async-profiler marker of an earlier run: the output file it
 * named (only a name of ours in /tmp/jprof is accepted). */
static bool marker_read_asprof(const agent_target *t, char *out, size_t len)
{
    out[0] = '\0';
    char file[192];
    marker_path(t, file, sizeof file);
    int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[2048];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    json_t *m = json_loads(buf, 0, NULL);
    const char *engine = json_string_value(json_object_get(m, "engine"));
    const char *f = json_string_value(json_object_get(m, "file"));
    bool ours = engine && strcmp(engine, AGENT_ASPROF_ENGINE) == 0;
    static const char prefix[] = AGENT_MARKER_DIR "/asprof-";
    if (ours && f && strncmp(f, prefix, sizeof prefix - 1) == 0 &&
        !strchr(f + sizeof prefix - 1, '/') && strlen(f) < len)
        snprintf(out, len, "%s", f);
    json_decref(m);
    return ours;
}

/* Removes the marker. A JVM that exited took its /proc/PID/root along; in
 * host mode (its / is ours) the marker is still in our /tmp/jprof under the
 * same name, and goes too. */
static void marker_remove(const agent_target *t)
{
    char file[192];
    marker_path(t, file, sizeof file);
    unlink(file);
    char dir[128];
    snprintf(dir, sizeof dir, "/proc/%d/root%s", (int)t->proc.pid, AGENT_MARKER_DIR);
    rmdir(dir); /* only when empty */
    if (t->ap.shared_root || t->marker_shared) {
        snprintf(file, sizeof file, "%s/%s-%d", AGENT_MARKER_DIR, AGENT_MARKER_NAME,
                 (int)t->proc.nspid);
        unlink(file);
        rmdir(AGENT_MARKER_DIR);
    }
}

/* ---- the recording ---- */

static jp_err jfr(const agent_target *t, const char *line, const char *ok, jp_error *err)
{
    jvm_reply r;
    jp_err rc = jvm_jcmd(&t->proc, NULL, line, &r, err);
    if (rc != JP_OK)
        return rc;
    if (ok && !strstr(r.text ? r.text : "", ok)) {
        size_t n = strcspn(r.text ? r.text : "", "\n");
        rc = jp_error_set(err, JP_ERR_PROTOCOL, "%s: %.*s", line, (int)(n > 240 ? 240 : n),
                          r.text ? r.text : "");
    }
    jvm_reply_cleanup(&r);
    return rc;
}

static void stop_on_cleanup(void *arg)
{
    agent_target *t = arg;
    t->cleanup = 0;
    if (!t->recording)
        return;
    if (t->asprof) {
        agent_asprof_stop(&t->ap, &t->proc, true, NULL);
        agent_asprof_remove_all(&t->ap);
    } else {
        char line[128];
        snprintf(line, sizeof line, "JFR.stop name=%s", AGENT_RECORDING_NAME);
        jfr(t, line, NULL, NULL);
    }
    t->recording = false;
    marker_remove(t);
}

/* Parses a finished recording and queues its windows. */
static void upload_window(agent_target *t, const agent_collect_opts *o, const char *path,
                          int64_t start_ns, int64_t end_ns)
{
    jfr_options jo;
    jfr_options_init(&jo);
    jo.kinds = t->policy.kinds;
    jo.threads = true;
    jfr_report rep;
    jfr_report_init(&rep);
    jp_profile *p = jp_profile_new();
    jfr_read_file(path, &jo, p, &rep);
    if (rep.partial && o->metrics)
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
    jp_profile_free(p);
}

/* Parses a finished recording straight from the target's file: the JFR
 * reader maps it and releases pages as it goes, so the agent's memory grows
 * with distinct stacks, not with the file. The file is opened with
 * O_NOFOLLOW (a symlink planted in the target's /tmp must not make us read a
 * host file) and read through /proc/self/fd. */
static jp_err parse_file(agent_target *t, const agent_collect_opts *o, const jvm_tfile *f,
                         int64_t start_ns, int64_t end_ns, jp_error *err)
{
    int fd = open(f->host, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return jp_error_set(err, errno == ENOENT ? JP_ERR_NOT_FOUND : JP_ERR_IO, "%s: %s", f->inner,
                            strerror(errno));
    struct stat st;
    jp_err rc = JP_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = jp_error_set(err, JP_ERR_IO, "%s: not a regular file", f->inner);
    else if ((uint64_t)st.st_size > JVM_JFR_MAX_DUMP)
        rc = jp_error_set(err, JP_ERR_LIMIT, "%s: %lld bytes exceed the %u byte limit", f->inner,
                          (long long)st.st_size, JVM_JFR_MAX_DUMP);
    if (rc == JP_OK) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        upload_window(t, o, path, start_ns, end_ns);
    }
    close(fd);
    return rc;
}

/* Stops the recording into a file in the target, parses and queues it, and
 * deletes the file. */
static jp_err stop_and_upload(agent_target *t, const agent_collect_opts *o, int64_t start_ns,
                              jp_error *err)
{
    if (t->asprof) { /* `stop` finishes the file named at start */
        jp_err rc = agent_asprof_stop(&t->ap, &t->proc, false, err);
        if (rc == JP_OK)
            rc = parse_file(t, o, &t->ap.out, start_ns, jp_time_now_ns(), err);
        agent_asprof_drop_output(&t->ap);
        return rc;
    }
    jvm_tfile f;
    jp_err rc = jvm_tfile_name(&t->proc, ".jfr", &f, err);
    if (rc != JP_OK)
        return rc;
    char line[JVM_ATTACH_ARG_MAX];
    snprintf(line, sizeof line, "JFR.stop name=%s filename=%s", AGENT_RECORDING_NAME, f.inner);
    rc = jfr(t, line, "Stopped recording", err);
    if (rc == JP_OK)
        rc = parse_file(t, o, &f, start_ns, jp_time_now_ns(), err);
    jvm_tfile_remove(&f);
    return rc;
}

/* Finishes the running window: stop, read, parse, queue, delete. */
static jp_err finish_window(agent_target *t, const agent_collect_opts *o, jp_error *err)
{
    jp_err rc = stop_and_upload(t, o, t->window_start_ns, err);
    t->recording = false;
    if (t->cleanup) {
        jvm_cleanup_unregister(t->cleanup);
        t->cleanup = 0;
    }
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

/* An earlier run left our async-profiler in the JVM: stop its session if
 * one runs, salvage the file its marker names, and start over. */
static jp_err recover_asprof(agent_target *t, const agent_collect_opts *o, jp_error *err)
{
    if (agent_asprof_owner_of(&t->proc) != AGENT_ASPROF_OURS)
        return JP_OK;
    char file[160];
    bool marked = marker_read_asprof(t, file, sizeof file);
    /* the copy must be there again before the JVM is asked to load it */
    jp_err rc = agent_asprof_install(&t->ap, &t->proc, o->asprof_lib, err);
    if (rc != JP_OK)
        return rc;
    jp_error e;
    jp_error_init(&e);
    /* a clean exit already stopped it: asked quietly, "not active" is fine */
    bool stopped = agent_asprof_stop(&t->ap, &t->proc, true, &e) == JP_OK;
    if (file[0]) {
        jvm_tfile f;
        memset(&f, 0, sizeof f);
        jvm_tfile_at(&t->proc, file, &f);
        f.cleanup = jvm_cleanup_register_file(f.host);
        if (stopped &&
            parse_file(t, o, &f, jp_time_now_ns() - o->window_ns, jp_time_now_ns(), &e) != JP_OK &&
            o->metrics)
            atomic_fetch_add(&o->metrics->recording_failures, 1);
        jvm_tfile_remove(&f);
    }
    t->recovered = marked || stopped;
    return JP_OK;
}

/* An earlier run of the agent left "jprof-agent" running: take it over. */
static jp_err recover(agent_target *t, const agent_collect_opts *o, jp_error *err)
{
    if (t->asprof)
        return recover_asprof(t, o, err);
    char *check = NULL;
    jp_err rc = jvm_jfr_check(&t->proc, NULL, &check, err);
    if (rc != JP_OK)
        return rc;
    bool ours = jvm_jfr_check_lists(check, AGENT_RECORDING_NAME);
    free(check);
    if (!ours)
        return JP_OK;
    /* its start is unknown here; the recording's own range wins when known */
    rc = stop_and_upload(t, o, jp_time_now_ns() - o->window_ns, err);
    if (rc == JP_OK)
        t->recovered = true;
    return rc;
}

/* The cpu sampling interval for this target: dense in a temporary window
 * (someone is looking at an incident), sparse when profiled continuously. */
static int64_t cpu_interval(const agent_target *t, const agent_collect_opts *o)
{
    return t->policy.mode == AGENT_MODE_TEMPORARY ? o->dense_cpu_interval_ns : o->cpu_interval_ns;
}

/* JFR.start with jprof's own settings (jvm/jfc.h): the .jfc is written into
 * the target, read by the JVM while it starts the recording, and removed. */
static jp_err start_jfr_own(agent_target *t, const agent_collect_opts *o, jp_error *err)
{
    jvm_jfc_opts jo;
    jvm_jfc_opts_init(&jo);
    jo.kinds = t->policy.kinds;
    jo.jdk_major = t->jdk_major;
    jo.cpu_period_ns = cpu_interval(t, o);
    jp_strbuf xml;
    jp_strbuf_init(&xml, 0);
    jvm_tfile f;
    jp_err rc = jvm_jfc_build(&jo, &xml, err);
    if (rc == JP_OK)
        rc = jvm_tfile_name(&t->proc, ".jfc", &f, err);
    if (rc != JP_OK) {
        jp_strbuf_cleanup(&xml);
        return rc;
    }
    rc = jvm_tfile_write(&t->proc, &f, jp_strbuf_str(&xml), xml.len, err);
    jp_strbuf_cleanup(&xml);
    if (rc == JP_OK) {
        char line[JVM_ATTACH_ARG_MAX];
        snprintf(line, sizeof line, "JFR.start name=%s settings=%s disk=true maxsize=256m",
                 AGENT_RECORDING_NAME, f.inner);
        rc = jfr(t, line, "Started recording", err);
    }
    jvm_tfile_remove(&f);
    return rc;
}

static jp_err start_jfr(agent_target *t, const agent_collect_opts *o, jp_error *err)
{
    if (strcmp(o->jfr_settings, AGENT_JFR_SETTINGS_OWN) == 0)
        return start_jfr_own(t, o, err);
    char line[JVM_ATTACH_ARG_MAX];
    int n = snprintf(line, sizeof line, "JFR.start name=%s settings=%s disk=true maxsize=256m",
                     AGENT_RECORDING_NAME, o->jfr_settings);
    if (n < 0 || (size_t)n >= sizeof line)
        return jp_error_set(err, JP_ERR_USAGE, "--jfr-settings is too long");
    return jfr(t, line, "Started recording", err);
}

static jp_err start_recording(agent_target *t, const agent_collect_opts *o, int64_t now_mono,
                              jp_error *err)
{
    /* registered first, so an interrupted agent stops what it started */
    t->cleanup = jvm_cleanup_register(stop_on_cleanup, t);
    if (!t->cleanup)
        return jp_error_set(err, JP_ERR_LIMIT,
                            "too many targets for the cleanup table; not starting a recording "
                            "the agent could not promise to stop");
    t->recording = true;
    jp_err rc = JP_OK;
    if (t->asprof && !t->ap.lib.cleanup)
        rc = agent_asprof_install(&t->ap, &t->proc, o->asprof_lib, err);
    if (rc == JP_OK)
        rc = t->asprof
                 ? agent_asprof_start(&t->ap, &t->proc, t->policy.kinds, cpu_interval(t, o), err)
                 : start_jfr(t, o, err);
    if (rc != JP_OK) {
        jvm_cleanup_unregister(t->cleanup);
        t->cleanup = 0;
        t->recording = false;
        return rc;
    }
    marker_write(t, o);
    t->window_start_ns = jp_time_now_ns();
    t->window_end_mono = now_mono + jittered(o->window_ns);
    return JP_OK;
}

/* ---- thread snapshots ---- */

static void add_doc(agent_target *t, const char *json, bool deadlock, int64_t time_ns)
{
    if (t->ndocs == AGENT_DOCS_MAX) { /* keep the newest */
        jp_batch_target_cleanup(&t->docs[0].target);
        free(t->docs[0].json);
        memmove(&t->docs[0], &t->docs[1], (AGENT_DOCS_MAX - 1) * sizeof t->docs[0]);
        memmove(&t->deadlock_docs[0], &t->deadlock_docs[1],
                (AGENT_DOCS_MAX - 1) * sizeof t->deadlock_docs[0]);
        t->ndocs--;
    }
    jp_batch_doc *d = &t->docs[t->ndocs];
    memset(d, 0, sizeof *d);
    jp_batch_target_copy(&d->target, &t->id);
    d->time_ns = time_ns;
    d->json = jp_xstrdup(json);
    d->len = strlen(json);
    t->deadlock_docs[t->ndocs] = deadlock;
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
static void add_json_doc(agent_target *t, const char *key, json_t *obj, bool deadlock, int64_t when)
{
    json_t *doc = key ? json_object() : json_copy(obj);
    if (key)
        json_object_set(doc, key, obj);
    json_object_set_new(doc, "target", target_json(t));
    json_object_set_new(doc, "time", json_integer(when));
    char *text = json_dumps(doc, JSON_COMPACT);
    if (text)
        add_doc(t, text, deadlock, when);
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
    jp_snapjson_target st = {.pid = (int)t->proc.pid,
                             .main_class = t->proc.main_class,
                             .user = t->proc.user,
                             .start_ns = t->proc.start_ns};
    jp_snapjson_opts jo;
    jp_snapjson_opts_init(&jo);
    jo.max_frames = 64;
    json_t *j = jp_snapshot_json(snap, t->prev_snapshot, &st, &jo);
    int64_t when = snap->taken_ns ? snap->taken_ns : jp_time_now_ns();
    add_json_doc(t, "snapshot", j, false, when);
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(j, "deadlocks"), i, d)
    {
        if (json_is_object(d))
            add_json_doc(t, NULL, d, true, when);
    }
    json_decref(j);
    jp_snapshot_free(t->prev_snapshot);
    t->prev_snapshot = snap;
}

static void maybe_snapshot(agent_target *t, const agent_collect_opts *o, int64_t now_mono)
{
    if (t->policy.threads == AGENT_THREADS_OFF || now_mono < t->next_snapshot_mono)
        return;
    int64_t every =
        t->policy.threads == AGENT_THREADS_HIGH ? o->snapshot_high_ns : o->snapshot_low_ns;
    t->next_snapshot_mono = now_mono + every;
    take_snapshot(t, o);
}

/* ---- the step ---- */

static void stop_for_policy(agent_target *t, const agent_collect_opts *o)
{
    jp_error err;
    jp_error_init(&err);
    if (t->recording) {
        finish_window(t, o, &err);
        if (t->asprof) /* before the marker: its removal also drops the empty dir */
            agent_asprof_remove_all(&t->ap);
        marker_remove(t);
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
    /* with async-profiler our own copy is mapped too: only another one
     * conflicts (the maps are read only while no session of ours runs) */
    bool foreign = !t->recording &&
                   (t->asprof ? agent_asprof_owner_of(&t->proc) == AGENT_ASPROF_FOREIGN
                              : t->proc.async_profiler || jvm_proc_has_async_profiler(t->proc.pid));
    if (foreign) {
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

void agent_target_step(agent_target *t, const agent_collect_opts *o, int64_t now_mono)
{
    if (t->gone)
        return;
    if (!t->ap.lib.inner[0]) { /* first step: the engine is fixed for the agent's run */
        t->asprof = o->asprof_lib != NULL;
        agent_asprof_init(&t->ap, &t->proc);
    }
    if (!t->policy.profile) {
        stop_for_policy(t, o);
        return;
    }
    if (!gate(t, o, now_mono))
        return;
    jp_error err;
    jp_error_init(&err);
    jp_err rc = JP_OK;
    if (!t->recording) {
        /* once per agent run: is a session of an earlier run still going? */
        if (!t->checked) {
            read_version(t);
            rc = recover(t, o, &err);
            t->checked = rc == JP_OK;
        }
        if (rc == JP_OK)
            rc = start_recording(t, o, now_mono, &err);
    } else if (now_mono >= t->window_end_mono) {
        rc = finish_window(t, o, &err);
        if (rc == JP_OK)
            rc = start_recording(t, o, now_mono, &err);
    }
    if (rc != JP_OK) {
        fail(t, o, rc, &err, now_mono);
        return;
    }
    t->failures = 0;
    const char *msg = t->recovered ? "recovered the session of an earlier agent run" : "";
    const uint32_t ap_only = 1u << JP_KIND_WALL | 1u << JP_KIND_NATIVEMEM | 1u << JP_KIND_LIVE |
                             1u << JP_KIND_NATIVELOCK;
    if ((t->policy.kinds & ap_only) && !t->asprof)
        msg = "wall, nativemem, live and nativelock need async-profiler; the JDK engine records "
              "the other kinds";
    else if (!t->asprof && t->jdk_major >= 25 &&
             (t->policy.kinds & (1u << JP_KIND_CPU | 1u << JP_KIND_CPUTIME)))
        msg = "JDK 25: cpu also recorded as cputime (jdk.CPUTimeSample, CPU-time sampling)";
    set_status(t, "active", NULL, msg);
    maybe_snapshot(t, o, now_mono);
}

void agent_target_mark_gone(agent_target *t)
{
    if (t->cleanup) {
        jvm_cleanup_unregister(t->cleanup);
        t->cleanup = 0;
    }
    t->recording = false;
    t->gone = true;
    /* Its /proc/PID/root is gone. When it shared our / (host mode) its
     * files are still there and go by their own names; in a container they
     * went with it, and only their cleanup registrations are dropped. The
     * marker goes whether or not a window was running: a JVM that exited
     * mid-window failed its last stop, and its marker names a session
     * nobody can recover. */
    if (t->asprof)
        agent_asprof_remove_all(&t->ap);
    marker_remove(t);
    set_status(t, "exited", "exited", "the JVM exited");
}

void agent_target_shutdown(agent_target *t, const agent_collect_opts *o)
{
    bool was = t->recording;
    jp_error err;
    jp_error_init(&err);
    if (was)
        finish_window(t, o, &err);
    /* also when a failing target still holds a copy of the library */
    if (t->asprof && !t->gone)
        agent_asprof_remove_all(&t->ap);
    if (was || t->windows > 0 || (t->asprof && !t->gone))
        marker_remove(t);
    if (was)
        set_status(t, "stopped", "agent_stopped", "the agent is shutting down");
}
