/* jprof-top: option parsing and dispatch to batch mode or the interactive
 * view. Exit statuses are documented in man/jprof-top.1 (EXIT STATUS). */
#include <getopt.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "model/profile.h"
#include "tui/batch.h"
#include "tui/interactive.h"
#include "tui/load.h"

enum {
    OPT_JFR = 1000,
    OPT_VALUE,
    OPT_THREADS,
    OPT_FROM,
    OPT_TO,
};

static const struct option long_options[] = {
    {"batch", no_argument, NULL, 'b'},
    {"jfr", required_argument, NULL, OPT_JFR},
    {"event", required_argument, NULL, 'e'},
    {"value", required_argument, NULL, OPT_VALUE},
    {"format", required_argument, NULL, 'f'},
    {"threads", no_argument, NULL, OPT_THREADS},
    {"from", required_argument, NULL, OPT_FROM},
    {"to", required_argument, NULL, OPT_TO},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    /* Live sources, reserved for a later version. */
    {"pid", required_argument, NULL, 'p'},
    {"namespace", required_argument, NULL, 'n'},
    {"service", required_argument, NULL, 's'},
    {"duration", required_argument, NULL, 'd'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *out)
{
    fputs("Usage: jprof-top --jfr FILE [--event KIND] [--value samples|total] [--threads]\n"
          "                 [--from TIME] [--to TIME]\n"
          "       jprof-top -b --jfr FILE [--event KIND] [--value samples|total]\n"
          "                 [--format collapsed|top|json] [--threads] [--from TIME] [--to TIME]\n"
          "\n"
          "Explore a Java Flight Recorder file: an interactive flame graph with zoom,\n"
          "search, callers and a top table, or (-b) text and JSON for scripts.\n"
          "\n"
          "  -b, --batch            print to stdout instead of the interactive view\n"
          "      --jfr FILE         the JFR recording to read\n"
          "  -e, --event KIND       cpu, wall, alloc, lock or park\n"
          "                         (default: cpu if present, else the first kind present)\n"
          "      --value WHAT       samples (event counts, default) or total (ns or bytes)\n"
          "  -f, --format FMT       batch output: collapsed (default), top or json\n"
          "      --threads          thread names as the root frames\n"
          "      --from TIME        only events at or after TIME\n"
          "      --to TIME          only events before TIME\n"
          "                         TIME: RFC 3339, @EPOCH, +D or D from the start, -D from\n"
          "                         the end (D like 30s, 2m, 250ms)\n"
          "  -h, --help             this help\n"
          "  -V, --version          the version\n"
          "\n"
          "Exit status: 0 ok, 1 error, 2 usage error, 3 damaged file (partial output).\n"
          "See jprof-top(1).\n",
          out);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("jprof-top: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'jprof-top --help' for more information.\n", stderr);
    return TUI_EXIT_USAGE;
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
                return usage_error("unknown kind '%s' for --event "
                                   "(use cpu, wall, alloc, lock or park)",
                                   optarg);
            a->has_kind = true;
            break;
        case OPT_VALUE:
            if (strcmp(optarg, "samples") && strcmp(optarg, "total"))
                return usage_error("--value must be samples or total, not '%s'", optarg);
            a->by_value = !strcmp(optarg, "total");
            break;
        case 'f':
            if (!tui_format_parse(optarg, &a->format))
                return usage_error("unknown format '%s' (use collapsed, top or json)", optarg);
            a->has_format = true;
            break;
        case OPT_THREADS:
            a->threads = true;
            break;
        case OPT_FROM:
            rc = parse_time(optarg, &a->from, &a->has_from, "--from");
            break;
        case OPT_TO:
            rc = parse_time(optarg, &a->to, &a->has_to, "--to");
            break;
        case 'h':
            usage(stdout);
            return TUI_EXIT_OK;
        case 'V':
            printf("jprof-top (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
            return TUI_EXIT_OK;
        case 'p':
        case 'n':
        case 's':
        case 'd':
            return usage_error("%s: live sources (-p, -n, -s, -d) are not available yet; "
                               "this version reads recordings: --jfr FILE",
                               argv[optind - 1]);
        case ':':
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (rc != TUI_EXIT_OK)
            return rc;
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (!a->jfr_path)
        return usage_error("%s", "no recording given: use --jfr FILE");
    if (a->has_format && !a->batch)
        return usage_error("%s", "--format is for batch mode: add -b");
    return -1;
}

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    tui_args a;
    tui_args_init(&a);
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    return a.batch ? tui_batch_run(&a, stdout, stderr) : tui_interactive_run(&a);
}
