#include "probe/proto.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "model/profile.h"

#define PROBE_MAX_KINDS 8

static const char *const op_names[] = {"hello",        "snapshot", "profile_start", "profile_read",
                                       "profile_stop", "bye",      "heap"};

const char *probe_op_name(probe_op op)
{
    return (size_t)op < sizeof op_names / sizeof op_names[0] ? op_names[op] : "?";
}

/* A whole number in [lo, hi] (JSON integer), or the default when absent. */
static jp_err num_field(const json_t *o, const char *key, int64_t lo, int64_t hi, int64_t dflt,
                        int64_t *out, unsigned long lineno, jp_error *err)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return JP_OK;
    }
    if (!json_is_integer(v))
        return jp_error_set(err, JP_ERR_FORMAT, "line %lu: %s: must be an integer", lineno, key);
    json_int_t n = json_integer_value(v);
    if (n < lo || n > hi)
        return jp_error_set(err, JP_ERR_FORMAT, "line %lu: %s: %lld is outside %lld..%lld", lineno,
                            key, (long long)n, (long long)lo, (long long)hi);
    *out = (int64_t)n;
    return JP_OK;
}

static jp_err kinds_field(const json_t *o, probe_req *out, unsigned long lineno, jp_error *err)
{
    const json_t *v = json_object_get(o, "kinds");
    out->kinds = 1u << JP_KIND_CPU;
    if (!v || json_is_null(v))
        return JP_OK;
    if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > PROBE_MAX_KINDS)
        return jp_error_set(err, JP_ERR_FORMAT,
                            "line %lu: kinds: must be an array of 1 to %d kind names", lineno,
                            PROBE_MAX_KINDS);
    out->kinds = 0;
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *k = json_array_get(v, i);
        jp_kind kind;
        if (!json_is_string(k))
            return jp_error_set(err, JP_ERR_FORMAT, "line %lu: kinds[%zu]: must be a string",
                                lineno, i);
        if (json_string_length(k) > 32 || !jp_kind_parse(json_string_value(k), &kind))
            return jp_error_set(err, JP_ERR_FORMAT, "line %lu: kinds[%zu]: unknown kind \"%.32s\"",
                                lineno, i, json_string_value(k));
        out->kinds |= 1u << kind;
    }
    return JP_OK;
}

static jp_err parse_object(const json_t *o, unsigned long lineno, probe_req *out, jp_error *err)
{
    const json_t *op = json_object_get(o, "op");
    if (!json_is_string(op))
        return jp_error_set(err, JP_ERR_FORMAT, "line %lu: op: missing or not a string", lineno);
    size_t i;
    for (i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        if (strcmp(json_string_value(op), op_names[i]) == 0)
            break;
    if (i == sizeof op_names / sizeof op_names[0])
        return jp_error_set(err, JP_ERR_UNSUPPORTED, "line %lu: op: unknown operation \"%.40s\"",
                            lineno, json_string_value(op));
    out->op = (probe_op)i;
    const json_t *id = json_object_get(o, "id");
    if (id && !json_is_null(id)) {
        if (!json_is_string(id) || json_string_length(id) >= PROBE_ID_MAX)
            return jp_error_set(err, JP_ERR_FORMAT,
                                "line %lu: id: must be a string shorter than %d bytes", lineno,
                                PROBE_ID_MAX);
        snprintf(out->id, sizeof out->id, "%s", json_string_value(id));
    }
    int64_t n;
    jp_err rc = num_field(o, "protocol", 1, 1000, PROBE_PROTOCOL, &n, lineno, err);
    if (rc != JP_OK)
        return rc;
    if (n != PROBE_PROTOCOL)
        return jp_error_set(err, JP_ERR_UNSUPPORTED,
                            "line %lu: protocol %lld is not spoken here (this probe speaks %d)",
                            lineno, (long long)n, PROBE_PROTOCOL);
    if ((rc = kinds_field(o, out, lineno, err)) != JP_OK)
        return rc;
    if ((rc = num_field(o, "interval_ms", 1, 1000, 10, &n, lineno, err)) != JP_OK)
        return rc;
    out->interval_ns = n * JP_NS_PER_MS;
    if ((rc = num_field(o, "window_s", 1, 3600, 30, &n, lineno, err)) != JP_OK)
        return rc;
    out->window_ns = n * JP_NS_PER_SEC;
    if ((rc = num_field(o, "max_frames", 0, 100000, 0, &n, lineno, err)) != JP_OK)
        return rc;
    out->max_frames = (size_t)n;
    const json_t *all = json_object_get(o, "all");
    if (all && !json_is_null(all) && !json_is_boolean(all))
        return jp_error_set(err, JP_ERR_FORMAT, "line %lu: all: must be true or false", lineno);
    out->all = json_is_true(all);
    return JP_OK;
}

jp_err probe_req_parse(const char *line, size_t len, unsigned long lineno, probe_req *out,
                       jp_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > PROBE_LINE_MAX)
        return jp_error_set(err, JP_ERR_LIMIT, "line %lu: %zu bytes, more than %d", lineno, len,
                            PROBE_LINE_MAX);
    json_error_t je;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    if (!o)
        return jp_error_set(err, JP_ERR_FORMAT, "line %lu, column %d: %s", lineno, je.column,
                            je.text);
    jp_err rc =
        json_is_object(o)
            ? parse_object(o, lineno, out, err)
            : jp_error_set(err, JP_ERR_FORMAT, "line %lu: a request must be a JSON object", lineno);
    json_decref(o);
    return rc;
}

void probe_line_reader_init(probe_line_reader *r, int fd)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
}

/* One byte from the read-ahead buffer, refilled with read(2): 1, 0 at EOF,
 * -1 error, -2 EINTR. */
static int next_byte(probe_line_reader *r, char *c)
{
    if (r->ahead_off == r->ahead_len) {
        ssize_t n = read(r->fd, r->ahead, sizeof r->ahead);
        if (n < 0)
            return errno == EINTR ? -2 : -1;
        if (n == 0)
            return 0;
        r->ahead_off = 0;
        r->ahead_len = (size_t)n;
    }
    *c = r->ahead[r->ahead_off++];
    return 1;
}

int probe_line_read(probe_line_reader *r, const char **line, size_t *len, jp_error *err)
{
    for (;;) {
        if (r->eof)
            return 0;
        char c;
        int n = next_byte(r, &c);
        if (n == -2)
            return -2;
        if (n < 0) {
            jp_error_set(err, JP_ERR_IO, "reading requests: %s", strerror(errno));
            return -1;
        }
        if (n == 0) {
            r->eof = true;
            /* a last line without a newline still counts */
            if (r->len && !r->skipping) {
                r->lineno++;
                r->buf[r->len] = '\0';
                *line = r->buf;
                *len = r->len;
                r->len = 0;
                return 1;
            }
            return 0;
        }
        if (c == '\n') {
            r->lineno++;
            if (r->skipping) {
                r->skipping = false;
                r->len = 0;
                continue;
            }
            r->buf[r->len] = '\0';
            *line = r->buf;
            *len = r->len;
            r->len = 0;
            return 1;
        }
        if (r->skipping)
            continue;
        if (r->len == PROBE_LINE_MAX) {
            r->skipping = true;
            r->len = 0;
            jp_error_set(err, JP_ERR_LIMIT,
                         "line %lu: longer than %d bytes; skipped to the next newline",
                         r->lineno + 1, PROBE_LINE_MAX);
            return -1;
        }
        r->buf[r->len++] = c;
    }
}
