/* src.c - reading the input (see src.h). */
#include "jfr/src.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
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

/* ---- mapped windows ---- */

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

jp_err jfr_win_map(const jfr_src *s, jfr_win *w, uint64_t off, size_t n, const uint8_t **out,
                   const uint8_t **lim, jp_error *err)
{
    jfr_win_unmap(w);
    *out = *lim = NULL;
    if (off > s->len || n > s->len - off)
        return jp_error_set(err, JP_ERR_TRUNCATED,
                            "%s: %zu bytes at offset %llu run past the end (%llu)", s->name, n,
                            (unsigned long long)off, (unsigned long long)s->len);
    uint64_t pad = s->len - off - n < JFR_SRC_PAD ? s->len - off - n : JFR_SRC_PAD;
    uint64_t page = page_size(), at = off & ~(page - 1), from = at;
    size_t len = (size_t)(off - at) + n + (size_t)pad;
    /* Tests: "jfr map cut" maps the window past the end of the file, where
     * every read faults as the pages of a file cut shorter do. */
    if (jp_fail_inject("jfr map cut"))
        from = ((s->len + page - 1) & ~(page - 1)) + page;
    void *m = jp_fail_inject("jfr map fail")
                  ? (errno = ENOMEM, MAP_FAILED)
                  : mmap(NULL, len, PROT_READ, MAP_PRIVATE, s->fd, (off_t)from);
    if (m == MAP_FAILED)
        return jp_error_set(err, JP_ERR_IO, "%s: cannot map %zu bytes at offset %llu: %s", s->name,
                            n, (unsigned long long)off, strerror(errno));
    w->base = m;
    w->len = len;
    *out = (const uint8_t *)m + (off - at);
    *lim = *out + n + pad;
    return JP_OK;
}

void jfr_win_unmap(jfr_win *w)
{
    if (w->base)
        munmap(w->base, w->len);
    w->base = NULL;
    w->len = 0;
}

/* The fault of a window: the guard of the thread that read it, if any. */
static _Thread_local sigjmp_buf *guard_env;
static struct sigaction bus_prev;
static pthread_mutex_t bus_mu = PTHREAD_MUTEX_INITIALIZER;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (guard_env)
        siglongjmp(*guard_env, 1);
    /* Not a window's: the handler there was before ours takes it, a fault
     * when the instruction runs again, a signal sent when it is sent again
     * (the default one ends the process, as it would have). */
    sigaction(SIGBUS, &bus_prev, NULL);
    if (si && si->si_code <= 0)
        raise(SIGBUS);
}

/* Our handler, unless it is already: checked at every guard, as a program
 * (a test harness) may set its own between reads. The one found is kept
 * for faults that are not a window's. */
static void bus_install(void)
{
    pthread_mutex_lock(&bus_mu);
    struct sigaction cur;
    if (sigaction(SIGBUS, NULL, &cur) == 0 &&
        !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_bus)) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_bus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        bus_prev = cur;
        sigaction(SIGBUS, &sa, NULL);
    }
    pthread_mutex_unlock(&bus_mu);
}

bool jfr_guarded(void (*fn)(void *), void *arg)
{
    bus_install();
    sigjmp_buf env;
    sigjmp_buf *volatile prev = guard_env;
    if (sigsetjmp(env, 1)) {
        guard_env = prev;
        return false;
    }
    guard_env = &env;
    fn(arg);
    guard_env = prev;
    return true;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Reads a byte of every page: what mapping them costs, without reading
 * them from memory (the event loop does that either way). */
static unsigned touch(const volatile uint8_t *p, size_t n, size_t page)
{
    unsigned x = 0;
    for (size_t i = 0; i < n; i += page)
        x += p[i];
    return x;
}

typedef struct probe {
    int fd;
    uint64_t off; /* PROBE_WINDOWS windows from here */
    size_t n;
    uint8_t *buf;
    jfr_win win; /* the window mapped, for an unmapping after a fault */
    double pread_ns, map_ns;
    bool ok;
} probe;

#define PROBE_WINDOWS 6

/* Windows next to each other read one way and the other in turn, each
 * once (bytes read before are in the CPU's caches, and a read of them
 * says nothing of the file), the best of three each. What is timed is
 * what each way adds to reading the bytes: the copy, or the mapping (its
 * call, the faults that fill its page table, its unmapping). */
static void probe_run(void *arg)
{
    probe *pr = arg;
    size_t page = page_size();
    unsigned sink = 0;
    pr->pread_ns = pr->map_ns = 1e18;
    for (int i = 0; i < PROBE_WINDOWS; i++) {
        uint64_t off = pr->off + (uint64_t)i * pr->n;
        double t0 = now_ns(), t;
        if (i % 2 == 0) {
            if (pread(pr->fd, pr->buf, pr->n, (off_t)off) != (ssize_t)pr->n)
                return;
            t = now_ns() - t0;
            pr->pread_ns = t < pr->pread_ns ? t : pr->pread_ns;
        } else {
            void *m = mmap(NULL, pr->n, PROT_READ, MAP_PRIVATE, pr->fd, (off_t)off);
            if (m == MAP_FAILED)
                return;
            pr->win = (jfr_win){m, pr->n};
            sink += touch(m, pr->n, page);
            jfr_win_unmap(&pr->win);
            t = now_ns() - t0;
            pr->map_ns = t < pr->map_ns ? t : pr->map_ns;
        }
    }
    (void)sink; /* read through volatile: not optimized away */
    pr->ok = true;
}

bool jfr_map_pays(int fd, uint64_t len)
{
    if (len < JFR_MAP_MIN)
        return false;
    probe pr = {.fd = fd, .n = JFR_MAP_WINDOW};
    /* windows from the middle, on a page boundary, in the page cache (a
     * file read from disk would time the disk) */
    pr.off = (len / 2) & ~(uint64_t)(page_size() - 1);
    posix_fadvise(fd, (off_t)pr.off, (off_t)(PROBE_WINDOWS * pr.n), POSIX_FADV_WILLNEED);
    pr.buf = jp_xmalloc(pr.n);
    /* guarded: the file may be cut while the window is mapped */
    bool done = jfr_guarded(probe_run, &pr);
    jfr_win_unmap(&pr.win);
    free(pr.buf);
    return done && pr.ok && pr.map_ns <= pr.pread_ns;
}
