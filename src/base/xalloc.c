#include "base/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

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

#if defined(__GLIBC__) && defined(M_TRIM_THRESHOLD)
#define JP_HEAP_PAD_HUGE ((size_t)64 << 20)

static void heap_set(int param, int value, const char *env)
{
    if (!getenv(env))
        mallopt(param, value);
}

/* Never touched: the start of the heap's part kept for huge pages. */
static void *heap_spacer;

/* The heap's next 64 MiB of address space made now (the pad) and marked
 * for huge pages. A page of this VM costs 14-60 us to fault in, a 2 MiB
 * huge page about 0.15 ms: a cpu read of a 126 MB file faulted ~1,650
 * pages, ~140 this way (docs/PERFORMANCE.md). One arena, so the threads'
 * memory is in that heap too (they allocate per chunk or span, not per
 * event). Address space only: RSS grows by what is touched, rounded to
 * 2 MiB pages. Growth past the pad gets ordinary pages.
 *
 * A 2 MiB page must lie whole in the marked range, and the kernel gives
 * one only to a first touch of an empty 2 MiB: glibc writes the heap top's
 * header as it grows the heap, before the range can be marked. So the block
 * that makes it grow is then grown in place past that header's 2 MiB, to
 * a 2 MiB boundary, and kept untouched: what comes from the heap's top
 * later starts there, and the top's next header is written after the
 * advice. Should glibc place things otherwise, some 2 MiB get ordinary
 * pages, nothing worse. */
static bool heap_huge(void)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    heap_set(M_ARENA_MAX, 1, "MALLOC_ARENA_MAX");
    uintptr_t lo = (uintptr_t)sbrk(0);
    char *p = malloc(huge); /* past the top: glibc takes it and the pad from sbrk */
    uintptr_t hi = (uintptr_t)sbrk(0);
    if (!p || lo == (uintptr_t)-1 || hi <= lo) {
        free(p);
        return false;
    }
    lo = (lo + page - 1) & ~(page - 1);
    (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice: refused is fine */
    uintptr_t edge = ((uintptr_t)p + 2 * huge + 64) & ~(huge - 1);
    char *q = realloc(p, edge - (uintptr_t)p);
    heap_spacer = q ? q : p;
    return true;
#else
    return false;
#endif
}
#endif

bool jp_heap_tune(jp_heap_mode mode)
{
#if defined(__GLIBC__) && defined(M_TRIM_THRESHOLD)
    const char *t = getenv("GLIBC_TUNABLES");
    if (t && strstr(t, "glibc.malloc."))
        return false;
    heap_set(M_TRIM_THRESHOLD, 256 << 20, "MALLOC_TRIM_THRESHOLD_");
    heap_set(M_MMAP_THRESHOLD, 32 << 20, "MALLOC_MMAP_THRESHOLD_"); /* glibc's largest */
    heap_set(M_TOP_PAD, mode == JP_HEAP_HUGE ? (int)JP_HEAP_PAD_HUGE : 16 << 20, "MALLOC_TOP_PAD_");
    return mode == JP_HEAP_HUGE && heap_huge();
#else
    (void)mode;
    return false;
#endif
}
