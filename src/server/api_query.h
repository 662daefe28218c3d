/* api_query.h - the query string of jprof-server's API, parsed without the
 * HTTP layer, so it can be unit-tested and fuzzed (tests/fuzz/fuzz_api_query.c).
 *
 * Two steps, both pure (no connection, no store, no token, no clock):
 *  - api_args_parse() splits the raw query string (what follows '?' in the
 *    request line, as received) into decoded key/value pairs: '&' separates,
 *    the first '=' ends the key, '+' is a space, %XX a byte. It refuses what
 *    a browser or a URL encoder never sends and what would be ambiguous:
 *    a malformed escape, %00, invalid UTF-8, an empty or odd key, a
 *    parameter given twice, too many or too long ones. The error message
 *    says what and at which byte of the query string.
 *  - the typed parameters: api_query_parse() (namespace, service, pod,
 *    thread, kind, from, to), api_query_base() (the diff's base_from,
 *    base_to, base_pod), api_arg_limit(), api_arg_time(), api_arg_choice(),
 *    api_arg_flag(). An error names the parameter and what is wrong.
 *
 * http.c parses every handled request's query string with api_args_parse()
 * and answers 400 when it fails; the handlers (api.c and friends) read
 * their parameters only through the functions below. */
#ifndef JP_SERVER_API_QUERY_H
#define JP_SERVER_API_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "server/store.h"

#define API_QUERY_MAX_BYTES 32768 /* the raw query string */
#define API_QUERY_MAX_ARGS 64     /* parameters */
#define API_QUERY_MAX_KEY 64      /* bytes of a name */
#define API_QUERY_MAX_VALUE 4096  /* bytes of a decoded value (the ingest's longest string) */
#define API_QUERY_MAX_TIME 64     /* bytes of a time value */

/* Times a query may name: 1970-01-01 up to 2100-01-01 (so that the length
 * of any range, and a range moved by its length, stays inside int64 ns). */
#define API_TIME_MAX_NS (4102444800LL * 1000000000LL)

typedef struct api_arg {
    const char *key, *val; /* decoded, NUL-terminated, valid UTF-8, no NUL inside */
} api_arg;

typedef struct api_args {
    api_arg v[API_QUERY_MAX_ARGS];
    size_t n;
    char *buf; /* owns the decoded strings */
} api_args;

/* Splits and decodes query[0..len) into *out (always safe to free, also
 * after an error). query may be NULL when len is 0. JP_ERR_USAGE with a
 * message saying what and where on malformed input. */
jp_err api_args_parse(const char *query, size_t len, api_args *out, jp_error *err);
void api_args_free(api_args *a);
/* The value of key, or NULL when absent. */
const char *api_args_get(const api_args *a, const char *key);

/* What api_query_parse() requires (bits). */
enum { API_NEED_NS = 1, API_NEED_SERVICE = 2, API_NEED_KIND = 4 };

/* namespace, service, pod, thread (empty = absent), to (default now), from
 * (default to - 1 h), and with API_NEED_KIND kind (default cpu; else
 * f->kind is -1). Pointers in *f borrow from a. */
jp_err api_query_parse(const api_args *a, unsigned need, int64_t now, store_filter *f,
                       jp_error *err);
/* The diff's baseline: base_from/base_to/base_pod, each defaulting to the
 * current filter's; given only one end, the baseline is as long as the
 * current range. An empty base_pod means every pod. */
jp_err api_query_base(const api_args *a, const store_filter *cur, int64_t now, store_filter *bf,
                      jp_error *err);
/* An integer from 1 to max; def when absent or empty. */
jp_err api_arg_limit(const api_args *a, const char *key, long def, long max, long *out,
                     jp_error *err);
/* A time (RFC 3339, @EPOCH, now, or relative to now like -15m or +1h);
 * *out unchanged when absent or empty. */
jp_err api_arg_time(const api_args *a, const char *key, int64_t now, int64_t *out, jp_error *err);
/* One of choices[0..n) (NULL-terminated list); *out is its index, 0 when
 * absent or empty. */
jp_err api_arg_choice(const api_args *a, const char *key, const char *const *choices, int *out,
                      jp_error *err);
/* "1" or "true". */
bool api_arg_flag(const api_args *a, const char *key);

#endif
