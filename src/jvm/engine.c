#include "jvm/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jvm/cleanup.h"
#include "jvm/engine_int.h"
#include "jvm/targetfs.h"

#define MARKER_SUFFIX "-session"

void jvm_engine_opts_init(jvm_engine_opts *o)
{
    memset(o, 0, sizeof *o);
    o->kind = JVM_ENGINE_JFR;
    o->role = JVM_ENGINE_COLLECTOR;
    o->jfr_settings = JVM_ENGINE_JFR_OWN;
    jvm_attach_opts_init(&o->attach);
}

void jvm_engine_window_init(jvm_engine_window *w)
{
    memset(w, 0, sizeof *w);
    w->kinds = 1u << JP_KIND_CPU | 1u << JP_KIND_ALLOC | 1u << JP_KIND_LOCK;
    w->span_ns = 30 * JP_NS_PER_SEC;
}

jp_err jvm_engine_new(const jvm_proc *t, const jvm_engine_opts *o, jvm_engine **out, jp_error *err)
{
    *out = NULL;
    bool viewer = o->role == JVM_ENGINE_VIEWER;
    const char *session = o->session ? o->session : viewer ? "jprof-top" : "jprof-agent";
    /* the name goes into file names in the target: a plain word */
    if (strncmp(session, "jprof-", 6) != 0 || !session[6] || strlen(session) > 40 ||
        strspn(session, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(session))
        return jp_error_set(err, JP_ERR_USAGE, "engine session name %s: want jprof-<word>",
                            session);
    if (o->kind == JVM_ENGINE_ASPROF && (!o->asprof_lib || !o->asprof_lib[0]))
        return jp_error_set(err, JP_ERR_USAGE,
                            "async-profiler engine: give the path of libasyncProfiler.so");
    jvm_engine *e = jp_xcalloc(1, sizeof *e);
    e->ops = o->kind == JVM_ENGINE_ASPROF ? &jvm_engine_asprof_ops : &jvm_engine_jfr_ops;
    e->proc = *t;
    e->opts = *o;
    if (!e->opts.jfr_settings)
        e->opts.jfr_settings = JVM_ENGINE_JFR_OWN;
    snprintf(e->session, sizeof e->session, "%s", session);
    if (!e->opts.collector)
        e->opts.collector = e->session;
    e->shared_root = jvm_proc_shares_root(t);
    e->lock_fd = -1;
    *out = e;
    return JP_OK;
}

void jvm_engine_free(jvm_engine *e)
{
    if (!e)
        return;
    jvm_engine_release(e);
    free(e->prev_data);
    free(e);
}

jvm_engine_kind jvm_engine_kind_of(const jvm_engine *e)
{
    return e->opts.kind;
}

const char *jvm_engine_name(const jvm_engine *e)
{
    return e->ops->name;
}

bool jvm_engine_running(const jvm_engine *e)
{
    return e->running;
}

const char *jvm_engine_session_name(const jvm_engine *e)
{
    return e->rec.name[0] ? e->rec.name : e->session;
}

uint32_t jvm_engine_unsupported(const jvm_engine *e, uint32_t kinds)
{
    return kinds & e->ops->unsupported;
}

jp_err jvm_engine_foreign(jvm_engine *e, jp_error *err)
{
    return e->ops->foreign(e, err);
}

/* ---- /tmp/jprof and the session marker ---- */

jp_err jvm_engine_dir_ensure(jvm_engine *e, jp_error *err)
{
    char dir[96];
    snprintf(dir, sizeof dir, "/proc/%d/root%s", (int)e->proc.pid, JVM_ENGINE_DIR);
    bool made = mkdir(dir, 0755) == 0;
    if (!made && errno != EEXIST)
        return jp_error_set(err, errno == EACCES || errno == EPERM ? JP_ERR_PERMISSION : JP_ERR_IO,
                            "%s in pid %d: %s", JVM_ENGINE_DIR, (int)e->proc.pid, strerror(errno));
    e->touched = true;
    if (made && e->opts.role == JVM_ENGINE_VIEWER) {
        e->made_dir = true; /* removed again when empty */
        if (geteuid() == 0 && chown(dir, e->proc.euid, e->proc.egid) != 0)
            return jp_error_set(err, JP_ERR_IO, "chown %s: %s", dir, strerror(errno));
    }
    struct stat st;
    /* never work through a symlink someone planted in the target's /tmp */
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return jp_error_set(err, JP_ERR_IO, "%s in pid %d is not a directory", JVM_ENGINE_DIR,
                            (int)e->proc.pid);
    if (st.st_uid != 0 && st.st_uid != e->proc.euid && st.st_uid != geteuid())
        return jp_error_set(err, JP_ERR_PERMISSION,
                            "%s in pid %d belongs to uid %u, neither root, the JVM's user nor us",
                            JVM_ENGINE_DIR, (int)e->proc.pid, (unsigned)st.st_uid);
    return JP_OK;
}

/* One marker per JVM and session ("jprof-agent" -> agent-session-<nspid>):
 * in host mode the JVMs share one /tmp. inner: as the JVM sees it. */
static void marker_inner(const jvm_engine *e, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s%s-%d", JVM_ENGINE_DIR, e->session + 6, MARKER_SUFFIX,
             (int)e->proc.nspid);
}

static void marker_host(const jvm_engine *e, char *buf, size_t len)
{
    char inner[128];
    marker_inner(e, inner, sizeof inner);
    snprintf(buf, len, "/proc/%d/root%s", (int)e->proc.pid, inner);
}

static void marker_write(jvm_engine *e)
{
    if (jvm_engine_dir_ensure(e, NULL) != JP_OK)
        return;
    char file[192];
    marker_host(e, file, sizeof file);
    /* known now, while /proc/PID/root exists: after the JVM exits only
     * this says the marker is still in our own /tmp/jprof */
    e->marker_shared = jvm_proc_shares_root(&e->proc);
    json_t *m = json_pack("{s:s, s:s, s:s, s:i, s:I}", "collector", e->opts.collector, "recording",
                          e->session, "engine", e->ops->name, "agent_pid", (int)getpid(), "started",
                          (json_int_t)jp_time_now_ns());
    if (!m)
        return;
    if (e->lib.inner[0]) {
        json_object_set_new(m, "library", json_string(e->lib.inner));
        json_object_set_new(m, "file", json_string(e->out.inner));
    }
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    /* a fresh file each time: never written through a planted link */
    unlink(file);
    int fd = text ? open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644) : -1;
    /* another jprof program removes /tmp/jprof when it finds it empty:
     * made again once */
    if (fd < 0 && text && errno == ENOENT && jvm_engine_dir_ensure(e, NULL) == JP_OK)
        fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
        size_t n = strlen(text);
        if (write(fd, text, n) != (ssize_t)n) {
            /* a partial marker is treated like none */
        }
        close(fd);
    }
    free(text);
}

/* The session marker's JSON (NULL when there is none or it does not
 * parse); the caller json_decref's it. */
static json_t *marker_read(const jvm_engine *e)
{
    char file[192];
    marker_host(e, file, sizeof file);
    int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char buf[2048];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    return json_loads(buf, 0, NULL);
}

bool jvm_engine_marker_file(const jvm_engine *e, char *out, size_t len)
{
    out[0] = '\0';
    json_t *m = marker_read(e);
    const char *engine = json_string_value(json_object_get(m, "engine"));
    const char *f = json_string_value(json_object_get(m, "file"));
    bool ours = engine && strcmp(engine, e->ops->name) == 0;
    if (ours && f && strlen(f) < len)
        snprintf(out, len, "%s", f);
    json_decref(m);
    return ours;
}

/* Removes the marker and /tmp/jprof when empty. A JVM that exited took its
 * /proc/PID/root along; in host mode (its / is ours) the marker is still in
 * our /tmp/jprof under the same name, and goes too. */
static void marker_remove(const jvm_engine *e)
{
    char file[192];
    marker_host(e, file, sizeof file);
    unlink(file);
    char dir[128];
    snprintf(dir, sizeof dir, "/proc/%d/root%s", (int)e->proc.pid, JVM_ENGINE_DIR);
    rmdir(dir); /* only when empty */
    if (e->shared_root || e->marker_shared) {
        marker_inner(e, file, sizeof file);
        unlink(file);
        rmdir(JVM_ENGINE_DIR);
    }
}

/* ---- the running session's undo action ---- */

static void stop_on_cleanup(void *arg)
{
    jvm_engine *e = arg;
    e->guard = 0; /* the registry dropped the slot */
    if (!e->running)
        return;
    e->ops->stop(e, NULL);
    e->running = false;
    if (e->opts.role == JVM_ENGINE_COLLECTOR) {
        e->ops->release(e);
        marker_remove(e);
    }
}

jp_err jvm_engine_guard_on(jvm_engine *e, jp_error *err)
{
    if (e->guard)
        return JP_OK;
    e->guard = jvm_cleanup_register(stop_on_cleanup, e);
    if (!e->guard)
        return jp_error_set(err, JP_ERR_LIMIT,
                            "too many pending cleanup actions; not starting a session jprof could "
                            "not promise to stop");
    return JP_OK;
}

void jvm_engine_guard_off(jvm_engine *e)
{
    if (e->guard)
        jvm_cleanup_unregister(e->guard);
    e->guard = 0;
}

/* ---- reading a finished window ---- */

/* Parses a finished recording straight from the target's file: the JFR
 * reader reads it a piece at a time, so memory grows with distinct stacks,
 * not with the file. O_NOFOLLOW: a symlink planted in the
 * target's /tmp must not make us read another file. */
static jp_err parse_tfile(const jvm_tfile *f, const jfr_options *jo, jp_profile *out,
                          jfr_report *rep, jp_error *err)
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
        /* damage is reported in rep; what was read is kept */
        jfr_read_file(path, jo, out, rep);
    }
    close(fd);
    return rc;
}

jp_err jvm_engine_recover(jvm_engine *e, const jfr_options *jo, jp_profile *out, jfr_report *rep,
                          bool *found, bool *salvaged, jp_error *err)
{
    *found = *salvaged = false;
    if (e->opts.role != JVM_ENGINE_COLLECTOR || e->running)
        return JP_OK;
    jvm_tfile f;
    memset(&f, 0, sizeof f);
    /* the earlier run that left the session, by its marker (read before
     * this run's own replaces it) */
    json_t *m = marker_read(e);
    json_int_t owner = json_integer_value(json_object_get(m, "agent_pid"));
    json_decref(m);
    jp_err rc = e->ops->recover(e, &f, found, err);
    if (*found)
        e->touched = true; /* its marker goes at release */
    /* Killed between stopping a window into a file and removing it, the
     * earlier run left that file (MBs, in a tmpfs /tmp the pod's memory):
     * its files in the target go now, once it is surely gone. */
    if (rc == JP_OK && owner > 0 && owner <= INT32_MAX && (pid_t)owner != getpid() &&
        kill((pid_t)owner, 0) != 0 && errno == ESRCH)
        jvm_tfile_remove_owned_in(&e->proc, (pid_t)owner);
    if (f.inner[0]) {
        jp_error pe;
        jp_error_init(&pe);
        if (rc == JP_OK && parse_tfile(&f, jo, out, rep, &pe) == JP_OK) {
            *salvaged = true;
        } else if (rc == JP_OK && !rep->partial) {
            rep->partial = true;
            rep->error = pe;
        }
        jvm_tfile_remove(&f);
    }
    return rc;
}

jp_err jvm_engine_start(jvm_engine *e, const jvm_engine_window *w, jp_error *err)
{
    if (e->running)
        return jp_error_set(err, JP_ERR_USAGE, "pid %d: a %s session is already running",
                            (int)e->proc.pid, e->ops->name);
    e->win = *w;
    if (e->win.span_ns <= 0)
        e->win.span_ns = 30 * JP_NS_PER_SEC;
    e->touched = true;
    jp_err rc = e->ops->start(e, &e->win, err);
    if (rc != JP_OK) {
        jvm_engine_guard_off(e);
        return rc;
    }
    e->running = true;
    e->started_mono = jp_time_mono_ns();
    if (e->opts.role == JVM_ENGINE_COLLECTOR)
        marker_write(e);
    return JP_OK;
}

jp_err jvm_engine_finish(jvm_engine *e, const jfr_options *jo, jp_profile *out, jfr_report *rep,
                         jp_error *err)
{
    if (!e->running || e->opts.role != JVM_ENGINE_COLLECTOR)
        return jp_error_set(err, JP_ERR_USAGE, "pid %d: no %s window to finish", (int)e->proc.pid,
                            e->ops->name);
    jvm_tfile f;
    memset(&f, 0, sizeof f);
    jp_err rc = e->ops->finish(e, &f, err);
    e->running = false;
    jvm_engine_guard_off(e);
    if (rc == JP_OK)
        rc = parse_tfile(&f, jo, out, rep, err);
    if (f.inner[0])
        jvm_tfile_remove(&f);
    return rc;
}

/* Damage only in the last chunk of data that ends in a chunk being written
 * is no damage: that chunk is finished at the next read. */
static bool tail_in_progress(const jfr_report *rep)
{
    return rep->partial && rep->chunks_read > 0 && rep->chunks_read + 1 >= rep->chunks_total;
}

jp_err jvm_engine_peek(jvm_engine *e, const jfr_options *jo, jp_profile *out, jfr_report *rep,
                       bool *live_tail, jp_error *err)
{
    *live_tail = false;
    if (!e->running || e->opts.role != JVM_ENGINE_VIEWER)
        return jp_error_set(err, JP_ERR_USAGE, "pid %d: no live %s session", (int)e->proc.pid,
                            e->ops->name);
    uint8_t *data = NULL;
    size_t len = 0;
    bool tail = false;
    jp_err rc = e->ops->fetch(e, &data, &len, &tail, err);
    if (rc != JP_OK) {
        free(data);
        return rc;
    }
    jfr_options opt = *jo;
    /* the data holds whole chunks: keep only the window's events */
    opt.has_from = true;
    opt.from = (jp_timespec_arg){.relative = true, .from_end = true, .value = e->win.span_ns};
    rc = jfr_read_buffer(data, len, "live window", &opt, out, rep);
    free(data);
    *live_tail = tail && tail_in_progress(rep);
    /* real damage part way still shows what was read, marked partial */
    if (rc != JP_OK && !*live_tail && !(rep->partial && rep->events_used > 0)) {
        if (rep->error.code == JP_OK)
            jp_error_set(&rep->error, rc, "live window: %s", jp_strerror(rc));
        if (err)
            *err = rep->error;
        return rc;
    }
    if (*live_tail) {
        rep->partial = false;
        jp_error_init(&rep->error);
    }
    return JP_OK;
}

jp_err jvm_engine_fetch(jvm_engine *e, uint8_t **data, size_t *len, jp_error *err)
{
    *data = NULL;
    *len = 0;
    if (!e->running || e->opts.role != JVM_ENGINE_VIEWER)
        return jp_error_set(err, JP_ERR_USAGE, "pid %d: no live %s session", (int)e->proc.pid,
                            e->ops->name);
    bool tail = false;
    jp_err rc = e->ops->fetch(e, data, len, &tail, err);
    if (rc != JP_OK) {
        free(*data);
        *data = NULL;
        *len = 0;
    }
    return rc;
}

int jvm_engine_remove_files_of(pid_t owner)
{
    return jvm_tfile_remove_owned(owner);
}

jp_err jvm_engine_stop(jvm_engine *e, jp_error *err)
{
    jvm_engine_guard_off(e);
    jp_err rc = e->running ? e->ops->stop(e, err) : JP_OK;
    e->running = false;
    return rc;
}

void jvm_engine_release(jvm_engine *e)
{
    jvm_engine_stop(e, NULL);
    if (!e->touched)
        return;
    e->ops->release(e);
    if (e->opts.role == JVM_ENGINE_COLLECTOR)
        marker_remove(e);
    if (e->made_dir) {
        char dir[96];
        snprintf(dir, sizeof dir, "/proc/%d/root%s", (int)e->proc.pid, JVM_ENGINE_DIR);
        rmdir(dir); /* only when empty: another jprof program may use it too */
        e->made_dir = false;
    }
    e->touched = false;
}

void jvm_engine_forget(jvm_engine *e)
{
    jvm_engine_guard_off(e);
    e->running = false;
    e->ops->forget(e);
    if (e->opts.role == JVM_ENGINE_COLLECTOR)
        marker_remove(e);
}
