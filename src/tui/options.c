/* options.c - jprof-top's command line: the options, the usage texts, and
 * the checks that reject what does not go together with a message that says
 * what to do (exit status 2). */
#include "tui/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "jfr/jfr.h"
#include "jvm/snapshot_take.h"
#include "kube/kube.h"
#include "model/diff.h"
#include "model/profile.h"
#include "tui/exit.h"

int tui_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("jprof-top: ", stderr);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'jprof-top --help' for more information.\n", stderr);
    return TUI_EXIT_USAGE;
}

static const char *const format_names[] = {"collapsed", "top",  "json", "text",
                                           "pprof",     "html", "gc",   "otlp"};

bool tui_format_parse(const char *s, tui_format *out)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++) {
        if (!strcmp(s, format_names[i])) {
            *out = (tui_format)i;
            return true;
        }
    }
    return false;
}

const char *tui_format_name(tui_format f)
{
    return (unsigned)f < sizeof format_names / sizeof format_names[0] ? format_names[f] : "?";
}

void tui_args_init(tui_args *a)
{
    memset(a, 0, sizeof *a);
    a->kind = JP_KIND_CPU;
    a->format = TUI_FORMAT_COLLAPSED;
    a->diff_norm = JP_DIFF_PER_SAMPLE;
    a->tail = 0.1;
}

/* ---- recordings and the JVMs of this machine ---- */

enum {
    OPT_JFR = 1000,
    OPT_THREADS,
    OPT_COUNT,
    OPT_SNAPSHOT,
    OPT_WINDOW,
    OPT_ASPROF,
    OPT_DIFF,
    OPT_NORMALIZE,
    OPT_STATE,
    OPT_LEAK,
    OPT_TAIL,
    OPT_JOBS,
    OPT_IO_DETAIL,
    OPT_HEAP,
    OPT_HEAP_ALL,
    OPT_HEAP_EVERY,
};

static const struct option long_options[] = {
    /* -b, -f, -e, --value, --from, --to, -d, -h */
    TUI_COMMON_OPTIONS,
    {"jfr", required_argument, NULL, OPT_JFR},
    {"threads", no_argument, NULL, OPT_THREADS},
    {"diff", required_argument, NULL, OPT_DIFF},
    {"normalize", required_argument, NULL, OPT_NORMALIZE},
    {"state", required_argument, NULL, OPT_STATE},
    {"leak", no_argument, NULL, OPT_LEAK},
    {"tail", required_argument, NULL, OPT_TAIL},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {"io-detail", no_argument, NULL, OPT_IO_DETAIL},
    {"version", no_argument, NULL, 'V'},
    /* a live JVM on this machine */
    {"pid", required_argument, NULL, 'p'},
    {"count", required_argument, NULL, OPT_COUNT},
    {"snapshot", required_argument, NULL, OPT_SNAPSHOT},
    {"window", required_argument, NULL, OPT_WINDOW},
    {"asprof", required_argument, NULL, OPT_ASPROF},
    {"heap", no_argument, NULL, OPT_HEAP},
    {"all", no_argument, NULL, OPT_HEAP_ALL},
    {"heap-every", required_argument, NULL, OPT_HEAP_EVERY},
    /* a service on jprof-server: handled by remote_cli.c (tui_server_main) */
    {"namespace", required_argument, NULL, 'n'},
    {"service", required_argument, NULL, 's'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *out)
{
    fputs("Usage: jprof-top [-p PID] [-d SECONDS] [--snapshot SRC] [--window SECONDS]\n"
          "                 [--asprof PATH/libasyncProfiler.so]\n"
          "       jprof-top -b [-p PID [--count N] [-d SECONDS] [--format text|json]\n"
          "                 [--snapshot SRC]]\n"
          "       jprof-top [-b] -p PID --heap [--all] [--count N] [-d SECONDS]\n"
          "                 [--heap-every DURATION] [--format text|json]\n"
          "       jprof-top [-b] -n NS -s SVC [--server URL] [--token-file FILE]\n"
          "                 (a service on jprof-server: jprof-top -n NS -s SVC --help)\n"
          "       jprof-top --jfr FILE [--event KIND] [--value samples|total] [--threads]\n"
          "                 [--from TIME] [--to TIME]\n"
          "       jprof-top -b --jfr FILE [--event KIND] [--value samples|total]\n"
          "                 [--format collapsed|top|json|pprof|otlp|html|gc] [--threads]\n"
          "                 [--from TIME]\n"
          "                 [--to TIME]\n"
          "                 [--state S[,S]] [--leak [--tail F]] [--jobs N]\n"
          "       jprof-top [-b] --jfr FILE --io-detail [--format top|json]\n"
          "       jprof-top [-b] -p PID --io-detail [-d SECONDS] [--format text|json]\n"
          "       jprof-top [-b] --jfr NEW --diff OLD [--normalize sample|second|none]\n"
          "                 [--event KIND] [--value samples|total] [--format "
          "collapsed|top|json|html]\n"
          "\n"
          "Look into a running JVM (threads, locks, deadlocks, a live flame graph),\n"
          "or explore a Java Flight Recorder file. Without -p and --jfr: the list of\n"
          "local JVMs to pick from (-b prints it).\n"
          "\n"
          "  -p, --pid PID          the JVM to attach to (same user as the JVM, or root)\n"
          "  -d, --delay SECONDS    refresh interval, and the CPU% interval (default 2)\n"
          "      --count N          batch: print N samples (default 1)\n"
          "      --snapshot SRC     auto (default), helper or thread-print\n"
          "      --window SECONDS   the live flame graph's window (default 30)\n"
          "      --asprof PATH      profile with this libasyncProfiler.so instead of JFR\n"
          "      --heap             class histograms (what is on the heap, what grows): -b\n"
          "                         prints --count of them -d apart (default 10 s), the\n"
          "                         growth from the second on; without -b the Heap screen\n"
          "                         (key H). Each one PAUSES THE JVM (a full GC and a heap\n"
          "                         walk): never taken unless asked\n"
          "      --all              histograms of every object, unreachable ones too (no\n"
          "                         full GC, a shorter pause)\n"
          "      --heap-every DUR   the Heap screen takes one every DUR (e.g. 5m; at least\n"
          "                         10s)\n"
          "  -b, --batch            print to stdout instead of the interactive view\n"
          "      --jfr FILE         the JFR recording to read\n"
          "  -e, --event KIND       cpu, wall, alloc, lock, park, nativemem, live,\n"
          "                         nativelock, cputime, io (socket and file waits) or\n"
          "                         old (sampled objects still alive, by allocation site)\n"
          "                         (default: cpu if present, else the first kind present)\n"
          "      --value WHAT       samples (event counts, default) or total (ns or bytes)\n"
          "  -f, --format FMT       batch output: live text (default) or json (one object\n"
          "                         per line); --jfr collapsed (default), top, json or\n"
          "                         pprof (gzipped protobuf for go tool pprof), otlp\n"
          "                         (OpenTelemetry profiles, protobuf: what\n"
          "                         /v1development/profiles takes), html (one\n"
          "                         file: flame graph and top table, no network), gc (GC\n"
          "                         pauses, heap and allocation rate; json has it as \"gc\")\n"
          "      --threads          thread names as the root frames\n"
          "      --io-detail        io: the remote endpoints (host:port) and files waited\n"
          "                         on, with events and time blocked; read and shown\n"
          "                         here only (key i in the Flame screen; -b -p records\n"
          "                         -d SECONDS, default 10)\n"
          "      --diff OLD         compare with the baseline recording OLD: a differential\n"
          "                         flame graph (red grows, blue shrinks); -b: collapsed\n"
          "                         'stack OLD NEW' lines, top: the biggest changes first\n"
          "      --normalize HOW    sample (default: the baseline scaled to the same\n"
          "                         total), second (to the same duration) or none\n"
          "      --from TIME        only events at or after TIME\n"
          "      --to TIME          only events before TIME\n"
          "                         TIME: RFC 3339, @EPOCH, +D or D from the start, -D from\n"
          "                         the end (D like 30s, 2m, 250ms)\n"
          "      --state S[,S]      only samples in these thread states (STATE_RUNNABLE,\n"
          "                         or RUNNABLE; as `jfr print` names them)\n"
          "      --leak             nativemem: only mallocs never freed in the recording\n"
          "      --tail F           --leak ignores mallocs in the last F of the time\n"
          "                         (a fraction, default 0.1)\n"
          "      --jobs N           threads decoding the recording (default: every online CPU)\n"
          "  -h, --help             this help\n"
          "  -V, --version          the version\n"
          "\n"
          "Exit status: 0 ok, 1 error, 2 usage error, 3 damaged file (partial output),\n"
          "4 no such process, 5 not a JVM, 6 not permitted, 7 attach timed out, 8 the JVM\n"
          "exited, 9 attach disabled, 10 agent loading refused, 11 profiler conflict.\n"
          "See jprof-top(1).\n",
          out);
}

static int parse_seconds(const char *s, const char *opt, int64_t *out)
{
    jp_error err;
    jp_error_init(&err);
    int64_t ns = 0;
    if (jp_duration_parse(s, &ns, &err) != JP_OK || ns <= 0)
        return tui_usage_error(
            "%s: '%s' is not a positive number of seconds (like 2, 0.5 or 500ms)", opt, s);
    *out = ns;
    return TUI_EXIT_OK;
}

static int parse_count(const char *s, const char *opt, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return tui_usage_error("%s: '%s' is not a number from %ld to %ld", opt, s, min, max);
    *out = (int)v;
    return TUI_EXIT_OK;
}

static int parse_time(const char *s, jp_timespec_arg *t, bool *has, const char *opt)
{
    jp_error err;
    jp_error_init(&err);
    if (jp_timespec_parse(s, t, &err) != JP_OK) {
        fprintf(stderr, "jprof-top: %s: %s\nTry 'jprof-top --help' for more information.\n", opt,
                err.msg);
        return TUI_EXIT_USAGE;
    }
    *has = true;
    return TUI_EXIT_OK;
}

/* --state, --leak, --tail, --jobs: how the recording is read. */
static int parse_reader_option(int c, const char *arg, tui_args *a)
{
    jfr_options o;
    jp_error err;
    jp_error_init(&err);
    char *end;
    switch (c) {
    case OPT_STATE:
        if (!jfr_states_parse(&o, arg, &err))
            return tui_usage_error("--state: %s", err.msg);
        a->states = arg;
        return TUI_EXIT_OK;
    case OPT_LEAK:
        a->leak = true;
        return TUI_EXIT_OK;
    case OPT_TAIL:
        errno = 0;
        a->tail = strtod(arg, &end);
        if (errno || end == arg || *end || !(a->tail >= 0 && a->tail <= 1))
            return tui_usage_error("--tail: '%s' is not a fraction from 0 to 1", arg);
        a->has_tail = true;
        return TUI_EXIT_OK;
    default:
        return parse_count(arg, "--jobs", 1, 256, &a->jobs);
    }
}

/* Returns -1 when parsing went fine, else the exit status. */
int tui_args_parse(int argc, char **argv, tui_args *a)
{
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":be:f:hVp:n:s:d:", long_options, NULL)) != -1) {
        int rc = TUI_EXIT_OK;
        switch (c) {
        case 'b':
            a->batch = true;
            break;
        case OPT_JFR:
            a->jfr_path = optarg;
            break;
        case 'e':
            if (!jp_kind_parse(optarg, &a->kind))
                return tui_usage_error("unknown kind '%s' for --event (use %s)", optarg,
                                       jp_kind_list());
            a->has_kind = true;
            break;
        case TUI_OPT_VALUE:
            if (strcmp(optarg, "samples") && strcmp(optarg, "total"))
                return tui_usage_error("--value must be samples or total, not '%s'", optarg);
            a->by_value = !strcmp(optarg, "total");
            break;
        case 'f':
            if (!tui_format_parse(optarg, &a->format))
                return tui_usage_error(
                    "unknown format '%s' (use collapsed, top, json, pprof, otlp, html or gc)",
                    optarg);
            a->has_format = true;
            break;
        case OPT_THREADS:
            a->threads = true;
            break;
        case OPT_IO_DETAIL:
            a->io_detail = true;
            break;
        case OPT_DIFF:
            a->diff_path = optarg;
            break;
        case OPT_NORMALIZE: {
            jp_diff_norm n;
            if (!jp_diff_norm_parse(optarg, &n))
                return tui_usage_error("--normalize must be sample, second or none, not '%s'",
                                       optarg);
            a->diff_norm = (int)n;
            break;
        }
        case OPT_STATE:
        case OPT_LEAK:
        case OPT_TAIL:
        case OPT_JOBS:
            rc = parse_reader_option(c, optarg, a);
            break;
        case TUI_OPT_FROM:
            rc = parse_time(optarg, &a->from, &a->has_from, "--from");
            break;
        case TUI_OPT_TO:
            rc = parse_time(optarg, &a->to, &a->has_to, "--to");
            break;
        case 'h':
            usage(stdout);
            return TUI_EXIT_OK;
        case 'V':
            printf("jprof-top (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
            return TUI_EXIT_OK;
        case 'p':
            rc = parse_count(optarg, "-p", 1, INT32_MAX, &a->pid);
            a->has_pid = true;
            break;
        case 'd':
            rc = parse_seconds(optarg, "-d", &a->interval_ns);
            break;
        case OPT_WINDOW:
            rc = parse_seconds(optarg, "--window", &a->window_ns);
            break;
        case OPT_COUNT: {
            int n = 0;
            rc = parse_count(optarg, "--count", 1, 1000000, &n);
            a->count = n;
            break;
        }
        case OPT_SNAPSHOT: {
            jvm_snap_source src;
            if (!jvm_snap_source_parse(optarg, &src))
                return tui_usage_error("unknown snapshot source '%s' (use auto, helper or "
                                       "thread-print)",
                                       optarg);
            a->snap_source = (int)src;
            break;
        }
        case OPT_ASPROF:
            a->asprof = optarg;
            break;
        case OPT_HEAP:
            a->heap = true;
            break;
        case OPT_HEAP_ALL:
            a->heap_all = true;
            break;
        case OPT_HEAP_EVERY:
            rc = parse_seconds(optarg, "--heap-every", &a->heap_every_ns);
            if (rc == TUI_EXIT_OK && a->heap_every_ns < 10 * JP_NS_PER_SEC)
                return tui_usage_error("--heap-every %s: at least 10s (each histogram pauses the "
                                       "JVM)",
                                       optarg);
            break;
        case 'n':
        case 's':
            /* main() hands such command lines to tui_server_main() */
            return tui_usage_error("%s needs a value", c == 'n' ? "-n" : "-s");
        case ':':
            return tui_usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            return tui_usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (rc != TUI_EXIT_OK)
            return rc;
    }
    if (optind < argc)
        return tui_usage_error("unexpected argument '%s'", argv[optind]);
    if (a->has_format && !a->batch)
        return tui_usage_error("%s", "--format is for batch mode: add -b");
    if (!a->jfr_path && (a->has_kind || a->has_from || a->has_to || a->threads || a->by_value ||
                         a->states || a->leak || a->has_tail || a->jobs))
        return tui_usage_error("%s", "--event, --value, --threads, --from, --to, --state, --leak, "
                                     "--tail and --jobs need a recording: no recording given, use "
                                     "--jfr FILE");
    if (a->io_detail) {
        if (!a->jfr_path && !a->has_pid)
            return tui_usage_error("%s", "--io-detail needs a recording (--jfr FILE) or a JVM "
                                         "(-p PID)");
        if (a->has_kind && a->kind != JP_KIND_IO)
            return tui_usage_error("--io-detail is about the io kind, not %s",
                                   jp_kind_name(a->kind));
        if (a->diff_path)
            return tui_usage_error("%s", "--io-detail and --diff do not go together");
        if (a->has_format && a->format != TUI_FORMAT_TOP && a->format != TUI_FORMAT_JSON &&
            a->format != TUI_FORMAT_TEXT)
            return tui_usage_error("--io-detail prints a table (top, text) or json, not %s",
                                   tui_format_name(a->format));
        if (a->jfr_path) {
            a->kind = JP_KIND_IO;
            a->has_kind = true;
            if (!a->has_format || a->format == TUI_FORMAT_TEXT)
                a->format = TUI_FORMAT_TOP;
            a->has_format = a->batch;
        }
    }
    if ((a->heap || a->heap_all || a->heap_every_ns) && !a->has_pid)
        return tui_usage_error("%s", "--heap, --all and --heap-every need a JVM: -p PID (a pod: "
                                     "kubectl jprof heap POD)");
    if ((a->heap_all || a->heap_every_ns) && !a->heap)
        return tui_usage_error("%s", "--all and --heap-every are about class histograms: add "
                                     "--heap");
    if (a->heap && (a->io_detail || a->asprof))
        return tui_usage_error("%s", "--heap does not go with --io-detail or --asprof");
    if (a->has_tail && !a->leak)
        return tui_usage_error("%s", "--tail is the age limit of --leak: add --leak");
    if (a->diff_path && !a->jfr_path)
        return tui_usage_error("%s", "--diff OLD.jfr compares with a recording: add --jfr NEW.jfr");
    if (a->diff_path && (a->format == TUI_FORMAT_PPROF || a->format == TUI_FORMAT_GC ||
                         a->format == TUI_FORMAT_OTLP))
        return tui_usage_error("--diff prints collapsed, top, json or html, not %s",
                               tui_format_name(a->format));
    if (a->jfr_path) {
        if (a->has_pid)
            return tui_usage_error("%s", "--jfr and -p are two sources: give one");
        if (a->has_format && a->format == TUI_FORMAT_TEXT)
            return tui_usage_error("%s", "--format text is for live JVMs (-p); use collapsed, top "
                                         "or json with --jfr");
        return -1;
    }
    if (a->has_format && a->format != TUI_FORMAT_TEXT && a->format != TUI_FORMAT_JSON)
        return tui_usage_error("--format %s is for recordings (--jfr); a live JVM prints text or "
                               "json",
                               tui_format_name(a->format));
    if (!a->has_format)
        a->format = TUI_FORMAT_TEXT;
    return -1;
}

/* ---- a service: jprof-server or kubectl ---- */

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
    OPT_R_WINDOW,
    OPT_BASE_FROM,
    OPT_BASE_TO,
    OPT_BASE_POD,
    OPT_R_NORMALIZE,
    OPT_DEBUG_IMAGE,
    OPT_JVM_PID,
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
    {"window", required_argument, NULL, OPT_R_WINDOW},
    {"base-from", required_argument, NULL, OPT_BASE_FROM},
    {"base-to", required_argument, NULL, OPT_BASE_TO},
    {"base-pod", required_argument, NULL, OPT_BASE_POD},
    {"normalize", required_argument, NULL, OPT_R_NORMALIZE},
    {"debug-image", required_argument, NULL, OPT_DEBUG_IMAGE},
    {"pid", required_argument, NULL, OPT_JVM_PID},
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

static void server_usage(void)
{
    fputs("Usage: jprof-top -n NS -s SVC [--server URL] [--token-file FILE] [--pod POD]\n"
          "                 [--range 5m|15m|1h|6h|24h] [-d SECONDS] [--screen NAME]\n"
          "       jprof-top -b -n NS -s SVC [--format text|json] [--pod POD]\n"
          "       jprof-top -b -n NS -s SVC --format gc [--from TIME] [--to TIME] [--pod POD]\n"
          "       jprof-top -b -n NS -s SVC --event KIND [--format collapsed|top|json|pprof|otlp]\n"
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
          "      --debug-image IMAGE  kubectl: where kubectl exec cannot run the probe (no\n"
          "                         sh, /tmp noexec), an ephemeral debug container from\n"
          "                         IMAGE (jprof's own) sharing the pod's processes\n"
          "      --pid PID          kubectl: the JVM, when a container runs more than one\n"
          "  -b, --batch            print instead of the interactive view\n"
          "  -f, --format FMT       text (default), json, or gc (GC pauses, heap and\n"
          "                         allocation rate over --from/--to); with --event:\n"
          "                         collapsed (default), top, json, pprof or otlp\n"
          "                         (OpenTelemetry profiles, protobuf)\n"
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

static int server_parse_opt(int c, tui_server_args *a)
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
    case OPT_DEBUG_IMAGE:
        a->debug_image = optarg;
        return -1;
    case OPT_JVM_PID: {
        char *end;
        long v = strtol(optarg, &end, 10);
        if (*end || v <= 0 || v > 4194304)
            return tui_usage_error("--pid: '%s' is not a process id", optarg);
        a->jvm_pid = (int)v;
        return -1;
    }
    case OPT_R_WINDOW: {
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
    case OPT_R_NORMALIZE: {
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
        static const char *const names[] = {"threads", "locks", "deadlocks", "flame",
                                            "status",  "gc",    "heap"};
        for (int i = 0; i < 7; i++)
            if (!strcmp(optarg, names[i])) {
                a->screen = i;
                return -1;
            }
        return tui_usage_error(
            "--screen must be threads, locks, deadlocks, flame, status, gc or heap");
    }
    case 'b':
        a->batch = true;
        return -1;
    case 'f':
        if (!tui_format_parse(optarg, &a->bo.format))
            return tui_usage_error("unknown format '%s' (use text or json; with --event collapsed, "
                                   "top, json, pprof or otlp)",
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
        server_usage();
        return TUI_EXIT_OK;
    default:
        return -2;
    }
}

/* kubectl when asked, or when no server is configured */
bool tui_server_args_kubectl(const tui_server_args *a)
{
    if (a->via != VIA_AUTO)
        return a->via == VIA_KUBECTL;
    return !strcmp(a->ro.server_from, "default");
}

static int check_kubectl_args(tui_server_args *a)
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

static int server_check_args(tui_server_args *a)
{
    if (tui_server_args_kubectl(a))
        return check_kubectl_args(a);
    if (a->container || a->context || a->kubeconfig || a->window_ns || a->debug_image || a->jvm_pid)
        return tui_usage_error("%s", "-c, --context, --kubeconfig, --window, --debug-image and "
                                     "--pid are for kubectl (--via kubectl)");
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
        else if (a->bo.format == TUI_FORMAT_TEXT || a->bo.format == TUI_FORMAT_HTML)
            return tui_usage_error("--format %s is not for a service's profile; with --event use "
                                   "collapsed, top, json, pprof or otlp",
                                   tui_format_name(a->bo.format));
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

int tui_server_args_parse(int argc, char **argv, tui_server_args *a)
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
        int rc = server_parse_opt(c, a);
        if (rc == -2)
            return tui_usage_error("'%s' is not an option of the remote view (-n NS -s SVC)",
                                   argv[optind - 1]);
        if (rc >= 0)
            return rc;
    }
    if (optind < argc)
        return tui_usage_error("unexpected argument '%s'", argv[optind]);
    kube_command_line("jprof-top", argc, argv, a->command_line, sizeof a->command_line);
    if (a->range != 1 && !a->bo.from && a->batch && a->bo.has_kind) {
        static char from[16];
        snprintf(from, sizeof from, "-%s", tui_range_names[a->range]);
        a->bo.from = from;
    }
    return server_check_args(a);
}
