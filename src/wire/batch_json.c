#include "wire/batch_json.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/timeutil.h"
#include "base/xalloc.h"

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

static jp_err dec_bool(dec *d, json_t *obj, const char *key, bool *out)
{
    json_t *v = json_object_get(obj, key);
    *out = false;
    if (!v || json_is_null(v))
        return JP_OK;
    if (!json_is_boolean(v))
        return dec_fail(d, JP_ERR_FORMAT, key, "must be true or false");
    *out = json_is_true(v);
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

/* A table of strings (frames, threads). */
static jp_err dec_names(dec *d, json_t *root, const char *key, size_t max, char ***out, size_t *n,
                        size_t *cap)
{
    json_t *a = json_object_get(root, key);
    if (!a || json_is_null(a))
        return JP_OK;
    if (!json_is_array(a))
        return dec_fail(d, JP_ERR_FORMAT, key, "must be an array of strings");
    if (json_array_size(a) > max)
        return dec_fail(d, JP_ERR_LIMIT, key, "more entries than the limit");
    *out = jp_xcalloc(json_array_size(a) + 1, sizeof **out);
    *cap = json_array_size(a) + 1;
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        if (!json_is_string(v)) {
            dec_at(d, key, i);
            return dec_fail(d, JP_ERR_FORMAT, "", "must be a string");
        }
        size_t len = json_string_length(v);
        if (len > d->lim->max_string) {
            dec_at(d, key, i);
            return dec_fail(d, JP_ERR_LIMIT, "", "string longer than the limit");
        }
        char *s = jp_xstrndup(json_string_value(v), len);
        for (size_t k = 0; k < len; k++)
            if ((unsigned char)s[k] < 0x20)
                s[k] = '?';
        (*out)[(*n)++] = s;
    }
    return JP_OK;
}

static jp_err dec_stacks(dec *d, json_t *root, jp_batch *b)
{
    json_t *a = json_object_get(root, "stacks");
    if (!a || json_is_null(a))
        return JP_OK;
    if (!json_is_array(a))
        return dec_fail(d, JP_ERR_FORMAT, "stacks", "must be an array");
    if (json_array_size(a) > d->lim->max_stacks)
        return dec_fail(d, JP_ERR_LIMIT, "stacks", "more stacks than the limit");
    uint32_t *tmp = jp_xcalloc(d->lim->max_depth + 1, sizeof *tmp);
    jp_err rc = JP_OK;
    size_t i;
    json_t *s;
    json_array_foreach(a, i, s)
    {
        dec_at(d, "stacks", i);
        json_t *fr = s;
        bool truncated = false;
        if (json_is_object(s)) {
            fr = json_object_get(s, "frames");
            if ((rc = dec_bool(d, s, "truncated", &truncated)))
                break;
        }
        if (!json_is_array(fr)) {
            rc = dec_fail(d, JP_ERR_FORMAT, "", "a stack is an array of frame indexes or {frames}");
            break;
        }
        size_t depth = json_array_size(fr);
        if (depth > d->lim->max_depth) {
            rc = dec_fail(d, JP_ERR_LIMIT, "", "more frames than the per-stack limit");
            break;
        }
        for (size_t k = 0; k < depth && !rc; k++) {
            json_t *x = json_array_get(fr, k);
            if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                (uint64_t)json_integer_value(x) >= b->nframes)
                rc = dec_fail(d, JP_ERR_FORMAT, "", "frame index out of the frames table");
            else
                tmp[k] = (uint32_t)json_integer_value(x);
        }
        if (rc)
            break;
        jp_batch_add_stack(b, tmp, (uint32_t)depth, truncated);
    }
    free(tmp);
    d->path[0] = '\0';
    return rc;
}

/* A row: [stack, samples, value] or [stack, samples, value, thread]. */
static jp_err dec_row(dec *d, json_t *r, const jp_batch *b, jp_batch_window *w)
{
    size_t n = json_is_array(r) ? json_array_size(r) : 0;
    if (n != 3 && n != 4)
        return dec_fail(d, JP_ERR_FORMAT, "", "a row is [stack, samples, value] or [..., thread]");
    json_int_t v[4] = {0, 0, 0, -1};
    for (size_t k = 0; k < n; k++) {
        json_t *x = json_array_get(r, k);
        if (!json_is_integer(x) || json_integer_value(x) < 0)
            return dec_fail(d, JP_ERR_FORMAT, "", "row fields must be integers >= 0");
        v[k] = json_integer_value(x);
    }
    if ((uint64_t)v[0] >= b->nstacks)
        return dec_fail(d, JP_ERR_FORMAT, "", "stack index out of the stacks table");
    if (n == 4 && (uint64_t)v[3] >= b->nthreads)
        return dec_fail(d, JP_ERR_FORMAT, "", "thread index out of the threads table");
    jp_batch_window_add_row(w, (uint32_t)v[0], n == 4 ? (uint32_t)v[3] : JP_BATCH_NO_THREAD,
                            (uint64_t)v[1], (uint64_t)v[2]);
    return JP_OK;
}

static jp_err dec_window(dec *d, json_t *o, jp_batch *b, jp_batch_window *w, size_t *rows_total)
{
    if (!json_is_object(o))
        return dec_fail(d, JP_ERR_FORMAT, "", "must be an object");
    jp_err rc;
    char *kind = NULL;
    if ((rc = dec_target(d, o, true, &w->target)) || (rc = dec_str(d, o, "kind", true, &kind)))
        return rc;
    bool ok = jp_kind_parse(kind, &w->kind);
    free(kind);
    if (!ok)
        return dec_fail(d, JP_ERR_FORMAT, "kind", "unknown kind (cpu, wall, alloc, lock, park)");
    uint64_t period;
    if ((rc = dec_time(d, o, "start", true, &w->start_ns)) ||
        (rc = dec_time(d, o, "end", true, &w->end_ns)) ||
        (rc = dec_u64(d, o, "period_ns", &period)) || (rc = dec_u64(d, o, "events", &w->events)) ||
        (rc = dec_bool(d, o, "dropped", &w->dropped)) ||
        (rc = dec_bool(d, o, "truncated", &w->truncated)))
        return rc;
    w->period_ns = (int64_t)period;
    if (w->end_ns < w->start_ns)
        return dec_fail(d, JP_ERR_FORMAT, "end", "window ends before it starts");
    json_t *rows = json_object_get(o, "rows");
    if (!json_is_array(rows))
        return dec_fail(d, JP_ERR_FORMAT, "rows", "required array is missing");
    size_t nr = json_array_size(rows);
    if (nr > d->lim->max_rows - *rows_total)
        return dec_fail(d, JP_ERR_LIMIT, "rows", "more rows in the batch than the limit");
    *rows_total += nr;
    w->rows = jp_xcalloc(nr + 1, sizeof *w->rows);
    w->rows_cap = nr + 1;
    char base[sizeof d->path];
    memcpy(base, d->path, sizeof base);
    for (size_t i = 0; i < nr; i++) {
        snprintf(d->path, sizeof d->path, "%s.rows[%zu]", base, i);
        if ((rc = dec_row(d, json_array_get(rows, i), b, w)))
            return rc;
    }
    memcpy(d->path, base, sizeof base);
    return JP_OK;
}

static jp_err dec_windows(dec *d, json_t *root, jp_batch *b)
{
    json_t *a = json_object_get(root, "windows");
    if (!a || json_is_null(a))
        return JP_OK;
    if (!json_is_array(a))
        return dec_fail(d, JP_ERR_FORMAT, "windows", "must be an array");
    if (json_array_size(a) > d->lim->max_windows)
        return dec_fail(d, JP_ERR_LIMIT, "windows", "more windows than the limit");
    size_t rows_total = 0, i;
    json_t *o;
    json_array_foreach(a, i, o)
    {
        dec_at(d, "windows", i);
        jp_err rc = dec_window(d, o, b, jp_batch_add_window(b), &rows_total);
        if (rc)
            return rc;
    }
    d->path[0] = '\0';
    return JP_OK;
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
            (rc = dec_str(d, o, "engine", false, &s->engine)))
            return rc;
    }
    d->path[0] = '\0';
    return JP_OK;
}

/* Thread snapshots and deadlocks: shape-checked, then kept as compact JSON. */
static jp_err dec_docs(dec *d, json_t *root, const char *key, jp_batch_doc **out, size_t *n,
                       size_t *cap, size_t *docs)
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
            (rc = dec_time(d, o, "time", true, &doc->time_ns)))
            return rc;
        json_t *th = json_object_get(o, "threads");
        if (!json_is_array(th))
            return dec_fail(d, JP_ERR_FORMAT, "threads", "required array is missing");
        size_t k;
        json_t *t;
        json_array_foreach(th, k, t)
        {
            if (!json_is_object(t) || !json_is_string(json_object_get(t, "name"))) {
                snprintf(d->path + strlen(d->path), sizeof d->path - strlen(d->path),
                         ".threads[%zu]", k);
                return dec_fail(d, JP_ERR_FORMAT, "name", "each thread needs a string name");
            }
        }
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

static jp_err dec_header(dec *d, json_t *root, jp_batch *b)
{
    jp_err rc;
    if ((rc = dec_str(d, root, "batch_id", true, &b->id)))
        return rc;
    if (strlen(b->id) > JP_BATCH_ID_MAX)
        return dec_fail(d, JP_ERR_FORMAT, "batch_id", "longer than 128 bytes");
    json_t *c = json_object_get(root, "collector");
    if (!json_is_object(c))
        return dec_fail(d, JP_ERR_FORMAT, "collector", "required object is missing");
    snprintf(d->path, sizeof d->path, "collector");
    if ((rc = dec_str(d, c, "id", true, &b->collector)) ||
        (rc = dec_str(d, c, "version", false, &b->collector_version)))
        return rc;
    d->path[0] = '\0';
    if ((rc = dec_time(d, root, "sent", false, &b->sent_ns)) ||
        (rc = dec_bool(d, root, "heartbeat", &b->heartbeat)))
        return rc;
    json_t *q = json_object_get(root, "queue");
    if (q && !json_is_null(q)) {
        if (!json_is_object(q))
            return dec_fail(d, JP_ERR_FORMAT, "queue", "must be an object");
        snprintf(d->path, sizeof d->path, "queue");
        if ((rc = dec_u64(d, q, "dropped_batches", &b->queue_dropped_batches)) ||
            (rc = dec_u64(d, q, "dropped_bytes", &b->queue_dropped_bytes)) ||
            (rc = dec_u64(d, q, "bytes", &b->queue_bytes)) ||
            (rc = dec_time(d, q, "oldest_dropped", false, &b->queue_oldest_dropped_ns)))
            return rc;
        d->path[0] = '\0';
    }
    return JP_OK;
}

jp_err jp_batch_json_decode(const char *text, size_t len, const jp_batch_limits *lim,
                            jp_batch *out, jp_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return jp_error_set(err, JP_ERR_FORMAT, "body is not valid JSON: line %d column %d: %s",
                            je.line, je.column, je.text);
    dec d = {.lim = lim, .err = err};
    jp_err rc = JP_OK;
    size_t docs = 0;
    if (!json_is_object(root)) {
        rc = jp_error_set(err, JP_ERR_FORMAT, "body must be a JSON object");
        goto out;
    }
    if ((rc = dec_header(&d, root, out)) ||
        (rc = dec_names(&d, root, "frames", lim->max_frames, &out->frames, &out->nframes,
                        &out->frames_cap)) ||
        (rc = dec_names(&d, root, "threads", lim->max_threads, &out->threads, &out->nthreads,
                        &out->threads_cap)) ||
        (rc = dec_stacks(&d, root, out)) || (rc = dec_windows(&d, root, out)) ||
        (rc = dec_statuses(&d, root, out, &docs)) ||
        (rc = dec_docs(&d, root, "thread_snapshots", &out->snapshots, &out->nsnapshots,
                       &out->snapshots_cap, &docs)) ||
        (rc = dec_docs(&d, root, "deadlocks", &out->deadlocks, &out->ndeadlocks,
                       &out->deadlocks_cap, &docs)))
        goto out;
out:
    json_decref(root);
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
    } f[] = {{"service", t->service},     {"pod", t->pod},   {"cluster", t->cluster},
             {"workload", t->workload},   {"node", t->node}, {"container", t->container},
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
    jp_strbuf_printf(&o,
                     "},\"sent\":%lld,\"heartbeat\":%s,\"queue\":{\"dropped_batches\":%llu,"
                     "\"dropped_bytes\":%llu,\"bytes\":%llu",
                     (long long)b->sent_ns, b->heartbeat ? "true" : "false",
                     (unsigned long long)b->queue_dropped_batches,
                     (unsigned long long)b->queue_dropped_bytes,
                     (unsigned long long)b->queue_bytes);
    if (b->queue_oldest_dropped_ns)
        jp_strbuf_printf(&o, ",\"oldest_dropped\":%lld", (long long)b->queue_oldest_dropped_ns);
    jp_strbuf_putc(&o, '}');
    enc_names(&o, "frames", b->frames, b->nframes);
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
        const char *keys[] = {"reason", "message", "engine"};
        const char *vals[] = {s->reason, s->message, s->engine};
        for (int k = 0; k < 3; k++) {
            if (!vals[k])
                continue;
            jp_strbuf_printf(&o, ",\"%s\":", keys[k]);
            enc_str(&o, vals[k]);
        }
        jp_strbuf_putc(&o, '}');
    }
    jp_strbuf_putc(&o, ']');
    enc_docs(&o, "thread_snapshots", b->snapshots, b->nsnapshots);
    enc_docs(&o, "deadlocks", b->deadlocks, b->ndeadlocks);
    jp_strbuf_putc(&o, '}');
    if (len)
        *len = o.len;
    return jp_strbuf_take(&o);
}
