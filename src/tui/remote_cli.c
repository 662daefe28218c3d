#include "tui/remote_cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "jvm/cleanup.h"
#include "tui/app_common.h"
#include "tui/report_profile.h"
#include "tui/interactive.h"
#include "tui/target.h"
#include "tui/batch.h"
#include "tui/screens.h"
#include "tui/server_client.h"
#include "tui/batch_server.h"
#include "tui/terminal.h"
#include "tui/source_kubectl.h"
#include "tui/source_server.h"
#include "tui/flame_view.h"

enum {
    OPT_SERVER = 2000,
    OPT_TOKEN_FILE,
    OPT_SERVER_CA,
    OPT_POD,
    OPT_RANGE,
    OPT_SCREEN,
    OPT_VIA,
    OPT_CONTEXT,
    OPT_KUBECONFIG,
    OPT_WINDOW,
    OPT_BASE_FROM,
    OPT_BASE_TO,
    OPT_BASE_POD,
    OPT_NORMALIZE,
};

static const struct option remote_options[] = {
    {"namespace", required_argument, NULL, 'n'},
    {"service", required_argument, NULL, 's'},
    {"server", required_argument, NULL, OPT_SERVER},
    {"token-file", required_argument, NULL, OPT_TOKEN_FILE},
    {"server-ca", required_argument, NULL, OPT_SERVER_CA},
    {"pod", required_argument, NULL, OPT_POD},
    {"range", required_argument, NULL, OPT_RANGE},
    {"screen", required_argument, NULL, OPT_SCREEN},
    {"via", required_argument, NULL, OPT_VIA},
    {"container", required_argument, NULL, 'c'},
    {"context", required_argument, NULL, OPT_CONTEXT},
    {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
    {"window", required_argument, NULL, OPT_WINDOW},
    {"base-from", required_argument, NULL, OPT_BASE_FROM},
    {"base-to", required_argument, NULL, OPT_BASE_TO},
    {"base-pod", required_argument, NULL, OPT_BASE_POD},
    {"normalize", required_argument, NULL, OPT_NORMALIZE},
    TUI_COMMON_OPTIONS,
    {NULL, 0, NULL, 0},
};

bool tui_server_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            break;
        if (!strncmp(a, "-n", 2) || !strncmp(a, "-s", 2) || !strncmp(a, "--namespace", 11) ||
            !strncmp(a, "--service", 9))
            return true;
        /* -bn NS: a short option cluster naming n or s last */
        if (a[0] == '-' && a[1] != '-' && strlen(a) > 2 && (strchr(a, 'n') || strchr(a, 's')) &&
            strspn(a + 1, "bns") == strlen(a + 1))
            return true;
    }
    return false;
}

typedef enum via { VIA_AUTO = 0, VIA_SERVER, VIA_KUBECTL } via;

typedef struct rargs {
    via via;
    const char *container, *context, *kubeconfig;
    int64_t window_ns;
    tui_client_opts ro;
    tui_server_batch_opts bo;
    bool batch, has_format, has_norm;
    int range;
    int64_t interval_ns;
    int screen; /* index into "TLDFSG" */
} rargs;

static void usage(void)
{
    fputs("Usage: jprof-top -n NS -s SVC [--server URL] [--token-file FILE] [--pod POD]\n"
          "                 [--range 5m|15m|1h|6h|24h] [-d SECONDS] [--screen NAME]\n"
          "       jprof-top -b -n NS -s SVC [--format text|json] [--pod POD]\n"
          "       jprof-top -b -n NS -s SVC --format gc [--from TIME] [--to TIME] [--pod POD]\n"
          "       jprof-top -b -n NS -s SVC --event KIND [--format collapsed|top|json]\n"
          "                 [--value samples|total] [--from TIME] [--to TIME] [--pod POD]\n"
          "       jprof-top -n NS (-s SVC | --pod POD) --via kubectl [-c CONTAINER]\n"
          "                 [--context CTX] [--kubeconfig FILE] [-d SECONDS] [--window S]\n"
          "       jprof-top -b -n NS (-s SVC | --pod POD) --via kubectl [--format text|json]\n"
          "\n"
          "A service as jprof-server knows it: pods and JVMs with their status, threads,\n"
          "locks and deadlocks of the latest snapshots, flame graphs over a time range.\n"
          "With no server configured (no --server, no JPROF_SERVER), or with --via\n"
          "kubectl, a pod of the service is inspected through `kubectl exec` instead:\n"
          "jprof-probe is streamed into the container and removed again on the way out;\n"
          "nothing needs to be installed in the cluster.\n"
          "\n"
          "  -n, --namespace NS     the namespace (host-mode agents use 'local')\n"
          "  -s, --service SVC      the service\n"
          "      --via WAY          server or kubectl (default: server when one is\n"
          "                         configured, else kubectl)\n"
          "      --server URL       jprof-server (default $JPROF_SERVER, else\n"
          "                         http://127.0.0.1:8480)\n"
          "      --token-file FILE  a file holding a read token (default $JPROF_TOKEN_FILE)\n"
          "      --server-ca FILE   CA bundle for an https server\n"
          "      --pod POD          only this pod (keys p/P change it interactively)\n"
          "      --range R          the flame range shown first (default 15m)\n"
          "      --base-from TIME, --base-to TIME, --base-pod POD\n"
          "                         compare with this baseline (the web page's Compare):\n"
          "                         a differential flame graph; -b --event KIND: collapsed\n"
          "                         'stack OLD NEW', top or json (--diff's formats); one\n"
          "                         end alone keeps the range's length; --base-pod '' is\n"
          "                         every pod\n"
          "      --normalize HOW    sample (default), second or none (see --diff)\n"
          "      --screen NAME      threads, locks, deadlocks, flame, status or gc\n"
          "  -d, --delay SECONDS    refresh interval (default 5; kubectl: 2)\n"
          "  -c, --container C      kubectl: the container (default: the first that\n"
          "                         runs a JVM)\n"
          "      --context CTX, --kubeconfig FILE\n"
          "                         kubectl: passed to every kubectl call ($KUBECTL\n"
          "                         names another kubectl binary)\n"
          "      --window SECONDS   kubectl: the Flame screen's window (default 30)\n"
          "  -b, --batch            print instead of the interactive view\n"
          "  -f, --format FMT       text (default), json, or gc (GC pauses, heap and\n"
          "                         allocation rate over --from/--to); with --event:\n"
          "                         collapsed (default), top or json\n"
          "  -e, --event KIND       print the profile of cpu, wall, alloc, lock or park\n"
          "      --value WHAT       samples (default) or total (ns or bytes)\n"
          "      --from, --to TIME  the profile's range: -15m, -2h, now, @EPOCH or RFC 3339\n"
          "                         (default: the last --range)\n"
          "\n"
          "Exit status: 0 ok, 1 error, 2 usage error, 3 partial answer, 4-11 as for -p\n"
          "(kubectl: the JVM in the pod), 20 server unreachable or failing, 21 token\n"
          "missing or refused, 22 namespace outside the token's scope, 23 unknown\n"
          "service, 24 kubectl failed. See jprof-top(1), REMOTE MODE and KUBECTL.\n",
          stdout);
}

static int parse_opt(int c, rargs *a)
{
    switch (c) {
    case 'n':
        a->ro.ns = optarg;
        return -1;
    case 's':
        a->ro.svc = optarg;
        return -1;
    case OPT_SERVER:
        a->ro.server = optarg;
        a->ro.server_from = "--server";
        return -1;
    case OPT_TOKEN_FILE:
        a->ro.token_file = optarg;
        a->ro.token_from = "--token-file";
        return -1;
    case OPT_SERVER_CA:
        a->ro.ca_file = optarg;
        return -1;
    case OPT_POD:
        a->bo.pod = optarg;
        return -1;
    case OPT_VIA:
        if (!strcmp(optarg, "server"))
            a->via = VIA_SERVER;
        else if (!strcmp(optarg, "kubectl"))
            a->via = VIA_KUBECTL;
        else
            return tui_usage_error("--via must be server or kubectl, not '%s'", optarg);
        return -1;
    case 'c':
        a->container = optarg;
        return -1;
    case OPT_CONTEXT:
        a->context = optarg;
        return -1;
    case OPT_KUBECONFIG:
        a->kubeconfig = optarg;
        return -1;
    case OPT_WINDOW: {
        jp_error err;
        jp_error_init(&err);
        if (jp_duration_parse(optarg, &a->window_ns, &err) != JP_OK || a->window_ns <= 0)
            return tui_usage_error("--window: '%s' is not a positive number of seconds", optarg);
        return -1;
    }
    case OPT_BASE_FROM:
        a->bo.base.from = optarg;
        a->bo.has_base = true;
        return -1;
    case OPT_BASE_TO:
        a->bo.base.to = optarg;
        a->bo.has_base = true;
        return -1;
    case OPT_BASE_POD:
        a->bo.base.pod = optarg;
        a->bo.has_base = true;
        return -1;
    case OPT_NORMALIZE: {
        jp_diff_norm n;
        if (!jp_diff_norm_parse(optarg, &n))
            return tui_usage_error("--normalize must be sample, second or none, not '%s'", optarg);
        a->bo.norm = (int)n;
        a->has_norm = true;
        return -1;
    }
    case OPT_RANGE:
        if ((a->range = tui_range_parse(optarg)) < 0)
            return tui_usage_error("--range must be 5m, 15m, 1h, 6h or 24h, not '%s'", optarg);
        return -1;
    case OPT_SCREEN: {
        static const char *const names[] = {"threads", "locks",  "deadlocks",
                                            "flame",   "status", "gc"};
        for (int i = 0; i < 6; i++)
            if (!strcmp(optarg, names[i])) {
                a->screen = i;
                return -1;
            }
        return tui_usage_error("--screen must be threads, locks, deadlocks, flame, status or gc");
    }
    case 'b':
        a->batch = true;
        return -1;
    case 'f':
        if (!tui_format_parse(optarg, &a->bo.format))
            return tui_usage_error("unknown format '%s' (use text or json; with --event collapsed, "
                                   "top or json)",
                                   optarg);
        a->has_format = true;
        return -1;
    case 'e':
        if (!jp_kind_parse(optarg, &a->bo.kind))
            return tui_usage_error("unknown kind '%s' for --event (use cpu, wall, alloc, lock or "
                                   "park)",
                                   optarg);
        a->bo.has_kind = true;
        return -1;
    case TUI_OPT_VALUE:
        if (strcmp(optarg, "samples") && strcmp(optarg, "total"))
            return tui_usage_error("--value must be samples or total, not '%s'", optarg);
        a->bo.by_value = !strcmp(optarg, "total");
        return -1;
    case TUI_OPT_FROM:
        a->bo.from = optarg;
        return -1;
    case TUI_OPT_TO:
        a->bo.to = optarg;
        return -1;
    case 'd': {
        jp_error err;
        jp_error_init(&err);
        if (jp_duration_parse(optarg, &a->interval_ns, &err) != JP_OK || a->interval_ns <= 0)
            return tui_usage_error("-d: '%s' is not a positive number of seconds", optarg);
        return -1;
    }
    case 'h':
        usage();
        return TUI_EXIT_OK;
    default:
        return -2;
    }
}

/* kubectl when asked, or when no server is configured */
static bool use_kubectl(const rargs *a)
{
    if (a->via != VIA_AUTO)
        return a->via == VIA_KUBECTL;
    return !strcmp(a->ro.server_from, "default");
}

static int check_kubectl_args(rargs *a)
{
    if (!a->ro.svc && !a->bo.pod)
        return tui_usage_error("%s", "through kubectl: give -s SERVICE or --pod POD");
    if (a->has_format && !a->batch)
        return tui_usage_error("%s", "--format is for batch mode: add -b");
    if (a->bo.has_kind || a->bo.from || a->bo.to || a->bo.by_value)
        return tui_usage_error("%s", "--event, --value, --from and --to read a server; through "
                                     "kubectl use the Flame screen, or `kubectl jprof flame`");
    if (a->range != 1)
        return tui_usage_error("%s", "--range reads a server (--server URL); through kubectl the "
                                     "Flame screen shows the last --window seconds");
    if (!a->has_format)
        a->bo.format = TUI_FORMAT_TEXT;
    else if (a->bo.format != TUI_FORMAT_TEXT && a->bo.format != TUI_FORMAT_JSON)
        return tui_usage_error("%s", "through kubectl --format is text or json");
    return -1;
}

static int check_args(rargs *a)
{
    if (use_kubectl(a))
        return check_kubectl_args(a);
    if (a->container || a->context || a->kubeconfig || a->window_ns)
        return tui_usage_error("%s", "-c, --context, --kubeconfig and --window are for "
                                     "kubectl (--via kubectl)");
    if (!a->ro.ns || !*a->ro.ns || !a->ro.svc || !*a->ro.svc)
        return tui_usage_error("%s", "the remote view needs both -n NAMESPACE and -s SERVICE");
    if (a->has_format && !a->batch)
        return tui_usage_error("%s", "--format is for batch mode: add -b");
    if (!a->batch && !a->bo.has_base &&
        (a->bo.has_kind || a->bo.from || a->bo.to || a->bo.by_value))
        return tui_usage_error("%s",
                               "--event, --value, --from and --to are for batch mode (-b); "
                               "interactively use the Flame screen (F) and < > for the range");
    if (a->has_norm && !a->bo.has_base)
        return tui_usage_error("%s", "--normalize is for a comparison: add --base-from, --base-to "
                                     "or --base-pod");
    if (a->bo.has_base && !a->batch) {
        if (a->bo.from || a->bo.to || a->bo.by_value)
            return tui_usage_error("%s", "with --base-*, interactively the range is -15m to now "
                                         "or --range; --from, --to and --value are for -b");
        return -1;
    }
    if (a->bo.has_base && !a->bo.has_kind)
        return tui_usage_error("%s", "--base-from, --base-to and --base-pod compare one kind: add "
                                     "--event KIND");
    if (a->bo.has_base && a->has_format && a->bo.format != TUI_FORMAT_COLLAPSED &&
        a->bo.format != TUI_FORMAT_TOP && a->bo.format != TUI_FORMAT_JSON)
        return tui_usage_error("%s", "a comparison prints collapsed, top or json");
    if (a->has_format && a->bo.format == TUI_FORMAT_GC) {
        if (a->bo.has_kind || a->bo.by_value || a->bo.has_base)
            return tui_usage_error("%s", "--format gc is the GC summary of the service (or --pod): "
                                         "without --event, --value or --base-*");
        return -1;
    }
    if (a->bo.has_kind) {
        if (!a->has_format)
            a->bo.format = TUI_FORMAT_COLLAPSED;
        else if (a->bo.format == TUI_FORMAT_TEXT)
            return tui_usage_error("%s", "--format text is for the snapshot view; with --event use "
                                         "collapsed, top or json");
    } else if (a->bo.from || a->bo.to || a->bo.by_value) {
        return tui_usage_error("%s", "--value, --from and --to need --event KIND");
    } else if (!a->has_format) {
        a->bo.format = TUI_FORMAT_TEXT;
    } else if (a->bo.format != TUI_FORMAT_TEXT && a->bo.format != TUI_FORMAT_JSON) {
        return tui_usage_error("%s", "--format collapsed and top need --event KIND (gc: the GC "
                                     "summary)");
    }
    return -1;
}

static int parse(int argc, char **argv, rargs *a)
{
    memset(a, 0, sizeof *a);
    a->range = 1;
    a->bo.norm = JP_DIFF_PER_SAMPLE;
    a->ro.server = getenv("JPROF_SERVER");
    a->ro.server_from = a->ro.server && *a->ro.server ? "JPROF_SERVER" : "default";
    a->ro.token_file = getenv("JPROF_TOKEN_FILE");
    if (a->ro.token_file && !*a->ro.token_file)
        a->ro.token_file = NULL;
    a->ro.token_from = "JPROF_TOKEN_FILE";
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":bn:s:c:f:e:d:h", remote_options, NULL)) != -1) {
        if (c == ':')
            return tui_usage_error("option '%s' needs a value", argv[optind - 1]);
        int rc = parse_opt(c, a);
        if (rc == -2)
            return tui_usage_error("'%s' is not an option of the remote view (-n NS -s SVC)",
                                   argv[optind - 1]);
        if (rc >= 0)
            return rc;
    }
    if (optind < argc)
        return tui_usage_error("unexpected argument '%s'", argv[optind]);
    if (a->range != 1 && !a->bo.from && a->batch && a->bo.has_kind) {
        static char from[16];
        snprintf(from, sizeof from, "-%s", tui_range_names[a->range]);
        a->bo.from = from;
    }
    return check_args(a);
}

/* The screens every source has, on the service's newest snapshot (or
 * --pod's); o lists the service's pods and JVMs. */
static int interactive(tui_client *r, const rargs *a)
{
    tui_stop_install();
    tui_target_opts o;
    tui_target_opts_init(&o);
    o.interval_ns = a->interval_ns > 0 ? a->interval_ns : 5 * JP_NS_PER_SEC;
    char pod[256];
    long long pid = -1;
    jp_error err;
    jp_error_init(&err);
    tui_target *l = NULL;
    bool found = tui_server_first(r, a->bo.pod, pod, sizeof pod, &pid, &err) == JP_OK;
    if (found && tui_server_open(&a->ro, pod, pid, a->range, &o, &l, &err) != JP_OK)
        found = false;
    tui_screens *v = tui_screens_new_with(l, tui_picker_server(r, &a->ro, a->range), &o);
    if (!found)
        tui_screens_message(v, true, "%s", err.msg);
    if (l)
        tui_screens_tick(v); /* the first snapshot before the first screen */
    if (l && a->screen)
        tui_screens_key(v, "TLDFSG"[a->screen]);
    return tui_interactive_live_view(v, "the service (jprof-server is only read)");
}

/* --base-*: the differential flame graph of the range against the
 * baseline, the same view as --jfr NEW --diff OLD. */
static int interactive_diff(tui_client *r, const rargs *a)
{
    tui_server_batch_opts o = a->bo;
    if (!o.has_kind) { /* cpu when the service has it, else its first kind */
        uint32_t kinds = tui_client_kinds(r);
        o.kind = JP_KIND_CPU;
        for (int k = 0; k < JP_KIND_COUNT && !(kinds & (1u << JP_KIND_CPU)); k++)
            if (kinds & (1u << k)) {
                o.kind = (jp_kind)k;
                break;
            }
    }
    if (!o.from && a->range != 1) {
        static char from[16];
        snprintf(from, sizeof from, "-%s", tui_range_names[a->range]);
        o.from = from;
    }
    jp_diff *d = NULL;
    static char cl[256], bl[256];
    int rc = tui_batch_server_diff_open(r, &o, false, &d, cl, bl, sizeof cl, stderr);
    if (!d)
        return rc;
    jfr_report rep;
    jfr_report_init(&rep);
    rep.start_ns = d->prof->start_ns;
    rep.end_ns = d->prof->end_ns;
    tui_flame_view *v = tui_flame_view_new(d->prof, &rep, cl, d->kind, false, false);
    tui_flame_view_set_diff(v, d, bl);
    jp_error serr;
    jp_error_init(&serr);
    jp_err src = tui_terminal_run(v, &serr);
    tui_flame_view_free(v);
    jp_diff_free(d);
    if (src != JP_OK) {
        fprintf(stderr, "jprof-top: %s\n", serr.msg);
        return TUI_EXIT_ERROR;
    }
    return TUI_EXIT_OK;
}

/* ---- through kubectl ---- */

static int kube_status(const jp_error *err)
{
    if (err->code == JP_ERR_PROTOCOL || err->code == JP_ERR_UNSUPPORTED)
        return TUI_EXIT_KUBECTL;
    if (err->code == JP_ERR_NOT_FOUND)
        return TUI_EXIT_NO_SERVICE;
    return tui_target_exit_status(err->code);
}

static int kube_fail(const jp_error *err)
{
    fprintf(stderr, "jprof-top: %s\n", err->msg);
    return kube_status(err);
}

static bool pod_running(const jp_pod *p)
{
    return !p->phase || !strcmp(p->phase, "Running");
}

/* -b through kubectl: every running pod of the service (or --pod), each
 * JVM as `-b -p PID` prints one (two snapshots one interval apart, for
 * CPU%); JSON: one object with "via": "kubectl" and jvms[] in that shape,
 * as the server's batch output has. */
static int kube_batch(const rargs *a, const kube_opts *ko, jp_pod_list *pods,
                      const tui_target_opts *o)
{
    int status = TUI_EXIT_OK;
    json_t *jvms = json_array();
    size_t n = 0;
    for (size_t i = 0; i < pods->count && !tui_stop_signal; i++) {
        const jp_pod *p = &pods->items[i];
        if (!pod_running(p)) {
            fprintf(stderr, "jprof-top: pod %s is %s; left out\n", p->name, p->phase);
            continue;
        }
        jp_error err;
        jp_error_init(&err);
        tui_target *l = NULL;
        jp_err rc = tui_kubectl_open(ko, p->name, a->container, p, o, &l, &err);
        if (rc == JP_OK)
            rc = tui_target_refresh(l, &err);
        if (rc == JP_OK) {
            tui_stop_sleep(o->interval_ns);
            rc = tui_target_refresh(l, &err);
        }
        if (rc != JP_OK) {
            fprintf(stderr, "jprof-top: pod %s: %s\n", p->name, err.msg);
            status = status == TUI_EXIT_OK ? kube_status(&err) : status;
        } else if (a->bo.format == TUI_FORMAT_JSON) {
            json_array_append_new(jvms, tui_report_target_json(l));
        } else if (tui_report_target_write(l, TUI_FORMAT_TEXT, (long)n, stdout) != JP_OK) {
            status = TUI_EXIT_ERROR;
        }
        n += rc == JP_OK;
        tui_target_free(l); /* bye: the probe removes itself */
    }
    if (a->bo.format == TUI_FORMAT_JSON) {
        json_t *j = json_pack("{s:s,s:s?,s:s?,s:s?,s:o}", "via", "kubectl", "namespace", ko->ns,
                              "service", a->ro.svc, "pod", a->bo.pod, "jvms", jvms);
        if (json_dumpf(j, stdout, JSON_COMPACT) != 0 || fputc('\n', stdout) == EOF)
            status = TUI_EXIT_ERROR;
        json_decref(j);
    } else {
        json_decref(jvms);
    }
    if (fflush(stdout) != 0)
        status = TUI_EXIT_ERROR;
    jvm_cleanup_run_all();
    if (tui_stop_signal) {
        fprintf(stderr, "jprof-top: interrupted (signal %d); nothing left in the pod\n",
                (int)tui_stop_signal);
        return 128 + (int)tui_stop_signal;
    }
    return status;
}

static int kube_main(const rargs *a)
{
    kube_opts ko;
    kube_opts_init(&ko);
    ko.ns = a->ro.ns;
    ko.context = a->context;
    ko.kubeconfig = a->kubeconfig;
    tui_target_opts o;
    tui_target_opts_init(&o);
    if (a->interval_ns > 0)
        o.interval_ns = a->interval_ns;
    if (a->window_ns > 0)
        o.window_ns = a->window_ns;
    jp_error err;
    jp_error_init(&err);
    tui_stop_install();
    jp_pod_list pods;
    jp_pod_list_init(&pods);
    jp_err rc = a->bo.pod ? kube_pod_get(&ko, a->bo.pod, &pods, &err)
                          : kube_pods_for_service(&ko, a->ro.svc, &pods, &err);
    if (rc != JP_OK) {
        jp_pod_list_cleanup(&pods);
        return kube_fail(&err);
    }
    if (a->batch) {
        int st = kube_batch(a, &ko, &pods, &o);
        jp_pod_list_cleanup(&pods);
        return st;
    }
    /* one pod: open it at once; several: the list first */
    tui_target *l = NULL;
    if (pods.count == 1) {
        rc = tui_kubectl_open(&ko, pods.items[0].name, a->container, &pods.items[0], &o, &l, &err);
        if (rc != JP_OK) {
            jp_pod_list_cleanup(&pods);
            return kube_fail(&err);
        }
    }
    /* o lists the service's pods (a pod named with --pod has no list) */
    tui_picker *pk = a->ro.svc ? tui_picker_kubectl(&ko, a->ro.svc, a->container, &pods) : NULL;
    jp_pod_list_cleanup(&pods);
    tui_screens *v = tui_screens_new_with(l, pk, &o);
    if (l)
        tui_screens_tick(v); /* the first snapshot before the first screen */
    if (l && a->screen)
        tui_screens_key(v, "TLDFSG"[a->screen]);
    /* freeing the view says bye: the probe stops its recording, removes itself */
    return tui_interactive_live_view(v, "the pod");
}

int tui_server_main(int argc, char **argv)
{
    rargs a;
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (!a.batch && !tui_have_terminal())
        return TUI_EXIT_USAGE;
    if (use_kubectl(&a))
        return kube_main(&a);
    jp_http_global_init();
    tui_client *r = tui_client_new(&a.ro);
    jp_error err;
    jp_error_init(&err);
    if (tui_client_connect(r, &err) != JP_OK) {
        fprintf(stderr, "jprof-top: %s\n", err.msg);
        rc = tui_client_exit_status(r);
        tui_client_free(r);
        return rc;
    }
    if (a.batch) {
        rc = tui_batch_server_run(r, &a.bo, stdout, stderr);
        tui_client_free(r);
        return rc;
    }
    if (a.bo.has_base) {
        rc = interactive_diff(r, &a);
        tui_client_free(r);
        return rc;
    }
    return interactive(r, &a); /* the view's list frees r */
}
