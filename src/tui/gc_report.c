/* gc_report.c - GC lines and JSON from a profile's GC log. */
#include "tui/gc_report.h"

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

static void lines_pauses(const jp_gc_summary *s, int64_t win, tui_lines *ls)
{
    char tot[32], p50[32], p99[32], mx[32], span[32], pct[48] = "";
    jp_format_ns((uint64_t)s->pause_total_ns, tot, sizeof tot);
    jp_format_ns((uint64_t)win, span, sizeof span);
    if (win > 0)
        snprintf(pct, sizeof pct, " (%.2f%% of the time paused)",
                 100.0 * (double)s->pause_total_ns / (double)win);
    tui_lines_add(ls, TUI_STYLE_TITLE, TUI_F_BOLD,
                  "GC: %" PRIu64 " collections, %" PRIu64 " pauses in %s%s", s->collections,
                  s->pauses, win > 0 ? span : "the recording", pct);
    if (!s->pauses) {
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "pauses:  none recorded");
        return;
    }
    jp_format_ns((uint64_t)s->pause_p50_ns, p50, sizeof p50);
    jp_format_ns((uint64_t)s->pause_p99_ns, p99, sizeof p99);
    jp_format_ns((uint64_t)s->pause_max_ns, mx, sizeof mx);
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "pauses:  total %s  p50 %s  p99 %s  max %s  (from %s)",
                  tot, p50, p99, mx,
                  s->pauses_from_gcs ? "jdk.GarbageCollection" : "jdk.GCPhasePause");
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

/* Pause time per column as one row of block characters. */
static void lines_spark(const jp_profile *p, int width, tui_lines *ls)
{
    int64_t win = window_ns(p);
    int n = width - 2;
    if (n > SPARK_MAX)
        n = SPARK_MAX;
    if (win <= 0 || n < 8)
        return;
    int64_t b[SPARK_MAX];
    int64_t top = jp_gc_pause_buckets(&p->gc, p->start_ns, p->end_ns, b, (size_t)n);
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
                  "pause time over the recording (1 column = %s, tallest = %s):", col, mx);
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

void tui_report_gc(const jp_profile *p, int width, size_t top, tui_lines *ls)
{
    if (!jp_gc_log_any(&p->gc)) {
        tui_lines_add(ls, TUI_STYLE_WARN, 0,
                      "GC: no GC events in this recording (jdk.GarbageCollection, "
                      "jdk.GCPhasePause and jdk.GCHeapSummary are off in its settings)");
    } else {
        jp_gc_summary s;
        tui_gc_summarize(p, &s);
        lines_pauses(&s, window_ns(p), ls);
        lines_heap(&s, ls);
        if (s.dropped)
            tui_lines_add(ls, TUI_STYLE_WARN, 0,
                          "partial: %" PRIu64 " GC events over the reader's limit were dropped",
                          s.dropped);
        lines_spark(p, width, ls);
    }
    lines_allocators(p, top, ls);
    tui_lines_add(ls, TUI_STYLE_DIM, 0, "%s", JP_GC_CANNOT_TELL ".");
}
