/* kubectl-jprof - `kubectl jprof ...`: which thread, which lock, which stack
 * in a pod, through kubectl exec and jprof-probe, with nothing installed in
 * the cluster (man/kubectl-jprof.1). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
            "            [-o collapsed|top|json] [-f FILE] [--interval 10ms] (cpu sampling)\n"
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

/* A wait on the pod ends early when its probe session ended. */
static bool session_gone(void *s)
{
    return !kube_session_alive(s);
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

/* One pod's answer as jprof-top -b -p PID prints it: text (the command's
 * section) or the JSON line, its "target" also naming the pod. */
static int print_answer(const plugin_args *a, const jp_pod *p, const kube_session *s,
                        const tui_target *l, bool several)
{
    jp_error err;
    jp_error_init(&err);
    if (a->output && strcmp(a->output, "json") == 0) {
        json_t *j = tui_report_target_json(l);
        add_pod(j, a, p, s);
        return tui_write_json_line(stdout, j, JSON_ENSURE_ASCII, &err) == JP_OK ? PLUGIN_EXIT_OK
                                                                                : PLUGIN_EXIT_ERROR;
    }
    tui_lines ls;
    tui_lines_init(&ls);
    if (several)
        tui_lines_add(&ls, TUI_STYLE_TITLE, 0, "== pod %s, container %s", p->name,
                      kube_session_container(s));
    unsigned section = strcmp(a->cmd, "threads") == 0 ? TUI_REPORT_BUSY
                       : strcmp(a->cmd, "locks") == 0 ? TUI_REPORT_LOCKS
                                                      : TUI_REPORT_DEADLOCKS;
    tui_report_target_lines(l, section, &ls);
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

typedef struct snapshot_round {
    const plugin_args *a;
    bool several;
    int status; /* the first failure's */
    bool deadlock;
} snapshot_round;

static void snapshot_answer(void *ctx, const jp_pod *p, tui_target *l, const jp_error *err)
{
    snapshot_round *r = ctx;
    if (l)
        other_jvms(p, tui_kubectl_session(l));
    int st = l ? print_answer(r->a, p, tui_kubectl_session(l), l, r->several) : plugin_fail(err);
    if (st == PLUGIN_EXIT_OK && l && strcmp(r->a->cmd, "deadlocks") == 0 && l->deadlocks.count)
        r->deadlock = true;
    if (st != PLUGIN_EXIT_OK && r->status == PLUGIN_EXIT_OK)
        r->status = st;
}

/* threads, locks, deadlocks: every pod answers, even after one failed
 * (the round of jprof-top -b through kubectl); any failure fails the whole,
 * else a deadlock anywhere gives its exit status. */
static int cmd_snapshot(const plugin_args *a)
{
    jp_pod_list pods;
    jp_pod_list_init(&pods);
    int status = plugin_pods(a, &pods);
    if (status != PLUGIN_EXIT_OK) {
        jp_pod_list_cleanup(&pods);
        return status;
    }
    /* the kubectl source of jprof-top's screens: the answer is the model
     * and the printers of `jprof-top -b -p PID` */
    tui_target_opts o;
    tui_target_opts_init(&o);
    o.interval_ns = a->interval_ns;
    snapshot_round sr = {.a = a, .several = pods.count > 1, .status = PLUGIN_EXIT_OK};
    tui_pod_round r = {.ko = &a->kube,
                       .container = a->container,
                       .opts = &o,
                       /* threads ranks by CPU: two snapshots an interval apart */
                       .snapshots = strcmp(a->cmd, "threads") == 0 ? 2 : 1,
                       .each = snapshot_answer,
                       .ctx = &sr};
    tui_batch_pods(&r, &pods);
    jp_pod_list_cleanup(&pods);
    if (tui_stop_signal)
        return 128 + (int)tui_stop_signal;
    return sr.status == PLUGIN_EXIT_OK && sr.deadlock ? PLUGIN_EXIT_DEADLOCK : sr.status;
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
    if (a->has_interval && (a->interval_ns < JP_NS_PER_MS || a->interval_ns > JP_NS_PER_SEC)) {
        fprintf(stderr, "kubectl-jprof: flame --interval: the cpu sampling period is 1ms to 1s\n");
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
    /* --interval is the cpu sampling period here; unset, the probe's own
     * (10 ms, as jprof-top's Flame screen), not the snapshot commands' 1 s */
    if (kube_session_profile_start(s, 1u << kind, a->has_interval ? a->interval_ns : 0,
                                   a->duration_ns + JP_NS_PER_SEC, &err) != JP_OK) {
        status = plugin_fail(&err);
    } else {
        fprintf(stderr, "kubectl-jprof: recording %s in %s for %.0f s\n", jp_kind_name(kind),
                pods.items[0].name, (double)a->duration_ns / 1e9);
        bool done = tui_stop_sleep_until(a->duration_ns, session_gone, s);
        if (!done)
            status = 128 + (int)tui_stop_signal;
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

/* Where to look: the namespace, the pod or service, the container, and
 * how kubectl is run. Returns true when c was one of these. */
static bool parse_where(int c, const char *arg, plugin_args *a)
{
    switch (c) {
    case 'n':
        a->kube.ns = arg;
        return true;
    case 's':
        a->service = arg;
        return true;
    case 'c':
        a->container = arg;
        return true;
    case OPT_POD:
        a->pod = arg;
        return true;
    case OPT_CONTEXT:
        a->kube.context = arg;
        return true;
    case OPT_KUBECONFIG:
        a->kube.kubeconfig = arg;
        return true;
    case OPT_PROBE:
        a->kube.probe = arg;
        return true;
    case OPT_IMAGE:
        a->kube.image = arg;
        a->kube.debug = true;
        return true;
    case OPT_SERVER:
        a->server = arg;
        return true;
    case 'v':
        a->kube.verbose = true;
        return true;
    default:
        return false;
    }
}

/* What to do: output, file, event(s), durations, --workload. Returns
 * PLUGIN_EXIT_OK when taken, PLUGIN_EXIT_USAGE after a message, -1 when c
 * is none of these. */
static int parse_what(int c, const char *arg, plugin_args *a)
{
    switch (c) {
    case 'o':
        a->output = arg;
        return PLUGIN_EXIT_OK;
    case 'f':
        a->file = arg;
        return PLUGIN_EXIT_OK;
    case OPT_EVENT:
        a->event = arg;
        return PLUGIN_EXIT_OK;
    case OPT_EVENTS:
        a->events = arg;
        return PLUGIN_EXIT_OK;
    case OPT_WORKLOAD:
        a->workload = true;
        return PLUGIN_EXIT_OK;
    case 'd':
        return parse_duration("-d", arg, &a->duration_ns) ? PLUGIN_EXIT_OK : PLUGIN_EXIT_USAGE;
    case OPT_FOR:
        return parse_duration("--for", arg, &a->for_ns) ? PLUGIN_EXIT_OK : PLUGIN_EXIT_USAGE;
    case OPT_TIMEOUT:
        return parse_duration("--timeout", arg, &a->kube.timeout_ns) ? PLUGIN_EXIT_OK
                                                                     : PLUGIN_EXIT_USAGE;
    case OPT_INTERVAL:
        a->has_interval = true;
        return parse_duration("--interval", arg, &a->interval_ns) ? PLUGIN_EXIT_OK
                                                                  : PLUGIN_EXIT_USAGE;
    case OPT_ALL:
        a->all = true;
        return PLUGIN_EXIT_OK;
    default:
        return -1;
    }
}

/* The numbers: --pid (which JVM of the container), --count (histograms). */
static int parse_number(int c, const char *arg, plugin_args *a)
{
    if (c != OPT_PID && c != OPT_COUNT)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    switch (c) {
    case OPT_PID:
        if (*end || v <= 0 || v > 4194304) {
            fprintf(stderr, "kubectl-jprof: --pid %s: not a process id\n", arg);
            return PLUGIN_EXIT_USAGE;
        }
        a->kube.jvm_pid = (int)v;
        return PLUGIN_EXIT_OK;
    case OPT_COUNT:
        if (errno || end == arg || *end || v < 1 || v > 1000) {
            fprintf(stderr, "kubectl-jprof: --count %s: a number from 1 to 1000\n", arg);
            return PLUGIN_EXIT_USAGE;
        }
        a->count = v;
        return PLUGIN_EXIT_OK;
    default:
        return -1;
    }
}

static const struct option longopts[] = {{"namespace", required_argument, NULL, 'n'},
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

/* A word of the command line: the command, then the pod. */
static int parse_word(const char *w, plugin_args *a)
{
    if (!a->cmd)
        a->cmd = w;
    else if (!a->pod)
        a->pod = w;
    else {
        fprintf(stderr, "kubectl-jprof: unexpected argument %s\n", w);
        return PLUGIN_EXIT_USAGE;
    }
    return PLUGIN_EXIT_OK;
}

static int parse_args(int argc, char **argv, plugin_args *a)
{
    memset(a, 0, sizeof *a);
    kube_opts_init(&a->kube);
    a->duration_ns = 30 * JP_NS_PER_SEC;
    a->interval_ns = JP_NS_PER_SEC;
    const char *env_server = getenv("JPROF_SERVER");
    a->server = env_server && *env_server ? env_server : NULL;
    while (optind < argc) {
        /* "+": stop at each word; words are the command, then the pod */
        int c = getopt_long(argc, argv, "+n:s:c:o:d:f:vhV", longopts, NULL);
        int st = PLUGIN_EXIT_OK;
        if (c == -1)
            st = parse_word(argv[optind++], a);
        else if (c == 'h' || c == 'V') {
            if (c == 'h')
                usage(stdout);
            else
                printf("kubectl-jprof (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
            exit(0);
        } else if (!parse_where(c, optarg, a) && (st = parse_what(c, optarg, a)) == -1 &&
                   (st = parse_number(c, optarg, a)) == -1) {
            usage(stderr);
            return PLUGIN_EXIT_USAGE;
        }
        if (st != PLUGIN_EXIT_OK)
            return st;
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
    tui_stop_install();
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
