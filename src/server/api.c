/* api.c - the query API: parameters, scope checks, budgets, and the flame
 * tree / top table built from the store's stack rows. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/flame.h"
#include "server/api_int.h"
#include "wire/html.h"
#include "wire/otlp_encode.h"
#include "wire/pprof.h"

/* ---- parameters ----
 * Parsed by api_query.c (pure, unit-tested and fuzzed); here only turned
 * into answers and checked against the token. */

static bool api_bad(srv_resp *o, jp_err rc, const jp_error *e)
{
    if (rc == JP_OK)
        return true;
    srv_error(o, 400, "malformed", "%s", e->msg);
    return false;
}

bool api_limit(srv_req *r, srv_resp *o, const char *key, long def, long max, long *out)
{
    jp_error e;
    jp_error_init(&e);
    return api_bad(o, api_arg_limit(r->args, key, def, max, out, &e), &e);
}

bool api_time_arg(srv_req *r, srv_resp *o, const char *key, int64_t now, int64_t *out)
{
    jp_error e;
    jp_error_init(&e);
    return api_bad(o, api_arg_time(r->args, key, now, out, &e), &e);
}

bool api_parse(srv_req *r, srv_resp *o, api_q *q, unsigned need)
{
    memset(q, 0, sizeof *q);
    q->now = store_now_ns();
    jp_error e;
    jp_error_init(&e);
    jp_err rc = api_query_parse(r->args, need, q->now, &q->f, &e);
    /* the token first (role, and the namespace asked for in its scope) */
    const char *ns = api_args_get(r->args, "namespace");
    if (!srv_authorize(r, o, AUTH_READ, ns && *ns ? ns : NULL) || !api_bad(o, rc, &e))
        return false;
    /* a token limited to some namespaces must say which one it reads */
    if (!q->f.ns && !(need & API_SCOPE_FILTERS) && !r->s->cfg.insecure_no_auth &&
        !auth_all_namespaces(r->tok)) {
        srv_error(o, 403, "forbidden", "this token is limited to some namespaces: pass namespace=");
        return false;
    }
    q->b.time_ns = r->s->cfg.query_budget_ns;
    q->b.max_rows = r->s->cfg.query_max_rows;
    q->b.max_stacks = r->s->cfg.query_max_stacks;
    return true;
}

void api_meta_common(jp_strbuf *b, const api_q *q, const store_query_info *info, int64_t t0)
{
    jp_strbuf_puts(b, "\"namespace\":");
    jw_cstr(b, q->f.ns);
    jp_strbuf_puts(b, ",\"service\":");
    jw_cstr(b, q->f.service);
    jp_strbuf_puts(b, ",\"pod\":");
    jw_cstr(b, q->f.pod);
    jp_strbuf_puts(b, ",\"from\":");
    jw_time(b, q->f.from_ns);
    jp_strbuf_puts(b, ",\"to\":");
    jw_time(b, q->f.to_ns);
    jp_strbuf_printf(b,
                     ",\"rows_scanned\":%llu,\"windows_scanned\":%llu,\"bytes_scanned\":%llu,"
                     "\"partial\":%s,\"partial_reason\":",
                     (unsigned long long)info->rows_scanned,
                     (unsigned long long)info->windows_scanned,
                     (unsigned long long)info->bytes_scanned, info->partial ? "true" : "false");
    jw_cstr(b, info->partial ? info->partial_reason : NULL);
    jp_strbuf_printf(b, ",\"took_ms\":%.3f", (double)(jp_time_mono_ns() - t0) / 1e6);
}

void api_store_error(srv_resp *o, jp_err rc, const jp_error *e)
{
    if (rc == JP_ERR_TIMEOUT || rc == JP_ERR_IO || rc == JP_ERR_PROTOCOL || rc == JP_ERR_NOSPACE)
        srv_error(o, 503, "unavailable", "store unavailable, retry later: %s", e->msg);
    else if (rc == JP_ERR_USAGE)
        srv_error(o, 400, "malformed", "%s", e->msg);
    else
        srv_error(o, 500, "internal", "store: %s", e->msg);
}

/* ---- flame and top ---- */

typedef struct api_prof {
    jp_profile *p;
    jp_kind kind;
    bool threads;
    uint32_t *idx;
    size_t idx_cap;
} api_prof;

static bool api_stack_cb(const store_stack_row *row, void *ctx)
{
    api_prof *c = ctx;
    c->idx = jp_xgrow(c->idx, &c->idx_cap, row->depth + 1, sizeof *c->idx);
    for (uint32_t i = 0; i < row->depth; i++)
        c->idx[i] = jp_profile_frame(c->p, row->frames[i], row->frame_lens[i],
                                     row->frame_kinds && row->frame_kinds[i] < JP_FRAME_KIND_COUNT
                                         ? (jp_frame_kind)row->frame_kinds[i]
                                         : JP_FRAME_UNKNOWN);
    uint32_t st = jp_profile_stack(c->p, c->idx, row->depth, row->truncated);
    uint32_t th = JP_NO_THREAD;
    if (c->threads && row->thread)
        th = jp_profile_thread(c->p, row->thread, strlen(row->thread));
    jp_profile_add(c->p, c->kind, st, th, row->samples, row->samples, row->value);
    return true;
}

jp_profile *api_load_profile(srv_req *r, srv_resp *o, const store_filter *f, const store_budget *b,
                             bool threads, store_flame_totals *tot, store_query_info *info)
{
    api_prof c = {.p = jp_profile_new(), .kind = (jp_kind)f->kind, .threads = threads};
    jp_error e;
    jp_error_init(&e);
    jp_err rc = store_flame(r->s->st, f, b, api_stack_cb, &c, tot, info, &e);
    free(c.idx);
    if (rc) {
        api_store_error(o, rc, &e);
        jp_profile_free(c.p);
        return NULL;
    }
    return c.p;
}

/* Loads the profile of a flame/top query; NULL after an error answer. */
static jp_profile *api_load(srv_req *r, srv_resp *o, api_q *q, bool threads,
                            store_flame_totals *tot, store_query_info *info)
{
    return api_load_profile(r, o, &q->f, &q->b, threads, tot, info);
}

static void api_flame_meta(jp_strbuf *b, const api_q *q, const jp_profile *p, bool by_value,
                           const store_flame_totals *tot, const store_query_info *info, int64_t t0)
{
    const jp_kind_table *kt = &p->kinds[q->f.kind];
    jp_strbuf_puts(b, "\"meta\":{\"kind\":");
    jw_cstr(b, jp_kind_name((jp_kind)q->f.kind));
    jp_strbuf_puts(b, ",\"unit\":");
    jw_cstr(b, by_value ? jp_kind_unit((jp_kind)q->f.kind) : "samples");
    jp_strbuf_puts(b, ",\"value_unit\":");
    jw_cstr(b, jp_kind_unit((jp_kind)q->f.kind));
    jp_strbuf_puts(b, ",\"thread\":");
    jw_cstr(b, q->f.thread);
    jp_strbuf_printf(b,
                     ",\"samples\":%llu,\"total\":%llu,\"events\":%llu,\"windows\":%llu,"
                     "\"stacks\":%zu,\"frames\":%zu,\"period_ns\":%lld,\"dropped\":%s,"
                     "\"stacks_truncated\":%s,\"first\":",
                     (unsigned long long)kt->samples, (unsigned long long)kt->value,
                     (unsigned long long)tot->events, (unsigned long long)tot->windows, p->nstacks,
                     p->nframes, (long long)tot->period_ns, tot->any_dropped ? "true" : "false",
                     tot->any_truncated || kt->truncated ? "true" : "false");
    jw_time(b, tot->first_ns);
    jp_strbuf_puts(b, ",\"last\":");
    jw_time(b, tot->last_ns);
    jp_strbuf_putc(b, ',');
    api_meta_common(b, q, info, t0);
}

static const jp_flame *sort_flame;
static bool sort_by_value;

static int api_node_cmp(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    uint64_t ta = jp_flame_total(sort_flame, a, sort_by_value),
             tb = jp_flame_total(sort_flame, b, sort_by_value);
    if (ta != tb)
        return ta > tb ? -1 : 1;
    uint32_t da = sort_flame->nodes[a].depth, db = sort_flame->nodes[b].depth;
    if (da != db)
        return da < db ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Keeps the max_nodes heaviest nodes whose ancestors are all kept (a parent
 * is never lighter than its child, so sorting by total keeps trees whole). */
static uint8_t *api_flame_select(const jp_flame *f, bool by_value, size_t max_nodes, size_t *kept)
{
    uint8_t *keep = jp_xcalloc(f->count + 1, 1);
    uint32_t *order = jp_xcalloc(f->count + 1, sizeof *order);
    for (size_t i = 0; i < f->count; i++)
        order[i] = (uint32_t)i;
    /* qsort has no context argument in C11; the comparator reads these two */
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    sort_flame = f;
    sort_by_value = by_value;
    qsort(order, f->count, sizeof *order, api_node_cmp);
    pthread_mutex_unlock(&mu);
    size_t n = 0;
    for (size_t i = 0; i < f->count && n < max_nodes; i++) {
        uint32_t v = order[i], parent = f->nodes[v].parent;
        if (parent == JP_FLAME_NONE || keep[parent]) {
            keep[v] = 1;
            n++;
        }
    }
    free(order);
    *kept = n;
    return keep;
}

typedef struct api_node_opts {
    bool by_value, both;
} api_node_opts;

static void api_node_open(jp_strbuf *b, const jp_flame *f, uint32_t v, const void *ctx)
{
    const api_node_opts *no = ctx;
    size_t len;
    const char *name = jp_flame_node_name(f, v, &len);
    jp_strbuf_puts(b, "{\"name\":");
    jw_str(b, name, len);
    uint32_t frame = f->nodes[v].frame;
    if (frame != JP_FLAME_NONE && frame < f->prof->nframes) {
        /* the frame's kind, for colours as in jprof-top (not for thread cells
         * or a store that kept none) */
        jp_frame_kind k = jp_frame_primary_kind(&f->prof->frames[frame]);
        if (k != JP_FRAME_UNKNOWN && k != JP_FRAME_THREAD)
            jp_strbuf_printf(b, ",\"type\":\"%s\"", jp_frame_kind_name(k));
    }
    jp_strbuf_printf(b, ",\"self\":%llu,\"total\":%llu",
                     (unsigned long long)jp_flame_self(f, v, no->by_value),
                     (unsigned long long)jp_flame_total(f, v, no->by_value));
    if (no->both) /* by=both: the value above, and the samples */
        jp_strbuf_printf(b, ",\"self_samples\":%llu,\"total_samples\":%llu",
                         (unsigned long long)f->nodes[v].self_samples,
                         (unsigned long long)f->nodes[v].total_samples);
    jp_strbuf_puts(b, ",\"children\":[");
}

void api_flame_tree_json(jp_strbuf *b, const jp_flame *f, const uint8_t *keep,
                         api_node_open_fn open, const void *ctx)
{
    uint32_t *cursor = jp_xcalloc(f->max_depth + 3, sizeof *cursor);
    bool *first = jp_xcalloc(f->max_depth + 3, sizeof *first);
    size_t sp = 0;
    open(b, f, 0, ctx);
    cursor[0] = f->nodes[0].first_child;
    first[0] = true;
    for (;;) {
        uint32_t c = cursor[sp];
        while (c != JP_FLAME_NONE && keep && !keep[c])
            c = f->nodes[c].next_sibling;
        if (c == JP_FLAME_NONE) {
            jp_strbuf_puts(b, "]}");
            if (sp == 0)
                break;
            sp--;
            continue;
        }
        cursor[sp] = f->nodes[c].next_sibling;
        if (!first[sp])
            jp_strbuf_putc(b, ',');
        first[sp] = false;
        open(b, f, c, ctx);
        sp++;
        cursor[sp] = f->nodes[c].first_child;
        first[sp] = true;
    }
    free(cursor);
    free(first);
}

/* The kept tree as JSON. */
static void api_flame_tree(jp_strbuf *b, const jp_flame *f, const uint8_t *keep, bool by_value,
                           bool both)
{
    api_node_opts no = {by_value, both};
    api_flame_tree_json(b, f, keep, api_node_open, &no);
}

bool api_by_value(srv_req *r, srv_resp *o, bool *by_value)
{
    static const char *const by[] = {"value", "samples", NULL};
    int i;
    jp_error e;
    jp_error_init(&e);
    if (!api_bad(o, api_arg_choice(r->args, "by", by, &i, &e), &e))
        return false;
    *by_value = i == 0;
    return true;
}

/* format=: json (default), pprof (gzipped protobuf), html (one offline
 * file with the page's flame graph) or otlp (OpenTelemetry profiles,
 * protobuf), the last three as downloads. */
typedef enum api_fmt { API_FMT_JSON, API_FMT_PPROF, API_FMT_HTML, API_FMT_OTLP } api_fmt;

static bool api_format(srv_req *r, srv_resp *o, api_fmt *f)
{
    static const char *const fmts[] = {"json", "pprof", "html", "otlp", NULL};
    int i;
    jp_error e;
    jp_error_init(&e);
    if (!api_bad(o, api_arg_choice(r->args, "format", fmts, &i, &e), &e))
        return false;
    *f = (api_fmt)i;
    return true;
}

/* "jprof-SERVICE-KIND.EXT" with only [A-Za-z0-9._-] from the service name */
static void api_download(srv_resp *o, const api_q *q, const char *ext)
{
    char name[96];
    size_t n = 0;
    for (const char *s = q->f.service; s && *s && n < 48; s++)
        name[n++] = isalnum((unsigned char)*s) || *s == '.' || *s == '-' ? *s : '_';
    name[n] = '\0';
    snprintf(o->disposition, sizeof o->disposition, "attachment; filename=\"jprof-%s-%s.%s\"", name,
             jp_kind_name((jp_kind)q->f.kind), ext);
}

/* The export failed: an error answer, not a download. */
static void api_export_failed(srv_resp *o, const jp_error *err)
{
    o->disposition[0] = '\0';
    jp_strbuf_reset(&o->body);
    srv_error(o, 500, "internal", "%s", err->msg);
}

/* The whole profile of the query as a gzipped pprof (no JSON tree built). */
static void api_flame_pprof(srv_resp *o, const api_q *q, const jp_profile *p, bool threads)
{
    jp_error err;
    jp_error_init(&err);
    o->status = 200;
    o->ctype = "application/octet-stream";
    api_download(o, q, "pb.gz");
    if (jp_pprof_encode(p, (jp_kind)q->f.kind, threads, &o->body, &err) != JP_OK)
        api_export_failed(o, &err);
}

/* The whole profile of the query as OpenTelemetry profiles, the query's
 * namespace, service and pod as the resource (wire/otlp_encode.h). */
static void api_flame_otlp(srv_resp *o, const api_q *q, const jp_profile *p, bool threads)
{
    jp_error err;
    jp_error_init(&err);
    jp_batch_target t = {
        .ns = (char *)q->f.ns, .service = (char *)q->f.service, .pod = (char *)q->f.pod};
    o->status = 200;
    o->ctype = "application/x-protobuf";
    api_download(o, q, "otlp.pb");
    jp_err rc = jp_otlp_encode(p, 1u << q->f.kind, threads, &t, &o->body, &err);
    if (rc == JP_ERR_NOT_FOUND) /* nothing in the range: an empty message, not an error */
        jp_strbuf_reset(&o->body);
    else if (rc != JP_OK)
        api_export_failed(o, &err);
}

/* The JSON answer (json) as one offline HTML file. */
static void api_flame_html(srv_resp *o, const api_q *q, bool threads, jp_strbuf *json)
{
    jp_error err;
    jp_error_init(&err);
    json_error_t je;
    json_t *doc = json_loadb(json->data, json->len, 0, &je);
    char title[300];
    snprintf(title, sizeof title, "%s/%s %s", q->f.ns ? q->f.ns : "", q->f.service,
             jp_kind_name((jp_kind)q->f.kind));
    if (doc)
        json_object_set_new(doc, "threads", json_boolean(threads));
    jp_err rc = doc ? jp_html_encode(doc, title, &o->body, &err)
                    : jp_error_set(&err, JP_ERR_INTERNAL, "flame JSON: %s", je.text);
    json_decref(doc);
    o->ctype = "text/html; charset=utf-8";
    api_download(o, q, "html");
    if (rc != JP_OK)
        api_export_failed(o, &err);
}

void api_flamegraph(srv_req *r, srv_resp *o)
{
    int64_t t0 = jp_time_mono_ns();
    api_q q;
    long max_nodes;
    /* by=both: the flame tree by value, with the samples next to it */
    static const char *const bys[] = {"value", "samples", "both", NULL};
    int by;
    jp_error e;
    jp_error_init(&e);
    api_fmt fmt;
    if (!api_format(r, o, &fmt))
        return;
    if (!api_parse(r, o, &q, API_NEED_NS | API_NEED_SERVICE | API_NEED_KIND) ||
        !api_limit(r, o, "max_nodes", 2000, 200000, &max_nodes) ||
        !api_bad(o, api_arg_choice(r->args, "by", bys, &by, &e), &e))
        return;
    bool by_value = by != 1, both = by == 2;
    bool threads = api_arg_flag(r->args, "threads");
    store_flame_totals tot;
    store_query_info info;
    jp_profile *p = api_load(r, o, &q, threads, &tot, &info);
    if (!p)
        return;
    if (fmt == API_FMT_PPROF || fmt == API_FMT_OTLP) {
        (fmt == API_FMT_PPROF ? api_flame_pprof : api_flame_otlp)(o, &q, p, threads);
        jp_profile_free(p);
        return;
    }
    jp_flame *f = jp_flame_build(p, (jp_kind)q.f.kind, threads);
    size_t kept;
    uint8_t *keep = api_flame_select(f, by_value, (size_t)max_nodes, &kept);
    o->status = 200;
    jp_strbuf_putc(&o->body, '{');
    api_flame_meta(&o->body, &q, p, by_value, &tot, &info, t0);
    jp_strbuf_printf(&o->body,
                     ",\"nodes\":%zu,\"max_nodes\":%ld,\"truncated\":%s,\"omitted_nodes\":%zu},"
                     "\"tree\":",
                     kept, max_nodes, kept < f->count ? "true" : "false", f->count - kept);
    api_flame_tree(&o->body, f, keep, by_value, both);
    jp_strbuf_puts(&o->body, "}\n");
    if (fmt == API_FMT_HTML) {
        jp_strbuf json = o->body; /* the answer above becomes the file's data */
        jp_strbuf_init(&o->body, 0);
        api_flame_html(o, &q, threads, &json);
        jp_strbuf_cleanup(&json);
    }
    free(keep);
    jp_flame_free(f);
    jp_profile_free(p);
}

void api_top(srv_req *r, srv_resp *o)
{
    int64_t t0 = jp_time_mono_ns();
    api_q q;
    long limit;
    bool by_value;
    if (!api_parse(r, o, &q, API_NEED_NS | API_NEED_SERVICE | API_NEED_KIND) ||
        !api_limit(r, o, "limit", 100, 100000, &limit) || !api_by_value(r, o, &by_value))
        return;
    store_flame_totals tot;
    store_query_info info;
    jp_profile *p = api_load(r, o, &q, false, &tot, &info);
    if (!p)
        return;
    /* over the whole, untruncated tree: top must not depend on max_nodes */
    jp_flame *f = jp_flame_build(p, (jp_kind)q.f.kind, false);
    jp_top_row *rows = NULL;
    size_t n = jp_flame_top(f, 0, by_value, &rows);
    size_t shown = n < (size_t)limit ? n : (size_t)limit;
    o->status = 200;
    jp_strbuf_putc(&o->body, '{');
    api_flame_meta(&o->body, &q, p, by_value, &tot, &info, t0);
    jp_strbuf_printf(&o->body, ",\"rows_total\":%zu,\"limit\":%ld,\"truncated\":%s},\"rows\":[", n,
                     limit, shown < n ? "true" : "false");
    for (size_t i = 0; i < shown; i++) {
        size_t len;
        const char *name = jp_profile_frame_name(p, rows[i].frame, &len);
        jp_strbuf_puts(&o->body, i ? ",{\"name\":" : "{\"name\":");
        jw_str(&o->body, name, len);
        jp_strbuf_printf(
            &o->body, ",\"self\":%llu,\"total\":%llu,\"self_samples\":%llu,\"total_samples\":%llu}",
            (unsigned long long)(by_value ? rows[i].self_value : rows[i].self_samples),
            (unsigned long long)(by_value ? rows[i].total_value : rows[i].total_samples),
            (unsigned long long)rows[i].self_samples, (unsigned long long)rows[i].total_samples);
    }
    jp_strbuf_puts(&o->body, "]}\n");
    free(rows);
    jp_flame_free(f);
    jp_profile_free(p);
}
