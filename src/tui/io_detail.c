/* io_detail.c - the endpoints and files of I/O waits (see io_detail.h). */
#include "tui/io_detail.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "model/units.h"
#include "tui/flame_chrome.h"
#include "wire/flame_json.h"

static const char *const columns[] = {"endpoint", "path"};

jp_err tui_io_detail_write_text(FILE *out, const jp_io_detail *d, jp_error *err)
{
    fprintf(out,
            "# io detail (local only, never uploaded): %" PRIu64 " socket waits, %" PRIu64
            " file waits\n",
            d->events[JP_IO_SOCKET], d->events[JP_IO_FILE]);
    fprintf(out, "%-6s %10s %12s  %s\n", "TYPE", "EVENTS", "BLOCKED", "ENDPOINT / PATH");
    for (int t = 0; t < JP_IO_TARGET_COUNT; t++) {
        const jp_io_entry **rows;
        size_t n = jp_io_detail_top(d, (jp_io_target)t, 0, &rows);
        for (size_t i = 0; i < n; i++) {
            char b[32];
            jp_format_value(JP_KIND_IO, 1, rows[i]->ns, b, sizeof b);
            fprintf(out, "%-6s %10" PRIu64 " %12s  %.*s\n", jp_io_target_name((jp_io_target)t),
                    rows[i]->events, b, (int)rows[i]->len, rows[i]->name);
        }
        free(rows);
        if (d->other_events[t]) {
            char b[32];
            jp_format_value(JP_KIND_IO, 1, d->other_ns[t], b, sizeof b);
            fprintf(out, "%-6s %10" PRIu64 " %12s  [more than %d names: not listed]\n",
                    jp_io_target_name((jp_io_target)t), d->other_events[t], b, JP_IO_MAX_ENTRIES);
        }
    }
    if (fflush(out) != 0 || ferror(out))
        return jp_error_set(err, JP_ERR_IO, "write error: %s", strerror(errno));
    return JP_OK;
}

json_t *tui_io_detail_json(const jp_io_detail *d)
{
    json_t *o = json_object();
    for (int t = 0; t < JP_IO_TARGET_COUNT; t++) {
        json_t *side = json_object(), *top = json_array();
        json_object_set_new(side, "events", json_integer((json_int_t)d->events[t]));
        json_object_set_new(side, "blocked_ns", json_integer((json_int_t)d->ns[t]));
        json_object_set_new(side, "unlisted_events", json_integer((json_int_t)d->other_events[t]));
        json_object_set_new(side, "unlisted_ns", json_integer((json_int_t)d->other_ns[t]));
        const jp_io_entry **rows;
        size_t n = jp_io_detail_top(d, (jp_io_target)t, 0, &rows);
        for (size_t i = 0; i < n; i++) {
            json_t *r = json_object();
            json_object_set_new(r, columns[t], jp_json_string(rows[i]->name, rows[i]->len));
            json_object_set_new(r, "events", json_integer((json_int_t)rows[i]->events));
            json_object_set_new(r, "blocked_ns", json_integer((json_int_t)rows[i]->ns));
            json_array_append_new(top, r);
        }
        free(rows);
        json_object_set_new(side, "top", top);
        json_object_set_new(o, t == JP_IO_SOCKET ? "sockets" : "files", side);
    }
    return o;
}

/* ---- the panel: sockets then files, one list ---- */

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
