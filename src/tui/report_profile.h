/* batch.h - jprof-top -b: profiles as text or JSON on a stream, no curses.
 *
 * The writers are the formats of man/jprof-top.1 ("OUTPUT FORMATS"); they
 * borrow the profile and return JP_ERR_IO when the stream fails.
 * tui_batch_run() is the whole batch command: it reads the file, writes the
 * output and the error messages, and returns the exit status. */
#ifndef JP_TUI_REPORT_PROFILE_H
#define JP_TUI_REPORT_PROFILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/error.h"
#include "jfr/jfr.h"
#include "model/diff.h"
#include "model/profile.h"
#include "tui/recording.h"

/* Exit statuses of jprof-top (man page, EXIT STATUS). */
#define TUI_EXIT_OK 0
#define TUI_EXIT_ERROR 1
#define TUI_EXIT_USAGE 2
#define TUI_EXIT_PARTIAL 3

/* One line per distinct printed stack, "root;...;leaf VALUE", sorted by
 * byte order of the stack text; stacks printing the same text are merged.
 * With threads the thread name is the root frame. */
jp_err tui_write_collapsed(FILE *out, const jp_profile *p, jp_kind k, bool threads, bool by_value,
                           jp_error *err);

/* The self/total table over the whole profile, after a '#' header line. */
jp_err tui_write_top(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k, bool threads,
                     bool by_value, jp_error *err);

/* {"meta": {...}, "tree": {...}} followed by a newline. */
/* The JSON document of --format json (meta, tree, busy), new reference. */
json_t *tui_profile_doc(const jp_profile *p, const jfr_report *rep, jp_kind k, bool threads,
                        bool by_value);
jp_err tui_write_json(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k,
                      bool threads, bool by_value, jp_error *err);

/* The GC summary, sparkline and top allocators as text (tui/gc_report.h). */
jp_err tui_write_gc(FILE *out, const jp_profile *p, jp_error *err);

/* A gzipped pprof Profile (wire/pprof.h); refuses a terminal. */
/* One offline HTML file: flame graph and top table (wire/html.h). */
jp_err tui_write_html(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k,
                      bool threads, bool by_value, const char *title, jp_error *err);
jp_err tui_write_pprof(FILE *out, const jp_profile *p, jp_kind k, bool threads, jp_error *err);

/* Both recordings of --diff read and compared (kind: --event, else the new
 * one's default), for the batch output and the interactive view alike. */
typedef struct tui_diff_sides {
    jp_profile *old, *new_;
    jfr_report rep; /* of the new recording */
    jp_diff *d;
} tui_diff_sides;

/* Fills s (threads: read thread names too); prints why not on errout and
 * returns TUI_EXIT_ERROR with s empty. */
int tui_diff_open(const tui_args *a, bool threads, tui_diff_sides *s, FILE *errout);
void tui_diff_sides_cleanup(tui_diff_sides *s);

/* Writes a comparison as collapsed "stack OLD NEW" lines, the top table of
 * changes (TUI_FORMAT_TOP) or the JSON diff tree (TUI_FORMAT_JSON); the
 * labels name the two sides (files, or ranges of jprof-server). */
jp_err tui_diff_write(FILE *out, jp_diff *d, tui_format f, const char *old_label,
                      const char *new_label, jp_error *err);

/* Runs `jprof-top -b --jfr NEW --diff OLD`: collapsed "stack OLD NEW" lines
 * (the old side normalised, as difffolded tools take them), a top table of
 * changes, or a JSON tree with both sides; returns a TUI_EXIT_* status. */
int tui_diff_run(const tui_args *a, FILE *out, FILE *errout);

/* Runs `jprof-top -b`: output on out, messages on errout; returns a
 * TUI_EXIT_* status. */
int tui_batch_run(const tui_args *a, FILE *out, FILE *errout);

#endif
