/* src.c - reading the input (see src.h). */
#include "jfr/src.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/failinj.h"
#include "base/xalloc.h"

void jfr_bytes_cleanup(jfr_bytes *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

/* Also for n = 0: the padding is written whatever n is, so an empty buffer
 * gets its memory here (a piece of a file that ended exactly on an event
 * boundary reserved no carry bytes and wrote its padding through NULL). */
void jfr_bytes_reserve(jfr_bytes *b, size_t n)
{
    if (n > b->cap || !b->data) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < n)
            cap = cap > SIZE_MAX / 4 ? n : cap * 2;
        b->data = jp_xrealloc(b->data, cap + JFR_SRC_PAD);
        b->cap = cap;
    }
    memset(b->data + n, 0, JFR_SRC_PAD);
}

jp_err jfr_src_get(const jfr_src *s, uint64_t off, size_t n, jfr_bytes *b, size_t at,
                   const uint8_t **out, jp_error *err)
{
    *out = NULL;
    if (off > s->len || n > s->len - off)
        return jp_error_set(err, JP_ERR_TRUNCATED,
                            "%s: %zu bytes at offset %llu run past the end (%llu)", s->name, n,
                            (unsigned long long)off, (unsigned long long)s->len);
    if (s->mem) {
        *out = s->mem + off;
        return JP_OK;
    }
    jfr_bytes_reserve(b, at + n);
    size_t got = 0;
    while (got < n) {
        ssize_t r = jp_fail_inject("jfr read")
                        ? (errno = EIO, -1)
                        : pread(s->fd, b->data + at + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return jp_error_set(err, r < 0 ? JP_ERR_IO : JP_ERR_TRUNCATED,
                                "%s: read at offset %llu: %s", s->name,
                                (unsigned long long)(off + got),
                                r < 0 ? strerror(errno) : "the file is shorter than it was");
        got += (size_t)r;
    }
    b->len = at + n;
    memset(b->data + at + n, 0, JFR_SRC_PAD);
    *out = b->data + at;
    return JP_OK;
}

jp_err jfr_src_copy(const jfr_src *s, uint64_t off, void *dst, size_t n, jp_error *err)
{
    jfr_bytes b = {0};
    const uint8_t *p;
    jp_err rc = jfr_src_get(s, off, n, &b, 0, &p, err);
    if (!rc)
        memcpy(dst, p, n);
    jfr_bytes_cleanup(&b);
    return rc;
}
