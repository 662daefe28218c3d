#include "agent/upload.h"

#include <curl/curl.h>
#include <jansson.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "agent/queue.h"
#include "base/failinj.h"
#include "base/strbuf.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "wire/batch_json.h"
#include "wire/zstd_frame.h"

#define TOKEN_MAX 4096

struct agent_uploader {
    agent_upload_opts o;
    char *server, *token_file, *ca_file, *collector, *version;
    char **urls;      /* the ingest URL of each server of --server URL[,URL...] */
    size_t nurls, at; /* at: the one tried next (sender thread only) */
    agent_metrics *m;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    agent_queue q;
    uint64_t seq;
    int64_t started_s;
    int stopping;
    int64_t flush_deadline; /* mono ns; 0 while running */
    pthread_t thread;
    agent_metrics dummy;    /* counters when the caller gave none */
    char last_error[256];   /* under lock */
    char last_refused[384]; /* under lock: the latest windows the server refused, "" none */
};

void agent_upload_opts_init(agent_upload_opts *o)
{
    memset(o, 0, sizeof *o);
    o->collector = "jprof-agent";
    o->queue_bytes = 64u << 20;
    o->max_batch_bytes = 8u << 20;
    o->timeout_ns = 30 * JP_NS_PER_SEC;
    o->backoff_min_ns = JP_NS_PER_SEC;
    o->backoff_max_ns = 300 * JP_NS_PER_SEC;
}

static uint64_t rnd64(void)
{
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v)
        v = (uint64_t)jp_time_mono_ns() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
    return v;
}

int64_t agent_backoff_ns(unsigned attempt, int64_t min_ns, int64_t max_ns, uint64_t rnd)
{
    int64_t d = min_ns > 0 ? min_ns : 1;
    for (unsigned i = 1; i < attempt && d < max_ns; i++)
        d = d > max_ns / 2 ? max_ns : d * 2;
    if (d > max_ns)
        d = max_ns;
    int64_t half = d / 2;
    return half + (int64_t)(rnd % (uint64_t)(d - half + 1));
}

/* ---- queueing ---- */

jp_err agent_upload_add(agent_uploader *u, jp_batch *b, int64_t data_ns, jp_error *err)
{
    pthread_mutex_lock(&u->lock);
    uint64_t seq = ++u->seq;
    free(b->id);
    free(b->collector);
    free(b->collector_version);
    char id[JP_BATCH_ID_MAX];
    snprintf(id, sizeof id, "%.60s-%lld-%llu-%08llx", u->collector, (long long)u->started_s,
             (unsigned long long)seq, (unsigned long long)(rnd64() & 0xffffffffULL));
    b->id = jp_xstrdup(id);
    b->collector = jp_xstrdup(u->collector);
    b->collector_version = u->version ? jp_xstrdup(u->version) : NULL;
    b->sent_ns = jp_time_now_ns();
    b->queue_dropped_batches = u->q.dropped_batches;
    b->queue_dropped_bytes = u->q.dropped_bytes;
    b->queue_oldest_dropped_ns = u->q.oldest_dropped_ns;
    b->queue_bytes = u->q.bytes;
    pthread_mutex_unlock(&u->lock);

    size_t len;
    char *json = jp_batch_json_encode(b, &len);
    if (len > u->o.max_batch_bytes) {
        free(json);
        return jp_error_set(err, JP_ERR_LIMIT, "batch of %zu bytes exceeds the %zu byte cap", len,
                            u->o.max_batch_bytes);
    }
    agent_qitem *it = jp_xcalloc(1, sizeof *it);
    jp_err rc = jp_zstd_compress(json, len, 3, &it->data, &it->len, err);
    free(json);
    if (rc != JP_OK) {
        free(it);
        return rc;
    }
    it->id = jp_xstrdup(id);
    it->data_ns = data_ns;
    pthread_mutex_lock(&u->lock);
    size_t dropped = agent_queue_push(&u->q, it);
    atomic_fetch_add(&u->m->uploads_dropped, dropped);
    atomic_store(&u->m->upload_dropped_bytes, u->q.dropped_bytes);
    atomic_store(&u->m->queue_bytes, u->q.bytes);
    atomic_fetch_add(&u->m->batches_queued, 1);
    pthread_cond_signal(&u->cond);
    pthread_mutex_unlock(&u->lock);
    return JP_OK;
}

void agent_uploader_last_refused(agent_uploader *u, char *buf, size_t len)
{
    pthread_mutex_lock(&u->lock);
    snprintf(buf, len, "%s", u->last_refused);
    pthread_mutex_unlock(&u->lock);
}

void agent_uploader_last_error(agent_uploader *u, char *buf, size_t len)
{
    pthread_mutex_lock(&u->lock);
    snprintf(buf, len, "%s", u->last_error);
    pthread_mutex_unlock(&u->lock);
}

void agent_uploader_stats(agent_uploader *u, uint64_t *dropped_batches, uint64_t *dropped_bytes,
                          int64_t *oldest_dropped_ns, size_t *queued_bytes)
{
    pthread_mutex_lock(&u->lock);
    if (dropped_batches)
        *dropped_batches = u->q.dropped_batches;
    if (dropped_bytes)
        *dropped_bytes = u->q.dropped_bytes;
    if (oldest_dropped_ns)
        *oldest_dropped_ns = u->q.oldest_dropped_ns;
    if (queued_bytes)
        *queued_bytes = u->q.bytes;
    pthread_mutex_unlock(&u->lock);
}

/* ---- splitting ---- */

/* A profile holding cells [a, b) of kind k of src, and its GC log when gc. */
static jp_profile *profile_slice(const jp_profile *src, int k, size_t a, size_t b, bool gc)
{
    jp_profile *p = jp_profile_new();
    if (gc)
        jp_gc_log_append(&p->gc, &src->gc);
    const jp_kind_table *t = &src->kinds[k];
    uint32_t tmp[JP_BATCH_DEPTH_MAX];
    for (size_t c = a; c < b; c++) {
        const jp_sample *cell = &t->cells[c];
        const jp_stack *st = &src->stacks[cell->stack];
        const uint32_t *fr = jp_profile_stack_frames(src, cell->stack);
        uint32_t depth = st->depth > JP_BATCH_DEPTH_MAX ? JP_BATCH_DEPTH_MAX : st->depth;
        for (uint32_t i = 0; i < depth; i++) {
            size_t len;
            const char *name = jp_profile_frame_name(src, fr[i], &len);
            tmp[i] = jp_profile_frame(p, name, len, jp_frame_primary_kind(&src->frames[fr[i]]));
        }
        uint32_t s = jp_profile_stack(p, tmp, depth, st->truncated || depth < st->depth);
        uint32_t th = JP_NO_THREAD;
        if (cell->thread != JP_NO_THREAD) {
            size_t len;
            const char *name = jp_profile_frame_name(src, cell->thread, &len);
            th = jp_profile_thread(p, name, len);
        }
        jp_profile_add(p, (jp_kind)k, s, th, 0, cell->samples, cell->value);
    }
    /* the raw event count travels with the first part only */
    p->kinds[k].events = a == 0 ? t->events : 0;
    p->kinds[k].lost = a == 0 ? t->lost : 0;
    p->kinds[k].period_ns = t->period_ns;
    p->kinds[k].truncated = t->truncated;
    p->start_ns = src->start_ns;
    p->end_ns = src->end_ns;
    return p;
}

static size_t upload_part(agent_uploader *u, const jp_profile *p, const jp_batch_target *target,
                          int64_t start_ns, int64_t end_ns, int depth)
{
    jp_batch b;
    jp_batch_init(&b);
    size_t nwin = jp_batch_add_profile(&b, p, target, start_ns, end_ns);
    jp_error err;
    jp_error_init(&err);
    jp_err rc = nwin ? agent_upload_add(u, &b, start_ns, &err) : JP_OK;
    jp_batch_cleanup(&b);
    if (!nwin)
        return 0;
    if (rc == JP_OK)
        return 1;
    if (rc != JP_ERR_LIMIT || depth > 40)
        return 0;
    atomic_fetch_add(&u->m->batches_split, 1);
    int kinds = 0, only = -1;
    for (int k = 0; k < JP_KIND_COUNT; k++)
        if (p->kinds[k].count) {
            kinds++;
            only = k;
        }
    if (!kinds) { /* a GC summary alone too large: cannot be */
        atomic_fetch_add(&u->m->too_large, 1);
        return 0;
    }
    size_t sent = 0;
    bool gc = true; /* the first part carries the GC summary */
    if (kinds > 1) {
        for (int k = 0; k < JP_KIND_COUNT; k++) {
            if (!p->kinds[k].count)
                continue;
            jp_profile *part = profile_slice(p, k, 0, p->kinds[k].count, gc);
            gc = false;
            sent += upload_part(u, part, target, start_ns, end_ns, depth + 1);
            jp_profile_free(part);
        }
        return sent;
    }
    size_t n = p->kinds[only].count;
    if (n < 2) {
        atomic_fetch_add(&u->m->too_large, 1);
        return 0;
    }
    size_t halves[3] = {0, n / 2, n};
    for (int h = 0; h < 2; h++) {
        jp_profile *part = profile_slice(p, only, halves[h], halves[h + 1], h == 0);
        sent += upload_part(u, part, target, start_ns, end_ns, depth + 1);
        jp_profile_free(part);
    }
    return sent;
}

size_t agent_upload_profile(agent_uploader *u, const jp_profile *p, const jp_batch_target *target,
                            int64_t start_ns, int64_t end_ns)
{
    return upload_part(u, p, target, start_ns, end_ns, 0);
}

/* ---- sending ---- */

/* Keeps the first bytes of the answer: the server says why it refused. */
static size_t keep_body(void *p, size_t size, size_t n, void *ctx)
{
    jp_strbuf *b = ctx;
    size_t len = size * n;
    size_t room = b->cap > b->len + 1 ? b->cap - b->len - 1 : 0;
    jp_strbuf_append(b, p, len < room ? len : room);
    return len;
}

/* Reads the token file (first line, trimmed); "" when there is none. */
static bool read_token(const char *path, char *tok, size_t cap)
{
    tok[0] = '\0';
    if (!path)
        return true;
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool ok = fgets(tok, (int)cap, f) != NULL;
    fclose(f);
    size_t n = strcspn(tok, "\r\n");
    tok[n] = '\0';
    while (n && (tok[n - 1] == ' ' || tok[n - 1] == '\t'))
        tok[--n] = '\0';
    return ok && n > 0;
}

/* An accepted batch's answer lists the windows the server refused
 * ("windows_refused": [{"window", "code", "reason"}]): counted by code, and
 * the latest said in /status. Called with the lock held. */
static void count_refused(agent_uploader *u, const agent_qitem *it, const char *body, size_t len)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *a = json_object_get(root, "windows_refused");
    size_t n = json_array_size(a), nfuture = 0, nold = 0;
    const char *reason = NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *w = json_array_get(a, i);
        const char *code = json_string_value(json_object_get(w, "code"));
        reason = json_string_value(json_object_get(w, "reason"));
        if (code && !strcmp(code, "future"))
            nfuture++;
        else
            nold++;
    }
    if (n) {
        atomic_fetch_add(&u->m->windows_refused_future, nfuture);
        atomic_fetch_add(&u->m->windows_refused_retention, nold);
        char when[40];
        jp_rfc3339_format(jp_time_now_ns(), when, sizeof when);
        snprintf(u->last_refused, sizeof u->last_refused,
                 "%s: %zu window(s) of batch %.60s: %.120s", when, n, it->id,
                 reason ? reason : "refused");
    }
    json_decref(root);
}

/* One POST; returns the HTTP status, or 0 for a transport failure. An
 * accepted batch's refused windows are counted (count_refused). */
static long post(agent_uploader *u, const agent_qitem *it, char *why, size_t whylen)
{
    if (jp_fail_inject("upload")) {
        snprintf(why, whylen, "injected failure (JPROF_FAIL_AT)");
        return 0;
    }
    jp_strbuf resp;
    jp_strbuf_init(&resp, 16 * 1024);
    char tok[TOKEN_MAX];
    if (!read_token(u->token_file, tok, sizeof tok)) {
        snprintf(why, whylen, "cannot read the token file %s", u->token_file);
        return 0;
    }
    CURL *c = curl_easy_init();
    if (!c) {
        snprintf(why, whylen, "curl_easy_init failed");
        return 0;
    }
    struct curl_slist *h = NULL;
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, "Content-Encoding: zstd");
    char auth[TOKEN_MAX + 32];
    if (tok[0]) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", tok);
        h = curl_slist_append(h, auth);
    }
    char idh[JP_BATCH_ID_MAX + 32];
    snprintf(idh, sizeof idh, "X-Jprof-Batch-Id: %s", it->id);
    h = curl_slist_append(h, idh);
    curl_easy_setopt(c, CURLOPT_URL, u->urls[u->at]);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)it->data);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)it->len);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &resp);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(u->o.timeout_ns / 1000000));
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    if (u->ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, u->ca_file);
    CURLcode cc = curl_easy_perform(c);
    long status = 0;
    if (cc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (cc != CURLE_OK)
        snprintf(why, whylen, "%s", curl_easy_strerror(cc));
    else if (status < 200 || status >= 300)
        snprintf(why, whylen, "HTTP %ld: %.200s", status, jp_strbuf_str(&resp));
    else if (resp.len) {
        pthread_mutex_lock(&u->lock);
        count_refused(u, it, resp.data, resp.len);
        pthread_mutex_unlock(&u->lock);
    }
    jp_strbuf_cleanup(&resp);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    memset(tok, 0, sizeof tok);
    memset(auth, 0, sizeof auth);
    return status;
}

static void *sender(void *arg)
{
    agent_uploader *u = arg;
    unsigned failures = 0;
    int64_t not_before = 0;
    pthread_mutex_lock(&u->lock);
    for (;;) {
        int64_t now = jp_time_mono_ns();
        if (u->stopping && (!u->q.count || now >= u->flush_deadline))
            break;
        if (!u->q.count || now < not_before) {
            int64_t until = u->q.count ? not_before : now + 3600 * JP_NS_PER_SEC;
            if (u->stopping && until > u->flush_deadline)
                until = u->flush_deadline;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            int64_t wait = until - now;
            int64_t abs_ns = (int64_t)ts.tv_sec * JP_NS_PER_SEC + ts.tv_nsec + wait;
            ts.tv_sec = (time_t)(abs_ns / JP_NS_PER_SEC);
            ts.tv_nsec = (long)(abs_ns % JP_NS_PER_SEC);
            pthread_cond_timedwait(&u->cond, &u->lock, &ts);
            continue;
        }
        agent_qitem *it = agent_queue_take(&u->q);
        pthread_mutex_unlock(&u->lock);
        char why[256] = "";
        long st = post(u, it, why, sizeof why);
        pthread_mutex_lock(&u->lock);
        if (st >= 200 && st < 300) {
            agent_queue_done(&u->q, it);
            agent_qitem_free(it);
            atomic_fetch_add(&u->m->uploads_ok, 1);
            atomic_store(&u->m->last_upload_ok_ns, jp_time_now_ns());
            failures = 0;
            not_before = 0;
            if (strncmp(u->last_error, "upload failing", 14) == 0)
                u->last_error[0] = '\0';
        } else if (st == 400 || st == 413) {
            snprintf(u->last_error, sizeof u->last_error, "batch %.80s refused: %.150s", it->id,
                     why);
            agent_queue_done(&u->q, it);
            agent_qitem_free(it);
            atomic_fetch_add(&u->m->uploads_rejected, 1);
        } else {
            snprintf(u->last_error, sizeof u->last_error, "upload failing: %.200s", why);
            u->at = (u->at + 1) % u->nurls; /* the next server, if there are others */
            it->attempts++;
            agent_queue_requeue(&u->q, it);
            atomic_fetch_add(&u->m->uploads_retried, 1);
            failures++;
            not_before = jp_time_mono_ns() + agent_backoff_ns(failures, u->o.backoff_min_ns,
                                                              u->o.backoff_max_ns, rnd64());
        }
        atomic_store(&u->m->queue_bytes, u->q.bytes);
    }
    pthread_mutex_unlock(&u->lock);
    return NULL;
}

static char *dup_or_null(const char *s)
{
    return s ? jp_xstrdup(s) : NULL;
}

/* The ingest URL of each server of "URL[,URL...]" (several: replicas
 * without a Service in front; a batch that failed on one is retried on the
 * next); NULL when one is not http(s). */
static char **server_urls(const char *list, size_t *n)
{
    char **urls = NULL;
    *n = 0;
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t sl = comma ? (size_t)(comma - p) : strlen(p), end = sl;
        while (end && p[end - 1] == '/')
            end--;
        if (strncmp(p, "http", 4) != 0 || sl < 5) {
            for (size_t i = 0; i < *n; i++)
                free(urls[i]);
            free(urls);
            *n = 0;
            return NULL;
        }
        urls = jp_xreallocarray(urls, *n + 1, sizeof *urls);
        urls[*n] = jp_xmalloc(end + 32);
        snprintf(urls[(*n)++], end + 32, "%.*s/api/v1/ingest", (int)end, p);
        p = comma ? comma + 1 : p + sl;
    }
    return urls;
}

jp_err agent_uploader_new(const agent_upload_opts *o, agent_metrics *m, agent_uploader **out,
                          jp_error *err)
{
    *out = NULL;
    size_t n = 0;
    char **check = o->server ? server_urls(o->server, &n) : NULL;
    for (size_t i = 0; i < n; i++)
        free(check[i]);
    free(check);
    if (!n)
        return jp_error_set(err, JP_ERR_USAGE,
                            "--server must be http:// or https:// URLs, comma-separated");
    agent_uploader *u = jp_xcalloc(1, sizeof *u);
    u->o = *o;
    u->server = jp_xstrdup(o->server);
    u->urls = server_urls(u->server, &u->nurls);
    u->token_file = dup_or_null(o->token_file);
    u->ca_file = dup_or_null(o->ca_file);
    u->collector = jp_xstrdup(o->collector ? o->collector : "jprof-agent");
    u->version = dup_or_null(o->version);
    if (!m) {
        agent_metrics_init(&u->dummy);
        m = &u->dummy;
    }
    u->m = m;
    u->started_s = jp_time_now_ns() / JP_NS_PER_SEC;
    agent_queue_init(&u->q, o->queue_bytes);
    pthread_mutex_init(&u->lock, NULL);
    pthread_cond_init(&u->cond, NULL);
    if (pthread_create(&u->thread, NULL, sender, u) != 0) {
        agent_uploader_free(u, -1);
        return jp_error_set(err, JP_ERR_INTERNAL, "cannot start the upload thread");
    }
    *out = u;
    return JP_OK;
}

void agent_uploader_free(agent_uploader *u, int64_t flush_ns)
{
    if (!u)
        return;
    if (flush_ns >= 0) {
        pthread_mutex_lock(&u->lock);
        u->stopping = 1;
        u->flush_deadline = jp_time_mono_ns() + flush_ns;
        pthread_cond_signal(&u->cond);
        pthread_mutex_unlock(&u->lock);
        pthread_join(u->thread, NULL);
    }
    agent_queue_cleanup(&u->q);
    pthread_mutex_destroy(&u->lock);
    pthread_cond_destroy(&u->cond);
    if (u->m == &u->dummy)
        agent_metrics_cleanup(&u->dummy);
    free(u->server);
    for (size_t i = 0; i < u->nurls; i++)
        free(u->urls[i]);
    free(u->urls);
    free(u->token_file);
    free(u->ca_file);
    free(u->collector);
    free(u->version);
    free(u);
}
