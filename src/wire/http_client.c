#include "wire/http_client.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/timeutil.h"

void jp_http_opts_init(jp_http_opts *o)
{
    memset(o, 0, sizeof *o);
    o->connect_timeout_ms = 2000;
    o->timeout_ms = 15000;
    o->max_bytes = (size_t)64 << 20;
}

void jp_http_resp_init(jp_http_resp *r)
{
    r->status = 0;
    r->took_ms = 0;
    jp_strbuf_init(&r->body, 0);
}

void jp_http_resp_cleanup(jp_http_resp *r)
{
    jp_strbuf_cleanup(&r->body);
}

void jp_http_global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

typedef struct sink {
    jp_strbuf *b;
    bool over;
} sink;

static size_t keep_body(char *data, size_t size, size_t n, void *ctx)
{
    sink *s = ctx;
    size_t len = size * n;
    if (jp_strbuf_append(s->b, data, len) != JP_OK) {
        s->over = true;
        return 0; /* a short write makes libcurl stop the transfer */
    }
    return len;
}

static jp_err curl_failure(CURLcode cc, const sink *s, const char *url, size_t cap, jp_error *err)
{
    if (s->over)
        return jp_error_set(err, JP_ERR_LIMIT, "GET %s: the answer is larger than %zu bytes", url,
                            cap);
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return jp_error_set(err, JP_ERR_TIMEOUT, "GET %s: no answer in time", url);
    return jp_error_set(err, JP_ERR_IO, "GET %s: %s", url, curl_easy_strerror(cc));
}

jp_err jp_http_get(const jp_http_opts *o, const char *url, jp_http_resp *r, jp_error *err)
{
    jp_strbuf_cleanup(&r->body);
    jp_strbuf_init(&r->body, o->max_bytes ? o->max_bytes : (size_t)64 << 20);
    r->status = 0;
    CURL *c = curl_easy_init();
    if (!c)
        return jp_error_set(err, JP_ERR_NOMEM, "GET %s: cannot set up a request", url);
    struct curl_slist *h = NULL;
    jp_strbuf auth;
    jp_strbuf_init(&auth, 8192);
    if (o->token && *o->token) {
        if (jp_strbuf_printf(&auth, "Authorization: Bearer %s", o->token) != JP_OK) {
            jp_strbuf_cleanup(&auth);
            curl_easy_cleanup(c);
            return jp_error_set(err, JP_ERR_LIMIT, "the token is too long");
        }
        h = curl_slist_append(h, jp_strbuf_str(&auth));
    }
    h = curl_slist_append(h, "Accept: application/json");
    sink s = {&r->body, false};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, o->timeout_ms);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    /* a proxy from the environment would see the bearer token */
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    if (o->ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
    int64_t t0 = jp_time_mono_ns();
    CURLcode cc = curl_easy_perform(c);
    r->took_ms = (double)(jp_time_mono_ns() - t0) / 1e6;
    jp_err rc = JP_OK;
    if (cc != CURLE_OK)
        rc = curl_failure(cc, &s, url, o->max_bytes, err);
    else
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(h);
    /* the token should not linger in freed heap memory */
    if (auth.data)
        memset(auth.data, 0, auth.len);
    jp_strbuf_cleanup(&auth);
    curl_easy_cleanup(c);
    if (rc == JP_OK && !r->body.data)
        jp_strbuf_puts(&r->body, "");
    return rc;
}

jp_err jp_http_query_escape(jp_strbuf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                     (*p >= '0' && *p <= '9') || strchr("-._~", *p);
        jp_err rc = plain ? jp_strbuf_putc(b, (char)*p)
                          : jp_strbuf_printf(b, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
        if (rc != JP_OK)
            return rc;
    }
    return JP_OK;
}
