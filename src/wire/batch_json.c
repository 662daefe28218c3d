#include "wire/batch_json.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "base/hash.h"
#include "wire/gc_json.h"
#include "wire/heap_json.h"
#include "wire/json_pull.h"

void jp_batch_limits_default(jp_batch_limits *l)
{
    l->max_windows = 1000;
    l->max_frames = 200000;
    l->max_threads = 100000;
    l->max_stacks = 200000;
    l->max_depth = JP_BATCH_DEPTH_MAX;
    l->max_rows = 2000000;
    l->max_docs = 10000;
    l->max_string = JP_BATCH_STRING_MAX;
    l->max_doc_bytes = 8u << 20;
}

/* Decoding context: the limits, and the path of the field being read for
 * error messages ("windows[2].rows[17]"). */
typedef struct dec {
    const jp_batch_limits *lim;
    jp_error *err;
    char path[160];
} dec;

static jp_err dec_fail(dec *d, jp_err code, const char *field, const char *what)
{
    return jp_error_set(d->err, code, "%s%s%s: %s", d->path, *d->path && *field ? "." : "", field,
                        what);
}

/* Optional string: absent or null -> *out NULL. Control characters become
 * '?', so stored names never carry newlines or escapes. */
static jp_err dec_str(dec *d, json_t *obj, const char *key, bool required, char **out)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return required ? dec_fail(d, JP_ERR_FORMAT, key, "required string is missing") : JP_OK;
    if (!json_is_string(v))
        return dec_fail(d, JP_ERR_FORMAT, key, "must be a string");
    size_t len = json_string_length(v);
    if (len > d->lim->max_string)
        return dec_fail(d, JP_ERR_LIMIT, key, "string longer than the limit");
    if (required && !len)
        return dec_fail(d, JP_ERR_FORMAT, key, "must not be empty");
    char *s = jp_xstrndup(json_string_value(v), len);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            s[i] = '?';
    *out = s;
    return JP_OK;
}

static jp_err dec_u64(dec *d, json_t *obj, const char *key, uint64_t *out)
{
    json_t *v = json_object_get(obj, key);
    *out = 0;
    if (!v || json_is_null(v))
        return JP_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return dec_fail(d, JP_ERR_FORMAT, key, "must be an integer >= 0");
    *out = (uint64_t)json_integer_value(v);
    return JP_OK;
}

/* A time: an RFC 3339 string or an integer of ns since the epoch. */
static jp_err dec_time(dec *d, json_t *obj, const char *key, bool required, int64_t *out)
{
    json_t *v = json_object_get(obj, key);
    *out = 0;
    if (!v || json_is_null(v))
        return required ? dec_fail(d, JP_ERR_FORMAT, key, "required time is missing") : JP_OK;
    if (json_is_integer(v)) {
        if (json_integer_value(v) < 0)
            return dec_fail(d, JP_ERR_FORMAT, key, "time must be >= 0 ns since the epoch");
        *out = json_integer_value(v);
        return JP_OK;
    }
    if (!json_is_string(v) || json_string_length(v) > 64)
        return dec_fail(d, JP_ERR_FORMAT, key, "must be RFC 3339 text or integer ns since epoch");
    jp_error e;
    jp_error_init(&e);
    if (jp_rfc3339_parse(json_string_value(v), out, &e) != JP_OK)
        return dec_fail(d, JP_ERR_FORMAT, key, e.msg);
    /* the same rule as for integers: the batch is re-encoded with integer times */
    if (*out < 0)
        return dec_fail(d, JP_ERR_FORMAT, key, "time must be 1970 or later");
    return JP_OK;
}

static jp_err dec_target(dec *d, json_t *obj, bool need_service, jp_batch_target *t)
{
    json_t *v = json_object_get(obj, "target");
    if (!json_is_object(v))
        return dec_fail(d, JP_ERR_FORMAT, "target", "required object is missing");
    size_t n = strlen(d->path);
    if (n + 8 < sizeof d->path)
        memcpy(d->path + n, ".target", 8);
    jp_err rc;
    if ((rc = dec_str(d, v, "namespace", true, &t->ns)) ||
        (rc = dec_str(d, v, "service", need_service, &t->service)) ||
        (rc = dec_str(d, v, "pod", false, &t->pod)) ||
        (rc = dec_str(d, v, "cluster", false, &t->cluster)) ||
        (rc = dec_str(d, v, "workload", false, &t->workload)) ||
        (rc = dec_str(d, v, "container", false, &t->container)) ||
        (rc = dec_str(d, v, "node", false, &t->node)) ||
        (rc = dec_str(d, v, "jvm", false, &t->jvm)) ||
        (rc = dec_time(d, v, "jvm_start", false, &t->jvm_start_ns)))
        return rc;
    uint64_t pid;
    if ((rc = dec_u64(d, v, "pid", &pid)))
        return rc;
    t->pid = (int64_t)pid;
    d->path[n] = '\0';
    return JP_OK;
}

static void dec_at(dec *d, const char *name, size_t i)
{
    snprintf(d->path, sizeof d->path, "%s[%zu]", name, i);
}

/* The path of the entries of a long array, for error messages: "name[" (or
 * "base.name[") is written once by dec_path_open, each entry's index by
 * dec_path_index, without printf (one per stack, frame and row of a batch:
 * snprintf was ~5 % of an ingest's server CPU). base may not be d->path. */
static size_t dec_path_open(dec *d, const char *base, const char *name)
{
    int n = snprintf(d->path, sizeof d->path, "%s%s%s[", base, *base ? "." : "", name);
    return n > 0 && (size_t)n < sizeof d->path ? (size_t)n : 0;
}

static void dec_path_index(dec *d, size_t at, size_t i)
{
    char digits[24];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + i % 10);
        i /= 10;
    } while (i);
    if (!at || at + n + 2 > sizeof d->path)
        return; /* too long to say: the prefix stands alone */
    for (size_t k = 0; k < n; k++)
        d->path[at + k] = digits[n - 1 - k];
    d->path[at + n] = ']';
    d->path[at + n + 1] = '\0';
}

static jp_err dec_statuses(dec *d, json_t *root, jp_batch *b, size_t *docs)
{
    json_t *a = json_object_get(root, "statuses");
    if (!a || json_is_null(a))
        return JP_OK;
    if (!json_is_array(a))
        return dec_fail(d, JP_ERR_FORMAT, "statuses", "must be an array");
    if (json_array_size(a) > d->lim->max_docs - *docs)
        return dec_fail(d, JP_ERR_LIMIT, "statuses", "more documents than the limit");
    *docs += json_array_size(a);
    b->statuses = jp_xcalloc(json_array_size(a) + 1, sizeof *b->statuses);
    b->statuses_cap = json_array_size(a) + 1;
    size_t i;
    json_t *o;
    json_array_foreach(a, i, o)
    {
        dec_at(d, "statuses", i);
        jp_batch_status *s = &b->statuses[b->nstatuses++];
        if (!json_is_object(o))
            return dec_fail(d, JP_ERR_FORMAT, "", "must be an object");
        jp_err rc;
        if ((rc = dec_target(d, o, false, &s->target)) ||
            (rc = dec_time(d, o, "time", true, &s->time_ns)) ||
            (rc = dec_str(d, o, "state", true, &s->state)) ||
            (rc = dec_str(d, o, "reason", false, &s->reason)) ||
            (rc = dec_str(d, o, "message", false, &s->message)) ||
            (rc = dec_str(d, o, "engine", false, &s->engine)) ||
            (rc = dec_str(d, o, "mode", false, &s->mode)) ||
            (rc = dec_time(d, o, "until", false, &s->until_ns)))
            return rc;
    }
    d->path[0] = '\0';
    return JP_OK;
}

/* What a thread snapshot or a deadlock must hold: a thread list. */
static jp_err check_threads(dec *d, json_t *o)
{
    json_t *th = json_object_get(o, "threads");
    json_t *snap = json_object_get(o, "snapshot");
    if (!json_is_array(th) && json_is_object(snap)) /* snapshot_json.h form */
        th = json_object_get(snap, "threads");
    if (!json_is_array(th))
        return dec_fail(d, JP_ERR_FORMAT, "threads",
                        "required array is missing (or snapshot.threads)");
    size_t k;
    json_t *t;
    json_array_foreach(th, k, t)
    {
        if (!json_is_object(t) || !json_is_string(json_object_get(t, "name"))) {
            snprintf(d->path + strlen(d->path), sizeof d->path - strlen(d->path), ".threads[%zu]",
                     k);
            return dec_fail(d, JP_ERR_FORMAT, "name", "each thread needs a string name");
        }
    }
    return JP_OK;
}

/* What a heap histogram document must hold: a histogram of
 * wire/heap_json.h with at most JP_BATCH_HEAP_CLASSES classes. */
static jp_err check_heap(dec *d, json_t *o)
{
    jp_heap_histo h;
    jp_heap_histo_init(&h);
    char why[200];
    bool ok = jp_heap_histo_from_json(json_object_get(o, "histogram"), &h, JP_BATCH_HEAP_CLASSES,
                                      why, sizeof why);
    jp_heap_histo_cleanup(&h);
    return ok ? JP_OK : jp_error_set(d->err, JP_ERR_FORMAT, "%s.histogram.%s", d->path, why);
}

/* Thread snapshots, deadlocks and heap histograms: shape-checked (check),
 * then kept as compact JSON. */
static jp_err dec_docs(dec *d, json_t *root, const char *key, jp_batch_doc **out, size_t *n,
                       size_t *cap, size_t *docs, jp_err (*check)(dec *, json_t *))
{
    json_t *a = json_object_get(root, key);
    if (!a || json_is_null(a))
        return JP_OK;
    if (!json_is_array(a))
        return dec_fail(d, JP_ERR_FORMAT, key, "must be an array");
    if (json_array_size(a) > d->lim->max_docs - *docs)
        return dec_fail(d, JP_ERR_LIMIT, key, "more documents than the limit");
    *docs += json_array_size(a);
    *out = jp_xcalloc(json_array_size(a) + 1, sizeof **out);
    *cap = json_array_size(a) + 1;
    size_t i;
    json_t *o;
    json_array_foreach(a, i, o)
    {
        dec_at(d, key, i);
        jp_batch_doc *doc = &(*out)[(*n)++];
        if (!json_is_object(o))
            return dec_fail(d, JP_ERR_FORMAT, "", "must be an object");
        jp_err rc;
        if ((rc = dec_target(d, o, false, &doc->target)) ||
            (rc = dec_time(d, o, "time", true, &doc->time_ns)) || (rc = check(d, o)))
            return rc;
        char *text = json_dumps(o, JSON_COMPACT);
        if (!text)
            return dec_fail(d, JP_ERR_FORMAT, "", "cannot be encoded");
        doc->len = strlen(text);
        if (doc->len > d->lim->max_doc_bytes) {
            free(text);
            return dec_fail(d, JP_ERR_LIMIT, "", "document larger than the limit");
        }
        doc->json = jp_xstrdup(text);
        free(text);
    }
    d->path[0] = '\0';
    return JP_OK;
}

/* GC summaries: each {"target", "start", "end", "summary", "pause_ns"}
 * (wire/gc_json.h); they count as documents against max_docs. */
static jp_err dec_gcs(dec *d, json_t *root, jp_batch *b, size_t *docs)
{
    json_t *a = json_object_get(root, "gc");
    if (!a || json_is_null(a))
        return JP_OK;
    if (!json_is_array(a))
        return dec_fail(d, JP_ERR_FORMAT, "gc", "must be an array of GC summaries");
    if (json_array_size(a) > d->lim->max_docs - *docs)
        return dec_fail(d, JP_ERR_LIMIT, "gc", "more documents than the limit");
    *docs += json_array_size(a);
    size_t i;
    json_t *o;
    json_array_foreach(a, i, o)
    {
        dec_at(d, "gc", i);
        if (!json_is_object(o))
            return dec_fail(d, JP_ERR_FORMAT, "", "must be an object");
        jp_batch_gc *g = jp_batch_add_gc(b);
        jp_err rc = dec_target(d, o, false, &g->target);
        if (rc)
            return rc;
        char why[200];
        if (!jp_gc_window_from_json(o, &g->w, why, sizeof why)) /* why: "field: what" */
            return jp_error_set(d->err, JP_ERR_FORMAT, "%s%s%s", d->path, why[0] == ':' ? "" : ".",
                                why);
    }
    d->path[0] = '\0';
    return JP_OK;
}

/* ---- the batch, read with the pull parser (json_pull.h) ----
 *
 * The bulky parts (frame and thread names, stacks, window rows) are read
 * token by token; the small objects (collector, queue, targets, statuses,
 * snapshots, deadlocks) are cut out as text and checked with jansson by the
 * helpers above. Indexes are checked once the whole document is read, so
 * the keys may come in any order. */

typedef struct pdec {
    dec d;
    jpull p;
    jp_batch *b;
    size_t rows_total, docs;
} pdec;

static jp_err pd_syntax(pdec *x)
{
    return jp_error_set(x->d.err, JP_ERR_FORMAT, "body is not valid JSON: %s", x->p.err);
}

static jp_err pd_expect(pdec *x, jpull_tok got, jpull_tok want, const char *field, const char *what)
{
    if (got == JPULL_ERROR)
        return pd_syntax(x);
    if (got != want)
        return dec_fail(&x->d, JP_ERR_FORMAT, field, what);
    return JP_OK;
}

/* Cuts out the value just started by `t` and parses it with jansson. */
static jp_err pd_subdoc(pdec *x, jpull_tok t, json_t **out)
{
    size_t a, e;
    *out = NULL;
    if (!jpull_capture(&x->p, t, &a, &e))
        return pd_syntax(x);
    json_error_t je;
    *out = json_loadb(x->p.buf + a, e - a, JSON_REJECT_DUPLICATES, &je);
    if (!*out)
        return jp_error_set(x->d.err, JP_ERR_FORMAT, "body is not valid JSON: %s", je.text);
    return JP_OK;
}

/* Runs a jansson-side decoder on {key: value} built from the value at t. */
static jp_err pd_wrapped(pdec *x, jpull_tok t, const char *key, json_t **wrap)
{
    json_t *v;
    jp_err rc = pd_subdoc(x, t, &v);
    if (rc)
        return rc;
    *wrap = json_object();
    json_object_set_new(*wrap, key, v);
    return JP_OK;
}

static char *pd_strdup(pdec *x)
{
    char *s = jp_xstrndup(x->p.str, x->p.slen);
    for (size_t i = 0; i < x->p.slen; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            s[i] = '?';
    return s;
}

static jp_err pd_names(pdec *x, jpull_tok t, const char *key, size_t max, char ***out, size_t *n,
                       size_t *cap)
{
    jp_err rc = pd_expect(x, t, JPULL_ARR_BEGIN, key, "must be an array of strings");
    if (rc)
        return rc;
    size_t at = dec_path_open(&x->d, "", key);
    for (size_t i = 0;; i++) {
        t = jpull_next(&x->p);
        if (t == JPULL_ARR_END) {
            x->d.path[0] = '\0';
            return JP_OK;
        }
        dec_path_index(&x->d, at, i);
        if (t == JPULL_ERROR)
            return pd_syntax(x);
        if (t != JPULL_STRING)
            return dec_fail(&x->d, JP_ERR_FORMAT, "", "must be a string");
        if (i >= max)
            return dec_fail(&x->d, JP_ERR_LIMIT, "", "more entries than the limit");
        if (x->p.slen > x->d.lim->max_string)
            return dec_fail(&x->d, JP_ERR_LIMIT, "", "string longer than the limit");
        *out = jp_xgrow(*out, cap, *n + 1, sizeof **out);
        (*out)[(*n)++] = pd_strdup(x);
    }
}

/* "frame_kinds": ["jit", "interpreted", ...], one per entry of "frames"
 * (checked at the end); a word this server does not know reads as unknown,
 * so a newer agent's kinds never fail a batch. */
static jp_err pd_frame_kinds(pdec *x, jpull_tok t)
{
    jp_batch *b = x->b;
    jp_err rc = pd_expect(x, t, JPULL_ARR_BEGIN, "frame_kinds", "must be an array of strings");
    if (rc)
        return rc;
    size_t at = dec_path_open(&x->d, "", "frame_kinds");
    for (size_t i = 0;; i++) {
        t = jpull_next(&x->p);
        if (t == JPULL_ARR_END) {
            x->d.path[0] = '\0';
            return JP_OK;
        }
        dec_path_index(&x->d, at, i);
        if (t == JPULL_ERROR)
            return pd_syntax(x);
        if (t != JPULL_STRING)
            return dec_fail(&x->d, JP_ERR_FORMAT, "", "must be a string");
        if (i >= x->d.lim->max_frames)
            return dec_fail(&x->d, JP_ERR_LIMIT, "", "more entries than the limit");
        jp_frame_kind k = JP_FRAME_UNKNOWN;
        for (int c = 0; c < JP_FRAME_KIND_COUNT && k == JP_FRAME_UNKNOWN; c++) {
            const char *n = jp_frame_kind_name((jp_frame_kind)c);
            if (strlen(n) == x->p.slen && !memcmp(n, x->p.str, x->p.slen))
                k = (jp_frame_kind)c;
        }
        b->frame_kinds = jp_xgrow(b->frame_kinds, &b->frame_kinds_cap, b->nframe_kinds + 1, 1);
        b->frame_kinds[b->nframe_kinds++] = (uint8_t)k;
    }
}

/* A stack: [i, j, ...] or {"frames": [...], "truncated": bool}. Frame
 * indexes are checked at the end (frames may come after stacks). */
static jp_err pd_stack_frames(pdec *x, jp_batch_stack *s, size_t *cap)
{
    for (;;) {
        jpull_tok t = jpull_next(&x->p);
        if (t == JPULL_ARR_END)
            return JP_OK;
        if (t == JPULL_ERROR)
            return pd_syntax(x);
        if (t != JPULL_INT || x->p.i < 0 || x->p.i > UINT32_MAX)
            return dec_fail(&x->d, JP_ERR_FORMAT, "", "frame index must be an integer >= 0");
        if (s->depth >= x->d.lim->max_depth)
            return dec_fail(&x->d, JP_ERR_LIMIT, "", "more frames than the per-stack limit");
        s->frames = jp_xgrow(s->frames, cap, s->depth + 1, sizeof *s->frames);
        s->frames[s->depth++] = (uint32_t)x->p.i;
    }
}

static jp_err pd_stack(pdec *x, jpull_tok t, jp_batch_stack *s)
{
    size_t cap = 0;
    if (t == JPULL_ARR_BEGIN)
        return pd_stack_frames(x, s, &cap);
    if (t != JPULL_OBJ_BEGIN)
        return t == JPULL_ERROR ? pd_syntax(x)
                                : dec_fail(&x->d, JP_ERR_FORMAT, "",
                                           "a stack is an array of frame indexes or {frames}");
    bool have = false;
    while ((t = jpull_next(&x->p)) == JPULL_KEY) {
        bool is_frames = x->p.slen == 6 && !memcmp(x->p.str, "frames", 6);
        bool is_trunc = x->p.slen == 9 && !memcmp(x->p.str, "truncated", 9);
        t = jpull_next(&x->p);
        jp_err rc;
        if (is_frames && t == JPULL_ARR_BEGIN && !have) {
            have = true;
            if ((rc = pd_stack_frames(x, s, &cap)))
                return rc;
        } else if (is_trunc && (t == JPULL_TRUE || t == JPULL_FALSE)) {
            s->truncated = t == JPULL_TRUE;
        } else if (is_frames || is_trunc) {
            return t == JPULL_ERROR ? pd_syntax(x)
                                    : dec_fail(&x->d, JP_ERR_FORMAT, "",
                                               "frames must be an array, truncated a boolean");
        } else if (!jpull_skip(&x->p, t)) {
            return pd_syntax(x);
        }
    }
    if (t == JPULL_ERROR)
        return pd_syntax(x);
    return have ? JP_OK : dec_fail(&x->d, JP_ERR_FORMAT, "", "a stack object needs frames");
}

static jp_err pd_stacks(pdec *x, jpull_tok t)
{
    jp_err rc = pd_expect(x, t, JPULL_ARR_BEGIN, "stacks", "must be an array");
    jp_batch *b = x->b;
    size_t at = dec_path_open(&x->d, "", "stacks");
    for (size_t i = 0; !rc; i++) {
        t = jpull_next(&x->p);
        if (t == JPULL_ARR_END)
            break;
        dec_path_index(&x->d, at, i);
        if (i >= x->d.lim->max_stacks)
            return dec_fail(&x->d, JP_ERR_LIMIT, "", "more stacks than the limit");
        b->stacks = jp_xgrow(b->stacks, &b->stacks_cap, b->nstacks + 1, sizeof *b->stacks);
        jp_batch_stack *s = &b->stacks[b->nstacks++];
        memset(s, 0, sizeof *s);
        rc = pd_stack(x, t, s);
    }
    x->d.path[0] = '\0';
    return rc;
}

/* A row: [stack, samples, value] or [stack, samples, value, thread]. */
static jp_err pd_row(pdec *x, jpull_tok t, jp_batch_window *w)
{
    if (t != JPULL_ARR_BEGIN)
        return t == JPULL_ERROR ? pd_syntax(x)
                                : dec_fail(&x->d, JP_ERR_FORMAT, "",
                                           "a row is [stack, samples, value] or [..., thread]");
    int64_t v[4] = {0, 0, 0, -1};
    int n = 0;
    while ((t = jpull_next(&x->p)) != JPULL_ARR_END) {
        if (t == JPULL_ERROR)
            return pd_syntax(x);
        if (n == 4 || t != JPULL_INT || x->p.i < 0)
            return dec_fail(&x->d, JP_ERR_FORMAT, "",
                            n == 4 ? "a row is [stack, samples, value] or [..., thread]"
                                   : "row fields must be integers >= 0");
        v[n++] = x->p.i;
    }
    if (n < 3)
        return dec_fail(&x->d, JP_ERR_FORMAT, "",
                        "a row is [stack, samples, value] or [..., thread]");
    if (v[0] > UINT32_MAX || v[3] > UINT32_MAX)
        return dec_fail(&x->d, JP_ERR_FORMAT, "", "index out of range");
    jp_batch_window_add_row(w, (uint32_t)v[0], n == 4 ? (uint32_t)v[3] : JP_BATCH_NO_THREAD,
                            (uint64_t)v[1], (uint64_t)v[2]);
    return JP_OK;
}

static jp_err pd_rows(pdec *x, jpull_tok t, jp_batch_window *w)
{
    jp_err rc = pd_expect(x, t, JPULL_ARR_BEGIN, "rows", "required array is missing");
    char base[sizeof x->d.path];
    memcpy(base, x->d.path, sizeof base);
    size_t at = dec_path_open(&x->d, base, "rows");
    for (size_t i = 0; !rc; i++) {
        t = jpull_next(&x->p);
        if (t == JPULL_ARR_END)
            break;
        dec_path_index(&x->d, at, i);
        if (x->rows_total++ >= x->d.lim->max_rows)
            return dec_fail(&x->d, JP_ERR_LIMIT, "", "more rows in the batch than the limit");
        rc = pd_row(x, t, w);
    }
    if (!rc)
        memcpy(x->d.path, base, sizeof base);
    return rc;
}

/* A time token: integer ns since the epoch or RFC 3339 text. */
static jp_err pd_time(pdec *x, jpull_tok t, const char *key, int64_t *out)
{
    if (t == JPULL_INT && x->p.i >= 0) {
        *out = x->p.i;
        return JP_OK;
    }
    if (t == JPULL_STRING && x->p.slen < 64) {
        char tmp[64];
        memcpy(tmp, x->p.str, x->p.slen);
        tmp[x->p.slen] = '\0';
        jp_error e;
        jp_error_init(&e);
        if (jp_rfc3339_parse(tmp, out, &e) != JP_OK)
            return dec_fail(&x->d, JP_ERR_FORMAT, key, e.msg);
        if (*out < 0) /* as for integers: the batch is re-encoded with integer times */
            return dec_fail(&x->d, JP_ERR_FORMAT, key, "time must be 1970 or later");
        return JP_OK;
    }
    return t == JPULL_ERROR ? pd_syntax(x)
                            : dec_fail(&x->d, JP_ERR_FORMAT, key,
                                       "must be RFC 3339 text or integer ns since epoch");
}

static bool pd_kind(const pdec *x, jp_kind *out)
{
    char tmp[16];
    if (x->p.slen >= sizeof tmp)
        return false;
    memcpy(tmp, x->p.str, x->p.slen);
    tmp[x->p.slen] = '\0';
    return jp_kind_parse(tmp, out);
}

static bool pd_key(const pdec *x, const char *k)
{
    size_t n = strlen(k);
    return x->p.slen == n && !memcmp(x->p.str, k, n);
}

/* One field of a window object; t is the value's first token. */
static jp_err pd_window_field(pdec *x, int key, jpull_tok t, jp_batch_window *w, unsigned *seen)
{
    static const char *const names[] = {"target", "kind",    "start",     "end", "period_ns",
                                        "events", "dropped", "truncated", "rows"};
    if (*seen & (1u << key))
        return dec_fail(&x->d, JP_ERR_FORMAT, names[key], "duplicate key");
    *seen |= 1u << key;
    json_t *wrap;
    jp_err rc;
    switch (key) {
    case 0:
        if ((rc = pd_wrapped(x, t, "target", &wrap)))
            return rc;
        rc = dec_target(&x->d, wrap, true, &w->target);
        json_decref(wrap);
        return rc;
    case 1:
        if (t != JPULL_STRING || !pd_kind(x, &w->kind))
            return t == JPULL_ERROR ? pd_syntax(x)
                                    : dec_fail(&x->d, JP_ERR_FORMAT, "kind", "unknown kind");
        return JP_OK;
    case 2:
        return pd_time(x, t, "start", &w->start_ns);
    case 3:
        return pd_time(x, t, "end", &w->end_ns);
    case 4:
    case 5:
        if (t != JPULL_INT || x->p.i < 0)
            return t == JPULL_ERROR
                       ? pd_syntax(x)
                       : dec_fail(&x->d, JP_ERR_FORMAT, names[key], "must be an integer >= 0");
        if (key == 4)
            w->period_ns = x->p.i;
        else
            w->events = (uint64_t)x->p.i;
        return JP_OK;
    case 6:
    case 7:
        if (t != JPULL_TRUE && t != JPULL_FALSE && t != JPULL_NULL)
            return t == JPULL_ERROR
                       ? pd_syntax(x)
                       : dec_fail(&x->d, JP_ERR_FORMAT, names[key], "must be true or false");
        *(key == 6 ? &w->dropped : &w->truncated) = t == JPULL_TRUE;
        return JP_OK;
    default:
        return pd_rows(x, t, w);
    }
}

static jp_err pd_window(pdec *x, jpull_tok t, jp_batch_window *w)
{
    static const char *const keys[] = {"target", "kind",    "start",     "end", "period_ns",
                                       "events", "dropped", "truncated", "rows"};
    if (t != JPULL_OBJ_BEGIN)
        return t == JPULL_ERROR ? pd_syntax(x)
                                : dec_fail(&x->d, JP_ERR_FORMAT, "", "must be an object");
    unsigned seen = 0;
    jp_err rc = JP_OK;
    while (!rc && (t = jpull_next(&x->p)) == JPULL_KEY) {
        int key = -1;
        for (int k = 0; k < 9 && key < 0; k++)
            if (pd_key(x, keys[k]))
                key = k;
        t = jpull_next(&x->p);
        if (key < 0)
            rc = jpull_skip(&x->p, t) ? JP_OK : pd_syntax(x);
        else
            rc = pd_window_field(x, key, t, w, &seen);
    }
    if (rc)
        return rc;
    if (t == JPULL_ERROR)
        return pd_syntax(x);
    for (int k = 0; k < 9; k++)
        if ((k < 4 || k == 8) && !(seen & (1u << k)))
            return dec_fail(&x->d, JP_ERR_FORMAT, keys[k], "required field is missing");
    if (w->end_ns < w->start_ns)
        return dec_fail(&x->d, JP_ERR_FORMAT, "end", "window ends before it starts");
    return JP_OK;
}

static jp_err pd_windows(pdec *x, jpull_tok t)
{
    jp_err rc = pd_expect(x, t, JPULL_ARR_BEGIN, "windows", "must be an array");
    for (size_t i = 0; !rc; i++) {
        t = jpull_next(&x->p);
        if (t == JPULL_ARR_END)
            break;
        dec_at(&x->d, "windows", i);
        if (i >= x->d.lim->max_windows)
            return dec_fail(&x->d, JP_ERR_LIMIT, "", "more windows than the limit");
        rc = pd_window(x, t, jp_batch_add_window(x->b));
    }
    if (!rc)
        x->d.path[0] = '\0';
    return rc;
}

/* Collector and queue objects, statuses and documents: through jansson. */
static jp_err pd_small(pdec *x, const char *key, jpull_tok t)
{
    json_t *wrap;
    jp_err rc = pd_wrapped(x, t, key, &wrap);
    if (rc)
        return rc;
    jp_batch *b = x->b;
    json_t *v = json_object_get(wrap, key);
    if (!strcmp(key, "collector")) {
        if (!json_is_object(v)) {
            rc = dec_fail(&x->d, JP_ERR_FORMAT, "collector", "required object is missing");
        } else {
            snprintf(x->d.path, sizeof x->d.path, "collector");
            if (!(rc = dec_str(&x->d, v, "id", true, &b->collector)))
                rc = dec_str(&x->d, v, "version", false, &b->collector_version);
        }
    } else if (!strcmp(key, "queue")) {
        if (!json_is_null(v) && !json_is_object(v)) {
            rc = dec_fail(&x->d, JP_ERR_FORMAT, "queue", "must be an object");
        } else if (json_is_object(v)) {
            b->has_queue = true;
            snprintf(x->d.path, sizeof x->d.path, "queue");
            if (!(rc = dec_u64(&x->d, v, "dropped_batches", &b->queue_dropped_batches)) &&
                !(rc = dec_u64(&x->d, v, "dropped_bytes", &b->queue_dropped_bytes)) &&
                !(rc = dec_u64(&x->d, v, "bytes", &b->queue_bytes)))
                rc = dec_time(&x->d, v, "oldest_dropped", false, &b->queue_oldest_dropped_ns);
        }
    } else if (!strcmp(key, "statuses")) {
        rc = dec_statuses(&x->d, wrap, b, &x->docs);
    } else if (!strcmp(key, "gc")) {
        rc = dec_gcs(&x->d, wrap, b, &x->docs);
    } else if (!strcmp(key, "heap_histograms")) {
        rc = dec_docs(&x->d, wrap, key, &b->heaps, &b->nheaps, &b->heaps_cap, &x->docs, check_heap);
    } else if (!strcmp(key, "thread_snapshots")) {
        rc = dec_docs(&x->d, wrap, key, &b->snapshots, &b->nsnapshots, &b->snapshots_cap, &x->docs,
                      check_threads);
    } else {
        rc = dec_docs(&x->d, wrap, key, &b->deadlocks, &b->ndeadlocks, &b->deadlocks_cap, &x->docs,
                      check_threads);
    }
    if (!rc)
        x->d.path[0] = '\0';
    json_decref(wrap);
    return rc;
}

static jp_err pd_scalar(pdec *x, int key, jpull_tok t)
{
    jp_batch *b = x->b;
    switch (key) {
    case 0: /* batch_id */
        if (t != JPULL_STRING || !x->p.slen)
            return t == JPULL_ERROR
                       ? pd_syntax(x)
                       : dec_fail(&x->d, JP_ERR_FORMAT, "batch_id", "must be a non-empty string");
        if (x->p.slen > JP_BATCH_ID_MAX)
            return dec_fail(&x->d, JP_ERR_FORMAT, "batch_id", "longer than 128 bytes");
        b->id = pd_strdup(x);
        return JP_OK;
    case 1: /* sent */
        return t == JPULL_NULL ? JP_OK : pd_time(x, t, "sent", &b->sent_ns);
    default: /* heartbeat */
        if (t != JPULL_TRUE && t != JPULL_FALSE && t != JPULL_NULL)
            return t == JPULL_ERROR
                       ? pd_syntax(x)
                       : dec_fail(&x->d, JP_ERR_FORMAT, "heartbeat", "must be true or false");
        b->heartbeat = t == JPULL_TRUE;
        return JP_OK;
    }
}

static const char *const pd_keys[] = {"batch_id",    "sent",     "heartbeat",        "collector",
                                      "queue",       "statuses", "thread_snapshots", "deadlocks",
                                      "frames",      "threads",  "stacks",           "windows",
                                      "frame_kinds", "gc",       "heap_histograms"};
#define PD_NKEYS 15

static jp_err pd_field(pdec *x, int key, jpull_tok t)
{
    jp_batch *b = x->b;
    if (t == JPULL_NULL && key >= 4) /* optional lists and objects may be null */
        return JP_OK;
    if (key < 3)
        return pd_scalar(x, key, t);
    if (key < 8)
        return pd_small(x, pd_keys[key], t);
    switch (key) {
    case 8:
        return pd_names(x, t, "frames", x->d.lim->max_frames, &b->frames, &b->nframes,
                        &b->frames_cap);
    case 9:
        return pd_names(x, t, "threads", x->d.lim->max_threads, &b->threads, &b->nthreads,
                        &b->threads_cap);
    case 10:
        return pd_stacks(x, t);
    case 11:
        return pd_windows(x, t);
    case 13:
    case 14:
        return pd_small(x, pd_keys[key], t);
    default:
        return pd_frame_kinds(x, t);
    }
}

/* Indexes and stack ids, once every table is known. */
static jp_err pd_finish(pdec *x)
{
    jp_batch *b = x->b;
    if (b->nframe_kinds && b->nframe_kinds != b->nframes)
        return dec_fail(&x->d, JP_ERR_FORMAT, "frame_kinds", "must have one entry per frame");
    /* each frame name hashed once, not once per stack it is in (a batch's
     * stacks repeat its frames ~10-100 times: the hashing was ~8 % of an
     * ingest's server CPU) */
    uint64_t *fh = jp_xreallocarray(NULL, b->nframes ? b->nframes : 1, sizeof *fh);
    for (size_t f = 0; f < b->nframes; f++)
        fh[f] = jp_frame_name_hash(b->frames[f], strlen(b->frames[f]));
    for (size_t i = 0; i < b->nstacks; i++) {
        jp_batch_stack *s = &b->stacks[i];
        uint64_t id = jp_stack_id_begin(s->depth); /* as jp_batch_stack_id() */
        for (uint32_t k = 0; k < s->depth; k++) {
            if (s->frames[k] >= b->nframes) {
                free(fh);
                dec_at(&x->d, "stacks", i);
                return dec_fail(&x->d, JP_ERR_FORMAT, "", "frame index out of the frames table");
            }
            id = jp_hash_combine(id, fh[s->frames[k]]);
        }
        s->id = id;
    }
    free(fh);
    for (size_t w = 0; w < b->nwindows; w++)
        for (size_t r = 0; r < b->windows[w].nrows; r++) {
            const jp_batch_row *row = &b->windows[w].rows[r];
            const char *bad = row->stack >= b->nstacks ? "stack index out of the stacks table"
                              : row->thread != JP_BATCH_NO_THREAD && row->thread >= b->nthreads
                                  ? "thread index out of the threads table"
                                  : NULL;
            if (bad) {
                snprintf(x->d.path, sizeof x->d.path, "windows[%zu].rows[%zu]", w, r);
                return dec_fail(&x->d, JP_ERR_FORMAT, "", bad);
            }
        }
    if (!b->id)
        return dec_fail(&x->d, JP_ERR_FORMAT, "batch_id", "required string is missing");
    if (!b->collector)
        return dec_fail(&x->d, JP_ERR_FORMAT, "collector", "required object is missing");
    return JP_OK;
}

jp_err jp_batch_json_decode(const char *text, size_t len, const jp_batch_limits *lim, jp_batch *out,
                            jp_error *err)
{
    pdec x = {.d = {.lim = lim, .err = err}, .b = out};
    jpull_init(&x.p, text, len);
    jp_err rc = JP_OK;
    unsigned seen = 0;
    jpull_tok t = jpull_next(&x.p);
    if (t != JPULL_OBJ_BEGIN) {
        rc = t == JPULL_ERROR ? pd_syntax(&x)
                              : jp_error_set(err, JP_ERR_FORMAT, "body must be a JSON object");
        goto out;
    }
    while (!rc && (t = jpull_next(&x.p)) == JPULL_KEY) {
        int key = -1;
        for (int k = 0; k < PD_NKEYS && key < 0; k++)
            if (pd_key(&x, pd_keys[k]))
                key = k;
        if (key >= 0 && (seen & (1u << key))) {
            rc = dec_fail(&x.d, JP_ERR_FORMAT, pd_keys[key], "duplicate key");
            break;
        }
        t = jpull_next(&x.p);
        if (key < 0) {
            rc = jpull_skip(&x.p, t) ? JP_OK : pd_syntax(&x);
            continue;
        }
        seen |= 1u << key;
        rc = pd_field(&x, key, t);
    }
    if (!rc && t == JPULL_ERROR)
        rc = pd_syntax(&x);
    if (!rc && jpull_next(&x.p) != JPULL_END)
        rc = pd_syntax(&x);
    if (!rc)
        rc = pd_finish(&x);
out:
    jpull_cleanup(&x.p);
    return rc;
}

/* ---- encoding (the agent's side; also tests and the benchmark) ---- */

static void enc_str(jp_strbuf *o, const char *s)
{
    json_t *j = json_string(s ? s : "");
    char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    jp_strbuf_puts(o, t ? t : "\"\"");
    free(t);
    json_decref(j);
}

static void enc_target(jp_strbuf *o, const jp_batch_target *t)
{
    jp_strbuf_puts(o, "\"target\":{\"namespace\":");
    enc_str(o, t->ns);
    const struct {
        const char *k, *v;
    } f[] = {{"service", t->service}, {"pod", t->pod},
             {"cluster", t->cluster}, {"workload", t->workload},
             {"node", t->node},       {"container", t->container},
             {"jvm", t->jvm}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (!f[i].v)
            continue;
        jp_strbuf_printf(o, ",\"%s\":", f[i].k);
        enc_str(o, f[i].v);
    }
    if (t->pid)
        jp_strbuf_printf(o, ",\"pid\":%lld", (long long)t->pid);
    if (t->jvm_start_ns)
        jp_strbuf_printf(o, ",\"jvm_start\":%lld", (long long)t->jvm_start_ns);
    jp_strbuf_putc(o, '}');
}

static void enc_names(jp_strbuf *o, const char *key, char *const *names, size_t n)
{
    jp_strbuf_printf(o, ",\"%s\":[", key);
    for (size_t i = 0; i < n; i++) {
        if (i)
            jp_strbuf_putc(o, ',');
        enc_str(o, names[i]);
    }
    jp_strbuf_putc(o, ']');
}

static void enc_windows(jp_strbuf *o, const jp_batch *b)
{
    jp_strbuf_puts(o, ",\"windows\":[");
    for (size_t i = 0; i < b->nwindows; i++) {
        const jp_batch_window *w = &b->windows[i];
        jp_strbuf_puts(o, i ? ",{" : "{");
        enc_target(o, &w->target);
        jp_strbuf_printf(o,
                         ",\"kind\":\"%s\",\"start\":%lld,\"end\":%lld,\"period_ns\":%lld,"
                         "\"events\":%llu,\"dropped\":%s,\"truncated\":%s,\"rows\":[",
                         jp_kind_name(w->kind), (long long)w->start_ns, (long long)w->end_ns,
                         (long long)w->period_ns, (unsigned long long)w->events,
                         w->dropped ? "true" : "false", w->truncated ? "true" : "false");
        for (size_t r = 0; r < w->nrows; r++) {
            const jp_batch_row *row = &w->rows[r];
            jp_strbuf_printf(o, "%s[%u,%llu,%llu", r ? "," : "", row->stack,
                             (unsigned long long)row->samples, (unsigned long long)row->value);
            if (row->thread != JP_BATCH_NO_THREAD)
                jp_strbuf_printf(o, ",%u", row->thread);
            jp_strbuf_putc(o, ']');
        }
        jp_strbuf_puts(o, "]}");
    }
    jp_strbuf_putc(o, ']');
}

static void enc_docs(jp_strbuf *o, const char *key, const jp_batch_doc *d, size_t n)
{
    jp_strbuf_printf(o, ",\"%s\":[", key);
    for (size_t i = 0; i < n; i++) {
        if (i)
            jp_strbuf_putc(o, ',');
        jp_strbuf_append(o, d[i].json, d[i].len);
    }
    jp_strbuf_putc(o, ']');
}

char *jp_batch_json_encode(const jp_batch *b, size_t *len)
{
    jp_strbuf o;
    jp_strbuf_init(&o, 0);
    jp_strbuf_puts(&o, "{\"batch_id\":");
    enc_str(&o, b->id);
    jp_strbuf_puts(&o, ",\"collector\":{\"id\":");
    enc_str(&o, b->collector);
    if (b->collector_version) {
        jp_strbuf_puts(&o, ",\"version\":");
        enc_str(&o, b->collector_version);
    }
    jp_strbuf_printf(&o, "},\"sent\":%lld,\"heartbeat\":%s", (long long)b->sent_ns,
                     b->heartbeat ? "true" : "false");
    /* the queue counters travel when the producer set them (has_queue) */
    if (b->has_queue || b->queue_dropped_batches || b->queue_bytes) {
        jp_strbuf_printf(
            &o, ",\"queue\":{\"dropped_batches\":%llu,\"dropped_bytes\":%llu,\"bytes\":%llu",
            (unsigned long long)b->queue_dropped_batches,
            (unsigned long long)b->queue_dropped_bytes, (unsigned long long)b->queue_bytes);
        if (b->queue_oldest_dropped_ns)
            jp_strbuf_printf(&o, ",\"oldest_dropped\":%lld", (long long)b->queue_oldest_dropped_ns);
        jp_strbuf_putc(&o, '}');
    }
    enc_names(&o, "frames", b->frames, b->nframes);
    if (b->nframe_kinds == b->nframes && b->nframes) {
        jp_strbuf_puts(&o, ",\"frame_kinds\":[");
        for (size_t i = 0; i < b->nframes; i++)
            jp_strbuf_printf(&o, "%s\"%s\"", i ? "," : "",
                             jp_frame_kind_name(jp_batch_frame_kind(b, i)));
        jp_strbuf_putc(&o, ']');
    }
    enc_names(&o, "threads", b->threads, b->nthreads);
    jp_strbuf_puts(&o, ",\"stacks\":[");
    for (size_t i = 0; i < b->nstacks; i++) {
        const jp_batch_stack *s = &b->stacks[i];
        jp_strbuf_puts(&o, i ? (s->truncated ? ",{\"truncated\":true,\"frames\":[" : ",[")
                             : (s->truncated ? "{\"truncated\":true,\"frames\":[" : "["));
        for (uint32_t k = 0; k < s->depth; k++)
            jp_strbuf_printf(&o, "%s%u", k ? "," : "", s->frames[k]);
        jp_strbuf_puts(&o, s->truncated ? "]}" : "]");
    }
    jp_strbuf_putc(&o, ']');
    enc_windows(&o, b);
    jp_strbuf_puts(&o, ",\"statuses\":[");
    for (size_t i = 0; i < b->nstatuses; i++) {
        const jp_batch_status *s = &b->statuses[i];
        jp_strbuf_puts(&o, i ? ",{" : "{");
        enc_target(&o, &s->target);
        jp_strbuf_printf(&o, ",\"time\":%lld,\"state\":", (long long)s->time_ns);
        enc_str(&o, s->state);
        const char *keys[] = {"reason", "message", "engine", "mode"};
        const char *vals[] = {s->reason, s->message, s->engine, s->mode};
        for (int k = 0; k < 4; k++) {
            if (!vals[k])
                continue;
            jp_strbuf_printf(&o, ",\"%s\":", keys[k]);
            enc_str(&o, vals[k]);
        }
        if (s->until_ns)
            jp_strbuf_printf(&o, ",\"until\":%lld", (long long)s->until_ns);
        jp_strbuf_putc(&o, '}');
    }
    jp_strbuf_putc(&o, ']');
    enc_docs(&o, "thread_snapshots", b->snapshots, b->nsnapshots);
    enc_docs(&o, "deadlocks", b->deadlocks, b->ndeadlocks);
    if (b->nheaps) /* an older server ignores the key */
        enc_docs(&o, "heap_histograms", b->heaps, b->nheaps);
    if (b->ngcs) { /* an older server ignores the key */
        jp_strbuf_puts(&o, ",\"gc\":[");
        for (size_t i = 0; i < b->ngcs; i++) {
            jp_strbuf_puts(&o, i ? ",{" : "{");
            enc_target(&o, &b->gcs[i].target);
            json_t *w = jp_gc_window_json(&b->gcs[i].w);
            char *t = json_dumps(w, JSON_COMPACT);
            json_decref(w);
            /* the window's keys after the target: drop its opening brace */
            if (t && t[0] == '{' && t[1] != '}')
                jp_strbuf_printf(&o, ",%s", t + 1);
            else
                jp_strbuf_putc(&o, '}');
            free(t);
        }
        jp_strbuf_putc(&o, ']');
    }
    jp_strbuf_putc(&o, '}');
    if (len)
        *len = o.len;
    return jp_strbuf_take(&o);
}
