/* otlp_decode.h - reads an OpenTelemetry profiles message (an OTLP/HTTP
 * ExportProfilesServiceRequest, or a ProfilesData file: the same bytes) into
 * one jprof profile per target. The signal's version: otlp_proto.h.
 *
 * Targets. A sample's target identity comes from its own attributes, then
 * its Profile's, then its Resource's, then the caller's defaults:
 *   k8s.namespace.name -> namespace (default: the caller's, else "local")
 *   service.name       -> service (else the caller's, else the workload,
 *                         else "unknown_service", OpenTelemetry's own word)
 *   k8s.pod.name       -> pod (else the caller's, else host.name:process.pid,
 *                         else host.name, else "upload")
 *   k8s.container.name, container.name -> container
 *   k8s.node.name, host.name -> node;  k8s.cluster.name -> cluster
 *   k8s.deployment.name, k8s.statefulset.name, k8s.daemonset.name,
 *   k8s.job.name, k8s.cronjob.name, k8s.replicaset.name -> workload
 *   process.pid -> pid;  process.runtime.name + .version -> JVM
 *   thread.name -> the sample's thread
 * Identity strings must be valid UTF-8 without control characters and at
 * most the batch limit's string length.
 *
 * Kinds. A Profile's sample_type (type, unit) maps to a kind through
 * sample_type.h; a type jprof does not know refuses the whole message
 * (JP_ERR_UNSUPPORTED, naming it). A "count" profile gives samples, a
 * profile in the kind's unit gives the value; both of one kind in one
 * ResourceProfiles combine cell by cell. A count profile alone gets value =
 * samples x period when the period is in the kind's unit (the meaning the
 * spec gives period), else 0; a value profile alone gets one sample per
 * timestamp, else value / period (at least 1) with a period, else one per
 * value. Negative values are refused.
 *
 * Frames. A stack's locations are read root first; a location with several
 * lines gives one frame per line (caller first). A frame is its function's
 * name (else its system name), printed as jprof prints frames
 * (model/frame_text.h: async-profiler's `pkg/Class.method` becomes
 * `pkg.Class.method`); a location without lines is `MAPPING+0xADDR` or
 * `0xADDR`; an empty stack is "[no stack]". A location's profile.frame.type
 * attribute sets the frame's kind ("jvm", "native", "kernel").
 *
 * Bounds: every read is checked (protobuf.h); dictionary tables, profiles,
 * samples and targets have caps, and what the targets hold (frames, threads,
 * stacks, depth, rows, string length) has the batch limits the server
 * configures, refused with JP_ERR_LIMIT. Malformed input: JP_ERR_FORMAT or
 * JP_ERR_TRUNCATED with the place in the message.
 *
 * Ownership: the result owns its targets, strings and profiles
 * (jp_otlp_result_cleanup). The input is only read. Thread-safe for
 * distinct results. */
#ifndef JP_WIRE_OTLP_DECODE_H
#define JP_WIRE_OTLP_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "model/profile.h"
#include "wire/batch.h"
#include "wire/batch_json.h"

typedef struct jp_otlp_limits {
    jp_batch_limits batch; /* what the resulting batch may hold */
    size_t max_table;      /* entries of each dictionary table */
    size_t max_profiles;   /* Profile messages */
    size_t max_samples;    /* Sample messages over all profiles */
    size_t max_targets;    /* distinct targets */
} jp_otlp_limits;

/* The batch limits given, 1,000,000 table entries, 10,000 profiles,
 * 4,000,000 samples, 1,000 targets. */
void jp_otlp_limits_default(jp_otlp_limits *l, const jp_batch_limits *batch);

/* One target and what the message holds of it. */
typedef struct jp_otlp_target {
    jp_batch_target target;
    jp_profile *profile;
    int64_t start_ns, end_ns; /* its profiles' time range, 0 when none said */
} jp_otlp_target;

typedef struct jp_otlp_result {
    jp_otlp_target *targets;
    size_t ntargets, targets_cap;
    uint64_t profiles, samples; /* messages read */
    char *scope;                /* the first instrumentation scope "name version", NULL none */
} jp_otlp_result;

void jp_otlp_result_init(jp_otlp_result *r);
void jp_otlp_result_cleanup(jp_otlp_result *r);

/* Decodes data[0..len). defaults may be NULL; its ns, service and pod stand
 * in for attributes the message does not carry. */
jp_err jp_otlp_decode(const uint8_t *data, size_t len, const jp_otlp_limits *lim,
                      const jp_batch_target *defaults, jp_otlp_result *out, jp_error *err);

#endif
