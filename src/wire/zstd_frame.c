#include "wire/zstd_frame.h"

#include <stdlib.h>
#include <zstd.h>

#include "base/xalloc.h"

jp_err jp_zstd_compress(const void *src, size_t len, int level, uint8_t **out, size_t *out_len,
                        jp_error *err)
{
    size_t bound = ZSTD_compressBound(len);
    uint8_t *buf = jp_xmalloc(bound);
    size_t n = ZSTD_compress(buf, bound, src, len, level);
    if (ZSTD_isError(n)) {
        free(buf);
        return jp_error_set(err, JP_ERR_INTERNAL, "zstd compression failed: %s",
                            ZSTD_getErrorName(n));
    }
    *out = buf;
    *out_len = n;
    return JP_OK;
}

jp_err jp_zstd_decompress(const void *src, size_t len, size_t max_out, uint8_t **out,
                          size_t *out_len, jp_error *err)
{
    ZSTD_DStream *ds = ZSTD_createDStream();
    if (!ds)
        return jp_error_set(err, JP_ERR_NOMEM, "zstd: cannot create a decompression stream");
    jp_err rc = JP_OK;
    size_t cap = 0, used = 0;
    uint8_t *buf = NULL;
    ZSTD_inBuffer in = {src, len, 0};
    size_t last = 1; /* 0 once a frame is complete */
    while (in.pos < in.size) {
        if (used == cap) {
            if (used >= max_out) {
                rc =
                    jp_error_set(err, JP_ERR_LIMIT,
                                 "zstd: decompressed size exceeds the limit of %zu bytes", max_out);
                goto out;
            }
            size_t want = cap ? cap * 2 : (len * 4 > 65536 ? len * 4 : 65536);
            if (want > max_out + 1)
                want = max_out + 1; /* one byte past the cap detects overflow */
            buf = jp_xrealloc(buf, want + 1);
            cap = want;
        }
        ZSTD_outBuffer o = {buf + used, cap - used, 0};
        last = ZSTD_decompressStream(ds, &o, &in);
        if (ZSTD_isError(last)) {
            rc = jp_error_set(err, JP_ERR_FORMAT, "zstd: corrupt input at byte %zu: %s", in.pos,
                              ZSTD_getErrorName(last));
            goto out;
        }
        used += o.pos;
        if (used > max_out) {
            rc = jp_error_set(err, JP_ERR_LIMIT,
                              "zstd: decompressed size exceeds the limit of %zu bytes", max_out);
            goto out;
        }
        if (o.pos == 0 && in.pos == in.size)
            break;
    }
    if (last != 0) {
        rc = jp_error_set(err, JP_ERR_TRUNCATED, "zstd: input ends inside a frame");
        goto out;
    }
    if (!buf)
        buf = jp_xmalloc(1);
    buf[used] = '\0';
    *out = buf;
    *out_len = used;
    buf = NULL;
out:
    free(buf);
    ZSTD_freeDStream(ds);
    return rc;
}
