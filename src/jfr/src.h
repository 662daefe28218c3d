/* src.h - where a read's bytes come from (internal to src/jfr).
 *
 * A buffer in memory (jfr_read_buffer) is read in place. A file is read
 * with pread in pieces into buffers of the reader's own (jfr_bytes), so
 * memory stays bounded whatever the file's size and no page of the file is
 * mapped: mapping costs a page-table update per page, which a virtual
 * machine makes several times dearer than copying the page. Every buffer
 * ends with JFR_SRC_PAD zero bytes past what was read, so the event loop
 * may read whole words near its end (input.h). Thread-safe: pread only. */
#ifndef JP_JFR_SRC_H
#define JP_JFR_SRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define JFR_SRC_PAD 16
/* A file's events are read this many bytes at a time by one thread (they
 * stay in the cache between the read and the loop). */
#define JFR_READ_STEP (256u << 10)

typedef struct jfr_src {
    const uint8_t *mem; /* the input when in memory, else NULL */
    int fd;             /* else the file */
    uint64_t len;
    const char *name; /* for errors */
} jfr_src;

/* A growable buffer: data[0 .. cap + JFR_SRC_PAD). Caller storage,
 * zero-initialized; jfr_bytes_cleanup frees it. */
typedef struct jfr_bytes {
    uint8_t *data;
    size_t cap, len;
} jfr_bytes;

void jfr_bytes_cleanup(jfr_bytes *b);
/* Makes room for n bytes (the padding after them zeroed). */
void jfr_bytes_reserve(jfr_bytes *b, size_t n);

/* Bytes [off, off + n) of the input into *out: in place for memory, else
 * read into b->data + at (b grown, b->len = at + n, the padding after
 * zeroed). An error (err filled when not NULL) when the range runs past the
 * input or the read fails. */
jp_err jfr_src_get(const jfr_src *s, uint64_t off, size_t n, jfr_bytes *b, size_t at,
                   const uint8_t **out, jp_error *err);

/* Copies bytes [off, off + n) of the input into dst (small reads: a chunk
 * header, the size of an event). Errors as jfr_src_get. */
jp_err jfr_src_copy(const jfr_src *s, uint64_t off, void *dst, size_t n, jp_error *err);

#endif
