/* gc.h - garbage collection evidence of a profile window and its summary.
 *
 * The JFR reader fills a jp_gc_log with what the JDK recorder says about
 * collections (jdk.GarbageCollection), their stop-the-world pauses
 * (jdk.GCPhasePause), the heap used around each one (jdk.GCHeapSummary) and
 * what threads allocated (jdk.ThreadAllocationStatistics). The log holds at
 * most JP_GC_MAX_EVENTS entries of each sort and counts the rest as dropped.
 * jp_gc_summary_compute reduces it to the numbers an SRE asks first: how
 * often and how long the JVM stopped, the worst stop and why, how full the
 * heap was and how fast the application allocates.
 *
 * What the GC evidence cannot tell: what stays on the heap and what
 * grows. JP_GC_CANNOT_TELL, on every GC output, points at what can (the
 * Heap screen's class histograms, the old kind's live objects) and at a
 * heap dump only for what those cannot tell either: who holds an object.
 *
 * Ownership: jp_gc_log is caller storage (_init/_cleanup); names are copied
 * into fixed fields (cut at their size). Not thread-safe. */
#ifndef JP_MODEL_GC_H
#define JP_MODEL_GC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JP_GC_MAX_EVENTS (1u << 20) /* entries kept of each sort */
#define JP_GC_NAME_MAX 32
#define JP_GC_CAUSE_MAX 64

/* The sentence every GC output carries, in three parts (a narrow screen
 * gives each its own lines: where to look first must not be cut off). */
#define JP_GC_TELL_HEAP                                                                            \
    "What stays on the heap and what grows: the Heap screen (H, or --heap: class histograms and "  \
    "their growth, each one pausing the JVM)"
#define JP_GC_TELL_OLD "and the old kind (where the live sampled objects were allocated);"
#define JP_GC_TELL_DUMP                                                                            \
    "a heap dump (jcmd PID GC.heap_dump FILE) only for who holds them (paths to GC roots)"
#define JP_GC_CANNOT_TELL JP_GC_TELL_HEAP " " JP_GC_TELL_OLD " " JP_GC_TELL_DUMP

/* One collection (jdk.GarbageCollection). Empty names are unknown. */
typedef struct jp_gc_collection {
    int64_t start_ns, duration_ns;
    int64_t sum_pauses_ns, longest_pause_ns; /* -1 when not recorded */
    uint64_t gc_id;
    char name[JP_GC_NAME_MAX];   /* collector: "G1New", "G1Old", "DefNew", "ZGC Minor", ... */
    char cause[JP_GC_CAUSE_MAX]; /* "G1 Evacuation Pause", "Allocation Failure", ... */
} jp_gc_collection;

/* One stop-the-world pause (jdk.GCPhasePause). */
typedef struct jp_gc_pause {
    int64_t start_ns, duration_ns;
    uint64_t gc_id;
    char name[JP_GC_NAME_MAX]; /* "GC Pause", "Pause Remark", ... */
} jp_gc_pause;

typedef enum jp_gc_when { JP_GC_WHEN_UNKNOWN = 0, JP_GC_BEFORE, JP_GC_AFTER } jp_gc_when;

/* Heap used at one side of a collection (jdk.GCHeapSummary). */
typedef struct jp_gc_heap {
    int64_t time_ns;
    uint64_t gc_id;
    uint64_t used; /* bytes */
    uint8_t when;  /* jp_gc_when */
} jp_gc_heap;

/* Bytes a thread allocated since it started, at one time
 * (jdk.ThreadAllocationStatistics). `thread` is the recording's thread key,
 * stable within one recording. */
typedef struct jp_gc_talloc {
    int64_t time_ns;
    uint64_t thread;
    uint64_t allocated;
} jp_gc_talloc;

typedef struct jp_gc_log {
    jp_gc_collection *gcs;
    size_t ngcs, gcs_cap;
    jp_gc_pause *pauses;
    size_t npauses, pauses_cap;
    jp_gc_heap *heaps;
    size_t nheaps, heaps_cap;
    jp_gc_talloc *tallocs;
    size_t ntallocs, tallocs_cap;
    uint64_t dropped; /* entries over JP_GC_MAX_EVENTS */
} jp_gc_log;

void jp_gc_log_init(jp_gc_log *l);
void jp_gc_log_cleanup(jp_gc_log *l);
/* Appends one entry (copied). Past JP_GC_MAX_EVENTS of its sort it is
 * counted in l->dropped instead. */
void jp_gc_log_collection(jp_gc_log *l, const jp_gc_collection *c);
void jp_gc_log_pause(jp_gc_log *l, const jp_gc_pause *p);
void jp_gc_log_heap(jp_gc_log *l, const jp_gc_heap *h);
void jp_gc_log_talloc(jp_gc_log *l, const jp_gc_talloc *t);
/* Appends every entry of src to dst. */
void jp_gc_log_append(jp_gc_log *dst, const jp_gc_log *src);
/* True when the log holds any entry. */
bool jp_gc_log_any(const jp_gc_log *l);
/* Bytes of heap the log holds. */
size_t jp_gc_log_memory(const jp_gc_log *l);

/* Where the allocation rate comes from. Heap growth between collections
 * comes first: it counts every thread, while thread statistics miss the
 * threads that start or end between two of them (a recording dumped at
 * exit has no last statistic of the main thread). */
typedef enum jp_gc_alloc_source {
    JP_GC_ALLOC_NONE = 0, /* unknown */
    JP_GC_ALLOC_THREADS,  /* jdk.ThreadAllocationStatistics deltas of threads seen twice */
    JP_GC_ALLOC_HEAP,     /* heap growth between collections (GCHeapSummary) */
    JP_GC_ALLOC_SAMPLES,  /* allocation profile total (sampled estimate) */
} jp_gc_alloc_source;

const char *jp_gc_alloc_source_name(jp_gc_alloc_source s);

typedef struct jp_gc_summary {
    int64_t from_ns, to_ns; /* the window summarised (0, 0: everything) */
    uint64_t collections;   /* jdk.GarbageCollection events */
    uint64_t pauses;        /* stop-the-world pauses */
    bool pauses_from_gcs;   /* no GCPhasePause: pauses from GarbageCollection */
    int64_t pause_total_ns; /* the sums and percentiles; 0 when no pause */
    int64_t pause_p50_ns, pause_p99_ns, pause_max_ns;
    /* The longest pause; names empty when unknown. */
    bool has_longest;
    int64_t longest_start_ns;
    uint64_t longest_gc_id;
    char longest_phase[JP_GC_NAME_MAX];
    char longest_collector[JP_GC_NAME_MAX];
    char longest_cause[JP_GC_CAUSE_MAX];
    /* Heap used around the last collection with both sides recorded, and
     * the lowest / highest heap after a collection in the window. */
    bool has_heap;
    uint64_t heap_gcs; /* collections with both sides */
    uint64_t heap_before, heap_after;
    uint64_t heap_after_min, heap_after_max;
    /* Allocation rate, bytes per second. */
    jp_gc_alloc_source alloc_source;
    double alloc_rate;
    uint64_t alloc_bytes; /* over alloc_span_ns */
    int64_t alloc_span_ns;
    uint64_t dropped; /* the log's dropped entries (the summary is then partial) */
} jp_gc_summary;

/* Summarises the entries of l starting in [from_ns, to_ns) (both 0: all).
 * sample_bytes / sample_span_ns, the allocation profile's total and the
 * time it covers, are the last resort for the allocation rate (0, 0: none).
 * Never fails: what the log lacks stays unknown in s. */
void jp_gc_summary_compute(const jp_gc_log *l, int64_t from_ns, int64_t to_ns,
                           uint64_t sample_bytes, int64_t sample_span_ns, jp_gc_summary *s);

/* Sums pause ns into n equal buckets of [from_ns, to_ns) by pause start
 * (out[i] = 0 for none). Returns the largest bucket. */
int64_t jp_gc_pause_buckets(const jp_gc_log *l, int64_t from_ns, int64_t to_ns, int64_t *out,
                            size_t n);

/* ---- per-window records and their merge (the server's GC data) ----
 *
 * The agent sends, and the stores keep, one jp_gc_window per target and
 * profile window: its summary (from_ns/to_ns: the window) plus the pause
 * durations, so that windows merge into the summary of a longer range.
 * Merged exactly: collections, pauses, pause total and max, the longest
 * pause and its names, heap collections, the last before/after and the
 * min/max after, dropped. p50/p99 are exact while every window kept all its
 * pauses (at most JP_GC_WINDOW_PAUSES); a window with more keeps pauses at
 * evenly spaced ranks and the merged percentiles are then approximate. The
 * allocation rate is the sum of the windows' bytes over the sum of their
 * spans (growth across a window boundary is not seen). */
#define JP_GC_WINDOW_PAUSES 512

typedef struct jp_gc_window {
    jp_gc_summary s;                       /* s.from_ns, s.to_ns: the window */
    uint32_t npause;                       /* pause_ns entries: == s.pauses when all were kept */
    int64_t pause_ns[JP_GC_WINDOW_PAUSES]; /* ascending */
} jp_gc_window;

/* The record of [from_ns, to_ns) of a log (see jp_gc_summary_compute). */
void jp_gc_window_compute(const jp_gc_log *l, int64_t from_ns, int64_t to_ns, uint64_t sample_bytes,
                          int64_t sample_span_ns, jp_gc_window *w);

/* The merge of n windows (any order, any targets) as the summary of
 * [from_ns, to_ns). *exact (may be NULL) is false when p50/p99 are
 * estimated (some window kept a subset of its pauses), *covered_ns (may be
 * NULL) gets the summed length of the windows (the time the pauses were
 * measured over, for a paused share). */
void jp_gc_merge(const jp_gc_window *ws, size_t n, int64_t from_ns, int64_t to_ns,
                 jp_gc_summary *out, bool *exact, int64_t *covered_ns);

/* The same merge one window at a time, in memory bounded by the pauses
 * the windows kept (not by their number): _init, _add each window (copied
 * from, not kept), _finish (frees; the merger may be initialised again). */
typedef struct jp_gc_wpause {
    int64_t ns;
    double weight; /* the pauses it stands for */
} jp_gc_wpause;

typedef struct jp_gc_merger {
    jp_gc_summary o, first;
    size_t windows;
    bool exact, gcs_only;
    int64_t covered, heap_t, alloc_best, longest_ns;
    jp_gc_wpause *v;
    size_t nv, cap;
    double weight;
} jp_gc_merger;

void jp_gc_merger_init(jp_gc_merger *m, int64_t from_ns, int64_t to_ns);
void jp_gc_merger_add(jp_gc_merger *m, const jp_gc_window *w);
void jp_gc_merger_finish(jp_gc_merger *m, jp_gc_summary *out, bool *exact, int64_t *covered_ns);

/* One column of pauses over time. */
typedef struct jp_gc_point {
    int64_t start_ns, end_ns;
    uint64_t pauses;
    int64_t pause_total_ns, pause_max_ns;
} jp_gc_point;

/* Sums the windows into n equal points of [from_ns, to_ns) by the middle of
 * each window (clamped to the range). */
void jp_gc_window_points(const jp_gc_window *ws, size_t nw, int64_t from_ns, int64_t to_ns,
                         jp_gc_point *out, size_t n);
/* The same one window at a time: _init the n columns, then _add each
 * window's summary. */
void jp_gc_points_init(jp_gc_point *out, size_t n, int64_t from_ns, int64_t to_ns);
void jp_gc_points_add(jp_gc_point *out, size_t n, const jp_gc_summary *s);

/* The inverse of jp_gc_alloc_source_name (false for an unknown name). */
bool jp_gc_alloc_source_parse(const char *s, jp_gc_alloc_source *out);

#endif
