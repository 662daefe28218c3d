#include "jvm/threadprint.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"

#define NAME_CAP 1024 /* longest name/class/method we keep */

/* A bounded view of one line. */
typedef struct span {
    const char *p;
    size_t n;
} span;

typedef enum section {
    SEC_NONE = 0,    /* before the first thread or between sections */
    SEC_THREAD,      /* inside a thread's stack */
    SEC_OWNABLE,     /* after "Locked ownable synchronizers:" */
    SEC_DEADLOCK,    /* the first part of a deadlock report */
    SEC_DEADLOCK_ST, /* "Java stack information ..." part of it (ignored) */
} section;

typedef struct parser {
    jp_snapshot *snap;
    long cur; /* index of the current thread, -1 none */
    section sec;
    size_t *dl; /* names of the current deadlock report, as thread indices */
    size_t ndl, dl_alloc;
} parser;

static bool starts(span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n >= n && memcmp(s.p, lit, n) == 0;
}

static span skip_ws(span s)
{
    while (s.n && (*s.p == ' ' || *s.p == '\t')) {
        s.p++;
        s.n--;
    }
    return s;
}

static span advance(span s, size_t k)
{
    if (k > s.n)
        k = s.n;
    return (span){s.p + k, s.n - k};
}

static const char *find(span s, const char *lit)
{
    size_t n = strlen(lit);
    if (n == 0 || s.n < n)
        return NULL;
    for (size_t i = 0; i + n <= s.n; i++)
        if (s.p[i] == lit[0] && memcmp(s.p + i, lit, n) == 0)
            return s.p + i;
    return NULL;
}

static const char *dup(parser *ps, const char *p, size_t n)
{
    return jp_snapshot_strndup(ps->snap, p, n > NAME_CAP ? NAME_CAP : n);
}

static bool parse_hex(span s, uint64_t *out)
{
    if (s.n < 3 || s.p[0] != '0' || (s.p[1] != 'x' && s.p[1] != 'X'))
        return false;
    uint64_t v = 0;
    size_t i = 2, digits = 0;
    for (; i < s.n; i++, digits++) {
        char c = s.p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            break;
        if (digits >= 16)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return digits > 0;
}

/* Decimal integer at the start of s; false when none or out of range. */
static bool parse_dec(span s, int64_t *out)
{
    int64_t v = 0;
    size_t i = 0;
    for (; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++) {
        if (v > (INT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (s.p[i] - '0');
    }
    *out = v;
    return i > 0;
}

/* "12.34ms" / "5.67s" into ns; -1 when unparsable. */
static int64_t parse_duration(span s)
{
    char buf[48];
    size_t n = 0;
    while (n < s.n && n + 1 < sizeof buf && s.p[n] != ' ')
        n++;
    memcpy(buf, s.p, n);
    buf[n] = '\0';
    char *end = NULL;
    double v = strtod(buf, &end);
    if (end == buf)
        return -1;
    double mul = strcmp(end, "ms") == 0   ? 1e6
                 : strcmp(end, "s") == 0  ? 1e9
                 : strcmp(end, "us") == 0 ? 1e3
                 : strcmp(end, "ns") == 0 ? 1
                                          : -1;
    double r = v * mul;
    /* written so NaN fails too; anything past ~292 years of CPU is garbage */
    if (mul < 0 || !(r >= 0 && r < 9.0e18))
        return -1;
    return (int64_t)r;
}

static jp_thread *cur_thread(parser *ps)
{
    return ps->cur >= 0 ? &ps->snap->threads[ps->cur] : NULL;
}

/* One token of the header after the name ("#12", "daemon", "cpu=1.2ms", ...). */
static void header_token(jp_thread *t, span tok, bool *state_next)
{
    int64_t v;
    uint64_t h;
    if (tok.n > 1 && tok.p[0] == '#' && parse_dec(advance(tok, 1), &v)) {
        t->id = v;
    } else if (tok.n > 2 && tok.p[0] == '[' && tok.p[1] != '0' && parse_dec(advance(tok, 1), &v)) {
        t->native_id = v; /* JDK 19+: "[16454]" is the OS thread id */
    } else if (tok.n == 6 && memcmp(tok.p, "daemon", 6) == 0) {
        t->daemon = true;
    } else if (starts(tok, "cpu=")) {
        t->cpu_ns = parse_duration(advance(tok, 4));
    } else if (starts(tok, "elapsed=")) {
        t->elapsed_ns = parse_duration(advance(tok, 8));
    } else if (starts(tok, "nid=")) {
        span val = advance(tok, 4);
        if (parse_hex(val, &h) && h <= INT64_MAX)
            t->native_id = (int64_t)h;
        else if (parse_dec(val, &v))
            t->native_id = v;
        *state_next = true; /* the state text follows nid */
    }
}

static void parse_header(parser *ps, span line)
{
    /* the name runs to the last quote: HotSpot prints no quote after it */
    size_t close = 0;
    for (size_t i = line.n; i-- > 1;)
        if (line.p[i] == '"') {
            close = i;
            break;
        }
    if (close == 0)
        return;
    jp_thread *t = jp_snapshot_add_thread(ps->snap);
    ps->cur = t ? (long)ps->snap->count - 1 : -1;
    ps->sec = t ? SEC_THREAD : SEC_NONE;
    if (!t)
        return;
    t->name = dup(ps, line.p + 1, close - 1);
    span rest = advance(line, close + 1);
    bool state_next = false, has_id = false;
    while (rest.n) {
        rest = skip_ws(rest);
        size_t k = 0;
        while (k < rest.n && rest.p[k] != ' ')
            k++;
        span tok = {rest.p, k};
        if (tok.n && tok.p[0] == '#')
            has_id = true;
        if (state_next)
            break;
        header_token(t, tok, &state_next);
        rest = advance(rest, k);
    }
    t->vm_internal = !has_id;
}

/* "<0x...> (a pkg.Class)" after a lock line's keyword. */
static void parse_lock(parser *ps, span s, jp_lock_ref *l, jp_lock_kind kind)
{
    s = skip_ws(s);
    l->kind = kind;
    l->id = 0;
    l->class_name = "";
    if (s.n && s.p[0] == '<') {
        uint64_t h;
        if (parse_hex(advance(s, 1), &h))
            l->id = h;
    }
    const char *a = find(s, "(a ");
    if (a) {
        span c = advance(s, (size_t)(a - s.p) + 3);
        size_t k = 0;
        while (k < c.n && c.p[k] != ')')
            k++;
        l->class_name = dup(ps, c.p, k);
    }
}

static void parse_frame(parser *ps, jp_thread *t, span s)
{
    jp_snap_frame *f = jp_thread_add_frame(ps->snap, t);
    if (!f)
        return;
    const char *open = memchr(s.p, '(', s.n);
    size_t qn = open ? (size_t)(open - s.p) : s.n;
    size_t dot = qn;
    while (dot > 0 && s.p[dot - 1] != '.')
        dot--;
    if (dot > 0) {
        f->class_name = dup(ps, s.p, dot - 1);
        f->method = dup(ps, s.p + dot, qn - dot);
    } else {
        f->method = dup(ps, s.p, qn);
    }
    if (!open)
        return;
    span loc = advance(s, qn + 1);
    size_t k = 0;
    while (k < loc.n && loc.p[k] != ')')
        k++;
    loc.n = k;
    const char *slash = NULL; /* "java.base@17/Thread.java:840": drop the module */
    for (size_t i = 0; i < loc.n; i++)
        if (loc.p[i] == '/')
            slash = loc.p + i;
    if (slash)
        loc = advance(loc, (size_t)(slash - loc.p) + 1);
    if (starts(loc, "Native Method")) {
        f->line = -2;
    } else if (!starts(loc, "Unknown Source") && loc.n) {
        const char *colon = memchr(loc.p, ':', loc.n);
        int64_t ln;
        f->file = dup(ps, loc.p, colon ? (size_t)(colon - loc.p) : loc.n);
        if (colon && parse_dec(advance(loc, (size_t)(colon - loc.p) + 1), &ln) && ln <= INT32_MAX)
            f->line = (int32_t)ln;
    }
}

static void set_wait(parser *ps, jp_thread *t, span s, jp_wait_kind kind, jp_lock_kind lk)
{
    parse_lock(ps, s, &t->wait_lock, lk);
    t->wait_kind = kind;
    t->wait_lock.frame = t->nframes ? (int32_t)t->nframes - 1 : -1;
}

static void parse_lock_line(parser *ps, jp_thread *t, span s)
{
    if (starts(s, "locked ")) {
        jp_lock_ref *l = jp_thread_add_held(ps->snap, t);
        if (l) {
            parse_lock(ps, advance(s, 7), l, JP_LOCK_MONITOR);
            l->frame = t->nframes ? (int32_t)t->nframes - 1 : -1;
        }
    } else if (starts(s, "waiting to lock ")) {
        set_wait(ps, t, advance(s, 16), JP_WAIT_ENTER, JP_LOCK_MONITOR);
    } else if (starts(s, "waiting to re-lock in wait() ")) {
        set_wait(ps, t, advance(s, 29), JP_WAIT_ENTER, JP_LOCK_MONITOR);
    } else if (starts(s, "waiting on ")) {
        set_wait(ps, t, advance(s, 11), JP_WAIT_OBJECT, JP_LOCK_MONITOR);
    } else if (starts(s, "parking to wait for ")) {
        set_wait(ps, t, advance(s, 20), JP_WAIT_PARK, JP_LOCK_SYNCHRONIZER);
    }
}

static void parse_state(parser *ps, jp_thread *t, span s)
{
    size_t k = 0;
    while (k < s.n && s.p[k] != ' ')
        k++;
    t->state = jp_thread_state_parse(s.p, k);
    const char *open = memchr(s.p, '(', s.n);
    if (open) {
        span d = advance(s, (size_t)(open - s.p) + 1);
        size_t e = 0;
        while (e < d.n && d.p[e] != ')')
            e++;
        t->state_detail = dup(ps, d.p, e);
    }
}

/* Lines inside a thread's block. */
static void parse_thread_line(parser *ps, span line)
{
    jp_thread *t = cur_thread(ps);
    span s = skip_ws(line);
    if (!t)
        return;
    if (starts(s, "java.lang.Thread.State: ")) {
        parse_state(ps, t, advance(s, 24));
    } else if (starts(s, "at ")) {
        if (ps->sec == SEC_THREAD)
            parse_frame(ps, t, advance(s, 3));
    } else if (starts(s, "- ")) {
        span body = advance(s, 2);
        if (ps->sec == SEC_OWNABLE) {
            if (body.n && body.p[0] == '<') {
                jp_lock_ref *l = jp_thread_add_held(ps->snap, t);
                if (l)
                    parse_lock(ps, body, l, JP_LOCK_SYNCHRONIZER);
            }
        } else {
            parse_lock_line(ps, t, body);
        }
    } else if (starts(s, "Locked ownable synchronizers:")) {
        ps->sec = SEC_OWNABLE;
    }
}

static void deadlock_flush(parser *ps)
{
    if (ps->ndl >= 2)
        jp_snapshot_add_jvm_deadlock(ps->snap, ps->dl, ps->ndl);
    ps->ndl = 0;
}

/* `"name":` opening an entry of a deadlock report. */
static void deadlock_name(parser *ps, span line)
{
    if (line.n < 3 || line.p[line.n - 1] != ':' || line.p[line.n - 2] != '"')
        return;
    char name[NAME_CAP + 1];
    size_t n = line.n - 3 > NAME_CAP ? NAME_CAP : line.n - 3;
    memcpy(name, line.p + 1, n);
    name[n] = '\0';
    /* prefer the thread of that name that actually waits */
    long idx = -1;
    for (size_t i = 0; i < ps->snap->count; i++)
        if (strcmp(ps->snap->threads[i].name, name) == 0) {
            idx = (long)i;
            if (ps->snap->threads[i].wait_kind != JP_WAIT_NONE)
                break;
        }
    if (idx < 0 || ps->ndl >= JP_SNAPSHOT_MAX_THREADS)
        return;
    ps->dl = jp_xgrow(ps->dl, &ps->dl_alloc, ps->ndl + 1, sizeof *ps->dl);
    ps->dl[ps->ndl++] = (size_t)idx;
}

static void parse_line(parser *ps, span line)
{
    if (starts(line, "Found one Java-level deadlock:")) {
        deadlock_flush(ps);
        ps->sec = SEC_DEADLOCK;
        ps->cur = -1;
    } else if (ps->sec == SEC_DEADLOCK || ps->sec == SEC_DEADLOCK_ST) {
        if (starts(line, "Java stack information"))
            ps->sec = SEC_DEADLOCK_ST;
        else if (starts(line, "Found ") && find(line, "deadlock")) {
            deadlock_flush(ps);
            ps->sec = SEC_NONE;
        } else if (ps->sec == SEC_DEADLOCK && line.n && line.p[0] == '"')
            deadlock_name(ps, line);
    } else if (line.n && line.p[0] == '"') {
        parse_header(ps, line);
    } else if (starts(line, "JNI global refs")) {
        ps->cur = -1;
        ps->sec = SEC_NONE;
    } else if (ps->sec == SEC_THREAD || ps->sec == SEC_OWNABLE) {
        parse_thread_line(ps, line);
    }
}

jp_err jvm_threadprint_parse(const char *text, size_t len, int64_t taken_ns, jp_snapshot **out,
                             jp_error *err)
{
    *out = NULL;
    if (len > JVM_THREADPRINT_MAX_BYTES)
        return jp_error_set(err, JP_ERR_LIMIT, "Thread.print output of %zu bytes exceeds %u", len,
                            JVM_THREADPRINT_MAX_BYTES);
    parser ps = {.snap = jp_snapshot_new("thread-print"), .cur = -1};
    ps.snap->taken_ns = taken_ns;
    size_t off = 0;
    while (off < len) {
        const char *eol = memchr(text + off, '\n', len - off);
        size_t n = eol ? (size_t)(eol - (text + off)) : len - off;
        span line = {text + off, n};
        if (line.n && line.p[line.n - 1] == '\r')
            line.n--;
        parse_line(&ps, line);
        off += n + 1;
    }
    deadlock_flush(&ps);
    free(ps.dl);
    if (ps.snap->count == 0) {
        jp_snapshot_free(ps.snap);
        return jp_error_set(err, JP_ERR_FORMAT, "no threads found in the Thread.print output");
    }
    jp_snapshot_resolve_owners(ps.snap);
    *out = ps.snap;
    return JP_OK;
}
