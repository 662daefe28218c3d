/* snapshot.h - one thread snapshot of a JVM, whatever produced it.
 *
 * Both snapshot sources (the helper jar's ThreadMXBean JSON and the parsed
 * `jcmd Thread.print -l` text) fill this one model, so every analysis and
 * every screen works the same on either. Unknown numbers are -1.
 *
 * Lock identity: within one snapshot a lock is its `id` — the object address
 * from Thread.print, or System.identityHashCode from the helper. Ids from
 * different sources are not comparable; ids of the same object in two
 * snapshots of the same source usually are (addresses move with GC).
 *
 * Ownership: jp_snapshot_new() returns a heap object freed by
 * jp_snapshot_free(). All strings live in the snapshot's arena and are valid
 * until the free. jp_thread pointers are invalidated by the next
 * jp_snapshot_add_thread(); keep indices. Not thread-safe. */
#ifndef JP_MODEL_SNAPSHOT_H
#define JP_MODEL_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Caps that keep a hostile or broken input from eating memory. */
#define JP_SNAPSHOT_MAX_THREADS 100000
#define JP_SNAPSHOT_MAX_FRAMES 4096 /* per thread; deeper stacks are cut */
#define JP_SNAPSHOT_MAX_LOCKS 4096  /* held locks per thread */

typedef enum jp_thread_state {
    JP_TSTATE_UNKNOWN = 0,
    JP_TSTATE_NEW,
    JP_TSTATE_RUNNABLE,
    JP_TSTATE_BLOCKED,
    JP_TSTATE_WAITING,
    JP_TSTATE_TIMED_WAITING,
    JP_TSTATE_TERMINATED,
    JP_TSTATE_COUNT
} jp_thread_state;

/* "RUNNABLE", "BLOCKED", ... ("UNKNOWN" for VM-internal threads). */
const char *jp_thread_state_name(jp_thread_state s);
/* Parses a java.lang.Thread.State name (len bytes); UNKNOWN when unknown. */
jp_thread_state jp_thread_state_parse(const char *s, size_t len);

typedef enum jp_lock_kind {
    JP_LOCK_MONITOR = 0,     /* a synchronized object */
    JP_LOCK_SYNCHRONIZER = 1 /* an AbstractOwnableSynchronizer (ReentrantLock, RRWL) or other
                                park blocker */
} jp_lock_kind;

typedef struct jp_lock_ref {
    uint64_t id;            /* identity within the snapshot (0 = none) */
    const char *class_name; /* e.g. "java.util.concurrent.locks.ReentrantLock$NonfairSync" */
    jp_lock_kind kind;
    int32_t frame; /* stack depth (0 = top) where it was taken or waited; -1 unknown */
} jp_lock_ref;

/* How a thread waits for its lock. */
typedef enum jp_wait_kind {
    JP_WAIT_NONE = 0,
    JP_WAIT_ENTER,  /* BLOCKED entering a monitor (or re-locking after wait) */
    JP_WAIT_OBJECT, /* in Object.wait() on the monitor: released it, waits for notify */
    JP_WAIT_PARK    /* parked on a synchronizer or other blocker (LockSupport.park) */
} jp_wait_kind;

const char *jp_wait_kind_name(jp_wait_kind k);

typedef struct jp_snap_frame {
    const char *class_name; /* dotted; "" when unknown */
    const char *method;
    const char *file; /* NULL when unknown */
    int32_t line;     /* -1 unknown, -2 native method */
} jp_snap_frame;

/* "pkg.Class.method(File.java:12)", "(Native Method)", "(Unknown Source)". */
size_t jp_snap_frame_format(const jp_snap_frame *f, char *buf, size_t len);

/* "live.Deadlocks$Account@ff708868". */
size_t jp_lock_ref_format(const jp_lock_ref *l, char *buf, size_t len);

typedef struct jp_thread {
    int64_t id;        /* Java thread id; -1 for VM-internal threads (GC, compiler) */
    int64_t native_id; /* OS thread id (nid); -1 unknown */
    const char *name;
    bool daemon;
    bool vm_internal; /* a JVM thread without a Java object */
    jp_thread_state state;
    const char *state_detail; /* "sleeping", "parking", "on object monitor"; NULL if none */
    int64_t cpu_ns;           /* total thread CPU time; -1 unknown */
    int64_t elapsed_ns;       /* time since the thread started; -1 unknown */
    int64_t blocked_count;    /* times BLOCKED on a monitor; -1 unknown */
    int64_t waited_count;     /* times WAITING/TIMED_WAITING; -1 unknown */
    int64_t blocked_time_ns;  /* -1 unless contention monitoring is on */
    int64_t waited_time_ns;

    jp_snap_frame *frames; /* top of stack first */
    size_t nframes;
    bool frames_truncated;

    jp_lock_ref *held; /* monitors and ownable synchronizers it holds */
    size_t nheld;

    jp_wait_kind wait_kind;
    jp_lock_ref wait_lock; /* valid when wait_kind != NONE */
    int64_t wait_owner_id; /* Java id of the lock's owner; -1 none/unknown */
    const char *wait_owner_name;

    size_t frames_alloc, held_alloc;
} jp_thread;

/* A deadlock the JVM itself reported (thread indices, in its order). */
typedef struct jp_jvm_deadlock {
    size_t *threads;
    size_t count;
} jp_jvm_deadlock;

typedef struct jp_snapshot {
    const char *source; /* "helper" or "thread-print" */
    int64_t taken_ns;   /* wall clock at capture, ns since the epoch */
    int64_t uptime_ns;  /* JVM uptime at capture; -1 unknown */
    jp_thread *threads;
    size_t count;
    jp_jvm_deadlock *jvm_deadlocks;
    size_t njvm_deadlocks;
    bool truncated; /* a cap cut threads or frames */
    /* the whole process, when the source read it (jvm/procstat.h): the CPU
     * time of all its threads (ns), the percent of one core since the
     * source's previous snapshot, the heap's used and committed bytes */
    int64_t proc_cpu_ns, heap_used, heap_committed; /* -1 unknown */
    double proc_cpu_pct;                            /* -1 unknown */

    size_t threads_alloc, deadlocks_alloc;
    struct jp_snap_arena *arena;
} jp_snapshot;

jp_snapshot *jp_snapshot_new(const char *source);
void jp_snapshot_free(jp_snapshot *s);

/* Copies len bytes into the snapshot's arena (NUL-terminated). */
const char *jp_snapshot_strndup(jp_snapshot *s, const char *p, size_t len);
const char *jp_snapshot_strdup(jp_snapshot *s, const char *p);

/* Appends a thread with every number -1 and no frames; NULL when the thread
 * cap is reached (s->truncated is then set). */
jp_thread *jp_snapshot_add_thread(jp_snapshot *s);
/* Appends to the thread's stack / held locks; NULL past the caps. */
jp_snap_frame *jp_thread_add_frame(jp_snapshot *s, jp_thread *t);
jp_lock_ref *jp_thread_add_held(jp_snapshot *s, jp_thread *t);
/* Records a JVM-reported deadlock over thread indices (copied). */
void jp_snapshot_add_jvm_deadlock(jp_snapshot *s, const size_t *threads, size_t count);

/* Index of the thread with this Java id / exact name; -1 when absent. */
long jp_snapshot_find_id(const jp_snapshot *s, int64_t id);
long jp_snapshot_find_name(const jp_snapshot *s, const char *name);

/* Index of the thread holding lock id (a monitor it is not Object.wait()ing
 * on, or a synchronizer); -1 when nobody does. */
long jp_snapshot_lock_owner(const jp_snapshot *s, uint64_t lock_id);

/* Fills wait_owner_id/name from the held locks where the source left them
 * unknown. Call once after filling the snapshot. */
void jp_snapshot_resolve_owners(jp_snapshot *s);

/* Whether the frame is JDK code (java., javax., jdk., sun., com.sun.). */
bool jp_snap_frame_is_jdk(const jp_snap_frame *f);

/* Index of the first frame at or below depth `from` that is not JDK code
 * (java., javax., jdk., sun., com.sun.): where application code waits inside
 * LockSupport.park or Object.wait. Returns `from` when there is none. */
int32_t jp_thread_app_frame(const jp_thread *t, int32_t from);

/* Threads per state (VM-internal threads count as UNKNOWN). */
void jp_snapshot_count_states(const jp_snapshot *s, size_t counts[JP_TSTATE_COUNT]);

#endif
