/* pprof_decode.h - reads a pprof Profile (github.com/google/pprof,
 * proto/profile.proto; gzipped or not), as Pyroscope's agents send it to
 * /ingest with format=pprof, into a jprof profile.
 *
 * Sample types map to kinds through sample_type.h (an unknown type refuses
 * the profile, naming it); a count type gives samples, a type in the kind's
 * unit the value, and types of one kind combine: Go's ("samples", "count")
 * and ("cpu", "nanoseconds") make one cpu cell; ("samples", "count") counts
 * the profile's one other kind when it has one (jprof's own export writes
 * ("samples", "count") beside ("alloc", "bytes")), else cpu. A kind with
 * only a count gets value = samples x period when the period is in its
 * unit, else 0; one with only a value gets samples = value / period (at
 * least 1), else 1. Locations are leaf first, a location's lines callee
 * first, as in OTLP; frames are named as otlp_decode.h says
 * (model/frame_text.h), a location without lines by its address (0xADDR). A label "thread",
 * "thread_name" or "thread.name" names the sample's thread. The profile's time_nanos and
 * duration_nanos give p's range.
 *
 * Bounds: the limits of otlp_decode.h (tables, samples, and the batch
 * limits for frames, threads, stacks, depth, rows and string length), a
 * gzipped profile inflated to at most max_decompressed bytes. Refusals:
 * JP_ERR_FORMAT / JP_ERR_TRUNCATED / JP_ERR_LIMIT / JP_ERR_UNSUPPORTED with
 * the place. The input is only read; p receives the cells. Thread-safe for
 * distinct profiles. */
#ifndef JP_WIRE_PPROF_DECODE_H
#define JP_WIRE_PPROF_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "model/profile.h"
#include "wire/otlp_decode.h"

jp_err jp_pprof_decode(const uint8_t *data, size_t len, const jp_otlp_limits *lim,
                       size_t max_decompressed, jp_profile *p, jp_error *err);

#endif
