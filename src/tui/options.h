/* options.h - jprof-top's command line: one struct of settings per way of
 * running it, the option tables both share, and their parsers.
 *
 * A parser returns -1 when the command line is fine (the struct filled),
 * else the exit status: 0 after --help or --version, TUI_EXIT_USAGE after
 * a message on stderr. The structs borrow argv's strings. */
#ifndef JP_TUI_OPTIONS_H
#define JP_TUI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/timeutil.h"
#include "model/profile.h"
#include "tui/server_client.h"

/* collapsed, top, pprof and otlp are for recordings (and, with --event, a
 * service on jprof-server), text for a live JVM, json for both. */
typedef enum tui_format {
    TUI_FORMAT_COLLAPSED = 0,
    TUI_FORMAT_TOP,
    TUI_FORMAT_JSON,
    TUI_FORMAT_TEXT,
    TUI_FORMAT_PPROF,
    TUI_FORMAT_HTML,
    TUI_FORMAT_GC,  /* the GC summary as text (recordings) */
    TUI_FORMAT_OTLP /* OpenTelemetry profiles (protobuf) */
} tui_format;

/* "collapsed", "top", "json", "text", "pprof", "html", "gc", "otlp"; false
 * when unknown. */
bool tui_format_parse(const char *s, tui_format *out);
const char *tui_format_name(tui_format f);

typedef struct tui_args {
    const char *jfr_path;  /* --jfr FILE */
    const char *diff_path; /* --diff OLD.jfr: compare with this baseline */
    int diff_norm;         /* --normalize: a jp_diff_norm (default per sample) */
    bool batch;            /* -b */
    bool threads;          /* --threads */
    bool by_value;         /* --value total */
    bool has_kind;         /* --event KIND given */
    jp_kind kind;
    bool has_format; /* --format given */
    tui_format format;
    bool has_from, has_to;
    jp_timespec_arg from, to;
    const char *states; /* --state S[,S] (checked by jfr_states_parse) */
    bool leak;          /* --leak */
    bool has_tail;      /* --tail F given */
    double tail;        /* --tail (default 0.1) */
    int jobs;           /* --jobs (0 = every online CPU) */
    bool io_detail;     /* --io-detail: endpoints and paths of the io kind (local only) */
    /* live JVM (-p PID, or the list of local JVMs without --jfr) */
    bool has_pid;
    int pid;
    int64_t interval_ns; /* -d (0 = default 2 s) */
    long count;          /* --count (batch samples; 0 = 1) */
    int snap_source;     /* --snapshot: a jvm_snap_source */
    int64_t window_ns;   /* --window (0 = default 30 s) */
    const char *asprof;  /* --asprof PATH */
    /* class histograms (they pause the JVM: only when asked) */
    bool heap;             /* --heap: batch prints histograms; interactive opens the Heap screen */
    bool heap_all;         /* --all: every object (-all), no full GC first */
    int64_t heap_every_ns; /* --heap-every: interactive, a histogram this often */
} tui_args;

void tui_args_init(tui_args *a);

/* Parses a command line of recordings and local JVMs (--jfr, -p, the
 * list). */
int tui_args_parse(int argc, char **argv, tui_args *a);

/* getopt values of the long options without a short letter that both front
 * ends accept; main.c numbers its own others from 1000, remote_cli.c from
 * 2000. */
enum { TUI_OPT_VALUE = 900, TUI_OPT_FROM, TUI_OPT_TO };

/* The entries of struct option that mean the same in both front ends: batch
 * mode, the output format, the profile kind and value, the time range, the
 * refresh interval and help. Spelled as a list so each table stays one array
 * for getopt_long. */
// clang-format off
#define TUI_COMMON_OPTIONS                                  \
    {"batch", no_argument, NULL, 'b'},                      \
    {"format", required_argument, NULL, 'f'},               \
    {"event", required_argument, NULL, 'e'},                \
    {"value", required_argument, NULL, TUI_OPT_VALUE},      \
    {"from", required_argument, NULL, TUI_OPT_FROM},        \
    {"to", required_argument, NULL, TUI_OPT_TO},            \
    {"delay", required_argument, NULL, 'd'},                \
    {"help", no_argument, NULL, 'h'}
// clang-format on

/* "jprof-top: MESSAGE" and the pointer to --help on stderr; returns
 * TUI_EXIT_USAGE. */
int tui_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- a service: jprof-server (-n NS -s SVC) or kubectl (--via kubectl) ---- */

typedef struct tui_server_batch_opts {
    tui_format format;
    bool has_kind;
    jp_kind kind;
    bool by_value;
    const char *from, *to; /* server time syntax; NULL: the last 15 minutes, now */
    const char *pod;       /* NULL: every pod */
    /* --base-from, --base-to, --base-pod: compare with this baseline
     * through /api/v1/flamegraph/diff (model/diff.h, as --diff does) */
    bool has_base;
    tui_client_base base;
    int norm; /* a jp_diff_norm (--normalize) */
} tui_server_batch_opts;

typedef enum via { VIA_AUTO = 0, VIA_SERVER, VIA_KUBECTL } via;

typedef struct tui_server_args {
    via via;
    const char *container, *context, *kubeconfig;
    const char *debug_image; /* kubectl: the debug route's image */
    int jvm_pid;             /* kubectl: the JVM in the container; 0 the probe picks */
    char command_line[1024]; /* as typed, for "this works:" in kubectl messages */
    int64_t window_ns;
    tui_client_opts ro;
    tui_server_batch_opts bo;
    bool batch, has_format, has_norm;
    int range;
    int64_t interval_ns;
    int screen; /* index into "TLDFSG" */
} tui_server_args;

/* True when the command line names a namespace or a service. */
bool tui_server_wanted(int argc, char **argv);

/* Parses such a command line. */
int tui_server_args_parse(int argc, char **argv, tui_server_args *a);

/* kubectl when asked, or when no server is configured. */
bool tui_server_args_kubectl(const tui_server_args *a);

#endif
