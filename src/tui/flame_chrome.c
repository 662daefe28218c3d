#include "tui/flame_chrome.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/timeutil.h"
#include "model/units.h"
#include "tui/recording.h"

void tui_flame_view_format(const tui_flame_view *v, uint64_t value, char *buf, size_t len)
{
    if (v->by_value)
        jp_format_value(v->kind, 1, value, buf, len);
    else
        jp_format_count(value, buf, len);
}

double tui_percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

/* "2026-11-21 21:56:55Z": the title has no room for milliseconds. */
static void short_time(int64_t ns, char *buf, size_t len)
{
    char full[48];
    jp_rfc3339_format(ns, full, sizeof full);
    if (strlen(full) >= 19 && full[10] == 'T')
        snprintf(buf, len, "%.10s %.8sZ", full, full + 11);
    else
        snprintf(buf, len, "%s", full);
}

void tui_flame_chrome_title(const tui_flame_view *v, tui_canvas *c, int row)
{
    const jp_kind_table *t = &v->prof->kinds[v->kind];
    char total[32], start[48], span[32];
    jp_format_value(v->kind, 1, t->value, total, sizeof total);
    tui_canvas_fill(c, row, 0, c->cols, ' ', TUI_STYLE_TITLE, 0);
    int x = tui_canvas_puts(c, row, 0, base_name(v->path), TUI_STYLE_TITLE, TUI_F_BOLD);
    if (v->diff)
        x += tui_canvas_printf(c, row, x, TUI_STYLE_TITLE, TUI_F_BOLD, " vs %s",
                               base_name(v->diff_base));
    if (v->rep->partial)
        x += tui_canvas_puts(c, row, x, " PARTIAL", TUI_STYLE_WARN, TUI_F_BOLD);
    x += tui_canvas_printf(c, row, x, TUI_STYLE_TITLE, 0, "  %s: %" PRIu64 " events, %s",
                           jp_kind_name(v->kind), t->events, total);
    if (v->rep->start_ns) {
        short_time(v->rep->start_ns, start, sizeof start);
        jp_format_ns(
            v->rep->end_ns > v->rep->start_ns ? (uint64_t)(v->rep->end_ns - v->rep->start_ns) : 0,
            span, sizeof span);
        tui_canvas_printf(c, row, x, TUI_STYLE_TITLE, 0, "  %s +%s", start, span);
    }
}

/* One legend entry per frame kind a user can meet. */
static const struct {
    jp_frame_kind kind;
    const char *label;
} legend[] = {
    {JP_FRAME_INTERPRETED, "interp"}, {JP_FRAME_JIT, "jit"},
    {JP_FRAME_INLINED, "inl"},        {JP_FRAME_C1, "c1"},
    {JP_FRAME_NATIVE, "native"},      {JP_FRAME_CPP, "c++"},
    {JP_FRAME_KERNEL, "kernel"},      {JP_FRAME_THREAD, "thread"},
};

static int legend_width(void)
{
    int w = 0;
    for (size_t i = 0; i < sizeof legend / sizeof legend[0]; i++)
        w += (int)strlen(legend[i].label) + 1;
    return w;
}

static void draw_legend(tui_canvas *c, int row, int x)
{
    for (size_t i = 0; i < sizeof legend / sizeof legend[0]; i++) {
        tui_style st = (tui_style)(TUI_STYLE_FRAME_INTERPRETED + legend[i].kind);
        x += tui_canvas_puts(c, row, x, legend[i].label, st, 0);
        x++;
    }
}

/* The comparison's line: kind, measure, normalisation, and the colours. */
static void diff_legend(const tui_flame_view *v, tui_canvas *c, int row)
{
    static const char *const norms[] = {"none", "per sample", "per second"};
    const jp_diff *d = v->diff;
    int x =
        tui_canvas_printf(c, row, 0, TUI_STYLE_ACTIVE, TUI_F_BOLD, "[%s]", jp_kind_name(v->kind));
    x += tui_canvas_printf(
        c, row, x, TUI_STYLE_NORMAL, 0, " %s, baseline normalised %s (x%.4g, m: change)  ",
        v->by_value ? jp_kind_unit(v->kind) : "samples",
        (unsigned)d->norm < 3 ? norms[d->norm] : "?", jp_diff_scale_for(d, v->by_value));
    static const tui_style grow[] = {TUI_STYLE_DIFF_GROW3, TUI_STYLE_DIFF_GROW2,
                                     TUI_STYLE_DIFF_GROW1};
    static const tui_style shrink[] = {TUI_STYLE_DIFF_SHRINK1, TUI_STYLE_DIFF_SHRINK2,
                                       TUI_STYLE_DIFF_SHRINK3};
    x += tui_canvas_puts(c, row, x, "grows ", TUI_STYLE_NORMAL, TUI_F_BOLD);
    for (int i = 0; i < 3; i++)
        x += tui_canvas_puts(c, row, x, "  ", grow[i], 0);
    x += tui_canvas_puts(c, row, x, "  ", TUI_STYLE_DIFF_SAME, 0);
    for (int i = 0; i < 3; i++)
        x += tui_canvas_puts(c, row, x, "  ", shrink[i], 0);
    tui_canvas_puts(c, row, x, " shrinks", TUI_STYLE_NORMAL, TUI_F_BOLD);
}

void tui_flame_chrome_kinds(const tui_flame_view *v, tui_canvas *c, int row)
{
    if (v->diff) {
        diff_legend(v, c, row);
        return;
    }
    /* Kinds in key order (1-9); absent ones dimmed, the shown one bracketed.
     * The kinds past park are rarer: listed only when present or shown, so
     * the line fits 80 columns. */
    int x = 0;
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        bool present = jp_profile_has_kind(v->prof, (jp_kind)k);
        bool active = k == (int)v->kind;
        if (k > JP_KIND_PARK && !present && !active)
            continue;
        x += tui_canvas_printf(c, row, x,
                               active    ? TUI_STYLE_ACTIVE
                               : present ? TUI_STYLE_NORMAL
                                         : TUI_STYLE_DIM,
                               active ? TUI_F_BOLD : 0, active ? "[%s]" : "%s",
                               jp_kind_name((jp_kind)k));
        x += tui_canvas_puts(c, row, x, " ", TUI_STYLE_NORMAL, 0);
    }
    x += tui_canvas_printf(c, row, x, TUI_STYLE_NORMAL, TUI_F_BOLD, " %s",
                           v->by_value ? jp_kind_unit(v->kind) : "samples");
    if (v->threads)
        x += tui_canvas_puts(c, row, x, " +threads", TUI_STYLE_NORMAL, 0);
    int lw = legend_width() - 1;
    if (c->cols - x >= lw + 2)
        draw_legend(c, row, c->cols - lw);
}

void tui_flame_chrome_breadcrumb(const tui_flame_view *v, tui_canvas *c, int row)
{
    const jp_flame *f = v->cur;
    uint32_t zr = tui_flame_view_zoom_root(v);
    char hidden[48] = "", rows[48] = "", right[100];
    if (v->layout.hidden)
        snprintf(hidden, sizeof hidden, "%" PRIu64 " too narrow", v->layout.hidden);
    if ((int)v->layout.depths > v->flame_h && v->flame_h > 0)
        snprintf(rows, sizeof rows, "rows %d-%d of %u", v->scroll + 1, v->scroll + v->flame_h,
                 v->layout.depths);
    snprintf(right, sizeof right, "%s%s%s%s", hidden[0] || rows[0] ? " " : "", hidden,
             hidden[0] && rows[0] ? " | " : "", rows);
    int rw = (int)strlen(right);
    int room = c->cols - rw;
    /* Build the path root-most first, then keep its tail when too long:
     * the zoomed frame is what matters. */
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    if (v->rev) {
        size_t len;
        const char *name = tui_frame_name(v->prof, f->focus_frame, &len);
        jp_strbuf_printf(&b, "Callers of %.*s: ", (int)len, name);
    } else {
        jp_strbuf_puts(&b, "Zoom: ");
    }
    uint32_t chain[64];
    size_t n = 0;
    for (uint32_t x = zr; x != JP_FLAME_NONE && n < 64; x = f->nodes[x].parent)
        chain[n++] = x;
    if (n == 64 && f->nodes[chain[63]].parent != JP_FLAME_NONE)
        jp_strbuf_puts(&b, "... > ");
    for (size_t i = n; i > 0; i--) {
        size_t len;
        const char *name = jp_flame_node_name(f, chain[i - 1], &len);
        jp_strbuf_printf(&b, "%s%.*s", i == n ? "" : " > ", (int)len, name);
    }
    const char *s = jp_strbuf_str(&b);
    size_t cols = tui_utf8_columns(s, b.len);
    if (room > 3 && cols > (size_t)room) {
        size_t skip = tui_utf8_prefix(s, b.len, cols - (size_t)room + 3);
        int x = tui_canvas_puts(c, row, 0, "...", TUI_STYLE_NORMAL, TUI_F_BOLD);
        tui_canvas_text(c, row, x, s + skip, b.len - skip, room - 3, TUI_STYLE_NORMAL, TUI_F_BOLD);
    } else {
        tui_canvas_text(c, row, 0, s, b.len, room, TUI_STYLE_NORMAL, TUI_F_BOLD);
    }
    if (rw && room >= 0)
        tui_canvas_puts(c, row, room, right, TUI_STYLE_DIM, 0);
    jp_strbuf_cleanup(&b);
}

static int selection_info(const tui_flame_view *v, tui_canvas *c, int row, int x)
{
    const jp_flame *f = v->cur;
    uint64_t all = jp_flame_total(f, tui_flame_view_zoom_root(v), v->by_value);
    uint64_t tot = jp_flame_total(f, v->sel, v->by_value);
    uint64_t self = jp_flame_self(f, v->sel, v->by_value);
    char tb[32], sb[32];
    tui_flame_view_format(v, tot, tb, sizeof tb);
    tui_flame_view_format(v, self, sb, sizeof sb);
    size_t len;
    const char *name = jp_flame_node_name(f, v->sel, &len);
    x += tui_canvas_printf(c, row, x, TUI_STYLE_NORMAL, 0, "total %.1f%% %s  self %.1f%% %s  ",
                           tui_percent(tot, all), tb, tui_percent(self, all), sb);
    if (v->diff) {
        double old = tui_flame_view_old_total(v, v->sel), dl = (double)tot - old;
        char ob[32], db[32];
        tui_flame_view_format(v, (uint64_t)(old + 0.5), ob, sizeof ob);
        tui_flame_view_format(v, (uint64_t)(dl < 0 ? -dl + 0.5 : dl + 0.5), db, sizeof db);
        x += tui_canvas_printf(c, row, x, TUI_STYLE_NORMAL, 0, "was %s, %s%s  ", ob,
                               dl < 0 ? "-" : "+", db);
    }
    x += tui_canvas_text(c, row, x, name, len, -1, tui_frame_style(v->prof, f->nodes[v->sel].frame),
                         TUI_F_BOLD);
    return x;
}

void tui_flame_chrome_status(const tui_flame_view *v, tui_canvas *c, int row)
{
    if (v->prompt) {
        int x = tui_canvas_puts(c, row, 0, "Search (regex): ", TUI_STYLE_ACTIVE, TUI_F_BOLD);
        x += tui_canvas_text(c, row, x, v->input, v->input_len, -1, TUI_STYLE_NORMAL, 0);
        tui_canvas_fill(c, row, x, 1, ' ', TUI_STYLE_NORMAL, TUI_F_REVERSE);
        return;
    }
    if (v->msg[0]) {
        tui_canvas_puts(c, row, 0, v->msg, v->msg_error ? TUI_STYLE_WARN : TUI_STYLE_ACTIVE,
                        TUI_F_BOLD);
        return;
    }
    int x = 0;
    if (v->pattern[0]) {
        char sb[32];
        uint64_t all = jp_flame_total(v->cur, tui_flame_view_zoom_root(v), v->by_value);
        tui_flame_view_format(v, v->share, sb, sizeof sb);
        x += tui_canvas_printf(c, row, x, TUI_STYLE_MATCH, TUI_F_BOLD, "/%s/", v->pattern);
        x += tui_canvas_printf(c, row, x, TUI_STYLE_NORMAL, TUI_F_BOLD, " %.1f%% (%s, %ld frames)",
                               tui_percent(v->share, all), sb, v->nmatches);
        x += tui_canvas_puts(c, row, x, " | ", TUI_STYLE_DIM, 0);
    }
    const jp_kind_table *t = &v->prof->kinds[v->kind];
    if (!t->count) {
        tui_canvas_printf(c, row, x, TUI_STYLE_WARN, 0, "no events of kind %s",
                          jp_kind_name(v->kind));
        return;
    }
    selection_info(v, c, row, x);
}

static const struct {
    const char *key, *label;
} keys[] = {
    {"F1", "Help"},   {"/", "Search"},  {"n", "Next"}, {"Enter", "Zoom"},
    {"Esc", "Out"},   {"r", "Reverse"}, {"k", "Kind"}, {"v", "Value"},
    {"Tab", "Table"}, {"t", "Threads"}, {"q", "Quit"},
};

void tui_flame_chrome_keybar(const tui_flame_view *v, tui_canvas *c, int row)
{
    (void)v;
    int x = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0] && x < c->cols; i++) {
        x += tui_canvas_puts(c, row, x, keys[i].key, TUI_STYLE_KEY, TUI_F_BOLD);
        x += tui_canvas_puts(c, row, x, keys[i].label, TUI_STYLE_KEYLABEL, 0);
        x += tui_canvas_puts(c, row, x, " ", TUI_STYLE_NORMAL, 0);
    }
}

static const char *const help_lines[] = {
    "jprof-top: flame graph of a JFR recording",
    "",
    "  Left/Right   previous/next frame on the same row",
    "  Up/Down      parent frame / child frame",
    "  Home         back to the zoomed frame",
    "  Enter        zoom into the selected frame",
    "  Esc, Bksp    zoom out one level (or clear the search)",
    "  /, F3        search frames by POSIX extended regex",
    "  n / N        next / previous match",
    "  r            callers of the selected frame (r again: back)",
    "  0-9, k, K    kind: 1 cpu 2 wall 3 alloc 4 lock 5 park 6 nativemem",
    "               7 live 8 nativelock 9 cputime 0 io; k/K cycle",
    "  v            samples <-> total (ns or bytes, in human units)",
    "  t            thread names as the root frames on/off",
    "  Tab          move between the flame graph and the top table",
    "  i            io: endpoints and files waited on (with --io-detail)",
    "  m            --diff: normalise per sample, per second or not at all",
    "  G            GC: pauses, heap before/after, allocation rate",
    "  ?, F1        this help        q, F10   quit",
    "",
    "Top table: self and total of each frame under the zoomed frame,",
    "sorted by self. Enter on a row selects that frame in the graph.",
    "",
    "Frame colours:",
};

void tui_flame_chrome_help(const tui_flame_view *v, tui_canvas *c)
{
    (void)v;
    int row = 0;
    for (size_t i = 0; i < sizeof help_lines / sizeof help_lines[0]; i++, row++)
        tui_canvas_puts(c, row, 0, help_lines[i], i == 0 ? TUI_STYLE_TITLE : TUI_STYLE_NORMAL,
                        i == 0 ? TUI_F_BOLD : 0);
    draw_legend(c, row - 1, 15);
    tui_canvas_puts(c, row + 1, 0, "Press any key to return.", TUI_STYLE_DIM, 0);
}
