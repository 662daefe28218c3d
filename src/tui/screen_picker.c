/* screen_picker.c - the list a target is opened from (source.h's pickers:
 * the JVMs of this machine, the pods or targets of a service): its rows,
 * keys and drawing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jvm/proc.h"
#include "tui/report_target.h"
#include "tui/screens_int.h"
#include "tui/source.h"
#include "tui/target.h"

void tui_pick_list_init(tui_pick_list *l)
{
    memset(l, 0, sizeof *l);
}

void tui_pick_list_cleanup(tui_pick_list *l)
{
    free(l->rows);
    tui_pick_list_init(l);
}

tui_pick_row *tui_pick_list_add(tui_pick_list *l)
{
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->rows = jp_xrealloc(l->rows, l->cap * sizeof *l->rows);
    }
    tui_pick_row *r = &l->rows[l->count++];
    memset(r, 0, sizeof *r);
    return r;
}

void tui_picker_free(tui_picker *p)
{
    if (!p)
        return;
    if (p->free)
        p->free(p);
    free(p);
}

void tui_screen_picker_scan(tui_screens *v)
{
    jp_error err;
    jp_error_init(&err);
    v->picks.count = 0;
    if (v->picker->scan(v->picker, &v->picks, &err) != JP_OK)
        tui_screens_message(v, true, "%s", err.msg);
    if (v->pick_sel >= (int)v->picks.count)
        v->pick_sel = (int)v->picks.count - 1;
    if (v->pick_sel < 0)
        v->pick_sel = 0;
    v->next_list = v->picker->rescan_ns > 0 ? jp_time_mono_ns() + v->picker->rescan_ns : INT64_MAX;
}

tui_action tui_screen_picker_key(tui_screens *v, int key)
{
    switch (key) {
    case TUI_KEY_UP:
        v->pick_sel--;
        break;
    case TUI_KEY_DOWN:
        v->pick_sel++;
        break;
    case TUI_KEY_HOME:
        v->pick_sel = 0;
        break;
    case TUI_KEY_END:
        v->pick_sel = (int)v->picks.count - 1;
        break;
    case TUI_KEY_ENTER: {
        if (!v->picks.count)
            break;
        jp_error err;
        jp_error_init(&err);
        tui_target *l = NULL;
        if (v->picker->open(v->picker, (size_t)v->pick_sel, &v->opts, &l, &err) != JP_OK) {
            tui_screens_message(v, true, "%s", err.msg);
            break;
        }
        v->opts = l->opts;
        v->live = l;
        v->picking = false;
        v->next_refresh = 0;
        v->msg[0] = '\0';
        tui_screens_tick(v);
        if (l->profiles_only) /* pushed profiles (OTLP, Pyroscope): no threads to show */
            tui_screens_key(v, 'F');
        break;
    }
    case '?':
    case 'h':
    case TUI_KEY_F1:
        v->help = true;
        break;
    case 'q':
    case TUI_KEY_F10:
        return TUI_ACTION_QUIT;
    default:
        return TUI_ACTION_NONE;
    }
    if (v->pick_sel >= (int)v->picks.count)
        v->pick_sel = (int)v->picks.count - 1;
    if (v->pick_sel < 0)
        v->pick_sel = 0;
    return TUI_ACTION_REDRAW;
}

void tui_screen_picker_render(const tui_screens *v, tui_canvas *c)
{
    tui_canvas_fill(c, 0, 0, c->cols, ' ', TUI_STYLE_TITLE, 0);
    const tui_picker *pk = v->picker;
    tui_canvas_printf(c, 0, 0, TUI_STYLE_TITLE, TUI_F_BOLD, "jprof-top: %s (%zu)", pk->title,
                      v->picks.count);
    tui_canvas_fill(c, 1, 0, c->cols, ' ', TUI_STYLE_TABLEHEAD, 0);
    tui_canvas_puts(c, 1, 0, pk->head, TUI_STYLE_TABLEHEAD, TUI_F_BOLD);
    int h = c->rows - 4, first = v->pick_sel >= h && h > 0 ? v->pick_sel - h + 1 : 0;
    for (int r = 0; r < h && (size_t)first + (size_t)r < v->picks.count; r++) {
        const tui_pick_row *row = &v->picks.rows[first + r];
        unsigned fl = first + r == v->pick_sel ? TUI_F_REVERSE : 0;
        if (fl)
            tui_canvas_fill(c, 2 + r, 0, c->cols, ' ', TUI_STYLE_NORMAL, fl);
        tui_canvas_puts(c, 2 + r, 0, row->text, row->disabled ? TUI_STYLE_DIM : TUI_STYLE_NORMAL,
                        fl);
    }
    if (!v->picks.count)
        tui_canvas_puts(c, 3, 2, pk->empty, TUI_STYLE_DIM, 0);
    if (c->rows >= 4)
        tui_screens_status_row(v, c, c->rows - 2);
    int x = tui_canvas_puts(c, c->rows - 1, 0, "Enter", TUI_STYLE_KEY, TUI_F_BOLD);
    x += tui_canvas_puts(c, c->rows - 1, x, "Open", TUI_STYLE_KEYLABEL, 0);
    x += tui_canvas_puts(c, c->rows - 1, x, " q", TUI_STYLE_KEY, TUI_F_BOLD);
    tui_canvas_puts(c, c->rows - 1, x, "Quit", TUI_STYLE_KEYLABEL, 0);
}
