/* batch.h - jprof-top -b on running JVMs, whatever their source: the
 * list of local JVMs, samples of a target as a text report or JSON lines
 * (`-b -p PID`, each pod through kubectl: one round over a service's pods
 * that kubectl-jprof's threads/locks/deadlocks use too), class histograms
 * (`-b -p PID --heap`, `kubectl jprof heap`), and the I/O waits of a pid.
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

/* The next snapshot of l: after one interval (wait; ended early when the
 * source's connection ends: the refresh says why) or at once. *stopped,
 * and nothing taken, when a signal asked to stop during the wait. */
jp_err tui_batch_snapshot(tui_target *l, bool wait, bool *stopped, jp_error *err);

/* One round over the pods of a service through kubectl (the batch output
 * of jprof-top and kubectl-jprof alike). */
typedef struct tui_pod_round {
    const kube_opts *ko;
    const char *container;       /* -c, or NULL: the first that runs a JVM */
    const tui_target_opts *opts; /* interval_ns: between the snapshots */
    int snapshots;               /* taken of each pod (at least 1) */
    /* NULL, or false to leave a pod out (it says why) */
    bool (*want)(void *ctx, const jp_pod *p);
    /* the pod's target after its snapshots, or NULL and why not */
    void (*each)(void *ctx, const jp_pod *p, tui_target *l, const jp_error *err);
    void *ctx;
} tui_pod_round;

/* For each pod until a signal asks to stop: opens it (kubectl exec and
 * jprof-probe), takes the snapshots, hands the answer to each(), and closes
 * it (bye: the probe stops and removes itself). A pod that fails does not
 * stop the others. */
void tui_batch_pods(const tui_pod_round *r, const jp_pod_list *pods);

/* -b through kubectl: every running pod of pods, each JVM as `-b -p PID`
 * prints one (two snapshots one interval apart, for CPU%); JSON: one
 * object with "via": "kubectl" and jvms[] in that shape, as the server's
 * batch output has. */
int tui_batch_kubectl(const tui_args *a, const kube_opts *ko, jp_pod_list *pods,
                      const tui_target_opts *o);

#endif
