/* oldobj.h - the objects the JDK's old-object sampler found still alive
 * (jdk.OldObjectSample, the `old` kind): per sampled object its class, when
 * it was allocated, its age when the recording ended, its size (0 where the
 * JDK does not record it) and the heap in use when it was sampled
 * (lastKnownHeapUsage: after the collection before). The profile keeps the
 * stacks (allocation sites); this log keeps the rest, and
 * jp_old_summarize() reduces it to what an SRE asks: which classes of
 * long-lived objects, how old, and how the heap in use grew meanwhile.
 *
 * Ownership: jp_old_log and jp_old_summary are caller storage
 * (_init/_cleanup); class names are copied (cut at JP_OLD_CLASS_MAX - 1
 * bytes). A summary's names point into the log it was made from. Not
 * thread-safe. */
#ifndef JP_MODEL_OLDOBJ_H
#define JP_MODEL_OLDOBJ_H

#include <stddef.h>
#include <stdint.h>

#define JP_OLD_MAX_SAMPLES (1u << 16) /* entries kept; the rest are counted as dropped */
#define JP_OLD_CLASS_MAX 160

typedef struct jp_old_sample {
    int64_t time_ns;            /* when the event was written (the recording's end) */
    int64_t alloc_ns;           /* when the object was allocated, 0 unknown */
    int64_t age_ns;             /* objectAge, -1 unknown */
    uint64_t size;              /* objectSize in bytes, 0 unknown */
    uint64_t heap_used;         /* lastKnownHeapUsage in bytes, 0 unknown */
    char cls[JP_OLD_CLASS_MAX]; /* "java.util.HashMap$Node[]"-style, "" unknown */
} jp_old_sample;

typedef struct jp_old_log {
    jp_old_sample *v;
    size_t n, cap;
    uint64_t dropped;
} jp_old_log;

void jp_old_log_init(jp_old_log *l);
void jp_old_log_cleanup(jp_old_log *l);
void jp_old_log_add(jp_old_log *l, const jp_old_sample *s);
void jp_old_log_append(jp_old_log *dst, const jp_old_log *src);
size_t jp_old_log_memory(const jp_old_log *l);

/* One class of sampled live objects. */
typedef struct jp_old_class {
    const char *name; /* "[unknown]" when the recording did not say */
    uint64_t objects, bytes;
    int64_t age_min_ns, age_median_ns, age_max_ns; /* -1 when no age is known */
} jp_old_class;

typedef struct jp_old_summary {
    jp_old_class *classes; /* most objects first, then bytes, then name */
    size_t n;
    uint64_t objects, bytes;
    /* heap in use when the oldest and the newest sampled object was
     * allocated (lastKnownHeapUsage), 0 unknown */
    int64_t heap_first_ns, heap_last_ns;
    uint64_t heap_first, heap_last;
    uint64_t dropped;
} jp_old_summary;

void jp_old_summary_init(jp_old_summary *s);
void jp_old_summary_cleanup(jp_old_summary *s);
/* Replaces what s held with the summary of l. */
void jp_old_summarize(const jp_old_log *l, jp_old_summary *s);

#endif
