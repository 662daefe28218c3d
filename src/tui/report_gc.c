/* gc_report.c - GC lines and JSON from a profile's GC log. */
#include "tui/report_gc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/flame.h"
#include "model/units.h"
#include "wire/gc_json.h"

#define SPARK_MAX 200

static int64_t window_ns(const jp_profile *p)
{
    return p->end_ns > p->start_ns && p->start_ns ? p->end_ns - p->start_ns : 0;
}

void tui_gc_summarize(const jp_profile *p, jp_gc_summary *s)
{
    const jp_kind_table *alloc = &p->kinds[JP_KIND_ALLOC];
    jp_gc_summary_compute(&p->gc, 0, 0, alloc->value, window_ns(p), s);
}

json_t *tui_gc_json(const jp_profile *p)
{
    jp_gc_summary s;
    tui_gc_summarize(p, &s);
    return jp_gc_summary_json(&s, jp_gc_log_any(&p->gc), window_ns(p));
}

static const char *known(const char *s)
{
    return *s ? s : "unknown";
}

static void lines_pauses(const jp_gc_summary *s, int64_t win, const char *where, bool estimated,
                         tui_lines *ls)
{
    char tot[32], p50[32], p99[32], mx[32], span[32], pct[48] = "";
    jp_format_ns((uint64_t)s->pause_total_ns, tot, sizeof tot);
    jp_format_ns((uint64_t)win, span, sizeof span);
    if (win > 0)
        snprintf(pct, sizeof pct, " (%.2f%% of the time paused)",
                 100.0 * (double)s->pause_total_ns / (double)win);
    tui_lines_add(ls, TUI_STYLE_TITLE, TUI_F_BOLD,
                  "GC: %" PRIu64 " collections, %" PRIu64 " pauses in %s%s", s->collections,
                  s->pauses, win > 0 ? span : where, pct);
    if (!s->pauses) {
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "pauses:  none recorded");
        return;
    }
    jp_format_ns((uint64_t)s->pause_p50_ns, p50, sizeof p50);
    jp_format_ns((uint64_t)s->pause_p99_ns, p99, sizeof p99);
    jp_format_ns((uint64_t)s->pause_max_ns, mx, sizeof mx);
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "pauses:  total %s  p50 %s  p99 %s  max %s  (from %s%s)",
                  tot, p50, p99, mx,
                  s->pauses_from_gcs ? "jdk.GarbageCollection" : "jdk.GCPhasePause",
                  estimated ? "; p50, p99 estimated" : "");
    if (s->has_longest) {
        char when[40];
        jp_rfc3339_format(s->longest_start_ns, when, sizeof when);
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0,
                      "longest: %s at %s: %s of %s, cause: %s (gc id %" PRIu64 ")", mx, when,
                      known(s->longest_phase), known(s->longest_collector), known(s->longest_cause),
                      s->longest_gc_id);
    }
}

static void lines_heap(const jp_gc_summary *s, tui_lines *ls)
{
    if (!s->has_heap) {
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "heap:    unknown (no jdk.GCHeapSummary before/after)");
    } else {
        char b[24], a[24], lo[24], hi[24];
        jp_format_bytes(s->heap_before, b, sizeof b);
        jp_format_bytes(s->heap_after, a, sizeof a);
        jp_format_bytes(s->heap_after_min, lo, sizeof lo);
        jp_format_bytes(s->heap_after_max, hi, sizeof hi);
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0,
                      "heap:    last collection %s -> %s used; after collections min %s, "
                      "max %s (%" PRIu64 " collections)",
                      b, a, lo, hi, s->heap_gcs);
    }
    if (s->alloc_source == JP_GC_ALLOC_NONE) {
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "alloc:   rate unknown");
        return;
    }
    char r[24], by[24], sp[24];
    jp_format_bytes((uint64_t)s->alloc_rate, r, sizeof r);
    jp_format_bytes(s->alloc_bytes, by, sizeof by);
    jp_format_ns((uint64_t)s->alloc_span_ns, sp, sizeof sp);
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "alloc:   %s/s (%s over %s, from %s)", r, by, sp,
                  jp_gc_alloc_source_name(s->alloc_source));
}

/* Pause time of [from, to) into n columns from the points (each point into
 * the column of its middle). Returns the largest column. */
static int64_t points_buckets(const tui_gc_data *d, int64_t *out, size_t n)
{
    memset(out, 0, n * sizeof *out);
    double width = (double)(d->to_ns - d->from_ns) / (double)n;
    int64_t top = 0;
    for (size_t i = 0; i < d->npoints; i++) {
        const jp_gc_point *p = &d->points[i];
        if (p->pause_total_ns <= 0)
            continue;
        int64_t mid = p->start_ns + (p->end_ns - p->start_ns) / 2;
        double pos = (double)(mid - d->from_ns) / width;
        size_t b = pos < 0 ? 0 : pos >= (double)n ? n - 1 : (size_t)pos;
        out[b] += p->pause_total_ns;
        if (out[b] > top)
            top = out[b];
    }
    return top;
}

/* Pause time per column as one row of block characters. */
static void lines_spark(const tui_gc_data *d, int width, tui_lines *ls)
{
    int64_t win = d->to_ns - d->from_ns;
    int n = width - 2;
    if (n > SPARK_MAX)
        n = SPARK_MAX;
    if (win <= 0 || n < 8 || (!d->log && !d->npoints))
        return;
    int64_t b[SPARK_MAX];
    int64_t top = d->log ? jp_gc_pause_buckets(d->log, d->from_ns, d->to_ns, b, (size_t)n)
                         : points_buckets(d, b, (size_t)n);
    if (!top)
        return;
    /* ASCII: the same in every locale and in batch text */
    static const char levels[] = ".:-=+*#@";
    char row[SPARK_MAX + 1];
    for (int i = 0; i < n; i++) {
        int lvl = (int)((double)b[i] * 7.0 / (double)top + 0.5);
        row[i] = ' ';
        if (b[i] > 0)
            row[i] = levels[lvl < 0 ? 0 : lvl > 7 ? 7 : lvl];
    }
    row[n] = 0;
    char col[24], mx[24];
    jp_format_ns((uint64_t)(win / n), col, sizeof col);
    jp_format_ns((uint64_t)top, mx, sizeof mx);
    tui_lines_add(ls, TUI_STYLE_TABLEHEAD, 0,
                  "pause time over %s (1 column = %s, tallest = %s):", d->span, col, mx);
    tui_lines_add(ls, TUI_STYLE_ACTIVE, 0, "|%s|", row);
}

static void lines_allocators(const jp_profile *p, size_t top, tui_lines *ls)
{
    if (!top || !jp_profile_has_kind(p, JP_KIND_ALLOC))
        return;
    jp_flame *f = jp_flame_build(p, JP_KIND_ALLOC, false);
    jp_top_row *rows = NULL;
    size_t n = jp_flame_top(f, 0, true, &rows);
    uint64_t all = jp_flame_total(f, 0, true);
    tui_lines_add(ls, TUI_STYLE_TABLEHEAD, 0, "top allocators (allocation samples, self bytes):");
    for (size_t i = 0; i < n && i < top; i++) {
        char v[24];
        size_t len;
        const char *name = jp_flame_frame_name(f, rows[i].frame, &len);
        jp_format_bytes(rows[i].self_value, v, sizeof v);
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "  %5.1f%%  %10s  %.*s",
                      all ? 100.0 * (double)rows[i].self_value / (double)all : 0.0, v, (int)len,
                      name);
    }
    free(rows);
    jp_flame_free(f);
}

/* The advice on one line when it fits, else each part on lines of its own
 * cut at spaces. */
static void lines_advice(int width, tui_lines *ls)
{
    static const char *const parts[] = {JP_GC_TELL_HEAP, JP_GC_TELL_OLD, JP_GC_TELL_DUMP "."};
    size_t w = width < 40 ? 39 : (size_t)width - 1;
    if (strlen(JP_GC_CANNOT_TELL ".") <= w) {
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "%s", JP_GC_CANNOT_TELL ".");
        return;
    }
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        const char *s = parts[i];
        while (*s) {
            size_t n = strlen(s);
            if (n > w) {
                n = w;
                while (n && s[n] != ' ')
                    n--;
                if (!n)
                    n = w; /* one word longer than the screen */
            }
            tui_lines_add(ls, TUI_STYLE_DIM, 0, "%.*s", (int)n, s);
            s += n;
            while (*s == ' ')
                s++;
        }
    }
}

void tui_report_gc_data(const tui_gc_data *d, const jp_profile *p, int width, size_t top,
                        tui_lines *ls)
{
    if (!d->recorded) {
        tui_lines_add(ls, TUI_STYLE_WARN, 0, "%s", d->none);
    } else {
        lines_pauses(&d->s, d->window_ns, d->span, d->estimated, ls);
        lines_heap(&d->s, ls);
        if (d->s.dropped)
            tui_lines_add(ls, TUI_STYLE_WARN, 0,
                          "partial: %" PRIu64 " GC events over the reader's limit were dropped",
                          d->s.dropped);
        lines_spark(d, width, ls);
    }
    if (p)
        lines_allocators(p, top, ls);
    lines_advice(width, ls);
}

void tui_report_gc(const jp_profile *p, int width, size_t top, tui_lines *ls)
{
    tui_gc_data d = {.recorded = jp_gc_log_any(&p->gc),
                     .window_ns = window_ns(p),
                     .span = "the recording",
                     .none = "GC: no GC events in this recording (jdk.GarbageCollection, "
                             "jdk.GCPhasePause and jdk.GCHeapSummary are off in its settings)",
                     .log = &p->gc,
                     .from_ns = p->start_ns,
                     .to_ns = p->end_ns};
    if (d.recorded)
        tui_gc_summarize(p, &d.s);
    if (!d.window_ns)
        d.from_ns = d.to_ns = 0;
    tui_report_gc_data(&d, p, width, top, ls);
}

bool tui_gc_from_api(const json_t *answer, tui_gc_data *d, char *why, size_t len)
{
    memset(d, 0, sizeof *d);
    const json_t *g = json_object_get(answer, "gc");
    if (!jp_gc_summary_from_json(g, &d->s, why, len))
        return false;
    d->recorded = json_is_true(json_object_get(g, "recorded"));
    const json_t *meta = json_object_get(answer, "meta");
    d->window_ns = json_integer_value(json_object_get(meta, "covered_ns"));
    const char *pct = json_string_value(json_object_get(meta, "percentiles"));
    d->estimated = pct && !strcmp(pct, "estimated");
    d->span = "the range";
    d->none = "GC: no GC summary stored for this range (the agents upload one per window since "
              "this release; jdk.GarbageCollection, jdk.GCPhasePause and jdk.GCHeapSummary are "
              "in their settings)";
    d->from_ns = d->s.from_ns;
    d->to_ns = d->s.to_ns;
    const json_t *pts = json_object_get(answer, "points");
    size_t n = json_array_size(pts);
    if (n) {
        d->points = jp_xcalloc(n, sizeof *d->points);
        if (!jp_gc_points_from_json(pts, d->points, n, &d->npoints, why, len)) {
            tui_gc_data_cleanup(d);
            return false;
        }
    }
    return true;
}

void tui_gc_data_cleanup(tui_gc_data *d)
{
    free(d->points);
    d->points = NULL;
    d->npoints = 0;
}
