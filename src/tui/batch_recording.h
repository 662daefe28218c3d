/* batch_recording.h - jprof-top -b on recordings: one file in a format of
 * man/jprof-top.1 ("OUTPUT FORMATS"), or the comparison of two. Output on
 * out, messages on errout; each returns a TUI_EXIT_* status (exit.h). */
#ifndef JP_TUI_BATCH_RECORDING_H
#define JP_TUI_BATCH_RECORDING_H

#include <stdio.h>

#include "tui/recording.h"

/* Runs `jprof-top -b --jfr FILE`. */
int tui_batch_run(const tui_args *a, FILE *out, FILE *errout);

/* Runs `jprof-top -b --jfr NEW --diff OLD`: collapsed "stack OLD NEW" lines
 * (the old side normalised, as difffolded tools take them), a top table of
 * changes, a JSON tree with both sides, or the HTML page. */
int tui_diff_run(const tui_args *a, FILE *out, FILE *errout);

#endif
