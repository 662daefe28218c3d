/* remote_cli.h - jprof-top's command line for the remote view
 * (`jprof-top [-b] -n NS -s SVC ...`): its own options, batch or the
 * interactive screens. main.c hands the whole command line over when
 * tui_server_wanted() says it names a namespace or a service. */
#ifndef JP_TUI_REMOTE_CLI_H
#define JP_TUI_REMOTE_CLI_H

#include <stdbool.h>

/* True when argv has -n/--namespace or -s/--service. */
bool tui_server_wanted(int argc, char **argv);

/* Parses, runs, prints its own messages; returns the exit status. */
int tui_server_main(int argc, char **argv);

#endif
