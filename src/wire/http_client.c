#include "wire/http_client.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/timeutil.h"

/* libcurl, opened by jp_http_global_init. Linked, it would cost every
 * jprof-top run that never asks a server (a recording, a local JVM) about
 * 30 more libraries (TLS, Kerberos, LDAP, ...): ~16 ms of CPU and ~7 MB of
 * RSS at start-up on this project's machine. Only the functions below are
 * used; the soname's ABI has been 4 since 2006. */
#define JP_LIBCURL "libcurl.so.4"

static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
    CURLcode (*easy_perform)(CURL *c);
    CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
    void (*easy_cleanup)(CURL *c);
    const char *(*easy_strerror)(CURLcode cc);
    struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
    void (*slist_free_all)(struct curl_slist *l);
    bool loaded;
} lc;

/* Looks one function up; false (and err set) when libcurl lacks it. */
static bool lc_sym(void *h, const char *name, void *fn, jp_error *err)
{
    void *p = dlsym(h, name);
    if (!p) {
        jp_error_set(err, JP_ERR_UNSUPPORTED, "%s has no %s: a libcurl too old or broken",
                     JP_LIBCURL, name);
        return false;
    }
    memcpy(fn, &p, sizeof p); /* a data pointer to a function pointer, as POSIX allows */
    return true;
}

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

jp_err jp_http_global_init(jp_error *err)
{
    if (lc.loaded)
        return JP_OK;
    void *h = dlopen(JP_LIBCURL, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        return jp_error_set(
            err, JP_ERR_UNSUPPORTED,
            "cannot load %s, which talking to a server needs (install libcurl4): %s", JP_LIBCURL,
            why ? why : "?");
    }
    if (!lc_sym(h, "curl_global_init", &lc.global_init, err) ||
        !lc_sym(h, "curl_easy_init", &lc.easy_init, err) ||
        !lc_sym(h, "curl_easy_setopt", &lc.easy_setopt, err) ||
        !lc_sym(h, "curl_easy_perform", &lc.easy_perform, err) ||
        !lc_sym(h, "curl_easy_getinfo", &lc.easy_getinfo, err) ||
        !lc_sym(h, "curl_easy_cleanup", &lc.easy_cleanup, err) ||
        !lc_sym(h, "curl_easy_strerror", &lc.easy_strerror, err) ||
        !lc_sym(h, "curl_slist_append", &lc.slist_append, err) ||
        !lc_sym(h, "curl_slist_free_all", &lc.slist_free_all, err)) {
        dlclose(h);
        return err ? err->code : JP_ERR_UNSUPPORTED;
    }
    if (lc.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        dlclose(h);
        return jp_error_set(err, JP_ERR_IO, "%s: curl_global_init failed", JP_LIBCURL);
    }
    lc.loaded = true; /* the library stays loaded for the process's life */
    return JP_OK;
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
    return jp_error_set(err, JP_ERR_IO, "GET %s: %s", url, lc.easy_strerror(cc));
}

jp_err jp_http_get(const jp_http_opts *o, const char *url, jp_http_resp *r, jp_error *err)
{
    jp_strbuf_cleanup(&r->body);
    jp_strbuf_init(&r->body, o->max_bytes ? o->max_bytes : (size_t)64 << 20);
    r->status = 0;
    if (!lc.loaded)
        return jp_error_set(err, JP_ERR_INTERNAL, "GET %s: jp_http_global_init was not called",
                            url);
    CURL *c = lc.easy_init();
    if (!c)
        return jp_error_set(err, JP_ERR_NOMEM, "GET %s: cannot set up a request", url);
    struct curl_slist *h = NULL;
    jp_strbuf auth;
    jp_strbuf_init(&auth, 8192);
    if (o->token && *o->token) {
        if (jp_strbuf_printf(&auth, "Authorization: Bearer %s", o->token) != JP_OK) {
            jp_strbuf_cleanup(&auth);
            lc.easy_cleanup(c);
            return jp_error_set(err, JP_ERR_LIMIT, "the token is too long");
        }
        h = lc.slist_append(h, jp_strbuf_str(&auth));
    }
    h = lc.slist_append(h, "Accept: application/json");
    sink s = {&r->body, false};
    lc.easy_setopt(c, CURLOPT_URL, url);
    lc.easy_setopt(c, CURLOPT_HTTPHEADER, h);
    lc.easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
    lc.easy_setopt(c, CURLOPT_WRITEDATA, &s);
    lc.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    lc.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
    lc.easy_setopt(c, CURLOPT_TIMEOUT_MS, o->timeout_ms);
    lc.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    lc.easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    /* a proxy from the environment would see the bearer token */
    lc.easy_setopt(c, CURLOPT_NOPROXY, "*");
    if (o->ca_file)
        lc.easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
    int64_t t0 = jp_time_mono_ns();
    CURLcode cc = lc.easy_perform(c);
    r->took_ms = (double)(jp_time_mono_ns() - t0) / 1e6;
    jp_err rc = JP_OK;
    if (cc != CURLE_OK)
        rc = curl_failure(cc, &s, url, o->max_bytes, err);
    else
        lc.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    lc.slist_free_all(h);
    /* the token should not linger in freed heap memory */
    if (auth.data)
        memset(auth.data, 0, auth.len);
    jp_strbuf_cleanup(&auth);
    lc.easy_cleanup(c);
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
