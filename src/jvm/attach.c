#include "jvm/attach.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "base/timeutil.h"
#include "base/xalloc.h"

#define NS_PER_MS 1000000LL
/* HotSpot limits a command name to 16 bytes (attachListener.hpp). */
#define ATTACH_NAME_MAX 16

void jvm_attach_opts_init(jvm_attach_opts *o)
{
    o->attach_timeout_ns = 6 * JP_NS_PER_SEC;
    o->io_timeout_ns = 30 * JP_NS_PER_SEC;
    o->max_reply = 64u << 20;
    const char *env = getenv("JPROF_ATTACH_TIMEOUT");
    int64_t ns = 0;
    if (env && *env && jp_duration_parse(env, &ns, NULL) == JP_OK && ns > 0)
        o->attach_timeout_ns = ns;
}

void jvm_reply_cleanup(jvm_reply *r)
{
    if (!r)
        return;
    free(r->text);
    r->text = NULL;
    r->len = 0;
    r->code = 0;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / JP_NS_PER_SEC, .tv_nsec = ns % JP_NS_PER_SEC};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void socket_path(const jvm_proc *t, char *buf, size_t len)
{
    snprintf(buf, len, "/proc/%d/root/tmp/.java_pid%d", (int)t->pid, (int)t->nspid);
}

/* A socket at the target's path that is not its user's cannot be the JVM's
 * (HotSpot gives its socket to its effective user): a dead process with the
 * same pid left it, and in a sticky /tmp it also keeps the JVM from putting
 * its own there. Root removes it (CI: 423 such sockets of killed test JVMs
 * in /tmp, and a JVM of user nobody given the pid of one owned by root came
 * out as "connect: permission denied"); anyone else meets the connect error. */
static void drop_stale_socket(const jvm_proc *t)
{
    char path[96];
    struct stat st;
    socket_path(t, path, sizeof path);
    if (geteuid() == 0 && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid != t->euid)
        (void)unlink(path);
}

/* Root talking to another user's JVM must present that user's credentials. */
static bool need_switch(const jvm_proc *t)
{
    return geteuid() == 0 && (t->euid != 0 || t->egid != getegid());
}

/* Connects to the socket in the current credentials; returns fd or -errno. */
static int connect_plain(const char *dir, const char *name)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    int n = dir ? snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s", dir, name)
                : snprintf(sa.sun_path, sizeof sa.sun_path, "%s", name);
    if (n < 0 || (size_t)n >= sizeof sa.sun_path)
        return -ENAMETOOLONG;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/* In the child: only async-signal-safe calls, then _exit. Reports errno (0 =
 * ok) and passes the connected fd with SCM_RIGHTS. */
static void child_connect(const jvm_proc *t, int chan)
{
    char dir[64], name[32];
    snprintf(dir, sizeof dir, "/proc/%d/root/tmp", (int)t->pid);
    snprintf(name, sizeof name, ".java_pid%d", (int)t->nspid);
    int status = 0, fd = -1;
    /* resolve the target's /tmp while still privileged; relative connect after */
    if (chdir(dir) != 0 || setgroups(0, NULL) != 0 || setresgid(t->egid, t->egid, t->egid) != 0 ||
        setresuid(t->euid, t->euid, t->euid) != 0)
        status = errno;
    else {
        fd = connect_plain(NULL, name);
        if (fd < 0)
            status = -fd;
    }
    char cbuf[CMSG_SPACE(sizeof(int))];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec iov = {.iov_base = &status, .iov_len = sizeof status};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        mh.msg_control = cbuf;
        mh.msg_controllen = sizeof cbuf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    ssize_t w = sendmsg(chan, &mh, MSG_NOSIGNAL);
    _exit(w < 0 ? 2 : 0);
}

/* Forks a child that connects as the target's user; returns fd or -errno. */
static int connect_switched(const jvm_proc *t)
{
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0)
        return -errno;
    pid_t child = fork();
    if (child < 0) {
        int e = errno;
        close(sp[0]);
        close(sp[1]);
        return -e;
    }
    if (child == 0) {
        close(sp[0]);
        child_connect(t, sp[1]);
    }
    close(sp[1]);
    int status = EPROTO, fd = -1;
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = &status, .iov_len = sizeof status};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    struct pollfd pfd = {.fd = sp[0], .events = POLLIN};
    if (poll(&pfd, 1, 10000) == 1 && recvmsg(sp[0], &mh, MSG_CMSG_CLOEXEC) == sizeof status) {
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(&fd, CMSG_DATA(c), sizeof fd);
    }
    close(sp[0]);
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
        ;
    if (status == 0 && fd >= 0)
        return fd;
    if (fd >= 0)
        close(fd);
    return -(status ? status : EPROTO);
}

static int connect_target(const jvm_proc *t)
{
    if (need_switch(t))
        return connect_switched(t);
    char path[96];
    socket_path(t, path, sizeof path);
    return connect_plain(NULL, path);
}

/* Creates the trigger file the attach listener looks for on SIGQUIT.
 * Returns a descriptor of the directory holding it (so it can be removed
 * even after the JVM died and /proc/PID/cwd vanished) or -errno. */
static int create_trigger(const jvm_proc *t, char *name, size_t len)
{
    const char *dirs[2] = {"cwd", "root/tmp"};
    int last = EACCES;
    snprintf(name, len, ".attach_pid%d", (int)t->nspid);
    for (int i = 0; i < 2; i++) {
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%d/%s", (int)t->pid, dirs[i]);
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
            last = errno;
            continue;
        }
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0660);
        if (fd < 0) {
            last = errno;
            close(dfd);
            continue;
        }
        /* HotSpot accepts a trigger owned by its euid or root; prefer its euid */
        if (geteuid() == 0 && fchown(fd, t->euid, t->egid) != 0)
            (void)0;
        close(fd);
        return dfd;
    }
    return -last;
}

static jp_err errno_to_err(const jvm_proc *t, int e, const char *what, jp_error *err)
{
    if (e == EACCES || e == EPERM)
        return jp_error_set(err, JP_ERR_PERMISSION,
                            "pid %d: %s: permission denied; run jprof as user %s or as root",
                            (int)t->pid, what, t->user);
    if ((e == ENOENT || e == ESRCH) && !jvm_proc_alive(t))
        return jp_error_set(err, JP_ERR_EXITED, "pid %d exited during attach", (int)t->pid);
    return jp_error_set(err, JP_ERR_IO, "pid %d: %s: %s", (int)t->pid, what, strerror(e));
}

/* 1 when the process catches SIGQUIT (its SigCgt mask in /proc/PID/status),
 * 0 when it does not (yet), -errno when the file cannot be read. */
static int catches_sigquit(pid_t pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (jvm_read_small_file(path, buf, sizeof buf) < 0)
        return -errno;
    const char *line = strstr(buf, "\nSigCgt:");
    if (!line)
        return -EPROTO;
    char *end = NULL;
    errno = 0;
    unsigned long long mask = strtoull(line + 8, &end, 16);
    if (errno || end == line + 8)
        return -EPROTO;
    return ((mask >> (SIGQUIT - 1)) & 1) ? 1 : 0;
}

/* SIGQUIT ends a JVM that has mapped libjvm.so but not yet installed its
 * handler (its first tens of ms; seconds with a large pre-touched heap):
 * waits until the deadline for the handler, or for the socket (a JVM run
 * with -Xrs never installs the handler but opens its socket at start-up),
 * and never signals without the handler. On JP_OK *fd is the connected
 * socket, or negative when the JVM now catches SIGQUIT. */
static jp_err wait_sigquit_handler(const jvm_proc *t, int64_t deadline, int *fd, jp_error *err)
{
    int64_t delay = 5 * NS_PER_MS;
    *fd = -1;
    for (;;) {
        int c = catches_sigquit(t->pid);
        if (c == 1)
            return JP_OK;
        if (c < 0 && c != -EPROTO)
            return errno_to_err(t, -c, "/proc status", err);
        if (!jvm_proc_alive(t))
            return jp_error_set(err, JP_ERR_EXITED, "pid %d exited during attach", (int)t->pid);
        int64_t left = deadline - jp_time_mono_ns();
        if (left <= 0)
            return jp_error_set(err, JP_ERR_TIMEOUT,
                                "pid %d: no SIGQUIT handler and no attach socket (a JVM still "
                                "starting, or one run with -Xrs whose socket was removed); not "
                                "signalled, since SIGQUIT would end it; retry",
                                (int)t->pid);
        sleep_ns(delay < left ? delay : left);
        delay = delay * 2 > 200 * NS_PER_MS ? 200 * NS_PER_MS : delay * 2;
        *fd = connect_target(t);
        if (*fd >= 0)
            return JP_OK;
        if (*fd == -EACCES || *fd == -EPERM)
            return errno_to_err(t, -*fd, "connect", err);
    }
}

/* Makes the JVM start its attach listener and waits for the socket. */
static jp_err start_listener(const jvm_proc *t, const jvm_attach_opts *o, int *fd, jp_error *err)
{
    int64_t deadline = jp_time_mono_ns() + o->attach_timeout_ns;
    jp_err hr = wait_sigquit_handler(t, deadline, fd, err);
    if (hr != JP_OK || *fd >= 0)
        return hr;
    char trig[32];
    int dfd = create_trigger(t, trig, sizeof trig);
    if (dfd < 0)
        return errno_to_err(t, -dfd, "cannot create the attach trigger file", err);
    jp_err out = JP_OK;
    if (!jvm_proc_alive(t)) {
        out = jp_error_set(err, JP_ERR_EXITED, "pid %d exited during attach", (int)t->pid);
        goto done;
    }
    if (kill(t->pid, SIGQUIT) != 0) {
        out = errno_to_err(t, errno, "SIGQUIT", err);
        goto done;
    }
    int64_t delay = 10 * NS_PER_MS;
    for (;;) {
        int64_t left = deadline - jp_time_mono_ns();
        if (left <= 0)
            break;
        sleep_ns(delay < left ? delay : left);
        delay = delay * 2 > 500 * NS_PER_MS ? 500 * NS_PER_MS : delay * 2;
        *fd = connect_target(t);
        if (*fd >= 0)
            goto done;
        if (*fd == -EACCES || *fd == -EPERM) {
            out = errno_to_err(t, -*fd, "connect", err);
            goto done;
        }
        if (!jvm_proc_alive(t)) {
            out = jp_error_set(err, JP_ERR_EXITED, "pid %d exited during attach", (int)t->pid);
            goto done;
        }
    }
    out = jp_error_set(err, JP_ERR_TIMEOUT,
                       "pid %d: no attach listener after %.1f s (JVM busy in a safepoint, or "
                       "started with -XX:+DisableAttachMechanism?); retry or raise "
                       "JPROF_ATTACH_TIMEOUT",
                       (int)t->pid, (double)o->attach_timeout_ns / 1e9);
done:
    unlinkat(dfd, trig, 0);
    close(dfd);
    return out;
}

static jp_err send_request(int fd, const char *cmd, const char *args[3], jp_error *err)
{
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    jp_strbuf_append(&b, "1", 2); /* "1" and its NUL */
    jp_strbuf_append(&b, cmd, strlen(cmd) + 1);
    for (int i = 0; i < 3; i++)
        jp_strbuf_append(&b, args[i] ? args[i] : "", args[i] ? strlen(args[i]) + 1 : 1);
    jp_err rc = JP_OK;
    for (size_t off = 0; off < b.len;) {
        ssize_t n = send(fd, b.data + off, b.len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = jp_error_set(err, JP_ERR_IO, "attach request: %s", strerror(errno));
            break;
        }
        off += (size_t)n;
    }
    jp_strbuf_cleanup(&b);
    return rc;
}

static jp_err read_reply(int fd, const jvm_attach_opts *o, jp_strbuf *raw, jp_error *err)
{
    int64_t deadline = jp_time_mono_ns() + o->io_timeout_ns;
    char buf[65536];
    for (;;) {
        int64_t left = deadline - jp_time_mono_ns();
        if (left <= 0)
            return jp_error_set(err, JP_ERR_TIMEOUT, "no complete reply after %.1f s",
                                (double)o->io_timeout_ns / 1e9);
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, (int)(left / NS_PER_MS) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return jp_error_set(err, JP_ERR_IO, "poll: %s", strerror(errno));
        if (pr == 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return jp_error_set(err, JP_ERR_IO, "reading the reply: %s", strerror(errno));
        if (n == 0)
            return JP_OK;
        if (jp_strbuf_append(raw, buf, (size_t)n) != JP_OK)
            return jp_error_set(err, JP_ERR_LIMIT, "reply exceeds %zu bytes", o->max_reply);
    }
}

jp_err jvm_reply_parse(char *raw, size_t len, jvm_reply *out, jp_error *err)
{
    char *nl = memchr(raw, '\n', len);
    size_t head = nl ? (size_t)(nl - raw) : len;
    if (head == 0 || head > 12)
        return jp_error_set(err, JP_ERR_PROTOCOL, "reply without a result code");
    char num[16];
    memcpy(num, raw, head);
    num[head] = '\0';
    char *end = NULL;
    errno = 0;
    long code = strtol(num, &end, 10);
    if (errno || *end || code < -1000000 || code > 1000000)
        return jp_error_set(err, JP_ERR_PROTOCOL, "reply without a result code");
    size_t rest = nl ? len - head - 1 : 0;
    out->code = (int)code;
    out->text = jp_xmalloc(rest + 1);
    if (rest)
        memcpy(out->text, nl + 1, rest);
    out->text[rest] = '\0';
    out->len = rest;
    return JP_OK;
}

static jp_err open_connection(const jvm_proc *t, const jvm_attach_opts *o, int *fd, jp_error *err)
{
    if (!t->hotspot)
        return jp_error_set(err, JP_ERR_NOT_JVM, "pid %d is not a HotSpot JVM", (int)t->pid);
    if (t->attach_disabled)
        return jp_error_set(err, JP_ERR_ATTACH_DISABLED,
                            "pid %d runs with -XX:+DisableAttachMechanism: restart it without "
                            "that flag to diagnose it live",
                            (int)t->pid);
    if (geteuid() != 0 && (geteuid() != t->euid || getegid() != t->egid))
        return jp_error_set(err, JP_ERR_PERMISSION,
                            "pid %d runs as user %s (uid %lu gid %lu): run jprof as that user "
                            "or as root",
                            (int)t->pid, t->user, (unsigned long)t->euid, (unsigned long)t->egid);
    if (!jvm_proc_alive(t))
        return jp_error_set(err, JP_ERR_EXITED, "pid %d has exited", (int)t->pid);
    drop_stale_socket(t);
    *fd = connect_target(t);
    if (*fd >= 0)
        return JP_OK;
    if (*fd == -EACCES || *fd == -EPERM)
        return errno_to_err(t, -*fd, "connect", err);
    return start_listener(t, o, fd, err);
}

jp_err jvm_attach_cmd(const jvm_proc *t, const jvm_attach_opts *o, const char *cmd,
                      const char *arg0, const char *arg1, const char *arg2, jvm_reply *out,
                      jp_error *err)
{
    jvm_attach_opts defaults;
    if (!o) {
        jvm_attach_opts_init(&defaults);
        o = &defaults;
    }
    memset(out, 0, sizeof *out);
    const char *args[3] = {arg0, arg1, arg2};
    if (strlen(cmd) > ATTACH_NAME_MAX)
        return jp_error_set(err, JP_ERR_USAGE, "attach command name too long: %s", cmd);
    for (int i = 0; i < 3; i++)
        if (args[i] && strlen(args[i]) > JVM_ATTACH_ARG_MAX)
            return jp_error_set(err, JP_ERR_USAGE, "attach argument longer than %d bytes",
                                JVM_ATTACH_ARG_MAX);
    int fd = -1;
    jp_err rc = open_connection(t, o, &fd, err);
    if (rc != JP_OK)
        return rc;
    jp_strbuf raw;
    jp_strbuf_init(&raw, o->max_reply);
    rc = send_request(fd, cmd, args, err);
    if (rc == JP_OK)
        rc = read_reply(fd, o, &raw, err);
    close(fd);
    if (rc == JP_OK && raw.len == 0) {
        if (!jvm_proc_alive(t))
            rc = jp_error_set(err, JP_ERR_EXITED, "pid %d exited during attach", (int)t->pid);
        else
            rc = jp_error_set(err, JP_ERR_PROTOCOL,
                              "pid %d closed the attach connection without a reply "
                              "(credentials rejected?)",
                              (int)t->pid);
    }
    if (rc == JP_OK)
        rc = jvm_reply_parse(raw.data, raw.len, out, err);
    jp_strbuf_cleanup(&raw);
    if (rc != JP_OK)
        jp_error_prefix(err, "%s: ", cmd);
    return rc;
}

/* First line of a reply text, for messages. */
static void first_line(const char *text, char *buf, size_t len)
{
    size_t n = strcspn(text, "\n");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), text);
}

/* A jcmd that throws answers -1 and the exception; some JDKs answer 0. */
static bool reply_is_exception(const jvm_reply *r)
{
    char line[256];
    first_line(r->text, line, sizeof line);
    return strncmp(line, "java.", 5) == 0 && strstr(line, "Exception") != NULL;
}

jp_err jvm_jcmd(const jvm_proc *t, const jvm_attach_opts *o, const char *line, jvm_reply *out,
                jp_error *err)
{
    jp_err rc = jvm_attach_cmd(t, o, "jcmd", line, NULL, NULL, out, err);
    if (rc != JP_OK)
        return rc;
    if (out->code != 0 || reply_is_exception(out)) {
        char msg[256];
        first_line(out->text, msg, sizeof msg);
        rc = jp_error_set(err, JP_ERR_PROTOCOL, "pid %d: jcmd %s failed: %s", (int)t->pid, line,
                          msg[0] ? msg : "(no message)");
        jvm_reply_cleanup(out);
    }
    return rc;
}

/* Texts with which the JVM refuses dynamically loaded agents (JDK 21+). */
static bool reply_says_refused(const char *text)
{
    return strstr(text, "EnableDynamicAgentLoading") != NULL ||
           strstr(text, "agent loading is not enabled") != NULL ||
           strstr(text, "Dynamic agent loading") != NULL;
}

jp_err jvm_attach_load(const jvm_proc *t, const jvm_attach_opts *o, const char *lib, bool absolute,
                       const char *options, jvm_reply *out, jp_error *err)
{
    if (t->agents_disabled)
        return jp_error_set(err, JP_ERR_AGENT_REFUSED,
                            "pid %d runs with -XX:-EnableDynamicAgentLoading: agents cannot be "
                            "loaded (use --snapshot thread-print)",
                            (int)t->pid);
    jp_err rc = jvm_attach_cmd(t, o, "load", lib, absolute ? "true" : "false", options, out, err);
    if (rc != JP_OK)
        return rc;
    char msg[256];
    first_line(out->text, msg, sizeof msg);
    const char *ret = strstr(out->text, "return code: ");
    long agent_rc = ret ? strtol(ret + 13, NULL, 10) : 0;
    if (reply_says_refused(out->text)) {
        rc = jp_error_set(err, JP_ERR_AGENT_REFUSED, "pid %d refused to load an agent: %s",
                          (int)t->pid, msg);
    } else if (out->code != 0 || strstr(out->text, "was not loaded") || agent_rc != 0) {
        /* JDK 21+ answers 0 and reports the failure only in the text */
        const char *why = agent_rc == 100   ? " (bad jar or no Agent-Class)"
                          : agent_rc == 102 ? " (agentmain threw)"
                                            : "";
        rc = jp_error_set(err, JP_ERR_PROTOCOL, "pid %d: loading %s failed: %s%s", (int)t->pid, lib,
                          msg[0] ? msg : "(no message)", why);
    }
    if (rc != JP_OK)
        jvm_reply_cleanup(out);
    return rc;
}

jp_err jvm_attach_properties(const jvm_proc *t, const jvm_attach_opts *o, jvm_reply *out,
                             jp_error *err)
{
    jp_err rc = jvm_attach_cmd(t, o, "properties", NULL, NULL, NULL, out, err);
    if (rc == JP_OK && out->code != 0) {
        rc = jp_error_set(err, JP_ERR_PROTOCOL, "pid %d: properties failed (code %d)", (int)t->pid,
                          out->code);
        jvm_reply_cleanup(out);
    }
    return rc;
}

jp_err jvm_attach_protocol_version(const jvm_proc *t, const jvm_attach_opts *o, int *version,
                                   jp_error *err)
{
    jvm_reply r;
    jp_err rc = jvm_attach_cmd(t, o, "getversion", NULL, NULL, NULL, &r, err);
    if (rc != JP_OK)
        return rc;
    /* older JVMs: "-1 Operation getversion not recognized!" */
    long v = r.code == 0 ? strtol(r.text, NULL, 10) : 1;
    *version = v >= 1 && v < 100 ? (int)v : 1;
    jvm_reply_cleanup(&r);
    return JP_OK;
}
