/* batch_server.h - jprof-top -b -n NS -s SVC: what the server knows about a
 * service, printed for scripts.
 *
 * Without an event: the service's status (pods and JVMs, history,
 * ingestion), then each JVM with a stored snapshot as `-b -p PID` prints
 * one; or one JSON object with "via": "server", "targets", "history",
 * "ingestion" and "jvms", each JVM in the shape of `-b -p PID --format
 * json` (batch.h). With an event (kind): the service's profile over the
 * range in the formats of the --jfr batch mode (collapsed and json from the
 * server's flame trees, top from its exact top table). Output on out,
 * one-line messages on errout; returns a TUI_EXIT_* status (exit.h). */
#ifndef JP_TUI_BATCH_SERVER_H
#define JP_TUI_BATCH_SERVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "model/diff.h"
#include "model/profile.h"
#include "tui/options.h"
#include "tui/server_client.h"

/* Reads the comparison of o (has_base) for kind o->kind into *d (a new
 * jp_diff, jp_diff_free) and labels for its two sides; prints why not on
 * errout and returns the exit status, TUI_EXIT_OK when *d is set. */
int tui_batch_server_diff_open(tui_client *r, const tui_args *o, bool threads, jp_diff **d,
                               char *cur_label, char *base_label, size_t label_len, FILE *errout);

/* r is connected (tui_client_connect) and stays the caller's. */
int tui_batch_server_run(tui_client *r, const tui_args *o, FILE *out, FILE *errout);

/* The JSON object of the snapshot view (new reference), for tests. */
json_t *tui_batch_server_json(tui_client *r, const char *pod);

#endif
