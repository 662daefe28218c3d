/* jprof-top: option parsing and dispatch to batch mode or the interactive
 * view, on a recording (--jfr) or a live JVM (-p, or the list of JVMs). Exit statuses are
 * documented in man/jprof-top.1 (EXIT STATUS). */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "model/diff.h"
#include "model/profile.h"
#include "tui/app_common.h"
#include "tui/report_profile.h"
#include "jvm/snapshot_take.h"
#include "tui/interactive.h"
#include "tui/batch.h"
#include "tui/recording.h"
#include "tui/remote_cli.h"

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
          "       jprof-top [-b] -n NS -s SVC [--server URL] [--token-file FILE]\n"
          "                 (a service on jprof-server: jprof-top -n NS -s SVC --help)\n"
          "       jprof-top --jfr FILE [--event KIND] [--value samples|total] [--threads]\n"
          "                 [--from TIME] [--to TIME]\n"
          "       jprof-top -b --jfr FILE [--event KIND] [--value samples|total]\n"
          "                 [--format collapsed|top|json|pprof|html|gc] [--threads] [--from TIME]\n"
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
          "  -b, --batch            print to stdout instead of the interactive view\n"
          "      --jfr FILE         the JFR recording to read\n"
          "  -e, --event KIND       cpu, wall, alloc, lock, park, nativemem, live,\n"
          "                         nativelock, cputime or io (socket and file waits)\n"
          "                         (default: cpu if present, else the first kind present)\n"
          "      --value WHAT       samples (event counts, default) or total (ns or bytes)\n"
          "  -f, --format FMT       batch output: live text (default) or json (one object\n"
          "                         per line); --jfr collapsed (default), top, json or\n"
          "                         pprof (gzipped protobuf for go tool pprof), html (one\n"
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
static int parse(int argc, char **argv, tui_args *a)
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
                    "unknown format '%s' (use collapsed, top, json, pprof, html or gc)", optarg);
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
    if (a->has_tail && !a->leak)
        return tui_usage_error("%s", "--tail is the age limit of --leak: add --leak");
    if (a->diff_path && !a->jfr_path)
        return tui_usage_error("%s", "--diff OLD.jfr compares with a recording: add --jfr NEW.jfr");
    if (a->diff_path && (a->format == TUI_FORMAT_PPROF || a->format == TUI_FORMAT_GC))
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

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    if (tui_server_wanted(argc, argv))
        return tui_server_main(argc, argv);
    tui_args a;
    tui_args_init(&a);
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (a.diff_path)
        return a.batch ? tui_diff_run(&a, stdout, stderr) : tui_interactive_diff(&a);
    if (a.jfr_path)
        return a.batch ? tui_batch_run(&a, stdout, stderr) : tui_interactive_run(&a);
    if (a.batch && a.io_detail)
        return tui_batch_io_run(&a, stdout, stderr);
    if (a.batch)
        return a.has_pid ? tui_batch_pid_run(&a, stdout, stderr)
                         : tui_batch_list_run(stdout, stderr);
    return tui_interactive_live(&a);
}
