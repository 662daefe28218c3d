/* api_threads.c - /api/v1/threads: the latest thread snapshot per target with
 * busy, blocked (owner chains, "blocks N") and deadlock summaries, and
 * /api/v1/ingestion and /api/v1/retention.
 *
 * The snapshot JSON is what the agent sent (docs/API.md, "Thread snapshot").
 * It is read back into the model (jp_snapshot_from_json) so that owner
 * chains, "blocks N", lock groups and deadlocks come from src/model/analyze.h,
 * as in jprof-top; busy threads correlate the agent's cpu_pct (a delta
 * between its last two snapshots) with per-thread CPU of the target's newest
 * cpu windows (src/model/busy.h), ranked by the fresher. Locks count
 * contention only; idle pool workers are summarised apart. Each summary
 * says what it rests on (confidence) and how old that is. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/analyze.h"
#include "model/busy.h"
#include "server/api_int.h"
#include "wire/snapshot_json.h"

#define API_CHAIN_MAX 16

static json_int_t api_jint(json_t *o, const char *k, json_int_t def)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

static const char *api_jstr(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* ---- busy threads: the latest cpu windows and the snapshot, ranked by
 * src/model/busy.h as everywhere else ---- */

/* How far back to look for the target's newest cpu windows: the first span
 * with any gives the evidence (windows are 60 s by default, 10 s in a
 * temporary window; a span covers whole windows that started in it). */
static const int64_t cpu_lookback_s[] = {30, 90, 600};

static bool api_cpu_cb(const store_stack_row *row, void *ctx)
{
    if (row->thread)
        jp_cpu_evidence_add(ctx, row->thread, strlen(row->thread), row->value, row->samples);
    return true;
}

/* Profile evidence of one target: per-thread CPU of its newest cpu windows.
 * Errors leave e empty: the snapshot still answers, and says so. */
static void api_cpu_evidence(srv_req *r, const api_q *q, const jp_batch_target *t,
                             jp_cpu_evidence *e)
{
    for (size_t i = 0; i < sizeof cpu_lookback_s / sizeof *cpu_lookback_s; i++) {
        store_filter f = {.ns = t->ns,
                          .service = t->service,
                          .pod = t->pod,
                          .kind = JP_KIND_CPU,
                          .from_ns = q->now - cpu_lookback_s[i] * JP_NS_PER_SEC,
                          .to_ns = q->now + 1};
        store_flame_totals tot;
        store_query_info info;
        jp_error err;
        jp_error_init(&err);
        memset(&tot, 0, sizeof tot);
        jp_cpu_evidence_cleanup(e);
        jp_cpu_evidence_init(e);
        if (!f.ns || !f.service ||
            store_flame(r->s->st, &f, &q->b, api_cpu_cb, e, &tot, &info, &err) != JP_OK)
            return;
        if (tot.windows) {
            e->start_ns = tot.first_ns;
            e->end_ns = tot.last_ns;
            e->windows = (unsigned)tot.windows;
            return;
        }
    }
}

/* Blocked threads with their owner chains, and the owners ranked by how many
 * threads wait behind them (directly or through a chain): the analyses of
 * src/model/analyze.h, the same jprof-top runs, on the snapshot rebuilt from
 * the stored JSON. */
static json_t *api_blocked(const jp_snapshot *s, long limit)
{
    jp_lock_group_list lg;
    jp_analyze_locks(s, &lg);
    json_t *list = json_array();
    long nblocked = 0;
    for (size_t i = 0; i < s->count; i++) {
        const jp_thread *t = &s->threads[i];
        const jp_lock_group *g = NULL;
        for (size_t k = 0; t->wait_kind != JP_WAIT_NONE && k < lg.count && !g; k++)
            if (lg.items[k].lock.id == t->wait_lock.id && lg.items[k].owner >= 0)
                g = &lg.items[k];
        if (!jp_thread_contends(s, i))
            continue; /* idle: waiting for nobody in particular (Object.wait, a Condition) */
        if (++nblocked > limit)
            continue;
        json_t *chain = json_array();
        for (size_t k = 0; g && k < g->nchain && k < API_CHAIN_MAX; k++) {
            const jp_thread *o = &s->threads[g->owner_chain[k]];
            json_array_append_new(chain,
                                  json_pack("{s:I,s:s}", "id", (json_int_t)o->id, "name", o->name));
        }
        char lock[512];
        jp_lock_ref_format(&t->wait_lock, lock, sizeof lock);
        json_array_append_new(list,
                              json_pack("{s:I,s:s,s:s,s:s?,s:o,s:b}", "id", (json_int_t)t->id,
                                        "name", t->name, "state", jp_thread_state_name(t->state),
                                        "waiting_on", t->wait_kind != JP_WAIT_NONE ? lock : NULL,
                                        "chain", chain, "cycle", g && g->chain_cycles));
    }
    jp_lock_group_list_cleanup(&lg);
    size_t *blocks = jp_analyze_blocks_counts(s);
    json_t *own = json_array();
    size_t nown = 0;
    for (size_t i = 0; i < s->count; i++)
        nown += blocks[i] > 0;
    for (long k = 0; k < limit && (size_t)k < nown; k++) {
        /* the heaviest owner not listed yet; ties keep snapshot order */
        size_t best = s->count;
        for (size_t i = 0; i < s->count; i++)
            if (blocks[i] && (best == s->count || blocks[i] > blocks[best]))
                best = i;
        const jp_thread *o = &s->threads[best];
        json_array_append_new(own, json_pack("{s:I,s:s,s:s,s:I}", "id", (json_int_t)o->id, "name",
                                             o->name, "state", jp_thread_state_name(o->state),
                                             "blocks", (json_int_t)blocks[best]));
        blocks[best] = 0;
    }
    free(blocks);
    return json_pack("{s:s,s:i,s:o,s:o,s:b}", "confidence", "snapshot", "count", (int)nblocked,
                     "threads", list, "owners", own, "truncated", nblocked > limit);
}

static json_t *api_states(json_t *threads)
{
    json_t *st = json_object(), *t;
    size_t i;
    json_array_foreach(threads, i, t)
    {
        const char *s = api_jstr(t, "state");
        s = s ? s : "UNKNOWN";
        json_int_t c = api_jint(st, s, 0);
        json_object_set_new(st, s, json_integer(c + 1));
    }
    return st;
}

/* One stored snapshot, kept until the store's call returns: the profile
 * query for its target must not run inside the store's callback. */
typedef struct thr_item {
    jp_batch_target target;
    int64_t time_ns;
    json_t *entry;
} thr_item;

typedef struct thr_ctx {
    thr_item *items;
    size_t n, cap;
    long limit;
    bool cut;
} thr_ctx;

static char *api_strdup0(const char *s)
{
    return s ? jp_xstrdup(s) : NULL;
}

static bool api_thread_cb(const store_doc_row *row, void *ctx)
{
    thr_ctx *c = ctx;
    if ((long)c->n >= c->limit) {
        c->cut = true;
        return false;
    }
    c->items = jp_xgrow(c->items, &c->cap, c->n + 1, sizeof *c->items);
    thr_item *it = &c->items[c->n++];
    memset(it, 0, sizeof *it);
    const jp_batch_target *t = row->target;
    it->target = (jp_batch_target){.cluster = api_strdup0(t->cluster),
                                   .ns = api_strdup0(t->ns),
                                   .workload = api_strdup0(t->workload),
                                   .service = api_strdup0(t->service),
                                   .pod = api_strdup0(t->pod),
                                   .container = api_strdup0(t->container),
                                   .node = api_strdup0(t->node),
                                   .pid = t->pid,
                                   .jvm_start_ns = t->jvm_start_ns,
                                   .jvm = api_strdup0(t->jvm)};
    it->time_ns = row->time_ns;
    it->entry = json_loadb(row->json, row->json_len, 0, NULL);
    return true;
}

/* The summary of one stored snapshot (docs/API.md, /api/v1/threads). */
static json_t *api_thread_summary(srv_req *r, const api_q *q, thr_item *it, long tlimit)
{
    /* {"target", "time", "snapshot": {...}} or the flat {"target", "time", "threads"} */
    json_t *snap = it->entry ? json_object_get(it->entry, "snapshot") : NULL;
    snap = json_is_object(snap) ? snap : it->entry;
    json_t *threads = snap ? json_object_get(snap, "threads") : NULL;
    jp_snapshot *model = snap ? jp_snapshot_from_json(snap) : NULL;
    if (!model)
        model = jp_snapshot_new("");
    if (model->taken_ns <= 0)
        model->taken_ns = it->time_ns;
    jp_busy_list sb;
    jp_snapshot_busy_from_json(snap, model, &sb);
    jp_cpu_evidence ev;
    jp_cpu_evidence_init(&ev);
    api_cpu_evidence(r, q, &it->target, &ev);
    jp_busy_summary rank;
    jp_busy_rank(model, &sb, &ev, &rank);
    jp_snapjson_opts so;
    jp_snapjson_opts_init(&so);
    so.max_frames = 20; /* per deadlocked thread; full=1 has the whole snapshot */
    json_t *sum = json_pack(
        "{s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "threads_total",
        (int)(json_is_array(threads) ? json_array_size(threads) : 0), "states", api_states(threads),
        "busy", jp_busy_json(&rank, model, q->now, (size_t)tlimit, 5), "blocked",
        api_blocked(model, tlimit), "contention", jp_snapshot_contention_json(model), "locks",
        jp_snapshot_locks_json(model), "idle", jp_snapshot_idle_json(model), "deadlocks",
        jp_snapshot_deadlocks_json(model, &so));
    jp_busy_summary_cleanup(&rank);
    jp_cpu_evidence_cleanup(&ev);
    jp_busy_list_cleanup(&sb);
    jp_snapshot_free(model);
    return sum;
}

void api_threads(srv_req *r, srv_resp *o)
{
    int64_t t0 = jp_time_mono_ns();
    api_q q;
    long limit, tlimit;
    if (!api_parse(r, o, &q, API_NEED_NS) || !api_limit(r, o, "limit", 100, 10000, &limit) ||
        !api_limit(r, o, "thread_limit", 20, 100000, &tlimit))
        return;
    /* the latest snapshot: look back a day unless told otherwise */
    if (!srv_arg(r, "from"))
        q.f.from_ns = q.f.to_ns - 24 * 3600 * JP_NS_PER_SEC;
    bool full = api_arg_flag(r->args, "full");
    thr_ctx c = {.limit = limit};
    store_query_info info;
    jp_error e;
    jp_error_init(&e);
    jp_err rc = r->s->st->ops->snapshots_latest(r->s->st, &q.f, &q.b, api_thread_cb, &c, &info, &e);
    if (rc)
        api_store_error(o, rc, &e);
    else
        jp_strbuf_puts(&o->body, "{\"targets\":[");
    for (size_t i = 0; i < c.n; i++) {
        thr_item *it = &c.items[i];
        if (!rc) {
            json_t *sum = api_thread_summary(r, &q, it, tlimit);
            json_t *snap = it->entry ? json_object_get(it->entry, "snapshot") : NULL;
            snap = json_is_object(snap) ? snap : it->entry;
            if (full && snap)
                json_object_set(sum, "snapshot", snap);
            jp_strbuf_puts(&o->body, i ? ",{\"target\":" : "{\"target\":");
            api_target_json(&o->body, &it->target);
            jp_strbuf_puts(&o->body, ",\"time\":");
            jw_time(&o->body, it->time_ns);
            jp_strbuf_printf(&o->body, ",\"age_seconds\":%.3f,\"summary\":",
                             (double)(q.now - it->time_ns) / 1e9);
            char *text = json_dumps(sum, JSON_COMPACT);
            jp_strbuf_puts(&o->body, text ? text : "null");
            free(text);
            jp_strbuf_putc(&o->body, '}');
            json_decref(sum);
        }
        json_decref(it->entry);
        jp_batch_target_cleanup(&it->target);
    }
    free(c.items);
    if (rc)
        return;
    jp_strbuf_printf(&o->body, "],\"meta\":{\"targets\":%zu,\"limit\":%ld,\"truncated\":%s,", c.n,
                     limit, c.cut ? "true" : "false");
    api_meta_common(&o->body, &q, &info, t0);
    jp_strbuf_puts(&o->body, "}}\n");
    o->status = 200;
}

/* ---- /api/v1/ingestion ---- */

typedef struct ing_ctx {
    jp_strbuf *b;
    long n, limit;
    bool cut;
} ing_ctx;

static bool api_ingest_cb(const store_ingest_row *row, void *ctx)
{
    ing_ctx *c = ctx;
    if (c->n >= c->limit) {
        c->cut = true;
        return false;
    }
    jp_strbuf *b = c->b;
    if (c->n++)
        jp_strbuf_putc(b, ',');
    jp_strbuf_puts(b, "{\"collector\":");
    jw_cstr(b, row->collector);
    jp_strbuf_puts(b, ",\"version\":");
    jw_cstr(b, row->version);
    jp_strbuf_printf(b,
                     ",\"accepted\":%llu,\"duplicate\":%llu,\"rejected\":%llu,\"windows\":%llu,"
                     "\"stack_rows\":%llu,\"bytes\":%llu,\"last_reject_reason\":",
                     (unsigned long long)row->accepted, (unsigned long long)row->duplicate,
                     (unsigned long long)row->rejected, (unsigned long long)row->windows,
                     (unsigned long long)row->stack_rows, (unsigned long long)row->bytes);
    jw_cstr(b, row->last_reject_reason);
    jp_strbuf_puts(b, ",\"first_seen\":");
    jw_time(b, row->first_ns);
    jp_strbuf_puts(b, ",\"last_seen\":");
    jw_time(b, row->last_ns);
    jp_strbuf_puts(b, ",\"last_heartbeat\":");
    jw_time(b, row->last_heartbeat_ns);
    jp_strbuf_printf(b,
                     ",\"queue\":{\"dropped_batches\":%llu,\"dropped_bytes\":%llu,\"bytes\":%llu,"
                     "\"oldest_dropped\":",
                     (unsigned long long)row->queue_dropped_batches,
                     (unsigned long long)row->queue_dropped_bytes,
                     (unsigned long long)row->queue_bytes);
    jw_time(b, row->queue_oldest_dropped_ns);
    jp_strbuf_puts(b, "}}");
    return true;
}

void api_ingestion(srv_req *r, srv_resp *o)
{
    int64_t t0 = jp_time_mono_ns();
    api_q q;
    long limit;
    /* per collector, no namespace data: any read token may look */
    if (!api_parse(r, o, &q, API_SCOPE_FILTERS) || !api_limit(r, o, "limit", 1000, 100000, &limit))
        return;
    ing_ctx c = {.b = &o->body, .limit = limit};
    store_query_info info;
    jp_error e;
    jp_error_init(&e);
    jp_strbuf_puts(&o->body, "{\"collectors\":[");
    jp_err rc = r->s->st->ops->ingestion(r->s->st, &q.f, &q.b, api_ingest_cb, &c, &info, &e);
    if (rc) {
        api_store_error(o, rc, &e);
        return;
    }
    metrics *m = &r->s->m;
    pthread_mutex_lock(&m->mu);
    uint64_t counts[MI_COUNT], refused[MR_COUNT];
    memcpy(counts, m->ingest, sizeof counts);
    memcpy(refused, m->refused, sizeof refused);
    pthread_mutex_unlock(&m->mu);
    jp_strbuf_puts(&o->body, "],\"server_since_start\":{");
    for (int i = 0; i < MI_COUNT; i++)
        jp_strbuf_printf(&o->body, "%s\"%s\":%llu", i ? "," : "",
                         metrics_ingest_name((metrics_ingest)i), (unsigned long long)counts[i]);
    jp_strbuf_printf(&o->body,
                     ",\"windows_refused_retention\":%llu,\"windows_refused_future\":%llu},"
                     "\"meta\":{\"collectors\":%ld,\"limit\":%ld,\"truncated\":%s,",
                     (unsigned long long)refused[MR_RETENTION],
                     (unsigned long long)refused[MR_FUTURE], c.n, limit, c.cut ? "true" : "false");
    api_meta_common(&o->body, &q, &info, t0);
    jp_strbuf_puts(&o->body, "}}\n");
    o->status = 200;
}

/* ---- /api/v1/retention ---- */

static bool api_day_cb(const store_day_row *d, void *ctx)
{
    ing_ctx *c = ctx;
    if (c->n++)
        jp_strbuf_putc(c->b, ',');
    char day[16];
    store_day_format(d->day, day, sizeof day);
    jp_strbuf_printf(c->b,
                     "{\"day\":\"%s\",\"windows\":%llu,\"stack_rows\":%llu,\"stacks\":%llu,"
                     "\"documents\":%llu,\"batches\":%llu,\"bytes\":%llu,\"expires\":",
                     day, (unsigned long long)d->windows, (unsigned long long)d->stack_rows,
                     (unsigned long long)d->stacks, (unsigned long long)d->docs,
                     (unsigned long long)d->batches, (unsigned long long)d->bytes);
    jw_time(c->b, d->expires_ns);
    jp_strbuf_putc(c->b, '}');
    return true;
}

void api_retention(srv_req *r, srv_resp *o)
{
    if (!srv_authorize(r, o, AUTH_READ, NULL))
        return;
    store *st = r->s->st;
    ing_ctx c = {.b = &o->body, .limit = 1000};
    jp_error e;
    jp_error_init(&e);
    jp_strbuf_printf(&o->body, "{\"store\":\"%s\",\"retention_days\":%d,\"now\":", st->ops->name,
                     r->s->cfg.retention_days);
    jw_time(&o->body, store_now_ns());
    jp_strbuf_puts(&o->body, ",\"days\":[");
    jp_err rc = st->ops->days(st, api_day_cb, &c, &e);
    if (rc) {
        api_store_error(o, rc, &e);
        return;
    }
    store_stats ss;
    st->ops->stats(st, &ss);
    jp_strbuf_printf(&o->body, "],\"retention_runs\":%llu,\"days_removed\":%llu,\"last_run\":",
                     (unsigned long long)ss.retention_runs,
                     (unsigned long long)ss.retention_days_removed);
    jw_time(&o->body, ss.retention_last_run_ns);
    jp_strbuf_puts(&o->body, "}\n");
    o->status = 200;
}
