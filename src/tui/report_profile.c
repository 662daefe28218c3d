#include "tui/report_profile.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/busy.h"
#include "model/diff.h"
#include "model/flame.h"
#include "model/units.h"
#include "tui/report_gc.h"
#include "tui/report_io.h"
#include "wire/flame_json.h"
#include "wire/html.h"
#include "wire/otlp_encode.h"
#include "wire/pprof.h"
#include "wire/snapshot_json.h"

#define UNKNOWN_THREAD "[unknown thread]"
#define NO_STACK "[no stack]"

/* ---- collapsed ---- */

/* A cell seen as the sequence of names a collapsed line prints: its thread
 * first with threads, then its stack's frames, root first. */
typedef struct seq_ctx {
    const jp_profile *p;
    const jp_kind_table *t;
    bool threads;
    /* Ranks of the names as printed (below); NULL when the sort reads text. */
    const uint32_t *mid, *end;
} seq_ctx;

/* A cell as the sort sees it: its sequence at hand, no table to go through. */
typedef struct seq {
    const uint32_t *f; /* the stack's frames */
    uint32_t n;        /* elements: frames, and the thread with threads */
    uint32_t thread;   /* element 0 with threads */
    uint32_t stack;
    uint32_t cell;
} seq;

/* Element i: a frame index, or (thread) a frame index or JP_NO_THREAD. */
static inline uint32_t seq_at(const seq_ctx *c, const seq *s, size_t i)
{
    if (c->threads)
        return i == 0 ? s->thread : s->f[i - 1];
    return s->f[i];
}

static const char *elem_name(const seq_ctx *c, uint32_t id, size_t *len)
{
    if (id == JP_NO_THREAD) {
        *len = sizeof UNKNOWN_THREAD - 1;
        return UNKNOWN_THREAD;
    }
    return jp_profile_frame_name(c->p, id, len);
}

/* Yields the bytes of a collapsed line's stack text from element i on. */
typedef struct cursor {
    const seq_ctx *c;
    const seq *s;
    size_t i;
    const char *name;
    size_t len, off;
} cursor;

static void cursor_init(cursor *k, const seq_ctx *c, const seq *s, size_t i)
{
    k->c = c;
    k->s = s;
    k->name = "";
    k->len = k->off = 0;
    k->i = i ? i - 1 : 0;
    if (k->i < s->n)
        k->name = elem_name(c, seq_at(c, s, k->i), &k->len);
    /* Starting after element i-1: the next byte is the ';' before element i. */
    if (i)
        k->off = k->len;
}

static int cursor_next(cursor *k)
{
    if (k->off < k->len)
        return (unsigned char)k->name[k->off++];
    if (k->i + 1 >= k->s->n)
        return -1;
    k->i++;
    k->name = elem_name(k->c, seq_at(k->c, k->s, k->i), &k->len);
    k->off = 0;
    return ';';
}

/* Orders cells like their printed stack text in byte order, the end of a
 * line first. Equal elements mean equal names, so the common prefix is
 * skipped; then, with ranks, the first elements whose ranks differ decide;
 * else the text is compared from there. */
static int seq_cmp(const void *pa, const void *pb, void *arg)
{
    const seq_ctx *c = arg;
    const seq *x = pa, *y = pb;
    if (x->stack == y->stack && (!c->threads || x->thread == y->thread))
        return 0;
    size_t m = x->n < y->n ? x->n : y->n, i = 0, off = c->threads;
    if (off && m > 1 && x->thread == y->thread)
        i = 1;
    if (i == off) {
        /* Frames two at a time: most of a sort's time is this prefix. */
        const uint32_t *a = x->f, *b = y->f;
        size_t j = 0, mf = m - off;
        for (uint64_t wa, wb; j + 2 < mf; j += 2) {
            memcpy(&wa, a + j, sizeof wa);
            memcpy(&wb, b + j, sizeof wb);
            if (wa != wb)
                break;
        }
        while (j + 1 < mf && a[j] == b[j])
            j++;
        i = off + j;
    }
    if (c->mid) {
        for (; i < m; i++) {
            uint32_t ex = seq_at(c, x, i), ey = seq_at(c, y, i);
            uint32_t rx = (i + 1 == x->n ? c->end : c->mid)[ex == JP_NO_THREAD ? 0 : ex + 1];
            uint32_t ry = (i + 1 == y->n ? c->end : c->mid)[ey == JP_NO_THREAD ? 0 : ey + 1];
            if (rx != ry)
                return rx < ry ? -1 : 1;
        }
        return x->n == y->n ? 0 : x->n < y->n ? -1 : 1;
    }
    cursor kx, ky;
    cursor_init(&kx, c, x, i);
    cursor_init(&ky, c, y, i);
    for (;;) {
        int a = cursor_next(&kx), b = cursor_next(&ky);
        if (a != b)
            return a < b ? -1 : 1;
        if (a < 0)
            return 0;
    }
}

/* ---- ranks: the names' order, so the sort compares integers ----
 *
 * A line's text is its names, each followed by ';' or, for the last, by
 * the end of the line (below every byte). Read as such tokens, two lines
 * compare like their first differing tokens, as long as no token is a
 * prefix of another, which only a name holding ';' makes possible: then
 * the sort reads text. Each name used gets the rank of its token in the
 * middle of a line and at its end (equal names, equal ranks), indexed by
 * element + 1 (0: no thread). */

typedef struct token {
    const char *name;
    uint32_t len, elem; /* elem: element + 1 */
    bool end;
} token;

static int token_cmp(const void *pa, const void *pb)
{
    const token *x = pa, *y = pb;
    uint32_t m = x->len < y->len ? x->len : y->len;
    int r = memcmp(x->name, y->name, m);
    if (r)
        return r;
    int cx = x->len > m ? (unsigned char)x->name[m] : x->end ? -1 : ';';
    int cy = y->len > m ? (unsigned char)y->name[m] : y->end ? -1 : ';';
    return cx == cy ? 0 : cx < cy ? -1 : 1;
}

/* Marks element e (+1) as used in the middle (bit 1) or at the end (bit 2);
 * false when its name holds ';'. */
static bool ranks_mark(const seq_ctx *c, uint8_t *use, uint32_t e, bool end)
{
    uint8_t *u = &use[e == JP_NO_THREAD ? 0 : e + 1];
    if (!*u) {
        size_t len;
        const char *name = elem_name(c, e, &len);
        if (memchr(name, ';', len))
            return false;
    }
    *u |= end ? 2 : 1;
    return true;
}

/* The ranks into *mid and *end (free both), or false (nothing allocated)
 * when a name holds ';'. */
static bool ranks_make(const seq_ctx *c, const seq *s, size_t n, uint32_t **mid, uint32_t **end)
{
    size_t ne = c->p->nframes + 1, ntok = 0;
    uint8_t *use = jp_xcalloc(ne, 1);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++)
        for (size_t j = 0; j < s[i].n && ok; j++)
            ok = ranks_mark(c, use, seq_at(c, &s[i], j), j + 1 == s[i].n);
    for (size_t e = 0; e < ne && ok; e++)
        ntok += (use[e] & 1) + (use[e] >> 1);
    token *tok = ok ? jp_xreallocarray(NULL, ntok ? ntok : 1, sizeof *tok) : NULL;
    ntok = 0;
    for (uint32_t e = 0; e < ne && ok; e++) {
        for (unsigned bit = 1; bit <= 2; bit++) {
            if (!(use[e] & bit))
                continue;
            size_t len;
            const char *name = elem_name(c, e ? e - 1 : JP_NO_THREAD, &len);
            tok[ntok++] = (token){.name = name, .len = (uint32_t)len, .elem = e, .end = bit == 2};
        }
    }
    free(use);
    if (!ok)
        return false;
    qsort(tok, ntok, sizeof *tok, token_cmp);
    *mid = jp_xcalloc(ne, sizeof **mid);
    *end = jp_xcalloc(ne, sizeof **end);
    uint32_t rank = 0;
    for (size_t i = 0; i < ntok; i++) {
        rank += i == 0 || token_cmp(&tok[i - 1], &tok[i]) != 0;
        (tok[i].end ? *end : *mid)[tok[i].elem] = rank;
    }
    free(tok);
    return true;
}

/* The stack text of a line into line, from the one before it (elements
 * [0, keep) shared, offs[i] where element i starts; grown as needed). */
typedef struct line_text {
    jp_strbuf line;
    size_t *offs, cap;
    const seq *prev;
    size_t len; /* of the previous stack text */
} line_text;

static void line_text_make(line_text *t, const seq_ctx *c, const seq *s)
{
    if (!s->n) {
        jp_strbuf_reset(&t->line);
        jp_strbuf_puts(&t->line, NO_STACK);
        t->prev = NULL;
        t->len = t->line.len;
        return;
    }
    size_t keep = 0, m = 0;
    if (t->prev) {
        m = t->prev->n < s->n ? t->prev->n : s->n;
        while (keep < m && seq_at(c, t->prev, keep) == seq_at(c, s, keep))
            keep++;
    }
    jp_strbuf_truncate(&t->line, keep == 0 ? 0 : keep < t->prev->n ? t->offs[keep] - 1 : t->len);
    t->offs = jp_xgrow(t->offs, &t->cap, s->n, sizeof *t->offs);
    for (size_t i = keep; i < s->n; i++) {
        size_t len;
        const char *name = elem_name(c, seq_at(c, s, i), &len);
        if (i)
            jp_strbuf_putc(&t->line, ';');
        t->offs[i] = t->line.len;
        jp_strbuf_append(&t->line, name, len);
    }
    t->prev = s;
    t->len = t->line.len;
}

jp_err tui_stream_check(FILE *out, jp_error *err)
{
    if (fflush(out) != 0 || ferror(out))
        return jp_error_set(err, JP_ERR_IO, "write error: %s", strerror(errno));
    return JP_OK;
}

/* The collapsed lines of kind k; with a comparison d (whose profile p is),
 * "stack OLD NEW" with the old side normalised and rounded. */
static jp_err collapsed(FILE *out, const jp_profile *p, jp_kind k, bool threads, bool by_value,
                        const jp_diff *d, jp_error *err)
{
    seq_ctx c = {.p = p, .t = &p->kinds[k], .threads = threads};
    size_t n = c.t->count;
    seq *s = jp_xreallocarray(NULL, n ? n : 1, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        const jp_sample *x = &c.t->cells[i];
        const jp_stack *st = &p->stacks[x->stack];
        s[i] = (seq){.f = jp_profile_stack_frames(p, x->stack),
                     .n = st->depth + (threads ? 1u : 0u),
                     .thread = x->thread,
                     .stack = x->stack,
                     .cell = (uint32_t)i};
    }
    uint32_t *mid = NULL, *end = NULL;
    if (n > 1 && ranks_make(&c, s, n, &mid, &end)) {
        c.mid = mid;
        c.end = end;
    }
    if (n > 1)
        qsort_r(s, n, sizeof *s, seq_cmp, &c);
    /* A line is written at once (a write per frame cost more than the
     * sort), from the text of the line before: neighbours share most of it. */
    line_text t = {0};
    jp_strbuf_init(&t.line, 0);
    for (size_t i = 0; i < n;) {
        uint64_t sum = 0, old = 0;
        size_t j = i;
        for (; j < n && (j == i || seq_cmp(&s[i], &s[j], &c) == 0); j++) {
            const jp_sample *x = &c.t->cells[s[j].cell];
            sum += by_value ? x->value : x->samples;
            if (d)
                old += by_value ? d->old_value[s[j].cell] : d->old_samples[s[j].cell];
        }
        line_text_make(&t, &c, &s[i]);
        if (d)
            jp_strbuf_printf(&t.line, " %.0f", jp_diff_old(d, old));
        char num[24], *q = num + sizeof num; /* " SUM\n" without printf's cost */
        *--q = '\n';
        do
            *--q = (char)('0' + sum % 10);
        while (sum /= 10);
        *--q = ' ';
        jp_strbuf_append(&t.line, q, (size_t)(num + sizeof num - q));
        fwrite(t.line.data, 1, t.line.len, out);
        jp_strbuf_truncate(&t.line, t.len);
        i = j;
    }
    jp_strbuf_cleanup(&t.line);
    free(t.offs);
    free(mid);
    free(end);
    free(s);
    return tui_stream_check(out, err);
}

jp_err tui_write_collapsed_diff(FILE *out, const jp_diff *d, jp_error *err)
{
    return collapsed(out, d->prof, d->kind, d->threads, d->by_value, d, err);
}

jp_err tui_write_collapsed(FILE *out, const jp_profile *p, jp_kind k, bool threads, bool by_value,
                           jp_error *err)
{
    return collapsed(out, p, k, threads, by_value, NULL, err);
}

/* ---- top ---- */

static void format_cell(jp_kind k, bool by_value, uint64_t v, char *buf, size_t len)
{
    if (by_value)
        jp_format_value(k, 1, v, buf, len);
    else
        snprintf(buf, len, "%" PRIu64, v);
}

static double pct(uint64_t v, uint64_t total)
{
    return total ? 100.0 * (double)v / (double)total : 0.0;
}

void tui_write_top_head(FILE *out, const tui_top_head *h)
{
    char total[32];
    jp_format_value(h->kind, 1, h->value, total, sizeof total);
    fprintf(out, "# kind %s  unit %s  value %s  events %" PRIu64 "  samples %" PRIu64 "  total %s",
            jp_kind_name(h->kind), h->by_value ? jp_kind_unit(h->kind) : "samples",
            h->by_value ? "total" : "samples", h->events, h->samples, total);
    if (h->from || h->to)
        fprintf(out, "  from %s  to %s", h->from ? h->from : "?", h->to ? h->to : "?");
    if (h->lost)
        fprintf(out, "  lost %" PRIu64, h->lost);
    if (h->partial)
        fputs("  PARTIAL", out);
    putc('\n', out);
    fprintf(out, "%10s %6s %10s %6s  %s\n", "SELF", "SELF%", "TOTAL", "TOTAL%", "NAME");
}

void tui_write_top_row(FILE *out, jp_kind k, bool by_value, uint64_t all, uint64_t self,
                       uint64_t total, const char *name, size_t len)
{
    char sb[32], tb[32];
    format_cell(k, by_value, self, sb, sizeof sb);
    format_cell(k, by_value, total, tb, sizeof tb);
    fprintf(out, "%10s %5.1f%% %10s %5.1f%%  %.*s\n", sb, pct(self, all), tb, pct(total, all),
            (int)len, name);
}

jp_err tui_write_top(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k, bool threads,
                     bool by_value, jp_error *err)
{
    const jp_kind_table *t = &p->kinds[k];
    char from[48], to[48];
    tui_top_head h = {.kind = k,
                      .by_value = by_value,
                      .events = t->events,
                      .samples = t->samples,
                      .value = t->value,
                      .lost = t->lost,
                      .partial = rep->partial};
    if (rep->start_ns || rep->end_ns) {
        jp_rfc3339_format(rep->start_ns, from, sizeof from);
        jp_rfc3339_format(rep->end_ns, to, sizeof to);
        h.from = from;
        h.to = to;
    }
    jp_flame *f = jp_flame_build(p, k, threads);
    jp_top_row *rows = NULL;
    size_t n = jp_flame_top(f, 0, by_value, &rows);
    uint64_t all = jp_flame_total(f, 0, by_value);
    tui_write_top_head(out, &h);
    for (size_t i = 0; i < n; i++) {
        const jp_top_row *r = &rows[i];
        uint64_t self = by_value ? r->self_value : r->self_samples;
        uint64_t tot = by_value ? r->total_value : r->total_samples;
        if (!self && !tot)
            continue;
        size_t len;
        const char *name = tui_frame_name(p, r->frame, &len);
        tui_write_top_row(out, k, by_value, all, self, tot, name, len);
    }
    free(rows);
    jp_flame_free(f);
    return tui_stream_check(out, err);
}

/* ---- json ---- */

static json_t *time_json(int64_t ns)
{
    if (!ns)
        return json_null();
    char buf[48];
    jp_rfc3339_format(ns, buf, sizeof buf);
    return json_string(buf);
}

static json_t *meta_json(const jp_profile *p, const jfr_report *rep, jp_kind k, bool by_value)
{
    const jp_kind_table *t = &p->kinds[k];
    json_t *m = json_object();
    json_object_set_new(m, "kind", json_string(jp_kind_name(k)));
    json_object_set_new(m, "unit", json_string(jp_kind_unit(k)));
    json_object_set_new(m, "value", json_string(by_value ? "total" : "samples"));
    json_object_set_new(m, "events", json_integer((json_int_t)t->events));
    json_object_set_new(m, "samples", json_integer((json_int_t)t->samples));
    json_object_set_new(m, "total", json_integer((json_int_t)t->value));
    json_object_set_new(m, "events_read", json_integer((json_int_t)rep->events_read));
    json_object_set_new(m, "events_used", json_integer((json_int_t)rep->events_used));
    json_object_set_new(m, "events_filtered", json_integer((json_int_t)rep->events_filtered));
    json_object_set_new(m, "chunks", json_integer(rep->chunks_total));
    json_object_set_new(m, "chunks_read", json_integer(rep->chunks_read));
    json_object_set_new(m, "start", time_json(rep->start_ns));
    json_object_set_new(m, "end", time_json(rep->end_ns));
    json_object_set_new(m, "period_ns", json_integer(t->period_ns));
    json_object_set_new(m, "truncated_stacks", json_integer((json_int_t)t->truncated));
    json_object_set_new(m, "lost_samples", json_integer((json_int_t)t->lost));
    json_t *w = json_array();
    for (uint32_t i = 0; i < rep->nwarnings && i < JFR_MAX_WARNINGS; i++)
        json_array_append_new(
            w,
            jp_json_string(rep->warnings[i], strnlen(rep->warnings[i], sizeof rep->warnings[i])));
    json_object_set_new(m, "warnings", w);
    json_object_set_new(m, "warnings_dropped", json_integer((json_int_t)rep->warnings_dropped));
    json_object_set_new(m, "partial", json_boolean(rep->partial));
    json_object_set_new(m, "error",
                        rep->partial ? jp_json_string(rep->error.msg, strlen(rep->error.msg))
                                     : json_null());
    return m;
}

json_t *tui_profile_doc(const jp_profile *p, const jfr_report *rep, jp_kind k, bool threads,
                        bool by_value)
{
    jp_flame *f = jp_flame_build(p, k, threads);
    json_t *doc = json_object();
    json_object_set_new(doc, "meta", meta_json(p, rep, k, by_value));
    json_object_set_new(doc, "tree", jp_flame_json(f, 0, by_value));
    if (threads && k == JP_KIND_CPU) {
        /* a recording is profile evidence only: the same ranking as the live
         * sources, its ages counted from the recording's end */
        jp_cpu_evidence ev;
        jp_cpu_evidence_init(&ev);
        ev.start_ns = rep->start_ns;
        ev.end_ns = rep->end_ns;
        jp_cpu_evidence_add_profile(&ev, p);
        jp_busy_summary bs;
        jp_busy_rank(NULL, NULL, &ev, &bs);
        json_object_set_new(doc, "busy", jp_busy_json(&bs, NULL, rep->end_ns, 20, 0));
        jp_busy_summary_cleanup(&bs);
        jp_cpu_evidence_cleanup(&ev);
    }
    jp_flame_free(f);
    return doc;
}

jp_err tui_write_json_line(FILE *out, json_t *doc, size_t flags, jp_error *err)
{
    int rc = json_dumpf(doc, out, JSON_COMPACT | flags);
    json_decref(doc);
    if (rc != 0)
        return jp_error_set(err, JP_ERR_IO, "write error: %s", strerror(errno));
    putc('\n', out);
    return tui_stream_check(out, err);
}

jp_err tui_write_json(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k,
                      bool threads, bool by_value, jp_error *err)
{
    json_t *doc = tui_profile_doc(p, rep, k, threads, by_value);
    json_object_set_new(doc, "gc", tui_gc_json(p));
    return tui_write_json_line(out, doc, 0, err);
}

jp_err tui_write_gc(FILE *out, const jp_profile *p, jp_error *err)
{
    tui_lines ls;
    tui_lines_init(&ls);
    tui_report_gc(p, 80, 10, &ls);
    jp_err rc = tui_lines_write(&ls, out);
    tui_lines_cleanup(&ls);
    if (rc)
        return jp_error_set(err, JP_ERR_IO, "write error: %s", strerror(errno));
    return tui_stream_check(out, err);
}

/* ---- html, pprof ---- */

/* Encodes doc (taken) into the offline page and writes it. */
jp_err tui_write_html_doc(FILE *out, json_t *doc, const char *title, jp_error *err)
{
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    jp_err rc = jp_html_encode(doc, title, &b, err);
    json_decref(doc);
    if (!rc && (fwrite(b.data, 1, b.len, out) != b.len || fflush(out)))
        rc = jp_error_set(err, JP_ERR_IO, "writing the html output failed");
    jp_strbuf_cleanup(&b);
    return rc;
}

jp_err tui_write_html(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k,
                      bool threads, bool by_value, const char *title, jp_error *err)
{
    json_t *doc = tui_profile_doc(p, rep, k, threads, by_value);
    json_object_set_new(doc, "threads", json_boolean(threads));
    return tui_write_html_doc(out, doc, title, err);
}

/* Writes an encoded binary export, refusing a terminal. */
static jp_err write_binary(FILE *out, const jp_strbuf *b, const char *format, const char *file,
                           jp_error *err)
{
    if (fwrite(b->data ? b->data : "", 1, b->len, out) != b->len || fflush(out))
        return jp_error_set(err, JP_ERR_IO, "writing the %s output (%s) failed", format, file);
    return JP_OK;
}

jp_err tui_write_pprof(FILE *out, const jp_profile *p, jp_kind k, bool threads, jp_error *err)
{
    if (isatty(fileno(out)))
        return jp_error_set(err, JP_ERR_USAGE,
                            "--format pprof writes gzipped binary: redirect it to a file "
                            "(> profile.pb.gz)");
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    jp_err rc = jp_pprof_encode(p, k, threads, &b, err);
    if (!rc)
        rc = write_binary(out, &b, "pprof", "profile.pb.gz", err);
    jp_strbuf_cleanup(&b);
    return rc;
}

jp_err tui_write_otlp(FILE *out, const jp_profile *p, jp_kind k, bool threads,
                      const jp_batch_target *target, jp_error *err)
{
    if (isatty(fileno(out)))
        return jp_error_set(err, JP_ERR_USAGE,
                            "--format otlp writes protobuf: redirect it to a file (> profile.pb)");
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    jp_err rc = jp_otlp_encode(p, 1u << k, threads, target, &b, err);
    if (!rc)
        rc = write_binary(out, &b, "otlp", "profile.pb", err);
    jp_strbuf_cleanup(&b);
    return rc;
}
