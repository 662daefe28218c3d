/* target.h - the model every source feeds: one target (a JVM) on
 * jprof-top's screens and in its batch output, whatever its source
 * (source.h: a pid on this machine, a pod through kubectl, a target of a
 * service on jprof-server).
 *
 * One tui_target holds the current and previous thread snapshots with
 * their analyses (model/analyze.h, model/busy.h), the header numbers the
 * source knows, and the Flame screen's last profile window. The op calls
 * here run the source's operations and recompute what depends on them:
 * every refresh keeps the previous snapshot for CPU deltas and reruns the
 * analyses; every window read ranks the busy threads again.
 * Every undo a source needs (stop a recording, delete files in the target)
 * is registered with jvm/cleanup.h while it exists, so a signal handler that
 * only sets a flag (stop.h) plus jvm_cleanup_run_all() in the main loop
 * leave the target as it was.
 *
 * Ownership: a source's open function returns a heap object freed by
 * tui_target_free(), which stops the profile first. Snapshots and analyses
 * belong to the tui_target and are replaced by the next refresh. Not
 * thread-safe (see jvm/attach.h). */
#ifndef JP_TUI_TARGET_H
#define JP_TUI_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "jfr/jfr.h"
#include "jvm/attach.h"
#include "jvm/engine.h"
#include "jvm/proc.h"
#include "jvm/procstat.h"
#include "jvm/snapshot_take.h"
#include "model/analyze.h"
#include "model/busy.h"
#include "model/profile.h"
#include "model/snapshot.h"
#include "tui/report_heap.h"
#include "tui/source.h"

struct tui_target_opts {
    pid_t pid;
    int64_t interval_ns; /* -d: between refreshes (default 2 s) */
    int64_t window_ns;   /* --window: the live profile's span (default 30 s) */
    jvm_snap_source source;
    const char *asprof;    /* --asprof PATH/libasyncProfiler.so, or NULL: JFR */
    bool io_detail;        /* --io-detail: read endpoints and paths of io events */
    bool heap_all;         /* --all: class histograms of every object (-all, no full GC) */
    int64_t heap_every_ns; /* --heap-every: a class histogram this often; 0: on request */
};

void tui_target_opts_init(tui_target_opts *o);

/* The Flame screen's recording. */
typedef struct tui_target_prof {
    bool running;
    jvm_engine *engine;       /* made at the first start, freed by tui_target_prof_stop */
    bool cputime;             /* JFR on JDK 25+: jdk.CPUTimeSample too (kind cputime) */
    bool live_tail;           /* the last read ended in the chunk being written (no damage) */
    int64_t started_mono;     /* when the profile started */
    jp_profile *profile;      /* the last window read, or NULL */
    jp_profile *prev_profile; /* the one before, freed at the next dump */
    /* --io-detail: the endpoints and paths of profile / prev_profile
     * (heap, NULL without); io_next is filled by the source's prof_read */
    jp_io_detail *io, *prev_io, *io_next;
    jfr_report rep;
    int64_t dumped_mono;
    double cost_ms; /* last dump: attach + read + parse */
    jp_error error; /* the last failure (code JP_OK when none) */
} tui_target_prof;

/* One target on the screens, whatever its source (source.h). The proc,
 * attach, snap and most of prof are the pid source's; another source keeps
 * its state in src and fills proc's pid, main_class and user for the
 * header. */
struct tui_target {
    const tui_source_ops *ops;
    void *src;       /* the source's own state (ops->close frees it) */
    char where[192]; /* where the target is, for a source other than pid
                      * ("pod shop/checkout-7d9f container app"); "" */
    tui_target_opts opts;
    jvm_proc proc;
    jvm_attach_opts attach;
    jvm_snap_opts snap;
    char jvm_version[128]; /* "JDK 17.0.16" from VM.version; "" unknown */
    char jvm_vm[128];      /* "OpenJDK 64-Bit Server VM ..." first line */
    char heap[96];         /* "used 24M of 64M", "" unknown */
    jp_error fallback;     /* why auto mode uses thread-print (JP_OK: it does not) */
    /* a target without thread snapshots whose profiles another profiler
     * pushes to jprof-server (OTLP, Pyroscope): it opens on the Flame screen,
     * and the title names that source ("pushed (otlp)") */
    bool profiles_only;
    char source_label[48];
    jp_snapshot *prev, *cur;
    jp_busy_list busy;
    jp_cpu_evidence cpu;  /* per-thread CPU of the live profile's window (Flame) */
    jp_busy_summary rank; /* busy threads: the snapshots' deltas with cpu, ranked */
    jp_lock_group_list locks;
    jp_deadlock_list deadlocks;
    size_t *blocks; /* per thread of cur: threads it blocks */
    size_t states[JP_TSTATE_COUNT];
    double proc_cpu_pct; /* process CPU since the last refresh, % of one core; -1 */
    jvm_procstat stat;   /* the pid source's last reading of the process */
    double cost_ms;      /* jprof's own time in the last refresh (attach + parse) */
    double snapshot_ms;  /* of which the thread snapshot */
    int64_t refreshed_mono;
    unsigned nrefresh;
    tui_target_prof prof;
    tui_heap histograms; /* the Heap screen: class histograms and their growth */
};

/* A target of source ops with state src (taken over: ops->close frees it);
 * the source fills the header fields it knows. Never NULL. */
tui_target *tui_target_new(const tui_target_opts *o, const tui_source_ops *ops, void *src);

void tui_target_free(tui_target *l);

/* Takes a snapshot and recomputes everything. On failure the previous data
 * stays. */
jp_err tui_target_refresh(tui_target *l, jp_error *err);

/* Takes over snapshot s as the current one (the current becomes the
 * previous when both come from one source) and runs the analyses; what
 * tui_target_refresh does after attaching, exposed for tests. */
void tui_target_accept(tui_target *l, jp_snapshot *s);

/* Ranks the busy threads again (l->rank) from the snapshots and the last
 * profile window read; tui_target_accept and tui_target_prof_dump call it. */
void tui_target_rank(tui_target *l);

/* A class histogram into l->histograms through the source (with opts.heap_all);
 * JP_ERR_UNSUPPORTED when the source has none. The failure is also kept in
 * l->histograms.error for the screen. */
jp_err tui_target_heap(tui_target *l, jp_error *err);

/* What a screen of threads shows before the first snapshot: that it is
 * coming, or that a target of pushed profiles has none. */
const char *tui_target_no_snapshot(const tui_target *l);

/* Starts the live profile (no-op when running). */
jp_err tui_target_prof_start(tui_target *l, jp_error *err);
/* Reads the current window into l->prof.profile. */
jp_err tui_target_prof_dump(tui_target *l, jp_error *err);
/* Stops it and removes its files; safe to call when not running. */
void tui_target_prof_stop(tui_target *l);
/* The Flame title's label: engine and the span shown ("async-profiler
 * live, last 30s" or "JFR window 30s"). */
void tui_target_prof_label(const tui_target *l, char *buf, size_t len);

/* Frees a heap jp_io_detail of a window (NULL: nothing). */
void tui_target_io_free(jp_io_detail *d);

#endif
