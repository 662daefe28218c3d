/* gzip.c - bounded gzip (see gzip.h). */
#include "wire/gzip.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/xalloc.h"

bool jp_gzip_is(const void *data, size_t len)
{
    const uint8_t *p = data;
    return len >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

jp_err jp_gzip_append(const void *src, size_t len, jp_strbuf *out, jp_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return jp_error_set(err, JP_ERR_INTERNAL, "gzip: deflateInit2 failed");
    uLong bound = deflateBound(&z, (uLong)len);
    uint8_t *buf = jp_xmalloc(bound);
    z.next_in = (Bytef *)(len ? src : "");
    z.avail_in = (uInt)len;
    z.next_out = buf;
    z.avail_out = (uInt)bound;
    int zrc = deflate(&z, Z_FINISH);
    size_t n = bound - z.avail_out;
    deflateEnd(&z);
    jp_err rc = zrc == Z_STREAM_END ? jp_strbuf_append(out, buf, n) : JP_ERR_INTERNAL;
    free(buf);
    if (rc)
        return jp_error_set(err, rc, "gzip: compressing %zu bytes failed", len);
    return JP_OK;
}

jp_err jp_gzip_decompress(const void *src, size_t len, size_t max_out, uint8_t **out,
                          size_t *out_len, jp_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return jp_error_set(err, JP_ERR_INTERNAL, "gzip: inflateInit2 failed");
    jp_strbuf b; /* the cap stops a bomb at max_out bytes */
    jp_strbuf_init(&b, max_out + 1);
    uint8_t chunk[16384];
    const uint8_t *in = src;
    size_t pos = 0;
    jp_err rc = JP_OK;
    for (;;) {
        size_t give = len - pos > (1u << 30) ? (1u << 30) : len - pos;
        z.next_in = (Bytef *)(in + pos);
        z.avail_in = (uInt)give;
        z.next_out = chunk;
        z.avail_out = sizeof chunk;
        int zrc = inflate(&z, Z_NO_FLUSH);
        pos += give - z.avail_in;
        size_t n = sizeof chunk - z.avail_out;
        if ((n && jp_strbuf_append(&b, chunk, n) != JP_OK) || b.len > max_out) {
            rc = jp_error_set(err, JP_ERR_LIMIT,
                              "gzip: decompressed size exceeds the limit of %zu bytes", max_out);
            break;
        }
        if (zrc == Z_STREAM_END) {
            if (pos == len)
                break;
            /* another member follows (gzip allows concatenation) */
            if (inflateReset(&z) != Z_OK) {
                rc = jp_error_set(err, JP_ERR_INTERNAL, "gzip: inflateReset failed");
                break;
            }
        } else if (zrc != Z_OK && zrc != Z_BUF_ERROR) {
            rc = jp_error_set(err, JP_ERR_FORMAT, "gzip: corrupt input at byte %zu: %s", pos,
                              z.msg ? z.msg : "inflate failed");
            break;
        } else if (z.avail_out > 0 && pos == len) {
            rc = jp_error_set(err, JP_ERR_TRUNCATED, "gzip: input ends inside a member (%zu bytes)",
                              len);
            break;
        }
    }
    inflateEnd(&z);
    if (rc) {
        jp_strbuf_cleanup(&b);
        return rc;
    }
    *out_len = b.len;
    *out = (uint8_t *)jp_strbuf_take(&b);
    return JP_OK;
}
