#include "base/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/failinj.h"

static void jp_oom(size_t size)
{
    fprintf(stderr, "jprof: out of memory allocating %zu bytes\n", size);
    abort();
}

void *jp_xmalloc(size_t size)
{
    void *p = jp_fail_inject("alloc") ? NULL : malloc(size ? size : 1);
    if (!p)
        jp_oom(size);
    return p;
}

void *jp_xcalloc(size_t n, size_t size)
{
    void *p = jp_fail_inject("alloc") ? NULL : calloc(n ? n : 1, size ? size : 1);
    if (!p)
        jp_oom(n * size);
    return p;
}

void *jp_xrealloc(void *p, size_t size)
{
    void *q = jp_fail_inject("alloc") ? NULL : realloc(p, size ? size : 1);
    if (!q)
        jp_oom(size);
    return q;
}

void *jp_xreallocarray(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        jp_oom(SIZE_MAX);
    return jp_xrealloc(p, n * size);
}

char *jp_xstrdup(const char *s)
{
    return jp_xstrndup(s, strlen(s));
}

char *jp_xstrndup(const char *s, size_t n)
{
    char *d = jp_xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void *jp_xgrow(void *p, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            jp_oom(SIZE_MAX);
        c *= 2;
    }
    p = jp_xreallocarray(p, c, elem_size);
    *cap = c;
    return p;
}
