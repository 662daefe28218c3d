/* options.c - jprof-top's command line: one table of options, each said
 * once with the command lines it belongs to (a recording or a JVM on this
 * machine; a service), one parser, the two usage texts, and the checks that
 * reject what does not go together with a message that says what to do
 * (exit status 2). */
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

/* What an option handler says: taken, not one of its options, or (>= 0)
 * the exit status to stop with. */
#define TAKEN (-1)
#define NOT_MINE (-2)

/* The command lines an option belongs to. */
enum { FOR_LOCAL = 1, FOR_SERVICE = 2, FOR_BOTH = 3 };

enum {
    OPT_VALUE = 1000,
    OPT_FROM,
    OPT_TO,
    OPT_WINDOW,
    OPT_NORMALIZE,
    OPT_JFR,
    OPT_THREADS,
    OPT_DIFF,
    OPT_STATE,
    OPT_LEAK,
    OPT_TAIL,
    OPT_JOBS,
    OPT_IO_DETAIL,
    OPT_COUNT,
    OPT_SNAPSHOT,
    OPT_ASPROF,
    OPT_HEAP,
    OPT_HEAP_ALL,
    OPT_HEAP_EVERY,
    OPT_SERVER,
    OPT_TOKEN_FILE,
    OPT_SERVER_CA,
    OPT_POD,
    OPT_RANGE,
    OPT_SCREEN,
    OPT_VIA,
    OPT_CONTEXT,
    OPT_KUBECONFIG,
    OPT_BASE_FROM,
    OPT_BASE_TO,
    OPT_BASE_POD,
    OPT_DEBUG_IMAGE,
    OPT_JVM_PID,
};

typedef struct opt_def {
    const char *name;
    int has_arg;
    int val; /* the short letter, or OPT_* */
    unsigned modes;
} opt_def;

static const opt_def opt_defs[] = {
    /* every command line */
    {"batch", no_argument, 'b', FOR_BOTH},
    {"format", required_argument, 'f', FOR_BOTH},
    {"event", required_argument, 'e', FOR_BOTH},
    {"value", required_argument, OPT_VALUE, FOR_BOTH},
    {"from", required_argument, OPT_FROM, FOR_BOTH},
    {"to", required_argument, OPT_TO, FOR_BOTH},
    {"delay", required_argument, 'd', FOR_BOTH},
    {"window", required_argument, OPT_WINDOW, FOR_BOTH},
    {"normalize", required_argument, OPT_NORMALIZE, FOR_BOTH},
    {"namespace", required_argument, 'n', FOR_BOTH},
    {"service", required_argument, 's', FOR_BOTH},
    {"help", no_argument, 'h', FOR_BOTH},
    /* a recording, a JVM on this machine */
    {"jfr", required_argument, OPT_JFR, FOR_LOCAL},
    {"threads", no_argument, OPT_THREADS, FOR_LOCAL},
    {"diff", required_argument, OPT_DIFF, FOR_LOCAL},
    {"state", required_argument, OPT_STATE, FOR_LOCAL},
    {"leak", no_argument, OPT_LEAK, FOR_LOCAL},
    {"tail", required_argument, OPT_TAIL, FOR_LOCAL},
    {"jobs", required_argument, OPT_JOBS, FOR_LOCAL},
    {"io-detail", no_argument, OPT_IO_DETAIL, FOR_LOCAL},
    {"version", no_argument, 'V', FOR_LOCAL},
    {"pid", required_argument, 'p', FOR_LOCAL},
    {"count", required_argument, OPT_COUNT, FOR_LOCAL},
    {"snapshot", required_argument, OPT_SNAPSHOT, FOR_LOCAL},
    {"asprof", required_argument, OPT_ASPROF, FOR_LOCAL},
    {"heap", no_argument, OPT_HEAP, FOR_LOCAL},
    {"all", no_argument, OPT_HEAP_ALL, FOR_LOCAL},
    {"heap-every", required_argument, OPT_HEAP_EVERY, FOR_LOCAL},
    /* a service on jprof-server, or its pods through kubectl */
    {"server", required_argument, OPT_SERVER, FOR_SERVICE},
    {"token-file", required_argument, OPT_TOKEN_FILE, FOR_SERVICE},
    {"server-ca", required_argument, OPT_SERVER_CA, FOR_SERVICE},
    {"pod", required_argument, OPT_POD, FOR_SERVICE},
    {"range", required_argument, OPT_RANGE, FOR_SERVICE},
    {"screen", required_argument, OPT_SCREEN, FOR_SERVICE},
    {"via", required_argument, OPT_VIA, FOR_SERVICE},
    {"container", required_argument, 'c', FOR_SERVICE},
    {"context", required_argument, OPT_CONTEXT, FOR_SERVICE},
    {"kubeconfig", required_argument, OPT_KUBECONFIG, FOR_SERVICE},
    {"base-from", required_argument, OPT_BASE_FROM, FOR_SERVICE},
    {"base-to", required_argument, OPT_BASE_TO, FOR_SERVICE},
    {"base-pod", required_argument, OPT_BASE_POD, FOR_SERVICE},
    {"debug-image", required_argument, OPT_DEBUG_IMAGE, FOR_SERVICE},
    /* kubectl's JVM in a container; a recording's or this machine's is -p */
    {"pid", required_argument, OPT_JVM_PID, FOR_SERVICE},
};
#define NOPTS (sizeof opt_defs / sizeof opt_defs[0])

/* getopt_long's table and short options for one kind of command line:
 * another kind's option is unknown here, as if it did not exist. */
static void opt_table(unsigned mode, struct option *lo, char *shorts, size_t slen)
{
    size_t n = 0, k = 0;
    shorts[k++] = ':';
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_def *d = &opt_defs[i];
        if (!(d->modes & mode))
            continue;
        lo[n++] = (struct option){d->name, d->has_arg, NULL, d->val};
        if (d->val < 128 && k + 3 < slen) {
            shorts[k++] = (char)d->val;
            if (d->has_arg == required_argument)
                shorts[k++] = ':';
        }
    }
    lo[n] = (struct option){NULL, 0, NULL, 0};
    shorts[k] = '\0';
}

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

/* True when the command line names a namespace or a service. */
static bool service_wanted(int argc, char **argv)
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

static void args_init(tui_args *a, bool service)
{
    memset(a, 0, sizeof *a);
    a->kind = JP_KIND_CPU;
    a->format = TUI_FORMAT_COLLAPSED;
    a->diff_norm = JP_DIFF_PER_SAMPLE;
    a->tail = 0.1;
    a->range = 1; /* 15m */
    a->service = service;
    if (!service)
        return;
    /* the server and the token: the environment, unless the options say */
    a->ro.server = getenv("JPROF_SERVER");
    a->ro.server_from = a->ro.server && *a->ro.server ? "JPROF_SERVER" : "default";
    a->ro.token_file = getenv("JPROF_TOKEN_FILE");
    if (a->ro.token_file && !*a->ro.token_file)
        a->ro.token_file = NULL;
    a->ro.token_from = "JPROF_TOKEN_FILE";
}

bool tui_args_kubectl(const tui_args *a)
{
    if (a->via != TUI_VIA_AUTO)
        return a->via == TUI_VIA_KUBECTL;
    return !strcmp(a->ro.server_from, "default");
}

/* ---- values ---- */

/* A positive duration into *out; the message of a recording's command line
 * gives examples (hint). */
static int parse_seconds(const char *s, const char *opt, bool hint, int64_t *out)
{
    jp_error err;
    jp_error_init(&err);
    if (jp_duration_parse(s, out, &err) != JP_OK || *out <= 0)
        return tui_usage_error("%s: '%s' is not a positive number of seconds%s", opt, s,
                               hint ? " (like 2, 0.5 or 500ms)" : "");
    return TAKEN;
}

static int parse_count(const char *s, const char *opt, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return tui_usage_error("%s: '%s' is not a number from %ld to %ld", opt, s, min, max);
    *out = (int)v;
    return TAKEN;
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
    return TAKEN;
}

/* ---- the usage texts (--help) ---- */

static void usage_local(FILE *out)
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

static void usage_service(void)
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

/* ---- the options read the same on every command line ---- */

static int parse_shared(int c, const char *arg, tui_args *a)
{
    switch (c) {
    case 'b':
        a->batch = true;
        return TAKEN;
    case OPT_VALUE:
        if (strcmp(arg, "samples") && strcmp(arg, "total"))
            return tui_usage_error("--value must be samples or total, not '%s'", arg);
        a->by_value = !strcmp(arg, "total");
        return TAKEN;
    case OPT_NORMALIZE: {
        jp_diff_norm n;
        if (!jp_diff_norm_parse(arg, &n))
            return tui_usage_error("--normalize must be sample, second or none, not '%s'", arg);
        a->diff_norm = (int)n;
        a->has_norm = true;
        return TAKEN;
    }
    default:
        return NOT_MINE;
    }
}

/* ---- a recording, a JVM on this machine ---- */

/* -e, -f, --from, --to, -d, --window, -h, -V as a recording or a pid
 * reads them. */
static int parse_local_view(int c, const char *arg, tui_args *a)
{
    switch (c) {
    case 'e':
        if (!jp_kind_parse(arg, &a->kind))
            return tui_usage_error("unknown kind '%s' for --event (use %s)", arg, jp_kind_list());
        a->has_kind = true;
        return TAKEN;
    case 'f':
        if (!tui_format_parse(arg, &a->format))
            return tui_usage_error(
                "unknown format '%s' (use collapsed, top, json, pprof, otlp, html or gc)", arg);
        a->has_format = true;
        return TAKEN;
    case OPT_FROM:
        return parse_time(arg, &a->from, &a->has_from, "--from");
    case OPT_TO:
        return parse_time(arg, &a->to, &a->has_to, "--to");
    case 'd':
        return parse_seconds(arg, "-d", true, &a->interval_ns);
    case OPT_WINDOW:
        return parse_seconds(arg, "--window", true, &a->window_ns);
    case 'h':
        usage_local(stdout);
        return TUI_EXIT_OK;
    case 'V':
        printf("jprof-top (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        return TUI_EXIT_OK;
    case 'n':
    case 's': /* only where the service was not recognised: -n without a value */
        return tui_usage_error("%s needs a value", c == 'n' ? "-n" : "-s");
    default:
        return NOT_MINE;
    }
}

/* --jfr, --diff, --threads, --io-detail, and how the recording is read:
 * --state, --leak, --tail, --jobs. */
static int parse_recording(int c, const char *arg, tui_args *a)
{
    jfr_options o;
    jp_error err;
    jp_error_init(&err);
    char *end;
    switch (c) {
    case OPT_JFR:
        a->jfr_path = arg;
        return TAKEN;
    case OPT_DIFF:
        a->diff_path = arg;
        return TAKEN;
    case OPT_THREADS:
        a->threads = true;
        return TAKEN;
    case OPT_IO_DETAIL:
        a->io_detail = true;
        return TAKEN;
    case OPT_STATE:
        if (!jfr_states_parse(&o, arg, &err))
            return tui_usage_error("--state: %s", err.msg);
        a->states = arg;
        return TAKEN;
    case OPT_LEAK:
        a->leak = true;
        return TAKEN;
    case OPT_TAIL:
        errno = 0;
        a->tail = strtod(arg, &end);
        if (errno || end == arg || *end || !(a->tail >= 0 && a->tail <= 1))
            return tui_usage_error("--tail: '%s' is not a fraction from 0 to 1", arg);
        a->has_tail = true;
        return TAKEN;
    case OPT_JOBS:
        return parse_count(arg, "--jobs", 1, 256, &a->jobs);
    default:
        return NOT_MINE;
    }
}

/* -p, --count, --snapshot, --asprof, and class histograms: --heap, --all,
 * --heap-every. */
static int parse_pid(int c, const char *arg, tui_args *a)
{
    switch (c) {
    case 'p':
        a->has_pid = true;
        return parse_count(arg, "-p", 1, INT32_MAX, &a->pid);
    case OPT_COUNT: {
        int n = 0;
        int rc = parse_count(arg, "--count", 1, 1000000, &n);
        a->count = n;
        return rc;
    }
    case OPT_SNAPSHOT: {
        jvm_snap_source src;
        if (!jvm_snap_source_parse(arg, &src))
            return tui_usage_error("unknown snapshot source '%s' (use auto, helper or "
                                   "thread-print)",
                                   arg);
        a->snap_source = (int)src;
        return TAKEN;
    }
    case OPT_ASPROF:
        a->asprof = arg;
        return TAKEN;
    case OPT_HEAP:
        a->heap = true;
        return TAKEN;
    case OPT_HEAP_ALL:
        a->heap_all = true;
        return TAKEN;
    case OPT_HEAP_EVERY: {
        int rc = parse_seconds(arg, "--heap-every", true, &a->heap_every_ns);
        if (rc == TAKEN && a->heap_every_ns < 10 * JP_NS_PER_SEC)
            return tui_usage_error("--heap-every %s: at least 10s (each histogram pauses the JVM)",
                                   arg);
        return rc;
    }
    default:
        return NOT_MINE;
    }
}

static int parse_local(int c, const char *arg, tui_args *a)
{
    int rc = parse_shared(c, arg, a);
    if (rc == NOT_MINE)
        rc = parse_local_view(c, arg, a);
    if (rc == NOT_MINE)
        rc = parse_recording(c, arg, a);
    return rc == NOT_MINE ? parse_pid(c, arg, a) : rc;
}

/* ---- a service ---- */

/* -e, -f, --from, --to, -d, --window, --range, --screen, -h as a service
 * reads them. */
static int parse_service_view(int c, const char *arg, tui_args *a)
{
    static const char *const screens[] = {"threads", "locks", "deadlocks", "flame",
                                          "status",  "gc",    "heap"};
    switch (c) {
    case 'e':
        if (!jp_kind_parse(arg, &a->kind))
            return tui_usage_error("unknown kind '%s' for --event (use cpu, wall, alloc, lock or "
                                   "park)",
                                   arg);
        a->has_kind = true;
        return TAKEN;
    case 'f':
        if (!tui_format_parse(arg, &a->format))
            return tui_usage_error("unknown format '%s' (use text or json; with --event collapsed, "
                                   "top, json, pprof or otlp)",
                                   arg);
        a->has_format = true;
        return TAKEN;
    case OPT_FROM:
        a->from_text = arg;
        return TAKEN;
    case OPT_TO:
        a->to_text = arg;
        return TAKEN;
    case 'd':
        return parse_seconds(arg, "-d", false, &a->interval_ns);
    case OPT_WINDOW:
        return parse_seconds(arg, "--window", false, &a->window_ns);
    case OPT_RANGE:
        if ((a->range = tui_range_parse(arg)) < 0)
            return tui_usage_error("--range must be 5m, 15m, 1h, 6h or 24h, not '%s'", arg);
        return TAKEN;
    case OPT_SCREEN:
        for (int i = 0; i < (int)(sizeof screens / sizeof screens[0]); i++)
            if (!strcmp(arg, screens[i])) {
                a->screen = i;
                return TAKEN;
            }
        return tui_usage_error(
            "--screen must be threads, locks, deadlocks, flame, status, gc or heap");
    case 'h':
        usage_service();
        return TUI_EXIT_OK;
    default:
        return NOT_MINE;
    }
}

/* Where the service is: -n, -s, --pod, the server and its token, kubectl's
 * way in, and the baseline of a comparison. */
static int parse_service_where(int c, const char *arg, tui_args *a)
{
    switch (c) {
    case 'n':
        a->ro.ns = arg;
        return TAKEN;
    case 's':
        a->ro.svc = arg;
        return TAKEN;
    case OPT_POD:
        a->pod = arg;
        return TAKEN;
    case OPT_SERVER:
        a->ro.server = arg;
        a->ro.server_from = "--server";
        return TAKEN;
    case OPT_TOKEN_FILE:
        a->ro.token_file = arg;
        a->ro.token_from = "--token-file";
        return TAKEN;
    case OPT_SERVER_CA:
        a->ro.ca_file = arg;
        return TAKEN;
    case OPT_VIA:
        if (!strcmp(arg, "server"))
            a->via = TUI_VIA_SERVER;
        else if (!strcmp(arg, "kubectl"))
            a->via = TUI_VIA_KUBECTL;
        else
            return tui_usage_error("--via must be server or kubectl, not '%s'", arg);
        return TAKEN;
    case 'c':
        a->container = arg;
        return TAKEN;
    case OPT_CONTEXT:
        a->context = arg;
        return TAKEN;
    case OPT_KUBECONFIG:
        a->kubeconfig = arg;
        return TAKEN;
    case OPT_DEBUG_IMAGE:
        a->debug_image = arg;
        return TAKEN;
    case OPT_JVM_PID: {
        char *end;
        long v = strtol(arg, &end, 10);
        if (*end || v <= 0 || v > 4194304)
            return tui_usage_error("--pid: '%s' is not a process id", arg);
        a->jvm_pid = (int)v;
        return TAKEN;
    }
    case OPT_BASE_FROM:
    case OPT_BASE_TO:
    case OPT_BASE_POD:
        *(c == OPT_BASE_FROM ? &a->base.from : c == OPT_BASE_TO ? &a->base.to : &a->base.pod) = arg;
        a->has_base = true;
        return TAKEN;
    default:
        return NOT_MINE;
    }
}

static int parse_service(int c, const char *arg, tui_args *a)
{
    int rc = parse_shared(c, arg, a);
    if (rc == NOT_MINE)
        rc = parse_service_view(c, arg, a);
    return rc == NOT_MINE ? parse_service_where(c, arg, a) : rc;
}

/* ---- what goes together ---- */

/* --io-detail: the io kind of a recording, or a pid's I/O waits. */
static int check_io_detail(tui_args *a)
{
    if (!a->jfr_path && !a->has_pid)
        return tui_usage_error("%s", "--io-detail needs a recording (--jfr FILE) or a JVM "
                                     "(-p PID)");
    if (a->has_kind && a->kind != JP_KIND_IO)
        return tui_usage_error("--io-detail is about the io kind, not %s", jp_kind_name(a->kind));
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
    return TAKEN;
}

/* --heap, --all, --heap-every: class histograms of a JVM on this machine. */
static int check_heap(const tui_args *a)
{
    if ((a->heap || a->heap_all || a->heap_every_ns) && !a->has_pid)
        return tui_usage_error("%s", "--heap, --all and --heap-every need a JVM: -p PID (a pod: "
                                     "kubectl jprof heap POD)");
    if ((a->heap_all || a->heap_every_ns) && !a->heap)
        return tui_usage_error("%s", "--all and --heap-every are about class histograms: add "
                                     "--heap");
    if (a->heap && (a->io_detail || a->asprof))
        return tui_usage_error("%s", "--heap does not go with --io-detail or --asprof");
    return TAKEN;
}

/* How a recording's events are read: JPROF_JFR_READ (jfr.h, read). */
static int check_jfr_read(tui_args *a)
{
    static const struct {
        const char *name;
        int read;
    } ways[] = {{"auto", JFR_READ_AUTO}, {"map", JFR_READ_MAP}, {"pread", JFR_READ_PREAD}};
    const char *how = getenv("JPROF_JFR_READ");
    a->jfr_read = JFR_READ_AUTO;
    if (!how || !*how)
        return TAKEN;
    for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++)
        if (!strcmp(how, ways[i].name)) {
            a->jfr_read = ways[i].read;
            return TAKEN;
        }
    return tui_usage_error("JPROF_JFR_READ=%s: say auto, map or pread", how);
}

/* A recording (--jfr, --diff) or a JVM on this machine. */
static int check_local(tui_args *a)
{
    if (a->has_format && !a->batch)
        return tui_usage_error("%s", "--format is for batch mode: add -b");
    if (!a->jfr_path && (a->has_kind || a->has_from || a->has_to || a->threads || a->by_value ||
                         a->states || a->leak || a->has_tail || a->jobs))
        return tui_usage_error("%s", "--event, --value, --threads, --from, --to, --state, --leak, "
                                     "--tail and --jobs need a recording: no recording given, use "
                                     "--jfr FILE");
    int rc = a->io_detail ? check_io_detail(a) : TAKEN;
    if (rc == TAKEN)
        rc = check_heap(a);
    if (rc != TAKEN)
        return rc;
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
        return check_jfr_read(a);
    }
    if (a->has_format && a->format != TUI_FORMAT_TEXT && a->format != TUI_FORMAT_JSON)
        return tui_usage_error("--format %s is for recordings (--jfr); a live JVM prints text or "
                               "json",
                               tui_format_name(a->format));
    if (!a->has_format)
        a->format = TUI_FORMAT_TEXT;
    return TAKEN;
}

/* A service's pods through kubectl. */
static int check_kubectl(tui_args *a)
{
    if (!a->ro.svc && !a->pod)
        return tui_usage_error("%s", "through kubectl: give -s SERVICE or --pod POD");
    if (a->has_format && !a->batch)
        return tui_usage_error("%s", "--format is for batch mode: add -b");
    if (a->has_kind || a->from_text || a->to_text || a->by_value)
        return tui_usage_error("%s", "--event, --value, --from and --to read a server; through "
                                     "kubectl use the Flame screen, or `kubectl jprof flame`");
    if (a->range != 1)
        return tui_usage_error("%s", "--range reads a server (--server URL); through kubectl the "
                                     "Flame screen shows the last --window seconds");
    if (!a->has_format)
        a->format = TUI_FORMAT_TEXT;
    else if (a->format != TUI_FORMAT_TEXT && a->format != TUI_FORMAT_JSON)
        return tui_usage_error("%s", "through kubectl --format is text or json");
    return TAKEN;
}

/* A comparison with a baseline of the server (--base-*) in batch mode: one
 * kind, in collapsed, top or json. */
static int check_server_base(const tui_args *a)
{
    if (!a->has_kind)
        return tui_usage_error("%s", "--base-from, --base-to and --base-pod compare one kind: add "
                                     "--event KIND");
    if (a->has_format && a->format != TUI_FORMAT_COLLAPSED && a->format != TUI_FORMAT_TOP &&
        a->format != TUI_FORMAT_JSON)
        return tui_usage_error("%s", "a comparison prints collapsed, top or json");
    return TAKEN;
}

/* What the batch output of a service prints: its snapshots (text, json),
 * a profile (--event: collapsed, top, json) or the GC summary (gc). */
static int check_server_format(tui_args *a)
{
    if (a->has_format && a->format == TUI_FORMAT_GC) {
        if (a->has_kind || a->by_value)
            return tui_usage_error("%s", "--format gc is the GC summary of the service (or --pod): "
                                         "without --event, --value or --base-*");
        return TAKEN;
    }
    if (a->has_kind) {
        if (!a->has_format)
            a->format = TUI_FORMAT_COLLAPSED;
        else if (a->format == TUI_FORMAT_TEXT || a->format == TUI_FORMAT_HTML)
            return tui_usage_error("--format %s is not for a service's profile; with --event use "
                                   "collapsed, top, json, pprof or otlp",
                                   tui_format_name(a->format));
    } else if (a->from_text || a->to_text || a->by_value) {
        return tui_usage_error("%s", "--value, --from and --to need --event KIND");
    } else if (!a->has_format) {
        a->format = TUI_FORMAT_TEXT;
    } else if (a->format != TUI_FORMAT_TEXT && a->format != TUI_FORMAT_JSON) {
        return tui_usage_error("%s", "--format collapsed and top need --event KIND (gc: the GC "
                                     "summary)");
    }
    return TAKEN;
}

/* A service on jprof-server. */
static int check_server(tui_args *a)
{
    if (a->container || a->context || a->kubeconfig || a->window_ns || a->debug_image || a->jvm_pid)
        return tui_usage_error("%s", "-c, --context, --kubeconfig, --window, --debug-image and "
                                     "--pid are for kubectl (--via kubectl)");
    if (!a->ro.ns || !*a->ro.ns || !a->ro.svc || !*a->ro.svc)
        return tui_usage_error("%s", "the remote view needs both -n NAMESPACE and -s SERVICE");
    if (a->has_format && !a->batch)
        return tui_usage_error("%s", "--format is for batch mode: add -b");
    if (!a->batch && !a->has_base && (a->has_kind || a->from_text || a->to_text || a->by_value))
        return tui_usage_error("%s",
                               "--event, --value, --from and --to are for batch mode (-b); "
                               "interactively use the Flame screen (F) and < > for the range");
    if (a->has_norm && !a->has_base)
        return tui_usage_error("%s", "--normalize is for a comparison: add --base-from, --base-to "
                                     "or --base-pod");
    if (a->has_base && !a->batch) {
        if (a->from_text || a->to_text || a->by_value)
            return tui_usage_error("%s", "with --base-*, interactively the range is -15m to now "
                                         "or --range; --from, --to and --value are for -b");
        return TAKEN;
    }
    int rc = a->has_base ? check_server_base(a) : TAKEN;
    return rc == TAKEN ? check_server_format(a) : rc;
}

int tui_args_parse(int argc, char **argv, tui_args *a)
{
    args_init(a, service_wanted(argc, argv));
    struct option lo[NOPTS + 1];
    char shorts[2 * NOPTS + 2];
    opt_table(a->service ? FOR_SERVICE : FOR_LOCAL, lo, shorts, sizeof shorts);
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        if (c == ':')
            return tui_usage_error("option '%s' needs a value", argv[optind - 1]);
        int rc = a->service ? parse_service(c, optarg, a) : parse_local(c, optarg, a);
        if (rc == NOT_MINE && a->service)
            return tui_usage_error("'%s' is not an option of the remote view (-n NS -s SVC)",
                                   argv[optind - 1]);
        if (rc == NOT_MINE)
            return tui_usage_error("unknown option '%s'", argv[optind - 1]);
        if (rc != TAKEN)
            return rc;
    }
    if (optind < argc)
        return tui_usage_error("unexpected argument '%s'", argv[optind]);
    if (!a->service)
        return check_local(a);
    kube_command_line("jprof-top", argc, argv, a->command_line, sizeof a->command_line);
    if (a->range != 1 && !a->from_text && a->batch && a->has_kind) {
        static char from[16];
        snprintf(from, sizeof from, "-%s", tui_range_names[a->range]);
        a->from_text = from;
    }
    return tui_args_kubectl(a) ? check_kubectl(a) : check_server(a);
}
