/* heap.h - a heap histogram (what is on the Java heap now, by class) and the
 * growth between two of them (what keeps growing).
 *
 * A histogram is what HotSpot prints for GC.class_histogram (src/jvm/
 * histogram.h parses it): per class the instances and the bytes they take,
 * biggest first, and the JVM's total. Two histograms of one JVM taken some
 * minutes apart give the growth per class, in instances and bytes, absolute
 * and per minute: the classic way to find a leak in production
 * (ARCHITECTURE.md, "heap histogram").
 *
 * A histogram may be cut to its biggest classes (jp_heap_histo_cut, so an
 * upload or a stored record stays small); it then says how many classes it
 * had and what the rest added up to. Growth between cut histograms treats a
 * class missing from one as absent (0) and says it is approximate. Classes
 * are compared by name and module: one class loaded by two loaders (two
 * lines in HotSpot's text) is one row of the growth.
 *
 * Ownership: jp_heap_histo and jp_heap_growth are caller storage
 * (_init/_cleanup); names are copied in. A growth row borrows its names
 * from the histograms it was computed from: keep them alive while using it.
 * Not thread-safe. */
#ifndef JP_MODEL_HEAP_H
#define JP_MODEL_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JP_HEAP_MAX_CLASSES (1u << 20) /* classes one histogram may hold */
#define JP_HEAP_NAME_MAX 1024          /* longest class or module name kept (cut beyond) */

/* The sentence every output about a full histogram carries. */
#define JP_HEAP_PAUSE_NOTE                                                                         \
    "a class histogram stops the JVM while it walks the heap (a safepoint); without -all it "      \
    "counts live objects only, which forces a full GC first"

/* One class: name as Java prints it ("java.lang.String", "[B",
 * "[Ljava.lang.Object;"), module as HotSpot prints it ("java.base@17.0.15";
 * "" for a class in no named module). */
typedef struct jp_heap_class {
    char *name;
    char *module;
    uint64_t instances;
    uint64_t bytes;
} jp_heap_class;

typedef struct jp_heap_histo {
    int64_t time_ns;        /* when the JVM finished it (ns since epoch), 0 unknown */
    int64_t took_ns;        /* how long the JVM took to answer (the pause, mostly), 0 unknown */
    bool all;               /* -all: unreachable objects counted too (no full GC) */
    jp_heap_class *classes; /* biggest (bytes) first */
    size_t n, cap;
    uint64_t total_instances, total_bytes; /* every class, also those cut */
    uint64_t classes_total;                /* classes before any cut (>= n) */
    uint64_t undercounted; /* instances the JVM could not count (it ran out of C heap) */
} jp_heap_histo;

void jp_heap_histo_init(jp_heap_histo *h);
void jp_heap_histo_cleanup(jp_heap_histo *h);
/* Appends one class (names copied, cut at JP_HEAP_NAME_MAX bytes). false,
 * nothing added, when the histogram holds JP_HEAP_MAX_CLASSES already. The
 * caller keeps classes_total and the totals. */
bool jp_heap_histo_add(jp_heap_histo *h, const char *name, size_t name_len, const char *module,
                       size_t module_len, uint64_t instances, uint64_t bytes);
/* Sorts the classes biggest first (bytes, then instances, then name). */
void jp_heap_histo_sort(jp_heap_histo *h);
/* Keeps the max biggest classes (sorted first); the totals and
 * classes_total still count the rest. */
void jp_heap_histo_cut(jp_heap_histo *h, size_t max);
/* True when some classes were cut (n < classes_total). */
bool jp_heap_histo_is_cut(const jp_heap_histo *h);
/* Moves src into dst (dst cleaned first); src is left empty. */
void jp_heap_histo_move(jp_heap_histo *dst, jp_heap_histo *src);

/* ---- growth ---- */

typedef struct jp_heap_growth_row {
    const char *name, *module; /* borrowed from the histograms */
    uint64_t instances_from, instances_to;
    uint64_t bytes_from, bytes_to;
    int64_t instances_delta, bytes_delta;
    double instances_per_min, bytes_per_min; /* delta over the span; 0 when the span is 0 */
} jp_heap_growth_row;

typedef struct jp_heap_growth {
    int64_t from_ns, to_ns, span_ns; /* the two histograms' times */
    uint32_t histograms;             /* histograms the growth spans (2 for two) */
    jp_heap_growth_row *rows;        /* fastest growing (bytes) first */
    size_t n;
    int64_t total_instances_delta, total_bytes_delta;
    double total_bytes_per_min;
    bool approximate; /* a histogram was cut: classes outside its top count as 0 */
} jp_heap_growth;

void jp_heap_growth_init(jp_heap_growth *g);
void jp_heap_growth_cleanup(jp_heap_growth *g);
/* The growth from `from` to `to` (any order of classes; `to` should be the
 * later one): a row per class in either, fastest growing in bytes first,
 * then by instances, then by name; classes that only shrank come last.
 * Replaces what g held. */
void jp_heap_growth_compute(const jp_heap_histo *from, const jp_heap_histo *to, jp_heap_growth *g);

#endif
