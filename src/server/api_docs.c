/* api_docs.c - the list endpoints: services, targets, threads, deadlocks,
 * ingestion, retention. Every list takes a limit and says when it was cut. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/api_int.h"

void api_target_json(jp_strbuf *b, const jp_batch_target *t)
{
    jp_strbuf_puts(b, "{\"namespace\":");
    jw_cstr(b, t->ns);
    jp_strbuf_puts(b, ",\"service\":");
    jw_cstr(b, t->service);
    jp_strbuf_puts(b, ",\"pod\":");
    jw_cstr(b, t->pod);
    const char *k[] = {"cluster", "workload", "container", "node", "jvm"};
    const char *v[] = {t->cluster, t->workload, t->container, t->node, t->jvm};
    for (int i = 0; i < 5; i++) {
        if (!v[i])
            continue;
        jp_strbuf_printf(b, ",\"%s\":", k[i]);
        jw_cstr(b, v[i]);
    }
    if (t->pid)
        jp_strbuf_printf(b, ",\"pid\":%lld", (long long)t->pid);
    if (t->jvm_start_ns) {
        jp_strbuf_puts(b, ",\"jvm_start\":");
        jw_time(b, t->jvm_start_ns);
    }
    jp_strbuf_putc(b, '}');
}

static void api_kinds(jp_strbuf *b, uint32_t kinds)
{
    jp_strbuf_putc(b, '[');
    bool first = true;
    for (int k = 0; k < JP_KIND_COUNT; k++)
        if (kinds & (1u << k)) {
            jp_strbuf_printf(b, "%s\"%s\"", first ? "" : ",", jp_kind_name((jp_kind)k));
            first = false;
        }
    jp_strbuf_putc(b, ']');
}

/* A list being written: counts items, stops at the limit. */
typedef struct api_list {
    srv_req *r;
    jp_strbuf *b;
    long limit, n;
    bool cut;
    bool scope_filter; /* drop rows outside the token's scope */
    /* services grouping */
    char *cur_ns, *cur_svc;
    uint32_t svc_kinds;
    int64_t svc_last;
    long svc_pods;
} api_list;

static bool api_list_room(api_list *l)
{
    if (l->n >= l->limit) {
        l->cut = true;
        return false;
    }
    if (l->n++)
        jp_strbuf_putc(l->b, ',');
    return true;
}

static bool api_in_scope(api_list *l, const char *ns)
{
    return !l->scope_filter || l->r->s->cfg.insecure_no_auth || auth_in_scope(l->r->tok, ns);
}

/* What a list callback does with a row. */
typedef enum { ROW_SKIP, ROW_EMIT, ROW_STOP } api_row;

/* Rows outside the token's scope are skipped; a full list stops. */
static api_row api_row_begin(api_list *l, const char *ns)
{
    if (!api_in_scope(l, ns))
        return ROW_SKIP;
    return api_list_room(l) ? ROW_EMIT : ROW_STOP;
}

/* {"time":T,"target":{...}  - the head of every document entry. */
static void api_doc_head(api_list *l, const store_doc_row *row)
{
    jp_strbuf_puts(l->b, "{\"time\":");
    jw_time(l->b, row->time_ns);
    jp_strbuf_puts(l->b, ",\"target\":");
    api_target_json(l->b, row->target);
}

/* ,"state":S,"reason":R */
static void api_state(jp_strbuf *b, const char *state, const char *reason)
{
    jp_strbuf_puts(b, ",\"state\":");
    jw_cstr(b, state);
    jp_strbuf_puts(b, ",\"reason\":");
    jw_cstr(b, reason);
}

/* ,"mode":M,"until":T - the target's policy as its agent last reported it
 * (continuous, temporary until T, disabled, off; null from an older agent) */
static void api_mode(jp_strbuf *b, const char *mode, int64_t until_ns)
{
    jp_strbuf_puts(b, ",\"mode\":");
    jw_cstr(b, mode);
    jp_strbuf_puts(b, ",\"until\":");
    jw_time(b, until_ns);
}

/* ---- /api/v1/targets ---- */

static bool api_target_cb(const store_target_row *row, void *ctx)
{
    api_list *l = ctx;
    api_row go = api_row_begin(l, row->target->ns);
    if (go != ROW_EMIT)
        return go == ROW_SKIP;
    jp_strbuf_puts(l->b, "{\"target\":");
    api_target_json(l->b, row->target);
    jp_strbuf_puts(l->b, ",\"kinds\":");
    api_kinds(l->b, row->kinds);
    jp_strbuf_printf(l->b, ",\"windows\":%llu,\"first_seen\":", (unsigned long long)row->windows);
    jw_time(l->b, row->first_ns);
    jp_strbuf_puts(l->b, ",\"last_seen\":");
    jw_time(l->b, row->last_ns);
    api_state(l->b, row->state, row->reason);
    api_mode(l->b, row->mode, row->until_ns);
    jp_strbuf_putc(l->b, '}');
    return true;
}

static bool api_status_cb(const store_doc_row *row, void *ctx)
{
    api_list *l = ctx;
    api_row go = api_row_begin(l, row->target->ns);
    if (go != ROW_EMIT)
        return go == ROW_SKIP;
    api_doc_head(l, row);
    api_state(l->b, row->state, row->reason);
    jp_strbuf_puts(l->b, ",\"message\":");
    jw_cstr(l->b, row->message && *row->message ? row->message : NULL);
    jp_strbuf_puts(l->b, ",\"engine\":");
    jw_cstr(l->b, row->engine && *row->engine ? row->engine : NULL);
    api_mode(l->b, row->mode, row->until_ns);
    jp_strbuf_putc(l->b, '}');
    return true;
}

void api_targets(srv_req *r, srv_resp *o)
{
    int64_t t0 = jp_time_mono_ns();
    api_q q;
    long limit, hlimit;
    if (!api_parse(r, o, &q, API_SCOPE_FILTERS) ||
        !api_limit(r, o, "limit", 1000, 100000, &limit) ||
        !api_limit(r, o, "history_limit", 200, 100000, &hlimit))
        return;
    store *st = r->s->st;
    jp_strbuf *b = &o->body;
    store_query_info info, info2;
    jp_error e;
    jp_error_init(&e);
    jp_strbuf_puts(b, "{\"targets\":[");
    api_list l = {.r = r, .b = b, .limit = limit, .scope_filter = true};
    jp_err rc = st->ops->targets(st, &q.f, &q.b, api_target_cb, &l, &info, &e);
    jp_strbuf_puts(b, "],\"history\":[");
    api_list h = {.r = r, .b = b, .limit = hlimit, .scope_filter = true};
    if (!rc)
        rc = st->ops->statuses(st, &q.f, &q.b, api_status_cb, &h, &info2, &e);
    if (rc) {
        api_store_error(o, rc, &e);
        return;
    }
    info.rows_scanned += info2.rows_scanned;
    if (info2.partial && !info.partial) {
        info.partial = true;
        memcpy(info.partial_reason, info2.partial_reason, sizeof info.partial_reason);
    }
    jp_strbuf_printf(b,
                     "],\"meta\":{\"targets\":%ld,\"limit\":%ld,\"truncated\":%s,"
                     "\"history\":%ld,\"history_limit\":%ld,\"history_truncated\":%s,",
                     l.n, limit, l.cut ? "true" : "false", h.n, hlimit, h.cut ? "true" : "false");
    api_meta_common(b, &q, &info, t0);
    jp_strbuf_puts(b, "}}\n");
    o->status = 200;
}

/* ---- /api/v1/services: targets grouped by (namespace, service) ---- */

static void api_service_close(api_list *l)
{
    if (!l->cur_ns)
        return;
    jp_strbuf_puts(l->b, "],\"pods\":");
    jp_strbuf_printf(l->b, "%ld,\"kinds\":", l->svc_pods);
    api_kinds(l->b, l->svc_kinds);
    jp_strbuf_puts(l->b, ",\"last_seen\":");
    jw_time(l->b, l->svc_last);
    jp_strbuf_putc(l->b, '}');
    free(l->cur_ns);
    free(l->cur_svc);
    l->cur_ns = l->cur_svc = NULL;
}

static bool api_service_cb(const store_target_row *row, void *ctx)
{
    api_list *l = ctx;
    const jp_batch_target *t = row->target;
    if (!api_in_scope(l, t->ns))
        return true;
    const char *ns = t->ns ? t->ns : "", *svc = t->service ? t->service : "";
    if (!l->cur_ns || strcmp(l->cur_ns, ns) || strcmp(l->cur_svc, svc)) {
        api_service_close(l);
        if (!api_list_room(l))
            return false;
        l->cur_ns = jp_xstrdup(ns);
        l->cur_svc = jp_xstrdup(svc);
        l->svc_kinds = 0;
        l->svc_last = 0;
        l->svc_pods = 0;
        jp_strbuf_puts(l->b, "{\"namespace\":");
        jw_cstr(l->b, ns);
        jp_strbuf_puts(l->b, ",\"service\":");
        jw_cstr(l->b, svc);
        jp_strbuf_puts(l->b, ",\"targets\":[");
    }
    if (l->svc_pods++)
        jp_strbuf_putc(l->b, ',');
    l->svc_kinds |= row->kinds;
    if (row->last_ns > l->svc_last)
        l->svc_last = row->last_ns;
    jp_strbuf_puts(l->b, "{\"target\":");
    api_target_json(l->b, t);
    jp_strbuf_puts(l->b, ",\"kinds\":");
    api_kinds(l->b, row->kinds);
    jp_strbuf_puts(l->b, ",\"last_seen\":");
    jw_time(l->b, row->last_ns);
    api_state(l->b, row->state, row->reason);
    api_mode(l->b, row->mode, row->until_ns);
    jp_strbuf_putc(l->b, '}');
    return true;
}

void api_services(srv_req *r, srv_resp *o)
{
    int64_t t0 = jp_time_mono_ns();
    api_q q;
    long limit;
    if (!api_parse(r, o, &q, API_SCOPE_FILTERS) || !api_limit(r, o, "limit", 1000, 100000, &limit))
        return;
    jp_strbuf *b = &o->body;
    store_query_info info;
    jp_error e;
    jp_error_init(&e);
    jp_strbuf_puts(b, "{\"services\":[");
    api_list l = {.r = r, .b = b, .limit = limit, .scope_filter = true};
    jp_err rc = r->s->st->ops->targets(r->s->st, &q.f, &q.b, api_service_cb, &l, &info, &e);
    api_service_close(&l);
    if (rc) {
        api_store_error(o, rc, &e);
        return;
    }
    jp_strbuf_printf(b, "],\"meta\":{\"services\":%ld,\"limit\":%ld,\"truncated\":%s,", l.n, limit,
                     l.cut ? "true" : "false");
    api_meta_common(b, &q, &info, t0);
    jp_strbuf_puts(b, "}}\n");
    o->status = 200;
}

/* ---- /api/v1/deadlocks ---- */

static bool api_deadlock_cb(const store_doc_row *row, void *ctx)
{
    api_list *l = ctx;
    api_row go = api_row_begin(l, row->target->ns);
    if (go != ROW_EMIT)
        return go == ROW_SKIP;
    api_doc_head(l, row);
    jp_strbuf_puts(l->b, ",\"deadlock\":");
    jp_strbuf_append(l->b, row->json, row->json_len);
    jp_strbuf_putc(l->b, '}');
    return true;
}

void api_deadlocks(srv_req *r, srv_resp *o)
{
    int64_t t0 = jp_time_mono_ns();
    api_q q;
    long limit;
    if (!api_parse(r, o, &q, 0) || !api_limit(r, o, "limit", 100, 10000, &limit))
        return;
    jp_strbuf *b = &o->body;
    store_query_info info;
    jp_error e;
    jp_error_init(&e);
    jp_strbuf_puts(b, "{\"deadlocks\":[");
    api_list l = {.r = r, .b = b, .limit = limit, .scope_filter = true};
    jp_err rc = r->s->st->ops->deadlocks(r->s->st, &q.f, &q.b, api_deadlock_cb, &l, &info, &e);
    if (rc) {
        api_store_error(o, rc, &e);
        return;
    }
    jp_strbuf_printf(b, "],\"meta\":{\"deadlocks\":%ld,\"limit\":%ld,\"truncated\":%s,", l.n, limit,
                     l.cut ? "true" : "false");
    api_meta_common(b, &q, &info, t0);
    jp_strbuf_puts(b, "}}\n");
    o->status = 200;
}
