/* k8s_conn.h - how the agent reaches the Kubernetes API server.
 *
 * Two sources:
 *  - in cluster: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
 *    the service-account token and CA under
 *    /var/run/secrets/kubernetes.io/serviceaccount (the token is re-read for
 *    every request: projected tokens rotate);
 *  - --kubeconfig FILE: the current context's cluster (server,
 *    certificate-authority[-data], insecure-skip-tls-verify) and user (token,
 *    tokenFile, client-certificate[-data] + client-key[-data]). Supported
 *    YAML is the block style kubectl writes (maps, "- " lists, plain and
 *    quoted scalars, comments, {} and []); a JSON kubeconfig works too.
 *    Unsupported, refused with a message saying so: exec credential plugins,
 *    auth-provider, username/password, anchors/aliases, multi-line scalars.
 *
 * Ownership: agent_k8s_conn owns every buffer (agent_k8s_conn_cleanup).
 * Thread-safe on distinct objects. */
#ifndef JP_AGENT_K8S_CONN_H
#define JP_AGENT_K8S_CONN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define AGENT_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define AGENT_KUBECONFIG_MAX (1u << 20)

typedef struct agent_k8s_conn {
    char *server;     /* base URL without a trailing slash */
    char *token;      /* static bearer token, or NULL */
    char *token_file; /* re-read per request, or NULL */
    uint8_t *ca;      /* PEM bytes, or NULL */
    size_t ca_len;
    char *ca_file;       /* or a CA file path */
    uint8_t *cert, *key; /* client certificate and key (PEM), or NULL */
    size_t cert_len, key_len;
    char *cert_file, *key_file;
    bool insecure; /* insecure-skip-tls-verify */
    char *source;  /* "in-cluster" or the kubeconfig path + context, for messages */
} agent_k8s_conn;

void agent_k8s_conn_cleanup(agent_k8s_conn *c);

/* In-cluster configuration; sa_dir NULL = AGENT_SA_DIR. */
jp_err agent_k8s_conn_incluster(agent_k8s_conn *c, const char *sa_dir, jp_error *err);

jp_err agent_kubeconfig_load(const char *path, agent_k8s_conn *c, jp_error *err);
/* base_dir resolves relative file paths in the kubeconfig. */
jp_err agent_kubeconfig_parse(const char *text, size_t len, const char *base_dir, agent_k8s_conn *c,
                              jp_error *err);

/* The YAML subset above as a JSON tree (new reference), for tests. */
jp_err agent_yaml_parse(const char *text, size_t len, json_t **out, jp_error *err);

#endif
