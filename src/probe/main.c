/* jprof-probe - the in-container end of the kubectl-exec source.
 *
 * Streamed into a pod over `kubectl exec -i` (docs/PROBE.md), it finds the
 * JVM there through /proc, answers JSON-line requests on stdin with thread
 * snapshots and profile windows on stdout (human logs on stderr), and
 * leaves nothing behind: on bye, end of input, SIGTERM/SIGINT/SIGHUP it
 * stops its recording and removes its files and directory; its watchdog
 * (the parent, which reaps it) does the same if it is killed with SIGKILL. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/stopsig.h"
#include "base/error.h"
#include "base/timeutil.h"
#include "jvm/attach.h"
#include "jvm/cleanup.h"
#include "jvm/engine.h"
#include "jvm/histogram.h"
#include "jvm/jfc.h"
#include "jvm/proc.h"
#include "jvm/procstat.h"
#include "jvm/snapshot_take.h"
#include "probe/probe_dev.h"
#include "probe/probe_fs.h"
#include "probe/probe_profile.h"
#include "probe/probe_reach.h"
#include "probe/proto.h"
#include "wire/batch.h"
#include "wire/batch_json.h"
#include "wire/heap_json.h"
#include "wire/snapshot_json.h"

#define PROBE_MAX_JVMS_LISTED 32

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

typedef struct probe {
    const char *dir; /* private directory, or NULL when run by hand */
    bool have_jvm;
    jvm_proc jvm;
    char jvm_version[128], jvm_vm[128];
    int jdk_major;
    jp_error jvm_error; /* why there is no JVM */
    jvm_proc_list all;
    probe_profile prof;
    jvm_procstat stat; /* the process figures at the previous snapshot */
    bool have_stat;
    unsigned nbatch;
    bool out_broken;
} probe;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: jprof-probe [--dir DIR] [--pid PID]       serve the protocol on stdin/stdout\n"
            "       jprof-probe list | snapshot PID | jfr PID S | ...   developer commands\n"
            "\n"
            "Streamed into a container by kubectl-jprof and jprof-top (docs/PROBE.md); speaks\n"
            "JSON lines on stdin/stdout, logs on stderr.\n"
            "  --dir DIR   the private directory it runs from (removed at exit)\n"
            "  --pid PID   the JVM (default: pid 1 when it is one, else the first JVM found)\n"
            "  -h, --help  this text      -V, --version  the version\n"
            "See jprof-probe(1).\n");
}

/* ---- output ---- */

static void send_json(probe *p, json_t *j)
{
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!text || p->out_broken) {
        free(text);
        return;
    }
    size_t len = strlen(text), off = 0;
    text[len] = '\n'; /* json_dumps leaves room for nothing; reuse the NUL */
    len++;
    while (off < len) {
        ssize_t n = write(1, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            p->out_broken = true; /* kubectl went away: treat as end of input */
            break;
        }
        off += (size_t)n;
    }
    free(text);
}

static json_t *reply_new(const char *op, const char *id)
{
    json_t *j = json_object();
    json_object_set_new(j, "op", json_string(op));
    if (id && *id)
        json_object_set_new(j, "id", json_string(id));
    json_object_set_new(j, "ok", json_true());
    return j;
}

static void send_error(probe *p, const char *op, const char *id, const jp_error *e)
{
    json_t *j = reply_new(op, id);
    json_object_set_new(j, "ok", json_false());
    json_t *er = json_object();
    json_object_set_new(er, "code", json_integer(e->code));
    json_object_set_new(er, "kind", json_string(jp_strerror(e->code)));
    json_object_set_new(er, "message", json_string(e->msg));
    json_object_set_new(j, "error", er);
    send_json(p, j);
}

/* ---- the JVM ---- */

static void parse_version(probe *p, const char *text)
{
    size_t n = strcspn(text, "\n");
    snprintf(p->jvm_vm, sizeof p->jvm_vm, "%.*s", (int)(n > 120 ? 120 : n), text);
    const char *jdk = strstr(text, "\nJDK ");
    if (jdk) {
        n = strcspn(jdk + 1, "\n");
        snprintf(p->jvm_version, sizeof p->jvm_version, "%.*s", (int)(n > 60 ? 60 : n), jdk + 1);
    }
    p->jdk_major = jvm_jdk_major(text);
}

/* The JVM to serve: want, else pid 1 when it is one, else the first. */
static pid_t pick_jvm(const jvm_proc_list *all, pid_t want)
{
    if (want || !all->count)
        return want;
    for (size_t i = 0; i < all->count; i++)
        if (all->items[i].pid == 1)
            return 1;
    return all->items[0].pid;
}

static bool listed(const jvm_proc_list *all, pid_t pid)
{
    for (size_t i = 0; i < all->count; i++)
        if (all->items[i].pid == pid)
            return true;
    return false;
}

/* No JVM this user may inspect, or not the one asked for (want): as root,
 * becomes the user of that one, else of the first out of reach
 * (probe_reach.h), and looks again; else says why. */
static pid_t reach_other_user(probe *p, pid_t want)
{
    probe_denied d[8];
    size_t n = probe_unreachable_java(d, 8);
    if (n == 0) {
        jp_error_set(&p->jvm_error, JP_ERR_NOT_FOUND,
                     "no Java virtual machine found in this container (/proc lists no "
                     "process with libjvm.so mapped)");
        return 0;
    }
    size_t k = 0;
    while (want && k < n && d[k].pid != want)
        k++;
    if (k == n) /* want is not a JVM out of reach: jvm_proc_open says what it is */
        return want;
    int rc = geteuid() == 0 ? probe_become(d[k].uid, d[k].gid, p->dir) : -EPERM;
    if (rc == 0) {
        fprintf(stderr, "jprof-probe: now uid %lu, gid %lu: the user of pid %d\n",
                (unsigned long)d[k].uid, (unsigned long)d[k].gid, (int)d[k].pid);
        jvm_proc_list_cleanup(&p->all);
        if (jvm_proc_list_local(&p->all, &p->jvm_error) == JP_OK && p->all.count)
            return pick_jvm(&p->all, want);
    }
    char denied[256];
    probe_denied_format(d, n, denied, sizeof denied);
    jp_error_set(&p->jvm_error, JP_ERR_PERMISSION,
                 "user %lu is not permitted to inspect %s: a JVM of another user is reached as "
                 "root with CAP_SETUID and CAP_SETGID, or with CAP_SYS_PTRACE%s%s",
                 (unsigned long)geteuid(), denied, rc ? "; becoming its user failed: " : "",
                 rc ? strerror(-rc) : "");
    return 0;
}

static void find_jvm(probe *p, pid_t want)
{
    jp_error_init(&p->jvm_error);
    if (jvm_proc_list_local(&p->all, &p->jvm_error) != JP_OK)
        return;
    pid_t pick = pick_jvm(&p->all, want);
    /* none in reach, or the one asked for is not (another user's) */
    if ((!pick || (want && !listed(&p->all, want))) && !(pick = reach_other_user(p, want)))
        return;
    if (jvm_proc_open(pick, &p->jvm, &p->jvm_error) != JP_OK)
        return;
    jvm_reply r;
    if (jvm_jcmd(&p->jvm, NULL, "VM.version", &r, &p->jvm_error) != JP_OK)
        return;
    parse_version(p, r.text);
    jvm_reply_cleanup(&r);
    p->have_jvm = true;
    /* the first snapshot's CPU % counts from here */
    p->stat.cpu_ns = jvm_proc_cpu_ns(p->jvm.pid);
    p->stat.mono_ns = jp_time_mono_ns();
    p->have_stat = p->stat.cpu_ns >= 0;
}

static json_t *jvm_json(const probe *p)
{
    if (!p->have_jvm)
        return json_null();
    json_t *j = json_object();
    json_object_set_new(j, "pid", json_integer(p->jvm.pid));
    json_object_set_new(j, "main_class", json_string(p->jvm.main_class));
    json_object_set_new(j, "user", json_string(p->jvm.user));
    json_object_set_new(j, "version", json_string(p->jvm_version));
    json_object_set_new(j, "vm", json_string(p->jvm_vm));
    json_object_set_new(j, "start_ns", json_integer(p->jvm.start_ns));
    json_object_set_new(j, "uptime_ns", json_integer(p->jvm.uptime_ns));
    return j;
}

static void jvms_add(json_t *all, pid_t pid, const char *main_class)
{
    json_t *e = json_object();
    json_object_set_new(e, "pid", json_integer(pid));
    json_object_set_new(e, "main_class", json_string(main_class));
    json_array_append_new(all, e);
}

/* Every JVM in the container: those this user may inspect, then those of
 * other users it may not (named so that --pid can pick them: as root the
 * probe becomes their user) */
static json_t *jvms_json(const probe *p)
{
    json_t *all = json_array();
    for (size_t i = 0; i < p->all.count && i < PROBE_MAX_JVMS_LISTED; i++)
        jvms_add(all, p->all.items[i].pid, p->all.items[i].main_class);
    probe_denied d[8];
    size_t n = probe_unreachable_java(d, 8);
    for (size_t i = 0; i < n && json_array_size(all) < PROBE_MAX_JVMS_LISTED; i++)
        jvms_add(all, d[i].pid, d[i].main_class);
    return all;
}

static void send_hello(probe *p, const char *id)
{
    json_t *j = reply_new("hello", id);
    json_object_set_new(j, "protocol", json_integer(PROBE_PROTOCOL));
    json_object_set_new(j, "probe", json_string(PACKAGE_VERSION));
    json_object_set_new(j, "probe_pid", json_integer(getpid()));
    json_object_set_new(j, "dir", p->dir ? json_string(p->dir) : json_null());
    json_object_set_new(j, "jvm", jvm_json(p));
    json_object_set_new(j, "jvms", jvms_json(p));
    json_object_set_new(j, "error", p->have_jvm ? json_null() : json_string(p->jvm_error.msg));
    if (!p->have_jvm)
        json_object_set_new(j, "error_code", json_integer(p->jvm_error.code));
    send_json(p, j);
}

/* ---- requests ---- */

static bool need_jvm(probe *p, const probe_req *q)
{
    if (p->have_jvm)
        return true;
    send_error(p, probe_op_name(q->op), q->id, &p->jvm_error);
    return false;
}

static void do_snapshot(probe *p, const probe_req *q)
{
    if (!need_jvm(p, q))
        return;
    jp_error err, why;
    jp_error_init(&err);
    jp_error_init(&why);
    jvm_snap_opts o;
    jvm_snap_opts_init(&o);
    /* the helper jar is not streamed along (yet): Thread.print -l */
    o.source = JVM_SNAP_THREAD_PRINT;
    jp_snapshot *s = NULL;
    int64_t t0 = jp_time_mono_ns();
    if (jvm_snapshot_take(&p->jvm, NULL, &o, &s, &why, &err) != JP_OK) {
        send_error(p, "snapshot", q->id, &err);
        return;
    }
    /* the header's figures, as the pod's /proc and the JVM count them */
    jvm_procstat now;
    jvm_procstat_read(&p->jvm, NULL, &now);
    jvm_procstat_to_snapshot(p->have_stat ? &p->stat : NULL, &now, s);
    p->stat = now;
    p->have_stat = true;
    jp_snapjson_target tg = {.pid = (int)p->jvm.pid,
                             .main_class = p->jvm.main_class,
                             .user = p->jvm.user,
                             .jvm_version = p->jvm_version[0] ? p->jvm_version : NULL,
                             .start_ns = p->jvm.start_ns};
    jp_snapjson_opts jo;
    jp_snapjson_opts_init(&jo);
    jo.max_frames = q->max_frames;
    json_t *j = reply_new("snapshot", q->id);
    json_object_set_new(j, "ms", json_real((double)(jp_time_mono_ns() - t0) / 1e6));
    json_object_set_new(j, "snapshot", jp_snapshot_json(s, NULL, &tg, &jo));
    jp_snapshot_free(s);
    send_json(p, j);
}

/* One class histogram: it stops the JVM (a full GC and a heap walk unless
 * `all`), so only ever on the client's request. Its biggest classes travel
 * (JP_BATCH_HEAP_CLASSES), the totals count every class. */
static void do_heap(probe *p, const probe_req *q)
{
    if (!need_jvm(p, q))
        return;
    jp_error err;
    jp_error_init(&err);
    jp_heap_histo h;
    jp_heap_histo_init(&h);
    if (jvm_histogram_take(&p->jvm, NULL, q->all, &h, &err) != JP_OK) {
        send_error(p, "heap", q->id, &err);
        return;
    }
    json_t *j = reply_new("heap", q->id);
    json_object_set_new(j, "histogram", jp_heap_histo_json(&h, JP_BATCH_HEAP_CLASSES));
    jp_heap_histo_cleanup(&h);
    send_json(p, j);
}

static void do_profile_start(probe *p, const probe_req *q)
{
    if (!need_jvm(p, q))
        return;
    jp_error err;
    jp_error_init(&err);
    if (probe_profile_start(&p->prof, &p->jvm, p->jdk_major, q->kinds, q->interval_ns, q->window_ns,
                            &err) != JP_OK) {
        send_error(p, "profile_start", q->id, &err);
        return;
    }
    json_t *j = reply_new("profile_start", q->id);
    json_object_set_new(j, "recording", json_string(probe_profile_name(&p->prof)));
    json_object_set_new(j, "engine", json_string(probe_profile_engine(&p->prof)));
    json_object_set_new(j, "interval_ns", json_integer(p->prof.interval_ns));
    send_json(p, j);
}

static json_t *report_json(const jfr_report *rep)
{
    json_t *j = json_object();
    json_object_set_new(j, "bytes", json_integer((json_int_t)rep->bytes));
    json_object_set_new(j, "events", json_integer((json_int_t)rep->events_used));
    json_object_set_new(j, "start_ns", json_integer(rep->start_ns));
    json_object_set_new(j, "end_ns", json_integer(rep->end_ns));
    json_object_set_new(j, "partial", json_boolean(rep->partial));
    json_object_set_new(j, "error", rep->partial ? json_string(rep->error.msg) : json_null());
    return j;
}

static void do_profile_read(probe *p, const probe_req *q)
{
    jp_error err;
    jp_error_init(&err);
    jp_profile *prof = NULL;
    jfr_report rep;
    int64_t t0 = jp_time_mono_ns();
    if (probe_profile_read(&p->prof, &prof, &rep, &err) != JP_OK) {
        send_error(p, "profile_read", q->id, &err);
        return;
    }
    jp_batch b;
    jp_batch_init(&b);
    char id[64], coll[96];
    snprintf(id, sizeof id, "probe-%d-%u", (int)getpid(), ++p->nbatch);
    snprintf(coll, sizeof coll, "jprof-probe@%d", (int)getpid());
    b.id = strdup(id);
    b.collector = strdup(coll);
    b.collector_version = strdup(PACKAGE_VERSION);
    b.sent_ns = jp_time_now_ns();
    /* the batch format wants a namespace: the pod's own when it mounts its
     * service account, else "-" (the client knows the pod anyway) */
    char ns[254] = "-";
    if (jvm_read_small_file("/var/run/secrets/kubernetes.io/serviceaccount/namespace", ns,
                            sizeof ns) <= 0)
        snprintf(ns, sizeof ns, "-");
    ns[strcspn(ns, "\n")] = '\0';
    /* and a service: the main class stands in (the client knows the pod);
     * the pod's hostname is its name */
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    jp_batch_target tg = {.ns = ns,
                          .service = p->jvm.main_class[0] ? p->jvm.main_class : "-",
                          .pod = host[0] ? host : NULL,
                          .pid = p->jvm.pid,
                          .jvm_start_ns = p->jvm.start_ns,
                          .jvm = p->jvm_version[0] ? p->jvm_version : NULL};
    int64_t start = rep.start_ns ? rep.start_ns : p->prof.started_ns;
    int64_t end = rep.end_ns > start ? rep.end_ns : jp_time_now_ns();
    jp_batch_add_profile(&b, prof, &tg, start, end);
    jp_profile_free(prof);
    size_t len = 0;
    char *text = jp_batch_json_encode(&b, &len);
    jp_batch_cleanup(&b);
    json_t *j = reply_new("profile_read", q->id);
    json_object_set_new(j, "report", report_json(&rep));
    json_object_set_new(j, "ms", json_real((double)(jp_time_mono_ns() - t0) / 1e6));
    json_object_set_new(j, "batch", json_loadb(text, len, 0, NULL));
    free(text);
    send_json(p, j);
}

static void do_profile_stop(probe *p, const probe_req *q)
{
    jp_error err;
    jp_error_init(&err);
    if (probe_profile_stop(&p->prof, &err) != JP_OK) {
        send_error(p, "profile_stop", q->id, &err);
        return;
    }
    send_json(p, reply_new("profile_stop", q->id));
}

/* Returns false after bye. */
static bool handle(probe *p, const char *line, size_t len, unsigned long lineno)
{
    probe_req q;
    jp_error err;
    jp_error_init(&err);
    if (probe_req_parse(line, len, lineno, &q, &err) != JP_OK) {
        send_error(p, "error", NULL, &err);
        return true;
    }
    switch (q.op) {
    case PROBE_OP_HELLO:
        send_hello(p, q.id);
        break;
    case PROBE_OP_SNAPSHOT:
        do_snapshot(p, &q);
        break;
    case PROBE_OP_PROFILE_START:
        do_profile_start(p, &q);
        break;
    case PROBE_OP_PROFILE_READ:
        do_profile_read(p, &q);
        break;
    case PROBE_OP_PROFILE_STOP:
        do_profile_stop(p, &q);
        break;
    case PROBE_OP_HEAP:
        do_heap(p, &q);
        break;
    case PROBE_OP_BYE:
        send_json(p, reply_new("bye", q.id));
        return false;
    }
    return true;
}

static void signals_install(void)
{
    jp_stop_signals(on_signal); /* a blocked read returns EINTR */
}

static int serve(const char *dir, pid_t want)
{
    static probe p; /* must not move: the cleanup registry points into p.prof */
    p.dir = dir;
    signals_install();
    if (dir && !probe_dir_is_ours(dir, getpid())) {
        fprintf(stderr,
                "jprof-probe: --dir %s is not an absolute DIR/" PROBE_DIR_PREFIX "%d[.X]: "
                "it will not be removed at exit\n",
                dir, (int)getpid());
        p.dir = NULL;
    }
    find_jvm(&p, want);
    pid_t session = getpid(); /* the loader's $$, in the directory's name */
    probe_clean_stale(p.have_jvm ? &p.jvm : NULL, session, p.dir);
    /* from here on this is the child; the parent watches it (probe_fs.h) */
    int watchdog = probe_watchdog_start(p.have_jvm ? &p.jvm : NULL, p.dir);
    send_hello(&p, NULL);
    probe_line_reader r;
    probe_line_reader_init(&r, 0);
    const char *why = "end of input";
    while (!p.out_broken) {
        const char *line;
        size_t len;
        jp_error err;
        jp_error_init(&err);
        if (stop_signal)
            break;
        int n = probe_line_read(&r, &line, &len, &err);
        if (n == -2)
            continue;
        if (n == 0)
            break;
        if (n < 0) {
            send_error(&p, "error", NULL, &err);
            if (err.code == JP_ERR_IO)
                break;
            continue;
        }
        if (len == 0)
            continue;
        if (!handle(&p, line, len, r.lineno)) {
            why = "bye";
            break;
        }
    }
    if (stop_signal)
        fprintf(stderr, "jprof-probe: signal %d: cleaning up\n", (int)stop_signal);
    else if (p.out_broken)
        why = "output closed";
    jp_error err;
    jp_error_init(&err);
    probe_profile_stop(&p.prof, &err);
    jvm_cleanup_run_all();
    jvm_engine_remove_files_of(getpid());
    if (p.dir && !probe_dir_remove(p.dir, session))
        fprintf(stderr, "jprof-probe: could not remove %s: %s\n", p.dir, strerror(errno));
    probe_watchdog_done(watchdog);
    jvm_proc_list_cleanup(&p.all);
    if (!stop_signal)
        fprintf(stderr, "jprof-probe: %s: stopped, nothing left behind\n", why);
    return stop_signal ? 128 + (int)stop_signal : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && probe_dev_is_command(argv[1]))
        return probe_dev_main(argc, argv);
    static const struct option longopts[] = {{"dir", required_argument, NULL, 'D'},
                                             {"pid", required_argument, NULL, 'p'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             {NULL, 0, NULL, 0}};
    const char *dir = NULL;
    long pid = 0;
    int c;
    while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'D':
            dir = optarg;
            break;
        case 'p': {
            char *end;
            pid = strtol(optarg, &end, 10);
            if (*end || pid <= 0 || pid > 4194304) {
                fprintf(stderr, "jprof-probe: --pid %s: not a process id\n", optarg);
                return 2;
            }
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("jprof-probe (%s) %s, protocol %d\n", PACKAGE_NAME, PACKAGE_VERSION,
                   PROBE_PROTOCOL);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc && strcmp(argv[optind], "serve") != 0) {
        fprintf(stderr, "jprof-probe: unknown command %s\n", argv[optind]);
        probe_dev_usage();
        return 2;
    }
    return serve(dir, (pid_t)pid);
}
