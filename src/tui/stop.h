/* stop.h - stopping jprof-top and kubectl-jprof on a signal, leaving
 * nothing in the target: the handlers only set a flag (jvm/cleanup.h says
 * what is undone), and every loop looks at the flag between steps.
 *
 * Process-wide state; install once from the program's main path. */
#ifndef JP_TUI_STOP_H
#define JP_TUI_STOP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* Installs SIGINT/SIGTERM/SIGHUP handlers (no SA_RESTART, so blocking waits
 * return early) and ignores SIGPIPE. A second signal while the first is
 * being handled removes registered files (async-signal-safe) and exits. */
void tui_stop_install(void);
/* The signal that asked to stop, or 0. */
extern volatile sig_atomic_t tui_stop_signal;

/* Sleeps up to ns, returning early when a stop was asked for. */
void tui_stop_sleep(int64_t ns);

/* The same, also ending early (and true) when done(ctx) says so (may be
 * NULL); false when a stop was asked for. */
bool tui_stop_sleep_until(int64_t ns, bool (*done)(void *ctx), void *ctx);

#endif
