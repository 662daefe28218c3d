/* flame_io.c - the I/O panel of the flame view (key i while the io kind is
 * shown, in place of the top table): the endpoints and files waited on. */
#include "tui/flame_io.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "model/units.h"
#include "tui/flame_chrome.h"

/* sockets then files, one list */
static size_t panel_rows(const tui_flame_view *v, const jp_io_entry ***out)
{
    const jp_io_detail *d = v->io;
    // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
    const jp_io_entry **all = jp_xcalloc(d->count ? d->count : 1, sizeof *all);
    size_t n = 0;
    for (int t = 0; t < JP_IO_TARGET_COUNT; t++) {
        const jp_io_entry **rows;
        size_t k = jp_io_detail_top(d, (jp_io_target)t, 0, &rows);
        // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
        memcpy(all + n, rows, k * sizeof *rows);
        n += k;
        free(rows);
    }
    *out = all;
    return n;
}

void tui_io_panel_render(const tui_flame_view *v, tui_canvas *c, int top, int h)
{
    const jp_io_detail *d = v->io;
    bool focus = v->focus == TUI_FOCUS_TABLE;
    tui_style hs = focus ? TUI_STYLE_ACTIVE : TUI_STYLE_TABLEHEAD;
    tui_canvas_fill(c, top, 0, c->cols, ' ', hs, 0);
    tui_canvas_printf(c, top, 0, hs, TUI_F_BOLD,
                      "%-6s %8s %10s %6s  ENDPOINT / PATH (%zu, local only)   i: top table", "TYPE",
                      "EVENTS", "BLOCKED", "%", d->count);
    const jp_io_entry **rows;
    size_t n = panel_rows(v, &rows);
    uint64_t all = d->ns[JP_IO_SOCKET] + d->ns[JP_IO_FILE];
    if (!n && h > 1)
        tui_canvas_puts(c, top + 1, 0,
                        "no socket or file waits with an endpoint or path in this profile",
                        TUI_STYLE_NORMAL, 0);
    for (int r = 1; r < h; r++) {
        size_t i = (size_t)(v->io_scroll + r - 1);
        if (i >= n)
            break;
        char b[32];
        jp_format_value(JP_KIND_IO, 1, rows[i]->ns, b, sizeof b);
        int x = tui_canvas_printf(
            c, top + r, 0, TUI_STYLE_NORMAL, 0, "%-6s %8" PRIu64 " %10s %5.1f%%  ",
            jp_io_target_name(rows[i]->target), rows[i]->events, b, tui_percent(rows[i]->ns, all));
        tui_canvas_text(c, top + r, x, rows[i]->name, rows[i]->len, -1, TUI_STYLE_NORMAL, 0);
    }
    free(rows);
}

tui_action tui_io_panel_key(tui_flame_view *v, int key)
{
    int page = v->table_h > 2 ? v->table_h - 2 : 1;
    int end = (int)v->io->count - (v->table_h > 1 ? v->table_h - 1 : 1);
    if (!tui_scroll_key(&v->io_scroll, key, page, end))
        return TUI_ACTION_NONE;
    if (v->io_scroll > end)
        v->io_scroll = end;
    if (v->io_scroll < 0)
        v->io_scroll = 0;
    return TUI_ACTION_REDRAW;
}
