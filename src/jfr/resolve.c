/* resolve.c - decoding pool values on first use, with per-chunk caches. */
#include "jfr/resolve.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "jfr/frame_name.h"

#define FCACHE_BITS 12

struct jfr_frame_slot {
    uint64_t mk, tk;
    uint32_t frame; /* model frame index + 1, 0 for an empty slot */
};

static const char *sb_str(const jp_strbuf *b)
{
    return b->data ? b->data : "";
}

void jfr_resolver_init(jfr_resolver *r, const jfr_meta *m, const jfr_pools *pools, jp_profile *prof,
                       jfr_warner *warn)
{
    memset(r, 0, sizeof *r);
    r->m = m;
    r->pools = pools;
    r->prof = prof;
    r->warn = warn;
    const uint32_t *c = pools->cls;
    r->f_method_type = jfr_meta_field(m, c[JFR_POOL_METHOD], "type");
    r->f_method_name = jfr_meta_field(m, c[JFR_POOL_METHOD], "name");
    r->f_method_desc = jfr_meta_field(m, c[JFR_POOL_METHOD], "descriptor");
    r->f_class_name = jfr_meta_field(m, c[JFR_POOL_CLASS], "name");
    r->f_symbol_string = jfr_meta_field(m, c[JFR_POOL_SYMBOL], "string");
    r->f_ft_desc = jfr_meta_field(m, c[JFR_POOL_FRAMETYPE], "description");
    r->f_th_osname = jfr_meta_field(m, c[JFR_POOL_THREAD], "osName");
    r->f_th_osid = jfr_meta_field(m, c[JFR_POOL_THREAD], "osThreadId");
    r->f_th_javaname = jfr_meta_field(m, c[JFR_POOL_THREAD], "javaName");
    r->f_st_truncated = jfr_meta_field(m, c[JFR_POOL_STACK], "truncated");
    r->f_st_frames = jfr_meta_field(m, c[JFR_POOL_STACK], "frames");
    uint32_t sf = r->f_st_frames == JFR_NONE ? JFR_NONE : m->fields[r->f_st_frames].cls;
    r->f_sf_method = jfr_meta_field(m, sf, "method");
    r->f_sf_type = jfr_meta_field(m, sf, "type");
    r->sf_flat = sf != JFR_NONE && m->classes[sf].flat &&
                 (r->f_sf_method == JFR_NONE || m->fields[r->f_sf_method].width == 0) &&
                 (r->f_sf_type == JFR_NONE || m->fields[r->f_sf_type].width == 0);
    r->sf_mslot = r->f_sf_method == JFR_NONE ? -1 : (int)(r->f_sf_method - m->classes[sf].field0);
    r->sf_tslot = r->f_sf_type == JFR_NONE ? -1 : (int)(r->f_sf_type - m->classes[sf].field0);
    if (r->sf_flat && m->classes[sf].flat == JFR_FLAT_VARINTS && r->sf_mslot >= 0 &&
        r->sf_tslot >= 0) {
        int a = r->sf_mslot < r->sf_tslot ? r->sf_mslot : r->sf_tslot;
        int b = r->sf_mslot ^ r->sf_tslot ^ a;
        r->sf_plan = true;
        r->sf_mfirst = a == r->sf_mslot;
        r->sf_skip[0] = (unsigned)a;
        r->sf_skip[1] = (unsigned)(b - a - 1);
        r->sf_skip[2] = m->classes[sf].nfields - (unsigned)b - 1;
    }
    r->f_ts_name = jfr_meta_field(m, c[JFR_POOL_STATE], "name");
    r->f_old_type = jfr_meta_field(m, c[JFR_POOL_OLDOBJECT], "type");
    jp_u64map_init(&r->stacks);
    jp_u64map_init(&r->threads);
    jp_u64map_init(&r->ftypes);
    jp_u64map_init(&r->methods);
    jp_strbuf_init(&r->s1, 0);
    jp_strbuf_init(&r->s2, 0);
    jp_strbuf_init(&r->s3, 0);
    jp_strbuf_init(&r->out, 0);
    r->no_stack = r->unknown_stack = r->unknown_thread = JFR_NONE;
}

void jfr_resolver_cleanup(jfr_resolver *r)
{
    jp_u64map_cleanup(&r->stacks);
    jp_u64map_cleanup(&r->threads);
    jp_u64map_cleanup(&r->ftypes);
    jp_u64map_cleanup(&r->methods);
    free(r->mframes);
    free(r->frames);
    free(r->fcache);
    jp_strbuf_cleanup(&r->s1);
    jp_strbuf_cleanup(&r->s2);
    jp_strbuf_cleanup(&r->s3);
    jp_strbuf_cleanup(&r->out);
}

/* Lazy decoding never reports errors of its own: the bytes were validated
 * when the pools were loaded, and a reference gone bad is only a warning. */
static const jfr_where quiet = {0};

/* Outcome of reading a text value. */
enum { TEXT_BAD = 0, TEXT_NULL, TEXT_OK };

static int read_text(jfr_resolver *r, const jfr_field *f, const uint8_t **pp, const uint8_t *end,
                     jp_strbuf *out, int hops);

static bool is_text(const jfr_resolver *r, const jfr_field *f)
{
    if (f->array || f->cls == JFR_NONE)
        return false;
    return r->m->classes[f->cls].prim == JFR_P_STRING || f->cls == r->pools->cls[JFR_POOL_SYMBOL];
}

static bool walk_fields(jfr_resolver *r, uint32_t cls, const uint8_t **pp, const uint8_t *end,
                        const uint32_t *fields, int n, uint64_t *nums, jp_strbuf **texts,
                        bool *found, int hops, bool whole);

/* The label pool (GCName, GCCause, GCWhen) a field refers to, or -1. */
static int label_pool(const jfr_resolver *r, const jfr_field *f)
{
    if (!f->cpool || f->array || f->cls == JFR_NONE)
        return -1;
    for (int k = JFR_POOL_GCNAME; k <= JFR_POOL_GCWHEN; k++)
        if (r->pools->cls[k] == f->cls)
            return k;
    return -1;
}

/* The text of a label pool entry: its first field. A key missing from the
 * pool leaves the text unknown (not found), which is no error. */
static bool read_label(jfr_resolver *r, const jfr_field *f, int kind, const uint8_t **pp,
                       const uint8_t *end, jp_strbuf *text, bool *found, int hops)
{
    uint64_t key, num;
    if (!jfr_varint(pp, end, &key))
        return false;
    const jfr_class *c = &r->m->classes[f->cls];
    const uint8_t *p = jfr_pools_get(r->pools, (jfr_pool_kind)kind, key);
    if (!p || c->nfields < 1)
        return true;
    uint32_t first = c->field0;
    jp_strbuf *texts[1] = {text};
    jp_strbuf_reset(text);
    if (!walk_fields(r, f->cls, &p, r->pools->end, &first, 1, &num, texts, found, hops + 1, false))
        *found = false;
    return true;
}

/* Decodes one wanted field as a number or as text. */
static bool read_want(jfr_resolver *r, const jfr_field *f, const uint8_t **pp, const uint8_t *end,
                      uint64_t *num, jp_strbuf *text, bool *found, int hops)
{
    *found = false;
    int label = text ? label_pool(r, f) : -1;
    if (label >= 0)
        return read_label(r, f, label, pp, end, text, found, hops);
    if (text && is_text(r, f)) {
        jp_strbuf_reset(text);
        int t = read_text(r, f, pp, end, text, hops);
        *found = t == TEXT_OK;
        return t != TEXT_BAD;
    }
    const jfr_class *c = f->cls == JFR_NONE ? NULL : &r->m->classes[f->cls];
    if (!f->array && (f->cpool || (c && c->prim == JFR_P_VARINT))) {
        *found = jfr_varint(pp, end, num);
        return *found;
    }
    if (!f->array && c && c->prim == JFR_P_BYTE) {
        if (*pp >= end)
            return false;
        *num = *(*pp)++;
        *found = true;
        return true;
    }
    return jfr_skip_field(r->m, f, pp, end, 0, &quiet) == JP_OK;
}

/* Reads the wanted fields of a struct of class cls. Stops after the last
 * wanted one unless `whole`, which leaves *pp after the entire struct. */
static bool walk_fields(jfr_resolver *r, uint32_t cls, const uint8_t **pp, const uint8_t *end,
                        const uint32_t *fields, int n, uint64_t *nums, jp_strbuf **texts,
                        bool *found, int hops, bool whole)
{
    int left = 0;
    for (int i = 0; i < n; i++) {
        found[i] = false;
        left += fields[i] != JFR_NONE;
    }
    if (cls == JFR_NONE || hops >= JFR_MAX_REF_HOPS)
        return false;
    const jfr_class *c = &r->m->classes[cls];
    if (c->prim != JFR_P_STRUCT)
        return false;
    for (uint32_t i = 0; i < c->nfields && (left > 0 || whole); i++) {
        uint32_t fi = c->field0 + i;
        const jfr_field *f = &r->m->fields[fi];
        int k = 0;
        while (k < n && fields[k] != fi)
            k++;
        if (k == n) {
            if (jfr_skip_field(r->m, f, pp, end, 0, &quiet))
                return false;
            continue;
        }
        left--;
        if (!read_want(r, f, pp, end, &nums[k], texts ? texts[k] : NULL, &found[k], hops + 1))
            return false;
    }
    return true;
}

bool jfr_resolve_fields(jfr_resolver *r, uint32_t cls, const uint8_t *p, const uint8_t *end,
                        const uint32_t *fields, int n, uint64_t *nums, jp_strbuf **texts,
                        bool *found)
{
    return walk_fields(r, cls, &p, end, fields, n, nums, texts, found, 0, false);
}

/* Appends a decoded wire string, or follows its pool key. */
static int text_of_str(jfr_resolver *r, const jfr_str *s, jp_strbuf *out, int hops);

static int text_by_string_key(jfr_resolver *r, uint64_t key, jp_strbuf *out, int hops)
{
    const uint8_t *p = jfr_pools_get(r->pools, JFR_POOL_STRING, key);
    if (!p) {
        if (key)
            jfr_warn(r->warn, JFR_WARN_MISSING_STRING, "string key %" PRIu64 " missing from pool",
                     key);
        return TEXT_NULL;
    }
    jfr_str s;
    if (hops >= JFR_MAX_REF_HOPS || !jfr_str_read(&p, r->pools->end, &s))
        return TEXT_NULL;
    return text_of_str(r, &s, out, hops + 1);
}

static int text_of_str(jfr_resolver *r, const jfr_str *s, jp_strbuf *out, int hops)
{
    if (s->enc == JFR_STR_POOL)
        return text_by_string_key(r, s->n, out, hops);
    if (s->enc == JFR_STR_NULL)
        return TEXT_NULL;
    jfr_text_append(out, s);
    return TEXT_OK;
}

/* Symbol pool entry `key` (a struct with a `string` field). */
static int text_by_symbol_key(jfr_resolver *r, uint64_t key, jp_strbuf *out, int hops)
{
    const uint8_t *p = jfr_pools_get(r->pools, JFR_POOL_SYMBOL, key);
    if (!p) {
        if (key)
            jfr_warn(r->warn, JFR_WARN_MISSING_SYMBOL, "symbol key %" PRIu64 " missing from pool",
                     key);
        return TEXT_NULL;
    }
    uint64_t num;
    bool found;
    jp_strbuf *texts[1] = {out};
    if (!walk_fields(r, r->pools->cls[JFR_POOL_SYMBOL], &p, r->pools->end, &r->f_symbol_string, 1,
                     &num, texts, &found, hops + 1, false))
        return TEXT_NULL;
    return found ? TEXT_OK : TEXT_NULL;
}

/* Text of a field holding a String, a String or Symbol pool key, or an
 * inline Symbol. TEXT_BAD only for bytes that do not decode. */
static int read_text(jfr_resolver *r, const jfr_field *f, const uint8_t **pp, const uint8_t *end,
                     jp_strbuf *out, int hops)
{
    if (hops >= JFR_MAX_REF_HOPS)
        return TEXT_BAD;
    const uint32_t *pc = r->pools->cls;
    if (f->cpool) {
        uint64_t key;
        if (!jfr_varint(pp, end, &key))
            return TEXT_BAD;
        if (f->cls == pc[JFR_POOL_SYMBOL])
            return text_by_symbol_key(r, key, out, hops);
        return text_by_string_key(r, key, out, hops);
    }
    if (r->m->classes[f->cls].prim == JFR_P_STRING) {
        jfr_str s;
        if (!jfr_str_read(pp, end, &s))
            return TEXT_BAD;
        return text_of_str(r, &s, out, hops);
    }
    /* An inline Symbol struct. */
    uint64_t num;
    bool found;
    jp_strbuf *texts[1] = {out};
    if (!walk_fields(r, f->cls, pp, end, &r->f_symbol_string, 1, &num, texts, &found, hops + 1,
                     true))
        return TEXT_BAD;
    return found ? TEXT_OK : TEXT_NULL;
}

/* ---- frames, stacks, threads ---- */

static jp_frame_kind resolve_ftype(jfr_resolver *r, uint64_t key)
{
    uint64_t v;
    if (jp_u64map_get(&r->ftypes, key, &v))
        return (jp_frame_kind)v;
    jp_frame_kind kind = JP_FRAME_UNKNOWN;
    const uint8_t *p = jfr_pools_get(r->pools, JFR_POOL_FRAMETYPE, key);
    if (!p) {
        jfr_warn(r->warn, JFR_WARN_MISSING_FRAMETYPE, "frame type key %" PRIu64 " missing", key);
    } else {
        uint64_t num;
        bool found;
        jp_strbuf *texts[1] = {&r->s1};
        if (walk_fields(r, r->pools->cls[JFR_POOL_FRAMETYPE], &p, r->pools->end, &r->f_ft_desc, 1,
                        &num, texts, &found, 0, false) &&
            found) {
            kind = jp_frame_kind_from_jfr(sb_str(&r->s1), r->s1.len);
            if (kind == JP_FRAME_UNKNOWN)
                jfr_warn(r->warn, JFR_WARN_UNKNOWN_FRAMETYPE, "unknown frame type \"%.60s\"",
                         sb_str(&r->s1));
        }
    }
    jp_u64map_put(&r->ftypes, key, kind);
    return kind;
}

bool jfr_resolve_state(jfr_resolver *r, uint64_t key, jp_strbuf *out)
{
    const uint8_t *p = jfr_pools_get(r->pools, JFR_POOL_STATE, key);
    if (!p)
        return false;
    uint64_t num;
    bool found;
    jp_strbuf *texts[1] = {out};
    jp_strbuf_reset(out);
    return walk_fields(r, r->pools->cls[JFR_POOL_STATE], &p, r->pools->end, &r->f_ts_name, 1, &num,
                       texts, &found, 0, false) &&
           found;
}

/* Class name of class key `ck` into r->s1; false when null or missing. */
static bool resolve_class_name(jfr_resolver *r, uint64_t ck)
{
    const uint8_t *p = jfr_pools_get(r->pools, JFR_POOL_CLASS, ck);
    if (!p) {
        if (ck)
            jfr_warn(r->warn, JFR_WARN_MISSING_CLASS, "class key %" PRIu64 " missing from pool",
                     ck);
        return false;
    }
    uint64_t num;
    bool found;
    jp_strbuf *texts[1] = {&r->s1};
    return walk_fields(r, r->pools->cls[JFR_POOL_CLASS], &p, r->pools->end, &r->f_class_name, 1,
                       &num, texts, &found, 0, false) &&
           found;
}

bool jfr_resolve_old_class(jfr_resolver *r, uint64_t key, jp_strbuf *out)
{
    const uint8_t *p = jfr_pools_get(r->pools, JFR_POOL_OLDOBJECT, key);
    uint64_t ck = 0;
    bool found = false;
    if (!p ||
        !walk_fields(r, r->pools->cls[JFR_POOL_OLDOBJECT], &p, r->pools->end, &r->f_old_type, 1,
                     &ck, NULL, &found, 0, false) ||
        !found || !resolve_class_name(r, ck))
        return false;
    jp_strbuf_reset(out);
    const char *s = sb_str(&r->s1);
    for (size_t i = 0; s[i]; i++) {
        char ch = s[i];
        if (ch == '/')
            ch = '.';
        jp_strbuf_putc(out, ch);
    }
    return true;
}

/* Printed name of method key `mk` seen as a frame of `kind`, into r->out. */
static void method_name(jfr_resolver *r, uint64_t mk, jp_frame_kind kind)
{
    const uint8_t *p = jfr_pools_get(r->pools, JFR_POOL_METHOD, mk);
    bool has_cls = false, has_method = false, has_desc = false;
    if (!p) {
        if (mk)
            jfr_warn(r->warn, JFR_WARN_MISSING_METHOD, "method key %" PRIu64 " missing from pool",
                     mk);
    } else {
        /* The descriptor only matters for Native frames (frame_name.h). */
        uint32_t fields[3] = {r->f_method_type, r->f_method_name,
                              kind == JP_FRAME_NATIVE ? r->f_method_desc : JFR_NONE};
        uint64_t nums[3] = {0, 0, 0};
        jp_strbuf *texts[3] = {NULL, &r->s2, &r->s3};
        bool found[3];
        if (walk_fields(r, r->pools->cls[JFR_POOL_METHOD], &p, r->pools->end, fields, 3, nums,
                        texts, found, 0, false)) {
            has_method = found[1];
            has_desc = found[2];
            has_cls = found[0] && resolve_class_name(r, nums[0]);
        }
    }
    jfr_frame_name(&r->out, kind, sb_str(&r->s1), has_cls ? r->s1.len : 0, has_cls, sb_str(&r->s2),
                   has_method ? r->s2.len : 0, has_method, has_desc ? sb_str(&r->s3) : NULL,
                   has_desc ? r->s3.len : 0);
}

static uint32_t resolve_frame(jfr_resolver *r, uint64_t mk, jp_frame_kind kind)
{
    bool inserted;
    uint64_t *row = jp_u64map_upsert(&r->methods, mk, r->nmethods, &inserted);
    size_t i = (size_t)*row;
    if (inserted) {
        r->mframes = jp_xgrow(r->mframes, &r->mcap, r->nmethods + 1, sizeof *r->mframes);
        for (int k = 0; k < JP_FRAME_KIND_COUNT; k++)
            r->mframes[i][k] = JFR_NONE;
        r->nmethods++;
    }
    if (r->mframes[i][kind] == JFR_NONE) {
        method_name(r, mk, kind);
        r->mframes[i][kind] = jp_profile_frame(r->prof, sb_str(&r->out), r->out.len, kind);
    }
    return r->mframes[i][kind];
}

static uint32_t one_frame_stack(jfr_resolver *r, uint32_t *cache, const char *name)
{
    if (*cache == JFR_NONE) {
        uint32_t f = jp_profile_frame(r->prof, name, strlen(name), JP_FRAME_UNKNOWN);
        *cache = jp_profile_stack(r->prof, &f, 1, false);
    }
    return *cache;
}

/* One frame of a flat frame class (r->sf_flat) by its fields' widths:
 * what walk_fields reads of it, without looking the fields up. */
static bool read_flat_frame(const jfr_resolver *r, const jfr_class *c, const uint8_t **pp,
                            uint64_t *mk, uint64_t *tk)
{
    const jfr_field *f = &r->m->fields[c->field0];
    const uint8_t *end = r->pools->end, *lim = r->pools->lim;
    if (r->sf_plan) {
        const unsigned *n = r->sf_skip;
        uint64_t a, b;
        if ((n[0] && !jfr_varints_skip(pp, end, lim, n[0])) || !jfr_varint_w(pp, end, lim, &a) ||
            (n[1] && !jfr_varints_skip(pp, end, lim, n[1])) || !jfr_varint_w(pp, end, lim, &b) ||
            (n[2] && !jfr_varints_skip(pp, end, lim, n[2])))
            return false;
        *mk = r->sf_mfirst ? a : b;
        *tk = r->sf_mfirst ? b : a;
        return true;
    }
    for (int j = 0; j < (int)c->nfields; j++) {
        uint64_t v = 0;
        if (f[j].width ? !jfr_bytes_skip(pp, end, f[j].width) : !jfr_varint_w(pp, end, lim, &v))
            return false;
        if (j == r->sf_mslot)
            *mk = v;
        else if (j == r->sf_tslot)
            *tk = v;
    }
    return true;
}

/* Decodes the frames array at *pp into r->frames (leaf first). */
static bool read_frames(jfr_resolver *r, const jfr_field *ff, const uint8_t **pp, size_t *depth,
                        bool *truncated)
{
    uint64_t n;
    if (!ff->array || ff->cpool || !jfr_varint(pp, r->pools->end, &n) ||
        n > (uint64_t)(r->pools->end - *pp))
        return false;
    size_t keep = n > JFR_MAX_STACK_DEPTH ? JFR_MAX_STACK_DEPTH : (size_t)n;
    if (keep < n) {
        *truncated = true;
        jfr_warn(r->warn, JFR_WARN_DEEP_STACK, "stack of %" PRIu64 " frames cut to %d", n,
                 JFR_MAX_STACK_DEPTH);
    }
    r->frames = jp_xgrow(r->frames, &r->frames_cap, keep ? keep : 1, sizeof *r->frames);
    uint32_t fields[2] = {r->f_sf_method, r->f_sf_type};
    const jfr_class *fc = r->sf_flat ? &r->m->classes[ff->cls] : NULL;
    if (fc && !r->fcache)
        r->fcache = jp_xcalloc((size_t)1 << FCACHE_BITS, sizeof *r->fcache);
    for (size_t i = 0; i < keep; i++) {
        uint64_t nums[2] = {0, 0};
        bool found[2];
        struct jfr_frame_slot *slot = NULL;
        if (fc) {
            if (!read_flat_frame(r, fc, pp, &nums[0], &nums[1]))
                return false;
            slot = &r->fcache[(nums[0] * 0x9e3779b97f4a7c15ULL ^ nums[1] * 0xc2b2ae3d27d4eb4fULL) >>
                              (64 - FCACHE_BITS)];
            if (slot->frame && slot->mk == nums[0] && slot->tk == nums[1]) {
                r->frames[i] = slot->frame - 1;
                continue;
            }
            found[0] = r->sf_mslot >= 0;
            found[1] = r->sf_tslot >= 0;
        } else if (!walk_fields(r, ff->cls, pp, r->pools->end, fields, 2, nums, NULL, found, 0,
                                true)) {
            return false;
        }
        jp_frame_kind kind = found[1] ? resolve_ftype(r, nums[1]) : JP_FRAME_UNKNOWN;
        r->frames[i] = resolve_frame(r, found[0] ? nums[0] : 0, kind);
        if (slot)
            *slot = (struct jfr_frame_slot){nums[0], nums[1], r->frames[i] + 1};
    }
    *depth = keep;
    return true;
}

static uint32_t decode_stack(jfr_resolver *r, const uint8_t *p)
{
    const jfr_class *c = &r->m->classes[r->pools->cls[JFR_POOL_STACK]];
    bool truncated = false, ok = false;
    size_t depth = 0;
    for (uint32_t i = 0; i < c->nfields; i++) {
        uint32_t fi = c->field0 + i;
        const jfr_field *f = &r->m->fields[fi];
        if (fi == r->f_st_frames) {
            ok = read_frames(r, f, &p, &depth, &truncated);
            break;
        }
        if (fi == r->f_st_truncated && !f->array && !f->cpool && f->cls != JFR_NONE &&
            r->m->classes[f->cls].prim == JFR_P_BYTE && p < r->pools->end) {
            truncated |= *p++ != 0;
            continue;
        }
        if (jfr_skip_field(r->m, f, &p, r->pools->end, 0, &quiet))
            break;
    }
    if (!ok) {
        jfr_warn(r->warn, JFR_WARN_SHAPE, "stack trace without a decodable frames array");
        return one_frame_stack(r, &r->unknown_stack, "[unknown]");
    }
    if (depth == 0)
        return one_frame_stack(r, &r->no_stack, "[no stack]");
    /* JFR stores the leaf first; the model wants the root first. */
    for (size_t i = 0, j = depth - 1; i < j; i++, j--) {
        uint32_t t = r->frames[i];
        r->frames[i] = r->frames[j];
        r->frames[j] = t;
    }
    return jp_profile_stack(r->prof, r->frames, depth, truncated);
}

uint32_t jfr_resolve_stack(jfr_resolver *r, uint64_t key)
{
    uint64_t v;
    if (jp_u64map_get(&r->stacks, key, &v))
        return (uint32_t)v;
    uint32_t s;
    const uint8_t *p = jfr_pools_get(r->pools, JFR_POOL_STACK, key);
    jfr_resolver *prev = !p && key && r->prev_get ? r->prev_get(r->prev_arg) : NULL;
    if (p) {
        s = decode_stack(r, p);
    } else if (key && prev &&
               (jp_u64map_get(&prev->stacks, key, &v) ||
                jfr_pools_get(prev->pools, JFR_POOL_STACK, key))) {
        jfr_warn(r->warn, JFR_WARN_PREV_CHUNK,
                 "stack trace key %" PRIu64 " taken from the previous chunk", key);
        s = jfr_resolve_stack(prev, key);
    } else if (key == 0) {
        s = one_frame_stack(r, &r->no_stack, "[no stack]");
    } else {
        jfr_warn(r->warn, JFR_WARN_MISSING_STACK, "stack trace key %" PRIu64 " missing from pool",
                 key);
        s = one_frame_stack(r, &r->unknown_stack, "[unknown]");
    }
    jp_u64map_put(&r->stacks, key, s);
    return s;
}

uint32_t jfr_resolve_thread(jfr_resolver *r, uint64_t key)
{
    uint64_t v;
    if (jp_u64map_get(&r->threads, key, &v))
        return (uint32_t)v;
    const uint8_t *p = jfr_pools_get(r->pools, JFR_POOL_THREAD, key);
    jfr_resolver *prev = !p && key && r->prev_get ? r->prev_get(r->prev_arg) : NULL;
    if (!p && key && prev &&
        (jp_u64map_get(&prev->threads, key, &v) ||
         jfr_pools_get(prev->pools, JFR_POOL_THREAD, key))) {
        jfr_warn(r->warn, JFR_WARN_PREV_CHUNK,
                 "thread key %" PRIu64 " taken from the previous chunk", key);
        uint32_t t = jfr_resolve_thread(prev, key);
        jp_u64map_put(&r->threads, key, t);
        return t;
    }
    uint32_t fields[3] = {r->f_th_javaname, r->f_th_osname, r->f_th_osid};
    uint64_t nums[3] = {0, 0, 0};
    jp_strbuf *texts[3] = {&r->s1, &r->s2, NULL};
    bool found[3] = {false, false, false};
    if (!p && key)
        jfr_warn(r->warn, JFR_WARN_MISSING_THREAD, "thread key %" PRIu64 " missing from pool", key);
    /* the Java name, else the OS name, else the OS thread id */
    const char *name = "[unknown thread]";
    size_t nlen = strlen(name);
    char buf[40];
    if (p && walk_fields(r, r->pools->cls[JFR_POOL_THREAD], &p, r->pools->end, fields, 3, nums,
                         texts, found, 0, false)) {
        if (found[0] && r->s1.len) {
            name = r->s1.data;
            nlen = r->s1.len;
        } else if (found[1] && r->s2.len) {
            name = r->s2.data;
            nlen = r->s2.len;
        } else if (found[2]) {
            int n = snprintf(buf, sizeof buf, "[tid=%" PRIu64 "]", nums[2]);
            name = buf;
            nlen = (size_t)n;
        }
    }
    uint32_t t = jp_profile_thread(r->prof, name, nlen);
    jp_u64map_put(&r->threads, key, t);
    return t;
}
