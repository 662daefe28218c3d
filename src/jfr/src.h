/* src.h - where a read's bytes come from (internal to src/jfr).
 *
 * A buffer in memory (jfr_read_buffer) is read in place. A file is read
 * with pread in pieces into buffers of the reader's own (jfr_bytes), so
 * memory stays bounded whatever the file's size. Every buffer ends with
 * JFR_SRC_PAD zero bytes past what was read, so the event loop may read
 * whole words near its end (input.h). Thread-safe: pread only.
 *
 * A big file's events may instead be read through windows of the file
 * mapped one at a time (jfr_win, JFR_MAP_WINDOW bytes each, unmapped when
 * the walk moves on, so memory stays bounded too): no copy out of the page
 * cache, but a page-table update per page, which some virtual machines make
 * several times dearer than copying the page (4x on one seen here; on
 * another, half the copy's cost). So whether it pays is measured on the
 * file (jfr_map_pays), once per read. A mapped page of a file cut shorter while it is read faults
 * (SIGBUS): windows are read only inside jfr_guarded, which turns that
 * fault into a return value, and the read then fails as a pread of the cut
 * file does ("shorter than it was"), instead of the process dying. */
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
    bool map;         /* a file: its events are read through windows (jfr_win) */
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

/* ---- mapped windows ---- */

/* Bytes of a file mapped at a time by one walk. */
#define JFR_MAP_WINDOW (512u << 10)
/* Files smaller than this are read with pread: their read is short anyway,
 * and measuring which way is cheaper would be a good part of it. */
#define JFR_MAP_MIN (32u << 20)

/* A window of a file, mapped read-only: len bytes from base (NULL: none). */
typedef struct jfr_win {
    void *base;
    size_t len;
} jfr_win;

/* Maps bytes [off, off + n) of s's file (n > 0, within the file) over any
 * window w held: *out their first byte, *lim the end of what may be read
 * (up to JFR_SRC_PAD bytes past them, never past the end of the file). An
 * error (err filled when not NULL) when the mapping fails. Read the bytes
 * only inside jfr_guarded. */
jp_err jfr_win_map(const jfr_src *s, jfr_win *w, uint64_t off, size_t n, const uint8_t **out,
                   const uint8_t **lim, jp_error *err);
/* Unmaps the window w holds, if any. */
void jfr_win_unmap(jfr_win *w);

/* Runs fn(arg) on the calling thread. False when a window faulted on the
 * way (its file was cut shorter while mapped): fn was then cut short where
 * it read, so it must hold no lock while it reads a window, and what it
 * changed is the caller's to throw away. True otherwise. */
bool jfr_guarded(void (*fn)(void *), void *arg);

/* Whether reading the file fd of len bytes through windows costs no more
 * than reading it with pread, on this machine, now: three windows of it
 * copied and three mapped (a byte of each page read), each once, the best
 * of each way compared. False for files under JFR_MAP_MIN. */
bool jfr_map_pays(int fd, uint64_t len);

/* Copies bytes [off, off + n) of the input into dst (small reads: a chunk
 * header, the size of an event). Errors as jfr_src_get. */
jp_err jfr_src_copy(const jfr_src *s, uint64_t off, void *dst, size_t n, jp_error *err);

#endif
