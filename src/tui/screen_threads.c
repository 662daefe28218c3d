/* screen_threads.c - the Threads screen: the busiest threads first (or
 * sorted by total CPU, state, name), filtered by name or state, the cursor
 * kept on its thread across refreshes; Enter opens a thread's stack. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "model/units.h"
#include "tui/screens_int.h"

static const char *const sort_names[TUI_SORT_COUNT] = {"CPU%", "total CPU", "state", "name"};

int64_t tui_screen_thread_key(const jp_thread *t)
{
    return t->id >= 0 ? t->id : -2 - t->native_id;
}

static bool ci_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (!n)
        return true;
    for (const char *p = hay; *p; p++) {
        size_t k = 0;
        while (k < n && p[k] && tolower((unsigned char)p[k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return true;
    }
    return false;
}

static bool thread_matches(const tui_screens *v, const jp_thread *t)
{
    return ci_contains(t->name ? t->name : "", v->filter) ||
           ci_contains(jp_thread_state_name(t->state), v->filter);
}

static const jp_snapshot *snap(const tui_screens *v)
{
    return v->live ? v->live->cur : NULL;
}

static int cmp_sort;

static const tui_screens *cmp_view;

static int thread_cmp(const void *a, const void *b)
{
    const jp_snapshot *s = snap(cmp_view);
    size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
    const jp_thread *x = &s->threads[ia], *y = &s->threads[ib];
    int c = 0;
    if (cmp_sort == TUI_SORT_CPU_TOTAL)
        c = (x->cpu_ns < y->cpu_ns) - (x->cpu_ns > y->cpu_ns);
    else if (cmp_sort == TUI_SORT_STATE)
        c = (int)x->state - (int)y->state;
    if (c == 0)
        c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
    return c ? c : (ia > ib) - (ia < ib);
}

void tui_screen_threads_build(tui_screens *v)
{
    const jp_snapshot *s = snap(v);
    v->norder = 0;
    if (!s)
        return;
    v->order = jp_xgrow(v->order, &v->order_cap, s->count ? s->count : 1, sizeof *v->order);
    v->pct = jp_xgrow(v->pct, &v->pct_cap, s->count ? s->count : 1, sizeof *v->pct);
    for (size_t i = 0; i < s->count; i++)
        v->pct[i] = -1;
    /* the busy ranking (model/busy.h), then the VM-internal threads it leaves out */
    const jp_busy_summary *rk = &v->live->rank;
    for (size_t i = 0; i < rk->count; i++) {
        long t = rk->items[i].thread;
        if (t < 0)
            continue;
        v->pct[t] = rk->items[i].cpu_pct;
        if (v->sort == TUI_SORT_CPU_PCT && thread_matches(v, &s->threads[t]))
            v->order[v->norder++] = (size_t)t;
    }
    const jp_busy_list *b = &v->live->busy;
    for (size_t i = 0; i < b->count; i++) {
        if (!s->threads[b->items[i].thread].vm_internal)
            continue;
        v->pct[b->items[i].thread] = b->items[i].cpu_pct;
        if (v->sort == TUI_SORT_CPU_PCT && thread_matches(v, &s->threads[b->items[i].thread]))
            v->order[v->norder++] = b->items[i].thread;
    }
    if (v->sort != TUI_SORT_CPU_PCT) {
        for (size_t i = 0; i < s->count; i++)
            if (thread_matches(v, &s->threads[i]))
                v->order[v->norder++] = i;
        cmp_sort = v->sort;
        cmp_view = v;
        qsort(v->order, v->norder, sizeof *v->order, thread_cmp);
    }
    /* keep the cursor on the same thread */
    int found = -1;
    for (size_t i = 0; i < v->norder && v->sel_id != INT64_MIN; i++)
        if (tui_screen_thread_key(&s->threads[v->order[i]]) == v->sel_id)
            found = (int)i;
    if (found >= 0)
        v->sel = found;
    if (v->sel >= (int)v->norder)
        v->sel = (int)v->norder - 1;
    if (v->sel < 0)
        v->sel = 0;
    if (v->norder)
        v->sel_id = tui_screen_thread_key(&s->threads[v->order[v->sel]]);
}

tui_action tui_screen_threads_prompt_key(tui_screens *v, int key)
{
    if (key == TUI_KEY_ESC) {
        v->prompt = false;
    } else if (key == TUI_KEY_ENTER) {
        v->prompt = false;
        v->input[v->input_len] = '\0';
        snprintf(v->filter, sizeof v->filter, "%s", v->input);
        tui_screen_threads_build(v);
        tui_screens_message(v, false,
                            v->filter[0] ? "filter: %s (%zu threads)" : "filter cleared%.0s",
                            v->filter, v->norder);
    } else if (key == TUI_KEY_BACKSPACE) {
        if (v->input_len)
            v->input_len--;
    } else if (key >= 0x20 && key < 0x7f && v->input_len + 1 < sizeof v->input) {
        v->input[v->input_len++] = (char)key;
    } else {
        return TUI_ACTION_NONE;
    }
    return TUI_ACTION_REDRAW;
}

static void move_sel(tui_screens *v, int delta)
{
    v->sel += delta;
    if (v->sel >= (int)v->norder)
        v->sel = (int)v->norder - 1;
    if (v->sel < 0)
        v->sel = 0;
    if (v->norder)
        v->sel_id = tui_screen_thread_key(&v->live->cur->threads[v->order[v->sel]]);
}

tui_action tui_screen_threads_key(tui_screens *v, int key)
{
    int page = tui_screens_body_rows(v) > 2 ? tui_screens_body_rows(v) - 2 : 1;
    switch (key) {
    case TUI_KEY_UP:
        move_sel(v, -1);
        break;
    case TUI_KEY_DOWN:
        move_sel(v, 1);
        break;
    case TUI_KEY_PGUP:
        move_sel(v, -page);
        break;
    case TUI_KEY_PGDN:
        move_sel(v, page);
        break;
    case TUI_KEY_HOME:
        move_sel(v, -(int)v->norder);
        break;
    case TUI_KEY_END:
        move_sel(v, (int)v->norder);
        break;
    case TUI_KEY_ENTER:
        if (v->norder) {
            const jp_thread *t = &v->live->cur->threads[v->order[v->sel]];
            v->stack = true;
            v->stack_id = tui_screen_thread_key(t);
            snprintf(v->stack_name, sizeof v->stack_name, "%s", t->name ? t->name : "?");
            v->scroll[TUI_SCREEN_THREADS] = 0;
            tui_screen_text_build(v);
        }
        break;
    case 's':
        v->sort = (tui_thread_sort)((v->sort + 1) % TUI_SORT_COUNT);
        tui_screen_threads_build(v);
        tui_screens_message(v, false, "sorted by %s", sort_names[v->sort]);
        break;
    case '/':
    case TUI_KEY_F4:
        v->prompt = true;
        snprintf(v->input, sizeof v->input, "%s", v->filter);
        v->input_len = strlen(v->input);
        break;
    case TUI_KEY_ESC:
        if (v->filter[0]) {
            v->filter[0] = '\0';
            tui_screen_threads_build(v);
            tui_screens_message(v, false, "filter cleared");
        }
        break;
    default:
        return TUI_ACTION_NONE;
    }
    return TUI_ACTION_REDRAW;
}

void tui_screen_threads_render(const tui_screens *v, tui_canvas *c, int top, int h)
{
    const jp_snapshot *s = v->live->cur;
    tui_canvas_fill(c, top, 0, c->cols, ' ', TUI_STYLE_TABLEHEAD, 0);
    tui_canvas_printf(c, top, 0, TUI_STYLE_TABLEHEAD, TUI_F_BOLD, "%6s %9s %-13s %6s %-28s %s",
                      "CPU%", "CPU", "STATE", "BLOCKS", "THREAD", "TOP FRAME");
    char sorted[96];
    int sw = snprintf(sorted, sizeof sorted, "sort: %s%s%s ", sort_names[v->sort],
                      v->filter[0] ? "  filter: " : "", v->filter);
    if (sw > 0 && sw < c->cols / 2)
        tui_canvas_puts(c, top, c->cols - sw, sorted, TUI_STYLE_TABLEHEAD, TUI_F_BOLD);
    if (!s) {
        tui_canvas_puts(c, top + 1, 2, tui_target_no_snapshot(v->live), TUI_STYLE_DIM, 0);
        return;
    }
    int rows = h - 1, first = 0;
    if (v->sel >= rows)
        first = v->sel - rows + 1;
    for (int r = 0; r < rows && (size_t)first + (size_t)r < v->norder; r++) {
        size_t i = v->order[first + r];
        const jp_thread *t = &s->threads[i];
        char pct[32] = "-", cpu[32] = "-", blocks[32] = "", frame[512] = "";
        if (v->pct[i] >= 0)
            snprintf(pct, sizeof pct, "%.1f", v->pct[i]);
        if (t->cpu_ns >= 0)
            jp_format_ns((uint64_t)t->cpu_ns, cpu, sizeof cpu);
        if (v->live->blocks && v->live->blocks[i])
            snprintf(blocks, sizeof blocks, "%zu", v->live->blocks[i]);
        if (t->nframes)
            jp_snap_frame_format(&t->frames[0], frame, sizeof frame);
        bool cursor = first + r == v->sel;
        unsigned fl = cursor ? TUI_F_REVERSE : 0;
        int row = top + 1 + r;
        if (cursor)
            tui_canvas_fill(c, row, 0, c->cols, ' ', TUI_STYLE_NORMAL, fl);
        tui_style st = t->state == JP_TSTATE_BLOCKED ? TUI_STYLE_WARN : TUI_STYLE_NORMAL;
        tui_canvas_printf(c, row, 0, st, fl, "%6s %9s %-13.13s %6s %-28.28s %s", pct, cpu,
                          t->vm_internal ? "(VM)" : jp_thread_state_name(t->state), blocks,
                          t->name ? t->name : "?", frame);
    }
    if (!v->norder)
        tui_canvas_printf(c, top + 1, 2, TUI_STYLE_DIM, 0, "no thread matches \"%s\"", v->filter);
}
