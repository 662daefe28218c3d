/* otlp_encode.h - jprof profiles as an OpenTelemetry profiles message (a
 * ProfilesData, whose bytes are also an OTLP/HTTP ExportProfilesService
 * request): what `jprof-top -b --format otlp` and GET
 * /api/v1/flamegraph?format=otlp write. The signal's version: otlp_proto.h.
 *
 * What goes where:
 *  - one ResourceProfiles whose Resource carries the target's identity
 *    when known (service.name, k8s.namespace.name, k8s.pod.name,
 *    k8s.container.name, k8s.node.name, k8s.cluster.name, process.pid);
 *    one ScopeProfiles of scope "jprof";
 *  - per kind two Profiles, as pprof has two sample types: sample_type
 *    (KIND, "count") with the samples, and (KIND, "nanoseconds" or "bytes")
 *    with the value; period_type (KIND, unit) and period when the kind has a
 *    sampling period; time_unix_nano / duration_nano from the recording;
 *  - one Sample per (stack, thread) cell; with threads, a "thread.name"
 *    attribute; stacks leaf first; one Location and Function per frame,
 *    named with jprof's printed frame name, a Location's
 *    "profile.frame.type" attribute "jvm", "native" or "kernel" when known.
 * otlp_decode.h reads it back to the same cells.
 *
 * Ownership: the profile and target are only read; the bytes are appended
 * to out (uncompressed). Thread-safe for distinct outputs. */
#ifndef JP_WIRE_OTLP_ENCODE_H
#define JP_WIRE_OTLP_ENCODE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "model/profile.h"
#include "wire/batch.h"

/* Encodes the kinds in the mask (bit 1 << jp_kind) that p has. target may
 * be NULL (no resource attributes). JP_ERR_NOT_FOUND when p has none of
 * them. */
jp_err jp_otlp_encode(const jp_profile *p, uint32_t kinds, bool threads,
                      const jp_batch_target *target, jp_strbuf *out, jp_error *err);

#endif
