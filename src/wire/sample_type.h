/* sample_type.h - what other profilers call their sample types, in jprof's
 * profile kinds: the one table the OTLP and pprof readers share.
 *
 * A foreign profile names each value it carries with a (type, unit) pair:
 * async-profiler's OTLP writes ("cpu", "count"), ("itimer", "ns"),
 * ("allocations", "bytes"), ("locks", "nanoseconds"), its agent names the
 * engine ("perf_events", "lock_tracer", "object_sampler", ...); pprof files
 * from Go and Pyroscope carry ("samples", "count") beside ("cpu",
 * "nanoseconds"), ("alloc_space", "bytes"), ("contentions", "count"),
 * ("delay", "nanoseconds"); jprof's own exports use its kind names. A unit
 * is either a count (the values count samples/events) or the kind's own
 * unit (ns for time kinds, bytes for memory kinds), possibly scaled.
 * Matching ignores case. Pure functions; thread-safe. */
#ifndef JP_WIRE_SAMPLE_TYPE_H
#define JP_WIRE_SAMPLE_TYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "model/profile.h"

typedef struct jp_sample_type {
    jp_kind kind;
    bool is_count;  /* values count samples; else they are the kind's value */
    uint64_t scale; /* value unit -> the kind's unit (microseconds: 1000) */
} jp_sample_type;

/* Maps a (type, unit) pair. JP_ERR_UNSUPPORTED with a message naming both
 * when the type is no jprof kind, or the unit does not fit the kind (a
 * time in bytes). */
jp_err jp_sample_type_map(const char *type, size_t tlen, const char *unit, size_t ulen,
                          jp_sample_type *out, jp_error *err);

/* True when unit is kind k's own unit (ns, or bytes), possibly scaled
 * (*scale: unit -> the kind's unit); false for a count or a misfit. */
bool jp_sample_unit_of_kind(const char *unit, size_t ulen, jp_kind k, uint64_t *scale);

#endif
