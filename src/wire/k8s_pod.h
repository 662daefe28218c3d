/* k8s_pod.h - the parts of a Kubernetes Pod jprof needs, decoded from the
 * API server's JSON (a PodList, or one watch event per line): the agent's
 * pod watch and the kubectl client (kube/kube.h) read pods through it.
 *
 * The input is untrusted: every string is bounded (JP_POD_STR_MAX), only
 * the labels and jprof.io/ annotations jprof uses are kept (at most
 * JP_POD_ANN_MAX), lists are capped (JP_POD_LIST_MAX items,
 * JP_POD_CONTAINERS_MAX containers), and the text itself must fit
 * JP_K8S_BODY_MAX. Errors name the field ("items[3].metadata.uid: ...").
 *
 * Ownership: jp_pod owns its strings (jp_pod_cleanup); jp_pod_list
 * owns its pods. Thread-safe on distinct objects. */
#ifndef JP_WIRE_K8S_POD_H
#define JP_WIRE_K8S_POD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/policy.h"
#include "base/error.h"

#define JP_POD_STR_MAX 1024
#define JP_POD_ANN_MAX 16
#define JP_POD_CONTAINERS_MAX 64
#define JP_POD_LIST_MAX 20000
#define JP_K8S_BODY_MAX (64u << 20) /* a whole PodList */
#define JP_K8S_LINE_MAX (4u << 20)  /* one watch event */

typedef struct jp_pod_container {
    char *name;
    char *id; /* runtime container id without "containerd://"; may be NULL */
} jp_pod_container;

typedef struct jp_pod {
    char *uid, *name, *ns, *node, *phase, *resource_version;
    char *label_name;              /* app.kubernetes.io/name */
    char *label_app;               /* app */
    char *label_hash;              /* pod-template-hash (the ReplicaSet name suffix) */
    char *owner_kind, *owner_name; /* the controller ownerReference */
    jp_kv ann[JP_POD_ANN_MAX];     /* jprof.io/ annotations, strings owned */
    size_t nann;
    jp_pod_container containers[JP_POD_CONTAINERS_MAX];
    size_t ncontainers;
    /* the pod-level securityContext names a user (runAsUser, or
     * runAsNonRoot): an ephemeral container then runs as that user too */
    bool sets_user;
} jp_pod;

void jp_pod_cleanup(jp_pod *p);
void jp_pod_move(jp_pod *dst, jp_pod *src); /* dst must be clean */
/* Deep copy of a pod (dst must be clean). */
void jp_pod_copy(jp_pod *dst, const jp_pod *src);

/* Strips a runtime prefix from a Kubernetes containerID
 * ("containerd://abc..." -> "abc..."); returns a pointer into s. */
const char *jp_pod_container_id_strip(const char *s);

/* The service name: label app.kubernetes.io/name, then app, then the owning
 * workload (a ReplicaSet's Deployment, a StatefulSet/DaemonSet/Job name),
 * then the pod name. Writes the workload ("Deployment/checkout") into
 * workload when it can tell (may be NULL). Returns a pointer into buf. */
const char *jp_pod_service(const jp_pod *p, char *buf, size_t len, char *workload, size_t wlen);

/* "checkout-7d9f8b6c5d" -> "checkout": drops the pod-template-hash suffix,
 * known exactly from the pod's label when given (hash may be NULL), else
 * recognised by Kubernetes' alphabet for it (digits and consonants without
 * 0, 1 and 3). Exposed for tests. */
void jp_pod_rs_to_deployment(const char *rs, const char *hash, char *out, size_t len);

typedef struct jp_pod_list {
    jp_pod *items;
    size_t count, cap;
    char *resource_version; /* of the list, to start the watch from */
} jp_pod_list;

void jp_pod_list_init(jp_pod_list *l);
void jp_pod_list_cleanup(jp_pod_list *l);

/* Decodes a PodList. */
jp_err jp_pod_list_parse(const char *text, size_t len, jp_pod_list *out, jp_error *err);

typedef enum jp_pod_watch_type {
    JP_POD_WATCH_ADDED,
    JP_POD_WATCH_MODIFIED,
    JP_POD_WATCH_DELETED,
    JP_POD_WATCH_BOOKMARK,
    JP_POD_WATCH_GONE,  /* ERROR with code 410: the resource version is too old, re-list */
    JP_POD_WATCH_ERROR, /* any other ERROR event */
} jp_pod_watch_type;

typedef struct jp_pod_watch_event {
    jp_pod_watch_type type;
    jp_pod pod;        /* ADDED/MODIFIED/DELETED; BOOKMARK only resource_version */
    int code;          /* ERROR/GONE: the Status code */
    char message[256]; /* ERROR/GONE: the Status message */
} jp_pod_watch_event;

/* Decodes one watch line; the event must be cleaned up (jp_pod_cleanup
 * of ev->pod) also on error. */
jp_err jp_pod_watch_event_parse(const char *line, size_t len, jp_pod_watch_event *ev,
                                jp_error *err);

#endif
