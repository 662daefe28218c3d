/* protobuf.c - the protocol-buffers wire format (see protobuf.h). */
#include "wire/protobuf.h"

#include <string.h>

/* ---- writing ---- */

jp_err jp_pb_put_tag(jp_strbuf *b, unsigned field, unsigned wire)
{
    return jp_strbuf_put_varint(b, ((uint64_t)field << 3) | wire);
}

jp_err jp_pb_put_uint(jp_strbuf *b, unsigned field, uint64_t v)
{
    jp_err rc = jp_pb_put_tag(b, field, JP_PB_VARINT);
    return rc ? rc : jp_strbuf_put_varint(b, v);
}

jp_err jp_pb_put_fixed64(jp_strbuf *b, unsigned field, uint64_t v)
{
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(v >> (8 * i));
    jp_err rc = jp_pb_put_tag(b, field, JP_PB_I64);
    return rc ? rc : jp_strbuf_append(b, le, sizeof le);
}

jp_err jp_pb_put_bytes(jp_strbuf *b, unsigned field, const void *data, size_t len)
{
    jp_err rc = jp_pb_put_tag(b, field, JP_PB_LEN);
    if (!rc)
        rc = jp_strbuf_put_varint(b, len);
    return rc ? rc : jp_strbuf_append(b, len ? data : "", len);
}

jp_err jp_pb_put_message(jp_strbuf *b, unsigned field, jp_strbuf *msg)
{
    jp_err rc = jp_pb_put_bytes(b, field, msg->data ? msg->data : "", msg->len);
    jp_strbuf_reset(msg);
    return rc;
}

jp_err jp_pb_put_pair(jp_strbuf *b, jp_strbuf *scratch, unsigned field, uint64_t v1, uint64_t v2)
{
    jp_err rc = jp_pb_put_uint(scratch, 1, v1);
    if (!rc)
        rc = jp_pb_put_uint(scratch, 2, v2);
    return rc ? rc : jp_pb_put_message(b, field, scratch);
}

/* ---- reading ---- */

void jp_pb_reader_init(jp_pb_reader *r, const uint8_t *data, size_t len, const char *what)
{
    r->p = r->start = data;
    r->end = data + len;
    r->base = 0;
    r->what = what;
}

void jp_pb_reader_sub(jp_pb_reader *sub, const jp_pb_reader *parent, const jp_pb_field *f,
                      const char *what)
{
    sub->p = sub->start = f->data;
    sub->end = f->data + f->len;
    sub->base = parent->base + (size_t)(f->data - parent->start);
    sub->what = what;
}

static size_t pb_off(const jp_pb_reader *r, const uint8_t *at)
{
    return r->base + (size_t)(at - r->start);
}

/* A varint of at most 10 bytes that ends before `end`. */
static bool pb_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (p >= end)
            return false;
        uint8_t c = *p++;
        if (shift == 63 && c > 1)
            return false; /* more than 64 bits */
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *pp = p;
            *v = x;
            return true;
        }
    }
    return false;
}

static uint64_t pb_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

jp_err jp_pb_next(jp_pb_reader *r, jp_pb_field *f, bool *more, jp_error *err)
{
    *more = false;
    if (r->p >= r->end)
        return JP_OK;
    memset(f, 0, sizeof *f);
    f->off = pb_off(r, r->p);
    uint64_t tag;
    if (!pb_varint(&r->p, r->end, &tag))
        return jp_error_set(err, JP_ERR_FORMAT, "protobuf %s @%zu: broken field tag", r->what,
                            f->off);
    if ((tag >> 3) == 0 || (tag >> 3) > 536870911u)
        return jp_error_set(err, JP_ERR_FORMAT, "protobuf %s @%zu: field number %llu is invalid",
                            r->what, f->off, (unsigned long long)(tag >> 3));
    f->num = (uint32_t)(tag >> 3);
    f->wire = (uint8_t)(tag & 7);
    size_t left;
    switch (f->wire) {
    case JP_PB_VARINT:
        if (!pb_varint(&r->p, r->end, &f->v))
            return jp_error_set(err, JP_ERR_FORMAT, "protobuf %s @%zu: field %u: broken varint",
                                r->what, f->off, f->num);
        break;
    case JP_PB_I64:
    case JP_PB_I32: {
        unsigned n = f->wire == JP_PB_I64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n)
            return jp_error_set(err, JP_ERR_TRUNCATED,
                                "protobuf %s @%zu: field %u: %u-byte value runs past the end",
                                r->what, f->off, f->num, n);
        f->v = pb_le(r->p, n);
        r->p += n;
        break;
    }
    case JP_PB_LEN:
        if (!pb_varint(&r->p, r->end, &f->v))
            return jp_error_set(err, JP_ERR_FORMAT, "protobuf %s @%zu: field %u: broken length",
                                r->what, f->off, f->num);
        left = (size_t)(r->end - r->p);
        if (f->v > left)
            return jp_error_set(err, JP_ERR_TRUNCATED,
                                "protobuf %s @%zu: field %u: length %llu runs past the end of the "
                                "message (%zu bytes left)",
                                r->what, f->off, f->num, (unsigned long long)f->v, left);
        f->data = r->p;
        f->len = (size_t)f->v;
        r->p += f->len;
        break;
    default:
        return jp_error_set(err, JP_ERR_FORMAT,
                            "protobuf %s @%zu: field %u: wire type %u is not supported", r->what,
                            f->off, f->num, f->wire);
    }
    *more = true;
    return JP_OK;
}

jp_err jp_pb_wrong_wire(const jp_pb_reader *r, const jp_pb_field *f, jp_error *err)
{
    return jp_error_set(err, JP_ERR_FORMAT,
                        "protobuf %s @%zu: field %u has wire type %u, which does not fit its type",
                        r->what, f->off, f->num, f->wire);
}

jp_err jp_pb_values_init(jp_pb_values *it, const jp_pb_reader *r, const jp_pb_field *f,
                         unsigned fixed, jp_error *err)
{
    memset(it, 0, sizeof *it);
    it->fixed = fixed;
    it->num = f->num;
    it->off = f->off;
    it->what = r->what;
    if (f->wire == JP_PB_LEN) {
        if (fixed && f->len % fixed)
            return jp_error_set(err, JP_ERR_FORMAT,
                                "protobuf %s @%zu: field %u: packed run of %zu bytes is not a "
                                "multiple of %u",
                                r->what, f->off, f->num, f->len, fixed);
        it->p = f->data;
        it->end = f->data + f->len;
        return JP_OK;
    }
    if ((fixed == 0 && f->wire != JP_PB_VARINT) || (fixed == 8 && f->wire != JP_PB_I64) ||
        (fixed == 4 && f->wire != JP_PB_I32))
        return jp_pb_wrong_wire(r, f, err);
    it->one = true;
    it->single = f->v;
    return JP_OK;
}

jp_err jp_pb_values_next(jp_pb_values *it, uint64_t *v, bool *more, jp_error *err)
{
    *more = false;
    if (it->one) {
        if (!it->done) {
            *v = it->single;
            it->done = *more = true;
        }
        return JP_OK;
    }
    if (it->p >= it->end)
        return JP_OK;
    if (it->fixed) {
        *v = pb_le(it->p, it->fixed);
        it->p += it->fixed;
    } else if (!pb_varint(&it->p, it->end, v)) {
        return jp_error_set(err, JP_ERR_FORMAT,
                            "protobuf %s @%zu: field %u: broken varint in a packed run", it->what,
                            it->off, it->num);
    }
    *more = true;
    return JP_OK;
}

size_t jp_pb_values_fixed_count(const jp_pb_values *it)
{
    if (it->one)
        return 1;
    return it->fixed ? (size_t)(it->end - it->p) / it->fixed : 0;
}
