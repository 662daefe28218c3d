/* plugin.h - kubectl-jprof's command line and the parts its files share. */
#ifndef JP_KUBECTL_JPROF_PLUGIN_H
#define JP_KUBECTL_JPROF_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/k8s_pod.h"
#include "kube/kube.h"

/* Exit statuses (man/kubectl-jprof.1). */
#define PLUGIN_EXIT_OK 0
#define PLUGIN_EXIT_ERROR 1
#define PLUGIN_EXIT_USAGE 2
#define PLUGIN_EXIT_NOT_FOUND 4 /* no such pod / service, no JVM */
#define PLUGIN_EXIT_DEADLOCK 5  /* `deadlocks` found one (scripts can test for it) */

typedef struct plugin_args {
    const char *cmd;
    const char *pod, *service, *container;
    const char *output; /* text|json, collapsed|top|json */
    const char *file;
    const char *event;
    int64_t duration_ns, interval_ns, for_ns;
    bool has_interval;
    long count;         /* heap: histograms (0: 1) */
    bool all;           /* heap: -all */
    const char *events; /* --events for enable/profile */
    bool workload;
    const char *server;
    kube_opts kube;
    char command_line[1024]; /* as typed, for "this works:" in messages */
} plugin_args;

/* The pods named by -s SVC or POD (out initialised by the caller). */
int plugin_pods(const plugin_args *a, jp_pod_list *out);

/* enable | disable | profile; status. Return exit statuses. */
int plugin_annotate(const plugin_args *a);
int plugin_status(const plugin_args *a);

/* "error: ..." on stderr and the exit status for err. */
int plugin_fail(const jp_error *err);

#endif
