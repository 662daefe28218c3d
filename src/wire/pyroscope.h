/* pyroscope.h - what Pyroscope's /ingest says besides the profile: the
 * series name `APP.KIND{k=v,...}` and the labels snapshot Pyroscope's Java
 * agent sends beside a JFR recording (io.pyroscope.labels.pb.LabelsSnapshot).
 *
 * Names. APP is the application; a trailing `.KIND` that Pyroscope's agents
 * append (cpu, itimer, wall, alloc_objects, lock_count, ...) is cut and kept
 * as a hint. The labels name the target the way Pyroscope and Grafana
 * Alloy name it:
 *   service_name                         -> service (else APP)
 *   namespace, k8s_namespace_name        -> namespace (else the default, else "local")
 *   pod, k8s_pod_name, instance          -> pod (else hostname, else "upload")
 *   container, k8s_container_name        -> container
 *   node, k8s_node_name, hostname        -> node
 *   cluster                              -> cluster
 *   process.runtime.name + .version      -> JVM
 * A name is at most 1024 bytes with at most 64 labels; keys and values are
 * non-empty, without control characters, at most the batch string length.
 *
 * Labels snapshot. Its per-sample contexts (dynamic labels, span ids) are
 * read for their shape and counted, not stored: jprof keeps no per-sample
 * labels. Refusals: JP_ERR_FORMAT / JP_ERR_TRUNCATED / JP_ERR_LIMIT with the
 * place. Pure; thread-safe. */
#ifndef JP_WIRE_PYROSCOPE_H
#define JP_WIRE_PYROSCOPE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "wire/batch.h"

/* Parses `name` into the target t (strings owned by t; jp_batch_target_cleanup).
 * default_ns may be NULL. *kind_hint gets the cut suffix, a static string
 * ("" when none). */
jp_err jp_pyroscope_name(const char *name, const char *default_ns, size_t max_string,
                         jp_batch_target *t, const char **kind_hint, jp_error *err);

/* Checks a LabelsSnapshot and counts its contexts and strings. */
jp_err jp_pyroscope_labels(const uint8_t *data, size_t len, uint64_t *contexts, uint64_t *strings,
                           jp_error *err);

#endif
