/* k8s_watch.h - the pods of this node, kept current from the API server.
 *
 * A thread lists GET /api/v1/pods?fieldSelector=spec.nodeName=NODE, then
 * watches from the list's resourceVersion (with bookmarks). Each watch line
 * is one JSON event; the stream is split with a hard line cap
 * (JP_K8S_LINE_MAX) so a hostile or broken server cannot make it buffer
 * without bound. A watch that answers 410 Gone (as an HTTP status or as an
 * ERROR event) means our resourceVersion is too old: list again at once. A
 * watch the server ends normally is resumed from the last version seen. Any
 * other failure waits an exponential back-off with jitter (1 s .. 60 s),
 * then lists again.
 *
 * Ownership: agent_k8s_watch_start takes the conn; _stop joins the thread
 * and frees everything. agent_k8s_pods_copy hands out deep copies, so
 * readers never hold the lock. Thread-safe. */
#ifndef JP_AGENT_K8S_WATCH_H
#define JP_AGENT_K8S_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/k8s_conn.h"
#include "wire/k8s_pod.h"
#include "agent/metrics.h"
#include "base/error.h"

typedef struct agent_k8s_watch agent_k8s_watch;

/* node: this node's name (required). m may be NULL. */
jp_err agent_k8s_watch_start(agent_k8s_conn *conn, const char *node, agent_metrics *m,
                             agent_k8s_watch **out, jp_error *err);
void agent_k8s_watch_stop(agent_k8s_watch *w);

/* Deep copies of the known pods (list->resource_version is the last seen).
 * Returns false until the first list succeeded. */
bool agent_k8s_pods_copy(agent_k8s_watch *w, jp_pod_list *out);

/* The last API error ("" when fine), for status. */
void agent_k8s_last_error(agent_k8s_watch *w, char *buf, size_t len);

#endif
