/* load.c - jprof-server benchmark client: ingest throughput and query latency.
 *
 * Builds JVMS x WINDOWS one-minute profile windows of STACKS stacks each
 * (JVMs split over SERVICES services of the same synthetic application, so
 * stacks repeat across pods as they do in a real fleet), posts them as
 * zstd-compressed batches from THREADS connections (64: as many agents
 * uploading at once; a store that groups concurrent batches into one
 * commit, as both do, needs them), then times QUERIES flamegraph and top
 * requests for one service, one kind, one hour. Prints the figures;
 * bench/server/run adds the server's peak RSS. A run fails (exit 1, each
 * failure said on stderr) when an upload is never acknowledged or a query
 * does not answer 200.
 *
 * A fleet (--agents N, --seconds T): N agents (collectors) with one JVM
 * each upload their WINDOWS windows spread evenly over T seconds (without
 * --seconds: at once, as fast as the server takes them), each upload
 * retried (--retry S seconds, on the next of --url's servers)
 * until it is acknowledged, as an agent does; it prints the upload latency
 * and, with --cpu NAME=PID[+PID...], the stack rows per CPU second each
 * named group of processes (jprof-servers, ClickHouse nodes) used.
 * --totals 1 prints, per service, the samples and value of the acknowledged
 * batches (what the server must answer: tests compare); --totals 2 also
 * each batch: its pod and window start, samples, value, whether it was
 * acknowledged and how often it was refused (429/503) or not answered
 * before.
 *
 * --pace SECONDS (bench/soak/run): a fleet in real time instead, for that
 * long: each of the JVMS uploads the window of the minute just over once a
 * minute, the uploads spread evenly over the minute, and a flamegraph and a
 * top query every 10 s; one line per minute (batches, errors, query p95).
 * --namespace NS (default bench): the namespace written and queried. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "wire/batch.h"
#include "wire/batch_json.h"
#include "wire/zstd_frame.h"

#define LOAD_URLS_MAX 8
#define LOAD_CPU_MAX 8

typedef struct cpu_group {
    char name[32];
    int pids[16];
    int npids;
    double t0;
} cpu_group;

typedef struct cfg {
    const char *url, *token;
    const char *ns;                  /* the namespace of the windows and queries (--namespace) */
    const char *urls[LOAD_URLS_MAX]; /* --url URL[,URL...] */
    int nurls;
    int server_pid; /* to read the server's CPU time (0 = unknown) */
    int jvms, services, windows, stacks, depth, threads, queries;
    int ingest;  /* 0: only query data already there (--ingest 0) */
    int settle;  /* seconds to wait after ingest (the server's 30 s rollup pass) */
    int pace;    /* > 0: the paced soak mode, for this many seconds */
    int seconds; /* > 0: the uploads spread over this many seconds (a fleet) */
    int retry;   /* seconds an upload is retried until acknowledged, 0 none */
    int fleet;   /* --agents: each JVM is an agent (a collector) of its own */
    int totals;  /* print the acknowledged batches' totals per service */
    cpu_group cpu[LOAD_CPU_MAX];
    int ncpu;
} cfg;

typedef struct job {
    const cfg *c;
    char **bodies; /* pre-built zstd batches, so the timing measures the server */
    size_t *lens;
    uint64_t *samples, *values; /* of each batch */
    bool *acked;
    uint16_t *refused; /* of each batch: answers 429/503 (retry later), */
    uint16_t *unknown; /* and tries without an answer (outcome unknown) */
    int64_t *lat;      /* ns from the first try to the acknowledgement */
    int next;          /* next (jvm, window) pair, under mu */
    pthread_mutex_t mu;
    uint64_t rows, batches, bytes, errors, retries;
    int64_t now, t0;
} job;

static size_t sink(void *p, size_t sz, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return sz * n;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The id of a JVM's batch of one window. */
static void batch_id(char *buf, size_t size, int jvm, int win, int64_t now)
{
    snprintf(buf, size, "bench-%d-%d-%lld-%d", jvm, win, (long long)(now / JP_NS_PER_SEC),
             (int)getpid());
}

/* One window's batch: stacks of the service's application, values random. */
static char *make_batch(const cfg *c, int jvm, int win, int64_t now, size_t *len, uint64_t *samples,
                        uint64_t *value)
{
    jp_batch b;
    jp_batch_init(&b);
    char buf[160];
    int svc = jvm % c->services;
    batch_id(buf, sizeof buf, jvm, win, now);
    b.id = jp_xstrdup(buf);
    snprintf(buf, sizeof buf, "bench@node-%d", c->fleet ? jvm : 0);
    b.collector = jp_xstrdup(buf);
    int nframes = c->stacks * 2;
    for (int f = 0; f < nframes; f++) {
        snprintf(buf, sizeof buf, "com.bench.app%d.pkg%d.Class%d.method%d", svc, f % 37, f % 211,
                 f);
        jp_batch_add_frame(&b, buf, strlen(buf));
    }
    uint32_t *fr = jp_xcalloc((size_t)c->depth + 1, sizeof *fr);
    for (int s = 0; s < c->stacks; s++) {
        uint64_t st =
            0x9e3779b97f4a7c15ULL * (uint64_t)(s + 1) + (uint64_t)svc; /* same per service */
        int depth = c->depth / 2 + (int)(rng_next(&st) % (uint64_t)(c->depth / 2 + 1));
        for (int d = 0; d < depth; d++)
            fr[d] = d < 4 ? (uint32_t)d : (uint32_t)(rng_next(&st) % (uint64_t)nframes);
        fr[depth - 1] = (uint32_t)(s % nframes); /* distinct leaves keep stacks distinct */
        jp_batch_add_stack(&b, fr, (uint32_t)depth, false);
    }
    free(fr);
    jp_batch_window *w = jp_batch_add_window(&b);
    snprintf(buf, sizeof buf, "svc%d", svc);
    w->target.ns = jp_xstrdup(c->ns);
    w->target.service = jp_xstrdup(buf);
    snprintf(buf, sizeof buf, "svc%d-pod%d", svc, jvm);
    w->target.pod = jp_xstrdup(buf);
    w->kind = JP_KIND_CPU;
    int64_t minute = 60 * JP_NS_PER_SEC;
    w->start_ns = (now / minute - c->windows + win) * minute;
    w->end_ns = w->start_ns + minute;
    w->period_ns = 10000000;
    uint64_t r = (uint64_t)(jvm * 7919 + win * 104729 + 1);
    *samples = *value = 0;
    for (int s = 0; s < c->stacks; s++) {
        uint64_t n = 1 + rng_next(&r) % 50;
        jp_batch_window_add_row(w, (uint32_t)s, JP_BATCH_NO_THREAD, n, n * 10000000);
        w->events += n;
        *samples += n;
        *value += n * 10000000;
    }
    char *json = jp_batch_json_encode(&b, len);
    jp_batch_cleanup(&b);
    uint8_t *z;
    size_t zlen;
    jp_error e;
    jp_error_init(&e);
    if (jp_zstd_compress(json, *len, 3, &z, &zlen, &e) != JP_OK) {
        fprintf(stderr, "load: zstd: %s\n", e.msg);
        exit(1);
    }
    free(json);
    *len = zlen;
    return (char *)z;
}

/* One upload: its HTTP status, 0 when none came (the transport failed). */
static long post_one(CURL *h, const char *base, const char *body, size_t len)
{
    char url[512];
    snprintf(url, sizeof url, "%s/api/v1/ingest", base);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)len);
    long code = 0;
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    return rc == CURLE_OK ? code : 0;
}

static void *ingest_thread(void *arg)
{
    job *j = arg;
    const cfg *c = j->c;
    CURL *h = curl_easy_init();
    char auth[600];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
    struct curl_slist *hd = curl_slist_append(NULL, auth);
    hd = curl_slist_append(hd, "Content-Encoding: zstd");
    hd = curl_slist_append(hd, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    int total = c->jvms * c->windows;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        int k = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (k >= total)
            break;
        if (c->seconds) { /* a fleet: upload k is due at its share of the time */
            int64_t due = j->t0 + (int64_t)((double)k / total * c->seconds * 1e9);
            int64_t wait = due - jp_time_mono_ns();
            if (wait > 0)
                usleep((useconds_t)(wait / 1000));
        }
        int64_t t0 = jp_time_mono_ns();
        bool ok = false;
        int tries = 0;
        /* retried like an agent: backoff, then the next server */
        long code = 0;
        unsigned refused = 0, unknown = 0;
        for (;; tries++) {
            code = post_one(h, c->urls[(k + tries) % c->nurls], j->bodies[k], j->lens[k]);
            ok = code == 200;
            refused += code == 429 || code == 503;
            unknown += code == 0;
            if (ok || !c->retry || jp_time_mono_ns() - t0 > (int64_t)c->retry * JP_NS_PER_SEC)
                break;
            usleep((useconds_t)(tries < 5 ? 50000 << tries : 2000000));
        }
        if (!ok && code)
            fprintf(stderr, "load: batch %d not acknowledged after %d tries (last: HTTP %ld)\n", k,
                    tries + 1, code);
        else if (!ok)
            fprintf(stderr, "load: batch %d not acknowledged after %d tries (last: no answer)\n", k,
                    tries + 1);
        pthread_mutex_lock(&j->mu);
        j->retries += (uint64_t)tries;
        j->refused[k] = (uint16_t)(refused < 65535 ? refused : 65535);
        j->unknown[k] = (uint16_t)(unknown < 65535 ? unknown : 65535);
        if (!ok)
            j->errors++;
        else {
            j->acked[k] = true;
            j->lat[k] = jp_time_mono_ns() - t0;
            j->batches++;
            j->rows += (uint64_t)c->stacks;
            j->bytes += j->lens[k];
        }
        pthread_mutex_unlock(&j->mu);
    }
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    return NULL;
}

/* utime + stime of a process in seconds (from /proc/PID/stat), or -1. */
static double proc_cpu(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = pid > 0 ? fopen(path, "r") : NULL;
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct reply {
    char text[240]; /* the start of the answer, for the message of a failure */
    size_t len;
} reply;

static size_t keep_start(void *p, size_t sz, size_t n, void *ud)
{
    reply *r = ud;
    size_t got = sz * n, room = sizeof r->text - 1 - r->len;
    size_t take = got < room ? got : room;
    memcpy(r->text + r->len, p, take);
    r->len += take;
    r->text[r->len] = '\0';
    return got;
}

/* QUERIES flamegraph or top requests (to the first of --url's servers
 * that answers); latency percentiles of those answered. Returns the number that failed, each said
 * on stderr (the first with the answer's start): a failed query is a failed run, never a line of
 * figures measured on errors. */
static int query_bench(const cfg *c, const char *what, const char *extra)
{
    CURL *h = curl_easy_init();
    char url[1024], auth[600];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
    struct curl_slist *hd = curl_slist_append(NULL, auth);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep_start);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
    int64_t *lat = jp_xcalloc((size_t)c->queries + 1, sizeof *lat);
    int errors = 0, n = 0;
    for (int i = 0; i < c->queries; i++) {
        reply r;
        int64_t t0 = jp_time_mono_ns();
        long code = 0;
        CURLcode rc = CURLE_OK;
        /* the first server, the next when one does not answer (a fleet's
         * servers can be down in turn, as the uploads' retries assume) */
        for (int u = 0; u < c->nurls; u++) {
            snprintf(url, sizeof url,
                     "%s/api/v1/%s?namespace=%s&service=svc%d&kind=cpu&from=-%dm&to=now%s",
                     c->urls[u], what, c->ns, i % c->services, c->windows + 1, extra);
            r.len = 0;
            r.text[0] = '\0';
            curl_easy_setopt(h, CURLOPT_URL, url);
            curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
            rc = curl_easy_perform(h);
            if (rc == CURLE_OK)
                break;
        }
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        if (rc == CURLE_OK && code == 200) {
            lat[n++] = jp_time_mono_ns() - t0;
            continue;
        }
        r.text[strcspn(r.text, "\r\n")] = '\0';
        if (rc != CURLE_OK)
            fprintf(stderr, "load: %s query %d: %s%s%s\n", what, i + 1, curl_easy_strerror(rc),
                    errors ? "" : ": ", errors ? "" : url);
        else
            fprintf(stderr, "load: %s query %d: HTTP %ld %s%s%s\n", what, i + 1, code, r.text,
                    errors ? "" : ": ", errors ? "" : url);
        errors++;
    }
    if (n) {
        qsort(lat, (size_t)n, sizeof *lat, cmp_i64);
        printf("%-10s p50 %8.1f ms   p95 %8.1f ms   max %8.1f ms   (%d queries, %d errors)\n", what,
               (double)lat[n / 2] / 1e6,
               (double)lat[(n * 95) / 100 < n ? (n * 95) / 100 : n - 1] / 1e6,
               (double)lat[n - 1] / 1e6, c->queries, errors);
    }
    if (errors)
        fprintf(stderr, "load: %d of %d %s queries failed\n", errors, c->queries, what);
    free(lat);
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    return errors;
}

/* One request; true on HTTP 200. */
static bool post_or_get(CURL *h, const char *url, const char *body, size_t len)
{
    curl_easy_setopt(h, CURLOPT_URL, url);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)len);
    } else {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    }
    long code = 0;
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    return rc == CURLE_OK && code == 200;
}

/* --pace: the fleet in real time (see the top of the file). */
static int paced(const cfg *c)
{
    CURL *h = curl_easy_init();
    char url[1024], auth[600];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
    struct curl_slist *ing = curl_slist_append(NULL, auth);
    ing = curl_slist_append(ing, "Content-Encoding: zstd");
    ing = curl_slist_append(ing, "Content-Type: application/json");
    struct curl_slist *qh = curl_slist_append(NULL, auth);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    const int64_t t0 = jp_time_mono_ns(), step = 60 * JP_NS_PER_SEC / c->jvms;
    int64_t next_q = t0;
    uint64_t sent = 0, errors = 0, min_sent = 0, min_err = 0, queries = 0, qerrors = 0;
    int64_t lat[64];
    int nlat = 0, minute = 0;
    printf("paced: %d JVMs, one %d-stack window each per minute (%.1f stack rows/s), %d s\n",
           c->jvms, c->stacks, (double)c->jvms * c->stacks / 60.0, c->pace);
    fflush(stdout);
    for (int64_t k = 0;; k++) {
        int64_t due = t0 + k * step, now = jp_time_mono_ns();
        if (due - t0 >= (int64_t)c->pace * JP_NS_PER_SEC)
            break;
        while (now < due) { /* queries in the gaps, every 10 s */
            if (now >= next_q) {
                for (int w = 0; w < 2; w++) {
                    snprintf(url, sizeof url,
                             "%s/api/v1/%s?namespace=%s&service=svc%d&kind=cpu&from=-1h&to=now%s",
                             c->url, w ? "top" : "flamegraph", c->ns,
                             (int)(queries % (uint64_t)c->services),
                             w ? "&limit=100" : "&max_nodes=2000");
                    curl_easy_setopt(h, CURLOPT_HTTPHEADER, qh);
                    int64_t q0 = jp_time_mono_ns();
                    if (!post_or_get(h, url, NULL, 0))
                        qerrors++;
                    if (nlat < 64)
                        lat[nlat++] = jp_time_mono_ns() - q0;
                    queries++;
                }
                next_q += 10 * JP_NS_PER_SEC;
            }
            now = jp_time_mono_ns();
            int64_t nap = (next_q < due ? next_q : due) - now;
            if (nap > 0)
                usleep((useconds_t)(nap / 1000 < 200000 ? nap / 1000 : 200000));
            now = jp_time_mono_ns();
        }
        size_t len;
        uint64_t ns, nv;
        char *body =
            make_batch(c, (int)(k % c->jvms), c->windows - 1, jp_time_now_ns(), &len, &ns, &nv);
        snprintf(url, sizeof url, "%s/api/v1/ingest", c->url);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, ing);
        if (post_or_get(h, url, body, len))
            sent++;
        else
            errors++;
        free(body);
        if ((due - t0) / (60 * JP_NS_PER_SEC) > minute) {
            qsort(lat, (size_t)nlat, sizeof *lat, cmp_i64);
            char p95[48] = "none this minute (the uploads took all of it)";
            if (nlat)
                snprintf(p95, sizeof p95, "p95 %.1f ms",
                         (double)lat[(nlat * 95) / 100 < nlat ? (nlat * 95) / 100 : nlat - 1] /
                             1e6);
            printf("minute %3d: %llu batches, %llu errors; queries %s, %llu errors\n", minute + 1,
                   (unsigned long long)(sent - min_sent), (unsigned long long)(errors - min_err),
                   p95, (unsigned long long)qerrors);
            fflush(stdout);
            min_sent = sent;
            min_err = errors;
            nlat = 0;
            minute++;
        }
    }
    printf("paced total: %llu batches (%llu stack rows), %llu errors; %llu queries, %llu errors\n",
           (unsigned long long)sent, (unsigned long long)sent * (unsigned long long)c->stacks,
           (unsigned long long)errors, (unsigned long long)queries, (unsigned long long)qerrors);
    curl_slist_free_all(ing);
    curl_slist_free_all(qh);
    curl_easy_cleanup(h);
    return errors || qerrors ? 1 : 0;
}

/* --url URL[,URL...] into c->urls. */
static bool split_urls(cfg *c)
{
    static char copy[2048];
    snprintf(copy, sizeof copy, "%s", c->url);
    for (char *save = NULL, *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (c->nurls == LOAD_URLS_MAX) {
            fprintf(stderr, "load: at most %d URLs\n", LOAD_URLS_MAX);
            return false;
        }
        c->urls[c->nurls++] = p;
    }
    if (!c->nurls) {
        fprintf(stderr, "load: --url needs a URL\n");
        return false;
    }
    c->url = c->urls[0]; /* queries go to the first */
    return true;
}

/* --cpu NAME=PID[+PID...] */
static bool parse_cpu(cfg *c, const char *v)
{
    const char *eq = strchr(v, '=');
    if (!eq || c->ncpu == LOAD_CPU_MAX || eq - v >= 32) {
        fprintf(stderr, "load: --cpu NAME=PID[+PID...] (at most %d)\n", LOAD_CPU_MAX);
        return false;
    }
    cpu_group *g = &c->cpu[c->ncpu++];
    snprintf(g->name, sizeof g->name, "%.*s", (int)(eq - v), v);
    for (const char *p = eq + 1; *p && g->npids < 16;) {
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p || pid <= 0)
            break;
        g->pids[g->npids++] = (int)pid;
        p = *end == '+' ? end + 1 : end;
    }
    return g->npids > 0;
}

static double group_cpu(const cpu_group *g)
{
    double t = 0;
    for (int i = 0; i < g->npids; i++) {
        double x = proc_cpu(g->pids[i]);
        t += x > 0 ? x : 0;
    }
    return t;
}

/* The acknowledged batches' totals per service (what the server must answer). */
static void print_totals(const job *j, size_t total)
{
    const cfg *c = j->c;
    for (int svc = 0; svc < c->services; svc++) {
        uint64_t samples = 0, value = 0, batches = 0;
        for (size_t k = 0; k < total; k++)
            if (j->acked[k] && (int)(k % (size_t)c->jvms) % c->services == svc) {
                samples += j->samples[k];
                value += j->values[k];
                batches++;
            }
        printf("totals svc%d batches %llu samples %llu value %llu\n", svc,
               (unsigned long long)batches, (unsigned long long)samples, (unsigned long long)value);
    }
    if (c->totals < 2)
        return;
    /* --totals 2: each batch, so a test can find every one (its pod and
     * window start name it) and tell those refused before they were
     * acknowledged */
    int64_t minute = 60 * JP_NS_PER_SEC;
    for (size_t k = 0; k < total; k++) {
        int jvm = (int)(k % (size_t)c->jvms), win = (int)(k / (size_t)c->jvms);
        char id[96];
        batch_id(id, sizeof id, jvm, win, j->now);
        printf("batch %s pod svc%d-pod%d start_ns %lld samples %llu value %llu acked %d "
               "refused %u unanswered %u\n",
               id, jvm % c->services, jvm,
               (long long)((j->now / minute - c->windows + win) * minute),
               (unsigned long long)j->samples[k], (unsigned long long)j->values[k], j->acked[k],
               j->refused[k], j->unknown[k]);
    }
}

static int cmp_i64(const void *a, const void *b);

/* Upload latency percentiles of the acknowledged batches. */
static void print_latency(const job *j, size_t total)
{
    int64_t *v = jp_xcalloc(total + 1, sizeof *v);
    size_t n = 0;
    for (size_t k = 0; k < total; k++)
        if (j->acked[k])
            v[n++] = j->lat[k];
    if (n) {
        qsort(v, n, sizeof *v, cmp_i64);
        printf("ingest     upload latency p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms; "
               "%llu retries\n",
               (double)v[n / 2] / 1e6, (double)v[n * 95 / 100] / 1e6, (double)v[n * 99 / 100] / 1e6,
               (double)v[n - 1] / 1e6, (unsigned long long)j->retries);
    }
    free(v);
}

static void run_ingest(job *j, size_t total, size_t zbytes)
{
    cfg *c = (cfg *)j->c;
    printf("built %zu batches, %.1f MB zstd, %.1f MB zstd per batch on average\n", total,
           (double)zbytes / 1e6, (double)zbytes / 1e6 / (double)total);
    fflush(stdout);
    pthread_t th[256];
    double cpu0 = proc_cpu(c->server_pid);
    for (int g = 0; g < c->ncpu; g++)
        c->cpu[g].t0 = group_cpu(&c->cpu[g]);
    j->t0 = jp_time_mono_ns();
    for (int i = 0; i < c->threads; i++)
        pthread_create(&th[i], NULL, ingest_thread, j);
    for (int i = 0; i < c->threads; i++)
        pthread_join(th[i], NULL);
    double secs = (double)(jp_time_mono_ns() - j->t0) / 1e9;
    printf("ingest     %llu batches, %llu stack rows, %.1f MB zstd in %.2f s: %.0f stack rows/s, "
           "%.1f batches/s, %llu errors\n",
           (unsigned long long)j->batches, (unsigned long long)j->rows, (double)j->bytes / 1e6,
           secs, (double)j->rows / secs, (double)j->batches / secs, (unsigned long long)j->errors);
    double cpu1 = proc_cpu(c->server_pid);
    if (cpu0 >= 0 && cpu1 > cpu0)
        printf("ingest     server CPU %.2f s: %.0f stack rows per server CPU second\n", cpu1 - cpu0,
               (double)j->rows / (cpu1 - cpu0));
    for (int g = 0; g < c->ncpu; g++) {
        double used = group_cpu(&c->cpu[g]) - c->cpu[g].t0;
        if (used > 0)
            printf("cpu        %s: %.2f s of CPU over %.2f s: %.0f stack rows per CPU second, "
                   "%.2f cores busy\n",
                   c->cpu[g].name, used, secs, (double)j->rows / used, used / secs);
    }
    print_latency(j, total);
    if (c->totals)
        print_totals(j, total);
    fflush(stdout);
}

static void load_usage(FILE *o)
{
    fputs("usage: load [--url URL[,URL...]] [--token T] [--namespace NS] [SIZES] [MODE]\n"
          "jprof-server's benchmark client (bench/server/run drives it); every option takes a "
          "value.\n"
          "  sizes: --jvms N (50) --services N (5) --windows N (60) --stacks N (2000) --depth N "
          "(24)\n"
          "         --threads N upload connections (64, at most 256) --queries N (40)\n"
          "         --settle S seconds before the queries (35) --ingest 0|1 (1)\n"
          "  fleet: --agents N --seconds T --retry S --totals 0|1|2 --cpu NAME=PID[+PID...]\n"
          "  real time: --pace SECONDS\n"
          "  --server-pid PID: the server's CPU time per stack row\n"
          "The URL defaults to http://127.0.0.1:8480. The file's header says what each mode "
          "does.\n",
          o);
}

int main(int argc, char **argv)
{
    cfg c = {.url = "http://127.0.0.1:8480",
             .token = "",
             .ns = "bench",
             .jvms = 50,
             .services = 5,
             .windows = 60,
             .stacks = 2000,
             .depth = 24,
             .threads = 64,
             .queries = 40,
             .ingest = 1,
             .settle = 35};
    for (int i = 1; i < argc; i += 2) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(k, "--help") || !strcmp(k, "-h")) {
            load_usage(stdout);
            return 0;
        }
        if (!v) {
            fprintf(stderr, "load: %s needs a value (--help lists the options)\n", k);
            return 2;
        }
        char *end;
        long nl = strtol(v, &end, 10);
        int n = *end || end == v || nl < 0 || nl > 100000000 ? -1 : (int)nl;
        if (n < 0 && strcmp(k, "--url") && strcmp(k, "--token") && strcmp(k, "--namespace") &&
            strcmp(k, "--cpu")) {
            fprintf(stderr, "load: %s '%s': not a number from 0 to 100000000\n", k, v);
            return 2;
        }
        if (!strcmp(k, "--url"))
            c.url = v;
        else if (!strcmp(k, "--token"))
            c.token = v;
        else if (!strcmp(k, "--jvms"))
            c.jvms = n;
        else if (!strcmp(k, "--services"))
            c.services = n;
        else if (!strcmp(k, "--windows"))
            c.windows = n;
        else if (!strcmp(k, "--stacks"))
            c.stacks = n;
        else if (!strcmp(k, "--depth"))
            c.depth = n;
        else if (!strcmp(k, "--threads"))
            c.threads = n;
        else if (!strcmp(k, "--settle"))
            c.settle = n;
        else if (!strcmp(k, "--ingest"))
            c.ingest = n;
        else if (!strcmp(k, "--server-pid"))
            c.server_pid = n;
        else if (!strcmp(k, "--queries"))
            c.queries = n;
        else if (!strcmp(k, "--pace"))
            c.pace = n;
        else if (!strcmp(k, "--namespace"))
            c.ns = v;
        else if (!strcmp(k, "--agents")) {
            c.jvms = n; /* one JVM each */
            c.fleet = 1;
        } else if (!strcmp(k, "--seconds"))
            c.seconds = n;
        else if (!strcmp(k, "--retry"))
            c.retry = n;
        else if (!strcmp(k, "--totals"))
            c.totals = n;
        else if (!strcmp(k, "--cpu")) {
            if (!parse_cpu(&c, v))
                return 2;
        } else {
            fprintf(stderr, "load: unknown option %s\n", k);
            return 2;
        }
    }
    if (c.jvms < 1 || c.services < 1 || c.windows < 1 || c.stacks < 1 || c.depth < 2 ||
        c.threads < 1 || c.threads > 256 || c.queries < 1) {
        fprintf(stderr, "load: bad sizes\n");
        return 2;
    }
    if (!split_urls(&c))
        return 2;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (c.pace > 0) {
        int rc = paced(&c);
        curl_global_cleanup();
        return rc;
    }
    job j = {.c = &c, .now = jp_time_now_ns()};
    pthread_mutex_init(&j.mu, NULL);
    printf("size: %d JVMs (%d services) x %d one-minute windows x %d stacks (depth %d-%d), "
           "%d upload threads%s\n",
           c.jvms, c.services, c.windows, c.stacks, c.depth / 2, c.depth, c.threads,
           c.seconds ? ", spread over the time given" : "");
    /* window-major order: like a fleet, every JVM uploads each minute */
    size_t total = c.ingest ? (size_t)c.jvms * (size_t)c.windows : 0, zbytes = 0;
    j.bodies = jp_xcalloc(total + 1, sizeof *j.bodies);
    j.lens = jp_xcalloc(total + 1, sizeof *j.lens);
    j.samples = jp_xcalloc(total + 1, sizeof *j.samples);
    j.values = jp_xcalloc(total + 1, sizeof *j.values);
    j.acked = jp_xcalloc(total + 1, sizeof *j.acked);
    j.refused = jp_xcalloc(total + 1, sizeof *j.refused);
    j.unknown = jp_xcalloc(total + 1, sizeof *j.unknown);
    j.lat = jp_xcalloc(total + 1, sizeof *j.lat);
    for (size_t k = 0; k < total; k++) {
        j.bodies[k] = make_batch(&c, (int)(k % (size_t)c.jvms), (int)(k / (size_t)c.jvms), j.now,
                                 &j.lens[k], &j.samples[k], &j.values[k]);
        zbytes += j.lens[k];
    }
    if (total)
        run_ingest(&j, total, zbytes);
    if (total && c.settle > 0) {
        printf("waiting %d s for the server's rollup pass (steady state)\n", c.settle);
        fflush(stdout);
        sleep((unsigned)c.settle);
    }
    fflush(stdout);
    int qerrors = query_bench(&c, "flamegraph", "&max_nodes=2000");
    qerrors += query_bench(&c, "top", "&limit=100");
    for (size_t k = 0; k < total; k++)
        free(j.bodies[k]);
    free(j.bodies);
    free(j.lens);
    free(j.samples);
    free(j.values);
    free(j.acked);
    free(j.refused);
    free(j.unknown);
    free(j.lat);
    curl_global_cleanup();
    if (j.errors)
        fprintf(stderr, "load: %llu uploads never acknowledged\n", (unsigned long long)j.errors);
    return j.errors || qerrors ? 1 : 0;
}
