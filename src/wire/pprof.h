/* pprof.h - one kind of a profile as a gzipped pprof Profile protobuf, the
 * format of `go tool pprof`, speedscope and the OpenTelemetry profiling
 * tools (github.com/google/pprof, proto/profile.proto).
 *
 * What goes where:
 *  - sample_type: [{"samples", "count"}, {KIND, UNIT}] with the kind's name
 *    ("cpu", "alloc", ...) and unit ("nanoseconds" or "bytes"); the second
 *    is the default sample type and, for sampled kinds with a known period,
 *    the period type;
 *  - one Function and one Location (one Line) per frame, named with jprof's
 *    printed frame name (the same text as a collapsed line);
 *  - one Sample per (stack, thread) cell, locations leaf first, values
 *    [samples, value]; with threads, a "thread" label holds the thread name;
 *  - time_nanos / duration_nanos: the recording's range when known.
 *
 * The encoder is written here (no protobuf library): a handful of message
 * types, varints and length-delimited fields only.
 *
 * Ownership: out is caller storage; the gzipped bytes are appended. The
 * profile is only read. Thread-safe for distinct outputs. */
#ifndef JP_WIRE_PPROF_H
#define JP_WIRE_PPROF_H

#include <stdbool.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "model/profile.h"

/* Encodes kind k of p (threads: a "thread" label per sample where the cells
 * carry one). JP_ERR_NOT_FOUND when p has no events of k; JP_ERR_INTERNAL
 * when compression fails. */
jp_err jp_pprof_encode(const jp_profile *p, jp_kind k, bool threads, jp_strbuf *out, jp_error *err);

#endif
