/* pprof_decode.c - pprof profiles to jprof profiles (see pprof_decode.h).
 *
 * Two passes over the Profile: the tables first (functions and locations are
 * found by their ids, which need not be indexes), then the samples, each
 * location's frames resolved once. */
#include "wire/pprof_decode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/utf8.h"
#include "base/xalloc.h"
#include "model/frame_text.h"
#include "wire/gzip.h"
#include "wire/protobuf.h"
#include "wire/sample_type.h"

/* profile.proto field numbers */
enum {
    PP_SAMPLE_TYPE = 1,
    PP_SAMPLE = 2,
    PP_LOCATION = 4,
    PP_FUNCTION = 5,
    PP_STRING_TABLE = 6,
    PP_TIME_NANOS = 9,
    PP_DURATION_NANOS = 10,
    PP_PERIOD_TYPE = 11,
    PP_PERIOD = 12,
    PP_SAMPLE_LOCATION = 1,
    PP_SAMPLE_VALUE = 2,
    PP_SAMPLE_LABEL = 3,
    PP_LABEL_KEY = 1,
    PP_LABEL_STR = 2,
    PP_LOCATION_ID = 1,
    PP_LOCATION_ADDRESS = 3,
    PP_LOCATION_LINE = 4,
    PP_LINE_FUNCTION = 1,
    PP_FUNCTION_ID = 1,
    PP_FUNCTION_NAME = 2,
    PP_FUNCTION_SYSTEM_NAME = 3,
};

enum { PP_TYPES_MAX = 16 };

typedef struct pp_span {
    uint32_t off, len;
} pp_span;

typedef struct pp_frames {
    uint32_t first, n; /* into pd->frames: root first */
    bool read;
} pp_frames;

typedef struct pp_dec {
    const uint8_t *in;
    size_t len;
    const jp_otlp_limits *lim;
    jp_profile *p;
    jp_error *err;
    pp_span *strs, *locs, *fns;
    size_t nstrs, nlocs, nfns, strs_cap, locs_cap, fns_cap;
    jp_u64map loc_of, fn_of; /* id -> index */
    pp_frames *loc_frames;   /* per location: its frames */
    uint32_t *frames;        /* profile frame indexes of the locations read */
    size_t nframes, frames_cap;
    uint32_t *stack; /* one sample's frames */
    size_t stack_cap;
    jp_strbuf scratch;
    jp_sample_type types[PP_TYPES_MAX];
    size_t ntypes;
    uint32_t count_kinds, value_kinds;
    uint64_t period[JP_KIND_COUNT];    /* in each kind's unit, 0 unknown */
    uint64_t type_str[2], unit_str[2]; /* period_type: string indexes */
    int64_t period_raw, time, duration;
    size_t nsamples, nthreads;
} pp_dec;

static jp_err pp_fail(pp_dec *d, jp_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static jp_err pp_fail(pp_dec *d, jp_err code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return jp_error_set(d->err, code, "pprof: %s", msg);
}

static jp_err pp_string(pp_dec *d, uint64_t i, const char **s, size_t *len)
{
    if (i >= d->nstrs)
        return pp_fail(d, JP_ERR_FORMAT, "string index %llu out of range (%zu strings)",
                       (unsigned long long)i, d->nstrs);
    *s = (const char *)d->in + d->strs[i].off;
    *len = d->strs[i].len;
    if (jp_utf8_first_bad((const unsigned char *)*s, *len) != *len)
        return pp_fail(d, JP_ERR_FORMAT, "string_table[%llu] is not valid UTF-8",
                       (unsigned long long)i);
    return JP_OK;
}

/* The id (field 1) of a location or function entry. */
static jp_err pp_id(pp_dec *d, const jp_pb_reader *parent, const jp_pb_field *f, uint64_t *id)
{
    jp_pb_reader r;
    jp_pb_reader_sub(&r, parent, f, f->num == PP_LOCATION ? "Location" : "Function");
    jp_pb_field g;
    bool more;
    jp_err rc;
    *id = 0;
    while (!(rc = jp_pb_next(&r, &g, &more, d->err)) && more)
        if (g.num == 1 && g.wire == JP_PB_VARINT)
            *id = g.v;
    if (!rc && !*id)
        rc = pp_fail(d, JP_ERR_FORMAT, "@%zu: a %s without an id", f->off,
                     f->num == PP_LOCATION ? "location" : "function");
    return rc;
}

static jp_err pp_add(pp_dec *d, pp_span **v, size_t *n, size_t *cap, const jp_pb_field *f,
                     const char *what)
{
    if (*n >= d->lim->max_table)
        return pp_fail(d, JP_ERR_LIMIT, "more than %zu %s", d->lim->max_table, what);
    *v = jp_xgrow(*v, cap, *n + 1, sizeof **v);
    (*v)[(*n)++] = (pp_span){(uint32_t)(f->data - d->in), (uint32_t)f->len};
    return JP_OK;
}

/* A ValueType's two string indexes. */
static jp_err pp_value_type(pp_dec *d, const jp_pb_reader *parent, const jp_pb_field *f,
                            uint64_t out[2])
{
    jp_pb_reader r;
    jp_pb_reader_sub(&r, parent, f, "ValueType");
    jp_pb_field g;
    bool more;
    jp_err rc;
    out[0] = out[1] = 0;
    while (!(rc = jp_pb_next(&r, &g, &more, d->err)) && more)
        if ((g.num == 1 || g.num == 2) && g.wire == JP_PB_VARINT)
            out[g.num - 1] = g.v;
    return rc;
}

/* Pass 1: the tables, the sample types, the period and the time. */
static jp_err pp_tables(pp_dec *d, uint64_t types[PP_TYPES_MAX][2])
{
    jp_pb_reader r;
    jp_pb_reader_init(&r, d->in, d->len, "Profile");
    jp_pb_field f;
    bool more;
    jp_err rc;
    uint64_t id;
    while (!(rc = jp_pb_next(&r, &f, &more, d->err)) && more) {
        bool len_field = f.num == PP_SAMPLE_TYPE || f.num == PP_LOCATION || f.num == PP_FUNCTION ||
                         f.num == PP_STRING_TABLE || f.num == PP_PERIOD_TYPE || f.num == PP_SAMPLE;
        if (len_field && f.wire != JP_PB_LEN)
            return jp_pb_wrong_wire(&r, &f, d->err);
        if (f.num == PP_SAMPLE_TYPE) {
            if (d->ntypes >= PP_TYPES_MAX)
                return pp_fail(d, JP_ERR_LIMIT, "more than %d sample types", PP_TYPES_MAX);
            rc = pp_value_type(d, &r, &f, types[d->ntypes++]);
        } else if (f.num == PP_STRING_TABLE) {
            rc = pp_add(d, &d->strs, &d->nstrs, &d->strs_cap, &f, "strings");
        } else if (f.num == PP_LOCATION && !(rc = pp_id(d, &r, &f, &id))) {
            jp_u64map_put(&d->loc_of, id, d->nlocs);
            rc = pp_add(d, &d->locs, &d->nlocs, &d->locs_cap, &f, "locations");
        } else if (f.num == PP_FUNCTION && !(rc = pp_id(d, &r, &f, &id))) {
            jp_u64map_put(&d->fn_of, id, d->nfns);
            rc = pp_add(d, &d->fns, &d->nfns, &d->fns_cap, &f, "functions");
        } else if (f.num == PP_PERIOD_TYPE) {
            uint64_t vt[2];
            rc = pp_value_type(d, &r, &f, vt);
            d->type_str[0] = vt[0];
            d->unit_str[0] = vt[1];
        } else if (f.wire == JP_PB_VARINT && f.num == PP_PERIOD) {
            d->period_raw = (int64_t)f.v;
        } else if (f.wire == JP_PB_VARINT && f.num == PP_TIME_NANOS) {
            d->time = (int64_t)f.v;
        } else if (f.wire == JP_PB_VARINT && f.num == PP_DURATION_NANOS) {
            d->duration = (int64_t)f.v;
        }
        if (rc)
            return rc;
    }
    return rc;
}

/* The sample types as kinds, and each kind's period in its unit. */
static jp_err pp_types(pp_dec *d, uint64_t types[PP_TYPES_MAX][2])
{
    const char *t = "", *u = "";
    size_t tl = 0, ul = 0;
    jp_err rc = JP_OK;
    if (!d->ntypes)
        return pp_fail(d, JP_ERR_FORMAT, "no sample type");
    int generic = -1, other = -1; /* ("samples", "count"), and the one other kind */
    for (size_t i = 0; i < d->ntypes && !rc; i++) {
        if ((rc = pp_string(d, types[i][0], &t, &tl)) || (rc = pp_string(d, types[i][1], &u, &ul)))
            return rc;
        if ((rc = jp_sample_type_map(t, tl, u, ul, &d->types[i], d->err))) {
            jp_error_prefix(d->err, "pprof: ");
            return rc;
        }
        if (tl == 7 && !memcmp(t, "samples", 7))
            generic = (int)i;
        else
            other = other == -1 || other == (int)d->types[i].kind ? (int)d->types[i].kind : -2;
    }
    /* Go and jprof write ("samples", "count") beside the kind it counts */
    if (generic >= 0 && other >= 0)
        d->types[generic].kind = (jp_kind)other;
    for (size_t i = 0; i < d->ntypes; i++) {
        uint32_t bit = 1u << d->types[i].kind;
        if (d->types[i].is_count)
            d->count_kinds |= bit;
        else
            d->value_kinds |= bit;
    }
    if (d->period_raw <= 0 || d->unit_str[0] >= d->nstrs)
        return JP_OK;
    if ((rc = pp_string(d, d->unit_str[0], &u, &ul)))
        return rc;
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        uint64_t scale;
        if (jp_sample_unit_of_kind(u, ul, (jp_kind)k, &scale) &&
            (uint64_t)d->period_raw <= UINT64_MAX / scale)
            d->period[k] = (uint64_t)d->period_raw * scale;
    }
    return JP_OK;
}

/* A function's printed name and the kind its suffix names. */
static jp_err pp_function(pp_dec *d, uint64_t id, uint32_t *frame)
{
    uint64_t i;
    if (!jp_u64map_get(&d->fn_of, id, &i))
        return pp_fail(d, JP_ERR_FORMAT, "no function with id %llu", (unsigned long long)id);
    jp_pb_reader r;
    jp_pb_reader_init(&r, d->in + d->fns[i].off, d->fns[i].len, "Function");
    r.base = d->fns[i].off;
    jp_pb_field f;
    bool more;
    jp_err rc;
    uint64_t name = 0, sys = 0;
    while (!(rc = jp_pb_next(&r, &f, &more, d->err)) && more)
        if (f.wire == JP_PB_VARINT && f.num == PP_FUNCTION_NAME)
            name = f.v;
        else if (f.wire == JP_PB_VARINT && f.num == PP_FUNCTION_SYSTEM_NAME)
            sys = f.v;
    const char *s = "";
    size_t len = 0;
    if (!rc && name)
        rc = pp_string(d, name, &s, &len);
    if (!rc && !len && sys)
        rc = pp_string(d, sys, &s, &len);
    if (rc)
        return rc;
    if (len > d->lim->batch.max_string)
        return pp_fail(d, JP_ERR_LIMIT, "a function name of %zu bytes is longer than %zu", len,
                       d->lim->batch.max_string);
    jp_frame_kind kind = jp_frame_text_normalize(s, len, &d->scratch);
    *frame = jp_profile_frame(d->p, d->scratch.data, d->scratch.len, kind);
    return JP_OK;
}

/* Location id's frames, root first (its lines are callee first), read once. */
static jp_err pp_location(pp_dec *d, uint64_t id, const pp_frames **out)
{
    uint64_t i;
    if (!jp_u64map_get(&d->loc_of, id, &i))
        return pp_fail(d, JP_ERR_FORMAT, "no location with id %llu", (unsigned long long)id);
    pp_frames *lf = &d->loc_frames[i];
    if (!lf->read) {
        jp_pb_reader r, sub;
        jp_pb_reader_init(&r, d->in + d->locs[i].off, d->locs[i].len, "Location");
        r.base = d->locs[i].off;
        jp_pb_field f, g;
        bool more, more2;
        jp_err rc;
        lf->first = (uint32_t)d->nframes;
        uint64_t addr = 0;
        while (!(rc = jp_pb_next(&r, &f, &more, d->err)) && more) {
            if (f.num == PP_LOCATION_ADDRESS && f.wire == JP_PB_VARINT)
                addr = f.v;
            if (f.num != PP_LOCATION_LINE || f.wire != JP_PB_LEN)
                continue;
            uint64_t fn = 0;
            jp_pb_reader_sub(&sub, &r, &f, "Line");
            while (!(rc = jp_pb_next(&sub, &g, &more2, d->err)) && more2)
                if (g.num == PP_LINE_FUNCTION && g.wire == JP_PB_VARINT)
                    fn = g.v;
            if (rc)
                return rc;
            if (d->nframes >= d->lim->max_table)
                return pp_fail(d, JP_ERR_LIMIT, "the locations used have more than %zu lines",
                               d->lim->max_table);
            d->frames = jp_xgrow(d->frames, &d->frames_cap, d->nframes + 1, sizeof *d->frames);
            if ((rc = pp_function(d, fn, &d->frames[d->nframes])))
                return rc;
            d->nframes++;
        }
        if (rc)
            return rc;
        if (d->nframes == lf->first) { /* no lines: the address names it */
            char a[24];
            int n = snprintf(a, sizeof a, "0x%llx", (unsigned long long)addr);
            d->frames = jp_xgrow(d->frames, &d->frames_cap, d->nframes + 1, sizeof *d->frames);
            d->frames[d->nframes++] = jp_profile_frame(d->p, a, (size_t)n, JP_FRAME_UNKNOWN);
        }
        lf->n = (uint32_t)(d->nframes - lf->first);
        for (uint32_t a = 0, b = lf->n; b > a + 1; a++, b--) { /* the caller first */
            uint32_t t = d->frames[lf->first + a];
            d->frames[lf->first + a] = d->frames[lf->first + b - 1];
            d->frames[lf->first + b - 1] = t;
        }
        lf->read = true;
    }
    *out = lf;
    return JP_OK;
}

typedef struct pp_sample {
    uint64_t *locs; /* location ids, leaf first */
    size_t nlocs, locs_cap;
    uint64_t vals[PP_TYPES_MAX];
    size_t nvals;
    const char *thread;
    size_t thread_len;
} pp_sample;

/* A Label: the sample's thread when its key names one. */
static jp_err pp_label(pp_dec *d, const jp_pb_reader *parent, const jp_pb_field *f, pp_sample *s)
{
    jp_pb_reader r;
    jp_pb_reader_sub(&r, parent, f, "Label");
    jp_pb_field g;
    bool more;
    uint64_t key = 0, str = 0;
    jp_err rc;
    while (!(rc = jp_pb_next(&r, &g, &more, d->err)) && more)
        if (g.wire == JP_PB_VARINT && g.num == PP_LABEL_KEY)
            key = g.v;
        else if (g.wire == JP_PB_VARINT && g.num == PP_LABEL_STR)
            str = g.v;
    const char *k = "";
    size_t kl = 0;
    if (rc || !key || !str || (rc = pp_string(d, key, &k, &kl)))
        return rc;
    if ((kl == 6 && !memcmp(k, "thread", 6)) || (kl == 11 && !memcmp(k, "thread_name", 11)) ||
        (kl == 11 && !memcmp(k, "thread.name", 11)))
        rc = pp_string(d, str, &s->thread, &s->thread_len);
    return rc;
}

static jp_err pp_sample_read(pp_dec *d, const jp_pb_reader *parent, const jp_pb_field *sf,
                             pp_sample *s)
{
    jp_pb_reader r;
    jp_pb_reader_sub(&r, parent, sf, "Sample");
    jp_pb_field f;
    bool more, more2;
    jp_err rc;
    s->nlocs = s->nvals = 0;
    s->thread = NULL;
    while (!(rc = jp_pb_next(&r, &f, &more, d->err)) && more) {
        jp_pb_values it;
        uint64_t v;
        if (f.num == PP_SAMPLE_LABEL && f.wire == JP_PB_LEN) {
            rc = pp_label(d, &r, &f, s);
        } else if (f.num == PP_SAMPLE_LOCATION || f.num == PP_SAMPLE_VALUE) {
            rc = jp_pb_values_init(&it, &r, &f, 0, d->err);
            while (!rc && !(rc = jp_pb_values_next(&it, &v, &more2, d->err)) && more2) {
                if (f.num == PP_SAMPLE_VALUE && (s->nvals >= d->ntypes || (int64_t)v < 0))
                    return pp_fail(d, JP_ERR_FORMAT,
                                   "sample @%zu: more values than sample types, or a negative one",
                                   sf->off);
                if (f.num == PP_SAMPLE_VALUE) {
                    s->vals[s->nvals++] = v;
                    continue;
                }
                if (s->nlocs >= d->lim->batch.max_depth)
                    return pp_fail(d, JP_ERR_LIMIT, "a sample has more than %zu locations",
                                   d->lim->batch.max_depth);
                s->locs = jp_xgrow(s->locs, &s->locs_cap, s->nlocs + 1, sizeof *s->locs);
                s->locs[s->nlocs++] = v;
            }
        }
        if (rc)
            return rc;
    }
    if (!rc && s->nvals != d->ntypes)
        rc = pp_fail(d, JP_ERR_FORMAT, "sample @%zu has %zu values for %zu sample types", sf->off,
                     s->nvals, d->ntypes);
    return rc;
}

/* The sample's stack in the profile, root first. */
static jp_err pp_stack(pp_dec *d, const pp_sample *s, uint32_t *out)
{
    size_t depth = 0;
    for (size_t i = s->nlocs; i-- > 0;) {
        const pp_frames *lf = NULL;
        jp_err rc = pp_location(d, s->locs[i], &lf);
        if (rc)
            return rc;
        if (depth + lf->n > d->lim->batch.max_depth)
            return pp_fail(d, JP_ERR_LIMIT, "a stack has more than %zu frames",
                           d->lim->batch.max_depth);
        d->stack = jp_xgrow(d->stack, &d->stack_cap, depth + lf->n + 1, sizeof *d->stack);
        if (lf->n)
            memcpy(d->stack + depth, d->frames + lf->first, lf->n * sizeof *d->stack);
        depth += lf->n;
    }
    if (!depth) {
        d->stack = jp_xgrow(d->stack, &d->stack_cap, 1, sizeof *d->stack);
        d->stack[depth++] = jp_profile_frame(d->p, "[no stack]", 10, JP_FRAME_UNKNOWN);
    }
    *out = jp_profile_stack(d->p, d->stack, depth, false);
    return JP_OK;
}

/* Adds a sample's values, kind by kind (see pprof_decode.h for the shapes). */
static jp_err pp_sample_add(pp_dec *d, const pp_sample *s)
{
    uint64_t cnt[JP_KIND_COUNT] = {0}, val[JP_KIND_COUNT] = {0};
    for (size_t i = 0; i < d->ntypes; i++) {
        const jp_sample_type *st = &d->types[i];
        uint64_t v = s->vals[i];
        uint64_t *acc = st->is_count ? &cnt[st->kind] : &val[st->kind];
        uint64_t add = st->is_count || v <= UINT64_MAX / st->scale
                           ? v * (st->is_count ? 1 : st->scale)
                           : UINT64_MAX;
        *acc = *acc > UINT64_MAX - add ? UINT64_MAX : *acc + add;
    }
    uint32_t stack = 0, thread = JP_NO_THREAD;
    bool resolved = false;
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        uint32_t bit = 1u << k;
        if (!((d->count_kinds | d->value_kinds) & bit))
            continue;
        uint64_t per = d->period[k];
        uint64_t samples = d->count_kinds & bit ? cnt[k] : !val[k] ? 0 : per ? val[k] / per : 1;
        uint64_t value = d->value_kinds & bit                ? val[k]
                         : per && cnt[k] <= UINT64_MAX / per ? cnt[k] * per
                                                             : 0;
        if (!(d->count_kinds & bit) && val[k] && !samples)
            samples = 1;
        if (!samples && !value)
            continue;
        if (!resolved) {
            jp_err rc = pp_stack(d, s, &stack);
            if (rc)
                return rc;
            if (s->thread) {
                if (s->thread_len > d->lim->batch.max_string)
                    return pp_fail(d, JP_ERR_LIMIT, "a thread name is longer than %zu bytes",
                                   d->lim->batch.max_string);
                thread = jp_profile_thread(d->p, s->thread, s->thread_len);
            }
            resolved = true;
        }
        jp_profile_add(d->p, (jp_kind)k, stack, thread, samples, samples, value);
        if (per && !jp_kind_is_bytes((jp_kind)k) && per <= INT64_MAX)
            d->p->kinds[k].period_ns = (int64_t)per;
    }
    return JP_OK;
}

/* What the profile holds against the batch limits. */
static jp_err pp_limits(pp_dec *d)
{
    const jp_batch_limits *l = &d->lim->batch;
    size_t rows = 0;
    for (int k = 0; k < JP_KIND_COUNT; k++)
        rows += d->p->kinds[k].count;
    if (d->p->nframes > l->max_frames + l->max_threads)
        return pp_fail(d, JP_ERR_LIMIT, "more than %zu distinct frames and threads",
                       l->max_frames + l->max_threads);
    if (d->p->nstacks > l->max_stacks)
        return pp_fail(d, JP_ERR_LIMIT, "more than %zu distinct stacks", l->max_stacks);
    if (rows > l->max_rows)
        return pp_fail(d, JP_ERR_LIMIT, "more than %zu rows (stack, thread and kind)", l->max_rows);
    return JP_OK;
}

/* Pass 2: the samples. */
static jp_err pp_samples(pp_dec *d)
{
    jp_pb_reader r;
    jp_pb_reader_init(&r, d->in, d->len, "Profile");
    jp_pb_field f;
    bool more;
    jp_err rc;
    pp_sample s;
    memset(&s, 0, sizeof s);
    while (!(rc = jp_pb_next(&r, &f, &more, d->err)) && more) {
        if (f.num != PP_SAMPLE)
            continue;
        if (++d->nsamples > d->lim->max_samples)
            rc = pp_fail(d, JP_ERR_LIMIT, "more than %zu samples", d->lim->max_samples);
        if (!rc)
            rc = pp_sample_read(d, &r, &f, &s);
        if (!rc)
            rc = pp_sample_add(d, &s);
        if (!rc)
            rc = pp_limits(d);
        if (rc)
            break;
    }
    free(s.locs);
    return rc;
}

jp_err jp_pprof_decode(const uint8_t *data, size_t len, const jp_otlp_limits *lim,
                       size_t max_decompressed, jp_profile *p, jp_error *err)
{
    uint8_t *plain = NULL;
    if (jp_gzip_is(data, len)) {
        size_t n;
        jp_err rc = jp_gzip_decompress(data, len, max_decompressed, &plain, &n, err);
        if (rc) {
            jp_error_prefix(err, "pprof: ");
            return rc;
        }
        data = plain;
        len = n;
    }
    if (len > UINT32_MAX) {
        free(plain);
        return jp_error_set(err, JP_ERR_LIMIT, "pprof: a profile of %zu bytes is over 4 GiB", len);
    }
    pp_dec d;
    memset(&d, 0, sizeof d);
    d.in = data ? data : (const uint8_t *)"";
    d.len = len;
    d.lim = lim;
    d.p = p;
    d.err = err;
    jp_u64map_init(&d.loc_of);
    jp_u64map_init(&d.fn_of);
    jp_strbuf_init(&d.scratch, 0);
    uint64_t types[PP_TYPES_MAX][2] = {{0}};
    jp_err rc = pp_tables(&d, types);
    if (!rc)
        rc = pp_types(&d, types);
    if (!rc) {
        d.loc_frames = jp_xcalloc(d.nlocs + 1, sizeof *d.loc_frames);
        rc = pp_samples(&d);
    }
    if (!rc && d.time > 0 && d.duration >= 0 && d.time < INT64_MAX / 2 &&
        d.duration < INT64_MAX / 2) {
        p->start_ns = d.time;
        p->end_ns = d.time + d.duration;
    }
    free(d.strs);
    free(d.locs);
    free(d.fns);
    free(d.loc_frames);
    free(d.frames);
    free(d.stack);
    jp_u64map_cleanup(&d.loc_of);
    jp_u64map_cleanup(&d.fn_of);
    jp_strbuf_cleanup(&d.scratch);
    free(plain);
    return rc;
}
