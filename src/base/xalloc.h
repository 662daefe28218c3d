/* xalloc.h - allocation that never returns NULL.
 *
 * jprof treats running out of memory as fatal (like htop's xMalloc): every
 * size that comes from outside is checked against a cap *before* allocating,
 * so a failure here means the machine is really out of memory. Sizes are
 * checked for multiplication overflow. */
#ifndef JP_BASE_XALLOC_H
#define JP_BASE_XALLOC_H

#include <stdbool.h>
#include <stddef.h>

void *jp_xmalloc(size_t size);
void *jp_xcalloc(size_t n, size_t size);
void *jp_xrealloc(void *p, size_t size);
/* realloc to n elements of size bytes, aborting on overflow. */
void *jp_xreallocarray(void *p, size_t n, size_t size);
char *jp_xstrdup(const char *s);
char *jp_xstrndup(const char *s, size_t n);

/* Grow *cap (capacity in elements) geometrically so that it holds need elements. */
void *jp_xgrow(void *p, size_t *cap, size_t need, size_t elem_size);

/* How a process wants glibc's heap (jp_heap_tune). */
typedef enum {
    /* Freed memory kept for reuse instead of given back at once: a server
     * whose requests each fault a few MB in and out. */
    JP_HEAP_KEEP,
    /* Kept, and laid out in 2 MiB pages where the kernel allows them
     * (transparent huge pages on madvise): a short read that touches a few
     * MB of fresh memory once. */
    JP_HEAP_HUGE,
} jp_heap_mode;

/* Tunes glibc's heap for the process; call first thing in main, before any
 * thread starts. glibc's own settings in the environment
 * (GLIBC_TUNABLES=glibc.malloc.*, MALLOC_*_) win; elsewhere a no-op.
 * True when JP_HEAP_HUGE laid the heap out for huge pages (not under
 * another allocator, such as valgrind's or a sanitizer's). */
bool jp_heap_tune(jp_heap_mode mode);

#endif
