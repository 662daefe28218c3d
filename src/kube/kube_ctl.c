#include "kube/kube_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"

#define KUBE_MAX_ARGS 64

void kube_opts_init(kube_opts *o)
{
    memset(o, 0, sizeof *o);
}

int64_t kube_timeout(const kube_opts *o)
{
    return o->timeout_ns > 0 ? o->timeout_ns : KUBE_DEFAULT_TIMEOUT_NS;
}

static const char *kubectl_bin(const kube_opts *o)
{
    if (o->kubectl && *o->kubectl)
        return o->kubectl;
    const char *env = getenv("KUBECTL");
    return env && *env ? env : "kubectl";
}

/* argv: kubectl, the global options, then args. false when too many. */
static bool build_argv(const kube_opts *o, const char *const *args, const char **argv)
{
    size_t n = 0;
    argv[n++] = kubectl_bin(o);
    if (o->context) {
        argv[n++] = "--context";
        argv[n++] = o->context;
    }
    if (o->kubeconfig) {
        argv[n++] = "--kubeconfig";
        argv[n++] = o->kubeconfig;
    }
    if (o->ns) {
        argv[n++] = "-n";
        argv[n++] = o->ns;
    }
    for (size_t i = 0; args[i]; i++) {
        if (n + 2 > KUBE_MAX_ARGS)
            return false;
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    return true;
}

void kube_args_format(const kube_opts *o, const char *const *args, char *buf, size_t len)
{
    const char *argv[KUBE_MAX_ARGS];
    size_t off = 0;
    buf[0] = '\0';
    if (!build_argv(o, args, argv))
        return;
    for (size_t i = 0; argv[i] && off < len; i++) {
        bool script = i > 0 && strcmp(argv[i - 1], "-c") == 0 && strchr(argv[i], '\n');
        int n =
            snprintf(buf + off, len - off, "%s%s", i ? " " : "", script ? "'<loader>'" : argv[i]);
        if (n < 0)
            break;
        off += (size_t)n;
    }
}

static void set_flags(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
}

jp_err kube_child_spawn(const kube_opts *o, const char *const *args, bool want_stdin, kube_child *c,
                        jp_error *err)
{
    const char *argv[KUBE_MAX_ARGS];
    memset(c, 0, sizeof *c);
    c->pid = -1;
    c->in = c->out = c->errfd = -1;
    if (!build_argv(o, args, argv))
        return jp_error_set(err, JP_ERR_USAGE, "too many kubectl arguments");
    if (o->verbose) {
        char line[1024];
        kube_args_format(o, args, line, sizeof line);
        fprintf(stderr, "+ %s\n", line);
    }
    int pin[2] = {-1, -1}, pout[2], perr[2];
    if ((want_stdin && pipe(pin) != 0) || pipe(pout) != 0 || pipe(perr) != 0)
        return jp_error_set(err, JP_ERR_IO, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        return jp_error_set(err, JP_ERR_IO, "fork: %s", strerror(errno));
    if (pid == 0) {
        int in = want_stdin ? pin[0] : open("/dev/null", O_RDONLY);
        dup2(in, 0);
        dup2(pout[1], 1);
        dup2(perr[1], 2);
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "kubectl-exec: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (want_stdin) {
        close(pin[0]);
        c->in = pin[1];
        set_flags(c->in);
    }
    close(pout[1]);
    close(perr[1]);
    c->out = pout[0];
    c->errfd = perr[0];
    set_flags(c->out);
    set_flags(c->errfd);
    c->pid = pid;
    return JP_OK;
}

void kube_child_drain_stderr(kube_child *c)
{
    if (c->errfd < 0)
        return;
    char buf[4096];
    for (;;) {
        ssize_t n = read(c->errfd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0) {
                close(c->errfd);
                c->errfd = -1;
            }
            return;
        }
        /* keep the end: kubectl's last words say what went wrong */
        size_t take = (size_t)n;
        if (c->errlen + take > sizeof c->errtext - 1) {
            size_t drop = c->errlen + take - (sizeof c->errtext - 1);
            if (drop > c->errlen)
                drop = c->errlen;
            memmove(c->errtext, c->errtext + drop, c->errlen - drop);
            c->errlen -= drop;
            if (take > sizeof c->errtext - 1 - c->errlen)
                take = sizeof c->errtext - 1 - c->errlen;
        }
        memcpy(c->errtext + c->errlen, buf + (size_t)n - take, take);
        c->errlen += take;
        c->errtext[c->errlen] = '\0';
    }
}

static int wait_status(int st)
{
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

/* waitpid with a deadline, polling (no SIGCHLD handler to disturb callers). */
static bool wait_until(pid_t pid, int64_t deadline, int *status)
{
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            *status = wait_status(st);
            return true;
        }
        if (r < 0 && errno != EINTR) {
            *status = -1;
            return true;
        }
        if (jp_time_mono_ns() >= deadline)
            return false;
        struct timespec ts = {0, 5 * 1000000};
        nanosleep(&ts, NULL);
    }
}

int kube_child_finish(kube_child *c, int64_t timeout_ns)
{
    if (c->in >= 0) {
        close(c->in);
        c->in = -1;
    }
    int status = -1;
    if (c->pid > 0) {
        if (!wait_until(c->pid, jp_time_mono_ns() + timeout_ns, &status)) {
            kill(c->pid, SIGTERM);
            if (!wait_until(c->pid, jp_time_mono_ns() + 2 * JP_NS_PER_SEC, &status)) {
                kill(c->pid, SIGKILL);
                wait_until(c->pid, jp_time_mono_ns() + 5 * JP_NS_PER_SEC, &status);
            }
        }
        c->pid = -1;
    }
    kube_child_drain_stderr(c);
    if (c->out >= 0)
        close(c->out);
    if (c->errfd >= 0)
        close(c->errfd);
    c->out = c->errfd = -1;
    return status;
}

/* [start, end) of the last non-empty line of t before end */
static size_t last_line(const char *t, size_t end, size_t *start)
{
    while (end && (t[end - 1] == '\n' || t[end - 1] == ' ' || t[end - 1] == '\r'))
        end--;
    size_t b = end;
    while (b && t[b - 1] != '\n')
        b--;
    *start = b;
    return end;
}

void kube_child_message(const kube_child *c, char *buf, size_t len)
{
    size_t start, end = last_line(c->errtext, c->errlen, &start);
    snprintf(buf, len, "%.*s", (int)(end - start), c->errtext + start);
    /* kubectl ends a failed exec with its own line, "command terminated
     * with exit code N": the reason is the probe's or its loader's line */
    if (strncmp(buf, "command terminated", 18) != 0)
        return;
    size_t e = start, b;
    while (e && (e = last_line(c->errtext, e, &b)) > 0) {
        if (memmem(c->errtext + b, e - b, "jprof-probe", 11)) {
            char tail[64];
            snprintf(tail, sizeof tail, "%s", buf);
            snprintf(buf, len, "%.*s (%s)", (int)(e - b), c->errtext + b, tail);
            return;
        }
        e = b;
    }
}

jp_err kube_child_error(const kube_child *c, int status, const char *what, jp_error *err)
{
    char msg[600];
    kube_child_message(c, msg, sizeof msg);
    jp_err code = JP_ERR_PROTOCOL;
    if (strstr(c->errtext, "Forbidden") || strstr(c->errtext, "forbidden"))
        code = JP_ERR_PERMISSION;
    else if (strstr(c->errtext, "NotFound") || strstr(c->errtext, "not found"))
        code = JP_ERR_NOT_FOUND;
    if (status == 127 && strstr(c->errtext, "cannot run"))
        code = JP_ERR_NOT_FOUND;
    return jp_error_set(err, code, "%s: %s", what,
                        msg[0]        ? msg
                        : status >= 0 ? "kubectl failed"
                                      : "kubectl was killed");
}

jp_err kube_run(const kube_opts *o, const char *const *args, jp_strbuf *out, jp_error *err)
{
    char what[512];
    kube_args_format(o, args, what, sizeof what);
    kube_child c;
    jp_err rc = kube_child_spawn(o, args, false, &c, err);
    if (rc != JP_OK)
        return rc;
    int64_t deadline = jp_time_mono_ns() + kube_timeout(o);
    bool timed_out = false, too_big = false;
    while (c.out >= 0 || c.errfd >= 0) {
        struct pollfd pf[2] = {{.fd = c.out, .events = POLLIN}, {.fd = c.errfd, .events = POLLIN}};
        int64_t left = deadline - jp_time_mono_ns();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        int n = poll(pf, 2, (int)(left / JP_NS_PER_MS) + 1);
        if (n < 0 && errno != EINTR)
            break;
        if (pf[1].revents)
            kube_child_drain_stderr(&c);
        if (pf[0].revents) {
            char buf[65536];
            ssize_t r = read(c.out, buf, sizeof buf);
            if (r > 0 && jp_strbuf_append(out, buf, (size_t)r) != JP_OK) {
                too_big = true;
                break;
            }
            if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
                close(c.out);
                c.out = -1;
            }
        }
    }
    int status = kube_child_finish(&c, timed_out || too_big ? 0 : 5 * JP_NS_PER_SEC);
    if (timed_out)
        return jp_error_set(err, JP_ERR_TIMEOUT, "%s: no answer within %lld s (killed it)", what,
                            (long long)(kube_timeout(o) / JP_NS_PER_SEC));
    if (too_big)
        return jp_error_set(err, JP_ERR_LIMIT, "%s: output larger than %zu bytes", what, out->cap);
    if (status != 0)
        return kube_child_error(&c, status, what, err);
    return JP_OK;
}

/* Appends c to buf (len bytes, *off used), keeping it NUL-terminated;
 * false once it is full. */
static bool put(char *buf, size_t len, size_t *off, char c)
{
    if (*off + 1 >= len)
        return false;
    buf[(*off)++] = c;
    buf[*off] = '\0';
    return true;
}

void kube_command_line(const char *prog, int argc, char *const *argv, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (const char *p = prog; *p; p++)
        put(buf, len, &off, *p);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* plain words as they are, anything else in single quotes */
        bool plain = *a != '\0';
        for (const char *p = a; *p; p++)
            if (!isalnum((unsigned char)*p) && !strchr("-_./=:,@%+", *p))
                plain = false;
        put(buf, len, &off, ' ');
        if (!plain)
            put(buf, len, &off, '\'');
        for (const char *p = a; *p; p++) {
            if (*p == '\'' && !plain) { /* ' -> '\'' */
                put(buf, len, &off, '\'');
                put(buf, len, &off, '\\');
                put(buf, len, &off, '\'');
            }
            put(buf, len, &off, *p);
        }
        if (!plain)
            put(buf, len, &off, '\'');
    }
}

size_t kube_hello_others(const kube_hello *h, char *buf, size_t len)
{
    size_t n = 0, off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < h->njvms; i++) {
        if (h->jvms[i].pid == h->jvm_pid)
            continue;
        int w = snprintf(buf + off, len - off, "%spid %d %s (--pid %d picks it)", n ? ", " : "",
                         h->jvms[i].pid, h->jvms[i].main_class[0] ? h->jvms[i].main_class : "?",
                         h->jvms[i].pid);
        n++;
        if (w < 0 || (size_t)w >= len - off)
            break;
        off += (size_t)w;
    }
    return n;
}
