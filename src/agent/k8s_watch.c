#include "agent/k8s_watch.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "agent/upload.h"
#include "base/strbuf.h"
#include "base/timeutil.h"
#include "base/xalloc.h"

#define WATCH_TIMEOUT_S 300

struct agent_k8s_watch {
    agent_k8s_conn conn;
    char *node;
    agent_metrics *m, dummy;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
    bool synced;
    jp_pod_list pods; /* under lock */
    char last_error[256];
    /* per-watch-request state (thread only) */
    jp_strbuf line;
    bool gone, failed, overflow;
};

static void set_error(agent_k8s_watch *w, const char *msg)
{
    pthread_mutex_lock(&w->lock);
    snprintf(w->last_error, sizeof w->last_error, "%.250s", msg);
    pthread_mutex_unlock(&w->lock);
    if (msg[0])
        atomic_fetch_add(&w->m->k8s_errors, 1);
}

/* ---- the pod table (lock held) ---- */

static void table_upsert(agent_k8s_watch *w, jp_pod *p)
{
    jp_pod_list *l = &w->pods;
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i].uid, p->uid) == 0) {
            jp_pod_cleanup(&l->items[i]);
            jp_pod_move(&l->items[i], p);
            return;
        }
    if (l->count >= JP_POD_LIST_MAX)
        return;
    l->items = jp_xgrow(l->items, &l->cap, l->count + 1, sizeof *l->items);
    jp_pod_move(&l->items[l->count++], p);
}

static void table_delete(agent_k8s_watch *w, const char *uid)
{
    jp_pod_list *l = &w->pods;
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i].uid, uid) == 0) {
            jp_pod_cleanup(&l->items[i]);
            l->items[i] = l->items[--l->count];
            return;
        }
}

static void set_rv(agent_k8s_watch *w, const char *rv)
{
    if (!rv)
        return;
    free(w->pods.resource_version);
    w->pods.resource_version = jp_xstrdup(rv);
}

/* ---- HTTP ---- */

typedef struct body {
    jp_strbuf buf;
    agent_k8s_watch *w;
    bool watch;
} body;

static void handle_line(agent_k8s_watch *w, const char *line, size_t len)
{
    if (len == 0)
        return;
    jp_pod_watch_event ev;
    jp_error err;
    jp_error_init(&err);
    if (jp_pod_watch_event_parse(line, len, &ev, &err) != JP_OK) {
        char msg[300];
        snprintf(msg, sizeof msg, "watch event: %.250s", err.msg);
        set_error(w, msg);
        w->failed = true;
        jp_pod_cleanup(&ev.pod);
        return;
    }
    atomic_fetch_add(&w->m->k8s_watch_events, 1);
    pthread_mutex_lock(&w->lock);
    switch (ev.type) {
    case JP_POD_WATCH_ADDED:
    case JP_POD_WATCH_MODIFIED:
        set_rv(w, ev.pod.resource_version);
        table_upsert(w, &ev.pod);
        break;
    case JP_POD_WATCH_DELETED:
        set_rv(w, ev.pod.resource_version);
        table_delete(w, ev.pod.uid);
        break;
    case JP_POD_WATCH_BOOKMARK:
        set_rv(w, ev.pod.resource_version);
        break;
    case JP_POD_WATCH_GONE:
        w->gone = true;
        break;
    case JP_POD_WATCH_ERROR:
        snprintf(w->last_error, sizeof w->last_error, "watch error %d: %.200s", ev.code,
                 ev.message);
        w->failed = true;
        break;
    }
    atomic_store(&w->m->k8s_pods, w->pods.count);
    pthread_mutex_unlock(&w->lock);
    jp_pod_cleanup(&ev.pod);
}

static size_t on_data(char *p, size_t size, size_t n, void *ctx)
{
    body *b = ctx;
    size_t len = size * n;
    if (!b->watch) {
        if (jp_strbuf_append(&b->buf, p, len) != JP_OK)
            return 0; /* over the cap: abort */
        return len;
    }
    agent_k8s_watch *w = b->w;
    size_t total = len;
    for (;;) {
        char *nl = memchr(p, '\n', len);
        if (!nl)
            break;
        size_t part = (size_t)(nl - p);
        if (jp_strbuf_append(&b->buf, p, part) != JP_OK) {
            w->overflow = true;
            return 0;
        }
        handle_line(w, b->buf.data ? b->buf.data : "", b->buf.len);
        jp_strbuf_reset(&b->buf);
        p = nl + 1;
        len -= part + 1;
        if (w->gone || w->failed)
            return 0; /* stop reading: re-list */
    }
    if (len && jp_strbuf_append(&b->buf, p, len) != JP_OK) {
        w->overflow = true;
        return 0;
    }
    return total;
}

static int on_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    agent_k8s_watch *w = ctx;
    return __atomic_load_n(&w->stop, __ATOMIC_RELAXED) ? 1 : 0;
}

/* Performs one GET; returns the HTTP status or 0 (error text in why). */
static long http_get(agent_k8s_watch *w, const char *url, body *b, long timeout_s, char *why,
                     size_t whylen)
{
    const agent_k8s_conn *c = &w->conn;
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(why, whylen, "curl_easy_init failed");
        return 0;
    }
    struct curl_slist *hdr = curl_slist_append(NULL, "Accept: application/json");
    char auth[8192] = "";
    const char *tok = c->token;
    char filetok[4096];
    if (c->token_file) {
        FILE *f = fopen(c->token_file, "re");
        filetok[0] = '\0';
        if (f) {
            if (!fgets(filetok, sizeof filetok, f))
                filetok[0] = '\0';
            fclose(f);
        }
        filetok[strcspn(filetok, "\r\n")] = '\0';
        tok = filetok;
    }
    if (tok && *tok) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", tok);
        hdr = curl_slist_append(hdr, auth);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, w);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (c->ca) {
        struct curl_blob blob = {.data = c->ca, .len = c->ca_len, .flags = CURL_BLOB_COPY};
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    } else if (c->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
    if (c->cert && c->key) {
        struct curl_blob cb = {.data = c->cert, .len = c->cert_len, .flags = CURL_BLOB_COPY};
        struct curl_blob kb = {.data = c->key, .len = c->key_len, .flags = CURL_BLOB_COPY};
        curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cb);
        curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &kb);
    } else if (c->cert_file && c->key_file) {
        curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_file);
        curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_file);
    }
    if (c->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    CURLcode cc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (cc != CURLE_OK && !(b->watch && (w->gone || w->failed || cc == CURLE_OPERATION_TIMEDOUT)))
        snprintf(why, whylen, "%s", curl_easy_strerror(cc));
    if (cc == CURLE_OPERATION_TIMEDOUT && b->watch)
        status = status ? status : 200; /* our own cap on a quiet watch: just resume */
    if (cc != CURLE_OK && why[0])
        status = status >= 400 ? status : 0;
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    memset(auth, 0, sizeof auth);
    memset(filetok, 0, sizeof filetok);
    return status;
}

/* ---- the loop ---- */

static char *pods_url(agent_k8s_watch *w, const char *rv, bool watch)
{
    CURL *h = curl_easy_init();
    char sel[600];
    snprintf(sel, sizeof sel, "spec.nodeName=%s", w->node);
    char *esel = curl_easy_escape(h, sel, 0);
    char *erv = rv ? curl_easy_escape(h, rv, 0) : NULL;
    jp_strbuf u;
    jp_strbuf_init(&u, 0);
    jp_strbuf_printf(&u, "%s/api/v1/pods?fieldSelector=%s", w->conn.server, esel ? esel : "");
    if (watch)
        jp_strbuf_printf(&u, "&watch=1&allowWatchBookmarks=true&timeoutSeconds=%d",
                         WATCH_TIMEOUT_S);
    if (erv)
        jp_strbuf_printf(&u, "&resourceVersion=%s", erv);
    curl_free(esel);
    curl_free(erv);
    curl_easy_cleanup(h);
    return jp_strbuf_take(&u);
}

/* Waits up to ns unless stopped; returns false when stopping. */
static bool nap(agent_k8s_watch *w, int64_t ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t abs_ns = (int64_t)ts.tv_sec * JP_NS_PER_SEC + ts.tv_nsec + ns;
    ts.tv_sec = (time_t)(abs_ns / JP_NS_PER_SEC);
    ts.tv_nsec = (long)(abs_ns % JP_NS_PER_SEC);
    pthread_mutex_lock(&w->lock);
    while (!w->stop && pthread_cond_timedwait(&w->cond, &w->lock, &ts) == 0)
        ;
    bool go = !w->stop;
    pthread_mutex_unlock(&w->lock);
    return go;
}

static bool do_list(agent_k8s_watch *w)
{
    char *url = pods_url(w, NULL, false);
    body b = {.w = w};
    jp_strbuf_init(&b.buf, JP_K8S_BODY_MAX);
    char why[256] = "";
    long st = http_get(w, url, &b, 60, why, sizeof why);
    free(url);
    bool ok = false;
    char msg[400];
    jp_pod_list l;
    jp_pod_list_init(&l);
    if (st != 200) {
        snprintf(msg, sizeof msg, "list pods: %s%s%ld %.160s", why, why[0] ? "; HTTP " : "HTTP ",
                 st, b.buf.data ? b.buf.data : "");
        set_error(w, msg);
    } else {
        jp_error err;
        jp_error_init(&err);
        if (jp_pod_list_parse(b.buf.data ? b.buf.data : "", b.buf.len, &l, &err) != JP_OK) {
            snprintf(msg, sizeof msg, "list pods: %.300s", err.msg);
            set_error(w, msg);
        } else {
            pthread_mutex_lock(&w->lock);
            jp_pod_list_cleanup(&w->pods);
            w->pods = l;
            jp_pod_list_init(&l);
            w->synced = true;
            w->last_error[0] = '\0';
            atomic_store(&w->m->k8s_pods, w->pods.count);
            pthread_mutex_unlock(&w->lock);
            atomic_fetch_add(&w->m->k8s_lists, 1);
            ok = true;
        }
    }
    jp_pod_list_cleanup(&l);
    jp_strbuf_cleanup(&b.buf);
    return ok;
}

typedef enum { WATCH_RESUME, WATCH_RELIST, WATCH_FAILED } watch_end;

static watch_end do_watch(agent_k8s_watch *w)
{
    pthread_mutex_lock(&w->lock);
    char *rv = w->pods.resource_version ? jp_xstrdup(w->pods.resource_version) : NULL;
    pthread_mutex_unlock(&w->lock);
    char *url = pods_url(w, rv, true);
    free(rv);
    body b = {.w = w, .watch = true};
    jp_strbuf_init(&b.buf, JP_K8S_LINE_MAX);
    w->gone = w->failed = w->overflow = false;
    char why[256] = "";
    long st = http_get(w, url, &b, WATCH_TIMEOUT_S + 30, why, sizeof why);
    free(url);
    watch_end end = WATCH_RESUME;
    if (w->gone || st == 410) {
        atomic_fetch_add(&w->m->k8s_relists_gone, 1);
        end = WATCH_RELIST;
    } else if (w->overflow) {
        set_error(w, "watch: an event line exceeds the size limit");
        end = WATCH_FAILED;
    } else if (w->failed) {
        end = WATCH_FAILED;
    } else if (st != 200) {
        char msg[300];
        snprintf(msg, sizeof msg, "watch pods: %s%sHTTP %ld", why, why[0] ? "; " : "", st);
        set_error(w, msg);
        end = WATCH_FAILED;
    }
    jp_strbuf_cleanup(&b.buf);
    return end;
}

static void *watch_main(void *arg)
{
    agent_k8s_watch *w = arg;
    bool need_list = true;
    unsigned failures = 0;
    while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED)) {
        if (need_list) {
            if (!do_list(w)) {
                uint64_t r = 0;
                if (getrandom(&r, sizeof r, GRND_NONBLOCK) < 0)
                    r = (uint64_t)jp_time_mono_ns();
                if (!nap(w, agent_backoff_ns(++failures, JP_NS_PER_SEC, 60 * JP_NS_PER_SEC, r)))
                    break;
                continue;
            }
            need_list = false;
        }
        watch_end e = do_watch(w);
        if (e == WATCH_RESUME) {
            failures = 0;
            continue;
        }
        need_list = true;
        if (e == WATCH_FAILED) {
            uint64_t r = (uint64_t)jp_time_mono_ns();
            if (!nap(w, agent_backoff_ns(++failures, JP_NS_PER_SEC, 60 * JP_NS_PER_SEC, r)))
                break;
        }
    }
    return NULL;
}

jp_err agent_k8s_watch_start(agent_k8s_conn *conn, const char *node, agent_metrics *m,
                             agent_k8s_watch **out, jp_error *err)
{
    *out = NULL;
    if (!node || !*node)
        return jp_error_set(err, JP_ERR_USAGE,
                            "the node name is needed: --node NAME or the NODE_NAME environment "
                            "variable (from the downward API, spec.nodeName)");
    if (strlen(node) > 253)
        return jp_error_set(err, JP_ERR_USAGE, "node name longer than 253 bytes");
    agent_k8s_watch *w = jp_xcalloc(1, sizeof *w);
    w->conn = *conn;
    memset(conn, 0, sizeof *conn);
    w->node = jp_xstrdup(node);
    if (!m) {
        agent_metrics_init(&w->dummy);
        m = &w->dummy;
    }
    w->m = m;
    jp_pod_list_init(&w->pods);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        agent_k8s_conn_cleanup(&w->conn);
        free(w->node);
        free(w);
        return jp_error_set(err, JP_ERR_INTERNAL, "cannot start the pod watch thread");
    }
    *out = w;
    return JP_OK;
}

void agent_k8s_watch_stop(agent_k8s_watch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    __atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    jp_pod_list_cleanup(&w->pods);
    agent_k8s_conn_cleanup(&w->conn);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    if (w->m == &w->dummy)
        agent_metrics_cleanup(&w->dummy);
    free(w->node);
    free(w);
}

bool agent_k8s_pods_copy(agent_k8s_watch *w, jp_pod_list *out)
{
    jp_pod_list_init(out);
    pthread_mutex_lock(&w->lock);
    bool synced = w->synced;
    if (w->pods.count) {
        out->items = jp_xcalloc(w->pods.count, sizeof *out->items);
        out->cap = w->pods.count;
    }
    for (size_t i = 0; i < w->pods.count; i++)
        jp_pod_copy(&out->items[out->count++], &w->pods.items[i]);
    out->resource_version = w->pods.resource_version ? jp_xstrdup(w->pods.resource_version) : NULL;
    pthread_mutex_unlock(&w->lock);
    return synced;
}

void agent_k8s_last_error(agent_k8s_watch *w, char *buf, size_t len)
{
    pthread_mutex_lock(&w->lock);
    snprintf(buf, len, "%s", w->last_error);
    pthread_mutex_unlock(&w->lock);
}
