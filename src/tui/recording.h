/* load.h - jprof-top's command-line settings and reading a JFR file for them.
 *
 * Shared by batch mode and the interactive view so both read a file the same
 * way (kinds, threads, --from/--to). Ownership: tui_load_jfr() returns a heap
 * profile in *out (jp_profile_free) whenever it returns anything but a
 * failure with nothing read. Not thread-safe. */
#ifndef JP_TUI_RECORDING_H
#define JP_TUI_RECORDING_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/timeutil.h"
#include "jfr/jfr.h"
#include "model/profile.h"

/* collapsed, top and pprof are for recordings, text for a live JVM, json for
 * both. */
typedef enum tui_format {
    TUI_FORMAT_COLLAPSED = 0,
    TUI_FORMAT_TOP,
    TUI_FORMAT_JSON,
    TUI_FORMAT_TEXT,
    TUI_FORMAT_PPROF,
    TUI_FORMAT_HTML,
    TUI_FORMAT_GC /* the GC summary as text (recordings) */
} tui_format;

/* "collapsed", "top", "json", "text", "pprof", "html", "gc"; false when
 * unknown. */
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
} tui_args;

void tui_args_init(tui_args *a);

/* What reading a file ended in. */
typedef enum tui_load_status {
    TUI_LOAD_OK = 0,  /* the whole file was read */
    TUI_LOAD_PARTIAL, /* damage stopped reading; *out holds what came before */
    TUI_LOAD_FAILED   /* nothing usable (cannot open, not JFR, damaged before
                         any event); *out is NULL */
} tui_load_status;

/* Reads a->jfr_path. `kinds` is the jfr_options kind mask (0 = all kinds);
 * threads and the time window come from `a`. err gets the message on
 * PARTIAL and FAILED. */
tui_load_status tui_load_jfr(const tui_args *a, uint32_t kinds, bool threads, jp_profile **out,
                             jfr_report *rep, jp_error *err);

/* The same, also adding the endpoints and paths of io events to io (when
 * not NULL and io is among the kinds; model/iodetail.h). */
tui_load_status tui_load_jfr_io(const tui_args *a, uint32_t kinds, bool threads, jp_io_detail *io,
                                jp_profile **out, jfr_report *rep, jp_error *err);

/* The kinds with events, as "cpu, alloc, lock" or "none". */
void tui_kinds_present(const jp_profile *p, char *buf, size_t len);

/* The kind to show first: cpu when present, else the first present in
 * enum order; false when the profile has no events at all. */
bool tui_kind_default(const jp_profile *p, jp_kind *out);

/* Printed name of a frame index as found in flame nodes and top rows:
 * indexes past the profile's frames (flame.c's "no thread" marker) read
 * "[unknown thread]". */
const char *tui_frame_name(const jp_profile *p, uint32_t frame, size_t *len);

#endif
