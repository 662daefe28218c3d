#include "tui/server_client.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "tui/exit.h"
#include "wire/query_json.h"

const char *const tui_range_names[TUI_RANGE_COUNT] = {"5m", "15m", "1h", "6h", "24h"};

int tui_range_parse(const char *s)
{
    for (int i = 0; i < TUI_RANGE_COUNT; i++)
        if (!strcmp(s, tui_range_names[i]))
            return i;
    return -1;
}

#define TOKEN_MAX 4096

static char *dup_or_null(const char *s)
{
    return s ? jp_xstrdup(s) : NULL;
}

tui_client *tui_client_new(const tui_client_opts *o)
{
    tui_client *r = jp_xcalloc(1, sizeof *r);
    const char *base = o->server && *o->server ? o->server : TUI_DEFAULT_SERVER;
    size_t len = strlen(base);
    while (len > 1 && base[len - 1] == '/')
        len--;
    r->base = jp_xstrndup(base, len);
    r->ns = jp_xstrdup(o->ns ? o->ns : "");
    r->svc = jp_xstrdup(o->svc ? o->svc : "");
    r->token_file = dup_or_null(o->token_file);
    r->token_from = jp_xstrdup(o->token_from ? o->token_from : "--token-file");
    r->server_from = jp_xstrdup(o->server_from ? o->server_from : "default");
    jp_http_opts_init(&r->http);
    r->http.ca_file = o->ca_file;
    return r;
}

static void clear_pods(tui_client *r)
{
    for (size_t i = 0; i < r->npods; i++)
        free(r->pods[i]);
    free(r->pods);
    r->pods = NULL;
    r->npods = 0;
}

void tui_client_free(tui_client *r)
{
    if (!r)
        return;
    if (r->token) {
        memset(r->token, 0, strlen(r->token));
        free(r->token);
    }
    json_decref(r->service);
    json_decref(r->threads);
    json_decref(r->targets);
    json_decref(r->ingestion);
    clear_pods(r);
    free(r->base);
    free(r->ns);
    free(r->svc);
    free(r->token_file);
    free(r->token_from);
    free(r->server_from);
    free(r);
}

int tui_client_exit_status(const tui_client *r)
{
    switch (r->fail) {
    case TUI_CFAIL_NONE:
        return 0;
    case TUI_CFAIL_UNREACHABLE:
        return TUI_EXIT_UNREACHABLE;
    case TUI_CFAIL_UNAUTHORIZED:
        return TUI_EXIT_UNAUTHORIZED;
    case TUI_CFAIL_FORBIDDEN:
        return TUI_EXIT_FORBIDDEN;
    case TUI_CFAIL_NO_SERVICE:
        return TUI_EXIT_NO_SERVICE;
    default:
        return 1;
    }
}

static jp_err fail(tui_client *r, tui_client_fail f, jp_err code, jp_error *err, const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));
static jp_err fail(tui_client *r, tui_client_fail f, jp_err code, jp_error *err, const char *fmt,
                   ...)
{
    r->fail = f;
    va_list ap;
    va_start(ap, fmt);
    char msg[sizeof err->msg];
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return jp_error_set(err, code, "%s", msg);
}

static jp_err read_token(tui_client *r, jp_error *err)
{
    if (!r->token_file || r->token)
        return JP_OK;
    FILE *f = fopen(r->token_file, "r");
    if (!f)
        return fail(r, TUI_CFAIL_UNAUTHORIZED, JP_ERR_IO, err,
                    "cannot read the token file %s (%s): %s", r->token_file, r->token_from,
                    strerror(errno));
    char buf[TOKEN_MAX + 2];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    if (n > TOKEN_MAX)
        return fail(r, TUI_CFAIL_UNAUTHORIZED, JP_ERR_LIMIT, err,
                    "the token file %s (%s) is larger than %d bytes", r->token_file, r->token_from,
                    TOKEN_MAX);
    buf[n] = 0;
    /* the first line, without surrounding blanks */
    char *s = buf;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    size_t len = strcspn(s, "\r\n");
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (!len)
        return fail(r, TUI_CFAIL_UNAUTHORIZED, JP_ERR_FORMAT, err,
                    "the token file %s (%s) is empty", r->token_file, r->token_from);
    r->token = jp_xstrndup(s, len);
    memset(buf, 0, sizeof buf);
    r->http.token = r->token;
    return JP_OK;
}

static void q_add(jp_strbuf *b, const char *key, const char *val)
{
    if (!val || !*val)
        return;
    jp_strbuf_putc(b, strchr(jp_strbuf_str(b), '?') ? '&' : '?');
    jp_strbuf_puts(b, key);
    jp_strbuf_putc(b, '=');
    jp_http_query_escape(b, val);
}

/* The message for a non-200 answer. */
static jp_err http_failure(tui_client *r, const jp_http_resp *resp, json_t *body, jp_error *err)
{
    const char *m = body ? jp_query_error_message(body) : NULL;
    if (resp->status == 401) {
        if (!r->token)
            return fail(r, TUI_CFAIL_UNAUTHORIZED, JP_ERR_PERMISSION, err,
                        "jprof-server at %s wants a token: give --token-file FILE or set "
                        "JPROF_TOKEN_FILE (a file holding a read token)",
                        r->base);
        return fail(r, TUI_CFAIL_UNAUTHORIZED, JP_ERR_PERMISSION, err,
                    "jprof-server at %s refused the token in %s (from %s): %s; check the file "
                    "or the server's --tokens",
                    r->base, r->token_file, r->token_from, m ? m : "unknown token");
    }
    if (resp->status == 403)
        return fail(r, TUI_CFAIL_FORBIDDEN, JP_ERR_PERMISSION, err,
                    "the token in %s (from %s) may not read namespace %s on %s: %s",
                    r->token_file ? r->token_file : "(none)", r->token_from, r->ns, r->base,
                    m ? m : "forbidden");
    tui_client_fail f = resp->status == 503 || resp->status == 429 || resp->status >= 500
                            ? TUI_CFAIL_UNREACHABLE
                            : TUI_CFAIL_OTHER;
    return fail(r, f, JP_ERR_PROTOCOL, err, "jprof-server at %s answered %ld: %s", r->base,
                resp->status, m ? m : "no error message");
}

/* GETs base + path (with its query) and parses the JSON answer. */
static jp_err remote_get(tui_client *r, const char *path, json_t **out, double *took, jp_error *err)
{
    *out = NULL;
    jp_strbuf url;
    jp_strbuf_init(&url, 0);
    jp_strbuf_printf(&url, "%s%s", r->base, path);
    jp_http_resp resp;
    jp_http_resp_init(&resp);
    jp_error e;
    jp_error_init(&e);
    jp_err rc = jp_http_get(&r->http, jp_strbuf_str(&url), &resp, &e);
    if (took)
        *took += resp.took_ms;
    if (rc == JP_ERR_LIMIT) {
        rc = fail(r, TUI_CFAIL_OTHER, rc, err, "%s", e.msg);
    } else if (rc != JP_OK) {
        rc = fail(r, TUI_CFAIL_UNREACHABLE, rc, err,
                  "cannot reach jprof-server at %s (%s): %s; start it, or point --server or "
                  "JPROF_SERVER at it",
                  r->base, r->server_from, strstr(e.msg, ": ") ? strrchr(e.msg, ':') + 2 : e.msg);
    } else {
        json_error_t je;
        json_t *body = json_loadb(resp.body.data ? resp.body.data : "", resp.body.len, 0, &je);
        if (resp.status != 200)
            rc = http_failure(r, &resp, body, err);
        else if (!json_is_object(body))
            rc = fail(r, TUI_CFAIL_OTHER, JP_ERR_PROTOCOL, err,
                      "%s%s: the answer is not a JSON object (%s); is this jprof-server?", r->base,
                      path, body ? "wrong type" : je.text);
        if (rc == JP_OK)
            *out = body;
        else
            json_decref(body);
    }
    jp_http_resp_cleanup(&resp);
    jp_strbuf_cleanup(&url);
    return rc;
}

static void set_json(json_t **slot, json_t *v)
{
    json_decref(*slot);
    *slot = v;
}

/* "a, b, c" of the services in ns, or of the namespaces when ns has none. */
static void list_known(const json_t *services, const char *ns, jp_strbuf *svcs, jp_strbuf *nss)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(services, "services"), i, s)
    {
        const char *n = jp_query_str(s, "namespace"), *v = jp_query_str(s, "service");
        if (!n || !v)
            continue;
        if (!strcmp(n, ns)) {
            jp_strbuf_puts(svcs, svcs->len ? ", " : "");
            jp_strbuf_puts(svcs, v);
        } else if (!strstr(jp_strbuf_str(nss), n)) {
            jp_strbuf_puts(nss, nss->len ? ", " : "");
            jp_strbuf_puts(nss, n);
        }
    }
}

static void collect_pods(tui_client *r)
{
    clear_pods(r);
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(r->service, "targets"), i, t)
    {
        const char *pod = jp_query_str(json_object_get(t, "target"), "pod");
        bool seen = !pod;
        for (size_t k = 0; !seen && k < r->npods; k++)
            seen = !strcmp(r->pods[k], pod);
        if (seen)
            continue;
        r->pods = jp_xreallocarray(r->pods, r->npods + 1, sizeof *r->pods);
        r->pods[r->npods++] = jp_xstrdup(pod);
    }
}

/* Finds ns/svc in a /services answer; the unknown-service message otherwise. */
static jp_err find_service(tui_client *r, json_t *all, jp_error *err)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(all, "services"), i, s)
    {
        const char *n = jp_query_str(s, "namespace"), *v = jp_query_str(s, "service");
        if (n && v && !strcmp(n, r->ns) && !strcmp(v, r->svc)) {
            json_incref(s);
            set_json(&r->service, s);
            collect_pods(r);
            return JP_OK;
        }
    }
    jp_strbuf svcs, nss;
    jp_strbuf_init(&svcs, 300);
    jp_strbuf_init(&nss, 200);
    list_known(all, r->ns, &svcs, &nss);
    jp_err rc;
    if (svcs.len)
        rc = fail(r, TUI_CFAIL_NO_SERVICE, JP_ERR_NOT_FOUND, err,
                  "no service '%s' in namespace %s on %s (last 7 days); services there: %s", r->svc,
                  r->ns, r->base, jp_strbuf_str(&svcs));
    else
        rc = fail(r, TUI_CFAIL_NO_SERVICE, JP_ERR_NOT_FOUND, err,
                  "no service '%s': namespace %s has no data on %s (last 7 days)%s%s", r->svc,
                  r->ns, r->base, nss.len ? "; namespaces with data: " : "", jp_strbuf_str(&nss));
    jp_strbuf_cleanup(&svcs);
    jp_strbuf_cleanup(&nss);
    return rc;
}

static jp_err fetch_service(tui_client *r, double *took, jp_error *err)
{
    jp_strbuf p;
    jp_strbuf_init(&p, 0);
    jp_strbuf_puts(&p, "/api/v1/services");
    q_add(&p, "namespace", r->ns);
    q_add(&p, "from", "-7d");
    json_t *all = NULL;
    jp_err rc = remote_get(r, jp_strbuf_str(&p), &all, took, err);
    if (rc == JP_OK && json_array_size(json_object_get(all, "services")) == 0) {
        /* nothing in ns: ask again without it, to name the namespaces there are */
        json_t *any = NULL;
        jp_error ignored;
        jp_error_init(&ignored);
        if (remote_get(r, "/api/v1/services?from=-7d", &any, took, &ignored) == JP_OK)
            set_json(&all, any);
        r->fail = TUI_CFAIL_NONE;
    }
    if (rc == JP_OK)
        rc = find_service(r, all, err);
    json_decref(all);
    jp_strbuf_cleanup(&p);
    return rc;
}

jp_err tui_client_connect(tui_client *r, jp_error *err)
{
    r->fail = TUI_CFAIL_NONE;
    jp_err rc = read_token(r, err);
    if (rc == JP_OK)
        rc = fetch_service(r, NULL, err);
    return rc;
}

static jp_err get_into(tui_client *r, const char *path, const char *pod, const char *extra,
                       json_t **slot, double *took, jp_error *err)
{
    jp_strbuf p;
    jp_strbuf_init(&p, 0);
    jp_strbuf_puts(&p, path);
    q_add(&p, "namespace", r->ns);
    q_add(&p, "service", r->svc);
    q_add(&p, "pod", pod);
    if (extra)
        jp_strbuf_printf(&p, "&%s", extra);
    json_t *v = NULL;
    jp_err rc = remote_get(r, jp_strbuf_str(&p), &v, took, err);
    jp_strbuf_cleanup(&p);
    if (rc == JP_OK)
        set_json(slot, v);
    return rc;
}

jp_err tui_client_refresh(tui_client *r, const char *pod, jp_error *err)
{
    return tui_client_refresh_pod(r, pod, pod, err);
}

jp_err tui_client_refresh_pod(tui_client *r, const char *pod, const char *status_pod, jp_error *err)
{
    double took = 0;
    r->fail = TUI_CFAIL_NONE;
    jp_err rc = fetch_service(r, &took, err);
    if (rc == JP_OK)
        rc =
            get_into(r, "/api/v1/threads", pod, "full=1&thread_limit=100", &r->threads, &took, err);
    if (rc == JP_OK)
        rc = get_into(r, "/api/v1/targets", status_pod, "from=-24h&history_limit=30", &r->targets,
                      &took, err);
    if (rc == JP_OK) {
        json_t *ing = NULL;
        rc = remote_get(r, "/api/v1/ingestion?from=-1h", &ing, &took, err);
        if (rc == JP_OK)
            set_json(&r->ingestion, ing);
    }
    r->cost_ms = took;
    if (rc == JP_OK)
        r->refreshed_ns = jp_time_now_ns();
    return rc;
}

jp_err tui_client_refresh_targets(tui_client *r, jp_error *err)
{
    double took = 0;
    r->fail = TUI_CFAIL_NONE;
    jp_err rc =
        get_into(r, "/api/v1/targets", NULL, "from=-24h&history_limit=30", &r->targets, &took, err);
    r->cost_ms = took;
    return rc;
}

uint32_t tui_client_kinds(const tui_client *r)
{
    uint32_t mask = 0;
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(r->service, "kinds"), i, k)
    {
        jp_kind kind;
        if (json_is_string(k) && jp_kind_parse(json_string_value(k), &kind))
            mask |= 1u << kind;
    }
    return mask;
}

static void flame_path(jp_strbuf *p, const tui_client *r, const char *what, jp_kind k,
                       const char *from, const char *to, const char *pod)
{
    jp_strbuf_reset(p);
    jp_strbuf_printf(p, "/api/v1/%s", what);
    q_add(p, "namespace", r->ns);
    q_add(p, "service", r->svc);
    q_add(p, "pod", pod);
    q_add(p, "kind", jp_kind_name(k));
    q_add(p, "from", from);
    q_add(p, "to", to);
}

static void meta_take(tui_client_flame_meta *m, const json_t *answer)
{
    const json_t *mt = json_object_get(answer, "meta");
    const char *s;
    if ((s = jp_query_str(mt, "from")))
        snprintf(m->from, sizeof m->from, "%s", s);
    if ((s = jp_query_str(mt, "to")))
        snprintf(m->to, sizeof m->to, "%s", s);
    m->windows += jp_query_int(mt, "windows", 0);
    m->truncated |= json_is_true(json_object_get(mt, "truncated"));
    if (json_is_true(json_object_get(mt, "partial"))) {
        m->partial = true;
        s = jp_query_str(mt, "partial_reason");
        snprintf(m->partial_reason, sizeof m->partial_reason, "%s", s ? s : "query budget");
    }
}

jp_err tui_client_profile(tui_client *r, uint32_t kinds, const char *from, const char *to,
                          const char *pod, long max_nodes, jp_profile **out,
                          tui_client_flame_meta *meta, jp_error *err)
{
    *out = NULL;
    memset(meta, 0, sizeof *meta);
    if (!kinds)
        kinds = tui_client_kinds(r);
    r->fail = TUI_CFAIL_NONE;
    jp_profile *p = jp_profile_new();
    jp_strbuf path;
    jp_strbuf_init(&path, 0);
    jp_err rc = JP_OK;
    for (int k = 0; k < JP_KIND_COUNT && rc == JP_OK; k++) {
        if (!(kinds & (1u << k)))
            continue;
        for (int by_value = 0; by_value < 2 && rc == JP_OK; by_value++) {
            flame_path(&path, r, "flamegraph", (jp_kind)k, from, to, pod);
            jp_strbuf_printf(&path, "&by=%s&max_nodes=%ld", by_value ? "value" : "samples",
                             max_nodes);
            json_t *a = NULL;
            rc = remote_get(r, jp_strbuf_str(&path), &a, &meta->took_ms, err);
            if (rc == JP_OK)
                rc = jp_query_flame_add(p, (jp_kind)k, a, by_value, err);
            if (rc == JP_OK && !by_value)
                meta_take(meta, a);
            json_decref(a);
        }
    }
    jp_strbuf_cleanup(&path);
    if (rc != JP_OK) {
        if (r->fail == TUI_CFAIL_NONE)
            r->fail = TUI_CFAIL_OTHER;
        jp_profile_free(p);
        return rc;
    }
    *out = p;
    return JP_OK;
}

/* One side's from/to of a diff answer's meta ("current" or "base"). */
static void side_take(tui_client_flame_meta *m, const json_t *answer, const char *side,
                      jp_profile *p)
{
    const json_t *sm = json_object_get(json_object_get(answer, "meta"), side);
    const char *s;
    if ((s = jp_query_str(sm, "from")))
        snprintf(m->from, sizeof m->from, "%s", s);
    if ((s = jp_query_str(sm, "to")))
        snprintf(m->to, sizeof m->to, "%s", s);
    m->windows = jp_query_int(sm, "windows", 0);
    int64_t a = 0, b = 0;
    if (jp_rfc3339_parse(m->from, &a, NULL) == JP_OK &&
        jp_rfc3339_parse(m->to, &b, NULL) == JP_OK && b > a) {
        p->start_ns = a;
        p->end_ns = b;
    }
}

jp_err tui_client_diff(tui_client *r, jp_kind k, const char *from, const char *to, const char *pod,
                       const tui_client_base *b, long max_nodes, jp_profile **cur,
                       jp_profile **base, tui_client_flame_meta *meta,
                       tui_client_flame_meta *base_meta, jp_error *err)
{
    *cur = *base = NULL;
    memset(meta, 0, sizeof *meta);
    memset(base_meta, 0, sizeof *base_meta);
    r->fail = TUI_CFAIL_NONE;
    jp_profile *pc = jp_profile_new(), *pb = jp_profile_new();
    jp_strbuf path;
    jp_strbuf_init(&path, 0);
    jp_err rc = JP_OK;
    for (int by_value = 0; by_value < 2 && rc == JP_OK; by_value++) {
        flame_path(&path, r, "flamegraph/diff", k, from, to, pod);
        q_add(&path, "base_from", b->from);
        q_add(&path, "base_to", b->to);
        if (b->pod) { /* "" is every pod: sent even when empty */
            jp_strbuf_puts(&path, "&base_pod=");
            jp_http_query_escape(&path, b->pod);
        }
        jp_strbuf_printf(&path, "&by=%s&max_nodes=%ld&limit=1", by_value ? "value" : "samples",
                         max_nodes);
        json_t *a = NULL;
        rc = remote_get(r, jp_strbuf_str(&path), &a, &meta->took_ms, err);
        if (rc == JP_OK)
            rc = jp_query_flame_add_side(pc, k, a, by_value, false, err);
        if (rc == JP_OK)
            rc = jp_query_flame_add_side(pb, k, a, by_value, true, err);
        if (rc == JP_OK && !by_value) {
            meta_take(meta, a);
            side_take(meta, a, "current", pc);
            side_take(base_meta, a, "base", pb);
        }
        json_decref(a);
    }
    jp_strbuf_cleanup(&path);
    if (rc != JP_OK) {
        if (r->fail == TUI_CFAIL_NONE)
            r->fail = TUI_CFAIL_OTHER;
        jp_profile_free(pc);
        jp_profile_free(pb);
        return rc;
    }
    *cur = pc;
    *base = pb;
    return JP_OK;
}

jp_err tui_client_top(tui_client *r, jp_kind k, const char *from, const char *to, const char *pod,
                      long limit, bool by_value, json_t **out, jp_error *err)
{
    jp_strbuf path;
    jp_strbuf_init(&path, 0);
    flame_path(&path, r, "top", k, from, to, pod);
    jp_strbuf_printf(&path, "&limit=%ld&by=%s", limit, by_value ? "value" : "samples");
    r->fail = TUI_CFAIL_NONE;
    jp_err rc = remote_get(r, jp_strbuf_str(&path), out, NULL, err);
    jp_strbuf_cleanup(&path);
    return rc;
}

/* GET ENDPOINT for the service over a range, with one count parameter
 * (top, points) held within 1..1000. */
static jp_err range_get(tui_client *r, const char *endpoint, const char *from, const char *to,
                        const char *pod, const char *param, long n, json_t **out, jp_error *err)
{
    jp_strbuf path;
    jp_strbuf_init(&path, 0);
    jp_strbuf_puts(&path, endpoint);
    q_add(&path, "namespace", r->ns);
    q_add(&path, "service", r->svc);
    q_add(&path, "pod", pod);
    q_add(&path, "from", from);
    q_add(&path, "to", to);
    jp_strbuf_printf(&path, "&%s=%ld", param, n < 1 ? 1 : n > 1000 ? 1000 : n);
    r->fail = TUI_CFAIL_NONE;
    jp_err rc = remote_get(r, jp_strbuf_str(&path), out, NULL, err);
    jp_strbuf_cleanup(&path);
    return rc;
}

jp_err tui_client_heap(tui_client *r, const char *from, const char *to, const char *pod, long top,
                       json_t **out, jp_error *err)
{
    return range_get(r, "/api/v1/heap", from, to, pod, "top", top, out, err);
}

jp_err tui_client_gc(tui_client *r, const char *from, const char *to, const char *pod, int points,
                     json_t **out, jp_error *err)
{
    return range_get(r, "/api/v1/gc", from, to, pod, "points", points, out, err);
}
