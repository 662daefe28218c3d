#include "tui/report_profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/busy.h"
#include "model/diff.h"
#include "model/flame.h"
#include "model/units.h"
#include "wire/snapshot_json.h"
#include "wire/flame_json.h"
#include "tui/io_detail.h"
#include "tui/report_gc.h"
#include "wire/html.h"
#include "wire/pprof.h"

#define UNKNOWN_THREAD "[unknown thread]"
#define NO_STACK "[no stack]"

/* ---- collapsed ---- */

/* A cell seen as the sequence of names a collapsed line prints. */
typedef struct seq_ctx {
    const jp_profile *p;
    const jp_kind_table *t;
    bool threads;
} seq_ctx;

static size_t seq_len(const seq_ctx *c, const jp_sample *s)
{
    return c->p->stacks[s->stack].depth + (c->threads ? 1u : 0u);
}

static uint32_t seq_id(const seq_ctx *c, const jp_sample *s, size_t i)
{
    if (c->threads) {
        if (i == 0)
            return s->thread;
        i--;
    }
    return jp_profile_stack_frames(c->p, s->stack)[i];
}

static const char *seq_name(const seq_ctx *c, const jp_sample *s, size_t i, size_t *len)
{
    uint32_t id = seq_id(c, s, i);
    if (id == JP_NO_THREAD) {
        *len = sizeof UNKNOWN_THREAD - 1;
        return UNKNOWN_THREAD;
    }
    return jp_profile_frame_name(c->p, id, len);
}

/* Yields the bytes of a collapsed line's stack text from frame i on. */
typedef struct cursor {
    const seq_ctx *c;
    const jp_sample *s;
    size_t i, n;
    const char *name;
    size_t len, off;
} cursor;

static void cursor_init(cursor *k, const seq_ctx *c, const jp_sample *s, size_t i)
{
    k->c = c;
    k->s = s;
    k->n = seq_len(c, s);
    k->name = "";
    k->len = k->off = 0;
    k->i = i ? i - 1 : 0;
    if (k->i < k->n)
        k->name = seq_name(c, s, k->i, &k->len);
    /* Starting after frame i-1: the next byte is the ';' before frame i. */
    if (i)
        k->off = k->len;
}

static int cursor_next(cursor *k)
{
    if (k->off < k->len)
        return (unsigned char)k->name[k->off++];
    if (k->i + 1 >= k->n)
        return -1;
    k->i++;
    k->name = seq_name(k->c, k->s, k->i, &k->len);
    k->off = 0;
    return ';';
}

/* Orders cells like their printed stack text in byte order. Equal frame
 * ids mean equal names, so the common prefix is skipped without reading
 * names; the rest is compared as text, because a name that is a prefix of
 * another does not sort like the joined line would (';' vs '.'). */
static int cells_cmp(const void *pa, const void *pb, void *arg)
{
    const seq_ctx *c = arg;
    const jp_sample *x = &c->t->cells[*(const uint32_t *)pa];
    const jp_sample *y = &c->t->cells[*(const uint32_t *)pb];
    if (x->stack == y->stack && (!c->threads || x->thread == y->thread))
        return 0;
    size_t nx = seq_len(c, x), ny = seq_len(c, y), i = 0;
    while (i < nx && i < ny && seq_id(c, x, i) == seq_id(c, y, i))
        i++;
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

static void write_stack(FILE *out, const seq_ctx *c, const jp_sample *s)
{
    size_t n = seq_len(c, s);
    if (!n)
        fputs(NO_STACK, out);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *name = seq_name(c, s, i, &len);
        if (i)
            putc(';', out);
        fwrite(name, 1, len, out);
    }
}

static jp_err stream_check(FILE *out, jp_error *err)
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
    uint32_t *order = jp_xreallocarray(NULL, n ? n : 1, sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    if (n > 1)
        qsort_r(order, n, sizeof *order, cells_cmp, &c);
    for (size_t i = 0; i < n;) {
        const jp_sample *first = &c.t->cells[order[i]];
        uint64_t sum = 0, old = 0;
        size_t j = i;
        for (; j < n && (j == i || cells_cmp(&order[i], &order[j], &c) == 0); j++) {
            sum += by_value ? c.t->cells[order[j]].value : c.t->cells[order[j]].samples;
            if (d)
                old += by_value ? d->old_value[order[j]] : d->old_samples[order[j]];
        }
        write_stack(out, &c, first);
        if (d)
            fprintf(out, " %.0f", jp_diff_old(d, old));
        fprintf(out, " %" PRIu64 "\n", sum);
        i = j;
    }
    free(order);
    return stream_check(out, err);
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

static void write_top_header(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k,
                             bool by_value)
{
    const jp_kind_table *t = &p->kinds[k];
    char total[32], from[48], to[48];
    jp_format_value(k, 1, t->value, total, sizeof total);
    fprintf(out, "# kind %s  unit %s  value %s  events %" PRIu64 "  samples %" PRIu64 "  total %s",
            jp_kind_name(k), by_value ? jp_kind_unit(k) : "samples", by_value ? "total" : "samples",
            t->events, t->samples, total);
    if (rep->start_ns || rep->end_ns) {
        jp_rfc3339_format(rep->start_ns, from, sizeof from);
        jp_rfc3339_format(rep->end_ns, to, sizeof to);
        fprintf(out, "  from %s  to %s", from, to);
    }
    if (t->lost)
        fprintf(out, "  lost %" PRIu64, t->lost);
    if (rep->partial)
        fputs("  PARTIAL", out);
    putc('\n', out);
}

jp_err tui_write_top(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k, bool threads,
                     bool by_value, jp_error *err)
{
    jp_flame *f = jp_flame_build(p, k, threads);
    jp_top_row *rows = NULL;
    size_t n = jp_flame_top(f, 0, by_value, &rows);
    uint64_t all = jp_flame_total(f, 0, by_value);
    write_top_header(out, p, rep, k, by_value);
    fprintf(out, "%10s %6s %10s %6s  %s\n", "SELF", "SELF%", "TOTAL", "TOTAL%", "NAME");
    for (size_t i = 0; i < n; i++) {
        const jp_top_row *r = &rows[i];
        uint64_t self = by_value ? r->self_value : r->self_samples;
        uint64_t tot = by_value ? r->total_value : r->total_samples;
        if (!self && !tot)
            continue;
        char sb[32], tb[32];
        format_cell(k, by_value, self, sb, sizeof sb);
        format_cell(k, by_value, tot, tb, sizeof tb);
        size_t len;
        const char *name = tui_frame_name(p, r->frame, &len);
        fprintf(out, "%10s %5.1f%% %10s %5.1f%%  %.*s\n", sb, pct(self, all), tb, pct(tot, all),
                (int)len, name);
    }
    free(rows);
    jp_flame_free(f);
    return stream_check(out, err);
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

jp_err tui_write_json(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k,
                      bool threads, bool by_value, jp_error *err)
{
    json_t *doc = tui_profile_doc(p, rep, k, threads, by_value);
    json_object_set_new(doc, "gc", tui_gc_json(p));
    int rc = json_dumpf(doc, out, JSON_COMPACT);
    json_decref(doc);
    if (rc != 0)
        return jp_error_set(err, JP_ERR_IO, "write error: %s", strerror(errno));
    putc('\n', out);
    return stream_check(out, err);
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
    return stream_check(out, err);
}

/* ---- pprof ---- */

/* Encodes doc (taken) into the offline page and writes it. */
static jp_err write_html_doc(FILE *out, json_t *doc, const char *title, jp_error *err)
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
    return write_html_doc(out, doc, title, err);
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
    if (!rc && (fwrite(b.data, 1, b.len, out) != b.len || fflush(out)))
        rc = jp_error_set(err, JP_ERR_IO, "writing the pprof output failed");
    jp_strbuf_cleanup(&b);
    return rc;
}

/* ---- the batch command ---- */

static void print_warnings(FILE *errout, const jfr_report *rep)
{
    for (uint32_t i = 0; i < rep->nwarnings && i < JFR_MAX_WARNINGS; i++)
        fprintf(errout, "jprof-top: warning: %.*s\n", (int)sizeof rep->warnings[i],
                rep->warnings[i]);
    if (rep->warnings_dropped)
        fprintf(errout, "jprof-top: warning: %" PRIu64 " more warnings not shown\n",
                rep->warnings_dropped);
}

/* The requested kind has no events: either the file has none (an error
 * naming the kinds it has) or the time window left none (empty output). */
static bool kind_in_file(const tui_args *a, jp_kind k, char *kinds, size_t len)
{
    tui_args all = *a;
    all.has_from = all.has_to = false;
    jfr_report rep;
    jp_error err;
    jp_error_init(&err);
    jp_profile *p = NULL;
    if (tui_load_jfr(&all, 0, false, &p, &rep, &err) == TUI_LOAD_FAILED) {
        snprintf(kinds, len, "none");
        return false;
    }
    tui_kinds_present(p, kinds, len);
    bool present = jp_profile_has_kind(p, k);
    jp_profile_free(p);
    return present;
}

static jp_err batch_write(const tui_args *a, FILE *out, const jp_profile *p, const jfr_report *rep,
                          jp_kind k, jp_error *err)
{
    switch (a->format) {
    case TUI_FORMAT_TOP:
        return tui_write_top(out, p, rep, k, a->threads, a->by_value, err);
    case TUI_FORMAT_JSON:
        return tui_write_json(out, p, rep, k, a->threads, a->by_value, err);
    case TUI_FORMAT_PPROF:
        return tui_write_pprof(out, p, k, a->threads, err);
    case TUI_FORMAT_GC:
        return tui_write_gc(out, p, err);
    case TUI_FORMAT_HTML: {
        const char *name = a->jfr_path ? strrchr(a->jfr_path, '/') : NULL;
        name = name ? name + 1 : a->jfr_path;
        return tui_write_html(out, p, rep, k, a->threads, a->by_value, name, err);
    }
    case TUI_FORMAT_COLLAPSED:
    default:
        return tui_write_collapsed(out, p, k, a->threads, a->by_value, err);
    }
}

/* --io-detail: the endpoints and files as a table, or the io profile's
 * JSON document with "io_detail" added. */
static jp_err io_detail_write(const tui_args *a, FILE *out, const jp_profile *p,
                              const jfr_report *rep, const jp_io_detail *io, jp_error *err)
{
    if (a->format != TUI_FORMAT_JSON)
        return tui_io_detail_write_text(out, io, err);
    json_t *doc = tui_profile_doc(p, rep, JP_KIND_IO, a->threads, a->by_value);
    json_object_set_new(doc, "io_detail", tui_io_detail_json(io));
    int rc = json_dumpf(doc, out, JSON_COMPACT);
    json_decref(doc);
    if (rc != 0)
        return jp_error_set(err, JP_ERR_IO, "write error: %s", strerror(errno));
    putc('\n', out);
    return stream_check(out, err);
}

int tui_batch_run(const tui_args *a, FILE *out, FILE *errout)
{
    jp_error err, werr;
    jp_error_init(&err);
    jp_error_init(&werr);
    jfr_report rep;
    jp_profile *p = NULL;
    uint32_t mask = a->has_kind ? 1u << a->kind : 0;
    jp_io_detail io;
    jp_io_detail_init(&io);
    tui_load_status st =
        tui_load_jfr_io(a, mask, a->threads, a->io_detail ? &io : NULL, &p, &rep, &err);
    if (st == TUI_LOAD_FAILED) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        jp_io_detail_cleanup(&io);
        return TUI_EXIT_ERROR;
    }
    int status = TUI_EXIT_OK;
    jp_kind k = a->kind;
    char kinds[64];
    if (!a->has_kind && !tui_kind_default(p, &k) && st == TUI_LOAD_OK &&
        a->format != TUI_FORMAT_GC) {
        fprintf(errout, "jprof-top: %s: no profile events (%s)\n", a->jfr_path, jp_kind_list());
        status = TUI_EXIT_ERROR;
        goto out;
    }
    if (a->has_kind && !jp_profile_has_kind(p, k) && st == TUI_LOAD_OK) {
        if (!kind_in_file(a, k, kinds, sizeof kinds)) {
            fprintf(errout, "jprof-top: %s: no %s events; kinds present: %s\n", a->jfr_path,
                    jp_kind_name(k), kinds);
            status = TUI_EXIT_ERROR;
            goto out;
        }
        fprintf(errout, "jprof-top: %s: no %s events in the selected time range\n", a->jfr_path,
                jp_kind_name(k));
    }
    print_warnings(errout, &rep);
    if (p->kinds[k].lost)
        fprintf(errout, "jprof-top: %s: %" PRIu64 " %s samples lost (the recorder said so)\n",
                a->jfr_path, p->kinds[k].lost, jp_kind_name(k));
    if ((a->io_detail ? io_detail_write(a, out, p, &rep, &io, &werr)
                      : batch_write(a, out, p, &rep, k, &werr)) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", werr.msg);
        status = TUI_EXIT_ERROR;
        goto out;
    }
    if (st == TUI_LOAD_PARTIAL) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        status = TUI_EXIT_PARTIAL;
    }
out:
    jp_io_detail_cleanup(&io);
    jp_profile_free(p);
    return status;
}

/* ---- comparisons (--diff) ---- */

static void write_diff_header(FILE *out, const jp_diff *d, const char *old_path,
                              const char *new_path)
{
    const jp_kind_table *t = &d->prof->kinds[d->kind];
    fprintf(out, "# diff kind %s  value %s  new %s  baseline %s  normalised %s (baseline x %.4g)",
            jp_kind_name(d->kind), d->by_value ? jp_kind_unit(d->kind) : "samples", new_path,
            old_path, jp_diff_norm_name(d->norm), d->old_scale);
    fprintf(out, "  new total %" PRIu64 "  baseline total %.0f\n",
            d->by_value ? t->value : t->samples,
            jp_diff_old(d, d->by_value ? d->old_total_value : d->old_total_samples));
}

static void format_real(jp_kind k, bool by_value, double v, char *buf, size_t len)
{
    if (by_value)
        jp_format_value(k, 1, (uint64_t)(v < 0 ? -v : v + 0.5), buf, len);
    else
        snprintf(buf, len, "%.0f", v < 0 ? -v : v);
}

/* A change as "+12", "-3.5 ms", "=". */
static void format_delta(jp_kind k, bool by_value, double delta, char *buf, size_t len)
{
    if (delta > -0.5 && delta < 0.5) {
        snprintf(buf, len, "=");
        return;
    }
    if (len < 2)
        return;
    buf[0] = delta < 0 ? '-' : '+';
    format_real(k, by_value, delta, buf + 1, len - 1);
}

static jp_err diff_top(FILE *out, const jp_diff *d, const char *old_path, const char *new_path,
                       jp_error *err)
{
    jp_diff_row *rows;
    size_t n = jp_diff_top(d, 0, &rows);
    write_diff_header(out, d, old_path, new_path);
    fprintf(out, "%10s %10s %10s  %10s %10s %10s  %s\n", "OLD-SELF", "NEW-SELF", "CHANGE",
            "OLD-TOTAL", "NEW-TOTAL", "CHANGE", "NAME");
    for (size_t i = 0; i < n; i++) {
        const jp_diff_row *r = &rows[i];
        char os[32], ns[32], ds[32], ot[32], nt[32], dt[32];
        format_real(d->kind, d->by_value, r->old_self, os, sizeof os);
        format_real(d->kind, d->by_value, (double)r->new_self, ns, sizeof ns);
        format_delta(d->kind, d->by_value, (double)r->new_self - r->old_self, ds, sizeof ds);
        format_real(d->kind, d->by_value, r->old_total, ot, sizeof ot);
        format_real(d->kind, d->by_value, (double)r->new_total, nt, sizeof nt);
        format_delta(d->kind, d->by_value, (double)r->new_total - r->old_total, dt, sizeof dt);
        size_t len;
        const char *name = jp_profile_frame_name(d->prof, r->frame, &len);
        fprintf(out, "%10s %10s %10s  %10s %10s %10s  %.*s\n", os, ns, ds, ot, nt, dt, (int)len,
                name);
    }
    free(rows);
    return stream_check(out, err);
}

static jp_err diff_json(FILE *out, jp_diff *d, const char *old_path, const char *new_path,
                        jp_error *err)
{
    const jp_kind_table *t = &d->prof->kinds[d->kind];
    json_t *m = json_object();
    json_object_set_new(m, "kind", json_string(jp_kind_name(d->kind)));
    json_object_set_new(m, "unit", json_string(jp_kind_unit(d->kind)));
    json_object_set_new(m, "value", json_string(d->by_value ? "total" : "samples"));
    json_object_set_new(m, "new", jp_json_string(new_path, strlen(new_path)));
    json_object_set_new(m, "baseline", jp_json_string(old_path, strlen(old_path)));
    json_object_set_new(m, "normalised", json_string(jp_diff_norm_name(d->norm)));
    json_object_set_new(m, "baseline_scale", json_real(d->old_scale));
    json_object_set_new(m, "new_total",
                        json_integer((json_int_t)(d->by_value ? t->value : t->samples)));
    json_object_set_new(
        m, "baseline_total",
        json_real(jp_diff_old(d, d->by_value ? d->old_total_value : d->old_total_samples)));
    json_t *doc = json_object();
    json_object_set_new(doc, "meta", m);
    json_object_set_new(doc, "tree", jp_flame_diff_json(d));
    int rc = json_dumpf(doc, out, JSON_COMPACT);
    json_decref(doc);
    if (rc != 0)
        return jp_error_set(err, JP_ERR_IO, "write error: %s", strerror(errno));
    putc('\n', out);
    return stream_check(out, err);
}

/* Reads one side of a comparison; prints why not and returns false. */
static bool diff_load(const tui_args *a, const char *path, bool threads, jp_profile **p,
                      jfr_report *rep, FILE *errout)
{
    tui_args one = *a;
    one.jfr_path = path;
    jp_error err;
    jp_error_init(&err);
    uint32_t mask = a->has_kind ? 1u << a->kind : 0;
    tui_load_status st = tui_load_jfr(&one, mask, threads, p, rep, &err);
    if (st == TUI_LOAD_FAILED) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        return false;
    }
    print_warnings(errout, rep);
    if (st == TUI_LOAD_PARTIAL)
        fprintf(errout, "jprof-top: %s (compared as far as it was read)\n", err.msg);
    return true;
}

int tui_diff_open(const tui_args *a, bool threads, tui_diff_sides *s, FILE *errout)
{
    memset(s, 0, sizeof *s);
    jfr_report orep;
    if (!diff_load(a, a->diff_path, threads, &s->old, &orep, errout) ||
        !diff_load(a, a->jfr_path, threads, &s->new_, &s->rep, errout))
        goto fail;
    jp_kind k = a->kind;
    if (!a->has_kind && !tui_kind_default(s->new_, &k)) {
        fprintf(errout, "jprof-top: %s: no profile events to compare\n", a->jfr_path);
        goto fail;
    }
    if (!jp_profile_has_kind(s->new_, k) || !jp_profile_has_kind(s->old, k)) {
        fprintf(errout, "jprof-top: --diff %s: no %s events in the %s profile\n", a->diff_path,
                jp_kind_name(k), jp_profile_has_kind(s->new_, k) ? "baseline" : "new");
        goto fail;
    }
    jp_error err;
    jp_error_init(&err);
    if (jp_diff_new(s->old, s->new_, k, threads, a->by_value, (jp_diff_norm)a->diff_norm, &s->d,
                    &err)) {
        fprintf(errout, "jprof-top: --diff %s: %s\n", a->diff_path, err.msg);
        goto fail;
    }
    return TUI_EXIT_OK;
fail:
    tui_diff_sides_cleanup(s);
    return TUI_EXIT_ERROR;
}

void tui_diff_sides_cleanup(tui_diff_sides *s)
{
    jp_diff_free(s->d);
    jp_profile_free(s->old);
    jp_profile_free(s->new_);
    memset(s, 0, sizeof *s);
}

/* --diff --format html: the page's own flame graph colours a tree whose
 * nodes carry base_self/base_total (web/flame.js), as the web page's
 * Compare does with the server's diff. */
static jp_err diff_html(FILE *out, tui_diff_sides *sd, const tui_args *a, jp_error *err)
{
    jp_diff *d = sd->d;
    json_t *doc = tui_profile_doc(d->prof, &sd->rep, d->kind, a->threads, a->by_value);
    json_object_set_new(doc, "tree", jp_flame_diff_json(d));
    json_object_set_new(doc, "threads", json_boolean(a->threads));
    char title[512];
    const char *n = strrchr(a->jfr_path, '/'), *o = strrchr(a->diff_path, '/');
    snprintf(title, sizeof title, "%s vs %s", n ? n + 1 : a->jfr_path, o ? o + 1 : a->diff_path);
    return write_html_doc(out, doc, title, err);
}

jp_err tui_diff_write(FILE *out, jp_diff *d, tui_format f, const char *old_label,
                      const char *new_label, jp_error *err)
{
    if (f == TUI_FORMAT_TOP)
        return diff_top(out, d, old_label, new_label, err);
    if (f == TUI_FORMAT_JSON)
        return diff_json(out, d, old_label, new_label, err);
    return collapsed(out, d->prof, d->kind, d->threads, d->by_value, d, err);
}

int tui_diff_run(const tui_args *a, FILE *out, FILE *errout)
{
    tui_diff_sides sd;
    if (tui_diff_open(a, a->threads, &sd, errout) != TUI_EXIT_OK)
        return TUI_EXIT_ERROR;
    jp_diff *d = sd.d;
    jp_error err;
    jp_error_init(&err);
    int status = TUI_EXIT_ERROR;
    jp_err rc = a->format == TUI_FORMAT_HTML
                    ? diff_html(out, &sd, a, &err)
                    : tui_diff_write(out, d, a->format, a->diff_path, a->jfr_path, &err);
    if (rc)
        fprintf(errout, "jprof-top: %s\n", err.msg);
    else
        status = TUI_EXIT_OK;
    tui_diff_sides_cleanup(&sd);
    return status;
}
