#include "probe/probe_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/probe_profile.h"

static const char *const bases[] = {"/tmp", "/dev/shm"};

/* The pid in a directory entry "jprof-probe-PID[.SUFFIX]"; 0 when the name
 * is not one. */
static pid_t entry_pid(const char *name)
{
    size_t n = strlen(PROBE_DIR_PREFIX);
    if (strncmp(name, PROBE_DIR_PREFIX, n) != 0)
        return 0;
    const char *p = name + n;
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (end == p || errno || v <= 0 || v > 4194304 || (*end != '\0' && *end != '.'))
        return 0;
    if (*end == '.' && (strchr(end, '/') || strstr(end, "..")))
        return 0;
    return (pid_t)v;
}

bool probe_dir_is_ours(const char *dir, pid_t pid)
{
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        size_t n = strlen(bases[i]);
        if (strncmp(dir, bases[i], n) == 0 && dir[n] == '/' && entry_pid(dir + n + 1) == pid)
            return true;
    }
    return false;
}

bool probe_dir_remove(const char *dir, pid_t pid)
{
    if (!probe_dir_is_ours(dir, pid))
        return false;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT;
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return false;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(dfd, e->d_name, 0);
    closedir(d);
    return rmdir(dir) == 0 || errno == ENOENT;
}

void probe_tmp_files_remove(pid_t pid)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "jprof-%d-", (int)pid);
    DIR *d = opendir("/tmp");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/* A probe still runs from this directory: its pid is alive and its program
 * was started from inside the directory (pids are reused). */
static bool probe_alive(pid_t pid, const char *dir)
{
    char link[64], exe[512];
    snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(link, exe, sizeof exe - 1);
    if (n < 0)
        return errno == EACCES || errno == EPERM; /* someone else's: not ours to judge */
    exe[n] = '\0';
    size_t dl = strlen(dir);
    return strncmp(exe, dir, dl) == 0 && exe[dl] == '/';
}

int probe_clean_stale(const jvm_proc *t, pid_t self)
{
    int cleaned = 0;
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        DIR *d = opendir(bases[i]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            pid_t pid = entry_pid(e->d_name);
            if (!pid || pid == self)
                continue;
            char dir[512];
            snprintf(dir, sizeof dir, "%s/%s", bases[i], e->d_name);
            if (probe_alive(pid, dir))
                continue;
            int stopped = t ? probe_profile_stop_orphans(t, (int)pid) : 0;
            probe_tmp_files_remove(pid);
            if (probe_dir_remove(dir, pid)) {
                fprintf(stderr,
                        "jprof-probe: removed %s left by an earlier probe (pid %d, gone)%s\n", dir,
                        (int)pid, stopped ? "; stopped its recording" : "");
                cleaned++;
            }
        }
        closedir(d);
    }
    return cleaned;
}

static void watchdog_run(const jvm_proc *t, const char *dir, pid_t probe, int rfd)
{
    setsid();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGPIPE, &sa, NULL);
    /* let go of the protocol pipes: kubectl must see EOF when the probe ends */
    int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (nul >= 0) {
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(nul, 2);
        close(nul);
    }
    char c = 0;
    ssize_t n;
    do
        n = read(rfd, &c, 1);
    while (n < 0 && errno == EINTR);
    if (n == 1 && c == 'D')
        _exit(0);
    /* the probe died without cleaning up (SIGKILL, OOM killer) */
    if (t)
        probe_profile_stop_orphans(t, (int)probe);
    probe_tmp_files_remove(probe);
    if (dir && *dir)
        probe_dir_remove(dir, probe);
    _exit(0);
}

int probe_watchdog_start(const jvm_proc *t, const char *dir)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    pid_t probe = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[1]);
        /* a grandchild, so nobody has to reap it and it is not our child */
        if (fork() != 0)
            _exit(0);
        watchdog_run(t, dir, probe, p[0]);
    }
    close(p[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return p[1];
}

void probe_watchdog_done(int fd)
{
    if (fd < 0)
        return;
    char c = 'D';
    ssize_t n = write(fd, &c, 1);
    (void)n;
    close(fd);
}
