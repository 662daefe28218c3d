/* engine_asprof.c - the async-profiler engine (jvm/engine.h).
 *
 * The library the user gives (a libasyncProfiler.so they built or
 * downloaded) is copied into the target's /tmp/jprof/ through
 * /proc/PID/root under a name fixed per JVM and session
 * (libasyncProfiler-jprof-<nspid>.so for jprof-agent,
 * libasyncProfiler-<session>-<nspid>.so otherwise), and loaded over the
 * attach socket with an absolute path. The name is fixed so that a program
 * started again after a crash loads the very instance already inside the
 * JVM (the dynamic linker matches a loaded library by its path) instead of
 * a second profiler, and so that it can tell its own profiler from someone
 * else's in /proc/PID/maps. It keeps "libasyncProfiler" in it so every
 * other tool sees a profiler there.
 *
 * Every command is `load <lib> true <args>`. A collector's session is
 * `start,<events>,jfr,file=F,log=L,quiet` and a window ends with `stop`,
 * which finishes F; F and L are created by us first (O_EXCL|O_NOFOLLOW,
 * owned by the JVM's user), so the JVM never needs write access to
 * /tmp/jprof and a planted symlink is never followed. A viewer holds a
 * per-JVM flock while it drives the profiler (one per process: a second
 * viewer's commands would act on the first one's session), reads with
 * `dump,jfr` and starts a fresh session every span. "quiet" everywhere:
 * the profiler otherwise prints "Profiling started" into the service's
 * stdout. The profiler itself stays loaded: a JVM cannot unload an agent
 * library, which is why the name must be stable. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jvm/cleanup.h"
#include "jvm/engine_int.h"

#define LIB_PREFIX "libasyncProfiler-"
/* an older jprof-top's copy: for everyone else it is someone else's */
#define OLD_TOP_COPY "/jprof-asprof.so"
#define LOG_TAIL_MAX 4096

/* ---- who owns the mapped profiler ---- */

/* The path of a maps line (NULL: none) and its length without the
 * " (deleted)" the kernel adds once the file is gone. */
static const char *maps_path(const char *line, size_t *len)
{
    const char *path = strchr(line, '/');
    if (!path)
        return NULL;
    size_t n = strcspn(path, "\n");
    static const char deleted[] = " (deleted)";
    if (n >= sizeof deleted - 1 &&
        memcmp(path + n - (sizeof deleted - 1), deleted, sizeof deleted - 1) == 0)
        n -= sizeof deleted - 1;
    *len = n;
    return path;
}

jvm_asprof_owner jvm_asprof_classify_line(const char *line, const char *ours)
{
    size_t n;
    const char *path = maps_path(line, &n);
    if (!path)
        return JVM_ASPROF_NONE;
    if (ours && strlen(ours) == n && memcmp(path, ours, n) == 0)
        return JVM_ASPROF_OURS;
    if (memmem(path, n, "libasyncProfiler", 16))
        return JVM_ASPROF_FOREIGN;
    size_t tl = sizeof OLD_TOP_COPY - 1;
    if (n >= tl && memcmp(path + n - tl, OLD_TOP_COPY, tl) == 0)
        return JVM_ASPROF_FOREIGN;
    return JVM_ASPROF_NONE;
}

/* Names our library copy for this JVM (nothing is written). */
static void lib_name(jvm_engine *e)
{
    if (e->lib.inner[0])
        return;
    char inner[160];
    /* jprof-agent's copies have been called libasyncProfiler-jprof-<nspid>.so
     * since before other sessions had copies: an agent upgraded in place
     * keeps recognising the one already loaded */
    const char *tag = strcmp(e->session, "jprof-agent") == 0 ? "jprof" : e->session;
    snprintf(inner, sizeof inner, "%s/%s%s-%d.so", JVM_ENGINE_DIR, LIB_PREFIX, tag,
             (int)e->proc.nspid);
    jvm_tfile_at(&e->proc, inner, &e->lib);
}

/* Who owns the async-profiler mapped in the target; someone else's path in
 * `other`. A mapping that cannot be read counts as none. */
static jvm_asprof_owner owner_of(jvm_engine *e, char *other, size_t olen)
{
    lib_name(e);
    other[0] = '\0';
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)e->proc.pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return JVM_ASPROF_NONE;
    jvm_asprof_owner who = JVM_ASPROF_NONE;
    char line[4096 + 256];
    while (who != JVM_ASPROF_FOREIGN && fgets(line, sizeof line, f)) {
        jvm_asprof_owner o = jvm_asprof_classify_line(line, e->lib.inner);
        size_t n;
        const char *p = maps_path(line, &n);
        if (o == JVM_ASPROF_FOREIGN && p)
            snprintf(other, olen, "%.*s", (int)(n > 200 ? 200 : n), p);
        if (o != JVM_ASPROF_NONE)
            who = o;
    }
    fclose(f);
    return who;
}

static jp_err conflict(const jvm_engine *e, const char *other, jp_error *err)
{
    return jp_error_set(err, JP_ERR_CONFLICT,
                        "pid %d already has an async-profiler loaded by someone else (%s); jprof "
                        "leaves it alone",
                        (int)e->proc.pid, other);
}

static jp_err ap_foreign(jvm_engine *e, jp_error *err)
{
    char other[224];
    return owner_of(e, other, sizeof other) == JVM_ASPROF_FOREIGN ? conflict(e, other, err) : JP_OK;
}

/* ---- files in the target ---- */

/* Copies the host library into the target (atomically, owned by the JVM's
 * user, mode 0644), registered for cleanup. */
static jp_err install(jvm_engine *e, jp_error *err)
{
    lib_name(e);
    jp_err rc = jvm_engine_dir_ensure(e, err);
    if (rc != JP_OK)
        return rc;
    if (access(e->opts.asprof_lib, R_OK) != 0)
        return jp_error_set(err, JP_ERR_NOT_FOUND, "async-profiler library %s: %s",
                            e->opts.asprof_lib, strerror(errno));
    return jvm_tfile_copy_in(&e->proc, e->opts.asprof_lib, &e->lib, err);
}

/* Creates an empty file the JVM will write: ours to create (O_EXCL, never
 * through a symlink), the JVM's user's to own. A leftover of an earlier run
 * is replaced. */
static jp_err create_for_jvm(const jvm_proc *t, const char *inner, jvm_tfile *f, jp_error *err)
{
    memset(f, 0, sizeof *f);
    jvm_tfile_at(t, inner, f);
    f->cleanup = jvm_cleanup_register_file(f->host);
    if (!f->cleanup)
        return jp_error_set(err, JP_ERR_LIMIT, "too many pending cleanup actions");
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = open(f->host, flags, 0600);
    if (fd < 0 && errno == EEXIST && unlink(f->host) == 0)
        fd = open(f->host, flags, 0600);
    jp_err rc = JP_OK;
    if (fd < 0)
        rc = jp_error_set(err, errno == EACCES || errno == EPERM ? JP_ERR_PERMISSION : JP_ERR_IO,
                          "%s: %s", inner, strerror(errno));
    else if (geteuid() == 0 && fchown(fd, t->euid, t->egid) != 0)
        rc = jp_error_set(err, JP_ERR_IO, "chown %s: %s", inner, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (rc != JP_OK) {
        jvm_tfile_remove(f);
        f->inner[0] = '\0';
    }
    return rc;
}

static void tfile_drop(jvm_tfile *f)
{
    if (!f->inner[0])
        return;
    jvm_tfile_remove(f);
    f->inner[0] = '\0';
}

/* The last "[ERROR] ..." line of the profiler's log, if any. */
static void log_error_line(const jvm_engine *e, char *out, size_t len)
{
    out[0] = '\0';
    if (!e->log.inner[0])
        return;
    int fd = open(e->log.host, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[LOG_TAIL_MAX + 1];
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > LOG_TAIL_MAX ? end - LOG_TAIL_MAX : 0;
    ssize_t n = pread(fd, buf, LOG_TAIL_MAX, from);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    const char *hit = NULL;
    for (const char *p = buf; (p = strstr(p, "[ERROR] ")) != NULL; p++)
        hit = p;
    if (hit)
        snprintf(out, len, "%.*s", (int)strcspn(hit + 8, "\n"), hit + 8);
}

/* One profiler command over the attach socket (`load <lib> true <args>`). */
static jp_err command(jvm_engine *e, const char *args, jp_error *err)
{
    jvm_reply r;
    jp_error ae;
    jp_error_init(&ae);
    jp_err rc = jvm_attach_load(&e->proc, &e->opts.attach, e->lib.inner, true, args, &r, &ae);
    if (rc == JP_OK) {
        jvm_reply_cleanup(&r);
        return JP_OK;
    }
    char why[256];
    log_error_line(e, why, sizeof why);
    if (why[0] && rc == JP_ERR_PROTOCOL)
        return jp_error_set(err, rc, "pid %d: async-profiler %.*s: %s", (int)e->proc.pid,
                            (int)strcspn(args, ","), args, why);
    if (err)
        *err = ae;
    return rc;
}

/* Stops the session; quiet: asked when it may not exist, no complaint. */
static jp_err stop_cmd(jvm_engine *e, bool quiet, jp_error *err)
{
    if (e->opts.role == JVM_ENGINE_VIEWER)
        return command(e, "stop,quiet", err);
    char args[256];
    if (e->log.inner[0])
        snprintf(args, sizeof args, "stop,log=%s%s", e->log.inner, quiet ? ",loglevel=none" : "");
    else
        snprintf(args, sizeof args, "stop%s", quiet ? ",loglevel=none" : "");
    return command(e, args, err);
}

/* ---- the start arguments ---- */

static jp_err append(char *buf, size_t len, size_t *off, const char *s, jp_error *err)
{
    int n = snprintf(buf + *off, len - *off, "%s%s", *off ? "," : "", s);
    if (n < 0 || (size_t)n >= len - *off)
        return jp_error_set(err, JP_ERR_USAGE, "async-profiler arguments are too long");
    *off += (size_t)n;
    return JP_OK;
}

/* "name=<value>" in async-profiler's units: v < 0 bare name (its own
 * default), 0 dflt, whole ms as "ms" (or KiB as "k" for bytes). */
static void opt_value(char *out, size_t len, const char *name, int64_t v, const char *dflt,
                      bool bytes)
{
    if (v < 0)
        snprintf(out, len, "%s", name);
    else if (v == 0)
        snprintf(out, len, "%s=%s", name, dflt);
    else if (!bytes && v % JP_NS_PER_MS == 0)
        snprintf(out, len, "%s=%lldms", name, (long long)(v / JP_NS_PER_MS));
    else if (bytes && v % 1024 == 0)
        snprintf(out, len, "%s=%lldk", name, (long long)(v / 1024));
    else
        snprintf(out, len, "%s=%lld", name, (long long)v);
}

#define HAS(k) (w->kinds & (1u << (k)))

jp_err jvm_asprof_start_args(const jvm_engine_window *w, const char *file, const char *log,
                             char *buf, size_t len, jp_error *err)
{
    char part[200];
    size_t off = 0;
    buf[0] = '\0';
    jp_err rc = append(buf, len, &off, "start", err);
    /* async-profiler samples cpu by itself only when nothing else is asked */
    if (rc == JP_OK && HAS(JP_KIND_CPU))
        rc = append(buf, len, &off, "event=cpu", err);
    if (rc == JP_OK && HAS(JP_KIND_CPU) && w->cpu_interval_ns > 0) {
        snprintf(part, sizeof part, "interval=%lld", (long long)w->cpu_interval_ns);
        rc = append(buf, len, &off, part, err);
    }
    opt_value(part, sizeof part, "wall", w->wall_interval_ns, "20ms", false);
    if (rc == JP_OK && HAS(JP_KIND_WALL))
        rc = append(buf, len, &off, part, err);
    /* live objects are the allocation samples still reachable at the end */
    opt_value(part, sizeof part, "alloc", w->alloc_interval_bytes, "512k", true);
    if (rc == JP_OK && (HAS(JP_KIND_ALLOC) || HAS(JP_KIND_LIVE)))
        rc = append(buf, len, &off, part, err);
    if (rc == JP_OK && HAS(JP_KIND_LIVE))
        rc = append(buf, len, &off, "live", err);
    /* its lock mode records both monitor enters and LockSupport.park */
    opt_value(part, sizeof part, "lock", w->lock_threshold_ns, "1ms", false);
    if (rc == JP_OK && (HAS(JP_KIND_LOCK) || HAS(JP_KIND_PARK)))
        rc = append(buf, len, &off, part, err);
    /* async-profiler 4.x: native mallocs (and their frees) and pthread mutex waits */
    if (rc == JP_OK && HAS(JP_KIND_NATIVEMEM))
        rc = append(buf, len, &off, "nativemem=512k", err);
    if (rc == JP_OK && HAS(JP_KIND_NATIVELOCK))
        rc = append(buf, len, &off, "nativelock=1ms", err);
    if (rc == JP_OK && !(w->kinds & ~(1u << JP_KIND_CPUTIME)))
        rc = jp_error_set(err, JP_ERR_USAGE, "no event kind for async-profiler");
    snprintf(part, sizeof part, "jfr,file=%s", file);
    if (rc == JP_OK && strchr(file, ','))
        rc = jp_error_set(err, JP_ERR_USAGE, "%s: a comma in the file name", file);
    if (rc == JP_OK)
        rc = append(buf, len, &off, part, err);
    snprintf(part, sizeof part, "log=%s", log ? log : "");
    if (rc == JP_OK && log && *log)
        rc = append(buf, len, &off, part, err);
    if (rc == JP_OK)
        rc = append(buf, len, &off, "quiet", err);
    return rc;
}

/* ---- sessions ---- */

/* Names the output file (a collector's in /tmp/jprof, created for the
 * JVM; a viewer's a fresh /tmp name), registers the undo action and sends
 * the start command. */
static jp_err session_start(jvm_engine *e, jp_error *err)
{
    tfile_drop(&e->out);
    jp_err rc;
    if (e->opts.role == JVM_ENGINE_VIEWER) {
        rc = jvm_tfile_name(&e->proc, ".jfr", &e->out, err);
    } else {
        char inner[160];
        snprintf(inner, sizeof inner, "%s/asprof-%d-%d-%u.jfr", JVM_ENGINE_DIR, (int)e->proc.nspid,
                 (int)getpid(), ++e->seq);
        rc = create_for_jvm(&e->proc, inner, &e->out, err);
    }
    char args[JVM_ATTACH_ARG_MAX];
    if (rc == JP_OK)
        rc = jvm_asprof_start_args(&e->win, e->out.inner, e->log.inner[0] ? e->log.inner : NULL,
                                   args, sizeof args, err);
    /* registered before the start: an interrupt right after it still stops it */
    if (rc == JP_OK)
        rc = jvm_engine_guard_on(e, err);
    if (rc == JP_OK) {
        rc = command(e, args, err);
        if (rc != JP_OK && e->opts.role == JVM_ENGINE_VIEWER)
            stop_cmd(e, true, NULL); /* in case it started but answered oddly */
    }
    if (rc != JP_OK) {
        jvm_engine_guard_off(e);
        tfile_drop(&e->out);
        return rc;
    }
    e->started_mono = jp_time_mono_ns();
    return JP_OK;
}

static jp_err collector_start(jvm_engine *e, jp_error *err)
{
    jp_err rc = jvm_engine_dir_ensure(e, err);
    if (rc == JP_OK && !e->lib.cleanup)
        rc = install(e, err);
    if (rc == JP_OK && !e->log.inner[0]) {
        char inner[160];
        snprintf(inner, sizeof inner, "%s/asprof-%d.log", JVM_ENGINE_DIR, (int)e->proc.nspid);
        rc = create_for_jvm(&e->proc, inner, &e->log, err);
    }
    return rc == JP_OK ? session_start(e, err) : rc;
}

/* Takes the per-JVM lock every viewer driving async-profiler holds. The
 * lock file is unlinked by its holder when done, so a lock taken on a file
 * no longer at that path is retried. */
static jp_err viewer_lock(jvm_engine *e, jp_error *err)
{
    if (e->lock_fd >= 0)
        return JP_OK; /* restarting after a failed roll: still ours */
    char name[96];
    snprintf(name, sizeof name, "jprof/%s-%d.lock", e->session, (int)e->proc.nspid);
    jvm_tfile_fixed(&e->proc, name, &e->lock);
    for (int tries = 0; tries < 5; tries++) {
        int fd = open(e->lock.host, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            return jp_error_set(err, errno == EACCES ? JP_ERR_PERMISSION : JP_ERR_IO, "%s: %s",
                                e->lock.host, strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            close(fd);
            return jp_error_set(err, JP_ERR_CONFLICT,
                                "another %s is profiling pid %d with async-profiler; quit it first",
                                e->session, (int)e->proc.pid);
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(e->lock.host, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino) {
            e->lock_fd = fd;
            e->lock.cleanup = jvm_cleanup_register_file(e->lock.host);
            return JP_OK;
        }
        close(fd);
    }
    return jp_error_set(err, JP_ERR_CONFLICT, "%s keeps changing", e->lock.inner);
}

static void viewer_unlock(jvm_engine *e)
{
    if (e->lock_fd < 0)
        return;
    /* unlinked while still held: whoever waits retries on a fresh file */
    jvm_tfile_remove(&e->lock);
    close(e->lock_fd);
    e->lock_fd = -1;
}

static jp_err viewer_start(jvm_engine *e, jp_error *err)
{
    char other[224];
    lib_name(e);
    jp_err rc = jvm_engine_dir_ensure(e, err);
    if (rc == JP_OK)
        rc = viewer_lock(e, err);
    jvm_asprof_owner owner = rc == JP_OK ? owner_of(e, other, sizeof other) : JVM_ASPROF_NONE;
    if (owner == JVM_ASPROF_FOREIGN)
        rc = conflict(e, other, err);
    if (rc != JP_OK) {
        viewer_unlock(e); /* the library path may be another viewer's: untouched */
        return rc;
    }
    rc = jvm_tfile_copy_in(&e->proc, e->opts.asprof_lib, &e->lib, err);
    /* our copy left running by a viewer that died: we hold the lock, so
     * nobody else owns that session */
    if (rc == JP_OK && owner == JVM_ASPROF_OURS)
        stop_cmd(e, true, NULL);
    if (rc == JP_OK)
        rc = session_start(e, err);
    if (rc != JP_OK) {
        jvm_tfile_remove(&e->lib);
        viewer_unlock(e);
    }
    return rc;
}

static jp_err ap_start(jvm_engine *e, const jvm_engine_window *w, jp_error *err)
{
    (void)w; /* e->win */
    return e->opts.role == JVM_ENGINE_VIEWER ? viewer_start(e, err) : collector_start(e, err);
}

static jp_err ap_finish(jvm_engine *e, jvm_tfile *out, jp_error *err)
{
    /* `stop` finishes the file named at start */
    jp_err rc = stop_cmd(e, false, err);
    *out = e->out; /* the caller reads and removes it */
    memset(&e->out, 0, sizeof e->out);
    return rc;
}

/* An earlier run left our profiler in the JVM: stop its session if one
 * runs, and name the file its marker points at. */
static jp_err ap_recover(jvm_engine *e, jvm_tfile *salvage, bool *found, jp_error *err)
{
    char other[224], file[160];
    if (owner_of(e, other, sizeof other) != JVM_ASPROF_OURS)
        return JP_OK;
    bool marked = jvm_engine_marker_file(e, file, sizeof file);
    static const char prefix[] = JVM_ENGINE_DIR "/asprof-";
    /* only a name of ours in /tmp/jprof is accepted */
    if (strncmp(file, prefix, sizeof prefix - 1) != 0 || strchr(file + sizeof prefix - 1, '/'))
        file[0] = '\0';
    /* the copy must be there again before the JVM is asked to load it */
    jp_err rc = install(e, err);
    if (rc != JP_OK)
        return rc;
    /* a clean exit already stopped it: asked quietly, "not active" is fine */
    bool stopped = stop_cmd(e, true, NULL) == JP_OK;
    if (file[0]) {
        jvm_tfile_at(&e->proc, file, salvage);
        salvage->cleanup = jvm_cleanup_register_file(salvage->host);
        if (!stopped) { /* nothing finished it: not worth reading */
            jvm_tfile_remove(salvage);
            salvage->inner[0] = '\0';
        }
    }
    *found = marked || stopped;
    return JP_OK;
}

/* Reads the viewer's session: `dump` while younger than the span, else
 * `stop`, read, and a fresh session. *rolled: the data read is finished. */
static jp_err viewer_read(jvm_engine *e, uint8_t **data, size_t *len, bool *rolled, jp_error *err)
{
    bool roll = jp_time_mono_ns() - e->started_mono >= e->win.span_ns;
    *rolled = roll;
    if (roll)
        jvm_engine_guard_off(e);
    /* No file= here: async-profiler writes JFR to the file named at start
     * (dump finishes a chunk in it, stop finishes it), and a file= would
     * open that file for other output. */
    jp_err rc = command(e, roll ? "stop,quiet" : "dump,jfr,quiet", err);
    char *buf = NULL;
    if (rc == JP_OK)
        rc = jvm_tfile_read(&e->out, JVM_JFR_MAX_DUMP, &buf, len, err);
    *data = (uint8_t *)buf;
    if (roll) {
        jp_error serr;
        jp_error_init(&serr);
        if (session_start(e, &serr) != JP_OK) {
            e->running = false;
            if (rc == JP_OK)
                rc = jp_error_set(err, serr.code, "%s", serr.msg);
        }
    }
    return rc;
}

/* The previous finished session followed by the current one: a JFR file is
 * a sequence of chunks, so the two joined are one file to the reader. */
static jp_err ap_fetch(jvm_engine *e, uint8_t **data, size_t *len, bool *tail, jp_error *err)
{
    uint8_t *cur = NULL;
    size_t cur_len = 0;
    bool rolled = false;
    jp_err rc = viewer_read(e, &cur, &cur_len, &rolled, err);
    if (rc == JP_OK && cur_len + e->prev_len > JVM_JFR_MAX_DUMP)
        rc = jp_error_set(err, JP_ERR_LIMIT, "async-profiler window larger than %u MiB",
                          JVM_JFR_MAX_DUMP >> 20);
    if (rc != JP_OK) {
        free(cur);
        return rc;
    }
    *len = e->prev_len + cur_len;
    uint8_t *all = jp_xmalloc(*len ? *len : 1);
    if (e->prev_len)
        memcpy(all, e->prev_data, e->prev_len);
    if (cur_len)
        memcpy(all + e->prev_len, cur, cur_len);
    *data = all;
    /* a running session's file ends in the chunk it is still writing */
    *tail = !rolled;
    if (rolled) {
        free(e->prev_data);
        e->prev_data = cur;
        e->prev_len = cur_len;
    } else {
        free(cur);
    }
    return JP_OK;
}

static jp_err ap_stop(jvm_engine *e, jp_error *err)
{
    /* a viewer only talks to the profiler while it holds the lock */
    if (e->opts.role == JVM_ENGINE_COLLECTOR || e->lock_fd >= 0)
        return stop_cmd(e, true, err);
    return JP_OK;
}

static void ap_release(jvm_engine *e)
{
    free(e->prev_data);
    e->prev_data = NULL;
    e->prev_len = 0;
    if (e->opts.role == JVM_ENGINE_VIEWER && e->lock_fd < 0)
        return; /* the library path may be another viewer's: untouched */
    tfile_drop(&e->out);
    tfile_drop(&e->log);
    jvm_tfile_remove(&e->lib);
    viewer_unlock(e);
}

const jvm_engine_ops jvm_engine_asprof_ops = {
    .name = "async-profiler",
    .unsupported =
        1u << JP_KIND_CPUTIME | 1u << JP_KIND_IO | 1u << JP_KIND_OLD, /* the JDK's own events */
    .foreign = ap_foreign,
    .recover = ap_recover,
    .start = ap_start,
    .finish = ap_finish,
    .fetch = ap_fetch,
    .stop = ap_stop,
    .release = ap_release,
    .forget = ap_release,
};
