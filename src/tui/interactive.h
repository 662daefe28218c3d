/* interactive.h - `jprof-top --jfr FILE`: read the whole recording (every
 * kind, with threads) once and explore it on the terminal. Prints its own
 * errors and returns a TUI_EXIT_* status (batch.h). Live JVMs: below. */
#ifndef JP_TUI_INTERACTIVE_H
#define JP_TUI_INTERACTIVE_H

#include "tui/recording.h"

int tui_interactive_run(const tui_args *a);

/* `jprof-top --jfr NEW --diff OLD`: the flame view of the comparison
 * (widths from NEW, bars coloured by change, the table by change, key m
 * for the normalisation). Returns a TUI_EXIT_* status. */
int tui_interactive_diff(const tui_args *a);

/* `jprof-top -p PID` (or no argument: the list of local JVMs first): the
 * live screens until q or a signal; then stops the recording and removes
 * jprof's files from the target. Returns a TUI_EXIT_* status (live.h). */
int tui_interactive_live(const tui_args *a);

/* Runs view v (taken over: freed here, which closes its target) until q or
 * a signal, for any source; the signal handlers are installed. `where`
 * names the target's place in the closing message ("the target", "the
 * pod"). Returns a TUI_EXIT_* status. */
struct tui_screens;
int tui_interactive_live_view(struct tui_screens *v, const char *where);

#endif
