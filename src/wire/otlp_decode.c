/* otlp_decode.c - OpenTelemetry profiles to jprof profiles (see otlp_decode.h).
 *
 * Two passes over the message: the dictionary first (it may come before or
 * after the resource profiles, and a request may carry it in pieces), kept
 * as spans of the input; then the resource profiles, each sample resolved
 * through the dictionary with caches per function, location, attribute and
 * (stack, target), so a stack is walked once per target, not per sample. */
#include "wire/otlp_decode.h"
#include "wire/otlp_dict.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/utf8.h"
#include "base/xalloc.h"
#include "model/frame_text.h"
#include "wire/otlp_proto.h"
#include "wire/protobuf.h"
#include "wire/sample_type.h"

void jp_otlp_limits_default(jp_otlp_limits *l, const jp_batch_limits *batch)
{
    if (batch)
        l->batch = *batch;
    else
        jp_batch_limits_default(&l->batch);
    l->max_table = 1000000;
    l->max_profiles = 10000;
    l->max_samples = 4000000;
    l->max_targets = 1000;
}

void jp_otlp_result_init(jp_otlp_result *r)
{
    memset(r, 0, sizeof *r);
}

void jp_otlp_result_cleanup(jp_otlp_result *r)
{
    for (size_t i = 0; i < r->ntargets; i++) {
        jp_batch_target_cleanup(&r->targets[i].target);
        jp_profile_free(r->targets[i].profile);
    }
    free(r->targets);
    free(r->scope);
    jp_otlp_result_init(r);
}

/* Per ResourceProfiles: its identity and which shapes its profiles have. */
typedef struct ot_rp {
    ot_ident id;
    ot_attr *kv; /* its Resource's attributes */
    size_t nkv, kv_cap;
    uint32_t count_kinds, value_kinds; /* bit per kind: a count / a value profile */
} ot_rp;

/* Per Profile: how its values land in the kind's cells. */
typedef struct ot_prof {
    ot_ident id;
    jp_sample_type st;
    uint64_t period;   /* in the kind's unit, 0 unknown */
    int64_t period_ns; /* a time period, for the kind's table */
    bool other_shape;  /* the resource also has the other shape of this kind */
    int64_t start_ns, end_ns;
} ot_prof;

/* ---- targets ---- */

/* The identity with the fallbacks of otlp_decode.h applied (pod stays unset
 * when it comes from host.name and process.pid: both are in the key). */
static void ot_final(const ot_dec *d, const ot_ident *id, ot_ident *fin)
{
    *fin = *id;
    fin->v[ID_THREAD].s = NULL;
    const jp_batch_target *df = d->defaults;
    static const char local[] = "local", unknown[] = "unknown_service";
    if (!fin->v[ID_NS].s)
        fin->v[ID_NS] = df && df->ns ? (ot_str){df->ns, (uint32_t)strlen(df->ns)}
                                     : (ot_str){local, sizeof local - 1};
    if (!fin->v[ID_SERVICE].s)
        fin->v[ID_SERVICE] = df && df->service
                                 ? (ot_str){df->service, (uint32_t)strlen(df->service)}
                             : id->v[ID_WORKLOAD].s ? id->v[ID_WORKLOAD]
                                                    : (ot_str){unknown, sizeof unknown - 1};
    if (!fin->v[ID_POD].s && df && df->pod)
        fin->v[ID_POD] = (ot_str){df->pod, (uint32_t)strlen(df->pod)};
}

/* A key that tells targets apart: every final field, length-prefixed. */
static void ot_key(const ot_ident *fin, jp_strbuf *out)
{
    jp_strbuf_reset(out);
    for (int i = 0; i < ID_COUNT; i++) {
        if (fin->v[i].s)
            jp_strbuf_printf(out, "%u:", fin->v[i].len);
        else
            jp_strbuf_putc(out, '-');
        jp_strbuf_append(out, fin->v[i].s ? fin->v[i].s : "", fin->v[i].s ? fin->v[i].len : 0);
    }
}

static jp_err ot_ident_str(ot_dec *d, const ot_str *v, const char *what, char **out)
{
    if (!v->s) {
        *out = NULL;
        return JP_OK;
    }
    if (v->len > d->lim->batch.max_string)
        return ot_fail(d, JP_ERR_LIMIT, "%s is longer than %zu bytes", what,
                       d->lim->batch.max_string);
    for (uint32_t i = 0; i < v->len; i++)
        if ((unsigned char)v->s[i] < 0x20 || v->s[i] == 0x7f)
            return ot_fail(d, JP_ERR_FORMAT, "%s has control characters", what);
    if (!v->len && (!strcmp(what, "k8s.namespace.name") || !strcmp(what, "service.name")))
        return ot_fail(d, JP_ERR_FORMAT, "%s is empty", what);
    *out = jp_xstrndup(v->s, v->len);
    return JP_OK;
}

/* Fills t from the final identity. */
static jp_err ot_target_fill(ot_dec *d, const ot_ident *fin, jp_batch_target *t)
{
    static const struct {
        int slot;
        const char *what;
        size_t off;
    } fields[] = {
        {ID_NS, "k8s.namespace.name", offsetof(jp_batch_target, ns)},
        {ID_SERVICE, "service.name", offsetof(jp_batch_target, service)},
        {ID_POD, "k8s.pod.name", offsetof(jp_batch_target, pod)},
        {ID_CONTAINER, "container.name", offsetof(jp_batch_target, container)},
        {ID_CLUSTER, "k8s.cluster.name", offsetof(jp_batch_target, cluster)},
        {ID_WORKLOAD, "the workload", offsetof(jp_batch_target, workload)},
    };
    jp_err rc = JP_OK;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0] && !rc; i++)
        rc = ot_ident_str(d, &fin->v[fields[i].slot], fields[i].what,
                          (char **)((char *)t + fields[i].off));
    const ot_str *node = fin->v[ID_NODE].s ? &fin->v[ID_NODE] : &fin->v[ID_HOST];
    if (!rc)
        rc = ot_ident_str(d, node, "host.name", &t->node);
    const ot_str *pid = &fin->v[ID_PID];
    char *end = NULL;
    if (pid->s && pid->len && pid->len < 20) {
        char num[24];
        memcpy(num, pid->s, pid->len);
        num[pid->len] = '\0';
        long long v = strtoll(num, &end, 10);
        t->pid = end && !*end && v > 0 ? v : 0;
    }
    jp_strbuf_reset(&d->scratch);
    if (fin->v[ID_RT_NAME].s || fin->v[ID_RT_VERSION].s)
        jp_strbuf_printf(&d->scratch, "%.*s%s%.*s", (int)fin->v[ID_RT_NAME].len,
                         fin->v[ID_RT_NAME].s ? fin->v[ID_RT_NAME].s : "",
                         fin->v[ID_RT_NAME].s && fin->v[ID_RT_VERSION].s ? " " : "",
                         (int)fin->v[ID_RT_VERSION].len,
                         fin->v[ID_RT_VERSION].s ? fin->v[ID_RT_VERSION].s : "");
    ot_str jvm = {d->scratch.data, (uint32_t)d->scratch.len};
    if (!rc && d->scratch.len)
        rc = ot_ident_str(d, &jvm, "process.runtime.name", &t->jvm);
    if (!rc && !t->pod) {
        const ot_str *host = &fin->v[ID_HOST];
        jp_strbuf_reset(&d->scratch);
        if (host->s && t->pid)
            jp_strbuf_printf(&d->scratch, "%.*s:%lld", (int)host->len, host->s, (long long)t->pid);
        else if (host->s)
            jp_strbuf_append(&d->scratch, host->s, host->len);
        else
            jp_strbuf_puts(&d->scratch, "upload");
        ot_str pod = {d->scratch.data, (uint32_t)d->scratch.len};
        rc = ot_ident_str(d, &pod, "the pod (host.name:process.pid)", &t->pod);
    }
    return rc;
}

typedef struct ot_targets {
    char **keys; /* per target: its key (ot_key) */
    size_t *key_lens;
    size_t keys_cap, lens_cap;
    ot_ident last; /* the identity of the previous sample, and its target */
    size_t last_target;
    bool have_last;
} ot_targets;

/* The same spans (pointers and lengths): the same attributes. */
static bool ot_ident_same(const ot_ident *a, const ot_ident *b)
{
    for (int i = 0; i < ID_COUNT; i++)
        if (a->v[i].s != b->v[i].s || (a->v[i].s && a->v[i].len != b->v[i].len))
            return false;
    return true;
}

static bool ot_key_is(const ot_targets *ts, size_t i, const jp_strbuf *key)
{
    return ts->key_lens[i] == key->len && !memcmp(ts->keys[i], key->data, key->len);
}

/* The target of identity id, created on first sight. */
static jp_err ot_target(ot_dec *d, ot_targets *ts, const ot_ident *id, size_t *out)
{
    ot_ident cmp = *id;
    cmp.v[ID_THREAD].s = NULL;
    cmp.v[ID_THREAD].len = 0;
    if (ts->have_last && ot_ident_same(&cmp, &ts->last)) {
        *out = ts->last_target;
        return JP_OK;
    }
    ot_ident fin;
    ot_final(d, &cmp, &fin);
    jp_strbuf key;
    jp_strbuf_init(&key, 0);
    ot_key(&fin, &key);
    uint64_t h = jp_hash_bytes(key.data, key.len), idx = 0;
    jp_err rc = JP_OK;
    bool found = jp_u64map_get(&d->target_of, h, &idx) && ot_key_is(ts, (size_t)idx, &key);
    for (size_t i = 0; !found && i < d->out->ntargets; i++) /* a hash collision */
        if (ot_key_is(ts, i, &key)) {
            found = true;
            idx = i;
        }
    if (!found) {
        jp_otlp_result *r = d->out;
        if (r->ntargets >= d->lim->max_targets) {
            rc = ot_fail(d, JP_ERR_LIMIT, "more than %zu targets", d->lim->max_targets);
            goto out;
        }
        r->targets = jp_xgrow(r->targets, &r->targets_cap, r->ntargets + 1, sizeof *r->targets);
        ts->keys = jp_xgrow(ts->keys, &ts->keys_cap, r->ntargets + 1, sizeof *ts->keys);
        ts->key_lens = jp_xgrow(ts->key_lens, &ts->lens_cap, r->ntargets + 1, sizeof *ts->key_lens);
        ts->key_lens[r->ntargets] = key.len;
        jp_otlp_target *t = &r->targets[r->ntargets];
        memset(t, 0, sizeof *t);
        t->profile = jp_profile_new();
        ts->keys[r->ntargets] = jp_strbuf_take(&key);
        idx = r->ntargets++;
        jp_u64map_put(&d->target_of, h, idx);
        if ((rc = ot_target_fill(d, &fin, &t->target)))
            goto out;
    }
    ts->last = cmp;
    ts->last_target = (size_t)idx;
    ts->have_last = true;
    *out = (size_t)idx;
out:
    jp_strbuf_cleanup(&key);
    return rc;
}

/* ---- stacks and samples ---- */

/* Counts what a target's profile grew by in frames and stacks, against the limits. */
static jp_err ot_account(ot_dec *d, const jp_profile *p, size_t frames0, size_t stacks0)
{
    d->nframes += p->nframes - frames0;
    d->nstacks += p->nstacks - stacks0;
    const jp_batch_limits *l = &d->lim->batch;
    if (d->nframes > l->max_frames)
        return ot_fail(d, JP_ERR_LIMIT, "more than %zu distinct frames", l->max_frames);
    if (d->nstacks > l->max_stacks)
        return ot_fail(d, JP_ERR_LIMIT, "more than %zu distinct stacks", l->max_stacks);
    return JP_OK;
}

/* Stack si of target ti as a profile stack, walked once per target. */
static jp_err ot_stack(ot_dec *d, uint64_t si, size_t ti, uint32_t *out)
{
    uint64_t key = si << 20 | ti, v;
    if (jp_u64map_get(&d->stack_of, key, &v)) {
        *out = (uint32_t)v;
        return JP_OK;
    }
    jp_err rc = ot_index(d, T_STACK, si, "Sample.stack_index");
    if (rc)
        return rc;
    jp_profile *p = d->out->targets[ti].profile;
    size_t frames0 = p->nframes, stacks0 = p->nstacks, depth = 0;
    jp_pb_reader r;
    ot_entry(d, T_STACK, (size_t)si, &r);
    jp_pb_field f;
    bool more, more2;
    /* locations leaf first: collect them, then walk from the root */
    size_t nloc = 0;
    while (!(rc = jp_pb_next(&r, &f, &more, d->err)) && more) {
        if (f.num != OTLP_STACK_LOCATIONS)
            continue;
        jp_pb_values it;
        uint64_t li;
        if ((rc = jp_pb_values_init(&it, &r, &f, 0, d->err)))
            return rc;
        while (!(rc = jp_pb_values_next(&it, &li, &more2, d->err)) && more2) {
            const ot_loc *l;
            if ((rc = ot_location(d, li, &l)))
                return rc;
            depth += l->n;
            if (depth > d->lim->batch.max_depth)
                return ot_fail(d, JP_ERR_LIMIT, "stack_table[%" PRIu64 "] has more than %zu frames",
                               si, d->lim->batch.max_depth);
            d->slocs = jp_xgrow(d->slocs, &d->slocs_cap, nloc + 1, sizeof *d->slocs);
            d->slocs[nloc++] = (uint32_t)(l - d->locs);
        }
        if (rc)
            return rc;
    }
    if (rc)
        return rc;
    d->frames = jp_xgrow(d->frames, &d->frames_cap, depth + 1, sizeof *d->frames);
    size_t k = 0;
    for (size_t i = nloc; i-- > 0;) {
        ot_loc *l = &d->locs[d->slocs[i]];
        if (l->pf_target != ti + 1) { /* its frames in this target's profile, once */
            for (uint32_t j = 0; j < l->n; j++) {
                const ot_name *nm = &d->lnames[l->first + j];
                jp_frame_kind kind =
                    l->kind != JP_FRAME_UNKNOWN ? (jp_frame_kind)l->kind : (jp_frame_kind)nm->kind;
                d->pframes[l->first + j] =
                    jp_profile_frame(p, d->names.data + nm->off, nm->len, kind);
            }
            l->pf_target = (uint32_t)ti + 1;
        }
        memcpy(d->frames + k, d->pframes + l->first, l->n * sizeof *d->frames);
        k += l->n;
    }
    if (!k)
        d->frames[k++] = jp_profile_frame(p, "[no stack]", 10, JP_FRAME_UNKNOWN);
    *out = jp_profile_stack(p, d->frames, k, false);
    jp_u64map_put(&d->stack_of, key, *out);
    return ot_account(d, p, frames0, stacks0);
}

/* What one sample's values and timestamps add up to. */
typedef struct ot_obs {
    uint64_t nvals, sum, derived, nts;
    int64_t tmin, tmax;
} ot_obs;

static jp_err ot_sample_values(ot_dec *d, const jp_pb_reader *r, const jp_pb_field *f,
                               const ot_prof *pr, ot_obs *o)
{
    jp_pb_values it;
    uint64_t v;
    bool more;
    jp_err rc = jp_pb_values_init(&it, r, f, 0, d->err);
    while (!rc && !(rc = jp_pb_values_next(&it, &v, &more, d->err)) && more) {
        if ((int64_t)v < 0)
            return ot_fail(d, JP_ERR_FORMAT, "Sample @%zu: negative value %" PRId64, f->off,
                           (int64_t)v);
        if (o->sum > UINT64_MAX - v || v > UINT64_MAX / pr->st.scale)
            return ot_fail(d, JP_ERR_FORMAT, "Sample @%zu: values overflow 64 bits", f->off);
        o->nvals++;
        o->sum += v;
        uint64_t n = pr->period ? (v * pr->st.scale + pr->period / 2) / pr->period : 1;
        o->derived += n ? n : 1;
    }
    return rc;
}

static jp_err ot_sample_times(ot_dec *d, const jp_pb_reader *r, const jp_pb_field *f,
                              const ot_prof *pr, ot_obs *o)
{
    jp_pb_values it;
    uint64_t v;
    bool more;
    jp_err rc = jp_pb_values_init(&it, r, f, 8, d->err);
    if (rc)
        return rc;
    if (pr->start_ns) { /* the profile says its range: only count */
        o->nts += jp_pb_values_fixed_count(&it);
        return JP_OK;
    }
    while (!(rc = jp_pb_values_next(&it, &v, &more, d->err)) && more) {
        int64_t t = v > INT64_MAX ? INT64_MAX : (int64_t)v;
        o->tmin = !o->nts || t < o->tmin ? t : o->tmin;
        o->tmax = !o->nts || t > o->tmax ? t : o->tmax;
        o->nts++;
    }
    return rc;
}

static uint64_t ot_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* async-profiler names a thread "[NAME tid=N]": jprof names it NAME, as it
 * does from the same recording's JFR. */
static const char *ot_thread_name(const char *s, size_t *len)
{
    size_t n = *len;
    if (n < 8 || s[0] != '[' || s[n - 1] != ']')
        return s;
    size_t i = n - 1;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
        i--;
    if (i == n - 1 || i < 6 || memcmp(s + i - 5, " tid=", 5))
        return s;
    *len = i - 6;
    return s + 1;
}

/* Adds one sample's (samples, value, events) to its target's cell. */
static jp_err ot_sample_add(ot_dec *d, ot_targets *ts, const ot_prof *pr, const ot_ident *id,
                            uint64_t si, const ot_obs *o)
{
    uint64_t samples, value, events;
    if (pr->st.is_count) {
        samples = o->nvals ? o->sum : o->nts;
        events = o->nts ? o->nts : samples;
        value = pr->other_shape ? 0 : ot_mul(samples, pr->period);
    } else {
        value = ot_mul(o->nvals ? o->sum : o->nts, pr->st.scale);
        samples = pr->other_shape ? 0 : o->nts ? o->nts : o->derived;
        events = pr->other_shape ? 0 : o->nts ? o->nts : o->nvals;
    }
    if (!samples && !value && !events)
        return JP_OK;
    size_t ti = 0;
    uint32_t stack = 0;
    jp_err rc = ot_target(d, ts, id, &ti);
    if (!rc)
        rc = ot_stack(d, si, ti, &stack);
    if (rc)
        return rc;
    jp_otlp_target *t = &d->out->targets[ti];
    jp_profile *p = t->profile;
    uint32_t thread = JP_NO_THREAD;
    const ot_str *tn = &id->v[ID_THREAD];
    if (tn->s) {
        if (tn->len > d->lim->batch.max_string)
            return ot_fail(d, JP_ERR_LIMIT, "a thread name is longer than %zu bytes",
                           d->lim->batch.max_string);
        size_t n0 = p->nframes, len = tn->len;
        const char *name = ot_thread_name(tn->s, &len);
        thread = jp_profile_thread(p, name, len);
        if ((d->nthreads += p->nframes - n0) > d->lim->batch.max_threads)
            return ot_fail(d, JP_ERR_LIMIT, "more than %zu threads", d->lim->batch.max_threads);
    }
    jp_kind_table *kt = &p->kinds[pr->st.kind];
    size_t rows0 = kt->count;
    jp_profile_add(p, pr->st.kind, stack, thread, events, samples, value);
    if (pr->period_ns)
        kt->period_ns = pr->period_ns;
    if ((d->nrows += kt->count - rows0) > d->lim->batch.max_rows)
        return ot_fail(d, JP_ERR_LIMIT, "more than %zu rows (stack, thread and kind)",
                       d->lim->batch.max_rows);
    int64_t a = pr->start_ns ? pr->start_ns : o->tmin, b = pr->start_ns ? pr->end_ns : o->tmax;
    if (a > 0 && (!t->start_ns || a < t->start_ns))
        t->start_ns = a;
    if (b > 0 && b > t->end_ns)
        t->end_ns = b;
    return JP_OK;
}

static jp_err ot_sample(ot_dec *d, ot_targets *ts, jp_pb_reader *r, const ot_prof *pr)
{
    if (++d->out->samples > d->lim->max_samples)
        return ot_fail(d, JP_ERR_LIMIT, "more than %zu samples", d->lim->max_samples);
    ot_ident id = pr->id;
    ot_obs o;
    memset(&o, 0, sizeof o);
    uint64_t si = 0;
    jp_pb_field f;
    bool more;
    jp_err rc;
    while (!(rc = jp_pb_next(r, &f, &more, d->err)) && more) {
        if (f.num == OTLP_SAMPLE_STACK && f.wire == JP_PB_VARINT)
            si = f.v;
        else if (f.num == OTLP_SAMPLE_ATTRIBUTES)
            rc = ot_apply_attrs(d, r, &f, &id);
        else if (f.num == OTLP_SAMPLE_VALUES)
            rc = ot_sample_values(d, r, &f, pr, &o);
        else if (f.num == OTLP_SAMPLE_TIMESTAMPS)
            rc = ot_sample_times(d, r, &f, pr, &o);
        if (rc)
            return rc;
    }
    return rc ? rc : ot_sample_add(d, ts, pr, &id, si, &o);
}

/* ---- profiles, scopes, resources ---- */

/* A ValueType's (type, unit) strings. */
static jp_err ot_value_type(ot_dec *d, const jp_pb_reader *parent, const jp_pb_field *f,
                            ot_str *type, ot_str *unit)
{
    jp_pb_reader r;
    jp_pb_reader_sub(&r, parent, f, "ValueType");
    uint64_t ti = 0, ui = 0;
    jp_pb_field g;
    bool more;
    jp_err rc;
    while (!(rc = jp_pb_next(&r, &g, &more, d->err)) && more) {
        if (g.num == OTLP_VT_TYPE && g.wire == JP_PB_VARINT)
            ti = g.v;
        else if (g.num == OTLP_VT_UNIT && g.wire == JP_PB_VARINT)
            ui = g.v;
    }
    if (!rc)
        rc = ot_string(d, ti, type, "ValueType.type_strindex");
    return rc ? rc : ot_string(d, ui, unit, "ValueType.unit_strindex");
}

/* A Profile's sample type as a kind. */
static jp_err ot_profile_type(ot_dec *d, jp_pb_reader *r, jp_sample_type *st)
{
    ot_str type = {"", 0}, unit = {"", 0};
    jp_pb_field f;
    bool more;
    jp_err rc;
    while (!(rc = jp_pb_next(r, &f, &more, d->err)) && more)
        if (f.num == OTLP_PROFILE_SAMPLE_TYPE && f.wire == JP_PB_LEN &&
            (rc = ot_value_type(d, r, &f, &type, &unit)))
            return rc;
    if (rc)
        return rc;
    if ((rc = jp_sample_type_map(type.s, type.len, unit.s, unit.len, st, d->err)))
        jp_error_prefix(d->err, "OTLP profiles: ");
    return rc;
}

/* A Profile's header: everything but its samples. */
static jp_err ot_profile_head(ot_dec *d, jp_pb_reader *r, ot_prof *pr)
{
    ot_str ptype = {"", 0}, punit = {"", 0};
    int64_t period = 0;
    uint64_t time = 0, duration = 0;
    jp_pb_field f;
    bool more;
    jp_err rc;
    while (!(rc = jp_pb_next(r, &f, &more, d->err)) && more) {
        if (f.num == OTLP_PROFILE_PERIOD_TYPE && f.wire == JP_PB_LEN)
            rc = ot_value_type(d, r, &f, &ptype, &punit);
        else if (f.num == OTLP_PROFILE_PERIOD && f.wire == JP_PB_VARINT)
            period = (int64_t)f.v;
        else if (f.num == OTLP_PROFILE_TIME && f.wire == JP_PB_I64)
            time = f.v;
        else if (f.num == OTLP_PROFILE_DURATION && f.wire == JP_PB_VARINT)
            duration = f.v;
        else if (f.num == OTLP_PROFILE_ATTRIBUTES)
            rc = ot_apply_attrs(d, r, &f, &pr->id);
        if (rc)
            return rc;
    }
    uint64_t scale;
    if (period > 0 && jp_sample_unit_of_kind(punit.s, punit.len, pr->st.kind, &scale)) {
        pr->period = ot_mul((uint64_t)period, scale);
        if (!jp_kind_is_bytes(pr->st.kind) && pr->period <= INT64_MAX)
            pr->period_ns = (int64_t)pr->period;
    }
    if (time > 0 && time < INT64_MAX / 2 && duration < INT64_MAX / 2) {
        pr->start_ns = (int64_t)time;
        pr->end_ns = (int64_t)(time + duration);
    }
    return rc;
}

static jp_err ot_profile(ot_dec *d, ot_targets *ts, const jp_pb_reader *r, const ot_rp *rp)
{
    if (++d->out->profiles > d->lim->max_profiles)
        return ot_fail(d, JP_ERR_LIMIT, "more than %zu profiles", d->lim->max_profiles);
    ot_prof pr;
    memset(&pr, 0, sizeof pr);
    pr.id = rp->id;
    jp_pb_reader a = *r, b = *r, c = *r;
    jp_err rc = ot_profile_type(d, &a, &pr.st);
    if (!rc)
        rc = ot_profile_head(d, &b, &pr);
    if (rc)
        return rc;
    uint32_t bit = 1u << pr.st.kind;
    pr.other_shape = pr.st.is_count ? (rp->value_kinds & bit) : (rp->count_kinds & bit);
    jp_pb_field f;
    bool more;
    while (!(rc = jp_pb_next(&c, &f, &more, d->err)) && more) {
        if (f.num != OTLP_PROFILE_SAMPLES)
            continue;
        if (f.wire != JP_PB_LEN)
            return jp_pb_wrong_wire(&c, &f, d->err);
        jp_pb_reader s;
        jp_pb_reader_sub(&s, &c, &f, "Sample");
        if ((rc = ot_sample(d, ts, &s, &pr)))
            return rc;
    }
    return rc;
}

/* The first instrumentation scope's "name version", for the source. */
static jp_err ot_scope_name(ot_dec *d, const jp_pb_reader *parent, const jp_pb_field *f)
{
    jp_pb_reader r;
    jp_pb_reader_sub(&r, parent, f, "InstrumentationScope");
    jp_pb_field g;
    bool more;
    jp_err rc;
    jp_strbuf_reset(&d->scratch);
    while (!(rc = jp_pb_next(&r, &g, &more, d->err)) && more) {
        if ((g.num != OTLP_SCOPE_NAME && g.num != OTLP_SCOPE_VERSION) || g.wire != JP_PB_LEN ||
            !g.len)
            continue;
        if ((rc = ot_utf8(d, &g, "InstrumentationScope")))
            return rc;
        jp_strbuf_printf(&d->scratch, "%s%.*s", d->scratch.len ? " " : "",
                         (int)(g.len > 100 ? 100 : g.len), (const char *)g.data);
    }
    if (!rc && d->scratch.len)
        d->out->scope = jp_xstrdup(d->scratch.data);
    return rc;
}

/* A ScopeProfiles: with `prescan`, only notes which shapes (count or
 * value) each kind has; else decodes its profiles. */
static jp_err ot_scope(ot_dec *d, ot_targets *ts, const jp_pb_reader *parent, const jp_pb_field *sf,
                       ot_rp *rp, bool prescan)
{
    jp_pb_reader r, sub;
    jp_pb_reader_sub(&r, parent, sf, "ScopeProfiles");
    jp_pb_field f;
    bool more;
    jp_err rc;
    while (!(rc = jp_pb_next(&r, &f, &more, d->err)) && more) {
        if (f.wire != JP_PB_LEN)
            continue;
        if (f.num == OTLP_SP_SCOPE && !prescan && !d->out->scope && (rc = ot_scope_name(d, &r, &f)))
            return rc;
        if (f.num != OTLP_SP_PROFILES)
            continue;
        jp_pb_reader_sub(&sub, &r, &f, "Profile");
        jp_sample_type st;
        if (!prescan) {
            rc = ot_profile(d, ts, &sub, rp);
        } else if (!(rc = ot_profile_type(d, &sub, &st))) {
            if (st.is_count)
                rp->count_kinds |= 1u << st.kind;
            else
                rp->value_kinds |= 1u << st.kind;
        }
        if (rc)
            return rc;
    }
    return rc;
}

/* A Resource's attributes, into rp->kv and then rp->id. */
static jp_err ot_resource(ot_dec *d, const jp_pb_reader *parent, const jp_pb_field *rf, ot_rp *rp)
{
    jp_pb_reader r, sub;
    jp_pb_reader_sub(&r, parent, rf, "Resource");
    jp_pb_field f;
    bool more;
    jp_err rc;
    while (!(rc = jp_pb_next(&r, &f, &more, d->err)) && more) {
        if (f.num != OTLP_RESOURCE_ATTRIBUTES || f.wire != JP_PB_LEN)
            continue;
        rp->kv = jp_xgrow(rp->kv, &rp->kv_cap, rp->nkv + 1, sizeof *rp->kv);
        memset(&rp->kv[rp->nkv], 0, sizeof *rp->kv);
        jp_pb_reader_sub(&sub, &r, &f, "KeyValue");
        if ((rc = ot_key_value(d, &sub, false, &rp->kv[rp->nkv++])))
            return rc;
    }
    /* rp->kv no longer moves: the identity may point into it */
    for (size_t i = 0; i < rp->nkv; i++)
        if (rp->kv[i].slot < ID_COUNT && rp->kv[i].val.s)
            rp->id.v[rp->kv[i].slot] = rp->kv[i].val;
    return rc;
}

/* One ResourceProfiles: its resource, then its scopes twice (the shapes of
 * its kinds first, so a count profile and a value profile of one kind
 * combine whatever their order), then the profiles. */
static jp_err ot_resource_profiles(ot_dec *d, ot_targets *ts, const jp_pb_reader *parent,
                                   const jp_pb_field *rpf)
{
    ot_rp rp;
    memset(&rp, 0, sizeof rp);
    ts->have_last = false; /* identities point into this resource's attributes */
    jp_err rc = JP_OK;
    for (int pass = 0; pass < 3 && !rc; pass++) {
        jp_pb_reader r;
        jp_pb_reader_sub(&r, parent, rpf, "ResourceProfiles");
        jp_pb_field f;
        bool more;
        while (!rc && !(rc = jp_pb_next(&r, &f, &more, d->err)) && more) {
            if (f.wire != JP_PB_LEN)
                continue;
            if (pass == 0 && f.num == OTLP_RP_RESOURCE)
                rc = ot_resource(d, &r, &f, &rp);
            else if (pass > 0 && f.num == OTLP_RP_SCOPE_PROFILES)
                rc = ot_scope(d, ts, &r, &f, &rp, pass == 1);
        }
    }
    ts->have_last = false;
    free(rp.kv);
    return rc;
}

static void ot_dec_cleanup(ot_dec *d, ot_targets *ts)
{
    ot_dict_cleanup(d);
    free(d->frames);
    free(d->slocs);
    jp_strbuf_cleanup(&d->scratch);
    jp_u64map_cleanup(&d->stack_of);
    jp_u64map_cleanup(&d->target_of);
    for (size_t i = 0; i < d->out->ntargets && ts->keys; i++)
        free(ts->keys[i]);
    free(ts->keys);
    free(ts->key_lens);
}

jp_err jp_otlp_decode(const uint8_t *data, size_t len, const jp_otlp_limits *lim,
                      const jp_batch_target *defaults, jp_otlp_result *out, jp_error *err)
{
    ot_dec d;
    memset(&d, 0, sizeof d);
    d.in = data ? data : (const uint8_t *)"";
    d.len = len;
    d.lim = lim;
    d.defaults = defaults;
    d.out = out;
    d.err = err;
    jp_strbuf_init(&d.names, 0);
    jp_strbuf_init(&d.scratch, 0);
    jp_u64map_init(&d.stack_of);
    jp_u64map_init(&d.target_of);
    ot_targets ts;
    memset(&ts, 0, sizeof ts);
    jp_err rc;
    if (len > UINT32_MAX) {
        rc = ot_fail(&d, JP_ERR_LIMIT, "a message of %zu bytes is larger than 4 GiB", len);
        goto out;
    }
    if ((rc = ot_pass_dictionary(&d)))
        goto out;
    jp_pb_reader r;
    jp_pb_reader_init(&r, d.in, len, "ProfilesData");
    jp_pb_field f;
    bool more;
    while (!(rc = jp_pb_next(&r, &f, &more, err)) && more) {
        if (f.num != OTLP_DATA_RESOURCE_PROFILES)
            continue;
        if (f.wire != JP_PB_LEN) {
            rc = jp_pb_wrong_wire(&r, &f, err);
            break;
        }
        if ((rc = ot_resource_profiles(&d, &ts, &r, &f)))
            break;
    }
out:
    ot_dec_cleanup(&d, &ts);
    return rc;
}
