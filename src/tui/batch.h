/* batch.h - jprof-top -b on running JVMs, whatever their source: the
 * list of local JVMs, samples of a target as a text report or JSON lines
 * (`-b -p PID`, each pod through kubectl), and the I/O waits of a pid.
 *
 * Each writes the output on `out`, one-line messages on `errout`, and
 * returns a TUI_EXIT_* status (exit.h). Signals stop between samples and
 * leave nothing in the target (stop.h). Recordings: batch_recording.h; a
 * service on jprof-server: batch_server.h. */
#ifndef JP_TUI_BATCH_H
#define JP_TUI_BATCH_H

#include <jansson.h>
#include <stdio.h>

#include "kube/kube.h"
#include "tui/options.h"
#include "tui/recording.h"
#include "tui/target.h"

/* The live options of a command line. */
void tui_target_opts_from_args(const tui_args *a, tui_target_opts *o);

/* "PID USER UPTIME MAIN-CLASS" lines of the JVMs this user may attach to. */
int tui_batch_list_run(FILE *out, FILE *errout);

/* -b -p PID [--count N] [-d S] [--format text|json]. */
int tui_batch_pid_run(const tui_args *a, FILE *out, FILE *errout);

/* Prints count samples (at least 1) of target l, one interval apart, as
 * text or JSON lines, then frees l (whatever its source) and runs the
 * pending cleanups. The caller installed the signal handlers. */
int tui_batch_samples(tui_target *l, long count, tui_format format, FILE *out, FILE *errout);

/* One sample of l as the text report (header, busy threads, locks,
 * deadlocks; n > 0 puts an empty line first) or as one JSON line. */
jp_err tui_report_target_write(const tui_target *l, tui_format format, long n, FILE *out);

/* One sample as JSON: jp_snapshot_json plus "process" (cpu_pct, heap),
 * "jprof" (cost_ms, snapshot_ms) and "fallback" (why the helper was not
 * used, or null). New reference. */
json_t *tui_report_target_json(const tui_target *l);

/* -b -p PID --heap [--all] [--count N] [-d S] [--format text|json]. */
int tui_batch_heap_run(const tui_args *a, FILE *out, FILE *errout);

/* Prints count class histograms (at least 1) of target l, `every` apart,
 * as text (the Heap screen's lines) or JSON lines ({"via", "target",
 * "histogram", "growth", "histograms", "pause_note"}), then frees l and
 * runs the pending cleanups. Each histogram pauses the JVM. */
int tui_batch_heap(tui_target *l, long count, int64_t every, tui_format format, FILE *out,
                   FILE *errout);

/* Runs `jprof-top -b -p PID --io-detail`: records the JVM's I/O waits for
 * -d SECONDS (default 10) and prints their endpoints and files (text or
 * json); returns a TUI_EXIT_* status. */
int tui_batch_io_run(const tui_args *a, FILE *out, FILE *errout);

/* -b through kubectl: every running pod of pods, each JVM as `-b -p PID`
 * prints one (two snapshots one interval apart, for CPU%); JSON: one
 * object with "via": "kubectl" and jvms[] in that shape, as the server's
 * batch output has. */
int tui_batch_kubectl(const tui_args *a, const kube_opts *ko, jp_pod_list *pods,
                      const tui_target_opts *o);

#endif
