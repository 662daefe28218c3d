/* otlp_encode.c - jprof profiles to OpenTelemetry profiles (see otlp_encode.h). */
#include "wire/otlp_encode.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "wire/otlp_proto.h"
#include "wire/protobuf.h"

/* The fixed head of the string table (index 0 must be ""), and of the
 * attribute table: the three frame types, then one entry per thread. */
enum {
    S_EMPTY,
    S_COUNT,
    S_NANOSECONDS,
    S_BYTES,
    S_THREAD_NAME,
    S_FRAME_TYPE,
    S_JVM,
    S_NATIVE,
    S_KERNEL,
    S_KINDS, /* then one per kind, in jp_kind order */
    S_FIRST_FREE = S_KINDS + JP_KIND_COUNT
};
enum { A_EMPTY, A_JVM, A_NATIVE, A_KERNEL, A_FIRST_THREAD };

typedef struct oe_state {
    const jp_profile *p;
    uint32_t kinds;
    bool threads;
    uint32_t *str_of;   /* per profile frame or thread: its string index, 0 = unused */
    uint32_t *loc_of;   /* per profile frame: its location (and function) index */
    uint32_t *attr_of;  /* per thread: its attribute_table index */
    uint32_t *stack_of; /* per profile stack: its stack_table index, 0 = unused */
    uint32_t *strs;     /* string S_FIRST_FREE + i is frame or thread strs[i] */
    uint32_t *locs;     /* location i + 1 is frame locs[i] */
    uint32_t *stacks;   /* stack i + 1 is profile stack stacks[i] */
    uint32_t nstrings, nlocs, nstacks, nattrs;
    jp_strbuf out, a, b, c; /* the message, and scratch for nested messages */
} oe_state;

/* Numbers the frames, threads and stacks the cells of the kinds use. */
static void oe_mark_cell(oe_state *s, const jp_sample *c)
{
    const jp_profile *p = s->p;
    if (!s->stack_of[c->stack]) {
        s->stacks[s->nstacks] = c->stack;
        s->stack_of[c->stack] = ++s->nstacks;
        const uint32_t *fr = jp_profile_stack_frames(p, c->stack);
        for (uint32_t d = 0; d < p->stacks[c->stack].depth; d++) {
            if (s->loc_of[fr[d]])
                continue;
            s->strs[s->nstrings - S_FIRST_FREE] = fr[d];
            s->str_of[fr[d]] = s->nstrings++;
            s->locs[s->nlocs] = fr[d];
            s->loc_of[fr[d]] = ++s->nlocs;
        }
    }
    if (s->threads && c->thread != JP_NO_THREAD && !s->attr_of[c->thread]) {
        s->strs[s->nstrings - S_FIRST_FREE] = c->thread;
        s->str_of[c->thread] = s->nstrings++;
        s->attr_of[c->thread] = s->nattrs++;
    }
}

static jp_err oe_string_table(oe_state *s)
{
    const char *head[S_KINDS] = {"",      "count",          "nanoseconds",
                                 "bytes", OTLP_THREAD_NAME, OTLP_FRAME_TYPE,
                                 "jvm",   "native",         "kernel"};
    jp_err rc = JP_OK;
    for (int i = 0; i < S_KINDS && !rc; i++)
        rc = jp_pb_put_bytes(&s->a, OTLP_DICT_STRING, head[i], strlen(head[i]));
    for (int k = 0; k < JP_KIND_COUNT && !rc; k++)
        rc = jp_pb_put_bytes(&s->a, OTLP_DICT_STRING, jp_kind_name((jp_kind)k),
                             strlen(jp_kind_name((jp_kind)k)));
    for (uint32_t i = S_FIRST_FREE; i < s->nstrings && !rc; i++) {
        size_t len;
        const char *name = jp_profile_frame_name(s->p, s->strs[i - S_FIRST_FREE], &len);
        rc = jp_pb_put_bytes(&s->a, OTLP_DICT_STRING, name, len);
    }
    return rc;
}

/* A KeyValueAndUnit of attribute_table with a string value from the table. */
static jp_err oe_attr(oe_state *s, uint32_t key, uint32_t value)
{
    jp_err rc = jp_pb_put_uint(&s->b, OTLP_KVU_KEY, key);
    if (!rc)
        rc = jp_pb_put_uint(&s->c, OTLP_ANY_STRING_STRINDEX, value);
    if (!rc)
        rc = jp_pb_put_message(&s->b, OTLP_KVU_VALUE, &s->c);
    return rc ? rc : jp_pb_put_message(&s->a, OTLP_DICT_ATTRIBUTE, &s->b);
}

/* [0] the zero value, the three frame types, then one per thread in the
 * order oe_mark_cell numbered them. */
static jp_err oe_attribute_table(oe_state *s)
{
    jp_err rc = jp_pb_put_message(&s->a, OTLP_DICT_ATTRIBUTE, &s->b);
    if (!rc)
        rc = oe_attr(s, S_FRAME_TYPE, S_JVM);
    if (!rc)
        rc = oe_attr(s, S_FRAME_TYPE, S_NATIVE);
    if (!rc)
        rc = oe_attr(s, S_FRAME_TYPE, S_KERNEL);
    for (uint32_t i = S_FIRST_FREE; i < s->nstrings && !rc; i++)
        if (s->attr_of[s->strs[i - S_FIRST_FREE]])
            rc = oe_attr(s, S_THREAD_NAME, i);
    return rc;
}

static uint32_t oe_frame_attr(const jp_frame *f)
{
    switch (jp_frame_primary_kind(f)) {
    case JP_FRAME_INTERPRETED:
    case JP_FRAME_JIT:
    case JP_FRAME_INLINED:
    case JP_FRAME_C1:
        return A_JVM;
    case JP_FRAME_NATIVE:
    case JP_FRAME_CPP:
        return A_NATIVE;
    case JP_FRAME_KERNEL:
        return A_KERNEL;
    default:
        return A_EMPTY;
    }
}

/* Functions and locations, [0] the zero value of each; location i names
 * function i, whose name is the frame's string. */
static jp_err oe_frames(oe_state *s)
{
    jp_err rc = jp_pb_put_message(&s->a, OTLP_DICT_FUNCTION, &s->b);
    if (!rc)
        rc = jp_pb_put_message(&s->a, OTLP_DICT_LOCATION, &s->b);
    for (uint32_t i = 0; i < s->nlocs && !rc; i++) {
        rc = jp_pb_put_uint(&s->b, OTLP_FUNCTION_NAME, s->str_of[s->locs[i]]);
        if (!rc)
            rc = jp_pb_put_message(&s->a, OTLP_DICT_FUNCTION, &s->b);
    }
    for (uint32_t i = 0; i < s->nlocs && !rc; i++) {
        uint32_t attr = oe_frame_attr(&s->p->frames[s->locs[i]]);
        rc = jp_pb_put_uint(&s->c, OTLP_LINE_FUNCTION, i + 1);
        if (!rc)
            rc = jp_pb_put_message(&s->b, OTLP_LOCATION_LINES, &s->c);
        if (!rc && attr)
            rc = jp_pb_put_uint(&s->b, OTLP_LOCATION_ATTRIBUTES, attr);
        if (!rc)
            rc = jp_pb_put_message(&s->a, OTLP_DICT_LOCATION, &s->b);
    }
    return rc;
}

static jp_err oe_stack_table(oe_state *s)
{
    jp_err rc = jp_pb_put_message(&s->a, OTLP_DICT_STACK, &s->b);
    for (uint32_t i = 0; i < s->nstacks && !rc; i++) {
        uint32_t st = s->stacks[i];
        const uint32_t *fr = jp_profile_stack_frames(s->p, st);
        for (uint32_t d = s->p->stacks[st].depth; d-- > 0 && !rc;) /* leaf first */
            rc = jp_strbuf_put_varint(&s->c, s->loc_of[fr[d]]);
        if (!rc)
            rc = jp_pb_put_message(&s->b, OTLP_STACK_LOCATIONS, &s->c);
        if (!rc)
            rc = jp_pb_put_message(&s->a, OTLP_DICT_STACK, &s->b);
    }
    return rc;
}

/* The dictionary, into s->a. */
static jp_err oe_dictionary(oe_state *s)
{
    static const uint8_t zeros[16];
    jp_err rc = jp_pb_put_message(&s->a, OTLP_DICT_MAPPING, &s->b);
    /* link_table[0]: zero ids of the lengths strict codecs expect */
    if (!rc)
        rc = jp_pb_put_bytes(&s->b, OTLP_LINK_TRACE_ID, zeros, 16);
    if (!rc)
        rc = jp_pb_put_bytes(&s->b, OTLP_LINK_SPAN_ID, zeros, 8);
    if (!rc)
        rc = jp_pb_put_message(&s->a, OTLP_DICT_LINK, &s->b);
    if (!rc)
        rc = oe_frames(s);
    if (!rc)
        rc = oe_string_table(s);
    if (!rc)
        rc = oe_attribute_table(s);
    return rc ? rc : oe_stack_table(s);
}

/* One Profile of kind k (values: samples, or the value) into s->b. */
static jp_err oe_profile(oe_state *s, jp_kind k, bool value)
{
    const jp_kind_table *t = &s->p->kinds[k];
    uint32_t unit = jp_kind_is_bytes(k) ? S_BYTES : S_NANOSECONDS;
    jp_err rc =
        jp_pb_put_pair(&s->b, &s->c, OTLP_PROFILE_SAMPLE_TYPE, S_KINDS + k, value ? unit : S_COUNT);
    if (!rc && s->p->start_ns > 0)
        rc = jp_pb_put_fixed64(&s->b, OTLP_PROFILE_TIME, (uint64_t)s->p->start_ns);
    if (!rc && s->p->start_ns > 0 && s->p->end_ns > s->p->start_ns)
        rc =
            jp_pb_put_uint(&s->b, OTLP_PROFILE_DURATION, (uint64_t)(s->p->end_ns - s->p->start_ns));
    if (!rc && t->period_ns > 0) {
        rc = jp_pb_put_pair(&s->b, &s->c, OTLP_PROFILE_PERIOD_TYPE, S_KINDS + k, unit);
        if (!rc)
            rc = jp_pb_put_uint(&s->b, OTLP_PROFILE_PERIOD, (uint64_t)t->period_ns);
    }
    for (size_t i = 0; i < t->count && !rc; i++) {
        const jp_sample *c = &t->cells[i];
        jp_strbuf *m = &s->c;
        rc = jp_pb_put_uint(m, OTLP_SAMPLE_STACK, s->stack_of[c->stack]);
        if (!rc && s->threads && c->thread != JP_NO_THREAD)
            rc = jp_pb_put_uint(m, OTLP_SAMPLE_ATTRIBUTES, s->attr_of[c->thread]);
        if (!rc)
            rc = jp_pb_put_uint(m, OTLP_SAMPLE_VALUES, value ? c->value : c->samples);
        if (!rc)
            rc = jp_pb_put_message(&s->b, OTLP_PROFILE_SAMPLES, m);
    }
    return rc;
}

/* A Resource.attributes KeyValue with a string value. */
static jp_err oe_resource_attr(jp_strbuf *res, jp_strbuf *kv, jp_strbuf *any, const char *key,
                               const char *val)
{
    if (!val || !*val)
        return JP_OK;
    jp_err rc = jp_pb_put_bytes(kv, OTLP_KV_KEY, key, strlen(key));
    if (!rc)
        rc = jp_pb_put_bytes(any, OTLP_ANY_STRING, val, strlen(val));
    if (!rc)
        rc = jp_pb_put_message(kv, OTLP_KV_VALUE, any);
    return rc ? rc : jp_pb_put_message(res, OTLP_RESOURCE_ATTRIBUTES, kv);
}

/* The Resource of the target, into s->b (empty when there is none). */
static jp_err oe_resource(oe_state *s, const jp_batch_target *t)
{
    if (!t)
        return JP_OK;
    const struct {
        const char *key, *val;
    } a[] = {
        {"service.name", t->service}, {"k8s.namespace.name", t->ns},
        {"k8s.pod.name", t->pod},     {"k8s.container.name", t->container},
        {"k8s.node.name", t->node},   {"k8s.cluster.name", t->cluster},
    };
    jp_err rc = JP_OK;
    for (size_t i = 0; i < sizeof a / sizeof a[0] && !rc; i++)
        rc = oe_resource_attr(&s->b, &s->c, &s->a, a[i].key, a[i].val);
    if (!rc && t->pid > 0) {
        rc = jp_pb_put_bytes(&s->c, OTLP_KV_KEY, "process.pid", 11);
        if (!rc)
            rc = jp_pb_put_uint(&s->a, OTLP_ANY_INT, (uint64_t)t->pid);
        if (!rc)
            rc = jp_pb_put_message(&s->c, OTLP_KV_VALUE, &s->a);
        if (!rc)
            rc = jp_pb_put_message(&s->b, OTLP_RESOURCE_ATTRIBUTES, &s->c);
    }
    return rc;
}

/* ResourceProfiles { resource, ScopeProfiles { scope, profiles } } into s->out. */
static jp_err oe_resource_profiles(oe_state *s, const jp_batch_target *target)
{
    jp_strbuf scope, rp;
    jp_strbuf_init(&scope, 0);
    jp_strbuf_init(&rp, 0);
    jp_err rc = oe_resource(s, target);
    if (!rc && s->b.len)
        rc = jp_pb_put_message(&rp, OTLP_RP_RESOURCE, &s->b);
    if (!rc)
        rc = jp_pb_put_bytes(&s->b, OTLP_SCOPE_NAME, "jprof", 5);
    if (!rc)
        rc = jp_pb_put_bytes(&s->b, OTLP_SCOPE_VERSION, PACKAGE_VERSION, strlen(PACKAGE_VERSION));
    if (!rc)
        rc = jp_pb_put_message(&scope, OTLP_SP_SCOPE, &s->b);
    for (int k = 0; k < JP_KIND_COUNT && !rc; k++) {
        if (!(s->kinds & (1u << k)))
            continue;
        for (int value = 0; value < 2 && !rc; value++) {
            rc = oe_profile(s, (jp_kind)k, value);
            if (!rc)
                rc = jp_pb_put_message(&scope, OTLP_SP_PROFILES, &s->b);
        }
    }
    if (!rc)
        rc = jp_pb_put_message(&rp, OTLP_RP_SCOPE_PROFILES, &scope);
    if (!rc)
        rc = jp_pb_put_message(&s->out, OTLP_DATA_RESOURCE_PROFILES, &rp);
    jp_strbuf_cleanup(&scope);
    jp_strbuf_cleanup(&rp);
    return rc;
}

jp_err jp_otlp_encode(const jp_profile *p, uint32_t kinds, bool threads,
                      const jp_batch_target *target, jp_strbuf *out, jp_error *err)
{
    uint32_t have = 0;
    for (int k = 0; k < JP_KIND_COUNT; k++)
        if ((kinds & (1u << k)) && jp_profile_has_kind(p, (jp_kind)k))
            have |= 1u << k;
    if (!have)
        return jp_error_set(err, JP_ERR_NOT_FOUND, "no events of the asked kinds to export");
    size_t nf = p->nframes ? p->nframes : 1;
    oe_state s = {.p = p,
                  .kinds = have,
                  .threads = threads,
                  .nstrings = S_FIRST_FREE,
                  .nattrs = A_FIRST_THREAD};
    s.str_of = jp_xcalloc(nf, sizeof *s.str_of);
    s.loc_of = jp_xcalloc(nf, sizeof *s.loc_of);
    s.attr_of = jp_xcalloc(nf, sizeof *s.attr_of);
    s.strs = jp_xcalloc(nf, sizeof *s.strs);
    s.locs = jp_xcalloc(nf, sizeof *s.locs);
    s.stack_of = jp_xcalloc(p->nstacks ? p->nstacks : 1, sizeof *s.stack_of);
    s.stacks = jp_xcalloc(p->nstacks ? p->nstacks : 1, sizeof *s.stacks);
    jp_strbuf_init(&s.out, 0);
    jp_strbuf_init(&s.a, 0);
    jp_strbuf_init(&s.b, 0);
    jp_strbuf_init(&s.c, 0);
    for (int k = 0; k < JP_KIND_COUNT; k++)
        for (size_t i = 0; (have & (1u << k)) && i < p->kinds[k].count; i++)
            oe_mark_cell(&s, &p->kinds[k].cells[i]);
    jp_err rc = oe_resource_profiles(&s, target);
    if (!rc)
        rc = oe_dictionary(&s);
    if (!rc)
        rc = jp_pb_put_message(&s.out, OTLP_DATA_DICTIONARY, &s.a);
    if (!rc)
        rc = jp_strbuf_append(out, s.out.data ? s.out.data : "", s.out.len);
    if (rc)
        jp_error_set(err, rc, "OTLP: encoding the profile failed");
    jp_strbuf_cleanup(&s.out);
    jp_strbuf_cleanup(&s.a);
    jp_strbuf_cleanup(&s.b);
    jp_strbuf_cleanup(&s.c);
    free(s.str_of);
    free(s.loc_of);
    free(s.attr_of);
    free(s.strs);
    free(s.locs);
    free(s.stack_of);
    free(s.stacks);
    return rc;
}
