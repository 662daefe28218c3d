#include "tui/flame_table.h"

#include <stdio.h>

#include "tui/flame_chrome.h"
#include "tui/flame_panel.h"
#include "tui/recording.h"

/* Column layout: "    SELF  SELF%      TOTAL TOTAL% ■ NAME". */
#define VALUE_W 10

static int visible_rows(const tui_flame_view *v)
{
    return v->table_h > 1 ? v->table_h - 1 : 0;
}

void tui_flame_table_fix(tui_flame_view *v)
{
    int n = (int)v->ntop;
    if (v->top_sel >= n)
        v->top_sel = n - 1;
    if (v->top_sel < 0)
        v->top_sel = 0;
    int h = visible_rows(v);
    if (h <= 0)
        return;
    if (v->top_sel < v->top_scroll)
        v->top_scroll = v->top_sel;
    if (v->top_sel >= v->top_scroll + h)
        v->top_scroll = v->top_sel - h + 1;
    if (v->top_scroll > n - h)
        v->top_scroll = n - h;
    if (v->top_scroll < 0)
        v->top_scroll = 0;
}

static void render_row(const tui_flame_view *v, tui_canvas *c, int row, size_t i, uint64_t all)
{
    const jp_top_row *r = &v->top[i];
    uint64_t self = v->by_value ? r->self_value : r->self_samples;
    uint64_t tot = v->by_value ? r->total_value : r->total_samples;
    char sb[32], tb[32];
    tui_flame_view_format(v, self, sb, sizeof sb);
    tui_flame_view_format(v, tot, tb, sizeof tb);
    bool cursor = v->focus == TUI_FOCUS_TABLE && (int)i == v->top_sel;
    bool selected = r->frame == v->cur->nodes[v->sel].frame;
    unsigned flags = (cursor ? TUI_F_REVERSE : 0) | (selected ? TUI_F_BOLD : 0);
    if (cursor)
        tui_canvas_fill(c, row, 0, c->cols, ' ', TUI_STYLE_NORMAL, flags);
    int x =
        tui_canvas_printf(c, row, 0, TUI_STYLE_NORMAL, flags, "%*s %5.1f%% %*s %5.1f%% ", VALUE_W,
                          sb, tui_percent(self, all), VALUE_W, tb, tui_percent(tot, all));
    tui_canvas_fill(c, row, x, 1, ' ', tui_frame_style(v->prof, r->frame), 0);
    x += 2;
    bool match = v->pattern[0] && v->frame_matches && r->frame < v->frame_matches_cap &&
                 v->frame_matches[r->frame];
    size_t len;
    const char *name = tui_frame_name(v->prof, r->frame, &len);
    tui_canvas_text(c, row, x, name, len, -1, match ? TUI_STYLE_MATCH : TUI_STYLE_NORMAL, flags);
}

/* A change as "+12", "-3.5 ms", "=". */
static void format_change(const tui_flame_view *v, double dl, char *buf, size_t len)
{
    if (dl > -0.5 && dl < 0.5) {
        snprintf(buf, len, "=");
        return;
    }
    if (len < 2)
        return;
    buf[0] = dl < 0 ? '-' : '+';
    tui_flame_view_format(v, (uint64_t)(dl < 0 ? -dl + 0.5 : dl + 0.5), buf + 1, len - 1);
}

static void render_diff_row(const tui_flame_view *v, tui_canvas *c, int row, size_t i)
{
    const jp_diff_row *r = &v->drows[i];
    char os[32], ns[32], ds[32], ot[32], nt[32], dt[32];
    tui_flame_view_format(v, (uint64_t)(r->old_self + 0.5), os, sizeof os);
    tui_flame_view_format(v, r->new_self, ns, sizeof ns);
    format_change(v, (double)r->new_self - r->old_self, ds, sizeof ds);
    tui_flame_view_format(v, (uint64_t)(r->old_total + 0.5), ot, sizeof ot);
    tui_flame_view_format(v, r->new_total, nt, sizeof nt);
    format_change(v, (double)r->new_total - r->old_total, dt, sizeof dt);
    bool cursor = v->focus == TUI_FOCUS_TABLE && (int)i == v->top_sel;
    bool selected = r->frame == v->cur->nodes[v->sel].frame;
    unsigned flags = (cursor ? TUI_F_REVERSE : 0) | (selected ? TUI_F_BOLD : 0);
    if (cursor)
        tui_canvas_fill(c, row, 0, c->cols, ' ', TUI_STYLE_NORMAL, flags);
    double dself = (double)r->new_self - r->old_self;
    tui_style chg = dself >= 0.5    ? TUI_STYLE_DIFF_GROW2
                    : dself <= -0.5 ? TUI_STYLE_DIFF_SHRINK2
                                    : TUI_STYLE_NORMAL;
    int x = tui_canvas_printf(c, row, 0, TUI_STYLE_NORMAL, flags, "%9s %9s ", os, ns);
    x += tui_canvas_printf(c, row, x, chg, flags, "%9s", ds);
    x += tui_canvas_printf(c, row, x, TUI_STYLE_NORMAL, flags, "  %9s %9s %9s  ", ot, nt, dt);
    bool match = v->pattern[0] && v->frame_matches && r->frame < v->frame_matches_cap &&
                 v->frame_matches[r->frame];
    size_t len;
    const char *name = tui_frame_name(v->prof, r->frame, &len);
    tui_canvas_text(c, row, x, name, len, -1, match ? TUI_STYLE_MATCH : TUI_STYLE_NORMAL, flags);
}

/* The table of a comparison: both sides of self and total, sorted by the
 * change of self, then of total. */
static void render_diff(const tui_flame_view *v, tui_canvas *c, int top, int h, tui_style hs)
{
    int x = tui_canvas_printf(c, top, 0, hs, TUI_F_BOLD, "%9s %9s %9s  %9s %9s %9s  ", "OLD-SELF",
                              "NEW-SELF", "CHANGE", "OLD-TOTAL", "NEW-TOTAL", "CHANGE");
    tui_canvas_printf(c, top, x, hs, TUI_F_BOLD, "FRAME (%zu) by change", v->ntop);
    for (int r = 1; r < h; r++) {
        size_t i = (size_t)(v->top_scroll + r - 1);
        if (i >= v->ntop)
            break;
        render_diff_row(v, c, top + r, i);
    }
}

void tui_flame_table_render(const tui_flame_view *v, tui_canvas *c, int top, int h)
{
    uint32_t zr = tui_flame_view_zoom_root(v);
    size_t zlen;
    const char *zname = jp_flame_node_name(v->cur, zr, &zlen);
    bool focus = v->focus == TUI_FOCUS_TABLE;
    tui_style hs = focus ? TUI_STYLE_ACTIVE : TUI_STYLE_TABLEHEAD;
    tui_canvas_fill(c, top, 0, c->cols, ' ', hs, 0);
    if (v->diff && v->drows) {
        render_diff(v, c, top, h, hs);
        return;
    }
    int x = tui_canvas_printf(c, top, 0, hs, TUI_F_BOLD, "%*s %6s %*s %6s   ", VALUE_W, "SELF",
                              "SELF%", VALUE_W, "TOTAL", "TOTAL%");
    x += tui_canvas_printf(c, top, x, hs, TUI_F_BOLD, "FRAME (%zu) under ", v->ntop);
    const char *label;
    bool cut;
    size_t n = tui_bar_label(zname, zlen, true, c->cols - x, &label, &cut);
    x += tui_canvas_text(c, top, x, label, n, -1, hs, TUI_F_BOLD);
    if (cut)
        tui_canvas_puts(c, top, x, "..", hs, TUI_F_BOLD);
    uint64_t all = jp_flame_total(v->cur, zr, v->by_value);
    for (int r = 1; r < h; r++) {
        size_t i = (size_t)(v->top_scroll + r - 1);
        if (i >= v->ntop)
            break;
        render_row(v, c, top + r, i, all);
    }
}

/* The largest node of `frame` under the zoom root, preferring drawn ones. */
static uint32_t find_frame_node(const tui_flame_view *v, uint32_t frame)
{
    const jp_flame *f = v->cur;
    uint32_t root = tui_flame_view_zoom_root(v), best = JP_FLAME_NONE, best_any = JP_FLAME_NONE;
    uint32_t n = root;
    while (n != JP_FLAME_NONE) {
        if (f->nodes[n].frame == frame) {
            uint64_t t = jp_flame_total(f, n, v->by_value);
            if (best_any == JP_FLAME_NONE || t > jp_flame_total(f, best_any, v->by_value))
                best_any = n;
            if (tui_flame_layout_find(&v->layout, n) >= 0 &&
                (best == JP_FLAME_NONE || t > jp_flame_total(f, best, v->by_value)))
                best = n;
        }
        n = jp_flame_next_preorder(f, n, root);
    }
    return best != JP_FLAME_NONE ? best : best_any;
}

tui_action tui_flame_table_key(tui_flame_view *v, int key)
{
    int page = visible_rows(v) > 1 ? visible_rows(v) - 1 : 1;
    switch (key) {
    case TUI_KEY_UP:
        v->top_sel--;
        break;
    case TUI_KEY_DOWN:
        v->top_sel++;
        break;
    case TUI_KEY_PGUP:
        v->top_sel -= page;
        break;
    case TUI_KEY_PGDN:
        v->top_sel += page;
        break;
    case TUI_KEY_HOME:
        v->top_sel = 0;
        break;
    case TUI_KEY_END:
        v->top_sel = (int)v->ntop - 1;
        break;
    case TUI_KEY_ENTER:
        if (v->top_sel >= 0 && (size_t)v->top_sel < v->ntop) {
            uint32_t node = find_frame_node(v, v->top[v->top_sel].frame);
            if (node != JP_FLAME_NONE) {
                v->sel = node;
                v->last_child = JP_FLAME_NONE;
                if (tui_flame_layout_find(&v->layout, node) < 0)
                    tui_flame_view_message(v, false, "too narrow to show here: zoom in");
            }
        }
        v->focus = TUI_FOCUS_FLAME;
        break;
    case TUI_KEY_ESC:
    case TUI_KEY_BACKSPACE:
        v->focus = TUI_FOCUS_FLAME;
        break;
    default:
        return TUI_ACTION_NONE;
    }
    tui_flame_table_fix(v);
    return TUI_ACTION_REDRAW;
}
