/* meta.c - metadata event parsing and shape-driven skipping of values. */
#include "jfr/meta.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void jfr_meta_init(jfr_meta *m)
{
    memset(m, 0, sizeof *m);
    jp_u64map_init(&m->by_id);
    jp_u64map_init(&m->by_name);
}

void jfr_meta_cleanup(jfr_meta *m)
{
    free(m->text);
    free(m->str_off);
    free(m->classes);
    free(m->fields);
    jp_u64map_cleanup(&m->by_id);
    jp_u64map_cleanup(&m->by_name);
    memset(m, 0, sizeof *m);
}

jfr_meta *jfr_meta_new(void)
{
    jfr_meta *m = jp_xmalloc(sizeof *m);
    jfr_meta_init(m);
    m->refs = 1;
    return m;
}

jfr_meta *jfr_meta_ref(jfr_meta *m)
{
    m->refs++;
    return m;
}

void jfr_meta_unref(jfr_meta *m)
{
    if (!m || --m->refs > 0)
        return;
    jfr_meta_cleanup(m);
    free(m);
}

/* Element roles in the tree root > metadata > class > field; everything
 * else (annotations, settings, region) is parsed for shape and ignored. */
enum { ROLE_TOP, ROLE_ROOT, ROLE_METADATA, ROLE_CLASS, ROLE_FIELD, ROLE_OTHER };

typedef struct meta_parse {
    jfr_meta *m;
    const uint8_t *end;
    const jfr_where *w;
} meta_parse;

static jp_err meta_string_table(meta_parse *mp, const uint8_t **pp)
{
    jfr_meta *m = mp->m;
    const uint8_t *p = *pp;
    uint64_t n;
    if (!jfr_varint(&p, mp->end, &n))
        return jfr_fail(mp->w, JP_ERR_FORMAT, p, "metadata string count runs past the event");
    if (n > (uint64_t)(mp->end - p))
        return jfr_fail(mp->w, JP_ERR_LIMIT, *pp, "metadata string count %llu exceeds limit",
                        (unsigned long long)n);
    jp_strbuf tmp;
    jp_strbuf_init(&tmp, 0);
    m->str_off = jp_xreallocarray(NULL, n ? n : 1, sizeof *m->str_off);
    m->str_cap = n;
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *at = p;
        jfr_str s;
        if (!jfr_str_read(&p, mp->end, &s) || s.enc == JFR_STR_POOL) {
            jp_strbuf_cleanup(&tmp);
            return jfr_fail(mp->w, JP_ERR_FORMAT, at, "bad metadata string %llu",
                            (unsigned long long)i);
        }
        const uint8_t *src = s.p;
        size_t len = s.enc == JFR_STR_UTF8 && s.n <= JFR_MAX_TEXT ? (size_t)s.n : 0;
        if (s.enc != JFR_STR_UTF8 || s.n > JFR_MAX_TEXT) {
            /* Only UTF-8 can be copied as it is. */
            jp_strbuf_reset(&tmp);
            jfr_text_append(&tmp, &s);
            src = (const uint8_t *)tmp.data;
            len = tmp.len;
        }
        m->text = jp_xgrow(m->text, &m->text_cap, m->text_len + len + 1, 1);
        m->str_off[i] = (uint32_t)m->text_len;
        if (len)
            memcpy(m->text + m->text_len, src, len);
        m->text_len += len;
        m->text[m->text_len++] = '\0';
        m->nstr = i + 1;
    }
    jp_strbuf_cleanup(&tmp);
    *pp = p;
    return JP_OK;
}

static bool meta_parse_u64(const char *s, uint64_t *out)
{
    if (!*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

/* Reads a varint string index and checks it. */
static bool meta_index(meta_parse *mp, const uint8_t **p, uint32_t *idx)
{
    uint64_t v;
    if (!jfr_varint(p, mp->end, &v) || v >= mp->m->nstr)
        return false;
    *idx = (uint32_t)v;
    return true;
}

/* Applies one attribute to the class or field the element creates. */
static bool meta_attr(meta_parse *mp, int role, const char *key, const char *val)
{
    jfr_meta *m = mp->m;
    if (role == ROLE_CLASS) {
        jfr_class *c = &m->classes[m->nclasses - 1];
        if (!strcmp(key, "id"))
            return meta_parse_u64(val, &c->id);
        if (!strcmp(key, "superType"))
            c->event = !strcmp(val, "jdk.jfr.Event");
    } else if (role == ROLE_FIELD) {
        jfr_field *f = &m->fields[m->nfields - 1];
        if (!strcmp(key, "class"))
            return meta_parse_u64(val, &f->type_id);
        if (!strcmp(key, "constantPool"))
            f->cpool = !strcmp(val, "true");
        else if (!strcmp(key, "dimension"))
            f->array = strcmp(val, "0") != 0;
    }
    return true;
}

static jp_err meta_element(meta_parse *mp, const uint8_t **pp, int depth, int parent);

static int meta_role(meta_parse *mp, int parent, const char *name)
{
    if (parent == ROLE_TOP)
        return ROLE_ROOT;
    if (parent == ROLE_ROOT && !strcmp(name, "metadata"))
        return ROLE_METADATA;
    if (parent == ROLE_METADATA && !strcmp(name, "class"))
        return ROLE_CLASS;
    if (parent == ROLE_CLASS && !strcmp(name, "field"))
        return ROLE_FIELD;
    return ROLE_OTHER;
}

static void meta_begin(jfr_meta *m, int role)
{
    if (role == ROLE_CLASS) {
        m->classes = jp_xgrow(m->classes, &m->classes_cap, m->nclasses + 1, sizeof *m->classes);
        jfr_class *c = &m->classes[m->nclasses++];
        memset(c, 0, sizeof *c);
        c->name = JFR_NONE;
        c->id = UINT64_MAX;
        c->field0 = (uint32_t)m->nfields;
    } else if (role == ROLE_FIELD) {
        m->fields = jp_xgrow(m->fields, &m->fields_cap, m->nfields + 1, sizeof *m->fields);
        jfr_field *f = &m->fields[m->nfields++];
        memset(f, 0, sizeof *f);
        f->name = JFR_NONE;
        f->cls = JFR_NONE;
        f->type_id = UINT64_MAX;
        m->classes[m->nclasses - 1].nfields++;
    }
}

static jp_err meta_attrs(meta_parse *mp, const uint8_t **pp, int role)
{
    jfr_meta *m = mp->m;
    const uint8_t *p = *pp;
    uint64_t n;
    if (!jfr_varint(&p, mp->end, &n) || n > (uint64_t)(mp->end - p) / 2)
        return jfr_fail(mp->w, JP_ERR_LIMIT, *pp, "metadata attribute count exceeds limit");
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *at = p;
        uint32_t k, v;
        if (!meta_index(mp, &p, &k) || !meta_index(mp, &p, &v))
            return jfr_fail(mp->w, JP_ERR_FORMAT, at, "bad metadata attribute");
        const char *key = jfr_meta_str(m, k);
        const char *val = jfr_meta_str(m, v);
        if (role == ROLE_CLASS && !strcmp(key, "name"))
            m->classes[m->nclasses - 1].name = v;
        else if (role == ROLE_FIELD && !strcmp(key, "name"))
            m->fields[m->nfields - 1].name = v;
        else if (!meta_attr(mp, role, key, val))
            return jfr_fail(mp->w, JP_ERR_FORMAT, at, "bad metadata attribute %s=\"%s\"", key, val);
    }
    *pp = p;
    return JP_OK;
}

static jp_err meta_element(meta_parse *mp, const uint8_t **pp, int depth, int parent)
{
    if (depth >= JFR_MAX_META_DEPTH)
        return jfr_fail(mp->w, JP_ERR_LIMIT, *pp, "metadata nested deeper than %d",
                        JFR_MAX_META_DEPTH);
    const uint8_t *p = *pp;
    uint32_t name;
    if (!meta_index(mp, &p, &name))
        return jfr_fail(mp->w, JP_ERR_FORMAT, *pp, "bad metadata element name");
    int role = meta_role(mp, parent, jfr_meta_str(mp->m, name));
    meta_begin(mp->m, role);
    jp_err rc = meta_attrs(mp, &p, role);
    if (rc)
        return rc;
    const uint8_t *at = p;
    uint64_t n;
    /* A child takes at least three bytes (name, attribute and child counts). */
    if (!jfr_varint(&p, mp->end, &n) || n > (uint64_t)(mp->end - p) / 3)
        return jfr_fail(mp->w, JP_ERR_LIMIT, at, "metadata child count exceeds limit");
    for (uint64_t i = 0; i < n; i++)
        if ((rc = meta_element(mp, &p, depth + 1, role)))
            return rc;
    *pp = p;
    return JP_OK;
}

static uint8_t meta_prim_of(const char *name)
{
    static const struct {
        const char *name;
        uint8_t prim;
    } prims[] = {
        {"int", JFR_P_VARINT},  {"long", JFR_P_VARINT},  {"short", JFR_P_VARINT},
        {"char", JFR_P_VARINT}, {"boolean", JFR_P_BYTE}, {"byte", JFR_P_BYTE},
        {"float", JFR_P_F32},   {"double", JFR_P_F64},   {"java.lang.String", JFR_P_STRING},
    };
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (!strcmp(prims[i].name, name))
            return prims[i].prim;
    return JFR_P_UNKNOWN;
}

/* True when a value of class c occupies no bytes (structs of empty structs).
 * state: 0 unknown, 1 in progress (a cycle counts as not empty), 2 empty, 3 not. */
static bool meta_zero(jfr_meta *m, uint32_t c, uint8_t *state, int depth)
{
    if (state[c] >= 2)
        return state[c] == 2;
    if (state[c] == 1 || depth > JFR_MAX_NEST || m->classes[c].prim != JFR_P_STRUCT)
        return false;
    state[c] = 1;
    bool zero = true;
    for (uint32_t i = 0; i < m->classes[c].nfields && zero; i++) {
        const jfr_field *f = &m->fields[m->classes[c].field0 + i];
        zero =
            !f->array && !f->cpool && f->cls != JFR_NONE && meta_zero(m, f->cls, state, depth + 1);
    }
    state[c] = zero ? 2 : 3;
    return zero;
}

/* The wire width of field f inside a flat class (0: a varint), or -1 when
 * its values do not have one fixed form. */
static int meta_width(const jfr_meta *m, const jfr_field *f)
{
    if (f->array)
        return -1;
    if (f->cpool)
        return 0;
    if (f->cls == JFR_NONE)
        return -1;
    switch (m->classes[f->cls].prim) {
    case JFR_P_VARINT:
        return 0;
    case JFR_P_BYTE:
        return 1;
    case JFR_P_F32:
        return 4;
    case JFR_P_F64:
        return 8;
    default:
        return -1;
    }
}

static void meta_flat(jfr_meta *m, jfr_class *c)
{
    c->flat = JFR_FLAT_NO;
    if (c->prim != JFR_P_STRUCT)
        return;
    uint8_t flat = JFR_FLAT_VARINTS;
    for (uint32_t i = 0; i < c->nfields; i++) {
        jfr_field *f = &m->fields[c->field0 + i];
        int wd = meta_width(m, f);
        if (wd < 0)
            return;
        f->width = (uint8_t)wd;
        if (wd)
            flat = JFR_FLAT_MIXED;
    }
    c->flat = flat;
}

static void meta_finish(jfr_meta *m)
{
    for (size_t i = 0; i < m->nclasses; i++) {
        jp_u64map_put(&m->by_id, m->classes[i].id, i);
        const char *name = jfr_meta_class_name(m, (uint32_t)i);
        /* Equal hashes of different names probe on to the next key. */
        uint64_t key = jp_hash_bytes(name, strlen(name));
        bool inserted;
        while (jp_u64map_upsert(&m->by_name, key, i, &inserted), !inserted)
            key++;
    }
    for (size_t i = 0; i < m->nfields; i++)
        m->fields[i].cls = jfr_meta_class_by_id(m, m->fields[i].type_id);
    for (size_t i = 0; i < m->nclasses; i++) {
        jfr_class *c = &m->classes[i];
        c->prim = c->nfields ? JFR_P_STRUCT : meta_prim_of(jfr_meta_class_name(m, (uint32_t)i));
    }
    for (size_t i = 0; i < m->nclasses; i++)
        meta_flat(m, &m->classes[i]);
    uint8_t *state = jp_xcalloc(m->nclasses ? m->nclasses : 1, 1);
    for (size_t i = 0; i < m->nclasses; i++)
        m->classes[i].zero_size = meta_zero(m, (uint32_t)i, state, 0);
    free(state);
}

jp_err jfr_meta_parse(jfr_meta *m, const uint8_t *ev, const uint8_t *end, const jfr_where *w)
{
    const uint8_t *p = ev;
    uint64_t size, type, skip;
    if (!jfr_varint(&p, end, &size) || size == 0 || size > (uint64_t)(end - ev))
        return jfr_fail(w, JP_ERR_FORMAT, ev, "metadata event size runs past the chunk");
    meta_parse mp = {.m = m, .end = ev + size, .w = w};
    if (!jfr_varint(&p, mp.end, &type) || type != 0)
        return jfr_fail(w, JP_ERR_FORMAT, ev, "metadata offset does not point at a metadata event");
    for (int i = 0; i < 3; i++) /* start time, duration, metadata id */
        if (!jfr_varint(&p, mp.end, &skip))
            return jfr_fail(w, JP_ERR_FORMAT, p, "metadata event header runs past the event");
    jp_err rc = meta_string_table(&mp, &p);
    if (!rc)
        rc = meta_element(&mp, &p, 0, ROLE_TOP);
    if (rc)
        return rc;
    meta_finish(m);
    return JP_OK;
}

uint32_t jfr_meta_class(const jfr_meta *m, const char *name)
{
    uint64_t key = jp_hash_bytes(name, strlen(name)), idx;
    /* The first class of a name wins, as it was inserted first. */
    for (; jp_u64map_get(&m->by_name, key, &idx); key++)
        if (!strcmp(jfr_meta_class_name(m, (uint32_t)idx), name))
            return (uint32_t)idx;
    return JFR_NONE;
}

uint32_t jfr_meta_class_by_id(const jfr_meta *m, uint64_t id)
{
    uint64_t v;
    return jp_u64map_get(&m->by_id, id, &v) ? (uint32_t)v : JFR_NONE;
}

uint32_t jfr_meta_field(const jfr_meta *m, uint32_t cls, const char *name)
{
    if (cls == JFR_NONE)
        return JFR_NONE;
    const jfr_class *c = &m->classes[cls];
    for (uint32_t i = 0; i < c->nfields; i++) {
        const jfr_field *f = &m->fields[c->field0 + i];
        if (f->name != JFR_NONE && !strcmp(jfr_meta_str(m, f->name), name))
            return c->field0 + i;
    }
    return JFR_NONE;
}

const char *jfr_meta_class_name(const jfr_meta *m, uint32_t cls)
{
    if (cls == JFR_NONE || m->classes[cls].name == JFR_NONE)
        return "";
    return jfr_meta_str(m, m->classes[cls].name);
}

/* Eight bytes at a time while eight lie before `end`: the integers end at
 * the bytes whose high bit is clear, except that a ninth byte ends one
 * whatever its high bit (input.h), so a word where an integer may reach
 * nine bytes is left to the byte loop. */
bool jfr_varints_skip_n(const uint8_t **pp, const uint8_t *end, uint64_t count)
{
    const uint8_t *p = *pp;
    unsigned run = 0; /* bytes of the integer under way before p */
    while (count && end - p >= 8) {
        uint64_t ends = ~jfr_le64(p) & 0x8080808080808080ULL;
        if (!ends || run + ((unsigned)__builtin_ctzll(ends) >> 3) >= 8)
            break;
        /* the number of ends: each 0x80 bit as a 1 in its byte, summed into the top byte */
        uint64_t c = ((ends >> 7) * 0x0101010101010101ULL) >> 56;
        if (c >= count) {
            for (uint64_t i = 1; i < count; i++)
                ends &= ends - 1;
            *pp = p + ((unsigned)__builtin_ctzll(ends) >> 3) + 1;
            return true;
        }
        count -= c;
        run = 7 - ((63u - (unsigned)__builtin_clzll(ends)) >> 3);
        p += 8;
    }
    while (count) {
        if (p >= end)
            return false;
        if (*p++ < 0x80 || run == 8) {
            count--;
            run = 0;
        } else {
            run++;
        }
    }
    *pp = p;
    return true;
}

/* Skips n values of the flat class c. False, the cursor unchanged, when
 * they run past `end`: the generic walk then says where. */
static bool flat_skip(const jfr_meta *m, const jfr_class *c, const uint8_t **pp, const uint8_t *end,
                      uint64_t n)
{
    if (c->flat == JFR_FLAT_VARINTS) {
        uint64_t count;
        return !__builtin_mul_overflow(n, (uint64_t)c->nfields, &count) &&
               jfr_varints_skip_n(pp, end, count);
    }
    const uint8_t *p = *pp;
    const jfr_field *f = &m->fields[c->field0];
    for (uint64_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < c->nfields; j++)
            if (!(f[j].width ? jfr_bytes_skip(&p, end, f[j].width) : jfr_varint_skip(&p, end)))
                return false;
    *pp = p;
    return true;
}

jp_err jfr_skip_class(const jfr_meta *m, uint32_t cls, const uint8_t **pp, const uint8_t *end,
                      int depth, const jfr_where *w)
{
    if (cls == JFR_NONE)
        return jfr_fail(w, JP_ERR_FORMAT, *pp, "value of an undefined type");
    const jfr_class *c = &m->classes[cls];
    bool ok = true;
    switch (c->prim) {
    case JFR_P_VARINT:
        ok = jfr_varint_skip(pp, end);
        break;
    case JFR_P_BYTE:
        ok = jfr_bytes_skip(pp, end, 1);
        break;
    case JFR_P_F32:
        ok = jfr_bytes_skip(pp, end, 4);
        break;
    case JFR_P_F64:
        ok = jfr_bytes_skip(pp, end, 8);
        break;
    case JFR_P_STRING:
        ok = jfr_str_skip(pp, end);
        break;
    case JFR_P_UNKNOWN:
        return jfr_fail(w, JP_ERR_FORMAT, *pp, "cannot decode type %s (no fields, not a primitive)",
                        jfr_meta_class_name(m, cls));
    default:
        if (depth >= JFR_MAX_NEST)
            return jfr_fail(w, JP_ERR_LIMIT, *pp, "values nested deeper than %d in type %s",
                            JFR_MAX_NEST, jfr_meta_class_name(m, cls));
        if (c->flat && flat_skip(m, c, pp, end, 1))
            return JP_OK;
        for (uint32_t i = 0; i < c->nfields; i++) {
            jp_err rc = jfr_skip_field(m, &m->fields[c->field0 + i], pp, end, depth + 1, w);
            if (rc)
                return rc;
        }
        return JP_OK;
    }
    if (!ok)
        return jfr_fail(w, JP_ERR_FORMAT, *pp, "value of type %s runs past its event",
                        jfr_meta_class_name(m, cls));
    return JP_OK;
}

static jp_err skip_array(const jfr_meta *m, const jfr_field *f, const uint8_t **pp,
                         const uint8_t *end, int depth, const jfr_where *w)
{
    const uint8_t *at = *pp;
    uint64_t n;
    if (!jfr_varint(pp, end, &n))
        return jfr_fail(w, JP_ERR_FORMAT, at, "array count runs past its event");
    const jfr_class *c = f->cls == JFR_NONE ? NULL : &m->classes[f->cls];
    if (!f->cpool && c && c->zero_size)
        return JP_OK; /* n empty values: nothing to read */
    /* Every remaining element takes at least one byte. */
    if (n > (uint64_t)(end - *pp))
        return jfr_fail(w, JP_ERR_LIMIT, at, "array count %llu exceeds limit",
                        (unsigned long long)n);
    if (!f->cpool && c && c->prim == JFR_P_BYTE) {
        *pp += n;
        return JP_OK;
    }
    /* Keys and flat values by their widths; what does not check out is
     * walked again below, to be reported where it breaks. */
    if (f->cpool ? jfr_varints_skip_n(pp, end, n)
                 : c && c->flat && depth < JFR_MAX_NEST && flat_skip(m, c, pp, end, n))
        return JP_OK;
    for (uint64_t i = 0; i < n; i++) {
        jp_err rc;
        if (f->cpool)
            rc = jfr_varint_skip(pp, end)
                     ? JP_OK
                     : jfr_fail(w, JP_ERR_FORMAT, *pp, "array runs past its event");
        else
            rc = jfr_skip_class(m, f->cls, pp, end, depth, w);
        if (rc)
            return rc;
    }
    return JP_OK;
}

jp_err jfr_skip_field(const jfr_meta *m, const jfr_field *f, const uint8_t **pp, const uint8_t *end,
                      int depth, const jfr_where *w)
{
    if (f->array)
        return skip_array(m, f, pp, end, depth, w);
    if (f->cpool) {
        if (!jfr_varint_skip(pp, end))
            return jfr_fail(w, JP_ERR_FORMAT, *pp, "pool reference runs past its event");
        return JP_OK;
    }
    return jfr_skip_class(m, f->cls, pp, end, depth, w);
}
