#include "kube/kube_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "wire/batch.h"
#include "wire/batch_json.h"
#include "wire/heap_json.h"
#include "wire/snapshot_json.h"

#define PROBE_MAX_BYTES (64u << 20) /* a probe binary larger than this is not ours */
#define KUBE_BYE_WAIT_NS (5 * JP_NS_PER_SEC)

struct kube_session {
    kube_opts opts;
    char pod[256], container[256];
    kube_child c;
    kube_hello hello;
    char machine[32], arch[32]; /* the pod's `uname -m` and its Kubernetes name, "" unknown */
    char *buf;                  /* stdout bytes not yet returned as lines */
    size_t len, cap, off;
    unsigned next_id;
    double open_ms;
    jp_gc_window *gc; /* the GC summary of the last window read, NULL none */
};

/* POSIX sh, busybox ash and dash alike. Its first line names the machine
 * (`uname -m`, else the kernel's arch sysctl) so the client sends the probe
 * of the pod's architecture. The probe's pid is the shell's $$ (exec),
 * which names the directory so a later probe can tell a leftover from a
 * live one (src/probe/probe_fs.h). The directory: the first place where
 * this user may write and a program may run - /tmp, /dev/shm, /var/tmp,
 * $HOME, then any other writable mount not mounted noexec (an emptyDir of
 * the pod's) - each tried with a two-line script; the reason each was
 * refused goes into exit 92's message. $1, when given, is the JVM's pid for
 * the probe's --pid. */
static const char loader[] =
    "m=$(uname -m 2>/dev/null) || m=\n"
    "[ -n \"$m\" ] || { read -r m </proc/sys/kernel/arch; } 2>/dev/null || m=unknown\n"
    "echo \"jprof-probe-loader ${m:-unknown}\"\n"
    "umask 077; IFS= read -r n || exit 90\n"
    "case $n in ''|*[!0-9]*) echo \"jprof-probe loader: expected the probe size, got '$n'\" >&2; "
    "exit 91;; esac\n"
    "d= why=\n"
    "try() { case $1 in ''|/|*' '*) return 1;; esac; [ -d \"$1\" ] || return 1\n"
    "t=$(mktemp -d \"$1/jprof-probe-$$.XXXXXX\" 2>/dev/null) || { t=$1/jprof-probe-$$; "
    "mkdir \"$t\" 2>/dev/null || { why=\"$why $1 (not writable)\"; return 1; }; }\n"
    "printf '#!/bin/sh\\nexit 0\\n' >\"$t/x\" && chmod 700 \"$t/x\" && \"$t/x\" 2>/dev/null && "
    "rm -f \"$t/x\" && d=$t && return 0\n"
    "why=\"$why $1 (noexec)\"; rm -rf \"$t\"; return 1; }\n"
    "for b in /tmp /dev/shm /var/tmp \"$HOME\"; do try \"$b\" && break; done\n"
    "[ -n \"$d\" ] || while read -r _ m _ o _; do case \",$o,\" in *,ro,*|*,noexec,*) continue;; "
    "esac; case $m in /|/tmp|/dev/shm|/var/tmp|/proc*|/sys*|/dev|/dev/*|/etc/*) continue;; esac; "
    "try \"$m\" && break; done </proc/self/mounts\n"
    "[ -n \"$d\" ] || { echo \"jprof-probe loader: no directory where a program may run: "
    "tried$why\" "
    ">&2; exit 92; }\n"
    "if command -v head >/dev/null 2>&1; then head -c \"$n\" >\"$d/jprof-probe\"; "
    "else dd bs=1 count=\"$n\" of=\"$d/jprof-probe\" 2>/dev/null; fi\n"
    "chmod 700 \"$d/jprof-probe\" && \"$d/jprof-probe\" --version >/dev/null 2>&1 || { "
    "echo \"jprof-probe loader: the probe does not run here (received $(wc -c <\"$d/jprof-probe\" "
    "2>/dev/null) of $n bytes; another CPU architecture?)\" >&2; rm -rf \"$d\"; exit 93; }\n"
    "exec \"$d/jprof-probe\" --dir \"$d\" ${1:+--pid \"$1\"}\n";

const char *kube_loader_script(void)
{
    return loader;
}

const kube_hello *kube_session_hello(const kube_session *s)
{
    return &s->hello;
}

const char *kube_session_container(const kube_session *s)
{
    return s->container;
}

double kube_session_open_ms(const kube_session *s)
{
    return s->open_ms;
}

/* ---- bytes to and from kubectl ---- */

static jp_err gone(kube_session *s, const char *doing, jp_error *err)
{
    int status = kube_child_finish(&s->c, 2 * JP_NS_PER_SEC);
    char what[600];
    snprintf(what, sizeof what, "pod %s, container %s: kubectl exec ended while %s", s->pod,
             s->container[0] ? s->container : "(default)", doing);
    jp_err rc = kube_child_error(&s->c, status, what, err);
    if (rc == JP_ERR_PROTOCOL || rc == JP_ERR_NOT_FOUND)
        err->code = rc = JP_ERR_EXITED;
    return rc;
}

static jp_err write_all(kube_session *s, const void *data, size_t len, int64_t deadline,
                        jp_error *err)
{
    const char *p = data;
    while (len) {
        if (s->c.in < 0)
            return gone(s, "the probe was sent", err);
        struct pollfd pf[2] = {{.fd = s->c.in, .events = POLLOUT},
                               {.fd = s->c.errfd, .events = POLLIN}};
        int64_t left = deadline - jp_time_mono_ns();
        if (left <= 0)
            return jp_error_set(err, JP_ERR_TIMEOUT,
                                "pod %s: kubectl exec took no input for %lld s", s->pod,
                                (long long)(kube_timeout(&s->opts) / JP_NS_PER_SEC));
        if (poll(pf, 2, (int)(left / JP_NS_PER_MS) + 1) < 0 && errno != EINTR)
            return jp_error_set(err, JP_ERR_IO, "poll: %s", strerror(errno));
        if (pf[1].revents)
            kube_child_drain_stderr(&s->c);
        if (pf[0].revents & (POLLERR | POLLHUP | POLLNVAL))
            return gone(s, "the probe was sent", err);
        if (!(pf[0].revents & POLLOUT))
            continue;
        ssize_t n = write(s->c.in, p, len);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n < 0)
            return gone(s, "the probe was sent", err);
        p += n;
        len -= (size_t)n;
    }
    return JP_OK;
}

/* One line of the probe's stdout (NUL-terminated in s->buf, valid until
 * the next call). */
static jp_err read_line(kube_session *s, int64_t deadline, const char *doing, char **line,
                        jp_error *err)
{
    for (;;) {
        char *nl = s->len > s->off ? memchr(s->buf + s->off, '\n', s->len - s->off) : NULL;
        if (nl) {
            *nl = '\0';
            *line = s->buf + s->off;
            s->off = (size_t)(nl - s->buf) + 1;
            return JP_OK;
        }
        if (s->off) {
            memmove(s->buf, s->buf + s->off, s->len - s->off);
            s->len -= s->off;
            s->off = 0;
        }
        if (s->len >= KUBE_REPLY_MAX)
            return jp_error_set(err, JP_ERR_LIMIT, "pod %s: a probe reply is longer than %u bytes",
                                s->pod, KUBE_REPLY_MAX);
        if (s->c.out < 0)
            return gone(s, doing, err);
        struct pollfd pf[2] = {{.fd = s->c.out, .events = POLLIN},
                               {.fd = s->c.errfd, .events = POLLIN}};
        int64_t left = deadline - jp_time_mono_ns();
        if (left <= 0)
            return jp_error_set(err, JP_ERR_TIMEOUT,
                                "pod %s, container %s: no answer from the probe within %lld s "
                                "while %s",
                                s->pod, s->container[0] ? s->container : "(default)",
                                (long long)(kube_timeout(&s->opts) / JP_NS_PER_SEC), doing);
        if (poll(pf, 2, (int)(left / JP_NS_PER_MS) + 1) < 0 && errno != EINTR)
            return jp_error_set(err, JP_ERR_IO, "poll: %s", strerror(errno));
        if (pf[1].revents)
            kube_child_drain_stderr(&s->c);
        if (!pf[0].revents)
            continue;
        if (s->cap - s->len < 65536)
            s->buf = jp_xgrow(s->buf, &s->cap, s->len + 65536, 1);
        ssize_t n = read(s->c.out, s->buf + s->len, s->cap - s->len);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0) {
            close(s->c.out);
            s->c.out = -1;
            continue;
        }
        s->len += (size_t)n;
    }
}

/* Reads lines until the reply to op (or a protocol error) arrives. */
static jp_err await_reply(kube_session *s, const char *op, int64_t deadline, json_t **out,
                          jp_error *err)
{
    *out = NULL;
    for (;;) {
        char *line = NULL;
        jp_err rc = read_line(s, deadline, op, &line, err);
        if (rc != JP_OK)
            return rc;
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        if (!json_is_object(j)) {
            json_decref(j);
            return jp_error_set(err, JP_ERR_PROTOCOL,
                                "pod %s: the probe answered something that is not a JSON "
                                "object (column %d: %s)",
                                s->pod, je.column, je.text);
        }
        const char *rop = json_string_value(json_object_get(j, "op"));
        bool ok = json_is_true(json_object_get(j, "ok"));
        if (rop && (strcmp(rop, op) == 0 || strcmp(rop, "error") == 0)) {
            if (!ok) {
                const json_t *e = json_object_get(j, "error");
                json_int_t code = json_integer_value(json_object_get(e, "code"));
                const char *msg = json_string_value(json_object_get(e, "message"));
                rc = jp_error_set(err,
                                  code > 0 && code < JP_ERR__COUNT ? (jp_err)code : JP_ERR_PROTOCOL,
                                  "pod %s: %s: %s", s->pod, op, msg ? msg : "failed");
                json_decref(j);
                return rc;
            }
            *out = j;
            return JP_OK;
        }
        json_decref(j); /* an answer to something earlier: not ours */
    }
}

static jp_err request(kube_session *s, json_t *req, const char *op, int64_t timeout_ns,
                      json_t **reply, jp_error *err)
{
    char id[24];
    snprintf(id, sizeof id, "%u", ++s->next_id);
    json_object_set_new(req, "op", json_string(op));
    json_object_set_new(req, "id", json_string(id));
    char *text = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    if (!text)
        return jp_error_set(err, JP_ERR_NOMEM, "out of memory");
    size_t n = strlen(text);
    text[n] = '\n';
    int64_t deadline = jp_time_mono_ns() + timeout_ns;
    jp_err rc = write_all(s, text, n + 1, deadline, err);
    free(text);
    if (rc != JP_OK)
        return rc;
    return await_reply(s, op, deadline, reply, err);
}

/* ---- opening ---- */

static void hello_decode(const json_t *j, kube_hello *h)
{
    memset(h, 0, sizeof *h);
    h->protocol = (int)json_integer_value(json_object_get(j, "protocol"));
    snprintf(h->probe_version, sizeof h->probe_version, "%s",
             json_string_value(json_object_get(j, "probe")) ?: "");
    h->probe_pid = (int)json_integer_value(json_object_get(j, "probe_pid"));
    snprintf(h->dir, sizeof h->dir, "%s", json_string_value(json_object_get(j, "dir")) ?: "");
    const json_t *jvm = json_object_get(j, "jvm");
    if (json_is_object(jvm)) {
        h->has_jvm = true;
        h->jvm_pid = (int)json_integer_value(json_object_get(jvm, "pid"));
        snprintf(h->main_class, sizeof h->main_class, "%s",
                 json_string_value(json_object_get(jvm, "main_class")) ?: "");
        snprintf(h->user, sizeof h->user, "%s",
                 json_string_value(json_object_get(jvm, "user")) ?: "");
        snprintf(h->jvm_version, sizeof h->jvm_version, "%s",
                 json_string_value(json_object_get(jvm, "version")) ?: "");
        h->jvm_start_ns = json_integer_value(json_object_get(jvm, "start_ns"));
        h->jvm_uptime_ns = json_integer_value(json_object_get(jvm, "uptime_ns"));
    }
    snprintf(h->error, sizeof h->error, "%s", json_string_value(json_object_get(j, "error")) ?: "");
    json_int_t code = json_integer_value(json_object_get(j, "error_code"));
    h->error_code = code > 0 && code < JP_ERR__COUNT ? (jp_err)code : JP_ERR_NOT_JVM;
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(j, "jvms"), i, e)
    {
        if (h->njvms == KUBE_HELLO_JVMS)
            break;
        h->jvms[h->njvms].pid = (int)json_integer_value(json_object_get(e, "pid"));
        snprintf(h->jvms[h->njvms].main_class, sizeof h->jvms[0].main_class, "%s",
                 json_string_value(json_object_get(e, "main_class")) ?: "");
        h->njvms++;
    }
}

static bool no_shell(const kube_child *c)
{
    return strstr(c->errtext, "\"sh\"") &&
           (strstr(c->errtext, "not found") || strstr(c->errtext, "no such file"));
}

const char *kube_default_image(void)
{
    /* an image tag allows [A-Za-z0-9_.-] only, as scripts/build-images
     * spells it: 0.1.0-dev.82+gHASH -> jprof/jprof:0.1.0-dev.82-gHASH */
    static char ref[128];
    if (!ref[0]) {
        int n = snprintf(ref, sizeof ref, "jprof/jprof:%s", PACKAGE_VERSION);
        for (int i = (int)strlen("jprof/jprof:"); i < n && ref[i]; i++)
            if (!isalnum((unsigned char)ref[i]) && !strchr("_.-", ref[i]))
                ref[i] = '-';
    }
    return ref;
}

static const char *debug_image(const kube_opts *o)
{
    return o->image ? o->image : kube_default_image();
}

/* The kubectl debug route by hand: an ephemeral container from jprof's
 * image, as root (the pod may run as any user) with SYS_PTRACE. */
static void debug_command(const kube_session *s, char *buf, size_t len)
{
    snprintf(buf, len,
             "echo '" KUBE_DEBUG_CUSTOM "' >jprof-debug.json && kubectl debug%s%s %s -i "
             "--profile=general --custom=jprof-debug.json --target=%s --image=%s -- jprof-probe",
             s->opts.ns ? " -n " : "", s->opts.ns ? s->opts.ns : "", s->pod,
             s->container[0] ? s->container : "CONTAINER", debug_image(&s->opts));
}

/* What works instead, for a message: the front end's own command with
 * --debug-image (jprof then takes the kubectl debug route itself), or
 * when it took it already or has no command line, that route by hand. */
static void working_command(const kube_session *s, char *buf, size_t len)
{
    if (s->opts.command && !s->opts.debug)
        snprintf(buf, len, "%s --debug-image %s", s->opts.command, debug_image(&s->opts));
    else
        debug_command(s, buf, len);
}

static jp_err read_probe(const char *path, char **data, size_t *len, jp_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return jp_error_set(err, JP_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size <= 0 || (uint64_t)st.st_size > PROBE_MAX_BYTES) {
        fclose(f);
        return jp_error_set(err, JP_ERR_LIMIT, "%s: not a probe binary of 1 byte to %u MiB", path,
                            PROBE_MAX_BYTES >> 20);
    }
    *len = (size_t)st.st_size;
    *data = jp_xmalloc(*len + 32);
    int head = snprintf(*data, 32, "%zu\n", *len);
    size_t got = fread(*data + head, 1, *len, f);
    fclose(f);
    if (got != *len) {
        free(*data);
        return jp_error_set(err, JP_ERR_IO, "%s: short read", path);
    }
    *len += (size_t)head;
    return JP_OK;
}

/* The probes read so far, one per architecture (a pod's containers, and
 * the pods of a service, mostly share one). */
typedef struct kube_probes {
    const char *node; /* the pod's node, NULL unknown */
    struct {
        char arch[32]; /* "" the build's own, taken when the pod's is unknown */
        char *bytes;   /* the size line and the binary */
        size_t len;
    } p[4];
    size_t n;
    bool failed; /* no probe for the pod: its other containers are not tried */
} kube_probes;

#define LOADER_SAYS "jprof-probe-loader "

/* The loader's first line, "jprof-probe-loader MACHINE" (a shell's startup
 * files may print lines before it): the pod's architecture, "" unknown. */
static jp_err read_machine(kube_session *s, int64_t deadline, jp_error *err)
{
    for (int i = 0; i < 16; i++) {
        char *line = NULL;
        jp_err rc = read_line(s, deadline, "the probe's loader started", &line, err);
        if (rc != JP_OK)
            return rc;
        if (strncmp(line, LOADER_SAYS, strlen(LOADER_SAYS)) == 0) {
            const char *m = line + strlen(LOADER_SAYS);
            if (kube_arch_of_machine(m, s->arch, sizeof s->arch))
                snprintf(s->machine, sizeof s->machine, "%s", m);
            return JP_OK;
        }
    }
    return jp_error_set(err, JP_ERR_PROTOCOL,
                        "pod %s, container %s: the probe's loader did not say which machine it "
                        "runs on (16 other lines came first)",
                        s->pod, s->container[0] ? s->container : "(default)");
}

/* The probe for the session's pod: of the architecture the loader said,
 * else its node's, else this build's; read once per architecture. */
static jp_err probe_bytes(kube_session *s, kube_probes *ps, const char **bytes, size_t *len,
                          jp_error *err)
{
    if (!s->arch[0] && ps->node) {
        jp_error e;
        jp_error_init(&e);
        if (kube_node_arch(&s->opts, ps->node, s->arch, sizeof s->arch, &e) != JP_OK &&
            s->opts.verbose)
            fprintf(stderr, "+ pod %s: its machine and its node's architecture are unknown (%s)\n",
                    s->pod, e.msg);
    }
    size_t i = 0;
    while (i < ps->n && strcmp(ps->p[i].arch, s->arch) != 0)
        i++;
    char path[512] = "";
    if (i == ps->n) {
        char *data = NULL;
        size_t n = 0;
        jp_err rc = kube_probe_find(&s->opts, s->arch[0] ? s->arch : NULL, path, sizeof path, err);
        if (rc == JP_OK)
            rc = read_probe(path, &data, &n, err);
        if (rc != JP_OK) {
            ps->failed = true;
            if (s->arch[0])
                jp_error_prefix(err, "pod %s runs on %s%s%s%s: ", s->pod, s->arch,
                                s->machine[0] ? " (" : "", s->machine, s->machine[0] ? ")" : "");
            else
                jp_error_prefix(err, "pod %s: ", s->pod);
            return rc;
        }
        if (i == 4) /* a fifth architecture in one call: the last slot is reused */
            free(ps->p[--i].bytes);
        ps->p[i].bytes = data;
        ps->p[i].len = n;
        snprintf(ps->p[i].arch, sizeof ps->p[i].arch, "%s", s->arch);
        ps->n = i + 1;
    }
    if (s->opts.verbose && path[0])
        fprintf(stderr, "+ pod %s runs on %s%s%s%s: sending %s\n", s->pod,
                s->arch[0] ? s->arch : "an unknown architecture", s->machine[0] ? " (" : "",
                s->machine, s->machine[0] ? ")" : "", path);
    *bytes = ps->p[i].bytes;
    *len = ps->p[i].len;
    return JP_OK;
}

static jp_err wait_hello(kube_session *s, int64_t deadline, jp_error *err)
{
    json_t *h = NULL;
    jp_err rc = await_reply(s, "hello", deadline, &h, err);
    if (rc != JP_OK)
        return rc;
    hello_decode(h, &s->hello);
    json_decref(h);
    if (s->hello.protocol != 1)
        return jp_error_set(err, JP_ERR_UNSUPPORTED,
                            "pod %s: the probe speaks protocol %d, this client 1 (mixed versions)",
                            s->pod, s->hello.protocol);
    return JP_OK;
}

/* The custom profile of the debug route (kubectl 1.30 and later): root,
 * where the pod does not name a user of its own. */
static bool write_custom(char *path, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, len, "%s/jprof-debug.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return false;
    ssize_t w = write(fd, KUBE_DEBUG_CUSTOM "\n", sizeof KUBE_DEBUG_CUSTOM);
    close(fd);
    if (w != (ssize_t)sizeof KUBE_DEBUG_CUSTOM) {
        unlink(path);
        return false;
    }
    return true;
}

static jp_err spawn_debug(kube_session *s, const char *custom, jp_error *err)
{
    char target[300], image[300], cflag[300], pid[32];
    snprintf(target, sizeof target, "--target=%s", s->container);
    snprintf(image, sizeof image, "--image=%s", debug_image(&s->opts));
    snprintf(cflag, sizeof cflag, "--custom=%s", custom ? custom : "");
    snprintf(pid, sizeof pid, "%d", s->opts.jvm_pid);
    const char *args[14] = {"debug", s->pod, "-i", "--quiet", "--profile=general", target, image};
    size_t n = 7;
    if (custom)
        args[n++] = cflag;
    args[n++] = "--";
    args[n++] = "jprof-probe";
    if (s->opts.jvm_pid > 0) {
        args[n++] = "--pid";
        args[n++] = pid;
    }
    memset(&s->c, 0, sizeof s->c);
    s->len = s->off = 0;
    jp_err rc = kube_child_spawn(&s->opts, args, true, &s->c, err);
    if (rc != JP_OK)
        return rc;
    /* what the probe prints before kubectl attaches goes to the container's
     * log, its first hello too: ask for one */
    static const char hello[] = "{\"op\":\"hello\"}\n";
    return write_all(s, hello, sizeof hello - 1, jp_time_mono_ns() + kube_timeout(&s->opts), err);
}

/* kubectl debug: an ephemeral container from jprof's image, sharing the
 * target's process namespace; its jprof-probe reaches the JVM through
 * /proc. As root with SYS_PTRACE unless the pod names its user (then the
 * container runs as that user, the JVM's); a kubectl without --custom is
 * asked again without it. */
static jp_err open_debug(kube_session *s, bool pod_sets_user, int64_t t0, jp_error *err)
{
    char custom[512];
    bool root = !pod_sets_user && write_custom(custom, sizeof custom);
    jp_err rc = spawn_debug(s, root ? custom : NULL, err);
    if (rc == JP_OK)
        rc = wait_hello(s, t0 + 2 * kube_timeout(&s->opts), err);
    if (rc != JP_OK && root && strstr(s->c.errtext, "--custom")) {
        kube_child_finish(&s->c, 0);
        jp_error_init(err);
        rc = spawn_debug(s, NULL, err);
        if (rc == JP_OK)
            rc = wait_hello(s, t0 + 2 * kube_timeout(&s->opts), err);
    }
    if (root)
        unlink(custom);
    if (rc == JP_OK && !s->hello.has_jvm)
        rc = jp_error_set(err, s->hello.error_code, "%s", s->hello.error);
    return rc;
}

/* The probe cannot run in the container through kubectl exec (no sh, no
 * directory where a program may run): the debug route when asked for,
 * else the cause and what works. */
static jp_err exec_impossible(kube_session *s, const jp_pod *p, bool nosh, int64_t t0,
                              jp_error *err)
{
    char cause[600] = "has no shell (sh), which the probe's loader needs";
    if (!nosh) {
        char line[512];
        kube_child_message(&s->c, line, sizeof line);
        snprintf(cause, sizeof cause, "cannot run the probe: %s", line);
    }
    kube_child_finish(&s->c, 0);
    jp_error why;
    jp_error_init(&why);
    if (s->opts.debug && s->container[0]) {
        if (open_debug(s, p && p->sets_user, t0, &why) == JP_OK)
            return JP_OK;
        kube_child_finish(&s->c, 0);
    }
    char cmd[1024];
    working_command(s, cmd, sizeof cmd);
    return jp_error_set(err, why.code == JP_ERR_PERMISSION ? JP_ERR_PERMISSION : JP_ERR_UNSUPPORTED,
                        "pod %s, container %s %s%s%s; this works: %s", s->pod,
                        s->container[0] ? s->container : "(default)", cause,
                        why.code != JP_OK ? "; kubectl debug failed too: " : "",
                        why.code != JP_OK ? why.msg : "", cmd);
}

static jp_err open_one(const kube_opts *o, const char *pod, const char *container, const jp_pod *p,
                       kube_probes *ps, kube_session **out, jp_error *err)
{
    kube_session *s = jp_xcalloc(1, sizeof *s);
    s->opts = *o;
    snprintf(s->pod, sizeof s->pod, "%s", pod);
    snprintf(s->container, sizeof s->container, "%s", container ? container : "");
    int64_t t0 = jp_time_mono_ns();
    char pid[32] = "";
    if (o->jvm_pid > 0)
        snprintf(pid, sizeof pid, "%d", o->jvm_pid);
    /* sh -c LOADER sh [PID]: $1 is the JVM's pid for the probe's --pid */
    const char *args[14] = {"exec", "-i", pod};
    size_t n = 3;
    if (container) {
        args[n++] = "-c";
        args[n++] = s->container;
    }
    const char *tail[] = {"--", "sh", "-c", loader, "sh", pid[0] ? pid : NULL, NULL};
    for (size_t i = 0; tail[i]; i++)
        args[n++] = tail[i];
    args[n] = NULL;
    jp_err rc = kube_child_spawn(o, args, true, &s->c, err);
    int64_t deadline = t0 + kube_timeout(o);
    const char *bytes = NULL;
    size_t len = 0;
    if (rc == JP_OK)
        rc = read_machine(s, deadline, err);
    if (rc == JP_OK) {
        /* asking the node is a kubectl call with a bound of its own */
        int64_t asked = jp_time_mono_ns();
        rc = probe_bytes(s, ps, &bytes, &len, err);
        deadline += jp_time_mono_ns() - asked;
    }
    /* the hello is the loader's signal that it consumed exactly the probe */
    if (rc == JP_OK)
        rc = write_all(s, bytes, len, deadline, err);
    if (rc == JP_OK)
        rc = wait_hello(s, deadline, err);
    bool nosh = rc != JP_OK && no_shell(&s->c);
    /* the loader's exit 92 says the same when its line was lost (a runtime
     * that ends the exec stream at the exit may drop the last of stderr) */
    if (rc != JP_OK && (nosh || strstr(s->c.errtext, "no directory where a program may run") ||
                        strstr(s->c.errtext, "command terminated with exit code 92")))
        rc = exec_impossible(s, p, nosh, t0, err);
    if (rc != JP_OK) {
        kube_session_close(s);
        return rc;
    }
    s->open_ms = (double)(jp_time_mono_ns() - t0) / 1e6;
    *out = s;
    return JP_OK;
}

jp_err kube_session_open(const kube_opts *o, const char *pod, const char *container,
                         const jp_pod *p, kube_session **out, jp_error *err)
{
    *out = NULL;
    signal(SIGPIPE, SIG_IGN);
    kube_probes ps = {.node = p ? p->node : NULL};
    jp_err rc;
    if (container || !p || p->ncontainers == 0) {
        rc = open_one(o, pod, container, p, &ps, out, err);
        goto done;
    }
    /* the first container that runs a JVM */
    char tried[1024] = "";
    size_t off = 0;
    rc = JP_ERR_NOT_JVM;
    for (size_t i = 0; i < p->ncontainers; i++) {
        kube_session *s = NULL;
        jp_error e;
        jp_error_init(&e);
        jp_err r = open_one(o, pod, p->containers[i].name, p, &ps, &s, &e);
        if (ps.failed) { /* the same for every container */
            *err = e;
            rc = r;
            goto done;
        }
        if (r == JP_OK && s->hello.has_jvm) {
            *out = s;
            rc = JP_OK;
            break;
        }
        const char *why = r == JP_OK ? s->hello.error : e.msg;
        if (r == JP_OK)
            r = s->hello.error_code; /* PERMISSION: a JVM is there, out of reach */
        int n = snprintf(tried + off, sizeof tried - off, "%s%s: %s", off ? "; " : "",
                         p->containers[i].name, why);
        if (n > 0 && (size_t)n < sizeof tried - off)
            off += (size_t)n;
        if (r == JP_ERR_UNSUPPORTED || r == JP_ERR_PERMISSION)
            rc = r;
        kube_session_close(s);
    }
    if (rc != JP_OK)
        rc = jp_error_set(err, rc, "pod %s: no container runs a JVM the probe can reach (%s)", pod,
                          tried);
done:
    for (size_t i = 0; i < ps.n; i++)
        free(ps.p[i].bytes);
    return rc;
}

/* ---- requests ---- */

jp_err kube_session_snapshot(kube_session *s, jp_snapshot **out, jp_error *err)
{
    *out = NULL;
    json_t *r = NULL;
    jp_err rc = request(s, json_object(), "snapshot", kube_timeout(&s->opts), &r, err);
    if (rc != JP_OK)
        return rc;
    *out = jp_snapshot_from_json(json_object_get(r, "snapshot"));
    json_decref(r);
    if (!*out)
        return jp_error_set(err, JP_ERR_PROTOCOL, "pod %s: the snapshot has no threads array",
                            s->pod);
    return JP_OK;
}

jp_err kube_session_heap(kube_session *s, bool all, jp_heap_histo *out, jp_error *err)
{
    json_t *q = json_object();
    json_object_set_new(q, "all", json_boolean(all));
    int64_t t = kube_timeout(&s->opts);
    if (t < KUBE_HEAP_TIMEOUT_NS)
        t = KUBE_HEAP_TIMEOUT_NS;
    json_t *r = NULL;
    jp_err rc = request(s, q, "heap", t, &r, err);
    if (rc != JP_OK)
        return rc;
    char why[200];
    if (!jp_heap_histo_from_json(json_object_get(r, "histogram"), out, JP_HEAP_MAX_CLASSES, why,
                                 sizeof why))
        rc = jp_error_set(err, JP_ERR_PROTOCOL, "pod %s: the probe's histogram: %s", s->pod, why);
    json_decref(r);
    return rc;
}

jp_err kube_session_profile_start(kube_session *s, uint32_t kinds, int64_t interval_ns,
                                  int64_t window_ns, jp_error *err)
{
    json_t *q = json_object();
    json_t *k = json_array();
    for (int i = 0; i < JP_KIND_COUNT; i++)
        if (kinds & (1u << i))
            json_array_append_new(k, json_string(jp_kind_name((jp_kind)i)));
    json_object_set_new(q, "kinds", k);
    if (interval_ns > 0)
        json_object_set_new(q, "interval_ms", json_integer(interval_ns / JP_NS_PER_MS));
    if (window_ns > 0)
        json_object_set_new(q, "window_s",
                            json_integer((window_ns + JP_NS_PER_SEC - 1) / JP_NS_PER_SEC));
    json_t *r = NULL;
    jp_err rc = request(s, q, "profile_start", kube_timeout(&s->opts), &r, err);
    json_decref(r);
    return rc;
}

/* The probe's aggregated stacks (an upload batch, docs/API.md) into a profile. */
static void batch_to_profile(const jp_batch *b, jp_profile *p)
{
    uint32_t *fmap = jp_xcalloc(b->nframes + 1, sizeof *fmap);
    uint32_t *tmap = jp_xcalloc(b->nthreads + 1, sizeof *tmap);
    uint32_t *smap = jp_xcalloc(b->nstacks + 1, sizeof *smap);
    for (size_t i = 0; i < b->nframes; i++)
        fmap[i] = jp_profile_frame(p, b->frames[i], strlen(b->frames[i]), JP_FRAME_UNKNOWN);
    for (size_t i = 0; i < b->nthreads; i++)
        tmap[i] = jp_profile_thread(p, b->threads[i], strlen(b->threads[i]));
    uint32_t *tmp = NULL;
    size_t tmpcap = 0;
    for (size_t i = 0; i < b->nstacks; i++) {
        const jp_batch_stack *st = &b->stacks[i];
        tmp = jp_xgrow(tmp, &tmpcap, st->depth + 1, sizeof *tmp);
        for (uint32_t d = 0; d < st->depth; d++)
            tmp[d] = fmap[st->frames[d]];
        smap[i] = jp_profile_stack(p, tmp, st->depth, st->truncated);
    }
    free(tmp);
    for (size_t w = 0; w < b->nwindows; w++) {
        const jp_batch_window *win = &b->windows[w];
        if (win->period_ns)
            p->kinds[win->kind].period_ns = win->period_ns;
        if (!p->start_ns || win->start_ns < p->start_ns)
            p->start_ns = win->start_ns;
        if (win->end_ns > p->end_ns)
            p->end_ns = win->end_ns;
        for (size_t r = 0; r < win->nrows; r++) {
            const jp_batch_row *row = &win->rows[r];
            uint32_t th = row->thread == JP_BATCH_NO_THREAD ? JP_NO_THREAD : tmap[row->thread];
            jp_profile_add(p, win->kind, smap[row->stack], th, row->samples, row->samples,
                           row->value);
        }
    }
    free(fmap);
    free(tmap);
    free(smap);
}

jp_err kube_session_profile_read(kube_session *s, jp_profile **out, jp_error *err)
{
    *out = NULL;
    json_t *r = NULL;
    jp_err rc = request(s, json_object(), "profile_read", 2 * kube_timeout(&s->opts), &r, err);
    if (rc != JP_OK)
        return rc;
    char *text = json_dumps(json_object_get(r, "batch"), JSON_COMPACT);
    json_decref(r);
    if (!text)
        return jp_error_set(err, JP_ERR_PROTOCOL, "pod %s: profile_read without a batch", s->pod);
    jp_batch b;
    jp_batch_init(&b);
    jp_batch_limits lim;
    jp_batch_limits_default(&lim);
    rc = jp_batch_json_decode(text, strlen(text), &lim, &b, err);
    free(text);
    if (rc == JP_OK) {
        *out = jp_profile_new();
        batch_to_profile(&b, *out);
        /* the probe summarised the window's GC events (an older probe: none) */
        free(s->gc);
        s->gc = NULL;
        if (b.ngcs) {
            s->gc = jp_xmalloc(sizeof *s->gc);
            *s->gc = b.gcs[0].w;
        }
    } else {
        jp_error_prefix(err, "pod %s: profile_read: ", s->pod);
    }
    jp_batch_cleanup(&b);
    return rc;
}

jp_err kube_session_profile_stop(kube_session *s, jp_error *err)
{
    json_t *r = NULL;
    jp_err rc = request(s, json_object(), "profile_stop", kube_timeout(&s->opts), &r, err);
    json_decref(r);
    return rc;
}

const jp_gc_window *kube_session_gc(const kube_session *s)
{
    return s ? s->gc : NULL;
}

bool kube_session_alive(kube_session *s)
{
    if (s->c.out < 0)
        return false;
    kube_child_drain_stderr(&s->c);
    struct pollfd pf = {.fd = s->c.out, .events = POLLIN};
    if (poll(&pf, 1, 0) <= 0)
        return true;
    if (s->cap - s->len < 65536)
        s->buf = jp_xgrow(s->buf, &s->cap, s->len + 65536, 1);
    ssize_t n = read(s->c.out, s->buf + s->len, s->cap - s->len);
    if (n > 0) {
        s->len += (size_t)n; /* kept for the next read_line */
        return true;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return true;
    close(s->c.out);
    s->c.out = -1;
    return false;
}

void kube_session_close(kube_session *s)
{
    if (!s)
        return;
    if (s->c.pid > 0 && s->c.in >= 0 && s->hello.protocol) {
        json_t *r = NULL;
        jp_error e;
        jp_error_init(&e);
        if (request(s, json_object(), "bye", KUBE_BYE_WAIT_NS, &r, &e) == JP_OK)
            json_decref(r);
    }
    /* closing stdin is the probe's end of input, also when bye went unheard */
    kube_child_finish(&s->c, KUBE_BYE_WAIT_NS);
    free(s->buf);
    free(s->gc);
    free(s);
}
