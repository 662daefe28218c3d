/* probe_dev.h - jprof-probe's developer commands (list, raw, parse,
 * snapshot, busy, json, jfr, jfr-check, engine), run from a shell on the
 * node. */
#ifndef JP_PROBE_PROBE_DEV_H
#define JP_PROBE_PROBE_DEV_H

#include <stdbool.h>

/* argv[1] is the command; returns the exit status. */
int probe_dev_main(int argc, char **argv);
/* Prints the commands to stderr; returns 3. */
int probe_dev_usage(void);
/* True when name is one of the commands. */
bool probe_dev_is_command(const char *name);

#endif
