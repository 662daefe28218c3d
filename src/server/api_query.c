/* api_query.c - the API's query string: split, decoded and checked
 * (api_args_parse), and its typed parameters. See api_query.h. */
#include "server/api_query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/utf8.h"
#include "base/xalloc.h"

/* ---- the raw query string ---- */

static int qs_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes q[from..to) ('+' is a space, %XX a byte) to *w, NUL-terminated. */
static jp_err qs_decode(const char *q, size_t from, size_t to, char **w, jp_error *err)
{
    char *p = *w;
    for (size_t i = from; i < to; i++) {
        char c = q[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%') {
            int hi = to - i >= 3 ? qs_hex(q[i + 1]) : -1, lo = hi >= 0 ? qs_hex(q[i + 2]) : -1;
            if (lo < 0)
                return jp_error_set(err, JP_ERR_USAGE,
                                    "query string, byte %zu: '%%' must start an escape of two hex "
                                    "digits (%%XX; a percent sign itself is %%25)",
                                    i);
            if (!hi && !lo)
                return jp_error_set(err, JP_ERR_USAGE,
                                    "query string, byte %zu: %%00 (a NUL byte) is not allowed", i);
            c = (char)(hi << 4 | lo);
            i += 2;
        } else if ((unsigned char)c < 0x20 || c == 0x7f) {
            return jp_error_set(err, JP_ERR_USAGE,
                                "query string, byte %zu: control character 0x%02x must be "
                                "percent-encoded",
                                i, (unsigned)(unsigned char)c);
        }
        *p++ = c;
    }
    *p++ = '\0';
    *w = p;
    return JP_OK;
}

jp_err api_args_parse(const char *q, size_t len, api_args *out, jp_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > API_QUERY_MAX_BYTES)
        return jp_error_set(err, JP_ERR_USAGE, "query string of %zu bytes is too long (at most %d)",
                            len, API_QUERY_MAX_BYTES);
    if (!len)
        return JP_OK;
    /* decoding never lengthens; two NULs per parameter */
    out->buf = jp_xmalloc(len + 2 * API_QUERY_MAX_ARGS + 2);
    char *w = out->buf;
    size_t i = 0;
    while (i < len) {
        size_t start = i, end = i, eq;
        while (end < len && q[end] != '&')
            end++;
        i = end + 1;
        if (end == start)
            continue; /* "a=1&&b=2": nothing between */
        if (out->n == API_QUERY_MAX_ARGS)
            return jp_error_set(err, JP_ERR_USAGE,
                                "query string, byte %zu: more than %d parameters", start,
                                API_QUERY_MAX_ARGS);
        for (eq = start; eq < end && q[eq] != '='; eq++)
            ;
        if (eq == start)
            return jp_error_set(err, JP_ERR_USAGE,
                                "query string, byte %zu: a parameter without a name", start);
        char *key = w;
        jp_err rc = qs_decode(q, start, eq, &w, err);
        if (rc)
            return rc;
        size_t klen = (size_t)(w - 1 - key);
        if (klen > API_QUERY_MAX_KEY)
            return jp_error_set(
                err, JP_ERR_USAGE,
                "query string, byte %zu: a parameter name of %zu bytes (at most %d)", start, klen,
                API_QUERY_MAX_KEY);
        for (size_t k = 0; k < klen; k++)
            if ((unsigned char)key[k] <= 0x20 || (unsigned char)key[k] >= 0x7f)
                return jp_error_set(err, JP_ERR_USAGE,
                                    "query string, byte %zu: a parameter name may only have "
                                    "printable ASCII characters",
                                    start);
        char *val = w;
        rc = eq < end ? qs_decode(q, eq + 1, end, &w, err) : qs_decode(q, end, end, &w, err);
        if (rc)
            return rc;
        size_t vlen = (size_t)(w - 1 - val);
        if (vlen > API_QUERY_MAX_VALUE)
            return jp_error_set(err, JP_ERR_USAGE,
                                "query string, byte %zu: the value of '%s' has %zu bytes (at most "
                                "%d)",
                                start, key, vlen, API_QUERY_MAX_VALUE);
        size_t bad = jp_utf8_first_bad((const unsigned char *)val, vlen);
        if (bad < vlen)
            return jp_error_set(err, JP_ERR_USAGE,
                                "query string, byte %zu: the value of '%s' is not valid UTF-8 "
                                "(decoded byte %zu)",
                                start, key, bad);
        for (size_t k = 0; k < out->n; k++)
            if (!strcmp(out->v[k].key, key))
                return jp_error_set(err, JP_ERR_USAGE,
                                    "query string, byte %zu: '%s' is given twice", start, key);
        out->v[out->n].key = key;
        out->v[out->n].val = val;
        out->n++;
    }
    return JP_OK;
}

void api_args_free(api_args *a)
{
    free(a->buf);
    a->buf = NULL;
    a->n = 0;
}

const char *api_args_get(const api_args *a, const char *key)
{
    for (size_t i = 0; a && i < a->n; i++)
        if (!strcmp(a->v[i].key, key))
            return a->v[i].val;
    return NULL;
}

/* ---- typed parameters ---- */

/* v quoted for a message: at most 40 bytes, cut at a UTF-8 boundary. */
static const char *qs_show(const char *v, char buf[48])
{
    size_t n = strlen(v);
    if (n <= 40)
        return v;
    n = 40;
    while (n && ((unsigned char)v[n] & 0xc0) == 0x80)
        n--;
    memcpy(buf, v, n); // NOLINT(bugprone-not-null-terminated-result): "..." and its NUL follow
    memcpy(buf + n, "...", 4);
    return buf;
}

static const char *qs_nonempty(const char *v)
{
    return v && *v ? v : NULL;
}

jp_err api_arg_time(const api_args *a, const char *key, int64_t now, int64_t *out, jp_error *err)
{
    const char *v = api_args_get(a, key);
    if (!v || !*v)
        return JP_OK;
    char sb[48];
    size_t n = strlen(v);
    if (n > API_QUERY_MAX_TIME)
        return jp_error_set(err, JP_ERR_USAGE, "%s: a time of %zu bytes is too long (at most %d)",
                            key, n, API_QUERY_MAX_TIME);
    int64_t t = now;
    if (strcmp(v, "now") != 0) {
        jp_timespec_arg ts;
        jp_error e;
        jp_error_init(&e);
        if (jp_timespec_parse(v, &ts, &e) != JP_OK)
            return jp_error_set(err, JP_ERR_USAGE,
                                "%s: %s (RFC 3339, @EPOCH, now, or relative like -15m)", key,
                                e.msg);
        /* relative times count from now: "-15m" is 15 minutes ago */
        if (!ts.relative)
            t = ts.value;
        else if (ts.from_end ? __builtin_sub_overflow(now, ts.value, &t)
                             : __builtin_add_overflow(now, ts.value, &t))
            t = -1; /* out of range, below */
    }
    if (t < 0 || t > API_TIME_MAX_NS)
        return jp_error_set(err, JP_ERR_USAGE,
                            "%s: '%s' is outside the times a query may name (1970-01-01 to "
                            "2100-01-01)",
                            key, qs_show(v, sb));
    *out = t;
    return JP_OK;
}

jp_err api_arg_limit(const api_args *a, const char *key, long def, long max, long *out,
                     jp_error *err)
{
    const char *v = api_args_get(a, key);
    *out = def;
    if (!v || !*v)
        return JP_OK;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 1 || n > max)
        return jp_error_set(err, JP_ERR_USAGE, "%s must be an integer from 1 to %ld", key, max);
    *out = n;
    return JP_OK;
}

jp_err api_arg_choice(const api_args *a, const char *key, const char *const *choices, int *out,
                      jp_error *err)
{
    const char *v = api_args_get(a, key);
    *out = 0;
    if (!v || !*v)
        return JP_OK;
    for (int i = 0; choices[i]; i++)
        if (!strcmp(v, choices[i])) {
            *out = i;
            return JP_OK;
        }
    char list[200] = "", sb[48];
    size_t n = 0;
    for (int i = 0; choices[i] && n < sizeof list; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s'%s'", i ? ", " : "", choices[i]);
    return jp_error_set(err, JP_ERR_USAGE, "%s must be one of %s, not '%s'", key, list,
                        qs_show(v, sb));
}

bool api_arg_flag(const api_args *a, const char *key)
{
    const char *v = api_args_get(a, key);
    return v && (!strcmp(v, "1") || !strcmp(v, "true"));
}

static jp_err qs_order(const char *from_key, const char *to_key, int64_t from, int64_t to,
                       jp_error *err)
{
    if (from < to)
        return JP_OK;
    char f[40], t[40];
    jp_rfc3339_format(from, f, sizeof f);
    jp_rfc3339_format(to, t, sizeof t);
    return jp_error_set(err, JP_ERR_USAGE, "'%s' (%s) must be before '%s' (%s)", from_key, f,
                        to_key, t);
}

jp_err api_query_parse(const api_args *a, unsigned need, int64_t now, store_filter *f,
                       jp_error *err)
{
    memset(f, 0, sizeof *f);
    f->kind = -1;
    f->ns = qs_nonempty(api_args_get(a, "namespace"));
    f->service = qs_nonempty(api_args_get(a, "service"));
    f->pod = qs_nonempty(api_args_get(a, "pod"));
    f->thread = qs_nonempty(api_args_get(a, "thread"));
    if ((need & API_NEED_NS) && !f->ns)
        return jp_error_set(err, JP_ERR_USAGE, "query parameter 'namespace' is required");
    if ((need & API_NEED_SERVICE) && !f->service)
        return jp_error_set(err, JP_ERR_USAGE, "query parameter 'service' is required");
    f->to_ns = now;
    jp_err rc = api_arg_time(a, "to", now, &f->to_ns, err);
    if (rc)
        return rc;
    f->from_ns = f->to_ns - 3600 * JP_NS_PER_SEC;
    if ((rc = api_arg_time(a, "from", now, &f->from_ns, err)) ||
        (rc = qs_order("from", "to", f->from_ns, f->to_ns, err)))
        return rc;
    if (need & API_NEED_KIND) {
        const char *k = api_args_get(a, "kind");
        jp_kind kind = JP_KIND_CPU;
        char sb[48];
        if (k && *k && !jp_kind_parse(k, &kind))
            return jp_error_set(err, JP_ERR_USAGE, "unknown kind '%s' (%s)", qs_show(k, sb),
                                jp_kind_list());
        f->kind = (int)kind;
    }
    return JP_OK;
}

jp_err api_query_base(const api_args *a, const store_filter *cur, int64_t now, store_filter *bf,
                      jp_error *err)
{
    *bf = *cur;
    const char *bp = api_args_get(a, "base_pod");
    if (bp)
        bf->pod = *bp ? bp : NULL;
    const char *bfrom = qs_nonempty(api_args_get(a, "base_from")),
               *bto = qs_nonempty(api_args_get(a, "base_to"));
    int64_t len = cur->to_ns - cur->from_ns;
    jp_err rc;
    if ((rc = api_arg_time(a, "base_to", now, &bf->to_ns, err)) ||
        (rc = api_arg_time(a, "base_from", now, &bf->from_ns, err)))
        return rc;
    /* both ends stay within int64: times are in [0, API_TIME_MAX_NS] */
    if (bto && !bfrom)
        bf->from_ns = bf->to_ns - len;
    else if (bfrom && !bto)
        bf->to_ns = bf->from_ns + len;
    return qs_order("base_from", "base_to", bf->from_ns, bf->to_ns, err);
}
