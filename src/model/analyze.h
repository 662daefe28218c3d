/* analyze.h - what a thread snapshot means: deadlocks, who blocks whom, who
 * burns CPU.
 *
 * Every analysis works from the snapshot alone (our own wait-for graph), so
 * the Thread.print fallback finds the same answers as the helper jar. The
 * JVM's own deadlock report, when present, only confirms (jvm_confirmed).
 *
 * Ownership: results are caller storage filled by jp_analyze_*() and freed by
 * the matching *_cleanup(). Thread numbers are indices into the snapshot's
 * threads[]; lock class names are borrowed from the snapshot, so a result
 * must not outlive the snapshot(s) it was computed from. Not thread-safe. */
#ifndef JP_MODEL_ANALYZE_H
#define JP_MODEL_ANALYZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/snapshot.h"

/* ---- deadlocks ---- */

/* One thread in a cycle: it holds `holds` (which the previous member waits
 * for) and waits for `waits_for` (held by the next member, cyclically). */
typedef struct jp_deadlock_member {
    size_t thread;
    jp_lock_ref waits_for; /* .frame = depth of the first application frame
                              at or below where it waits (see jp_thread_app_frame) */
    jp_lock_ref holds;     /* .frame = stack depth where it took it; -1 unknown
                              (ownable synchronizers carry no frame) */
} jp_deadlock_member;

typedef struct jp_deadlock {
    jp_deadlock_member *members; /* in wait order: member i waits for member i+1 */
    size_t count;
    bool jvm_confirmed; /* the JVM reported the same set of threads */
    bool mixed;         /* the cycle has both monitors and synchronizers */
} jp_deadlock;

typedef struct jp_deadlock_list {
    jp_deadlock *items;
    size_t count;
} jp_deadlock_list;

/* Finds every cycle of threads each waiting (BLOCKED on a monitor, or parked
 * on an owned synchronizer) for a lock the next holds. Threads in Object.wait()
 * are not waiting for an owner and never form a cycle. Each cycle starts at
 * its member with the smallest Java id; cycles are sorted by that id. */
void jp_analyze_deadlocks(const jp_snapshot *s, jp_deadlock_list *out);
void jp_deadlock_list_cleanup(jp_deadlock_list *l);

/* ---- blocked and waiting threads, by lock ---- */

typedef struct jp_lock_group {
    jp_lock_ref lock;
    long owner;      /* thread index of the owner; -1 none (Object.wait, a Condition) */
    size_t *waiters; /* thread indices waiting for this lock, by Java id */
    size_t nwaiters;
    size_t *owner_chain; /* owner, then whom the owner waits for, ... (cycle-safe) */
    size_t nchain;
    bool chain_cycles;   /* the chain came back to a thread: a deadlock */
    size_t owner_blocks; /* threads waiting, directly or transitively, on the owner */
} jp_lock_group;

typedef struct jp_lock_group_list {
    jp_lock_group *items; /* most waiters first, then owned before unowned */
    size_t count;
} jp_lock_group_list;

void jp_analyze_locks(const jp_snapshot *s, jp_lock_group_list *out);
void jp_lock_group_list_cleanup(jp_lock_group_list *l);

/* Threads that wait, directly or through a chain of owners, on thread i
 * ("blocks N threads"); computed for every thread, array of s->count. */
size_t *jp_analyze_blocks_counts(const jp_snapshot *s);

/* ---- busy threads ---- */

typedef enum jp_cpu_confidence {
    JP_CPU_EXACT = 0,   /* per-thread CPU time from the JVM, delta of two snapshots */
    JP_CPU_SAMPLED = 1, /* no CPU time: share of snapshots in which it was RUNNABLE */
    JP_CPU_PROFILE = 2, /* only a profile says so (set by callers mixing in JFR data) */
    JP_CPU_UNKNOWN = 3  /* only one snapshot and no CPU time */
} jp_cpu_confidence;

const char *jp_cpu_confidence_name(jp_cpu_confidence c); /* "exact", "sampled", ... */

typedef struct jp_busy_thread {
    size_t thread;        /* index in the current snapshot */
    int64_t cpu_delta_ns; /* -1 unknown */
    double cpu_pct;       /* % of one core over the interval; -1 unknown */
    jp_cpu_confidence confidence;
} jp_busy_thread;

typedef struct jp_busy_list {
    jp_busy_thread *items; /* busiest first (cpu_pct, then total CPU, then name) */
    size_t count;
    int64_t interval_ns; /* wall time between the snapshots; 0 with no previous */
} jp_busy_list;

/* Ranks the threads of cur. prev (same JVM, same source, may be NULL) gives
 * the interval: a thread is matched by Java id (native id for VM-internal
 * threads) and name. Without prev, cpu_pct is -1 and confidence UNKNOWN
 * unless the thread's state can be sampled. */
void jp_analyze_busy(const jp_snapshot *prev, const jp_snapshot *cur, jp_busy_list *out);
void jp_busy_list_cleanup(jp_busy_list *l);

#endif
