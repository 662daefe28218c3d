/* The ClickHouse store's HTTP side: one request per call through a small
 * pool of libcurl handles (so TCP connections are reused), hard connect and
 * total timeouts on every request (a dead ClickHouse never blocks a caller),
 * streaming of JSONCompact output row by row (memory bounded by one row),
 * and the mapping of failures to jp_err codes the server turns into 503. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/ch_int.h"

#define CH_LINE_MAX (64u << 20) /* one output row (a snapshot document) */
#define CH_TEXT_MAX (4u << 20)  /* text answers of ch_exec */
#define CH_ERRTEXT_MAX 600      /* kept of an error answer */
#define CH_QUERY_SLACK_MS 5000  /* curl waits this long past the query's own budget */
#define CH_QUERY_DEFAULT_MS 60000

/* ---- escaping ---- */

void ch_sql_str(jp_strbuf *b, const char *s)
{
    jp_strbuf_putc(b, '\'');
    for (; s && *s; s++) {
        if (*s == '\'' || *s == '\\')
            jp_strbuf_putc(b, '\\');
        jp_strbuf_putc(b, *s);
    }
    jp_strbuf_putc(b, '\'');
}

/* Escapes for both TabSeparated fields and quoted strings inside arrays. */
static void ch_escape(jp_strbuf *b, const char *s, size_t len, bool quote)
{
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        switch (c) {
        case '\t':
            jp_strbuf_puts(b, "\\t");
            break;
        case '\n':
            jp_strbuf_puts(b, "\\n");
            break;
        case '\r':
            jp_strbuf_puts(b, "\\r");
            break;
        case '\0':
            jp_strbuf_puts(b, "\\0");
            break;
        case '\\':
            jp_strbuf_puts(b, "\\\\");
            break;
        case '\'':
            if (quote)
                jp_strbuf_putc(b, '\\');
            jp_strbuf_putc(b, c);
            break;
        default:
            jp_strbuf_putc(b, c);
        }
    }
}

void ch_tsv_str(jp_strbuf *b, const char *s, size_t len)
{
    if (s)
        ch_escape(b, s, len, false);
}

void ch_tsv_str_array(jp_strbuf *b, const char *const *s, size_t n)
{
    jp_strbuf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            jp_strbuf_putc(b, ',');
        jp_strbuf_putc(b, '\'');
        ch_escape(b, s[i], strlen(s[i]), true);
        jp_strbuf_putc(b, '\'');
    }
    jp_strbuf_putc(b, ']');
}

/* ---- RowBinary (little-endian fixed-width integers, strings as a varint
 * length and the bytes, arrays as a varint count and the elements) ---- */

static void ch_rb_le(jp_strbuf *b, uint64_t v, int bytes)
{
    uint8_t o[8];
    for (int i = 0; i < bytes; i++)
        o[i] = (uint8_t)(v >> (8 * i));
    jp_strbuf_append(b, o, (size_t)bytes);
}

void ch_rb_u8(jp_strbuf *b, uint64_t v)
{
    ch_rb_le(b, v, 1);
}

void ch_rb_u32(jp_strbuf *b, uint64_t v)
{
    ch_rb_le(b, v, 4);
}

void ch_rb_u64(jp_strbuf *b, uint64_t v)
{
    ch_rb_le(b, v, 8);
}

void ch_rb_i64(jp_strbuf *b, int64_t v)
{
    ch_rb_le(b, (uint64_t)v, 8);
}

void ch_rb_day(jp_strbuf *b, int64_t day)
{
    ch_rb_le(b, day < 0 ? 0 : (uint64_t)day, 2); /* Date: UInt16 days since 1970-01-01 */
}

void ch_rb_str(jp_strbuf *b, const char *s, size_t len)
{
    jp_strbuf_put_varint(b, s ? len : 0);
    if (s && len)
        jp_strbuf_append(b, s, len);
}

void ch_rb_cstr(jp_strbuf *b, const char *s)
{
    ch_rb_str(b, s, s ? strlen(s) : 0);
}

void ch_day_str(jp_strbuf *b, int64_t day)
{
    char d[16];
    store_day_format(day, d, sizeof d);
    jp_strbuf_puts(b, d);
}

/* ---- JSONCompact cells ---- */

uint64_t ch_u64(json_t *row, size_t i)
{
    json_t *v = json_array_get(row, i);
    if (json_is_integer(v))
        return (uint64_t)json_integer_value(v);
    if (json_is_string(v))
        return strtoull(json_string_value(v), NULL, 10);
    return 0;
}

int64_t ch_i64(json_t *row, size_t i)
{
    json_t *v = json_array_get(row, i);
    if (json_is_integer(v))
        return (int64_t)json_integer_value(v);
    if (json_is_string(v))
        return strtoll(json_string_value(v), NULL, 10);
    return 0;
}

const char *ch_str(json_t *row, size_t i, size_t *len)
{
    json_t *v = json_array_get(row, i);
    if (!json_is_string(v) || json_string_length(v) == 0) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = json_string_length(v);
    return json_string_value(v);
}

int64_t ch_day(json_t *row, size_t i)
{
    size_t len;
    const char *s = ch_str(row, i, &len);
    char iso[40];
    int64_t ns;
    if (s && len == 12 && s[0] == '\'' && s[11] == '\'') /* a partition value, quoted */
        s++, len -= 2;
    if (!s || len < 10)
        return INT64_MIN;
    snprintf(iso, sizeof iso, "%.10sT00:00:00Z", s);
    if (jp_rfc3339_parse(iso, &ns, NULL) != JP_OK)
        return INT64_MIN;
    return store_day_of(ns);
}

/* ---- stats ---- */

void ch_stats_query(ch_store *st, int64_t ns, bool error)
{
    pthread_mutex_lock(&st->mu);
    st->stats.queries++;
    st->stats.query_ns_total += (uint64_t)ns;
    st->stats.query_errors += error;
    pthread_mutex_unlock(&st->mu);
}

void ch_set_available(ch_store *st, bool up)
{
    pthread_mutex_lock(&st->mu);
    st->stats.available = up;
    pthread_mutex_unlock(&st->mu);
}

/* ---- handle pool ---- */

static CURL *ch_handle_get(ch_store *st)
{
    CURL *h = NULL;
    pthread_mutex_lock(&st->pool_mu);
    if (st->npool)
        h = st->pool[--st->npool];
    pthread_mutex_unlock(&st->pool_mu);
    if (h)
        curl_easy_reset(h); /* keeps the connection cache */
    else
        h = curl_easy_init();
    return h;
}

/* A handle goes back only after a clean answer: one that timed out may hold
 * a half-read connection. */
static void ch_handle_put(ch_store *st, CURL *h, bool reuse)
{
    if (!h)
        return;
    pthread_mutex_lock(&st->pool_mu);
    if (reuse && st->npool < CH_POOL_MAX) {
        st->pool[st->npool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&st->pool_mu);
    if (h)
        curl_easy_cleanup(h);
}

void ch_http_cleanup(ch_store *st)
{
    for (size_t i = 0; i < st->npool; i++)
        curl_easy_cleanup(st->pool[i]);
    st->npool = 0;
}

/* ---- the answer sink ---- */

enum { SINK_TEXT, SINK_ROWS };

typedef struct ch_sink {
    int mode;
    CURL *h;
    long status;
    jp_strbuf errtext; /* a non-200 answer, or an exception inside a 200 one */
    bool exception;
    bool overflow;
    /* SINK_TEXT */
    jp_strbuf *text;
    /* SINK_ROWS: JSONCompact, one row per line between "data" and "]" */
    jp_strbuf line;
    int state; /* 0 before data, 1 in data, 2 after */
    ch_row_fn fn;
    void *ctx;
    ch_result *res;
    bool stop;
} ch_sink;

static const char *ch_skip_ws(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    return s;
}

static bool ch_key_u64(const char *s, const char *end, const char *key, uint64_t *v)
{
    size_t kl = strlen(key);
    if ((size_t)(end - s) <= kl || memcmp(s, key, kl) != 0)
        return false;
    s = ch_skip_ws(s + kl, end);
    if (s < end && *s == '"')
        s++;
    *v = strtoull(s, NULL, 10);
    return true;
}

static void ch_sink_line(ch_sink *k, const char *s, size_t len)
{
    const char *end = s + len;
    s = ch_skip_ws(s, end);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    if (end - s >= 6 && memcmp(s, "Code: ", 6) == 0) {
        /* ClickHouse failed after it had started answering 200 */
        k->exception = true;
        jp_strbuf_reset(&k->errtext);
        jp_strbuf_append(&k->errtext, s,
                         (size_t)(end - s) < CH_ERRTEXT_MAX ? (size_t)(end - s) : CH_ERRTEXT_MAX);
        return;
    }
    if (k->state == 0) {
        if (end - s >= 7 && memcmp(s, "\"data\":", 7) == 0)
            k->state = 1;
        return;
    }
    if (k->state == 1) {
        if (end - s == 1 && *s == '[')
            return; /* the array's opening bracket */
        if (s < end && *s == ']') {
            k->state = 2;
            return;
        }
        if (s < end && *s == '[' && !k->stop) {
            if (end[-1] == ',')
                end--;
            json_t *row = json_loadb(s, (size_t)(end - s), 0, NULL);
            if (!json_is_array(row)) {
                k->res->bad_rows++;
            } else {
                k->res->rows++;
                if (!k->fn(row, k->ctx)) {
                    k->stop = true;
                    k->res->stopped = true;
                }
            }
            json_decref(row);
        }
        return;
    }
    uint64_t v;
    if (ch_key_u64(s, end, "\"rows_before_limit_at_least\":", &v))
        k->res->rows_before_limit = v;
    else if (ch_key_u64(s, end, "\"rows_read\":", &v)) {
        k->res->rows_read = v;
        k->res->have_stats = true;
    } else if (ch_key_u64(s, end, "\"bytes_read\":", &v))
        k->res->bytes_read = v;
}

static size_t ch_write_cb(char *data, size_t size, size_t n, void *arg)
{
    ch_sink *k = arg;
    size_t len = size * n;
    if (!k->status)
        curl_easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, &k->status);
    if (k->status != 200) {
        size_t room = CH_ERRTEXT_MAX > k->errtext.len ? CH_ERRTEXT_MAX - k->errtext.len : 0;
        jp_strbuf_append(&k->errtext, data, len < room ? len : room);
        return len;
    }
    if (k->mode == SINK_TEXT) {
        if (jp_strbuf_append(k->text, data, len) != JP_OK) {
            k->overflow = true;
            return 0;
        }
        return len;
    }
    for (size_t i = 0; i < len; i++) {
        if (data[i] != '\n') {
            /* the rest of this chunk up to its next newline in one append */
            const char *nl = memchr(data + i, '\n', len - i);
            size_t take = nl ? (size_t)(nl - (data + i)) : len - i;
            if (jp_strbuf_append(&k->line, data + i, take) != JP_OK) {
                k->overflow = true;
                return 0;
            }
            i += take - 1;
            continue;
        }
        ch_sink_line(k, k->line.data ? k->line.data : "", k->line.len);
        jp_strbuf_reset(&k->line);
        if (k->stop)
            return 0; /* aborts the transfer: the caller has what it wanted */
    }
    return len;
}

/* ---- requests ---- */

static void ch_url_param(jp_strbuf *u, CURL *h, const char *key, const char *val)
{
    char *e = curl_easy_escape(h, val, 0);
    jp_strbuf_printf(u, "%c%s=%s", strchr(u->data, '?') ? '&' : '?', key, e ? e : "");
    curl_free(e);
}

/* Every replica of a shard refused a connection: the message names their
 * addresses "(host:port)", which the read side turns into the shard's
 * number (ch_query.c). The store is up: 503, retry later. */
static jp_err ch_fail_shard(ch_store *st, ch_sink *k, jp_error *err)
{
    const char *t = jp_strbuf_str(&k->errtext);
    char addrs[200] = "";
    size_t at = 0;
    for (const char *p = t; (p = strstr(p, "refused (")) != NULL && at < sizeof addrs - 60;) {
        p += 8;
        const char *close = strchr(p, ')');
        if (!close || close - p > 50)
            break;
        if (!strstr(addrs, p) || strncmp(strstr(addrs, p), p, (size_t)(close - p + 1)) != 0)
            at += (size_t)snprintf(addrs + at, sizeof addrs - at, "%s%.*s", at ? " " : "",
                                   (int)(close - p + 1), p);
        p = close;
    }
    ch_set_available(st, true);
    return jp_error_set(err, JP_ERR_IO,
                        "clickhouse: Code: 279, every replica of a shard unreachable: %s",
                        at ? addrs : "addresses unknown");
}

/* Turns a failed request into a jp_err the server can map: unreachable or
 * slow -> IO/TIMEOUT (503, retry later); ClickHouse busy -> TIMEOUT; our
 * own mistakes (bad SQL) -> INTERNAL (500). */
static jp_err ch_fail(ch_store *st, const char *url, CURLcode cc, ch_sink *k, const char *curl_msg,
                      jp_error *err)
{
    if (cc != CURLE_OK && cc != CURLE_WRITE_ERROR) {
        ch_set_available(st, false);
        if (cc == CURLE_OPERATION_TIMEDOUT)
            return jp_error_set(err, JP_ERR_TIMEOUT, "clickhouse at %s: no answer in time: %s", url,
                                curl_msg);
        return jp_error_set(err, JP_ERR_IO, "clickhouse at %s unreachable: %s%s", url,
                            curl_msg[0] ? curl_msg : curl_easy_strerror(cc),
                            st->nurls > 1 ? " (and every other URL given)" : "");
    }
    if (k->overflow)
        return jp_error_set(err, JP_ERR_LIMIT, "clickhouse: answer too large");
    const char *t = jp_strbuf_str(&k->errtext);
    int code = 0;
    const char *c = strstr(t, "Code: ");
    if (c)
        code = (int)strtol(c + 6, NULL, 10);
    ch_set_available(st, true);
    jp_err rc;
    if (code == 279) /* ALL_CONNECTION_TRIES_FAILED: a shard with no replica left */
        return ch_fail_shard(st, k, err);
    switch (code) {
    case 159: /* TIMEOUT_EXCEEDED */
    case 202: /* TOO_MANY_SIMULTANEOUS_QUERIES */
    case 209: /* SOCKET_TIMEOUT */
    case 210: /* NETWORK_ERROR */
    case 241: /* MEMORY_LIMIT_EXCEEDED */
    case 252: /* TOO_MANY_PARTS */
        rc = JP_ERR_TIMEOUT;
        break;
    case 60:  /* UNKNOWN_TABLE: someone dropped our tables; retry after a restart */
    case 81:  /* UNKNOWN_DATABASE */
    case 225: /* NO_ZOOKEEPER */
    case 242: /* TABLE_IS_READ_ONLY: a replica lost ZooKeeper */
    case 319: /* UNKNOWN_STATUS_OF_INSERT */
    case 999: /* KEEPER_EXCEPTION */
        rc = JP_ERR_IO;
        break;
    case 192: /* UNKNOWN_USER */
    case 193: /* WRONG_PASSWORD */
    case 194: /* REQUIRED_PASSWORD */
    case 516: /* AUTHENTICATION_FAILED */
        rc = JP_ERR_PERMISSION;
        break;
    default:
        rc = code ? JP_ERR_INTERNAL : JP_ERR_PROTOCOL;
    }
    return jp_error_set(err, rc, "clickhouse (HTTP %ld): %.300s", k->status, t);
}

typedef struct ch_req {
    const char *sql;       /* in the body (SELECT, DDL) or the URL (INSERT) */
    const jp_strbuf *data; /* INSERT rows, or NULL */
    const ch_segs *segs;   /* or INSERT rows in pieces, or NULL */
    bool use_db;
    const store_budget *b;
    const char *settings; /* "name=value&..." appended to the URL, or NULL */
    long timeout_ms;
} ch_req;

static void ch_req_url(ch_store *st, const char *base, CURL *h, const ch_req *r, jp_strbuf *u)
{
    jp_strbuf_puts(u, base);
    if (r->use_db)
        ch_url_param(u, h, "database", st->database);
    if (r->data || r->segs)
        ch_url_param(u, h, "query", r->sql);
    if (r->b && r->b->time_ns > 0) {
        /* old servers take whole seconds only: round up, at least 1 */
        long long s = (long long)((r->b->time_ns + JP_NS_PER_SEC - 1) / JP_NS_PER_SEC);
        jp_strbuf_printf(u, "&max_execution_time=%lld&timeout_overflow_mode=break", s ? s : 1);
    }
    if (r->b && r->b->max_rows)
        jp_strbuf_printf(u, "&max_rows_to_read=%llu&read_overflow_mode=break",
                         (unsigned long long)r->b->max_rows);
    if (r->settings && *r->settings)
        jp_strbuf_printf(u, "%c%s", strchr(u->data, '?') ? '&' : '?', r->settings);
}

/* Where the upload of a body in pieces is. */
typedef struct ch_seg_reader {
    const ch_segs *s;
    size_t i, off;
} ch_seg_reader;

static size_t ch_seg_read(char *out, size_t size, size_t n, void *arg)
{
    ch_seg_reader *rd = arg;
    size_t room = size * n, got = 0;
    while (got < room && rd->i < rd->s->n) {
        const ch_seg *g = &rd->s->seg[rd->i];
        size_t k = g->len - rd->off < room - got ? g->len - rd->off : room - got;
        memcpy(out + got, g->p + rd->off, k);
        got += k;
        rd->off += k;
        if (rd->off == g->len) {
            rd->i++;
            rd->off = 0;
        }
    }
    return got;
}

/* curl rewinds a body to send it again (a pooled connection found dead) */
static int ch_seg_seek(void *arg, curl_off_t to, int origin)
{
    ch_seg_reader *rd = arg;
    if (origin != SEEK_SET || to < 0 || (uint64_t)to > rd->s->total)
        return CURL_SEEKFUNC_CANTSEEK;
    size_t left = (size_t)to;
    for (rd->i = 0, rd->off = 0; rd->i < rd->s->n && left >= rd->s->seg[rd->i].len; rd->i++)
        left -= rd->s->seg[rd->i].len;
    rd->off = left;
    return CURL_SEEKFUNC_OK;
}

/* One request to one server; *cc and *cerr say how the transfer went. */
static void ch_perform_at(ch_store *st, const char *base, CURL *h, const ch_req *r, ch_sink *k,
                          CURLcode *cc, char *cerr)
{
    jp_strbuf u;
    jp_strbuf_init(&u, 0);
    ch_req_url(st, base, h, r, &u);
    cerr[0] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, u.data);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, st->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, r->timeout_ms);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, ch_write_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, k);
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    curl_easy_setopt(h, CURLOPT_USERNAME, st->user);
    curl_easy_setopt(h, CURLOPT_PASSWORD, st->password);
    ch_seg_reader rd = {.s = r->segs};
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    if (r->segs) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL); /* the handle may hold an earlier one */
        curl_easy_setopt(h, CURLOPT_READFUNCTION, ch_seg_read);
        curl_easy_setopt(h, CURLOPT_READDATA, &rd);
        curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, ch_seg_seek);
        curl_easy_setopt(h, CURLOPT_SEEKDATA, &rd);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->segs->total);
    } else {
        const jp_strbuf *body = r->data;
        const char *b = body ? (body->data ? body->data : "") : r->sql;
        size_t blen = body ? body->len : strlen(r->sql);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, b);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
    }
    *cc = curl_easy_perform(h);
    if (r->segs) { /* rd is gone after this */
        curl_easy_setopt(h, CURLOPT_READDATA, NULL);
        curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, NULL);
        curl_easy_setopt(h, CURLOPT_SEEKDATA, NULL);
    }
    jp_strbuf_cleanup(&u);
}

/* Whether a request that got no answer may go to the next server: one
 * that could not connect sent nothing; a read or DDL (no rows in the body)
 * whose pooled connection died under it (the node was killed) is safe to
 * repeat. An INSERT that may have reached its server is not repeated here:
 * its batch is answered 503 and the uploader's retry is deduplicated. */
static bool ch_try_next(CURLcode cc, const ch_req *r)
{
    if (cc == CURLE_COULDNT_CONNECT)
        return true;
    return !r->data && !r->segs &&
           (cc == CURLE_RECV_ERROR || cc == CURLE_SEND_ERROR || cc == CURLE_GOT_NOTHING);
}

/* The request to the server that answered last; one that cannot be
 * connected to (nothing was sent) goes to the next of --clickhouse's URLs,
 * each tried once. */
static jp_err ch_perform(ch_store *st, const ch_req *r, ch_sink *k, jp_error *err)
{
    CURL *h = ch_handle_get(st);
    if (!h)
        return jp_error_set(err, JP_ERR_NOMEM, "curl_easy_init failed");
    k->h = h;
    pthread_mutex_lock(&st->pool_mu);
    size_t at = st->url_at;
    pthread_mutex_unlock(&st->pool_mu);
    char cerr[CURL_ERROR_SIZE];
    CURLcode cc = CURLE_OK;
    const char *base = st->urls[at];
    for (size_t i = 0; i < st->nurls; i++) {
        base = st->urls[(at + i) % st->nurls];
        ch_perform_at(st, base, h, r, k, &cc, cerr);
        if (k->status || !ch_try_next(cc, r))
            break;
        if (i + 1 < st->nurls) {
            pthread_mutex_lock(&st->pool_mu);
            st->url_at = (at + i + 1) % st->nurls;
            pthread_mutex_unlock(&st->pool_mu);
        }
    }
    if (!k->status)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &k->status);
    /* flush a last line without newline */
    if (cc == CURLE_OK && k->mode == SINK_ROWS && k->line.len && k->status == 200)
        ch_sink_line(k, k->line.data, k->line.len);
    bool clean = cc == CURLE_OK && k->status == 200 && !k->exception;
    ch_handle_put(st, h, clean);
    if (clean) {
        ch_set_available(st, true);
        return JP_OK;
    }
    if (cc == CURLE_WRITE_ERROR && k->stop && !k->exception)
        return JP_OK; /* we stopped reading on purpose */
    return ch_fail(st, base, cc, k, cerr, err);
}

static void ch_sink_init(ch_sink *k, int mode)
{
    memset(k, 0, sizeof *k);
    k->mode = mode;
    jp_strbuf_init(&k->errtext, 0);
    jp_strbuf_init(&k->line, CH_LINE_MAX);
}

static void ch_sink_cleanup(ch_sink *k)
{
    jp_strbuf_cleanup(&k->errtext);
    jp_strbuf_cleanup(&k->line);
}

jp_err ch_select(ch_store *st, const char *sql, const store_budget *b, ch_row_fn fn, void *ctx,
                 ch_result *res, jp_error *err)
{
    ch_select_opts o = {.b = b, .use_db = true};
    return ch_select_with(st, sql, &o, fn, ctx, res, err);
}

jp_err ch_select_with(ch_store *st, const char *sql, const ch_select_opts *o, ch_row_fn fn,
                      void *ctx, ch_result *res, jp_error *err)
{
    const store_budget *b = o->b;
    memset(res, 0, sizeof *res);
    jp_strbuf q;
    jp_strbuf_init(&q, 0);
    jp_strbuf_printf(&q, "%s FORMAT JSONCompact", sql);
    long tmo = CH_QUERY_DEFAULT_MS;
    if (b && b->time_ns > 0)
        tmo = (long)((b->time_ns + JP_NS_PER_SEC - 1) / JP_NS_PER_SEC) * 1000 + CH_QUERY_SLACK_MS;
    ch_req r = {
        .sql = q.data, .use_db = o->use_db, .b = b, .settings = o->settings, .timeout_ms = tmo};
    ch_sink k;
    ch_sink_init(&k, SINK_ROWS);
    k.fn = fn;
    k.ctx = ctx;
    k.res = res;
    int64_t t0 = jp_time_mono_ns();
    jp_err rc = ch_perform(st, &r, &k, err);
    res->wall_ns = jp_time_mono_ns() - t0;
    /* a complete answer ends with its statistics: without them it was cut */
    if (!rc && !res->stopped && !res->have_stats)
        rc = jp_error_set(err, JP_ERR_PROTOCOL, "clickhouse: answer ended early (%llu rows)",
                          (unsigned long long)res->rows);
    ch_sink_cleanup(&k);
    jp_strbuf_cleanup(&q);
    return rc;
}

jp_err ch_exec(ch_store *st, const char *sql, bool use_db, jp_strbuf *out, jp_error *err)
{
    return ch_exec_set(st, sql, use_db, NULL, out, err);
}

jp_err ch_exec_set(ch_store *st, const char *sql, bool use_db, const char *settings, jp_strbuf *out,
                   jp_error *err)
{
    ch_req r = {
        .sql = sql, .use_db = use_db, .settings = settings, .timeout_ms = st->write_timeout_ms};
    ch_sink k;
    ch_sink_init(&k, SINK_TEXT);
    jp_strbuf tmp;
    jp_strbuf_init(&tmp, CH_TEXT_MAX);
    k.text = out ? out : &tmp;
    jp_err rc = ch_perform(st, &r, &k, err);
    ch_sink_cleanup(&k);
    jp_strbuf_cleanup(&tmp);
    return rc;
}

jp_err ch_insert(ch_store *st, const char *table, const jp_strbuf *rows, jp_error *err)
{
    return ch_insert_fmt(st, table, NULL, "TabSeparated", rows, st->insert_settings, err);
}

static jp_err ch_insert_req(ch_store *st, const char *table, const char *columns,
                            const char *format, const jp_strbuf *rows, const ch_segs *segs,
                            const char *settings, jp_error *err)
{
    jp_strbuf q;
    jp_strbuf_init(&q, 0);
    jp_strbuf_printf(&q, "INSERT INTO %s%s%s%s FORMAT %s", table, columns ? " (" : "",
                     columns ? columns : "", columns ? ")" : "", format);
    ch_req r = {.sql = q.data,
                .data = rows,
                .segs = segs,
                .use_db = true,
                .settings = settings,
                .timeout_ms = st->write_timeout_ms};
    ch_sink k;
    ch_sink_init(&k, SINK_TEXT);
    jp_strbuf tmp;
    jp_strbuf_init(&tmp, CH_TEXT_MAX);
    k.text = &tmp;
    jp_err rc = ch_perform(st, &r, &k, err);
    ch_sink_cleanup(&k);
    jp_strbuf_cleanup(&tmp);
    jp_strbuf_cleanup(&q);
    return rc;
}

jp_err ch_insert_fmt(ch_store *st, const char *table, const char *columns, const char *format,
                     const jp_strbuf *rows, const char *settings, jp_error *err)
{
    return ch_insert_req(st, table, columns, format, rows, NULL, settings, err);
}

jp_err ch_insert_segs(ch_store *st, const char *table, const char *columns, const char *format,
                      const ch_segs *rows, const char *settings, jp_error *err)
{
    return ch_insert_req(st, table, columns, format, NULL, rows, settings, err);
}
