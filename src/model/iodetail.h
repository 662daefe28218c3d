/* iodetail.h - where a JVM's I/O waits went: remote endpoints and files.
 *
 * The `io` profile kind keeps only frames; the host, port and path of each
 * jdk.SocketRead/Write and jdk.FileRead/Write event are sensitive (they name
 * peers and files), so they never enter a jp_profile, never leave the
 * machine that read them, and are collected only when a local viewer asks
 * (jprof-top --io-detail; jfr_options.io_detail). This table is that
 * collection: per (socket endpoint | file path), the events and the time
 * blocked.
 *
 * Bounds: a name is cut at JP_IO_NAME_MAX bytes (and ends in "..." then);
 * at most JP_IO_MAX_ENTRIES names are kept, events of further names are
 * counted in `other_events`/`other_ns` of their target so totals stay whole.
 *
 * Ownership: caller storage (jp_io_detail_init / jp_io_detail_cleanup);
 * names are copied. Not thread-safe. */
#ifndef JP_MODEL_IODETAIL_H
#define JP_MODEL_IODETAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"

#define JP_IO_NAME_MAX 512
#define JP_IO_MAX_ENTRIES 20000

typedef enum jp_io_target { JP_IO_SOCKET = 0, JP_IO_FILE, JP_IO_TARGET_COUNT } jp_io_target;

/* "socket", "file" */
const char *jp_io_target_name(jp_io_target t);

typedef struct jp_io_entry {
    char *name; /* "host:port" ("[v6]:port") or a path; NUL-terminated */
    size_t len;
    jp_io_target target;
    uint64_t events, ns;
} jp_io_entry;

typedef struct jp_io_detail {
    jp_io_entry *entries;
    size_t count, cap;
    jp_u64map index; /* hash of (target, name) -> entry index */
    uint64_t events[JP_IO_TARGET_COUNT], ns[JP_IO_TARGET_COUNT]; /* all, listed or not */
    uint64_t other_events[JP_IO_TARGET_COUNT], other_ns[JP_IO_TARGET_COUNT];
} jp_io_detail;

void jp_io_detail_init(jp_io_detail *d);
void jp_io_detail_cleanup(jp_io_detail *d);

/* Adds `events` events blocked `ns` in total on name (len bytes, any bytes;
 * cut at JP_IO_NAME_MAX). */
void jp_io_detail_add(jp_io_detail *d, jp_io_target t, const char *name, size_t len,
                      uint64_t events, uint64_t ns);

/* Adds a socket endpoint "host:port": host empty falls back to address;
 * an address with ':' (IPv6) is bracketed. */
void jp_io_detail_add_socket(jp_io_detail *d, const char *host, size_t hlen, const char *addr,
                             size_t alen, int64_t port, uint64_t events, uint64_t ns);

/* Adds every entry and counter of src to dst. */
void jp_io_detail_merge(jp_io_detail *dst, const jp_io_detail *src);

/* The entries of target t, most time blocked first (then most events, then
 * name), at most `limit` (0 = all): a new array of borrowed pointers valid
 * while d is unchanged (free() the array). Returns how many. */
size_t jp_io_detail_top(const jp_io_detail *d, jp_io_target t, size_t limit,
                        const jp_io_entry ***out);

#endif
