/* recording.h - reading a JFR recording (or the two of a comparison) as
 * the command line asks: kinds, threads, --from/--to, --state, --leak.
 *
 * Shared by batch mode and the interactive view so both read a file the same
 * way. Ownership: tui_load_jfr() returns a heap
 * profile in *out (jp_profile_free) whenever it returns anything but a
 * failure with nothing read. Not thread-safe. */
#ifndef JP_TUI_RECORDING_H
#define JP_TUI_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/error.h"
#include "base/timeutil.h"
#include "jfr/jfr.h"
#include "model/diff.h"
#include "model/profile.h"
#include "tui/options.h"

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

/* Prints the reader's warnings ("jprof-top: warning: ...") on errout. */
void tui_print_warnings(FILE *errout, const jfr_report *rep);

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

#endif
