/* failinj.h - failure injection for tests, in the style of curl's torture
 * tests: make the Nth allocation, store write or upload fail and check the
 * program ends in a clear error, never a crash, and loses nothing it
 * acknowledged.
 *
 *   JPROF_FAIL_AT=N      the Nth call of jp_fail_inject() reports a failure
 *                        (once; counted over the process, from 1)
 *   JPROF_FAIL_SITE=S    count only sites whose name starts with S
 *                        ("alloc", "sqlite", "upload", "target write", "jfr read",
 *                        "jfr map")
 *
 * Always compiled in, inert unless set: a call costs one relaxed atomic load
 * and a predictable branch. Tests in the same process use jp_fail_set().
 * Thread-safe. */
#ifndef JP_BASE_FAILINJ_H
#define JP_BASE_FAILINJ_H

#include <stdatomic.h>
#include <stdbool.h>

/* 0 off, -1 not yet read from the environment, else the call that fails. */
extern atomic_long jp_fail_at_;

bool jp_fail_inject_slow(const char *site);

/* True when this call is the one to fail: the caller then fails the way its
 * real operation would (NULL, -1 with errno EIO, an error code). */
static inline bool jp_fail_inject(const char *site)
{
    if (__builtin_expect(atomic_load_explicit(&jp_fail_at_, memory_order_relaxed) == 0, 1))
        return false;
    return jp_fail_inject_slow(site);
}

/* Arms (n >= 1) or disarms (0) injection; site as JPROF_FAIL_SITE (NULL: all).
 * Resets the call counter. */
void jp_fail_set(long n, const char *site);

/* Calls counted since the last jp_fail_set (or start), and whether the armed
 * failure has fired. */
long jp_fail_calls(void);
bool jp_fail_fired(void);

#endif
