/* kubectl-jprof - `kubectl jprof ...`: which thread, which lock, which stack
 * in a pod, through kubectl exec and jprof-probe, with nothing installed in
 * the cluster (man/kubectl-jprof.1). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/stopsig.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "kubectl-jprof/plugin.h"
#include "model/analyze.h"
#include "tui/batch.h"
#include "tui/report_profile.h"
#include "tui/report_target.h"
#include "tui/source_kubectl.h"
#include "tui/stop.h"
#include "tui/target.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kubectl jprof COMMAND [-n NS] (POD | -s SERVICE) [-c CONTAINER] [options]\n"
            "\n"
            "Answers from a Java pod through kubectl exec (jprof-probe is streamed into the\n"
            "container and removes itself); nothing needs to be installed in the cluster.\n"
            "\n"
            "commands:\n"
            "  threads | locks | deadlocks   one answer: busy threads, contended locks, cycles\n"
            "      [-o text|json] [--interval 1s]\n"
            "  flame     a bounded recording: [--event cpu|alloc|lock|park] [-d 30s]\n"
            "            [-o collapsed|top|json] [-f FILE]\n"
            "  heap      class histograms of the pod's JVM: what is on the heap, and from\n"
            "            the second on what grows [--count N] [--interval 10s] [--all]\n"
            "            [-o text|json]; each one PAUSES THE JVM (a full GC and a heap\n"
            "            walk; --all: no GC)\n"
            "  top       jprof-top's screens for the pod or service\n"
            "  enable | disable              jprof.io/ annotations for the jprof agent\n"
            "  profile --for 15m [--events cpu,lock]   a temporary profiling window (max 24h)\n"
            "      --workload: annotate the pod template instead (rolls the pods)\n"
            "  status    per pod: JVM found, annotations in force\n"
            "\n"
            "options: -n/--namespace NS, --context CTX, --kubeconfig FILE (passed to every\n"
            "kubectl call; KUBECTL names the kubectl binary), -s/--service SVC, -c/--container C,\n"
            "--timeout 30s (each kubectl call), --probe FILE, --debug-image IMAGE (the kubectl\n"
            "debug route where kubectl exec cannot run the probe: no sh, /tmp noexec),\n"
            "--pid PID (the JVM, when a container runs more than one), -v/--verbose,\n"
            "-h/--help, -V/--version.\n"
            "See kubectl-jprof(1).\n");
}

int plugin_fail(const jp_error *err)
{
    fprintf(stderr, "kubectl-jprof: %s\n", err->msg);
    switch (err->code) {
    case JP_ERR_NOT_FOUND:
    case JP_ERR_NOT_JVM:
        return PLUGIN_EXIT_NOT_FOUND;
    case JP_ERR_USAGE:
        return PLUGIN_EXIT_USAGE;
    default:
        return PLUGIN_EXIT_ERROR;
    }
}

int plugin_pods(const plugin_args *a, jp_pod_list *out)
{
    jp_error err;
    jp_error_init(&err);
    jp_err rc = a->service ? kube_pods_for_service(&a->kube, a->service, out, &err)
                           : kube_pod_get(&a->kube, a->pod, out, &err);
    return rc == JP_OK ? PLUGIN_EXIT_OK : plugin_fail(&err);
}

/* Sleeps ns; false when a signal asked to stop. Returns early (true) when
 * the session s (may be NULL) ends: the next request reports why. */
static bool sleep_bounded(int64_t ns, kube_session *s)
{
    int64_t end = jp_time_mono_ns() + ns;
    while (!stop_signal) {
        if (s && !kube_session_alive(s))
            return true;
        int64_t left = end - jp_time_mono_ns();
        if (left <= 0)
            return true;
        if (left > 100 * JP_NS_PER_MS)
            left = 100 * JP_NS_PER_MS;
        struct timespec ts = {0, (long)left};
        nanosleep(&ts, NULL);
    }
    return false;
}

static void add_pod(json_t *j, const plugin_args *a, const jp_pod *p, const kube_session *s)
{
    json_t *tg = json_object_get(j, "target");
    if (!json_is_object(tg))
        return;
    json_object_set_new(tg, "namespace", p->ns ? json_string(p->ns) : json_null());
    json_object_set_new(tg, "pod", json_string(p->name));
    json_object_set_new(tg, "container", json_string(kube_session_container(s)));
    json_object_set_new(tg, "node", p->node ? json_string(p->node) : json_null());
    (void)a;
}

static int print_answer(const plugin_args *a, const jp_pod *p, const kube_session *s, tui_target *l,
                        bool several)
{
    bool json = a->output && strcmp(a->output, "json") == 0;
    if (json) {
        json_t *j = tui_report_target_json(l);
        add_pod(j, a, p, s);
        int rc = json_dumpf(j, stdout, JSON_COMPACT | JSON_ENSURE_ASCII);
        json_decref(j);
        fputc('\n', stdout);
        return rc == 0 ? PLUGIN_EXIT_OK : PLUGIN_EXIT_ERROR;
    }
    tui_lines ls;
    tui_lines_init(&ls);
    if (several)
        tui_lines_add(&ls, TUI_STYLE_TITLE, 0, "== pod %s, container %s", p->name,
                      kube_session_container(s));
    tui_report_header(l, &ls);
    tui_lines_add(&ls, TUI_STYLE_NORMAL, 0, "%s", "");
    if (strcmp(a->cmd, "threads") == 0) {
        tui_lines_add(&ls, TUI_STYLE_TITLE, 0, "BUSY THREADS (top 20)");
        tui_report_busy(l, 20, &ls);
    } else if (strcmp(a->cmd, "locks") == 0) {
        tui_lines_add(&ls, TUI_STYLE_TITLE, 0, "LOCKS");
        tui_report_locks_idle(l, true, &ls);
    } else {
        tui_lines_add(&ls, TUI_STYLE_TITLE, 0, "DEADLOCKS");
        tui_report_deadlocks(l, &ls);
    }
    jp_err rc = tui_lines_write(&ls, stdout);
    tui_lines_cleanup(&ls);
    return rc == JP_OK ? PLUGIN_EXIT_OK : PLUGIN_EXIT_ERROR;
}

/* A container may run more than one JVM: the answer is about one of them,
 * the others are named with the option that picks each. */
static void other_jvms(const jp_pod *p, kube_session *s)
{
    const kube_hello *h = kube_session_hello(s);
    char others[1024];
    if (kube_hello_others(h, others, sizeof others))
        fprintf(stderr,
                "kubectl-jprof: pod %s, container %s runs %zu JVMs; this is pid %d %s; the "
                "others: %s\n",
                p->name, kube_session_container(s), h->njvms, h->jvm_pid, h->main_class, others);
}

static int snapshot_pod(const plugin_args *a, const jp_pod *p, bool several)
{
    jp_error err;
    jp_error_init(&err);
    /* the kubectl source of jprof-top's screens: the answer is the model
     * and the printers of `jprof-top -b -p PID` */
    tui_target_opts o;
    tui_target_opts_init(&o);
    tui_target *l = NULL;
    if (tui_kubectl_open(&a->kube, p->name, a->container, p, &o, &l, &err) != JP_OK)
        return plugin_fail(&err);
    kube_session *s = tui_kubectl_session(l);
    other_jvms(p, s);
    int status = PLUGIN_EXIT_OK;
    /* threads ranks by CPU: two snapshots an interval apart */
    int n = strcmp(a->cmd, "threads") == 0 ? 2 : 1;
    for (int i = 0; i < n; i++) {
        if (i && !sleep_bounded(a->interval_ns, s)) {
            status = 128 + (int)stop_signal;
            goto out;
        }
        if (tui_target_refresh(l, &err) != JP_OK) {
            status = plugin_fail(&err);
            goto out;
        }
    }
    status = print_answer(a, p, s, l, several);
    if (status == PLUGIN_EXIT_OK && strcmp(a->cmd, "deadlocks") == 0 && l->deadlocks.count)
        status = PLUGIN_EXIT_DEADLOCK;
out:
    tui_target_free(l); /* bye: the probe stops, removes itself */
    return status;
}

static int cmd_snapshot(const plugin_args *a)
{
    jp_pod_list pods;
    jp_pod_list_init(&pods);
    int status = plugin_pods(a, &pods);
    bool deadlock = false;
    /* every pod answers, even after one failed; any failure fails the whole */
    for (size_t i = 0; status == PLUGIN_EXIT_OK && i < pods.count && !stop_signal; i++) {
        int st = snapshot_pod(a, &pods.items[i], pods.count > 1);
        if (st == PLUGIN_EXIT_DEADLOCK)
            deadlock = true;
        else if (st != PLUGIN_EXIT_OK)
            status = st;
    }
    if (status == PLUGIN_EXIT_OK && deadlock)
        status = PLUGIN_EXIT_DEADLOCK;
    jp_pod_list_cleanup(&pods);
    return status;
}

static int write_flame(const plugin_args *a, const jp_profile *prof, jp_kind kind)
{
    FILE *out = stdout;
    if (a->file && !(out = fopen(a->file, "w"))) {
        fprintf(stderr, "kubectl-jprof: %s: %s\n", a->file, strerror(errno));
        return PLUGIN_EXIT_ERROR;
    }
    jp_error err;
    jp_error_init(&err);
    jfr_report rep;
    jfr_report_init(&rep);
    rep.start_ns = prof->start_ns;
    rep.end_ns = prof->end_ns;
    const char *o = a->output ? a->output : "collapsed";
    jp_err rc = strcmp(o, "top") == 0    ? tui_write_top(out, prof, &rep, kind, false, true, &err)
                : strcmp(o, "json") == 0 ? tui_write_json(out, prof, &rep, kind, false, true, &err)
                                         : tui_write_collapsed(out, prof, kind, false, true, &err);
    if (out != stdout && fclose(out) != 0 && rc == JP_OK)
        rc = jp_error_set(&err, JP_ERR_IO, "%s: %s", a->file, strerror(errno));
    if (rc != JP_OK)
        return plugin_fail(&err);
    if (!jp_profile_has_kind(prof, kind))
        fprintf(stderr, "kubectl-jprof: no %s samples in the window (the JVM was idle?)\n",
                jp_kind_name(kind));
    return PLUGIN_EXIT_OK;
}

static int cmd_flame(const plugin_args *a)
{
    jp_kind kind = JP_KIND_CPU;
    if (a->event && !jp_kind_parse(a->event, &kind)) {
        fprintf(stderr, "kubectl-jprof: --event %s: not one of cpu, wall, alloc, lock, park\n",
                a->event);
        return PLUGIN_EXIT_USAGE;
    }
    jp_pod_list pods;
    jp_pod_list_init(&pods);
    int status = plugin_pods(a, &pods);
    if (status != PLUGIN_EXIT_OK)
        goto done;
    if (pods.count > 1)
        fprintf(stderr, "kubectl-jprof: %zu pods; recording in %s (name one pod for another)\n",
                pods.count, pods.items[0].name);
    jp_error err;
    jp_error_init(&err);
    kube_session *s = NULL;
    if (kube_session_open(&a->kube, pods.items[0].name, a->container, &pods.items[0], &s, &err) !=
        JP_OK) {
        status = plugin_fail(&err);
        goto done;
    }
    other_jvms(&pods.items[0], s);
    jp_profile *prof = NULL;
    if (kube_session_profile_start(s, 1u << kind, a->interval_ns, a->duration_ns + JP_NS_PER_SEC,
                                   &err) != JP_OK) {
        status = plugin_fail(&err);
    } else {
        fprintf(stderr, "kubectl-jprof: recording %s in %s for %.0f s\n", jp_kind_name(kind),
                pods.items[0].name, (double)a->duration_ns / 1e9);
        bool done = sleep_bounded(a->duration_ns, s);
        if (!done)
            status = 128 + (int)stop_signal;
        else if (kube_session_profile_read(s, &prof, &err) != JP_OK)
            status = plugin_fail(&err);
        jp_error e2;
        jp_error_init(&e2);
        kube_session_profile_stop(s, &e2);
    }
    kube_session_close(s);
    if (prof) {
        status = write_flame(a, prof, kind);
        jp_profile_free(prof);
    }
done:
    jp_pod_list_cleanup(&pods);
    return status;
}

/* class histograms of the first pod's JVM (through the probe), as
 * `jprof-top -b -p PID --heap` prints them */
static int cmd_heap(const plugin_args *a)
{
    tui_stop_install(); /* a signal stops between histograms (tui_batch_heap) */
    jp_pod_list pods;
    jp_pod_list_init(&pods);
    int status = plugin_pods(a, &pods);
    if (status != PLUGIN_EXIT_OK) {
        jp_pod_list_cleanup(&pods);
        return status;
    }
    if (pods.count > 1)
        fprintf(stderr,
                "kubectl-jprof: %zu pods; class histograms of %s (name one pod for another)\n",
                pods.count, pods.items[0].name);
    jp_error err;
    jp_error_init(&err);
    tui_target_opts o;
    tui_target_opts_init(&o);
    o.heap_all = a->all;
    tui_target *l = NULL;
    if (tui_kubectl_open(&a->kube, pods.items[0].name, a->container, &pods.items[0], &o, &l,
                         &err) != JP_OK) {
        status = plugin_fail(&err);
    } else {
        bool json = a->output && strcmp(a->output, "json") == 0;
        int st = tui_batch_heap(l, a->count, a->has_interval ? a->interval_ns : 10 * JP_NS_PER_SEC,
                                json ? TUI_FORMAT_JSON : TUI_FORMAT_TEXT, stdout, stderr);
        status = st == 0 ? PLUGIN_EXIT_OK : st >= 128 ? st : PLUGIN_EXIT_ERROR;
    }
    jp_pod_list_cleanup(&pods);
    return status;
}

static int cmd_top(const plugin_args *a)
{
    const char *argv[32];
    size_t n = 0;
    char self[512], top[600];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    const char *prog = "jprof-top";
    if (len > 0) {
        self[len] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(top, sizeof top, "%s/jprof-top", self);
            if (access(top, X_OK) == 0)
                prog = top;
        }
    }
    argv[n++] = prog;
    if (a->kube.context)
        argv[n++] = "--context", argv[n++] = a->kube.context;
    if (a->kube.kubeconfig)
        argv[n++] = "--kubeconfig", argv[n++] = a->kube.kubeconfig;
    if (a->kube.ns)
        argv[n++] = "-n", argv[n++] = a->kube.ns;
    if (a->service)
        argv[n++] = "-s", argv[n++] = a->service;
    if (a->pod)
        argv[n++] = "--pod", argv[n++] = a->pod;
    if (a->container)
        argv[n++] = "-c", argv[n++] = a->container;
    if (a->kube.debug)
        argv[n++] = "--debug-image", argv[n++] = a->kube.image;
    char pid[24];
    if (a->kube.jvm_pid > 0) {
        snprintf(pid, sizeof pid, "%d", a->kube.jvm_pid);
        argv[n++] = "--pid", argv[n++] = pid;
    }
    if (a->server)
        argv[n++] = "--server", argv[n++] = a->server;
    else
        argv[n++] = "--via", argv[n++] = "kubectl";
    argv[n] = NULL;
    execvp(prog, (char *const *)argv);
    fprintf(stderr, "kubectl-jprof: cannot run %s: %s\n", prog, strerror(errno));
    return PLUGIN_EXIT_ERROR;
}

static bool parse_duration(const char *opt, const char *s, int64_t *ns)
{
    jp_error err;
    jp_error_init(&err);
    if (jp_duration_parse(s, ns, &err) != JP_OK || *ns <= 0) {
        fprintf(stderr, "kubectl-jprof: %s %s: not a duration (like 30s, 15m, 2h)\n", opt, s);
        return false;
    }
    return true;
}

enum {
    OPT_CONTEXT = 256,
    OPT_KUBECONFIG,
    OPT_EVENT,
    OPT_FOR,
    OPT_EVENTS,
    OPT_WORKLOAD,
    OPT_TIMEOUT,
    OPT_PROBE,
    OPT_IMAGE,
    OPT_PID,
    OPT_INTERVAL,
    OPT_SERVER,
    OPT_POD,
    OPT_COUNT,
    OPT_ALL
};

static int parse_args(int argc, char **argv, plugin_args *a)
{
    static const struct option longopts[] = {
        {"namespace", required_argument, NULL, 'n'},
        {"service", required_argument, NULL, 's'},
        {"container", required_argument, NULL, 'c'},
        {"output", required_argument, NULL, 'o'},
        {"duration", required_argument, NULL, 'd'},
        {"file", required_argument, NULL, 'f'},
        {"context", required_argument, NULL, OPT_CONTEXT},
        {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
        {"event", required_argument, NULL, OPT_EVENT},
        {"for", required_argument, NULL, OPT_FOR},
        {"events", required_argument, NULL, OPT_EVENTS},
        {"workload", no_argument, NULL, OPT_WORKLOAD},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"probe", required_argument, NULL, OPT_PROBE},
        {"debug-image", required_argument, NULL, OPT_IMAGE},
        {"pid", required_argument, NULL, OPT_PID},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"server", required_argument, NULL, OPT_SERVER},
        {"pod", required_argument, NULL, OPT_POD},
        {"count", required_argument, NULL, OPT_COUNT},
        {"all", no_argument, NULL, OPT_ALL},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    kube_opts_init(&a->kube);
    a->duration_ns = 30 * JP_NS_PER_SEC;
    a->interval_ns = JP_NS_PER_SEC;
    const char *env_server = getenv("JPROF_SERVER");
    a->server = env_server && *env_server ? env_server : NULL;
    while (optind < argc) {
        /* "+": stop at each word; words are the command, then the pod */
        int c = getopt_long(argc, argv, "+n:s:c:o:d:f:vhV", longopts, NULL);
        if (c == -1)
            c = 1;
        switch (c) {
        case 1:
            if (!a->cmd)
                a->cmd = argv[optind];
            else if (!a->pod)
                a->pod = argv[optind];
            else {
                fprintf(stderr, "kubectl-jprof: unexpected argument %s\n", argv[optind]);
                return PLUGIN_EXIT_USAGE;
            }
            optind++;
            break;
        case 'n':
            a->kube.ns = optarg;
            break;
        case 's':
            a->service = optarg;
            break;
        case 'c':
            a->container = optarg;
            break;
        case 'o':
            a->output = optarg;
            break;
        case 'f':
            a->file = optarg;
            break;
        case 'd':
            if (!parse_duration("-d", optarg, &a->duration_ns))
                return PLUGIN_EXIT_USAGE;
            break;
        case OPT_CONTEXT:
            a->kube.context = optarg;
            break;
        case OPT_KUBECONFIG:
            a->kube.kubeconfig = optarg;
            break;
        case OPT_EVENT:
            a->event = optarg;
            break;
        case OPT_EVENTS:
            a->events = optarg;
            break;
        case OPT_WORKLOAD:
            a->workload = true;
            break;
        case OPT_PROBE:
            a->kube.probe = optarg;
            break;
        case OPT_IMAGE:
            a->kube.image = optarg;
            a->kube.debug = true;
            break;
        case OPT_PID: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v <= 0 || v > 4194304) {
                fprintf(stderr, "kubectl-jprof: --pid %s: not a process id\n", optarg);
                return PLUGIN_EXIT_USAGE;
            }
            a->kube.jvm_pid = (int)v;
            break;
        }
        case OPT_SERVER:
            a->server = optarg;
            break;
        case OPT_POD:
            a->pod = optarg;
            break;
        case OPT_FOR:
            if (!parse_duration("--for", optarg, &a->for_ns))
                return PLUGIN_EXIT_USAGE;
            break;
        case OPT_TIMEOUT:
            if (!parse_duration("--timeout", optarg, &a->kube.timeout_ns))
                return PLUGIN_EXIT_USAGE;
            break;
        case OPT_INTERVAL:
            if (!parse_duration("--interval", optarg, &a->interval_ns))
                return PLUGIN_EXIT_USAGE;
            a->has_interval = true;
            break;
        case OPT_COUNT: {
            char *end;
            errno = 0;
            long n = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || n < 1 || n > 1000) {
                fprintf(stderr, "kubectl-jprof: --count %s: a number from 1 to 1000\n", optarg);
                return PLUGIN_EXIT_USAGE;
            }
            a->count = n;
            break;
        }
        case OPT_ALL:
            a->all = true;
            break;
        case 'v':
            a->kube.verbose = true;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case 'V':
            printf("kubectl-jprof (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
            exit(0);
        default:
            usage(stderr);
            return PLUGIN_EXIT_USAGE;
        }
    }
    if (!a->cmd) {
        usage(stderr);
        return PLUGIN_EXIT_USAGE;
    }
    /* the command a message's "this works:" repeats with --debug-image */
    kube_command_line("kubectl jprof", argc, argv, a->command_line, sizeof a->command_line);
    a->kube.command = a->command_line;
    return PLUGIN_EXIT_OK;
}

static bool needs_target(const plugin_args *a)
{
    if (a->pod && a->service) {
        fprintf(stderr, "kubectl-jprof: name a pod or -s SERVICE, not both\n");
        return false;
    }
    if (!a->pod && !a->service) {
        fprintf(stderr, "kubectl-jprof: %s: name a pod (POD) or a service (-s SERVICE)\n", a->cmd);
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    plugin_args a;
    int st = parse_args(argc, argv, &a);
    if (st != PLUGIN_EXIT_OK)
        return st;
    jp_stop_signals(on_signal);
    if (strcmp(a.cmd, "top") == 0)
        return cmd_top(&a);
    if (!needs_target(&a))
        return PLUGIN_EXIT_USAGE;
    if (strcmp(a.cmd, "threads") == 0 || strcmp(a.cmd, "locks") == 0 ||
        strcmp(a.cmd, "deadlocks") == 0) {
        if (a.output && strcmp(a.output, "json") && strcmp(a.output, "text")) {
            fprintf(stderr, "kubectl-jprof: -o %s: use text or json\n", a.output);
            return PLUGIN_EXIT_USAGE;
        }
        return cmd_snapshot(&a);
    }
    if (strcmp(a.cmd, "heap") == 0) {
        if (a.output && strcmp(a.output, "json") && strcmp(a.output, "text")) {
            fprintf(stderr, "kubectl-jprof: -o %s: use text or json\n", a.output);
            return PLUGIN_EXIT_USAGE;
        }
        return cmd_heap(&a);
    }
    if (strcmp(a.cmd, "flame") == 0) {
        if (a.output && strcmp(a.output, "collapsed") && strcmp(a.output, "top") &&
            strcmp(a.output, "json")) {
            fprintf(stderr, "kubectl-jprof: -o %s: use collapsed, top or json\n", a.output);
            return PLUGIN_EXIT_USAGE;
        }
        if (a.duration_ns > 3600 * JP_NS_PER_SEC) {
            fprintf(stderr, "kubectl-jprof: -d: at most 1h in one recording\n");
            return PLUGIN_EXIT_USAGE;
        }
        return cmd_flame(&a);
    }
    if (strcmp(a.cmd, "enable") == 0 || strcmp(a.cmd, "disable") == 0 ||
        strcmp(a.cmd, "profile") == 0)
        return plugin_annotate(&a);
    if (strcmp(a.cmd, "status") == 0)
        return plugin_status(&a);
    fprintf(stderr, "kubectl-jprof: unknown command %s (see kubectl jprof --help)\n", a.cmd);
    return PLUGIN_EXIT_USAGE;
}
