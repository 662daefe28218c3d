/* run.h - the agent's main loop: discovery, naming, policy, stepping every
 * target, status batches, /status and /metrics gauges.
 *
 * Ownership: agent_run_opts is borrowed for the whole run. agent_run()
 * returns when *stop becomes non-zero (a signal), after stopping every
 * recording it started and trying to flush the upload queue. */
#ifndef JP_AGENT_RUN_H
#define JP_AGENT_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/collect.h"
#include "agent/hostmode.h"
#include "agent/k8s_watch.h"
#include "agent/metrics.h"
#include "model/policy.h"
#include "agent/upload.h"

typedef enum agent_run_mode { AGENT_RUN_HOST, AGENT_RUN_K8S } agent_run_mode;

typedef struct agent_run_opts {
    agent_run_mode mode;
    const char *ns;                  /* host mode namespace ("local") */
    const char *cluster;             /* may be NULL */
    const char *node;                /* node / host name */
    bool all;                        /* host mode: every JVM */
    const agent_host_config *config; /* host mode: may be NULL */
    jp_policy_defaults defaults;
    int64_t scan_ns;   /* discovery interval, default 10 s */
    int64_t status_ns; /* status batch interval, default = window */
    int64_t tick_ns;   /* loop tick, default 1 s */
    agent_collect_opts collect;
    agent_k8s_watch *k8s; /* k8s mode */
    agent_metrics *metrics;
    agent_uploader *uploader; /* NULL: nothing is sent */
} agent_run_opts;

void agent_run(const agent_run_opts *o, volatile sig_atomic_t *stop);

#endif
