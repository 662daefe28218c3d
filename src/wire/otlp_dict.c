/* otlp_dict.c - the OTLP decoder's dictionary lookups (see otlp_dict.h). */
#include "wire/otlp_dict.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/xalloc.h"
#include "model/frame_text.h"
#include "wire/otlp_proto.h"

static const char *const ot_table_name[T_COUNT] = {"mapping_table",   "location_table",
                                                   "function_table",  "string_table",
                                                   "attribute_table", "stack_table"};

jp_err ot_fail(ot_dec *d, jp_err code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return jp_error_set(d->err, code, "OTLP profiles: %s", msg);
}

/* A reader over entry i of table t. */
void ot_entry(const ot_dec *d, int t, size_t i, jp_pb_reader *r)
{
    const ot_span *s = &d->t[t].v[i];
    jp_pb_reader_init(r, d->in + s->off, s->len, ot_table_name[t]);
    r->base = s->off;
}

/* An index into table t, checked. */
jp_err ot_index(ot_dec *d, int t, uint64_t i, const char *where)
{
    if (i < d->t[t].n)
        return JP_OK;
    return ot_fail(d, JP_ERR_FORMAT, "%s: index %" PRIu64 " into %s is out of range (%zu entries)",
                   where, i, ot_table_name[t], d->t[t].n);
}

/* string_table[i], checked for range and UTF-8. */
jp_err ot_string(ot_dec *d, uint64_t i, ot_str *s, const char *where)
{
    jp_err rc = ot_index(d, T_STRING, i, where);
    if (rc)
        return rc;
    const ot_span *sp = &d->t[T_STRING].v[i];
    s->s = (const char *)d->in + sp->off;
    s->len = sp->len;
    if (d->str_ok[i])
        return JP_OK;
    if (jp_utf8_first_bad((const unsigned char *)s->s, s->len) != s->len)
        return ot_fail(d, JP_ERR_FORMAT, "string_table[%" PRIu64 "] is not valid UTF-8", i);
    d->str_ok[i] = 1;
    return JP_OK;
}

/* ---- pass 1: the dictionary ---- */

static jp_err ot_table_add(ot_dec *d, int t, const jp_pb_field *f)
{
    ot_table *tb = &d->t[t];
    if (tb->n >= d->lim->max_table)
        return ot_fail(d, JP_ERR_LIMIT, "%s has more than %zu entries", ot_table_name[t],
                       d->lim->max_table);
    tb->v = jp_xgrow(tb->v, &tb->cap, tb->n + 1, sizeof *tb->v);
    tb->v[tb->n++] = (ot_span){(uint32_t)(f->data - d->in), (uint32_t)f->len};
    return JP_OK;
}

static jp_err ot_dictionary(ot_dec *d, jp_pb_reader *r)
{
    static const int table_of[8] = {-1,       T_MAPPING,   T_LOCATION, T_FUNCTION, -1 /* links */,
                                    T_STRING, T_ATTRIBUTE, T_STACK};
    jp_pb_field f;
    bool more;
    jp_err rc;
    while (!(rc = jp_pb_next(r, &f, &more, d->err)) && more) {
        if (f.num >= 8 || table_of[f.num] < 0)
            continue;
        if (f.wire != JP_PB_LEN)
            return jp_pb_wrong_wire(r, &f, d->err);
        if ((rc = ot_table_add(d, table_of[f.num], &f)))
            return rc;
    }
    return rc;
}

/* Reads every dictionary field of the message (they merge, as protobuf
 * merges a repeated embedded message), then sizes the caches. */
jp_err ot_pass_dictionary(ot_dec *d)
{
    jp_pb_reader r, sub;
    jp_pb_reader_init(&r, d->in, d->len, "ProfilesData");
    jp_pb_field f;
    bool more;
    jp_err rc;
    while (!(rc = jp_pb_next(&r, &f, &more, d->err)) && more) {
        if (f.num != OTLP_DATA_DICTIONARY)
            continue;
        if (f.wire != JP_PB_LEN)
            return jp_pb_wrong_wire(&r, &f, d->err);
        jp_pb_reader_sub(&sub, &r, &f, "ProfilesDictionary");
        if ((rc = ot_dictionary(d, &sub)))
            return rc;
    }
    if (rc)
        return rc;
    d->str_ok = jp_xcalloc(d->t[T_STRING].n + 1, 1);
    d->attrs = jp_xcalloc(d->t[T_ATTRIBUTE].n + 1, sizeof *d->attrs);
    d->fn = jp_xcalloc(d->t[T_FUNCTION].n + 1, sizeof *d->fn);
    d->fn_read = jp_xcalloc(d->t[T_FUNCTION].n + 1, 1);
    d->locs = jp_xcalloc(d->t[T_LOCATION].n + 1, sizeof *d->locs);
    return JP_OK;
}

/* ---- attributes ---- */

static uint8_t ot_slot_of(const char *k, size_t n)
{
    static const struct {
        const char *key;
        uint8_t slot;
    } keys[] = {
        {"k8s.namespace.name", ID_NS},
        {"service.name", ID_SERVICE},
        {"k8s.pod.name", ID_POD},
        {"k8s.container.name", ID_CONTAINER},
        {"container.name", ID_CONTAINER},
        {"k8s.node.name", ID_NODE},
        {"host.name", ID_HOST},
        {"k8s.cluster.name", ID_CLUSTER},
        {"k8s.deployment.name", ID_WORKLOAD},
        {"k8s.statefulset.name", ID_WORKLOAD},
        {"k8s.daemonset.name", ID_WORKLOAD},
        {"k8s.job.name", ID_WORKLOAD},
        {"k8s.cronjob.name", ID_WORKLOAD},
        {"k8s.replicaset.name", ID_WORKLOAD},
        {"process.runtime.name", ID_RT_NAME},
        {"process.runtime.version", ID_RT_VERSION},
        {"process.pid", ID_PID},
        {OTLP_THREAD_NAME, ID_THREAD},
        {OTLP_FRAME_TYPE, ID_FRAME_TYPE},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i].key) == n && !memcmp(keys[i].key, k, n))
            return keys[i].slot;
    return ID_NONE;
}

jp_err ot_utf8(ot_dec *d, const jp_pb_field *f, const char *where)
{
    if (jp_utf8_first_bad(f->data, f->len) == f->len)
        return JP_OK;
    return ot_fail(d, JP_ERR_FORMAT, "%s @%zu: string is not valid UTF-8", where, f->off);
}

/* An AnyValue: a string (inline or from the string table) or an integer;
 * other types leave a->val unset (the attribute is ignored). */
static jp_err ot_any_value(ot_dec *d, jp_pb_reader *r, ot_attr *a)
{
    jp_pb_field f;
    bool more;
    jp_err rc;
    while (!(rc = jp_pb_next(r, &f, &more, d->err)) && more) {
        if (f.num == OTLP_ANY_STRING && f.wire == JP_PB_LEN) {
            if ((rc = ot_utf8(d, &f, "AnyValue")))
                return rc;
            a->val = (ot_str){(const char *)f.data, (uint32_t)f.len};
        } else if (f.num == OTLP_ANY_STRING_STRINDEX && f.wire == JP_PB_VARINT) {
            if ((rc = ot_string(d, f.v, &a->val, "AnyValue")))
                return rc;
        } else if (f.num == OTLP_ANY_INT && f.wire == JP_PB_VARINT) {
            snprintf(a->num, sizeof a->num, "%" PRId64, (int64_t)f.v);
            a->val = (ot_str){a->num, (uint32_t)strlen(a->num)};
        }
    }
    return rc;
}

/* A KeyValue (Resource.attributes: key inline or by index) or a
 * KeyValueAndUnit (attribute_table: key by index); `kvu` tells which. */
jp_err ot_key_value(ot_dec *d, jp_pb_reader *r, bool kvu, ot_attr *a)
{
    jp_pb_field f;
    bool more;
    jp_err rc;
    jp_pb_reader sub;
    a->slot = ID_NONE;
    a->val.s = NULL;
    while (!(rc = jp_pb_next(r, &f, &more, d->err)) && more) {
        ot_str key = {NULL, 0};
        if (!kvu && f.num == OTLP_KV_KEY && f.wire == JP_PB_LEN) {
            key = (ot_str){(const char *)f.data, (uint32_t)f.len};
        } else if (f.wire == JP_PB_VARINT &&
                   ((kvu && f.num == OTLP_KVU_KEY) || (!kvu && f.num == OTLP_KV_KEY_STRINDEX))) {
            if ((rc = ot_string(d, f.v, &key, "attribute key")))
                return rc;
        } else if (f.num == OTLP_KV_VALUE && f.wire == JP_PB_LEN) {
            jp_pb_reader_sub(&sub, r, &f, "AnyValue");
            if ((rc = ot_any_value(d, &sub, a)))
                return rc;
        }
        if (key.s)
            a->slot = ot_slot_of(key.s, key.len);
    }
    a->read = 1;
    return rc;
}

/* attribute_table[i], read once. */
static jp_err ot_attr_get(ot_dec *d, uint64_t i, const ot_attr **out)
{
    jp_err rc = ot_index(d, T_ATTRIBUTE, i, "attribute_indices");
    if (rc)
        return rc;
    ot_attr *a = &d->attrs[i];
    if (!a->read) {
        jp_pb_reader r;
        ot_entry(d, T_ATTRIBUTE, (size_t)i, &r);
        if ((rc = ot_key_value(d, &r, true, a)))
            return rc;
    }
    *out = a;
    return JP_OK;
}

/* Applies the attribute_indices field f (packed or not) to id. */
jp_err ot_apply_attrs(ot_dec *d, const jp_pb_reader *r, const jp_pb_field *f, ot_ident *id)
{
    jp_pb_values it;
    jp_err rc = jp_pb_values_init(&it, r, f, 0, d->err);
    uint64_t v;
    bool more;
    while (!rc && !(rc = jp_pb_values_next(&it, &v, &more, d->err)) && more) {
        const ot_attr *a;
        if ((rc = ot_attr_get(d, v, &a)))
            return rc;
        if (a->slot < ID_COUNT && a->val.s)
            id->v[a->slot] = a->val;
    }
    return rc;
}

/* ---- frames ---- */

/* Appends a printed name to the arena. */
static jp_err ot_name_put(ot_dec *d, const char *s, size_t len, ot_name *out)
{
    if (len > d->lim->batch.max_string)
        return ot_fail(d, JP_ERR_LIMIT, "a frame name of %zu bytes is longer than %zu bytes", len,
                       d->lim->batch.max_string);
    if (d->names.len > UINT32_MAX - len)
        return ot_fail(d, JP_ERR_LIMIT, "frame names exceed 4 GiB");
    out->off = (uint32_t)d->names.len;
    out->len = (uint32_t)len;
    out->kind = JP_FRAME_UNKNOWN;
    jp_strbuf_append(&d->names, s, len);
    return JP_OK;
}

/* function_table[i]'s printed name, read once. */
static jp_err ot_function(ot_dec *d, uint64_t i, ot_name *out)
{
    jp_err rc = ot_index(d, T_FUNCTION, i, "Line.function_index");
    if (rc)
        return rc;
    if (!d->fn_read[i]) {
        jp_pb_reader r;
        ot_entry(d, T_FUNCTION, (size_t)i, &r);
        ot_str name = {"", 0}, sys = {"", 0};
        jp_pb_field f;
        bool more;
        while (!(rc = jp_pb_next(&r, &f, &more, d->err)) && more) {
            if (f.wire != JP_PB_VARINT)
                continue;
            if (f.num == OTLP_FUNCTION_NAME)
                rc = ot_string(d, f.v, &name, "Function.name_strindex");
            else if (f.num == OTLP_FUNCTION_SYSTEM_NAME)
                rc = ot_string(d, f.v, &sys, "Function.system_name_strindex");
            if (rc)
                return rc;
        }
        if (rc)
            return rc;
        const ot_str *use = name.len ? &name : &sys;
        jp_frame_kind kind = jp_frame_text_normalize(use->s, use->len, &d->scratch);
        if ((rc = ot_name_put(d, d->scratch.data, d->scratch.len, &d->fn[i])))
            return rc;
        d->fn[i].kind = (uint8_t)kind;
        d->fn_read[i] = 1;
    }
    *out = d->fn[i];
    return JP_OK;
}

static uint8_t ot_frame_kind(const ot_str *v)
{
    if (v->len == 3 && !memcmp(v->s, "jvm", 3))
        return JP_FRAME_JIT;
    if (v->len == 6 && !memcmp(v->s, "kernel", 6))
        return JP_FRAME_KERNEL;
    if (v->len == 6 && !memcmp(v->s, "native", 6))
        return JP_FRAME_NATIVE;
    return JP_FRAME_UNKNOWN;
}

/* The name of a location without lines: MAPPING+0xADDR or 0xADDR. */
static jp_err ot_address_name(ot_dec *d, uint64_t mapping, uint64_t addr, ot_name *out)
{
    ot_str file = {"", 0};
    jp_err rc = JP_OK;
    if (mapping) {
        if ((rc = ot_index(d, T_MAPPING, mapping, "Location.mapping_index")))
            return rc;
        jp_pb_reader r;
        ot_entry(d, T_MAPPING, (size_t)mapping, &r);
        jp_pb_field f;
        bool more;
        while (!(rc = jp_pb_next(&r, &f, &more, d->err)) && more)
            if (f.num == OTLP_MAPPING_FILENAME && f.wire == JP_PB_VARINT &&
                (rc = ot_string(d, f.v, &file, "Mapping.filename_strindex")))
                return rc;
        if (rc)
            return rc;
    }
    const char *base = file.len ? memrchr(file.s, '/', file.len) : NULL;
    base = base ? base + 1 : file.s;
    int n = (int)(file.len - (uint32_t)(base - file.s));
    jp_strbuf_reset(&d->scratch);
    jp_strbuf_printf(&d->scratch, "%.*s%s0x%" PRIx64, n, base, n ? "+" : "", addr);
    return ot_name_put(d, d->scratch.data, d->scratch.len, out);
}

/* Reads location i's fields: its lines' functions (in d->lines, as the
 * message lists them: callee first), mapping, address and frame type. */
static jp_err ot_location_fields(ot_dec *d, uint64_t i, size_t *nlines, uint64_t *mapping,
                                 uint64_t *addr, uint8_t *kind)
{
    jp_pb_reader r, sub;
    ot_entry(d, T_LOCATION, (size_t)i, &r);
    jp_pb_field f, g;
    bool more, more2;
    jp_err rc;
    while (!(rc = jp_pb_next(&r, &f, &more, d->err)) && more) {
        if (f.num == OTLP_LOCATION_MAPPING && f.wire == JP_PB_VARINT) {
            *mapping = f.v;
        } else if (f.num == OTLP_LOCATION_ADDRESS && f.wire == JP_PB_VARINT) {
            *addr = f.v;
        } else if (f.num == OTLP_LOCATION_LINES && f.wire == JP_PB_LEN) {
            uint64_t fn = 0;
            jp_pb_reader_sub(&sub, &r, &f, "Line");
            while (!(rc = jp_pb_next(&sub, &g, &more2, d->err)) && more2)
                if (g.num == OTLP_LINE_FUNCTION && g.wire == JP_PB_VARINT)
                    fn = g.v;
            if (rc)
                return rc;
            if (*nlines >= d->lim->batch.max_depth)
                return ot_fail(d, JP_ERR_LIMIT, "location %" PRIu64 " has more than %zu lines", i,
                               d->lim->batch.max_depth);
            d->lines = jp_xgrow(d->lines, &d->lines_cap, *nlines + 1, sizeof *d->lines);
            d->lines[(*nlines)++] = fn;
        } else if (f.num == OTLP_LOCATION_ATTRIBUTES) {
            jp_pb_values it;
            uint64_t v;
            if ((rc = jp_pb_values_init(&it, &r, &f, 0, d->err)))
                return rc;
            while (!(rc = jp_pb_values_next(&it, &v, &more2, d->err)) && more2) {
                const ot_attr *a;
                if ((rc = ot_attr_get(d, v, &a)))
                    return rc;
                if (a->slot == ID_FRAME_TYPE && a->val.s)
                    *kind = ot_frame_kind(&a->val);
            }
            if (rc)
                return rc;
        }
    }
    return rc;
}

/* location_table[i]'s frames (root first), read once. */
jp_err ot_location(ot_dec *d, uint64_t i, const ot_loc **out)
{
    jp_err rc = ot_index(d, T_LOCATION, i, "Stack.location_indices");
    if (rc)
        return rc;
    ot_loc *l = &d->locs[i];
    if (!l->read) {
        size_t nlines = 0;
        uint64_t mapping = 0, addr = 0;
        uint8_t kind = JP_FRAME_UNKNOWN;
        if ((rc = ot_location_fields(d, i, &nlines, &mapping, &addr, &kind)))
            return rc;
        size_t n = nlines ? nlines : 1;
        if (d->nlnames + n > d->lim->max_table)
            return ot_fail(d, JP_ERR_LIMIT, "the locations used have more than %zu frames",
                           d->lim->max_table);
        d->lnames = jp_xgrow(d->lnames, &d->lnames_cap, d->nlnames + n, sizeof *d->lnames);
        d->pframes = jp_xgrow(d->pframes, &d->pframes_cap, d->nlnames + n, sizeof *d->pframes);
        if (!nlines)
            rc = ot_address_name(d, mapping, addr, &d->lnames[d->nlnames]);
        for (size_t k = 0; k < nlines && !rc; k++) /* the caller (last line) first */
            rc = ot_function(d, d->lines[nlines - 1 - k], &d->lnames[d->nlnames + k]);
        if (rc)
            return rc;
        l->first = (uint32_t)d->nlnames;
        l->n = (uint32_t)n;
        l->kind = kind;
        d->nlnames += n;
        l->read = 1;
    }
    *out = l;
    return JP_OK;
}

void ot_dict_cleanup(ot_dec *d)
{
    for (int t = 0; t < T_COUNT; t++)
        free(d->t[t].v);
    free(d->str_ok);
    free(d->attrs);
    free(d->fn);
    free(d->fn_read);
    free(d->locs);
    free(d->lnames);
    free(d->pframes);
    free(d->lines);
    jp_strbuf_cleanup(&d->names);
}
