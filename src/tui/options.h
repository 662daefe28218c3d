/* options.h - jprof-top's command line: one struct of settings and one
 * parser for every way of running it - a recording (--jfr), a JVM on this
 * machine (-p, or the list), a service on jprof-server or its pods through
 * kubectl (-n NS -s SVC).
 *
 * The parser returns -1 when the command line is fine (the struct filled),
 * else the exit status: 0 after --help or --version, TUI_EXIT_USAGE after a
 * message on stderr that says what to do. The struct borrows argv's
 * strings. */
#ifndef JP_TUI_OPTIONS_H
#define JP_TUI_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/timeutil.h"
#include "model/profile.h"
#include "tui/server_client.h"

/* collapsed, top, pprof, otlp, html and gc are for profiles (a recording;
 * with --event, a service on jprof-server), text for a target's snapshot,
 * json for both. */
typedef enum tui_format {
    TUI_FORMAT_COLLAPSED = 0,
    TUI_FORMAT_TOP,
    TUI_FORMAT_JSON,
    TUI_FORMAT_TEXT,
    TUI_FORMAT_PPROF,
    TUI_FORMAT_HTML,
    TUI_FORMAT_GC,  /* the GC summary as text */
    TUI_FORMAT_OTLP /* OpenTelemetry profiles (protobuf) */
} tui_format;

/* "collapsed", "top", "json", "text", "pprof", "html", "gc", "otlp"; false
 * when unknown. */
bool tui_format_parse(const char *s, tui_format *out);
const char *tui_format_name(tui_format f);

/* How a service is read: --via, or by default the server when one is
 * configured, else kubectl. */
typedef enum tui_via { TUI_VIA_AUTO = 0, TUI_VIA_SERVER, TUI_VIA_KUBECTL } tui_via;

// NOLINTNEXTLINE(clang-analyzer-optin.performance.Padding): one a run, grouped by meaning
typedef struct tui_args {
    /* every command line */
    bool batch;      /* -b */
    bool has_format; /* --format given */
    tui_format format;
    bool has_kind; /* --event KIND given */
    jp_kind kind;
    bool by_value;       /* --value total */
    int64_t interval_ns; /* -d (0 = the default of the source) */
    int64_t window_ns;   /* --window (0 = default 30 s) */
    bool has_norm;       /* --normalize given */
    int diff_norm;       /* --normalize: a jp_diff_norm (default per sample) */
    /* a recording */
    const char *jfr_path;  /* --jfr FILE */
    const char *diff_path; /* --diff OLD.jfr: compare with this baseline */
    bool threads;          /* --threads */
    bool has_from, has_to;
    jp_timespec_arg from, to;
    const char *states; /* --state S[,S] (checked by jfr_states_parse) */
    bool leak;          /* --leak */
    bool has_tail;      /* --tail F given */
    double tail;        /* --tail (default 0.1) */
    int jobs;           /* --jobs (0 = every online CPU) */
    int jfr_read;       /* JPROF_JFR_READ: how a recording is read (jfr.h; default auto) */
    bool io_detail;     /* --io-detail: endpoints and paths of the io kind (local only) */
    /* a JVM on this machine (-p PID, or the list of local JVMs) */
    bool has_pid;
    int pid;
    long count;         /* --count (batch samples; 0 = 1) */
    int snap_source;    /* --snapshot: a jvm_snap_source */
    const char *asprof; /* --asprof PATH */
    /* class histograms (they pause the JVM: only when asked) */
    bool heap;             /* --heap: batch prints histograms; interactive opens the Heap screen */
    bool heap_all;         /* --all: every object (-all), no full GC first */
    int64_t heap_every_ns; /* --heap-every: interactive, a histogram this often */
    /* a service (-n NS -s SVC) on jprof-server, or its pods through kubectl */
    bool service;          /* the command line names a namespace or a service */
    tui_client_opts ro;    /* the server and the token, the namespace and the service */
    tui_via via;           /* --via */
    const char *pod;       /* --pod (NULL: every pod) */
    const char *from_text; /* --from, --to in the server's syntax; NULL: the last */
    const char *to_text;   /*   15 minutes (or --range), now */
    bool has_base;         /* --base-from, --base-to, --base-pod: compare with this */
    tui_client_base base;  /*   baseline through /api/v1/flamegraph/diff */
    int range;             /* --range: an index of tui_range_names (default 15m) */
    int screen;            /* --screen: an index into "TLDFSGH" */
    const char *container; /* -c: kubectl's container */
    const char *context;   /* --context, --kubeconfig: for every kubectl call */
    const char *kubeconfig;
    const char *debug_image; /* kubectl: the debug route's image */
    int jvm_pid;             /* --pid: kubectl's JVM in the container; 0 the probe picks */
    char command_line[1024]; /* as typed, for "this works:" in kubectl messages */
} tui_args;

/* Parses argv into a (initialised here). */
int tui_args_parse(int argc, char **argv, tui_args *a);

/* Through kubectl: when asked (--via kubectl), or when no server is
 * configured. */
bool tui_args_kubectl(const tui_args *a);

/* "jprof-top: MESSAGE" and the pointer to --help on stderr; returns
 * TUI_EXIT_USAGE. */
int tui_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
