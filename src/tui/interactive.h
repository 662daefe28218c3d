/* interactive.h - `jprof-top --jfr FILE`: read the whole recording (every
 * kind, with threads) once and explore it on the terminal. Prints its own
 * errors and returns a TUI_EXIT_* status (batch.h). */
#ifndef JP_TUI_INTERACTIVE_H
#define JP_TUI_INTERACTIVE_H

#include "tui/load.h"

int tui_interactive_run(const tui_args *a);

#endif
