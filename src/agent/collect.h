/* collect.h - the collection loop of one target (one JVM), as a state
 * machine the agent's main loop steps once per tick.
 *
 * The engine (jvm/engine.h, role COLLECTOR, session "jprof-agent"): the
 * JDK's Flight Recorder with jprof's own settings, or async-profiler when
 * opts.asprof_lib names a libasyncProfiler.so. Every window (jittered by
 * +-10 % so many JVMs do not all stop at once) the agent finishes the
 * engine's window (stop, read through /proc/PID/root, parse in-process
 * only the kinds the policy asks for, delete), queues the aggregated
 * windows for upload, and starts the next one.
 *
 * An earlier run of the agent (a crash, kill -9) may have left its session
 * running: the engine recognises it (its recording name or its library
 * copy, and the session marker it leaves in the target) and the agent
 * takes it over once per run - its data is uploaded as a window - instead
 * of calling it a conflict. Someone else's async-profiler is a `conflict`
 * and the JVM is left alone.
 *
 * In a temporary window whose pod asks for it (jprof.io/heap-histogram: D),
 * a class histogram of live objects every D, the first when the window
 * starts, queued as a document; the status message says how long the last
 * one paused the JVM. Nothing else ever takes one.
 *
 * Failures never stop other targets: each one is a status reason
 * (attach_permission, attach_timeout, attach_disabled, agent_refused,
 * exited, recording_failed, read_failed, ...) and a per-target back-off
 * (window/4 doubling up to 10 minutes).
 *
 * Ownership: agent_target is caller storage; its engine is heap and freed
 * by agent_target_cleanup. Not thread-safe: the main loop steps targets one
 * after the other (attach forks). */
#ifndef JP_AGENT_COLLECT_H
#define JP_AGENT_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/metrics.h"
#include "model/policy.h"
#include "agent/upload.h"
#include "jvm/engine.h"
#include "jvm/proc.h"
#include "jvm/procstat.h"
#include "jvm/snapshot_take.h"
#include "model/snapshot.h"
#include "wire/batch.h"

#define AGENT_SESSION "jprof-agent" /* the engine's session name */
#define AGENT_DOCS_MAX 8            /* pending documents per target */

/* What a pending document is (where the batch carries it). */
typedef enum agent_doc_kind {
    AGENT_DOC_SNAPSHOT = 0,
    AGENT_DOC_DEADLOCK,
    AGENT_DOC_HEAP, /* a class histogram (jprof.io/heap-histogram) */
} agent_doc_kind;

typedef struct agent_collect_opts {
    int64_t window_ns;             /* default 60 s */
    const char *jfr_settings;      /* JVM_ENGINE_JFR_OWN, or a .jfc name/path in the target */
    int64_t cpu_interval_ns;       /* cpu sampling, continuous targets: 50 ms */
    int64_t dense_cpu_interval_ns; /* cpu sampling in a temporary window: 10 ms */
    const char *asprof_lib;        /* --asprof-lib: host path, or NULL for JFR */
    int64_t snapshot_low_ns;       /* threads: low  -> every 60 s */
    int64_t snapshot_high_ns;      /* threads: high -> every 15 s */
    jvm_snap_source snap_source;   /* auto */
    const char *collector;         /* written into the engine's session marker */
    agent_uploader *uploader;      /* may be NULL (dry run) */
    agent_metrics *metrics;
    /* the target's /tmp must keep this much free, or no recording runs there:
     * the JDK shuts the JVM down when its Flight Recorder cannot write its
     * repository (default 64 MiB; 0 switches the check off) */
    uint64_t min_tmp_free;
    /* threads that decode a window's recording (--jfr-jobs): 1 by default,
     * so that the JVMs of the node keep their cores */
    int jfr_jobs;
} agent_collect_opts;

void agent_collect_opts_init(agent_collect_opts *o);

typedef struct agent_target {
    jvm_proc proc;
    jp_batch_target id;
    jp_policy policy;
    bool seen; /* found by the latest discovery */
    bool gone; /* the JVM went away; reported once, then removed */
    /* status of the latest step */
    const char *state;  /* "active", "waiting", "skipped", "failed", "stopped", "exited" */
    const char *reason; /* NULL when active and fine */
    char message[320];
    /* the engine's windows */
    jvm_engine *engine; /* made on the first step: fixed for the agent's run */
    int64_t window_start_ns, window_end_mono;
    int64_t seen_mono; /* when discovery first found it */
    unsigned failures;
    int64_t retry_mono; /* back-off: nothing before this */
    bool checked;       /* looked for a session of an earlier agent run */
    char jvm[128];      /* "OpenJDK 64-Bit Server VM 17.0.15+6", from VM.version */
    int jdk_major;      /* 17, from VM.version; 0 unknown */
    bool recovered;     /* took over such a session */
    uint64_t windows;   /* windows uploaded */
    /* thread snapshots */
    int64_t next_snapshot_mono;
    jp_snapshot *prev_snapshot;
    jvm_procstat prev_stat; /* process CPU at prev_snapshot, else when found (cpu_ns -1: none) */
    jp_batch_doc docs[AGENT_DOCS_MAX]; /* pending, for the next status batch */
    size_t ndocs;
    uint8_t doc_kinds[AGENT_DOCS_MAX]; /* agent_doc_kind of each */
    /* class histograms of a temporary window (jprof.io/heap-histogram) */
    int64_t next_heap_mono; /* 0: the first is due when asked for */
    int64_t heap_took_ns;   /* how long the latest one paused the JVM, 0 none yet */
    uint64_t heaps;         /* histograms taken */
} agent_target;

void agent_target_init(agent_target *t, const jvm_proc *p, int64_t now_mono);
void agent_target_cleanup(agent_target *t);

/* One step: apply the policy, start/rotate/stop the recording, take a
 * snapshot when due. Blocks for the attach calls it makes. */
void agent_target_step(agent_target *t, const agent_collect_opts *o, int64_t now_mono);

/* The JVM went away: drop the session state, status "exited". */
void agent_target_mark_gone(agent_target *t);

/* Agent shutdown: stop the recording (its data is uploaded when the
 * uploader is there) and remove the marker. */
void agent_target_shutdown(agent_target *t, const agent_collect_opts *o);

/* A window of the engine is running. */
bool agent_target_recording(const agent_target *t);

/* "jfr" or "async-profiler" once the target was profiled, else NULL. */
const char *agent_target_engine(const agent_target *t);

/* Maps an attach/recorder error to a status reason word. */
const char *agent_reason_for_error(jp_err e);

#endif
