/* remote_report.h - what jprof-server says about a service, as lines of
 * text: the screens of the remote view draw them with scrolling, batch mode
 * prints them (the same words either way, like live_report.h for a local
 * JVM).
 *
 * Every function appends to ls and reads the tui_remote's latest answers
 * (borrowed); an answer not read yet gives a "not read yet" line. */
#ifndef JP_TUI_REMOTE_REPORT_H
#define JP_TUI_REMOTE_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "tui/live_report.h"
#include "tui/remote.h"

/* Service, server, pods, kinds, last seen, cost of the last refresh. */
void tui_rreport_header(const tui_remote *r, tui_lines *ls);
/* Per target: its latest snapshot's age and thread states, then up to
 * max threads (0 = all), busiest first: CPU%, CPU time, state, name, top
 * frame, and with frames > 1 that many frames of each stack under it. */
void tui_rreport_threads(const tui_remote *r, size_t max, size_t frames, tui_lines *ls);
/* Per target: locks with owner, "blocks N threads", owner chain and
 * waiters; the owners blocking most. */
void tui_rreport_locks(const tui_remote *r, tui_lines *ls);
/* The newest deadlock events per target, each cycle as a chain with the
 * lock each thread waits for and holds, and its top frames. */
void tui_rreport_deadlocks(const tui_remote *r, tui_lines *ls);
/* Pods and JVMs with state and reason, the status history, and the
 * ingestion health of each collector. */
void tui_rreport_status(const tui_remote *r, tui_lines *ls);

/* One target of /api/v1/targets as a table row, and the table's header
 * (the Status screen and the list of targets); true when its state is not
 * "active". */
void tui_rreport_target_head(char *buf, size_t len);
bool tui_rreport_target_row(const json_t *target, char *buf, size_t len);

/* "12s", "3m04s", "2h05m" for an age in seconds (negative: "?"). */
void tui_format_age(double seconds, char *buf, size_t len);
/* "Class@id" of a lock given as text or as {"id","class"}. */
void tui_lock_text(const json_t *lock, char *buf, size_t len);

#endif
