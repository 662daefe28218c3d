/* hostmode.h - naming and enabling JVMs outside Kubernetes (--mode host).
 *
 * Service of a JVM: -Djprof.service=NAME on its command line, else its main
 * class without the package ("shop.Checkout" -> "Checkout"), else the jar's
 * file name without ".jar" ("/opt/shop/checkout-1.2.jar" -> "checkout-1.2").
 *
 * The config file (--config) lists what to profile, one entry a line:
 *   checkout          a service name
 *   pid 4242          a pid (a bare number is a pid too)
 *   # comment         blank lines and comments are ignored
 * A line may add annotations after the name, as `key=value` words, e.g.
 *   checkout jprof.io/events=cpu,alloc jprof.io/threads=high
 * (the same keys as the pod annotations, jprof(7)).
 *
 * Ownership: agent_host_config owns its entries (agent_host_config_cleanup).
 * Thread-safe on distinct objects. */
#ifndef JP_AGENT_HOSTMODE_H
#define JP_AGENT_HOSTMODE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "model/policy.h"
#include "base/error.h"

#define AGENT_HOST_CONFIG_MAX 1024 /* entries */
#define AGENT_HOST_CONFIG_BYTES (1u << 20)
#define AGENT_HOST_ANN_MAX 8

/* Service name from a NUL-separated java command line. Writes "" when no
 * name can be found. */
void agent_host_service(const char *cmdline, size_t len, char *out, size_t outlen);

typedef struct agent_host_entry {
    char *service; /* NULL for a pid entry */
    pid_t pid;     /* 0 for a service entry */
    jp_kv ann[AGENT_HOST_ANN_MAX];
    size_t nann;
    unsigned line;
} agent_host_entry;

typedef struct agent_host_config {
    agent_host_entry *items;
    size_t count, cap;
} agent_host_config;

void agent_host_config_init(agent_host_config *c);
void agent_host_config_cleanup(agent_host_config *c);

/* Parses config text; errors name the line ("line 4: ..."). */
jp_err agent_host_config_parse(const char *text, size_t len, agent_host_config *out, jp_error *err);
jp_err agent_host_config_load(const char *path, agent_host_config *out, jp_error *err);

/* The entry enabling this JVM (by pid first, then service), or NULL. */
const agent_host_entry *agent_host_config_match(const agent_host_config *c, pid_t pid,
                                                const char *service);

#endif
