/* histogram.c - GC.class_histogram over the attach socket, and its parser
 * (see histogram.h for the format and what is refused). */
#include "jvm/histogram.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

#define LINE_MAX_BYTES (4 * JP_HEAP_NAME_MAX) /* a longer line is refused */
#define SHOWN 60                              /* bytes of a bad line quoted in a message */

typedef struct span {
    const char *p;
    size_t n;
} span;

typedef struct reader {
    const char *text;
    size_t len, pos;
    unsigned line; /* number of the line last returned, from 1 */
} reader;

/* The next line without its "\n" (and a "\r" before it); false at the end. */
static bool next_line(reader *r, span *out)
{
    if (r->pos >= r->len)
        return false;
    const char *s = r->text + r->pos;
    const char *nl = memchr(s, '\n', r->len - r->pos);
    size_t n = nl ? (size_t)(nl - s) : r->len - r->pos;
    r->pos += n + (nl ? 1 : 0);
    if (n && s[n - 1] == '\r')
        n--;
    r->line++;
    *out = (span){s, n};
    return true;
}

static span trim(span s)
{
    while (s.n && (*s.p == ' ' || *s.p == '\t')) {
        s.p++;
        s.n--;
    }
    while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t'))
        s.n--;
    return s;
}

static bool starts(span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n >= n && memcmp(s.p, lit, n) == 0;
}

/* A printable copy of the start of s for a message. */
static const char *shown(span s, char *buf, size_t cap)
{
    size_t n = s.n < cap - 4 ? s.n : cap - 4;
    for (size_t i = 0; i < n; i++) {
        char c = s.p[i];
        if (c < 0x20 || c == 0x7f)
            c = '?';
        buf[i] = c;
    }
    if (n < s.n)
        memcpy(buf + n, "...", 3), n += 3;
    buf[n] = '\0';
    return buf;
}

/* Length of a valid UTF-8 sequence at s (n bytes available), 0 when
 * invalid or a control character. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t k = c < 0x80             ? 1
               : (c & 0xe0) == 0xc0 ? 2
               : (c & 0xf0) == 0xe0 ? 3
               : (c & 0xf8) == 0xf0 ? 4
                                    : 0;
    if (k == 0 || k > n || (k == 1 && (c < 0x20 || c == 0x7f)) || (k == 2 && c < 0xc2))
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return k;
}

/* Copies s into buf (cap >= JP_HEAP_NAME_MAX + 1), cut at JP_HEAP_NAME_MAX
 * on a character boundary, with every byte that is not printable UTF-8
 * replaced by '?'. Returns the length. */
static size_t clean_name(span s, char *buf)
{
    size_t o = 0;
    for (size_t i = 0; i < s.n;) {
        size_t k = utf8_len((const unsigned char *)s.p + i, s.n - i);
        if (o + (k ? k : 1) > JP_HEAP_NAME_MAX)
            break;
        if (k == 0) {
            buf[o++] = '?';
            i++;
        } else {
            memcpy(buf + o, s.p + i, k);
            o += k;
            i += k;
        }
    }
    buf[o] = '\0';
    return o;
}

/* An unsigned decimal after optional blanks; advances s. */
static bool take_u64(span *s, uint64_t *out)
{
    *s = trim(*s);
    uint64_t v = 0;
    size_t i = 0;
    for (; i < s->n && s->p[i] >= '0' && s->p[i] <= '9'; i++) {
        unsigned d = (unsigned)(s->p[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (i == 0 || (i < s->n && s->p[i] != ' ' && s->p[i] != '\t' && s->p[i] != ':'))
        return false;
    s->p += i;
    s->n -= i;
    *out = v;
    return true;
}

typedef enum { H_NONE, H_KNOWN, H_UNKNOWN } header_kind;

/* " num     #instances         #bytes  class name (module)" (JDK 9+), or
 * without "(module)" (JDK 8): known. Another line starting with "num": a
 * header with columns this parser does not know. */
static header_kind header(span s)
{
    s = trim(s);
    if (!starts(s, "num"))
        return H_NONE;
    static const char *const cols[] = {"num", "#instances", "#bytes", "class", "name", "(module)"};
    size_t c = 0;
    while (s.n) {
        size_t k = 0;
        while (k < s.n && s.p[k] != ' ' && s.p[k] != '\t')
            k++;
        if (c >= 6 || k != strlen(cols[c]) || memcmp(s.p, cols[c], k) != 0)
            return H_UNKNOWN;
        c++;
        s = trim((span){s.p + k, s.n - k});
    }
    return c >= 5 ? H_KNOWN : H_UNKNOWN;
}

typedef struct parse {
    reader r;
    jp_heap_histo *h;
    jp_error *err;
    uint64_t sum_inst, sum_bytes;
    char name[JP_HEAP_NAME_MAX + 1], module[JP_HEAP_NAME_MAX + 1];
} parse;

static jp_err bad(parse *ps, jp_err code, span line, const char *what)
{
    char b[SHOWN + 4];
    return jp_error_set(ps->err, code, "class histogram line %u: %s: '%s'", ps->r.line, what,
                        shown(line, b, sizeof b));
}

/* Everything before the header: blanks, jcmd's "PID:" line, the C-heap
 * warning. */
static jp_err find_header(parse *ps)
{
    span line;
    bool found = false;
    while (!found && next_line(&ps->r, &line)) {
        if (line.n > LINE_MAX_BYTES)
            return bad(ps, JP_ERR_FORMAT, line, "line too long");
        span t = trim(line);
        header_kind k = header(t);
        if (k == H_KNOWN) {
            found = true;
            continue;
        }
        if (k == H_UNKNOWN)
            return bad(ps, JP_ERR_FORMAT, t,
                       "the header has a column this jprof does not know (a newer JDK?)");
        if (starts(t, "ERROR:"))
            return bad(ps, JP_ERR_PROTOCOL, t, "the JVM made no histogram");
        if (starts(t, "WARNING: Ran out of C-heap; undercounted ")) {
            span w = {t.p + 41, t.n - 41};
            if (!take_u64(&w, &ps->h->undercounted))
                return bad(ps, JP_ERR_FORMAT, t, "an unreadable warning");
            continue;
        }
        uint64_t pid;
        span p = t;
        bool pid_line = take_u64(&p, &pid) && p.n == 1 && p.p[0] == ':';
        if (t.n && !pid_line)
            return bad(ps, JP_ERR_FORMAT, t, "not a class histogram (no header before this)");
    }
    if (!found)
        return jp_error_set(ps->err, ps->r.line ? JP_ERR_TRUNCATED : JP_ERR_FORMAT,
                            "class histogram: %s",
                            ps->r.line ? "no header (cut short?)" : "empty text");
    if (!next_line(&ps->r, &line))
        return jp_error_set(ps->err, JP_ERR_TRUNCATED,
                            "class histogram: the text ends after its header (cut short?)");
    span t = trim(line);
    size_t dashes = 0;
    while (dashes < t.n && t.p[dashes] == '-')
        dashes++;
    if (t.n < 10 || dashes != t.n || t.n > LINE_MAX_BYTES)
        return bad(ps, JP_ERR_FORMAT, t, "a line of dashes expected under the header");
    return JP_OK;
}

/* One row "N: INSTANCES BYTES NAME [(MODULE)]". */
static jp_err row(parse *ps, span t)
{
    uint64_t num, inst, bytes;
    span s = t;
    if (!take_u64(&s, &num) || !s.n || s.p[0] != ':')
        return bad(ps, JP_ERR_FORMAT, t, "neither a class row nor the Total line");
    s.p++;
    s.n--;
    if (num != ps->h->n + 1)
        return bad(ps, JP_ERR_FORMAT, t, "rows out of sequence (a line lost or doubled)");
    if (!take_u64(&s, &inst) || !take_u64(&s, &bytes))
        return bad(ps, JP_ERR_FORMAT, t, "instances and bytes expected after the row number");
    s = trim(s);
    uint64_t extra;
    span x = s;
    if (!s.n || (take_u64(&x, &extra) && (x.n == 0 || x.p[0] != ':')))
        return bad(ps, JP_ERR_FORMAT, t,
                   s.n ? "a number where the class name belongs (a column this jprof does not "
                         "know: a newer JDK?)"
                       : "no class name");
    span name = s, module = {"", 0};
    if (s.p[s.n - 1] == ')') {
        for (size_t i = s.n - 1; i-- > 1;)
            if (s.p[i] == '(' && s.p[i - 1] == ' ') {
                name = trim((span){s.p, i - 1});
                module = (span){s.p + i + 1, s.n - i - 2};
                break;
            }
    }
    if (!name.n)
        return bad(ps, JP_ERR_FORMAT, t, "no class name");
    size_t nl = clean_name(name, ps->name), ml = clean_name(module, ps->module);
    if (ps->sum_inst > UINT64_MAX - inst || ps->sum_bytes > UINT64_MAX - bytes)
        return bad(ps, JP_ERR_FORMAT, t, "the counts overflow");
    if (!jp_heap_histo_add(ps->h, ps->name, nl, ps->module, ml, inst, bytes))
        return bad(ps, JP_ERR_LIMIT, t, "more classes than jprof keeps (1,048,576)");
    ps->sum_inst += inst;
    ps->sum_bytes += bytes;
    return JP_OK;
}

/* "Total INSTANCES BYTES": must add up, and nothing may follow. */
static jp_err total(parse *ps, span t)
{
    span s = {t.p + 5, t.n - 5};
    jp_heap_histo *h = ps->h;
    if (!take_u64(&s, &h->total_instances) || !take_u64(&s, &h->total_bytes))
        return bad(ps, JP_ERR_FORMAT, t, "instances and bytes expected after Total");
    if (trim(s).n)
        return bad(ps, JP_ERR_FORMAT, t,
                   "more than two totals (a column this jprof does not know: a newer JDK?)");
    if (h->total_instances != ps->sum_inst || h->total_bytes != ps->sum_bytes)
        return jp_error_set(ps->err, JP_ERR_FORMAT,
                            "class histogram line %u: Total says %llu instances, %llu bytes; "
                            "the rows add up to %llu, %llu (lines lost?)",
                            ps->r.line, (unsigned long long)h->total_instances,
                            (unsigned long long)h->total_bytes, (unsigned long long)ps->sum_inst,
                            (unsigned long long)ps->sum_bytes);
    span line;
    while (next_line(&ps->r, &line))
        if (trim(line).n)
            return bad(ps, JP_ERR_FORMAT, trim(line), "text after the Total line");
    h->classes_total = h->n;
    return JP_OK;
}

static jp_err parse_all(parse *ps)
{
    jp_err rc = find_header(ps);
    if (rc != JP_OK)
        return rc;
    span line;
    while (next_line(&ps->r, &line)) {
        if (line.n > LINE_MAX_BYTES)
            return bad(ps, JP_ERR_FORMAT, line, "line too long");
        span t = trim(line);
        if (starts(t, "Total") && (t.n == 5 || t.p[5] == ' ' || t.p[5] == '\t'))
            return total(ps, t);
        if ((rc = row(ps, t)) != JP_OK)
            return rc;
    }
    return jp_error_set(ps->err, JP_ERR_TRUNCATED,
                        "class histogram: no Total line after %zu classes (the text was cut "
                        "short)",
                        ps->h->n);
}

jp_err jvm_histogram_parse(const char *text, size_t len, jp_heap_histo *out, jp_error *err)
{
    jp_heap_histo_cleanup(out);
    if (len > JVM_HISTO_MAX_BYTES)
        return jp_error_set(err, JP_ERR_LIMIT, "class histogram: %zu bytes, more than %u", len,
                            JVM_HISTO_MAX_BYTES);
    parse *ps = jp_xcalloc(1, sizeof *ps);
    ps->r = (reader){.text = text ? text : "", .len = text ? len : 0};
    ps->h = out;
    ps->err = err;
    jp_err rc = parse_all(ps);
    free(ps);
    if (rc != JP_OK)
        jp_heap_histo_cleanup(out);
    return rc;
}
