/* k8s_pod.h - the parts of a Kubernetes Pod the agent needs, decoded from
 * the API server's JSON (a PodList, or one watch event per line).
 *
 * The input is untrusted: every string is bounded (AGENT_POD_STR_MAX), only
 * the labels and jprof.io/ annotations the agent uses are kept (at most
 * AGENT_POD_ANN_MAX), lists are capped (AGENT_POD_LIST_MAX items,
 * AGENT_POD_CONTAINERS_MAX containers), and the text itself must fit
 * AGENT_K8S_BODY_MAX. Errors name the field ("items[3].metadata.uid: ...").
 *
 * Ownership: agent_pod owns its strings (agent_pod_cleanup); agent_pod_list
 * owns its pods. Thread-safe on distinct objects. */
#ifndef JP_AGENT_K8S_POD_H
#define JP_AGENT_K8S_POD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/policy.h"
#include "base/error.h"

#define AGENT_POD_STR_MAX 1024
#define AGENT_POD_ANN_MAX 16
#define AGENT_POD_CONTAINERS_MAX 64
#define AGENT_POD_LIST_MAX 20000
#define AGENT_K8S_BODY_MAX (64u << 20) /* a whole PodList */
#define AGENT_K8S_LINE_MAX (4u << 20)  /* one watch event */

typedef struct agent_pod_container {
    char *name;
    char *id; /* runtime container id without "containerd://"; may be NULL */
} agent_pod_container;

typedef struct agent_pod {
    char *uid, *name, *ns, *node, *phase, *resource_version;
    char *label_name;                /* app.kubernetes.io/name */
    char *label_app;                 /* app */
    char *label_hash;                /* pod-template-hash (the ReplicaSet name suffix) */
    char *owner_kind, *owner_name;   /* the controller ownerReference */
    agent_kv ann[AGENT_POD_ANN_MAX]; /* jprof.io/ annotations, strings owned */
    size_t nann;
    agent_pod_container containers[AGENT_POD_CONTAINERS_MAX];
    size_t ncontainers;
} agent_pod;

void agent_pod_cleanup(agent_pod *p);
void agent_pod_move(agent_pod *dst, agent_pod *src); /* dst must be clean */

/* The service name: label app.kubernetes.io/name, then app, then the owning
 * workload (a ReplicaSet's Deployment, a StatefulSet/DaemonSet/Job name),
 * then the pod name. Writes the workload ("Deployment/checkout") into
 * workload when it can tell (may be NULL). Returns a pointer into buf. */
const char *agent_pod_service(const agent_pod *p, char *buf, size_t len, char *workload,
                              size_t wlen);

/* "checkout-7d9f8b6c5d" -> "checkout": drops the pod-template-hash suffix,
 * known exactly from the pod's label when given (hash may be NULL), else
 * recognised by Kubernetes' alphabet for it (digits and consonants without
 * 0, 1 and 3). Exposed for tests. */
void agent_rs_to_deployment(const char *rs, const char *hash, char *out, size_t len);

typedef struct agent_pod_list {
    agent_pod *items;
    size_t count, cap;
    char *resource_version; /* of the list, to start the watch from */
} agent_pod_list;

void agent_pod_list_init(agent_pod_list *l);
void agent_pod_list_cleanup(agent_pod_list *l);

/* Decodes a PodList. */
jp_err agent_pod_list_parse(const char *text, size_t len, agent_pod_list *out, jp_error *err);

typedef enum agent_watch_type {
    AGENT_WATCH_ADDED,
    AGENT_WATCH_MODIFIED,
    AGENT_WATCH_DELETED,
    AGENT_WATCH_BOOKMARK,
    AGENT_WATCH_GONE,  /* ERROR with code 410: the resource version is too old, re-list */
    AGENT_WATCH_ERROR, /* any other ERROR event */
} agent_watch_type;

typedef struct agent_watch_event {
    agent_watch_type type;
    agent_pod pod;     /* ADDED/MODIFIED/DELETED; BOOKMARK only resource_version */
    int code;          /* ERROR/GONE: the Status code */
    char message[256]; /* ERROR/GONE: the Status message */
} agent_watch_event;

/* Decodes one watch line; the event must be cleaned up (agent_pod_cleanup
 * of ev->pod) also on error. */
jp_err agent_watch_event_parse(const char *line, size_t len, agent_watch_event *ev, jp_error *err);

#endif
