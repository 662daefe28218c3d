#include "agent/asprof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm/attach.h"
#include "jvm/cleanup.h"
#include "model/profile.h"

#define JPROF_DIR "/tmp/jprof"
/* jprof-top's own copy (src/tui): for the agent it is someone else's */
#define TUI_COPY_NAME "/jprof-asprof.so"
#define LOG_TAIL_MAX 4096

jp_err agent_jprof_dir_ensure(const jvm_proc *t, jp_error *err)
{
    char dir[96];
    snprintf(dir, sizeof dir, "/proc/%d/root%s", (int)t->pid, JPROF_DIR);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return jp_error_set(err, errno == EACCES || errno == EPERM ? JP_ERR_PERMISSION : JP_ERR_IO,
                            "%s: %s", JPROF_DIR, strerror(errno));
    struct stat st;
    /* never work through a symlink someone planted in the target's /tmp */
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return jp_error_set(err, JP_ERR_IO, "%s in pid %d is not a directory", JPROF_DIR,
                            (int)t->pid);
    if (st.st_uid != 0 && st.st_uid != t->euid && st.st_uid != geteuid())
        return jp_error_set(err, JP_ERR_PERMISSION,
                            "%s in pid %d belongs to uid %u, neither root, the JVM's user nor us",
                            JPROF_DIR, (int)t->pid, (unsigned)st.st_uid);
    return JP_OK;
}

/* ---- who owns the mapped profiler ---- */

agent_asprof_owner agent_asprof_classify_line(const char *line, const char *ours)
{
    const char *path = strchr(line, '/');
    if (!path)
        return AGENT_ASPROF_NONE;
    size_t n = strcspn(path, "\n");
    static const char deleted[] = " (deleted)";
    if (n >= sizeof deleted - 1 &&
        memcmp(path + n - (sizeof deleted - 1), deleted, sizeof deleted - 1) == 0)
        n -= sizeof deleted - 1;
    if (ours && strlen(ours) == n && memcmp(path, ours, n) == 0)
        return AGENT_ASPROF_OURS;
    if (memmem(path, n, "libasyncProfiler", 16))
        return AGENT_ASPROF_FOREIGN;
    size_t tl = sizeof TUI_COPY_NAME - 1;
    if (n >= tl && memcmp(path + n - tl, TUI_COPY_NAME, tl) == 0)
        return AGENT_ASPROF_FOREIGN;
    return AGENT_ASPROF_NONE;
}

agent_asprof_owner agent_asprof_owner_of(const jvm_proc *t)
{
    agent_asprof a;
    agent_asprof_init(&a, t);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)t->pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return AGENT_ASPROF_NONE;
    agent_asprof_owner who = AGENT_ASPROF_NONE;
    char line[4096 + 256];
    while (fgets(line, sizeof line, f)) {
        agent_asprof_owner o = agent_asprof_classify_line(line, a.lib.inner);
        if (o == AGENT_ASPROF_FOREIGN) {
            who = o;
            break;
        }
        if (o == AGENT_ASPROF_OURS)
            who = o;
    }
    fclose(f);
    return who;
}

/* ---- files in the target ---- */

void agent_asprof_init(agent_asprof *a, const jvm_proc *t)
{
    memset(a, 0, sizeof *a);
    char inner[160];
    snprintf(inner, sizeof inner, "%s/%s%d.so", JPROF_DIR, AGENT_ASPROF_LIB_PREFIX, (int)t->nspid);
    jvm_tfile_at(t, inner, &a->lib);
    a->shared_root = a->lib.shared_root;
}

jp_err agent_asprof_install(agent_asprof *a, const jvm_proc *t, const char *host_lib, jp_error *err)
{
    jp_err rc = agent_jprof_dir_ensure(t, err);
    if (rc != JP_OK)
        return rc;
    if (access(host_lib, R_OK) != 0)
        return jp_error_set(err, JP_ERR_NOT_FOUND, "--asprof-lib %s: %s", host_lib,
                            strerror(errno));
    return jvm_tfile_copy_in(t, host_lib, &a->lib, err);
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

/* The last "[ERROR] ..." line of the profiler's log, if any. */
static void log_error_line(const agent_asprof *a, char *out, size_t len)
{
    out[0] = '\0';
    if (!a->log.inner[0])
        return;
    int fd = open(a->log.host, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
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
static jp_err command(agent_asprof *a, const jvm_proc *t, const char *args, jp_error *err)
{
    jvm_reply r;
    jp_error e;
    jp_error_init(&e);
    jp_err rc = jvm_attach_load(t, NULL, a->lib.inner, true, args, &r, &e);
    if (rc == JP_OK) {
        jvm_reply_cleanup(&r);
        a->loaded = true;
        return JP_OK;
    }
    char why[256];
    log_error_line(a, why, sizeof why);
    if (why[0] && rc == JP_ERR_PROTOCOL)
        return jp_error_set(err, rc, "pid %d: async-profiler %.*s: %s", (int)t->pid,
                            (int)strcspn(args, ","), args, why);
    if (err)
        *err = e;
    return rc;
}

static jp_err append(char *buf, size_t len, size_t *off, const char *s, jp_error *err)
{
    int n = snprintf(buf + *off, len - *off, "%s%s", *off ? "," : "", s);
    if (n < 0 || (size_t)n >= len - *off)
        return jp_error_set(err, JP_ERR_USAGE, "async-profiler arguments are too long");
    *off += (size_t)n;
    return JP_OK;
}

jp_err agent_asprof_start_args(uint32_t kinds, int64_t cpu_interval_ns, const char *file,
                               const char *log, char *buf, size_t len, jp_error *err)
{
    char part[200];
    size_t off = 0;
    buf[0] = '\0';
    jp_err rc = append(buf, len, &off, "start", err);
    /* async-profiler samples cpu by itself only when nothing else is asked */
    if (rc == JP_OK && (kinds & (1u << JP_KIND_CPU)))
        rc = append(buf, len, &off, "event=cpu", err);
    if (rc == JP_OK && (kinds & (1u << JP_KIND_CPU)) && cpu_interval_ns > 0) {
        snprintf(part, sizeof part, "interval=%lld", (long long)cpu_interval_ns);
        rc = append(buf, len, &off, part, err);
    }
    if (rc == JP_OK && (kinds & (1u << JP_KIND_WALL)))
        rc = append(buf, len, &off, "wall=20ms", err);
    /* live objects are the allocation samples still reachable at the end */
    if (rc == JP_OK && (kinds & (1u << JP_KIND_ALLOC | 1u << JP_KIND_LIVE)))
        rc = append(buf, len, &off, "alloc=512k", err);
    if (rc == JP_OK && (kinds & (1u << JP_KIND_LIVE)))
        rc = append(buf, len, &off, "live", err);
    /* its lock mode records both monitor enters and LockSupport.park */
    if (rc == JP_OK && (kinds & (1u << JP_KIND_LOCK | 1u << JP_KIND_PARK)))
        rc = append(buf, len, &off, "lock=1ms", err);
    /* async-profiler 4.x: native mallocs (and their frees) and pthread mutex waits */
    if (rc == JP_OK && (kinds & (1u << JP_KIND_NATIVEMEM)))
        rc = append(buf, len, &off, "nativemem=512k", err);
    if (rc == JP_OK && (kinds & (1u << JP_KIND_NATIVELOCK)))
        rc = append(buf, len, &off, "nativelock=1ms", err);
    if (rc == JP_OK && !(kinds & ~(1u << JP_KIND_CPUTIME)))
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

static jp_err ensure_log(agent_asprof *a, const jvm_proc *t, jp_error *err)
{
    if (a->log.inner[0])
        return JP_OK;
    char inner[160];
    snprintf(inner, sizeof inner, "%s/asprof-%d.log", JPROF_DIR, (int)t->nspid);
    return create_for_jvm(t, inner, &a->log, err);
}

jp_err agent_asprof_start(agent_asprof *a, const jvm_proc *t, uint32_t kinds,
                          int64_t cpu_interval_ns, jp_error *err)
{
    jp_err rc = agent_jprof_dir_ensure(t, err);
    if (rc == JP_OK)
        rc = ensure_log(a, t, err);
    if (rc != JP_OK)
        return rc;
    agent_asprof_drop_output(a);
    char inner[160];
    snprintf(inner, sizeof inner, "%s/asprof-%d-%d-%u.jfr", JPROF_DIR, (int)t->nspid, (int)getpid(),
             ++a->seq);
    rc = create_for_jvm(t, inner, &a->out, err);
    if (rc != JP_OK)
        return rc;
    char args[JVM_ATTACH_ARG_MAX];
    rc = agent_asprof_start_args(kinds, cpu_interval_ns, a->out.inner, a->log.inner, args,
                                 sizeof args, err);
    if (rc == JP_OK)
        rc = command(a, t, args, err);
    if (rc != JP_OK)
        agent_asprof_drop_output(a);
    return rc;
}

jp_err agent_asprof_stop(agent_asprof *a, const jvm_proc *t, bool quiet, jp_error *err)
{
    char args[256];
    if (a->log.inner[0])
        snprintf(args, sizeof args, "stop,log=%s%s", a->log.inner, quiet ? ",loglevel=none" : "");
    else
        snprintf(args, sizeof args, "stop%s", quiet ? ",loglevel=none" : "");
    return command(a, t, args, err);
}

void agent_asprof_drop_output(agent_asprof *a)
{
    if (!a->out.inner[0])
        return;
    jvm_tfile_remove(&a->out);
    a->out.inner[0] = '\0';
}

void agent_asprof_remove_all(agent_asprof *a)
{
    agent_asprof_drop_output(a);
    if (a->log.inner[0]) {
        jvm_tfile_remove(&a->log);
        a->log.inner[0] = '\0';
    }
    jvm_tfile_remove(&a->lib);
}
