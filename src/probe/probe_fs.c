#include "probe/probe_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jvm/engine.h"
#include "jvm/proc.h"
#include "probe/probe_profile.h"

/* where earlier probes' directories are looked for (besides the parent of
 * this probe's own, wherever the loader found a place to run) */
static const char *const bases[] = {"/tmp", "/dev/shm", "/var/tmp"};

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
    const char *base = strrchr(dir, '/');
    if (dir[0] != '/' || !base || base == dir || strstr(dir, "/../") || strstr(dir, "/./") ||
        strstr(dir, "//"))
        return false;
    return entry_pid(base + 1) == pid;
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

/* A gone probe's directory: its recordings (named after its worker, and
 * after itself for probes before the watchdog became the parent) stopped,
 * its dump files and the directory removed. */
static bool clean_one(const jvm_proc *t, const char *dir, pid_t pid)
{
    pid_t worker = probe_worker_of(dir);
    int stopped = t ? probe_profile_stop_orphans(t, (int)pid) : 0;
    if (t && worker)
        stopped += probe_profile_stop_orphans(t, (int)worker);
    jvm_engine_remove_files_of(pid);
    if (worker)
        jvm_engine_remove_files_of(worker);
    if (!probe_dir_remove(dir, pid))
        return false;
    fprintf(stderr, "jprof-probe: removed %s left by an earlier probe (pid %d, gone)%s\n", dir,
            (int)pid, stopped ? "; stopped its recording" : "");
    return true;
}

static int clean_base(const jvm_proc *t, const char *base, pid_t self)
{
    int cleaned = 0;
    DIR *d = opendir(base);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t pid = entry_pid(e->d_name);
        char dir[512];
        if (!pid || pid == self ||
            snprintf(dir, sizeof dir, "%s/%s", base, e->d_name) >= (int)sizeof dir)
            continue;
        if (!probe_alive(pid, dir) && clean_one(t, dir, pid))
            cleaned++;
    }
    closedir(d);
    return cleaned;
}

int probe_clean_stale(const jvm_proc *t, pid_t self, const char *own_dir)
{
    int cleaned = 0;
    bool own_base_done = !own_dir;
    char own_base[512] = "";
    if (own_dir) {
        snprintf(own_base, sizeof own_base, "%s", own_dir);
        char *slash = strrchr(own_base, '/');
        if (slash)
            *slash = '\0';
    }
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        cleaned += clean_base(t, bases[i], self);
        if (strcmp(bases[i], own_base) == 0)
            own_base_done = true;
    }
    if (!own_base_done && own_base[0])
        cleaned += clean_base(t, own_base, self);
    return cleaned;
}

/* The worker's pid, written into its directory so that a later probe can
 * stop the recordings of a session whose two processes are both gone. */
#define WORKER_FILE "worker.pid"

static void write_worker_pid(const char *dir, pid_t worker)
{
    char path[512], text[24];
    if (!dir || snprintf(path, sizeof path, "%s/" WORKER_FILE, dir) >= (int)sizeof path)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    int n = snprintf(text, sizeof text, "%d\n", (int)worker);
    ssize_t w = write(fd, text, (size_t)n);
    (void)w;
    close(fd);
}

pid_t probe_worker_of(const char *dir)
{
    char path[512], text[24];
    if (snprintf(path, sizeof path, "%s/" WORKER_FILE, dir) >= (int)sizeof path)
        return 0;
    if (jvm_read_small_file(path, text, sizeof text) <= 0)
        return 0;
    char *end;
    long v = strtol(text, &end, 10);
    return v > 0 && v <= 4194304 && (*end == '\n' || *end == '\0') ? (pid_t)v : 0;
}

static volatile sig_atomic_t worker_pid;

static void forward_signal(int sig)
{
    if (worker_pid > 0)
        kill((pid_t)worker_pid, sig);
}

/* The watchdog's life: forwards stop signals to the worker, reaps it, and
 * cleans up after it unless it said it did; never returns. */
static void watchdog_run(const jvm_proc *t, const char *dir, pid_t worker, int rfd)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* the protocol's pipes are the worker's: kubectl's stream ends when the
     * worker's output does and this process exits; stderr stays for logs */
    int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (nul >= 0) {
        dup2(nul, 0);
        dup2(nul, 1);
        close(nul);
    }
    int st = 0;
    pid_t r;
    do
        r = waitpid(worker, &st, 0);
    while (r < 0 && errno == EINTR);
    char c = 0;
    ssize_t n;
    do
        n = read(rfd, &c, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1 || c != 'D') {
        /* the worker died without cleaning up (SIGKILL, the OOM killer) */
        int stopped = t ? probe_profile_stop_orphans(t, (int)worker) : 0;
        jvm_engine_remove_files_of(worker);
        if (dir && *dir)
            probe_dir_remove(dir, getpid());
        fprintf(stderr, "jprof-probe: the probe (pid %d) %s %d; its watchdog cleaned up%s\n",
                (int)worker, WIFSIGNALED(st) ? "was killed by signal" : "exited with status",
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
                stopped ? " and stopped its recording" : "");
    }
    _exit(WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st));
}

int probe_watchdog_start(const jvm_proc *t, const char *dir)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    pid_t watchdog = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid > 0) {
        close(p[1]);
        worker_pid = pid;
        write_worker_pid(dir, pid);
        watchdog_run(t, dir, pid, p[0]);
    }
    close(p[0]);
    /* the watchdog gone (killed): clean up and end as if told to stop */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != watchdog) /* it died before the line above */
        raise(SIGTERM);
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
