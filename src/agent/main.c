/* jprof-agent: continuous profiling of the JVMs on one node (jprof-agent(8)). */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/hostmode.h"
#include "agent/k8s_conn.h"
#include "agent/k8s_watch.h"
#include "agent/metrics.h"
#include "agent/run.h"
#include "agent/upload.h"
#include "base/stopsig.h"
#include "base/timeutil.h"
#include "jvm/cleanup.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    if (stop_flag) /* second signal while cleaning up: files only, then leave */
        jvm_cleanup_unlink_files();
    stop_flag = sig;
}

static void usage(FILE *f)
{
    fputs("usage: jprof-agent [--mode host|k8s] [options]\n"
          "  --server URL[,URL...]   jprof-server to upload to (without it: status only);\n"
          "                          several: a failed upload is retried on the next\n"
          "  --token-file FILE       bearer token for the server\n"
          "  --server-ca FILE        CA bundle for an https server\n"
          "  --window DURATION       profile window (default 60s)\n"
          "  --queue-bytes SIZE      upload queue limit (default 64M)\n"
          "  --batch-max-bytes SIZE  split batches above this JSON size (default 8M)\n"
          "  --min-tmp-free SIZE     no recording while the target's /tmp has less free\n"
          "                          (default 64M; 0: no check)\n"
          "  --metrics-listen A:P    /metrics and /status (default 127.0.0.1:9464, 'off')\n"
          "  --collector-id ID       default jprof-agent@NODE\n"
          "  --cluster NAME          cluster name put on every target\n"
          "  --events LIST           default events (cpu,alloc,lock)\n"
          "  --startup-delay DUR     default startup delay (0s)\n"
          "  --heap-min-interval DUR the shortest jprof.io/heap-histogram accepted (1m;\n"
          "                          at least 5s; each histogram pauses the JVM)\n"
          "  --jfr-settings S        JFR settings: jprof (only the events jprof reads;\n"
          "                          default), or a .jfc name/path in the target\n"
          "  --cpu-interval DUR      cpu sampling interval, continuous targets (50ms)\n"
          "  --dense-cpu-interval DUR  the same in a temporary window (10ms)\n"
          "  --asprof-lib PATH       profile with this libasyncProfiler.so instead of JFR\n"
          "  --jfr-jobs N            threads decoding a window's recording (1; 0: every core)\n"
          "  --snapshot-source S     auto, helper or thread-print\n"
          "  --scan-interval DUR     JVM discovery interval (10s)\n"
          " host mode:\n"
          "  --all | --config FILE   which JVMs to profile\n"
          "  --namespace NS          namespace of the targets (local)\n"
          " k8s mode:\n"
          "  --kubeconfig FILE       instead of the in-cluster service account\n"
          "  --node NAME             this node (default $NODE_NAME)\n",
          f);
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    double v = strtod(s, &end);
    double mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1024;
    else if (*end == 'm' || *end == 'M')
        mul = 1024.0 * 1024;
    else if (*end == 'g' || *end == 'G')
        mul = 1024.0 * 1024 * 1024;
    else if (*end)
        return -1;
    if (*end && end[1] && strcmp(end + 1, "B") != 0 && strcmp(end + 1, "iB") != 0)
        return -1;
    if (end == s || v <= 0 || v * mul > 1e12)
        return -1;
    *out = (size_t)(v * mul);
    return 0;
}

typedef struct cli {
    agent_run_opts run;
    agent_upload_opts up;
    const char *mode, *metrics_listen, *config_path, *kubeconfig, *collector, *events;
    const char *startup_delay, *window, *scan, *snap_source, *cpu_interval, *dense_interval;
    const char *heap_min;
    char collector_buf[320], host[256];
} cli;

enum {
    O_SERVER = 256,
    O_TOKEN,
    O_CA,
    O_WINDOW,
    O_QUEUE,
    O_MIN_TMP,
    O_BATCH,
    O_METRICS,
    O_COLLECTOR,
    O_CLUSTER,
    O_EVENTS,
    O_DELAY,
    O_JFR,
    O_CPU_INTERVAL,
    O_DENSE_INTERVAL,
    O_ASPROF,
    O_SNAP,
    O_SCAN,
    O_ALL,
    O_CONFIG,
    O_NS,
    O_KUBE,
    O_NODE,
    O_MODE,
    O_HEAP_MIN,
    O_JFR_JOBS,
    O_VERSION
};

/* Where an option that just takes a string goes; NULL for the others. */
static const char **string_slot(cli *c, int ch)
{
    switch (ch) {
    case O_MODE:
        return &c->mode;
    case O_SERVER:
        return &c->up.server;
    case O_TOKEN:
        return &c->up.token_file;
    case O_CA:
        return &c->up.ca_file;
    case O_WINDOW:
        return &c->window;
    case O_METRICS:
        return &c->metrics_listen;
    case O_COLLECTOR:
        return &c->collector;
    case O_CLUSTER:
        return &c->run.cluster;
    case O_EVENTS:
        return &c->events;
    case O_DELAY:
        return &c->startup_delay;
    case O_HEAP_MIN:
        return &c->heap_min;
    case O_JFR:
        return &c->run.collect.jfr_settings;
    case O_CPU_INTERVAL:
        return &c->cpu_interval;
    case O_DENSE_INTERVAL:
        return &c->dense_interval;
    case O_ASPROF:
        return &c->run.collect.asprof_lib;
    case O_SNAP:
        return &c->snap_source;
    case O_SCAN:
        return &c->scan;
    case O_CONFIG:
        return &c->config_path;
    case O_NS:
        return &c->run.ns;
    case O_KUBE:
        return &c->kubeconfig;
    case O_NODE:
        return &c->run.node;
    default:
        return NULL;
    }
}

static const struct option long_opts[] = {{"mode", 1, 0, O_MODE},
                                          {"server", 1, 0, O_SERVER},
                                          {"token-file", 1, 0, O_TOKEN},
                                          {"server-ca", 1, 0, O_CA},
                                          {"window", 1, 0, O_WINDOW},
                                          {"queue-bytes", 1, 0, O_QUEUE},
                                          {"min-tmp-free", 1, 0, O_MIN_TMP},
                                          {"batch-max-bytes", 1, 0, O_BATCH},
                                          {"metrics-listen", 1, 0, O_METRICS},
                                          {"collector-id", 1, 0, O_COLLECTOR},
                                          {"cluster", 1, 0, O_CLUSTER},
                                          {"events", 1, 0, O_EVENTS},
                                          {"startup-delay", 1, 0, O_DELAY},
                                          {"heap-min-interval", 1, 0, O_HEAP_MIN},
                                          {"jfr-settings", 1, 0, O_JFR},
                                          {"cpu-interval", 1, 0, O_CPU_INTERVAL},
                                          {"dense-cpu-interval", 1, 0, O_DENSE_INTERVAL},
                                          {"asprof-lib", 1, 0, O_ASPROF},
                                          {"jfr-jobs", 1, 0, O_JFR_JOBS},
                                          {"snapshot-source", 1, 0, O_SNAP},
                                          {"scan-interval", 1, 0, O_SCAN},
                                          {"all", 0, 0, O_ALL},
                                          {"config", 1, 0, O_CONFIG},
                                          {"namespace", 1, 0, O_NS},
                                          {"kubeconfig", 1, 0, O_KUBE},
                                          {"node", 1, 0, O_NODE},
                                          {"version", 0, 0, O_VERSION},
                                          {"help", 0, 0, 'h'},
                                          {0, 0, 0, 0}};

static int parse_args(cli *c, int argc, char **argv)
{
    int ch;
    while ((ch = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        const char **slot = string_slot(c, ch);
        if (slot) {
            *slot = optarg;
        } else if (ch == O_QUEUE || ch == O_BATCH) {
            size_t *dst = ch == O_QUEUE ? &c->up.queue_bytes : &c->up.max_batch_bytes;
            if (parse_size(optarg, dst)) {
                fprintf(stderr, "jprof-agent: --%s %s: expected a size such as 64M\n",
                        ch == O_QUEUE ? "queue-bytes" : "batch-max-bytes", optarg);
                return -1;
            }
        } else if (ch == O_MIN_TMP) {
            size_t v;
            if (parse_size(optarg, &v)) {
                fprintf(stderr, "jprof-agent: --min-tmp-free %s: expected a size such as 64M\n",
                        optarg);
                return -1;
            }
            c->run.collect.min_tmp_free = v;
        } else if (ch == O_JFR_JOBS) {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 0 || v > 256) {
                fprintf(stderr, "jprof-agent: --jfr-jobs %s: expected 0..256\n", optarg);
                return -1;
            }
            c->run.collect.jfr_jobs = v ? (int)v : (int)sysconf(_SC_NPROCESSORS_ONLN);
        } else if (ch == O_ALL) {
            c->run.all = true;
        } else if (ch == O_VERSION) {
            puts("jprof-agent " PACKAGE_VERSION);
            exit(0);
        } else if (ch == 'h') {
            usage(stdout);
            exit(0);
        } else {
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "jprof-agent: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    return 0;
}

static int duration(const char *opt, const char *s, int64_t *out, int64_t min_ns)
{
    jp_error e;
    jp_error_init(&e);
    if (!s)
        return 0;
    if (jp_duration_parse(s, out, &e) != JP_OK || *out < min_ns) {
        fprintf(stderr, "jprof-agent: %s %s: %s\n", opt, s, e.msg[0] ? e.msg : "too short");
        return -1;
    }
    return 0;
}

/* --asprof-lib must be a readable regular file given by an absolute path
 * (the agent copies it into every target, so a mistake shows here once). */
static bool asprof_lib_ok(const char *path)
{
    struct stat st;
    if (path[0] != '/')
        return fprintf(stderr, "jprof-agent: --asprof-lib %s: give an absolute path\n", path),
               false;
    if (stat(path, &st) != 0 || access(path, R_OK) != 0)
        return fprintf(stderr, "jprof-agent: --asprof-lib %s: %s\n", path, strerror(errno)), false;
    if (!S_ISREG(st.st_mode))
        return fprintf(stderr, "jprof-agent: --asprof-lib %s: not a regular file\n", path), false;
    return true;
}

/* Applies defaults and checks the combination of options. */
static int settle(cli *c)
{
    agent_run_opts *r = &c->run;
    if (!c->mode || strcmp(c->mode, "host") == 0)
        r->mode = AGENT_RUN_HOST;
    else if (strcmp(c->mode, "k8s") == 0)
        r->mode = AGENT_RUN_K8S;
    else
        return fprintf(stderr, "jprof-agent: --mode %s: expected host or k8s\n", c->mode), -1;
    if (!r->node)
        r->node = getenv("NODE_NAME");
    if (!r->node || !*r->node) {
        if (gethostname(c->host, sizeof c->host - 1) != 0)
            snprintf(c->host, sizeof c->host, "localhost");
        r->node = r->mode == AGENT_RUN_HOST ? c->host : NULL;
    }
    if (r->mode == AGENT_RUN_K8S && !r->node)
        return fputs("jprof-agent: --mode k8s needs --node NAME or NODE_NAME (downward API "
                     "spec.nodeName)\n",
                     stderr),
               -1;
    if (r->mode == AGENT_RUN_HOST && !r->all && !c->config_path)
        return fputs("jprof-agent: --mode host needs --all or --config FILE (profiling is off "
                     "unless asked for)\n",
                     stderr),
               -1;
    if (!r->ns)
        r->ns = "local";
    if (r->collect.asprof_lib && !asprof_lib_ok(r->collect.asprof_lib))
        return -1;
    if (duration("--window", c->window, &r->collect.window_ns, 5 * JP_NS_PER_SEC) ||
        duration("--scan-interval", c->scan, &r->scan_ns, JP_NS_PER_SEC / 10) ||
        duration("--startup-delay", c->startup_delay, &r->defaults.startup_delay_ns, 0) ||
        duration("--heap-min-interval", c->heap_min, &r->defaults.heap_min_ns, 5 * JP_NS_PER_SEC) ||
        duration("--cpu-interval", c->cpu_interval, &r->collect.cpu_interval_ns, JP_NS_PER_MS) ||
        duration("--dense-cpu-interval", c->dense_interval, &r->collect.dense_cpu_interval_ns,
                 JP_NS_PER_MS))
        return -1;
    if (r->collect.cpu_interval_ns > JP_NS_PER_SEC ||
        r->collect.dense_cpu_interval_ns > JP_NS_PER_SEC)
        return fputs("jprof-agent: --cpu-interval and --dense-cpu-interval: at most 1s\n", stderr),
               -1;
    const char *js = r->collect.jfr_settings;
    if (!*js || strpbrk(js, " \t\n\r,=") || strlen(js) > 200)
        return fprintf(stderr,
                       "jprof-agent: --jfr-settings '%s': expected jprof, or a .jfc name or path "
                       "without spaces, commas or '='\n",
                       js),
               -1;
    char msg[160];
    if (c->events && !jp_policy_kinds_parse(c->events, &r->defaults.kinds, msg, sizeof msg))
        return fprintf(stderr, "jprof-agent: --events: %s\n", msg), -1;
    if (c->snap_source && !jvm_snap_source_parse(c->snap_source, &r->collect.snap_source))
        return fprintf(stderr,
                       "jprof-agent: --snapshot-source %s: expected auto, helper or "
                       "thread-print\n",
                       c->snap_source),
               -1;
    if (!c->collector) {
        snprintf(c->collector_buf, sizeof c->collector_buf, "jprof-agent@%.250s", r->node);
        c->collector = c->collector_buf;
    }
    r->collect.collector = c->collector;
    c->up.collector = c->collector;
    c->up.version = PACKAGE_VERSION;
    r->status_ns = r->collect.window_ns;
    return 0;
}

static int k8s_start(cli *c, agent_metrics *m, jp_error *err)
{
    agent_k8s_conn conn;
    jp_err rc = c->kubeconfig ? agent_kubeconfig_load(c->kubeconfig, &conn, err)
                              : agent_k8s_conn_incluster(&conn, getenv("JPROF_K8S_SA_DIR"), err);
    if (rc != JP_OK)
        return rc;
    if (strncmp(conn.server, "http://", 7) == 0)
        fprintf(stderr, "jprof-agent: warning: the API server %s is plain http (tests only)\n",
                conn.server);
    rc = agent_k8s_watch_start(&conn, c->run.node, m, &c->run.k8s, err);
    agent_k8s_conn_cleanup(&conn);
    return rc;
}

int main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    agent_upload_opts_init(&c.up);
    agent_collect_opts_init(&c.run.collect);
    jp_policy_defaults_init(&c.run.defaults);
    c.run.scan_ns = 10 * JP_NS_PER_SEC;
    c.run.tick_ns = JP_NS_PER_SEC;
    c.metrics_listen = "127.0.0.1:9464";
    if (parse_args(&c, argc, argv) || settle(&c))
        return JP_ERR_USAGE;

    jp_stop_signals(on_signal);
    curl_global_init(CURL_GLOBAL_DEFAULT);

    agent_metrics m;
    agent_metrics_init(&m);
    agent_host_config cfg;
    agent_host_config_init(&cfg);
    jp_error err;
    jp_error_init(&err);
    jp_err rc = JP_OK;
    int port = 0;
    if (c.config_path && (rc = agent_host_config_load(c.config_path, &cfg, &err)))
        goto out;
    c.run.config = c.config_path ? &cfg : NULL;
    if (strcmp(c.metrics_listen, "off") != 0 &&
        (rc = agent_metrics_listen(&m, c.metrics_listen, &port, &err)))
        goto out;
    c.run.metrics = &m;
    c.run.collect.metrics = &m;
    if (c.up.server && (rc = agent_uploader_new(&c.up, &m, &c.run.uploader, &err)))
        goto out;
    c.run.collect.uploader = c.run.uploader;
    if (c.run.mode == AGENT_RUN_K8S && (rc = k8s_start(&c, &m, &err)))
        goto out;
    fprintf(stderr, "jprof-agent: %s mode as %s; metrics on port %d; %s\n",
            c.run.mode == AGENT_RUN_K8S ? "k8s" : "host", c.collector, port,
            c.up.server ? c.up.server : "no --server: nothing is uploaded");
    agent_run(&c.run, &stop_flag);
out:
    if (rc != JP_OK)
        fprintf(stderr, "jprof-agent: %s\n", err.msg);
    agent_k8s_watch_stop(c.run.k8s);
    agent_uploader_free(c.run.uploader, 5 * JP_NS_PER_SEC);
    agent_metrics_cleanup(&m);
    agent_host_config_cleanup(&cfg);
    jvm_cleanup_run_all();
    curl_global_cleanup();
    return rc;
}
