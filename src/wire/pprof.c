/* pprof.c - the pprof Profile protobuf writer (see pprof.h). */
#include "wire/pprof.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "wire/gzip.h"
#include "wire/protobuf.h"

/* Field numbers of profile.proto. */
enum {
    PB_PROFILE_SAMPLE_TYPE = 1,
    PB_PROFILE_SAMPLE = 2,
    PB_PROFILE_LOCATION = 4,
    PB_PROFILE_FUNCTION = 5,
    PB_PROFILE_STRING_TABLE = 6,
    PB_PROFILE_TIME_NANOS = 9,
    PB_PROFILE_DURATION_NANOS = 10,
    PB_PROFILE_PERIOD_TYPE = 11,
    PB_PROFILE_PERIOD = 12,
    PB_PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    PB_VALUE_TYPE_TYPE = 1,
    PB_VALUE_TYPE_UNIT = 2,
    PB_SAMPLE_LOCATION_ID = 1,
    PB_SAMPLE_VALUE = 2,
    PB_SAMPLE_LABEL = 3,
    PB_LABEL_KEY = 1,
    PB_LABEL_STR = 2,
    PB_LOCATION_ID = 1,
    PB_LOCATION_LINE = 4,
    PB_LINE_FUNCTION_ID = 1,
    PB_FUNCTION_ID = 1,
    PB_FUNCTION_NAME = 2,
    PB_FUNCTION_SYSTEM_NAME = 3,
};

/* The fixed head of the string table (index 0 must be ""). */
enum { S_EMPTY, S_SAMPLES, S_COUNT, S_KIND, S_UNIT, S_THREAD, S_FIRST_FREE };

typedef struct pp_state {
    const jp_profile *p;
    const jp_kind_table *t;
    bool threads;
    uint32_t *str_of; /* per profile frame: its string index, 0 = not used */
    uint32_t nstrings;
    jp_strbuf out, msg, sub;
} pp_state;

/* Gives every frame (and, with threads, thread name) the cells use a string. */
static void mark_used(pp_state *s)
{
    for (size_t i = 0; i < s->t->count; i++) {
        const jp_sample *c = &s->t->cells[i];
        const uint32_t *fr = jp_profile_stack_frames(s->p, c->stack);
        for (uint32_t d = 0; d < s->p->stacks[c->stack].depth; d++)
            if (!s->str_of[fr[d]])
                s->str_of[fr[d]] = s->nstrings++;
        if (s->threads && c->thread != JP_NO_THREAD && !s->str_of[c->thread])
            s->str_of[c->thread] = s->nstrings++;
    }
}

static jp_err write_sample(pp_state *s, const jp_sample *c)
{
    const uint32_t *fr = jp_profile_stack_frames(s->p, c->stack);
    uint32_t depth = s->p->stacks[c->stack].depth;
    jp_err rc = JP_OK;
    for (uint32_t d = depth; d-- > 0 && !rc;) /* leaf first */
        rc = jp_strbuf_put_varint(&s->sub, (uint64_t)fr[d] + 1);
    if (!rc)
        rc = jp_pb_put_message(&s->msg, PB_SAMPLE_LOCATION_ID, &s->sub);
    if (!rc)
        rc = jp_strbuf_put_varint(&s->sub, c->samples);
    if (!rc)
        rc = jp_strbuf_put_varint(&s->sub, c->value);
    if (!rc)
        rc = jp_pb_put_message(&s->msg, PB_SAMPLE_VALUE, &s->sub);
    if (!rc && s->threads && c->thread != JP_NO_THREAD) {
        rc = jp_pb_put_uint(&s->sub, PB_LABEL_KEY, S_THREAD);
        if (!rc)
            rc = jp_pb_put_uint(&s->sub, PB_LABEL_STR, s->str_of[c->thread]);
        if (!rc)
            rc = jp_pb_put_message(&s->msg, PB_SAMPLE_LABEL, &s->sub);
    }
    return rc ? rc : jp_pb_put_message(&s->out, PB_PROFILE_SAMPLE, &s->msg);
}

/* One Function and one Location per frame used (ids: frame index + 1). */
static jp_err write_frame(pp_state *s, uint32_t f)
{
    uint64_t id = (uint64_t)f + 1;
    jp_err rc = jp_pb_put_uint(&s->msg, PB_FUNCTION_ID, id);
    if (!rc)
        rc = jp_pb_put_uint(&s->msg, PB_FUNCTION_NAME, s->str_of[f]);
    if (!rc)
        rc = jp_pb_put_uint(&s->msg, PB_FUNCTION_SYSTEM_NAME, s->str_of[f]);
    if (!rc)
        rc = jp_pb_put_message(&s->out, PB_PROFILE_FUNCTION, &s->msg);
    if (!rc)
        rc = jp_pb_put_uint(&s->sub, PB_LINE_FUNCTION_ID, id);
    if (!rc)
        rc = jp_pb_put_uint(&s->msg, PB_LOCATION_ID, id);
    if (!rc)
        rc = jp_pb_put_message(&s->msg, PB_LOCATION_LINE, &s->sub);
    return rc ? rc : jp_pb_put_message(&s->out, PB_PROFILE_LOCATION, &s->msg);
}

/* The string table, in index order: the fixed head, then one string per
 * frame or thread in the order mark_used numbered them. */
static jp_err write_strings(pp_state *s, jp_kind k)
{
    const char *unit = strcmp(jp_kind_unit(k), "bytes") ? "nanoseconds" : "bytes";
    const char *head[S_FIRST_FREE] = {"", "samples", "count", jp_kind_name(k), unit, "thread"};
    jp_err rc = JP_OK;
    for (int i = 0; i < S_FIRST_FREE && !rc; i++)
        rc = jp_pb_put_bytes(&s->out, PB_PROFILE_STRING_TABLE, head[i], strlen(head[i]));
    uint32_t *by_index = jp_xcalloc(s->nstrings, sizeof *by_index);
    for (uint32_t f = 0; f < s->p->nframes; f++)
        if (s->str_of[f])
            by_index[s->str_of[f]] = f;
    for (uint32_t i = S_FIRST_FREE; i < s->nstrings && !rc; i++) {
        size_t len;
        const char *name = jp_profile_frame_name(s->p, by_index[i], &len);
        rc = jp_pb_put_bytes(&s->out, PB_PROFILE_STRING_TABLE, name, len);
    }
    free(by_index);
    return rc;
}

static jp_err write_profile(pp_state *s, jp_kind k)
{
    jp_err rc = jp_pb_put_pair(&s->out, &s->msg, PB_PROFILE_SAMPLE_TYPE, S_SAMPLES, S_COUNT);
    if (!rc)
        rc = jp_pb_put_pair(&s->out, &s->msg, PB_PROFILE_SAMPLE_TYPE, S_KIND, S_UNIT);
    for (size_t i = 0; i < s->t->count && !rc; i++)
        rc = write_sample(s, &s->t->cells[i]);
    for (uint32_t f = 0; f < s->p->nframes && !rc; f++)
        if (s->str_of[f] && s->p->frames[f].kinds != (1u << JP_FRAME_THREAD))
            rc = write_frame(s, f);
    if (!rc)
        rc = write_strings(s, k);
    if (!rc && s->p->start_ns > 0)
        rc = jp_pb_put_uint(&s->out, PB_PROFILE_TIME_NANOS, (uint64_t)s->p->start_ns);
    if (!rc && s->p->start_ns > 0 && s->p->end_ns > s->p->start_ns)
        rc = jp_pb_put_uint(&s->out, PB_PROFILE_DURATION_NANOS,
                            (uint64_t)(s->p->end_ns - s->p->start_ns));
    if (!rc && s->t->period_ns > 0) {
        rc = jp_pb_put_pair(&s->out, &s->msg, PB_PROFILE_PERIOD_TYPE, S_KIND, S_UNIT);
        if (!rc)
            rc = jp_pb_put_uint(&s->out, PB_PROFILE_PERIOD, (uint64_t)s->t->period_ns);
    }
    return rc ? rc : jp_pb_put_uint(&s->out, PB_PROFILE_DEFAULT_SAMPLE_TYPE, S_KIND);
}

jp_err jp_pprof_encode(const jp_profile *p, jp_kind k, bool threads, jp_strbuf *out, jp_error *err)
{
    if (k < 0 || k >= JP_KIND_COUNT || !jp_profile_has_kind(p, k))
        return jp_error_set(err, JP_ERR_NOT_FOUND, "no %s events to export",
                            jp_kind_name(k) ? jp_kind_name(k) : "such");
    pp_state s = {.p = p, .t = &p->kinds[k], .threads = threads, .nstrings = S_FIRST_FREE};
    s.str_of = jp_xcalloc(p->nframes ? p->nframes : 1, sizeof *s.str_of);
    jp_strbuf_init(&s.out, 0);
    jp_strbuf_init(&s.msg, 0);
    jp_strbuf_init(&s.sub, 0);
    mark_used(&s);
    jp_err rc = write_profile(&s, k);
    if (rc)
        jp_error_set(err, rc, "pprof: encoding the %s profile failed", jp_kind_name(k));
    else
        rc = jp_gzip_append(s.out.data, s.out.len, out, err);
    jp_strbuf_cleanup(&s.out);
    jp_strbuf_cleanup(&s.msg);
    jp_strbuf_cleanup(&s.sub);
    free(s.str_of);
    return rc;
}
