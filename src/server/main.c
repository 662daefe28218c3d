/* jprof-server: ingest, store, query API, web page and metrics.
 * Exit codes: 0 clean stop (SIGTERM/SIGINT), 2 usage, 1 start-up failure
 * (store, tokens, listen). See man/jprof-server.8. */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/stopsig.h"
#include "base/xalloc.h"
#include "base/timeutil.h"
#include "server/server.h"
#include "server/store_clickhouse.h"
#include "server/store_sqlite.h"

#define DEFAULT_LISTEN "127.0.0.1:8480"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(FILE *f)
{
    fprintf(
        f, "usage: jprof-server [options]\n"
           "  --listen ADDR:PORT      address to bind (default " DEFAULT_LISTEN ")\n"
           "  --data-dir DIR          embedded store directory (default ./jprof-data)\n"
           "  --retention DAYS        days kept, 1..7 (default 7; '7d' also accepted)\n"
           "  --tokens FILE           bearer tokens: TOKEN ROLE SCOPE per line\n"
           "  --insecure-no-auth      no tokens at all (loopback demo only)\n"
           "  --tls-cert FILE --tls-key FILE   serve HTTPS\n"
           "  --web-dir DIR           serve the web page from DIR (default: the built-in copy)\n"
           "  --max-connections N     concurrent connections (default 1024)\n"
           "  --threads N             request handler threads (default 4 per core, 64 with\n"
           "                          --clickhouse)\n"
           "  --jfr-jobs N            threads decoding one uploaded JFR recording\n"
           "                          (default: every core, at most 4)\n"
           "  --max-body BYTES        request body limit on the wire (default 16 MiB)\n"
           "  --max-decompressed BYTES  limit after zstd (default 128 MiB)\n"
           "  --query-budget DURATION time budget of one query (default 3s)\n"
           "  --max-clock-skew DURATION  refuse windows that start later than now + this\n"
           "                          (default 10m)\n"
           "  --metrics-no-auth       serve /metrics without a token\n"
           "  --port-file FILE        write the bound port to FILE (useful with port 0)\n"
           "  --clickhouse URL        store in ClickHouse instead (http://[USER[:PW]@]HOST:PORT/)\n"
           "  --clickhouse-user USER  --clickhouse-database DB  --clickhouse-password-file FILE\n"
           "  --clickhouse-cluster NAME  tables replicated and sharded over this cluster of\n"
           "                          the servers' remote_servers (URL,URL,...: its nodes)\n"
           "  -h, --help\n"
           "  -V, --version\n");
}

static bool parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return false;
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    else if (*end == 'g' || *end == 'G')
        v <<= 30, end++;
    if (*end || v == 0)
        return false;
    *out = (size_t)v;
    return true;
}

static int atoi_safe(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return (end == s || *end || v < 0 || v > 1000000) ? -1 : (int)v;
}

static bool parse_days(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || (*end && strcmp(end, "d") != 0) || v < 1 || v > STORE_RETENTION_MAX_DAYS)
        return false;
    *out = (int)v;
    return true;
}

/* --clickhouse and its options (the store reads the password file) */
static store_clickhouse_options ch_opt;

enum {
    O_LISTEN = 256,
    O_DATA,
    O_RET,
    O_TOK,
    O_NOAUTH,
    O_CERT,
    O_KEY,
    O_WEB,
    O_THR,
    O_BODY,
    O_DEC,
    O_BUDGET,
    O_SKEW,
    O_METRICS,
    O_PORTFILE,
    O_WORKERS,
    O_CH,
    O_CH_USER,
    O_CH_PWFILE,
    O_CH_DB,
    O_JFR_JOBS,
    O_CH_CLUSTER
};

static const struct option opts[] = {{"listen", 1, 0, O_LISTEN},
                                     {"data-dir", 1, 0, O_DATA},
                                     {"retention", 1, 0, O_RET},
                                     {"tokens", 1, 0, O_TOK},
                                     {"insecure-no-auth", 0, 0, O_NOAUTH},
                                     {"tls-cert", 1, 0, O_CERT},
                                     {"tls-key", 1, 0, O_KEY},
                                     {"web-dir", 1, 0, O_WEB},
                                     {"max-connections", 1, 0, O_THR},
                                     {"threads", 1, 0, O_WORKERS},
                                     {"jfr-jobs", 1, 0, O_JFR_JOBS},
                                     {"max-body", 1, 0, O_BODY},
                                     {"max-decompressed", 1, 0, O_DEC},
                                     {"query-budget", 1, 0, O_BUDGET},
                                     {"max-clock-skew", 1, 0, O_SKEW},
                                     {"metrics-no-auth", 0, 0, O_METRICS},
                                     {"port-file", 1, 0, O_PORTFILE},
                                     {"clickhouse", 1, 0, O_CH},
                                     {"clickhouse-user", 1, 0, O_CH_USER},
                                     {"clickhouse-password-file", 1, 0, O_CH_PWFILE},
                                     {"clickhouse-database", 1, 0, O_CH_DB},
                                     {"clickhouse-cluster", 1, 0, O_CH_CLUSTER},
                                     {"help", 0, 0, 'h'},
                                     {"version", 0, 0, 'V'},
                                     {0, 0, 0, 0}};

/* One option; returns 0, or 2 after printing a usage error. */
static int apply_option(int o, srv_config *c, const char **data_dir)
{
    jp_error e;
    jp_error_init(&e);
    switch (o) {
    case O_LISTEN:
        c->listen = optarg;
        break;
    case O_DATA:
        *data_dir = optarg;
        break;
    case O_RET:
        if (!parse_days(optarg, &c->retention_days)) {
            fprintf(stderr, "jprof-server: --retention must be 1..7 days\n");
            return 2;
        }
        break;
    case O_TOK:
        c->tokens_file = optarg;
        break;
    case O_NOAUTH:
        c->insecure_no_auth = true;
        break;
    case O_CERT:
        c->tls_cert = optarg;
        break;
    case O_KEY:
        c->tls_key = optarg;
        break;
    case O_WEB:
        c->web_dir = optarg;
        break;
    case O_THR:
        c->threads = atoi_safe(optarg);
        if (c->threads < 1 || c->threads > 4096) {
            fprintf(stderr, "jprof-server: --max-connections must be 1..4096\n");
            return 2;
        }
        break;
    case O_WORKERS:
        c->workers = atoi_safe(optarg);
        if (c->workers < 1 || c->workers > 1024) {
            fprintf(stderr, "jprof-server: --threads must be 1..1024\n");
            return 2;
        }
        break;
    case O_JFR_JOBS:
        c->jfr_jobs = atoi_safe(optarg);
        if (c->jfr_jobs < 1 || c->jfr_jobs > 256) {
            fprintf(stderr, "jprof-server: --jfr-jobs must be 1..256\n");
            return 2;
        }
        break;
    case O_BODY:
    case O_DEC:
        if (!parse_size(optarg, o == O_BODY ? &c->max_body : &c->max_decompressed)) {
            fprintf(stderr, "jprof-server: bad size '%s' (e.g. 16M)\n", optarg);
            return 2;
        }
        break;
    case O_BUDGET:
        if (jp_duration_parse(optarg, &c->query_budget_ns, &e) != JP_OK) {
            fprintf(stderr, "jprof-server: --query-budget: %s\n", e.msg);
            return 2;
        }
        break;
    case O_SKEW:
        if (jp_duration_parse(optarg, &c->max_clock_skew_ns, &e) != JP_OK) {
            fprintf(stderr, "jprof-server: --max-clock-skew: %s\n", e.msg);
            return 2;
        }
        /* the ClickHouse store looks for a batch's commit markers from the
         * day before its windows' day on */
        if (c->max_clock_skew_ns > 86400 * JP_NS_PER_SEC) {
            fprintf(stderr, "jprof-server: --max-clock-skew is at most 1d\n");
            return 2;
        }
        break;
    case O_METRICS:
        c->metrics_open = true;
        break;
    case O_PORTFILE:
        c->port_file = optarg;
        break;
    case O_CH:
        ch_opt.url = optarg;
        break;
    case O_CH_USER:
        ch_opt.user = optarg;
        break;
    case O_CH_PWFILE:
        ch_opt.password_file = optarg;
        break;
    case O_CH_DB:
        ch_opt.database = optarg;
        break;
    case O_CH_CLUSTER:
        ch_opt.cluster = optarg;
        break;
    case 'h':
        usage(stdout);
        exit(0);
    case 'V':
        puts("jprof-server " PACKAGE_VERSION);
        exit(0);
    default:
        usage(stderr);
        return 2;
    }
    return 0;
}

static int parse_args(int argc, char **argv, srv_config *c, const char **data_dir)
{
    int o, rc;
    while ((o = getopt_long(argc, argv, "hV", opts, NULL)) != -1)
        if ((rc = apply_option(o, c, data_dir)) != 0)
            return rc;
    if (optind < argc) {
        fprintf(stderr, "jprof-server: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    return 0;
}

static void config_defaults(srv_config *c)
{
    memset(c, 0, sizeof *c);
    c->listen = DEFAULT_LISTEN;
    c->retention_days = STORE_RETENTION_MAX_DAYS;
    c->threads = 1024;
    c->max_body = 16u << 20;
    c->max_decompressed = 128u << 20;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    c->jfr_jobs = ncpu < 1 ? 1 : ncpu > 4 ? 4 : (int)ncpu;
    jp_batch_limits_default(&c->limits);
    c->query_budget_ns = 3 * JP_NS_PER_SEC;
    c->max_clock_skew_ns = 600 * JP_NS_PER_SEC;
    c->query_max_rows = 100000000;
    c->query_max_stacks = 1000000;
    c->retention_interval_ns = 600 * JP_NS_PER_SEC;
    c->web_dir = NULL; /* the page compiled in (web_files.c) */
}

/* Retention on a schedule (and whenever the process has been asleep). */
typedef struct ret_thread {
    srv *s;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
} ret_thread;

static void *retention_main(void *arg)
{
    ret_thread *rt = arg;
    pthread_mutex_lock(&rt->mu);
    while (!rt->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t wait = rt->s->cfg.retention_interval_ns;
        ts.tv_sec += (time_t)(wait / JP_NS_PER_SEC);
        pthread_cond_timedwait(&rt->cv, &rt->mu, &ts);
        if (rt->stop)
            break;
        pthread_mutex_unlock(&rt->mu);
        uint32_t removed = 0;
        jp_error e;
        jp_error_init(&e);
        store *st = rt->s->st;
        if (st->ops->enforce_retention(st, rt->s->cfg.retention_days, &removed, &e) != JP_OK)
            srv_log("retention failed: %s", e.msg);
        else if (removed)
            srv_log("retention removed %u day(s) older than %d days", removed,
                    rt->s->cfg.retention_days);
        pthread_mutex_lock(&rt->mu);
    }
    pthread_mutex_unlock(&rt->mu);
    return NULL;
}

static int write_port_file(const char *path, unsigned port)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f, "%u\n", port);
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}

static bool check_security(srv *s, jp_error *e)
{
    srv_config *c = &s->cfg;
    if (c->insecure_no_auth) {
        if (!srv_listen_is_loopback(c->listen)) {
            jp_error_set(e, JP_ERR_USAGE,
                         "--insecure-no-auth is only allowed on a loopback address, not %s",
                         c->listen);
            return false;
        }
        if (c->tokens_file) {
            jp_error_set(e, JP_ERR_USAGE, "--insecure-no-auth and --tokens exclude each other");
            return false;
        }
        srv_log("WARNING: --insecure-no-auth: EVERY request is allowed without a token. "
                "Loopback demo only; never expose this server.");
        return true;
    }
    if (!c->tokens_file) {
        jp_error_set(e, JP_ERR_USAGE,
                     "--tokens FILE is required (or --insecure-no-auth for a "
                     "loopback demo)");
        return false;
    }
    return auth_load(c->tokens_file, &s->auth, e) == JP_OK;
}

int main(int argc, char **argv)
{
    static srv s;
    /* Each batch decodes into a few MB freed once it is stored, dozens at
     * once: given back at once (glibc's default), the next batch faulted
     * them in again, 12 % of the server's CPU with the ClickHouse store
     * (bench/server/run, docs/PERFORMANCE.md). RSS stays near its peak. */
    jp_heap_tune(JP_HEAP_KEEP);
    const char *data_dir = "jprof-data";
    config_defaults(&s.cfg);
    int rc = parse_args(argc, argv, &s.cfg, &data_dir);
    if (rc)
        return rc;
    jp_error e;
    jp_error_init(&e);
    if (!check_security(&s, &e)) {
        fprintf(stderr, "jprof-server: %s\n", e.msg);
        return e.code == JP_ERR_USAGE ? 2 : 1;
    }
    if (store_clock_offset_ns())
        srv_log("WARNING: JPROF_TEST_CLOCK_OFFSET is set: the clock is moved by %lld s "
                "(tests only)",
                (long long)(store_clock_offset_ns() / JP_NS_PER_SEC));
    /* The stop signals go to the main thread only: blocked here, before any
     * thread is made (the store's, the HTTP daemon's, retention), so every
     * thread inherits the mask, and taken by sigsuspend() below, which unblocks
     * them and waits in one step. With pause(), a signal handled by another
     * thread, or one that came between the flag's test and pause(), left the
     * server running after SIGTERM (seen under valgrind's memcheck, whose
     * threads run one at a time). One that comes before sigsuspend() waits. */
    jp_stop_signals(on_signal);
    sigset_t stopset, waitmask;
    sigemptyset(&stopset);
    sigaddset(&stopset, SIGINT);
    sigaddset(&stopset, SIGTERM);
    sigaddset(&stopset, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stopset, &waitmask);
    sigdelset(&waitmask, SIGINT);
    sigdelset(&waitmask, SIGTERM);
    sigdelset(&waitmask, SIGHUP);
    if (ch_opt.cluster && !ch_opt.url) {
        fprintf(stderr, "jprof-server: --clickhouse-cluster needs --clickhouse URL[,URL...]\n");
        auth_free(s.auth);
        return 2;
    }
    store_config sc = {.retention_days = s.cfg.retention_days};
    /* a write to ClickHouse holds its handler thread until its group is
     * written, so large groups need many of them (they mostly wait) */
    if (ch_opt.url && !s.cfg.workers)
        s.cfg.workers = 64;
    char store_desc[512];
    snprintf(store_desc, sizeof store_desc, "sqlite in %s", data_dir);
    if (ch_opt.url ? store_clickhouse_open(&ch_opt, &sc, &s.st, &e) != JP_OK
                   : store_sqlite_open(data_dir, &sc, &s.st, &e) != JP_OK) {
        fprintf(stderr, "jprof-server: store: %s\n", e.msg);
        auth_free(s.auth);
        return 1;
    }
    metrics_init(&s.m);
    void *daemon = NULL;
    if (srv_http_start(&s, &daemon, &e) != JP_OK) {
        fprintf(stderr, "jprof-server: %s\n", e.msg);
        store_close(s.st);
        auth_free(s.auth);
        return 1;
    }
    if (ch_opt.url)
        store_clickhouse_describe(s.st, store_desc, sizeof store_desc);
    srv_log("listening on %s (port %u), store %s, retention %d days, %zu token(s)%s", s.cfg.listen,
            s.port, store_desc, s.cfg.retention_days, auth_count(s.auth),
            s.cfg.tls_cert ? ", TLS" : "");
    if (s.cfg.port_file && write_port_file(s.cfg.port_file, s.port) != 0)
        srv_log("cannot write --port-file %s", s.cfg.port_file);
    ret_thread rt = {.s = &s};
    pthread_mutex_init(&rt.mu, NULL);
    pthread_cond_init(&rt.cv, NULL);
    pthread_t rtid;
    pthread_create(&rtid, NULL, retention_main, &rt);
    while (!stop_flag)
        sigsuspend(&waitmask);
    srv_log("stopping");
    pthread_mutex_lock(&rt.mu);
    rt.stop = true;
    pthread_cond_signal(&rt.cv);
    pthread_mutex_unlock(&rt.mu);
    pthread_join(rtid, NULL);
    srv_http_stop(&s, daemon);
    store_close(s.st);
    auth_free(s.auth);
    metrics_cleanup(&s.m);
    return 0;
}
