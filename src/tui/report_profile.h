/* report_profile.h - a profile as text, JSON, HTML, pprof or OTLP on a stream,
 * no curses: the formats of man/jprof-top.1 ("OUTPUT FORMATS"), written for
 * a recording (--jfr), a pod's window (kubectl jprof flame) and the server's
 * trees alike.
 *
 * The writers borrow the profile and return JP_ERR_IO when the stream
 * fails. */
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
#include "wire/batch.h"

/* One line per distinct printed stack, "root;...;leaf VALUE", sorted by
 * byte order of the stack text; stacks printing the same text are merged.
 * With threads the thread name is the root frame. */
jp_err tui_write_collapsed(FILE *out, const jp_profile *p, jp_kind k, bool threads, bool by_value,
                           jp_error *err);

/* The self/total table over the whole profile, after a '#' header line. */
jp_err tui_write_top(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k, bool threads,
                     bool by_value, jp_error *err);

/* The top table's '#' header line and column titles, for any source: a
 * recording's profile (tui_write_top) or jprof-server's table. from and to
 * are left out when NULL, lost when 0. */
typedef struct tui_top_head {
    jp_kind kind;
    bool by_value;
    uint64_t events, samples, value, lost;
    const char *from, *to;
    bool partial;
} tui_top_head;
void tui_write_top_head(FILE *out, const tui_top_head *h);

/* One row of the top table: self and total (samples, or the kind's value
 * when by_value) as shares of all, then the frame's name (len bytes). */
void tui_write_top_row(FILE *out, jp_kind k, bool by_value, uint64_t all, uint64_t self,
                       uint64_t total, const char *name, size_t len);

/* {"meta": {...}, "tree": {...}} followed by a newline. */
/* The JSON document of --format json (meta, tree, busy), new reference. */
json_t *tui_profile_doc(const jp_profile *p, const jfr_report *rep, jp_kind k, bool threads,
                        bool by_value);
jp_err tui_write_json(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k,
                      bool threads, bool by_value, jp_error *err);

/* The GC summary, sparkline and top allocators as text (tui/report_gc.h). */
jp_err tui_write_gc(FILE *out, const jp_profile *p, jp_error *err);

/* A gzipped pprof Profile (wire/pprof.h); refuses a terminal. */
/* One offline HTML file: flame graph and top table (wire/html.h). */
jp_err tui_write_html(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k,
                      bool threads, bool by_value, const char *title, jp_error *err);
jp_err tui_write_pprof(FILE *out, const jp_profile *p, jp_kind k, bool threads, jp_error *err);
/* OpenTelemetry profiles of kind k (wire/otlp_encode.h), the target's
 * identity as its resource when target is not NULL; refuses a terminal. */
jp_err tui_write_otlp(FILE *out, const jp_profile *p, jp_kind k, bool threads,
                      const jp_batch_target *target, jp_error *err);

/* Flushes out; JP_ERR_IO when any write to it failed. */
jp_err tui_stream_check(FILE *out, jp_error *err);

/* Writes doc (taken over) as one line of compact JSON (flags: more
 * json_dumpf flags, JSON_ENSURE_ASCII), then flushes: every JSON line of
 * jprof-top and kubectl-jprof goes out through here. */
jp_err tui_write_json_line(FILE *out, json_t *doc, size_t flags, jp_error *err);

/* Encodes doc (taken over) into the offline page with this title and
 * writes it (wire/html.h). */
jp_err tui_write_html_doc(FILE *out, json_t *doc, const char *title, jp_error *err);

/* The collapsed lines of a comparison: "stack OLD NEW", the old side
 * normalised and rounded (the profile is d->prof). */
jp_err tui_write_collapsed_diff(FILE *out, const jp_diff *d, jp_error *err);

#endif
