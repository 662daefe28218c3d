/* report_target.h - what one target's snapshot says, as lines of text
 * and as JSON, whatever its source.
 *
 * The Locks, Deadlocks, Status and stack screens and the batch text report
 * show the same words, so they are produced once here as styled lines: the
 * screens draw them with scrolling (screen_text.c), batch mode and
 * kubectl-jprof print them.
 *
 * Ownership: tui_lines is caller storage (tui_lines_init/cleanup) owning its
 * strings. The tui_target is only read. Not thread-safe. */
#ifndef JP_TUI_REPORT_TARGET_H
#define JP_TUI_REPORT_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "tui/canvas.h"
#include "tui/lines.h"
#include "tui/options.h"
#include "tui/target.h"

/* "1m02s", "3h04m", "2d03h". */
void tui_format_uptime(int64_t ns, char *buf, size_t len);

/* Target, JVM, snapshot source and time, thread states, process CPU, heap,
 * jprof's cost, and the helper fallback reason when there is one. */
void tui_report_header(const tui_target *l, tui_lines *ls);
/* What the busy ranking rests on, then the busiest `max` threads: CPU%
 * (freshest evidence), total CPU, state, evidence, top frame, and a line
 * saying the evidence and its age. */
void tui_report_busy(const tui_target *l, size_t max, tui_lines *ls);
/* Contended locks (threads BLOCKED on a monitor or parked on an owned lock)
 * with owner chains and "blocks N threads", then one line per pool of idle
 * threads; expanded also lists the idle threads' names. tui_report_locks is
 * the collapsed form. */
void tui_report_locks(const tui_target *l, tui_lines *ls);
void tui_report_locks_idle(const tui_target *l, bool expanded, tui_lines *ls);
/* Each deadlock as a chain: per thread the lock it waits for (and where),
 * the lock it holds (and where it took it), and its top frames. */
void tui_report_deadlocks(const tui_target *l, tui_lines *ls);
/* One thread (index into l->cur): state, lock, CPU and its whole stack with
 * the locks held at each frame. */
void tui_report_stack(const tui_target *l, size_t thread, tui_lines *ls);

/* The Status screen: where the data comes from (the source and the
 * target) and what the source itself says (source.h status), then the
 * header's numbers, the snapshots and the profile window with their cost. */
void tui_report_status(const tui_target *l, tui_lines *ls);

/* The sections of the text report of one sample. */
enum { TUI_REPORT_BUSY = 1, TUI_REPORT_LOCKS = 2, TUI_REPORT_DEADLOCKS = 4, TUI_REPORT_ALL = 7 };

/* The text report of one sample: the header, then each section asked for
 * under its title (BUSY THREADS (top 20), LOCKS, DEADLOCKS), an empty line
 * before each: what `jprof-top -b -p PID` and `kubectl jprof threads` print. */
void tui_report_target_lines(const tui_target *l, unsigned sections, tui_lines *ls);

/* One sample of l as the text report (header, busy threads, locks,
 * deadlocks; n > 0 puts an empty line first) or as one JSON line. */
jp_err tui_report_target_write(const tui_target *l, tui_format format, long n, FILE *out);

/* One sample as JSON: jp_snapshot_json plus "process" (cpu_pct, heap),
 * "jprof" (cost_ms, snapshot_ms) and "fallback" (why the helper was not
 * used, or null). New reference. */
json_t *tui_report_target_json(const tui_target *l);

#endif
