/* report_service.h - what jprof-server says about a service as a whole,
 * as lines of text: the Status screen of a server target draws them, batch
 * mode prints them. What one JVM's snapshot says is report_target.h's, for
 * every source.
 *
 * Every function appends to ls and reads the tui_client's latest answers
 * (borrowed); an answer not read yet gives a "not read yet" line. */
#ifndef JP_TUI_REPORT_SERVICE_H
#define JP_TUI_REPORT_SERVICE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "tui/report_target.h"
#include "tui/server_client.h"

/* Service, server, pods, kinds, last seen, cost of the last refresh. */
void tui_report_service_header(const tui_client *r, tui_lines *ls);
/* Pods and JVMs with state and reason, the status history, and the
 * ingestion health of each collector. */
void tui_report_service_status(const tui_client *r, tui_lines *ls);

/* One target of /api/v1/targets as a table row, and the table's header
 * (the Status screen and the list of targets); true when its state is not
 * "active". */
void tui_report_service_target_head(char *buf, size_t len);
bool tui_report_service_target_row(const json_t *target, char *buf, size_t len);

/* "12s", "3m04s", "2h05m" for an age in seconds (negative: "?"). */
void tui_format_age(double seconds, char *buf, size_t len);

#endif
