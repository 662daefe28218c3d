/* http_client.h - a small blocking HTTP GET client (libcurl) for reading
 * jprof-server's query API.
 *
 * One request per call, bearer token optional, bounded in time (connect and
 * total timeouts) and in size (the body is refused past max_bytes, so a
 * broken or hostile peer cannot make the caller allocate without limit).
 * Only http and https URLs are followed; redirects are not.
 *
 * Errors: JP_ERR_IO when the server cannot be reached (refused, DNS, TLS),
 * JP_ERR_TIMEOUT when a timeout ran out, JP_ERR_LIMIT when the body passed
 * max_bytes. An HTTP error status is not an error here: the caller gets the
 * status and the body and decides.
 *
 * Ownership: jp_http_resp is caller storage (jp_http_resp_init/cleanup)
 * owning its body. jp_http_get is thread-safe once jp_http_global_init()
 * has run (libcurl's rule); it never installs signal handlers.
 *
 * libcurl is not linked: jp_http_global_init opens it (dlopen), so a program
 * that never talks HTTP does not load it and the ~30 libraries behind it. */
#ifndef JP_WIRE_HTTP_CLIENT_H
#define JP_WIRE_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strbuf.h"

typedef struct jp_http_opts {
    const char *token;   /* bearer token, or NULL / "" for none */
    const char *ca_file; /* CA bundle for https, or NULL for the system's */
    long connect_timeout_ms;
    long timeout_ms;
    size_t max_bytes; /* largest body accepted */
} jp_http_opts;

/* 2 s to connect, 15 s in all, 64 MiB of body. */
void jp_http_opts_init(jp_http_opts *o);

typedef struct jp_http_resp {
    long status;    /* HTTP status, 0 when no answer came */
    jp_strbuf body; /* NUL-terminated */
    double took_ms; /* the whole request */
} jp_http_resp;

void jp_http_resp_init(jp_http_resp *r);
void jp_http_resp_cleanup(jp_http_resp *r);

/* Once per process, before any thread uses jp_http_get: opens libcurl.
 * JP_ERR_UNSUPPORTED (with what is missing) when it cannot. */
jp_err jp_http_global_init(jp_error *err);

/* GETs url into r (reset first). err gets "GET URL: reason". */
jp_err jp_http_get(const jp_http_opts *o, const char *url, jp_http_resp *r, jp_error *err);

/* Appends s to b percent-encoded for a URL query value (RFC 3986
 * unreserved characters stay as they are). */
jp_err jp_http_query_escape(jp_strbuf *b, const char *s);

#endif
