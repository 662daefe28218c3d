#include "agent/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "base/timeutil.h"
#include "base/xalloc.h"

void agent_metrics_init(agent_metrics *m)
{
    memset(m, 0, sizeof *m);
    pthread_mutex_init(&m->lock, NULL);
    m->listen_fd = -1;
    m->stop_pipe[0] = m->stop_pipe[1] = -1;
}

void agent_metrics_cleanup(agent_metrics *m)
{
    if (m->running) {
        ssize_t w = write(m->stop_pipe[1], "x", 1);
        (void)w;
        pthread_join(m->thread, NULL);
        m->running = 0;
    }
    if (m->listen_fd >= 0)
        close(m->listen_fd);
    for (int i = 0; i < 2; i++)
        if (m->stop_pipe[i] >= 0)
            close(m->stop_pipe[i]);
    free(m->status_json);
    pthread_mutex_destroy(&m->lock);
}

void agent_metrics_set_skipped(agent_metrics *m, const char *const *reasons, const uint64_t *counts,
                               size_t n)
{
    pthread_mutex_lock(&m->lock);
    m->nreasons = n > AGENT_REASONS_MAX ? AGENT_REASONS_MAX : n;
    for (size_t i = 0; i < m->nreasons; i++) {
        snprintf(m->reasons[i], sizeof m->reasons[i], "%s", reasons[i]);
        m->reason_counts[i] = counts[i];
    }
    pthread_mutex_unlock(&m->lock);
}

void agent_metrics_set_status(agent_metrics *m, char *json)
{
    pthread_mutex_lock(&m->lock);
    free(m->status_json);
    m->status_json = json;
    pthread_mutex_unlock(&m->lock);
}

static void metric(jp_strbuf *o, const char *name, const char *type, const char *help, uint64_t v)
{
    jp_strbuf_printf(o, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name, type, name,
                     (unsigned long long)v);
}

char *agent_metrics_render(agent_metrics *m)
{
    jp_strbuf o;
    jp_strbuf_init(&o, 0);
    static const struct {
        const char *name, *type, *help;
        size_t off;
    } simple[] = {
#define M(f, t, h) {"jprof_agent_" #f, t, h, offsetof(agent_metrics, f)}
        M(jvms_discovered, "gauge", "HotSpot JVMs found on this node"),
        M(jvms_eligible, "gauge", "JVMs the policy says to profile"),
        M(jvms_active, "gauge", "JVMs with a recording running"),
        M(attach_failures, "counter", "attach attempts that failed"),
        M(recording_failures, "counter", "recording start/stop/read failures"),
        M(windows_collected, "counter", "profile windows read from targets"),
        M(snapshots_taken, "counter", "thread snapshots taken"),
        M(snapshot_failures, "counter", "thread snapshots that failed"),
        M(heap_histograms_taken, "counter",
          "class histograms taken (jprof.io/heap-histogram; each paused its JVM)"),
        M(heap_histogram_failures, "counter", "class histograms that failed"),
        M(uploads_ok, "counter", "batches the server accepted"),
        M(uploads_retried, "counter", "upload attempts that will be retried"),
        M(uploads_rejected, "counter", "batches the server refused (400/413), not retried"),
        M(uploads_dropped, "counter", "batches dropped from the full queue"),
        M(windows_refused_future, "counter",
          "windows the server refused as starting in the future (this node's clock is ahead)"),
        M(windows_refused_retention, "counter",
          "windows the server refused as older than its retention (clock behind, or late)"),
        M(upload_dropped_bytes, "counter", "bytes dropped from the full queue"),
        M(batches_queued, "counter", "batches added to the upload queue"),
        M(batches_split, "counter", "profiles split to stay under the batch size cap"),
        M(too_large, "counter", "single stacks too large for any batch, not sent"),
        M(queue_bytes, "gauge", "bytes waiting in the upload queue"),
        M(k8s_lists, "counter", "pod lists fetched from the Kubernetes API"),
        M(k8s_relists_gone, "counter", "re-lists after a watch answered 410 Gone"),
        M(k8s_watch_events, "counter", "pod watch events received"),
        M(k8s_errors, "counter", "Kubernetes API errors"),
        M(k8s_pods, "gauge", "pods of this node known to the agent"),
#undef M
    };
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
        atomic_uint_fast64_t *p = (atomic_uint_fast64_t *)((char *)m + simple[i].off);
        metric(&o, simple[i].name, simple[i].type, simple[i].help, atomic_load(p));
    }
    int64_t last = atomic_load(&m->last_upload_ok_ns);
    jp_strbuf_printf(&o,
                     "# HELP jprof_agent_last_upload_success_seconds Unix time of the last "
                     "accepted upload (0: never)\n# TYPE jprof_agent_last_upload_success_seconds "
                     "gauge\njprof_agent_last_upload_success_seconds %.3f\n",
                     (double)last / 1e9);
    jp_strbuf_puts(&o, "# HELP jprof_agent_targets_skipped JVMs not profiled, by status reason\n"
                       "# TYPE jprof_agent_targets_skipped gauge\n");
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->nreasons; i++)
        jp_strbuf_printf(&o, "jprof_agent_targets_skipped{reason=\"%s\"} %llu\n", m->reasons[i],
                         (unsigned long long)m->reason_counts[i]);
    pthread_mutex_unlock(&m->lock);
    return jp_strbuf_take(&o);
}

static char *http_reply(int code, const char *reason, const char *ctype, const char *body,
                        size_t blen, size_t *out_len)
{
    jp_strbuf o;
    jp_strbuf_init(&o, 0);
    jp_strbuf_printf(&o,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     code, reason, ctype, blen);
    jp_strbuf_append(&o, body, blen);
    *out_len = o.len;
    return jp_strbuf_take(&o);
}

char *agent_metrics_respond(agent_metrics *m, const char *req, size_t len, size_t *out_len)
{
    const char *sp = memchr(req, ' ', len);
    const char *sp2 = sp ? memchr(sp + 1, ' ', (size_t)(req + len - sp - 1)) : NULL;
    if (!sp || !sp2)
        return http_reply(400, "Bad Request", "text/plain", "bad request\n", 12, out_len);
    if ((size_t)(sp - req) != 3 || memcmp(req, "GET", 3) != 0)
        return http_reply(405, "Method Not Allowed", "text/plain", "GET only\n", 9, out_len);
    size_t plen = (size_t)(sp2 - sp - 1);
    const char *path = sp + 1;
    const char *q = memchr(path, '?', plen);
    if (q)
        plen = (size_t)(q - path);
#define IS(p) (plen == sizeof(p) - 1 && memcmp(path, p, plen) == 0)
    if (IS("/metrics")) {
        char *body = agent_metrics_render(m);
        char *r = http_reply(200, "OK", "text/plain; version=0.0.4", body, strlen(body), out_len);
        free(body);
        return r;
    }
    if (IS("/status")) {
        pthread_mutex_lock(&m->lock);
        const char *s = m->status_json ? m->status_json : "{}";
        char *r = http_reply(200, "OK", "application/json", s, strlen(s), out_len);
        pthread_mutex_unlock(&m->lock);
        return r;
    }
    if (IS("/healthz"))
        return http_reply(200, "OK", "text/plain", "ok\n", 3, out_len);
#undef IS
    return http_reply(404, "Not Found", "text/plain", "not found\n", 10, out_len);
}

/* Reads one request head with a deadline; -1 on timeout, error or overflow. */
static ssize_t read_request(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    int64_t deadline = jp_time_mono_ns() + 2 * JP_NS_PER_SEC;
    while (len < cap - 1) {
        int64_t left = deadline - jp_time_mono_ns();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)(left / 1000000) + 1) <= 0)
            return -1;
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n <= 0)
            return -1;
        len += (size_t)n;
        buf[len] = '\0';
        if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
            return (ssize_t)len;
    }
    return -1;
}

static void serve_one(agent_metrics *m, int fd)
{
    char req[AGENT_HTTP_REQ_MAX];
    ssize_t n = read_request(fd, req, sizeof req);
    size_t out_len;
    char *resp = n < 0 ? http_reply(400, "Bad Request", "text/plain", "bad request\n", 12, &out_len)
                       : agent_metrics_respond(m, req, (size_t)n, &out_len);
    for (size_t off = 0; off < out_len;) {
        ssize_t w = send(fd, resp + off, out_len - off, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    free(resp);
}

static void *responder(void *arg)
{
    agent_metrics *m = arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = m->listen_fd, .events = POLLIN},
                              {.fd = m->stop_pipe[0], .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            break;
        if (!(p[0].revents & POLLIN))
            continue;
        int fd = accept4(m->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        struct timeval tv = {.tv_sec = 2};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        serve_one(m, fd);
        close(fd);
    }
    return NULL;
}

static jp_err parse_addr(const char *addr, struct sockaddr_storage *ss, socklen_t *sl,
                         jp_error *err)
{
    char host[128];
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || !colon[1])
        return jp_error_set(err, JP_ERR_USAGE, "--metrics-listen %s: expected ADDR:PORT", addr);
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535)
        return jp_error_set(err, JP_ERR_USAGE, "--metrics-listen %s: bad port", addr);
    size_t hl = (size_t)(colon - addr);
    if (addr[0] == '[' && hl >= 2 && addr[hl - 1] == ']')
        snprintf(host, sizeof host, "%.*s", (int)(hl - 2), addr + 1);
    else
        snprintf(host, sizeof host, "%.*s", (int)hl, addr);
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)port);
        *sl = sizeof *in4;
    } else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        *sl = sizeof *in6;
    } else
        return jp_error_set(err, JP_ERR_USAGE, "--metrics-listen %s: not an IP address", addr);
    return JP_OK;
}

jp_err agent_metrics_listen(agent_metrics *m, const char *addr, int *bound_port, jp_error *err)
{
    struct sockaddr_storage ss;
    socklen_t sl = 0;
    jp_err rc = parse_addr(addr, &ss, &sl, err);
    if (rc != JP_OK)
        return rc;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0)
        return jp_error_set(err, JP_ERR_IO, "socket: %s", strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 16) != 0) {
        rc = jp_error_set(err, JP_ERR_IO, "--metrics-listen %s: %s", addr, strerror(errno));
        close(fd);
        return rc;
    }
    if (bound_port) {
        struct sockaddr_storage b;
        memset(&b, 0, sizeof b);
        socklen_t bl = sizeof b;
        if (getsockname(fd, (struct sockaddr *)&b, &bl) != 0) {
            rc = jp_error_set(err, JP_ERR_IO, "--metrics-listen %s: getsockname: %s", addr,
                              strerror(errno));
            close(fd);
            return rc;
        }
        *bound_port = ntohs(b.ss_family == AF_INET ? ((struct sockaddr_in *)&b)->sin_port
                                                   : ((struct sockaddr_in6 *)&b)->sin6_port);
    }
    if (pipe2(m->stop_pipe, O_CLOEXEC) != 0) {
        close(fd);
        return jp_error_set(err, JP_ERR_IO, "pipe: %s", strerror(errno));
    }
    m->listen_fd = fd;
    if (pthread_create(&m->thread, NULL, responder, m) != 0)
        return jp_error_set(err, JP_ERR_INTERNAL, "cannot start the /metrics thread");
    m->running = 1;
    return JP_OK;
}
