#include "tui/flame_panel.h"

#include <string.h>

#include "tui/flame_chrome.h"

static bool is_java(const jp_profile *p, uint32_t frame)
{
    if (frame == JP_FLAME_NONE || frame >= p->nframes)
        return false;
    jp_frame_kind k = jp_frame_primary_kind(&p->frames[frame]);
    return k == JP_FRAME_INTERPRETED || k == JP_FRAME_JIT || k == JP_FRAME_INLINED ||
           k == JP_FRAME_C1;
}

size_t tui_bar_label(const char *name, size_t len, bool java, int room, const char **out, bool *cut)
{
    *out = name;
    *cut = false;
    if (room <= 0)
        return 0;
    if (tui_utf8_columns(name, len) <= (size_t)room)
        return len;
    if (java) {
        /* "com.shop.ShopService.checkout" -> "ShopService.checkout". Parts
         * starting with a digit are not identifiers but suffixes of hidden
         * classes ("Foo$$Lambda$1.0x0000f00d.run"): keep the class they
         * belong to. */
        int dots = 0;
        for (size_t i = len; i > 0; i--) {
            if (name[i - 1] != '.' || ++dots < 2)
                continue;
            if (i < len && name[i] >= '0' && name[i] <= '9')
                continue;
            *out = name + i;
            len -= i;
            break;
        }
        if (tui_utf8_columns(*out, len) <= (size_t)room)
            return len;
    }
    if (room >= 4) {
        *cut = true;
        return tui_utf8_prefix(*out, len, (size_t)room - 2);
    }
    return 0; /* a letter or two of a cut name is noise: colour is enough */
}

static void draw_bar(const tui_flame_view *v, tui_canvas *c, int row, const tui_bar *b)
{
    const jp_flame *f = v->cur;
    uint32_t frame = f->nodes[b->node].frame;
    bool match = v->pattern[0] && v->matches && b->node < v->matches_cap && v->matches[b->node];
    tui_style st = match                               ? TUI_STYLE_MATCH
                   : v->diff && frame != JP_FLAME_NONE ? tui_flame_view_diff_style(v, b->node)
                                                       : tui_frame_style(v->prof, frame);
    unsigned flags = b->node == v->sel ? TUI_F_REVERSE | TUI_F_BOLD : 0;
    /* The last column of a bar is a gap so neighbours stay apart. */
    int inner = b->w > 1 ? b->w - 1 : 1;
    tui_canvas_fill(c, row, b->x, inner, ' ', st, flags);
    size_t len;
    const char *name = jp_flame_node_name(f, b->node, &len);
    const char *label;
    bool cut;
    size_t n = tui_bar_label(name, len, is_java(v->prof, frame), inner, &label, &cut);
    int x = b->x + tui_canvas_text(c, row, b->x, label, n, inner, st, flags);
    if (cut)
        tui_canvas_text(c, row, x, "..", 2, b->x + inner - x, st, flags);
}

void tui_flame_panel_render(const tui_flame_view *v, tui_canvas *c, int top, int h)
{
    const tui_flame_layout *l = &v->layout;
    if (!l->nbars) {
        if (jp_profile_has_kind(v->prof, v->kind) || v->rev)
            tui_canvas_printf(c, top + h / 2, 2, TUI_STYLE_WARN, 0, "nothing to show here (%s)",
                              v->by_value ? "all values are 0" : "no samples");
        else
            tui_canvas_printf(c, top + h / 2, 2, TUI_STYLE_WARN, TUI_F_BOLD,
                              "no events of kind %s in this recording", jp_kind_name(v->kind));
        return;
    }
    for (int r = 0; r < h; r++) {
        uint32_t d = (uint32_t)(v->scroll + r);
        if (d >= l->depths)
            break;
        for (size_t i = l->row_start[d]; i < l->row_start[d + 1]; i++)
            draw_bar(v, c, top + r, &l->bars[i]);
    }
}

static uint32_t first_drawn_child(const tui_flame_view *v, uint32_t node)
{
    const jp_flame *f = v->cur;
    for (uint32_t ch = f->nodes[node].first_child; ch != JP_FLAME_NONE;
         ch = f->nodes[ch].next_sibling)
        if (tui_flame_layout_find(&v->layout, ch) >= 0)
            return ch;
    return JP_FLAME_NONE;
}

static bool move_up(tui_flame_view *v)
{
    if (v->sel == tui_flame_view_zoom_root(v))
        return false;
    v->last_child = v->sel;
    v->sel = v->cur->nodes[v->sel].parent;
    return true;
}

static bool move_down(tui_flame_view *v)
{
    uint32_t next = JP_FLAME_NONE;
    if (v->last_child != JP_FLAME_NONE && v->last_child < v->cur->count &&
        v->cur->nodes[v->last_child].parent == v->sel &&
        tui_flame_layout_find(&v->layout, v->last_child) >= 0)
        next = v->last_child;
    else
        next = first_drawn_child(v, v->sel);
    if (next == JP_FLAME_NONE)
        return false;
    v->sel = next;
    v->last_child = JP_FLAME_NONE;
    return true;
}

static void move_side(tui_flame_view *v, int dir)
{
    const tui_flame_layout *l = &v->layout;
    int b = tui_flame_layout_find(l, v->sel);
    if (b < 0)
        return;
    long nb = (long)b + dir;
    if (nb < 0 || (size_t)nb >= l->nbars || l->bars[nb].depth != l->bars[b].depth)
        return;
    v->sel = l->bars[nb].node;
    v->last_child = JP_FLAME_NONE;
}

static void zoom_out(tui_flame_view *v)
{
    if (tui_flame_view_zoom_pop(v))
        return;
    if (v->pattern[0]) {
        tui_flame_view_search(v, "");
        tui_flame_view_message(v, false, "search cleared");
    } else if (v->rev) {
        tui_flame_view_reverse(v, false);
    }
}

tui_action tui_flame_panel_key(tui_flame_view *v, int key)
{
    int page = v->flame_h > 2 ? v->flame_h - 1 : 1;
    switch (key) {
    case TUI_KEY_LEFT:
    case TUI_KEY_RIGHT:
        move_side(v, key == TUI_KEY_LEFT ? -1 : 1);
        return TUI_ACTION_REDRAW;
    case TUI_KEY_UP:
        move_up(v);
        return TUI_ACTION_REDRAW;
    case TUI_KEY_DOWN:
        move_down(v);
        return TUI_ACTION_REDRAW;
    case TUI_KEY_PGUP:
        for (int i = 0; i < page && move_up(v); i++)
            ;
        return TUI_ACTION_REDRAW;
    case TUI_KEY_PGDN:
        for (int i = 0; i < page && move_down(v); i++)
            ;
        return TUI_ACTION_REDRAW;
    case TUI_KEY_HOME:
        v->sel = tui_flame_view_zoom_root(v);
        return TUI_ACTION_REDRAW;
    case TUI_KEY_ENTER:
        if (v->sel == tui_flame_view_zoom_root(v))
            tui_flame_view_message(v, false, "already zoomed here: move to a frame below first");
        else
            tui_flame_view_zoom_push(v, v->sel);
        return TUI_ACTION_REDRAW;
    case TUI_KEY_ESC:
    case TUI_KEY_BACKSPACE:
        zoom_out(v);
        return TUI_ACTION_REDRAW;
    default:
        return TUI_ACTION_NONE;
    }
}
