/* interactive.h - `jprof-top --jfr FILE`: read the whole recording (every
 * kind, with threads) once and explore it on the terminal. Prints its own
 * errors and returns a TUI_EXIT_* status (batch.h). Live JVMs: below. */
#ifndef JP_TUI_INTERACTIVE_H
#define JP_TUI_INTERACTIVE_H

#include <stdbool.h>

#include "kube/kube.h"
#include "tui/options.h"
#include "tui/recording.h"
#include "tui/server_client.h"
#include "tui/target.h"
#include "tui/terminal.h"

int tui_interactive_run(const tui_args *a);

/* `jprof-top --jfr NEW --diff OLD`: the flame view of the comparison
 * (widths from NEW, bars coloured by change, the table by change, key m
 * for the normalisation). Returns a TUI_EXIT_* status. */
int tui_interactive_diff(const tui_args *a);

/* `jprof-top -p PID` (or no argument: the list of local JVMs first): the
 * live screens until q or a signal; then stops the recording and removes
 * jprof's files from the target. Returns a TUI_EXIT_* status (exit.h). */
int tui_interactive_live(const tui_args *a);

/* Runs view v (taken over: freed here, which closes its target) until q or
 * a signal, for any source; the signal handlers are installed. `where`
 * names the target's place in the closing message ("the target", "the
 * pod"). Returns a TUI_EXIT_* status. */
struct tui_screens;
int tui_interactive_live_view(struct tui_screens *v, const char *where);

/* -n NS -s SVC on jprof-server: the screens every source has, on the
 * service's newest snapshot (or --pod's), o listing the service's pods and
 * JVMs; r (connected) is taken over. */
int tui_interactive_server(tui_client *r, const tui_args *a);

/* --base-*: the differential flame graph of the range against the
 * baseline, the same view as --jfr NEW --diff OLD; r stays the caller's. */
int tui_interactive_server_diff(tui_client *r, const tui_args *a);

/* Through kubectl: the screens of the pod (several: the list first, which
 * takes pods over). */
int tui_interactive_kubectl(const tui_args *a, const kube_opts *ko, jp_pod_list *pods,
                            const tui_target_opts *o);

/* True when stdin and stdout are terminals; else says to use -b. */
bool tui_have_terminal(void);

/* Runs the app until it quits or tui_stop_signal is set (the caller
 * installs the handlers); a failure is printed. Returns TUI_EXIT_OK or
 * TUI_EXIT_ERROR. */
int tui_app_run(const tui_app *app);

#endif
