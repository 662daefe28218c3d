/* xalloc.h - allocation that never returns NULL.
 *
 * jprof treats running out of memory as fatal (like htop's xMalloc): every
 * size that comes from outside is checked against a cap *before* allocating,
 * so a failure here means the machine is really out of memory. Sizes are
 * checked for multiplication overflow. */
#ifndef JP_BASE_XALLOC_H
#define JP_BASE_XALLOC_H

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

#endif
