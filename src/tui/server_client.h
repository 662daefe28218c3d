/* server_client.h - the HTTP client of jprof-server's query API for
 * jprof-top (`-n NS -s SVC`): the server source (source_server.h) and the
 * batch output (batch_server.h) read through it.
 *
 * One tui_client reads one service of one namespace from the server's query
 * API (docs/API.md): the service's targets (pods and JVMs) with their
 * status, the latest whole thread snapshot of each target with the server's
 * busy evidence (source_server.c rebuilds the model from it), the status
 * history, ingestion health, and flame graphs over a time range, for the
 * whole service or one pod.
 *
 * Every failure carries a one-line message that says what to do (server
 * unreachable, token missing or refused, namespace out of the token's
 * scope, unknown service with the services the server knows), and maps to
 * an exit status with tui_client_exit_status().
 *
 * Ownership: tui_client_new() returns a heap object freed by
 * tui_client_free(); it copies the option strings and owns every json_t it
 * holds (each replaced by the next successful refresh; borrowed by
 * readers until then). The token is read once and wiped on free. Not
 * thread-safe. */
#ifndef JP_TUI_SERVER_CLIENT_H
#define JP_TUI_SERVER_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "model/profile.h"
#include "wire/http_client.h"

#define TUI_DEFAULT_SERVER "http://127.0.0.1:8480"

typedef struct tui_client_opts {
    const char *server;      /* base URL; NULL: TUI_DEFAULT_SERVER */
    const char *server_from; /* where it came from: "--server", "JPROF_SERVER", "default" */
    const char *token_file;  /* NULL: no token */
    const char *token_from;  /* "--token-file" or "JPROF_TOKEN_FILE" */
    const char *ca_file;     /* for https, or NULL */
    const char *ns, *svc;
} tui_client_opts;

/* What went wrong last, for the exit status. */
typedef enum tui_client_fail {
    TUI_CFAIL_NONE = 0,
    TUI_CFAIL_UNREACHABLE,
    TUI_CFAIL_UNAUTHORIZED,
    TUI_CFAIL_FORBIDDEN,
    TUI_CFAIL_NO_SERVICE,
    TUI_CFAIL_OTHER
} tui_client_fail;

/* The flame ranges the keys step through. */
#define TUI_RANGE_COUNT 5
extern const char *const tui_range_names[TUI_RANGE_COUNT]; /* "5m" ... "24h" */
/* Index of a range name ("5m", "15m", "1h", "6h", "24h"), or -1. */
int tui_range_parse(const char *s);

typedef struct tui_client {
    char *base, *ns, *svc;
    char *token_file, *token_from, *server_from;
    char *token; /* NULL when none */
    jp_http_opts http;
    tui_client_fail fail;
    /* latest answers (NULL until read) */
    json_t *service;   /* the /services entry: targets, pods, kinds, last_seen */
    json_t *threads;   /* /threads: latest snapshot per target with summaries */
    json_t *targets;   /* /targets: targets and status history */
    json_t *ingestion; /* /ingestion */
    double cost_ms;    /* the last refresh, all requests */
    int64_t refreshed_ns;
    /* pod names of the service, for the pod filter */
    char **pods;
    size_t npods;
} tui_client;

tui_client *tui_client_new(const tui_client_opts *o);
void tui_client_free(tui_client *r);

/* Reads the token and finds the service (/api/v1/services over the last 7
 * days). */
jp_err tui_client_connect(tui_client *r, jp_error *err);

/* Reads threads (whole snapshots), targets and ingestion. pod NULL: every pod. On
 * failure the previous answers stay. */
jp_err tui_client_refresh(tui_client *r, const char *pod, jp_error *err);

/* The same with the pods and status history of status_pod (NULL: every
 * pod of the service) while the threads are pod's. */
jp_err tui_client_refresh_pod(tui_client *r, const char *pod, const char *status_pod,
                              jp_error *err);

/* Reads only the service's targets and their status history (what a list
 * of the pods and JVMs needs). */
jp_err tui_client_refresh_targets(tui_client *r, jp_error *err);

/* What a flame query covered. */
typedef struct tui_client_flame_meta {
    char from[40], to[40]; /* RFC 3339 as the server resolved them */
    long long windows;
    bool truncated; /* max_nodes cut the tree (totals stay exact) */
    bool partial;   /* a query budget ran out */
    char partial_reason[160];
    double took_ms;
} tui_client_flame_meta;

/* Builds a profile of the kinds in `kinds` (bit 1 << jp_kind; 0 = those the
 * service has) over [from, to) (server time syntax: "-15m", "now", RFC
 * 3339, "@EPOCH"), for one pod or all (pod NULL). Both measures are
 * filled (two queries per kind). *out is a new profile on success. */
jp_err tui_client_profile(tui_client *r, uint32_t kinds, const char *from, const char *to,
                          const char *pod, long max_nodes, jp_profile **out,
                          tui_client_flame_meta *meta, jp_error *err);

/* The baseline of a comparison (the server's base_from, base_to,
 * base_pod; NULL: the API's default, the current side's). base_pod "" is
 * every pod. */
typedef struct tui_client_base {
    const char *from, *to, *pod;
} tui_client_base;

/* GETs /api/v1/flamegraph/diff for kind k (both measures): the current
 * side over [from, to) of pod (NULL: all) into *cur, the baseline into
 * *base, each a new profile with its resolved time range (start_ns,
 * end_ns); meta is the current side's, base_meta the baseline's. Both
 * sides are merged and cut on the server, so neither loses frames only
 * the other has. */
jp_err tui_client_diff(tui_client *r, jp_kind k, const char *from, const char *to, const char *pod,
                       const tui_client_base *b, long max_nodes, jp_profile **cur,
                       jp_profile **base, tui_client_flame_meta *meta,
                       tui_client_flame_meta *base_meta, jp_error *err);

/* GETs /api/v1/top for one kind into *out (new reference): self and total
 * per frame over all the data of the range (exact even where a flame tree
 * would be cut), sorted by self in samples or (by_value) the kind's value. */
jp_err tui_client_top(tui_client *r, jp_kind k, const char *from, const char *to, const char *pod,
                      long limit, bool by_value, json_t **out, jp_error *err);

/* GETs /api/v1/gc over [from, to) of pod (NULL: every pod) with `points`
 * columns of pause time into *out (new reference; tui/report_gc.h reads it). */
jp_err tui_client_gc(tui_client *r, const char *from, const char *to, const char *pod, int points,
                     json_t **out, jp_error *err);

/* GETs /api/v1/heap over [from, to) of pod (NULL: every pod), `top`
 * classes a list, into *out (new reference; tui/report_heap.h reads it). */
jp_err tui_client_heap(tui_client *r, const char *from, const char *to, const char *pod, long top,
                       json_t **out, jp_error *err);

/* The exit status for the last failure. */
int tui_client_exit_status(const tui_client *r);

/* The kinds the service has data for, as a jp_kind bit mask. */
uint32_t tui_client_kinds(const tui_client *r);

#endif
