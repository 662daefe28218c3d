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
    size_t *waiters; /* thread indices waiting for this lock: contending ones first, by Java id */
    size_t nwaiters;
    size_t ncontending;  /* waiters[0..ncontending) contend (jp_thread_contends) */
    bool contended;      /* ncontending > 0 */
    size_t *owner_chain; /* owner, then whom the owner waits for, ... (cycle-safe) */
    size_t nchain;
    bool chain_cycles;   /* the chain came back to a thread: a deadlock */
    size_t owner_blocks; /* threads waiting, directly or transitively, on the owner */
} jp_lock_group;

typedef struct jp_lock_group_list {
    jp_lock_group *items; /* contended first (items[0..ncontended)), then by waiters, owned
                             before unowned */
    size_t count;
    size_t ncontended;         /* locks with at least one contending waiter */
    size_t contending_threads; /* threads contending, over all locks */
} jp_lock_group_list;

/* Whether thread i contends for a lock: BLOCKED entering a monitor, or
 * parked on a lock that has an owner (ReentrantLock, a read-write lock, any
 * owned synchronizer). A thread in Object.wait, parked on a Condition or a
 * queue with no owner, or sleeping is idle, not contending: decided from the
 * state, the lock's owner and the wait kind, never from names. */
bool jp_thread_contends(const jp_snapshot *s, size_t i);

/* Every lock some thread waits for, grouped. Screens, batch text, JSON and
 * the server count only the contended ones (ncontended, contending_threads);
 * the rest are idle waiting (see jp_analyze_idle). */
void jp_analyze_locks(const jp_snapshot *s, jp_lock_group_list *out);
void jp_lock_group_list_cleanup(jp_lock_group_list *l);

/* Threads that wait, directly or through a chain of owners, on thread i
 * ("blocks N threads"); computed for every thread, array of s->count. */
size_t *jp_analyze_blocks_counts(const jp_snapshot *s);

/* ---- idle threads, by pool ---- */

/* Threads waiting for work, not for an owner (WAITING or TIMED_WAITING and
 * not contending): pool workers in a queue's take/poll, Object.wait on an
 * object nobody holds, Condition.await, Thread.sleep. Grouped by pool (the
 * name with its trailing number replaced by "*": "http-nio-8080-exec-*";
 * only for the summary, never to decide) and where they wait. */
typedef struct jp_idle_pool {
    char *pool;      /* "http-nio-8080-exec-*" (heap) */
    char *where;     /* "TaskQueue.poll": class without package, method (heap) */
    long frame;      /* depth of `where` in the first thread's stack; -1 none */
    size_t *threads; /* indices, by Java id */
    size_t count;
    jp_thread_state state; /* of the first thread */
} jp_idle_pool;

typedef struct jp_idle_list {
    jp_idle_pool *items; /* most threads first, then by pool name */
    size_t count;
    size_t nthreads; /* idle threads over all pools */
} jp_idle_list;

void jp_analyze_idle(const jp_snapshot *s, jp_idle_list *out);
void jp_idle_list_cleanup(jp_idle_list *l);

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
