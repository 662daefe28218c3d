#include "jvm/targetfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "base/failinj.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jvm/cleanup.h"

static unsigned name_counter;

bool jvm_proc_shares_root(const jvm_proc *t)
{
    char root[48];
    snprintf(root, sizeof root, "/proc/%d/root/", (int)t->pid);
    struct stat ours, theirs;
    return stat("/", &ours) == 0 && stat(root, &theirs) == 0 && ours.st_dev == theirs.st_dev &&
           ours.st_ino == theirs.st_ino;
}

void jvm_tfile_at(const jvm_proc *t, const char *inner, jvm_tfile *f)
{
    snprintf(f->inner, sizeof f->inner, "%s", inner);
    snprintf(f->host, sizeof f->host, "/proc/%d/root%s", (int)t->pid, inner);
    f->shared_root = jvm_proc_shares_root(t);
}

/* The start of every name jvm_tfile_name gives for process `owner`. */
static void owned_prefix(pid_t owner, char *buf, size_t len)
{
    snprintf(buf, len, "jprof-%d-", (int)owner);
}

jp_err jvm_tfile_name(const jvm_proc *t, const char *suffix, jvm_tfile *f, jp_error *err)
{
    memset(f, 0, sizeof *f);
    char prefix[32], inner[160];
    owned_prefix(getpid(), prefix, sizeof prefix);
    unsigned rnd = (unsigned)(jp_time_mono_ns() ^ (int64_t)getpid() << 16) & 0xffffffu;
    snprintf(inner, sizeof inner, "/tmp/%s%u-%06x%s", prefix, ++name_counter, rnd,
             suffix ? suffix : "");
    jvm_tfile_at(t, inner, f);
    f->cleanup = jvm_cleanup_register_file(f->host);
    if (!f->cleanup)
        return jp_error_set(err, JP_ERR_LIMIT, "too many pending cleanup actions");
    return JP_OK;
}

static int remove_owned_at(const char *dir, pid_t owner)
{
    char prefix[32];
    owned_prefix(owner, prefix, sizeof prefix);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 &&
            unlinkat(dirfd(d), e->d_name, 0) == 0)
            removed++;
    closedir(d);
    return removed;
}

int jvm_tfile_remove_owned(pid_t owner)
{
    return remove_owned_at("/tmp", owner);
}

int jvm_tfile_remove_owned_in(const jvm_proc *t, pid_t owner)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/root/tmp", (int)t->pid);
    return remove_owned_at(dir, owner);
}

void jvm_tfile_fixed(const jvm_proc *t, const char *name, jvm_tfile *f)
{
    memset(f, 0, sizeof *f);
    char inner[160];
    snprintf(inner, sizeof inner, "/tmp/%s", name);
    jvm_tfile_at(t, inner, f);
}

static jp_err copy_fd(int in, int out, const char *src, jp_error *err)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return jp_error_set(err, JP_ERR_IO, "%s: %s", src, strerror(errno));
        if (n == 0)
            return JP_OK;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return jp_error_set(err, jp_err_from_errno(errno), "writing into the target: %s",
                                    strerror(errno));
            off += w;
        }
    }
}

/* Creates host_path for the target: never through a link, never over an
 * existing file. */
static jp_err open_new(const char *host_path, int *fd, jp_error *err)
{
    *fd = open(host_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (*fd < 0)
        return jp_error_set(err, jp_err_from_errno(errno), "%s: %s", host_path, strerror(errno));
    return JP_OK;
}

/* Hands a file we wrote to the target's user (the JVM runs as its own user
 * and must be able to read it), then closes it. rc is the write's result. */
static jp_err close_for_target(const jvm_proc *t, int fd, const char *host_path, jp_err rc,
                               jp_error *err)
{
    if (rc == JP_OK && geteuid() == 0 && fchown(fd, t->euid, t->egid) != 0)
        rc = jp_error_set(err, JP_ERR_IO, "chown %s: %s", host_path, strerror(errno));
    if (rc == JP_OK && fchmod(fd, 0644) != 0)
        rc = jp_error_set(err, JP_ERR_IO, "chmod %s: %s", host_path, strerror(errno));
    if (close(fd) != 0 && rc == JP_OK)
        rc = jp_error_set(err, jp_err_from_errno(errno), "%s: %s", host_path, strerror(errno));
    return rc;
}

jp_err jvm_tfile_copy_in(const jvm_proc *t, const char *src, jvm_tfile *f, jp_error *err)
{
    jvm_tfile tmp;
    jp_err rc = jvm_tfile_name(t, ".part", &tmp, err);
    if (rc != JP_OK)
        return rc;
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        jvm_tfile_remove(&tmp);
        return jp_error_set(err, JP_ERR_NOT_FOUND, "%s: %s", src, strerror(errno));
    }
    int out;
    rc = open_new(tmp.host, &out, err);
    if (rc != JP_OK) {
        close(in);
        jvm_tfile_remove(&tmp);
        return rc;
    }
    rc = copy_fd(in, out, src, err);
    close(in);
    rc = close_for_target(t, out, tmp.host, rc, err);
    if (rc == JP_OK && !f->cleanup)
        f->cleanup = jvm_cleanup_register_file(f->host);
    if (rc == JP_OK && rename(tmp.host, f->host) != 0)
        rc = jp_error_set(err, jp_err_from_errno(errno), "rename to %s: %s", f->host,
                          strerror(errno));
    jvm_tfile_remove(&tmp);
    return rc;
}

jp_err jvm_tfile_write(const jvm_proc *t, const jvm_tfile *f, const void *data, size_t len,
                       jp_error *err)
{
    int fd;
    jp_err rc = open_new(f->host, &fd, err);
    if (rc != JP_OK)
        return rc;
    for (size_t off = 0; off < len && rc == JP_OK;) {
        ssize_t w = jp_fail_inject("target write") ? (errno = EIO, -1)
                                                   : write(fd, (const char *)data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            rc = jp_error_set(err, jp_err_from_errno(errno), "writing %s: %s", f->inner,
                              strerror(errno));
        else
            off += (size_t)w;
    }
    return close_for_target(t, fd, f->host, rc, err);
}

jp_err jvm_tfile_read(const jvm_tfile *f, size_t cap, char **data, size_t *len, jp_error *err)
{
    *data = NULL;
    *len = 0;
    int fd = open(f->host, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return jp_error_set(err, errno == ENOENT ? JP_ERR_NOT_FOUND : JP_ERR_IO, "%s: %s", f->inner,
                            strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return jp_error_set(err, JP_ERR_IO, "%s: not a regular file", f->inner);
    }
    if ((uint64_t)st.st_size > cap) {
        close(fd);
        return jp_error_set(err, JP_ERR_LIMIT, "%s: %lld bytes exceed the %zu byte limit", f->inner,
                            (long long)st.st_size, cap);
    }
    size_t want = (size_t)st.st_size;
    char *buf = jp_xmalloc(want + 1);
    size_t got = 0;
    while (got < want) {
        ssize_t n = read(fd, buf + got, want - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    *data = buf;
    *len = got;
    return JP_OK;
}

/* True when the process behind f->host is gone: its /proc/PID/root no
 * longer resolves. */
static bool target_gone(const jvm_tfile *f)
{
    size_t hl = strlen(f->host), il = strlen(f->inner);
    if (il >= hl || strcmp(f->host + hl - il, f->inner) != 0)
        return false;
    char root[sizeof f->host];
    snprintf(root, sizeof root, "%.*s/", (int)(hl - il), f->host);
    struct stat st;
    return stat(root, &st) != 0 && errno == ENOENT;
}

void jvm_tfile_remove(jvm_tfile *f)
{
    /* by the inner name only when the JVM is gone: while it lives the two
     * names are one file, and a second unlink could hit a file someone
     * created there in between (the helper lock is handed over that way) */
    if (f->host[0] && unlink(f->host) != 0 && errno == ENOENT && f->shared_root && f->inner[0] &&
        target_gone(f))
        unlink(f->inner);
    jvm_cleanup_unregister(f->cleanup);
    f->cleanup = 0;
}

jp_err jvm_tmp_free_bytes(const jvm_proc *t, uint64_t *free_bytes, jp_error *err)
{
    jvm_tfile f = {0};
    jvm_tfile_at(t, "/tmp", &f);
    struct statvfs sv;
    if (statvfs(f.host, &sv) != 0)
        return jp_error_set(err, errno == ENOENT ? JP_ERR_EXITED : jp_err_from_errno(errno),
                            "statvfs %s: %s", f.host, strerror(errno));
    *free_bytes = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
    return JP_OK;
}
