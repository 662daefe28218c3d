#include "tui/flame_view.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "tui/flame_chrome.h"
#include "tui/flame_io.h"
#include "tui/flame_panel.h"
#include "tui/flame_table.h"
#include "tui/report_gc.h"

tui_style tui_frame_style(const jp_profile *p, uint32_t frame)
{
    if (frame == JP_FLAME_NONE)
        return TUI_STYLE_ROOT;
    if (frame >= p->nframes) /* flame.c's "unknown thread" marker */
        return TUI_STYLE_FRAME_THREAD;
    return (tui_style)(TUI_STYLE_FRAME_INTERPRETED + jp_frame_primary_kind(&p->frames[frame]));
}

tui_style tui_flame_view_diff_style(const tui_flame_view *v, uint32_t node)
{
    double dl =
        (double)jp_flame_total(v->cur, node, v->by_value) - tui_flame_view_old_total(v, node);
    double mag = dl < 0 ? -dl : dl;
    if (v->diff_max <= 0 || mag < 0.5 || mag < 0.05 * v->diff_max)
        return TUI_STYLE_DIFF_SAME;
    int level = mag < v->diff_max / 3 ? 0 : mag < 2 * v->diff_max / 3 ? 1 : 2;
    return (tui_style)((dl > 0 ? TUI_STYLE_DIFF_GROW1 : TUI_STYLE_DIFF_SHRINK1) + level);
}

static void mark_all_dirty(tui_flame_view *v)
{
    v->dirty_layout = v->dirty_search = v->dirty_top = true;
}

tui_flame_view *tui_flame_view_new(const jp_profile *p, const jfr_report *rep, const char *path,
                                   jp_kind kind, bool by_value, bool threads)
{
    tui_flame_view *v = jp_xcalloc(1, sizeof *v);
    v->prof = p;
    v->rep = rep;
    v->path = path;
    v->kind = kind;
    v->by_value = by_value;
    v->threads = threads;
    v->fwd = jp_flame_build(p, kind, threads);
    v->cur = v->fwd;
    v->last_child = JP_FLAME_NONE;
    tui_flame_layout_init(&v->layout);
    v->rows = 24;
    v->cols = 80;
    mark_all_dirty(v);
    return v;
}

void tui_flame_view_free(tui_flame_view *v)
{
    if (!v)
        return;
    jp_flame_free(v->rev);
    jp_flame_free(v->fwd);
    free(v->zoom);
    free(v->saved_zoom);
    free(v->matches);
    free(v->frame_matches);
    free(v->top);
    free(v->drows);
    jp_flame_free(v->old_cur);
    free(v->old_map);
    tui_flame_layout_cleanup(&v->layout);
    if (v->gc)
        tui_lines_cleanup(v->gc);
    free(v->gc);
    free(v);
}

void tui_flame_view_resize(tui_flame_view *v, int rows, int cols)
{
    v->rows = rows < 1 ? 1 : rows;
    v->cols = cols < 1 ? 1 : cols;
    v->dirty_layout = true;
}

void tui_flame_view_message(tui_flame_view *v, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vsnprintf(v->msg, sizeof v->msg, fmt, ap);
    va_end(ap);
    v->msg_error = error;
}

/* ---- the zoom and the selection survive a new tree ---- */

/* A node as the names of its frames from the root. A profile interns its
 * frames by name, so within one profile a name path is a frame path; and a
 * name is what a frame keeps across windows, whose profiles number their
 * frames each their own way. So one way serves both a rebuilt tree (another
 * kind, threads off and on) and a new window (tui_flame_view_carry). */
typedef struct name_path {
    char **names;
    size_t n;
} name_path;

static void path_save(const jp_flame *f, uint32_t node, name_path *p)
{
    size_t depth = f->nodes[node].depth;
    p->n = 0;
    p->names = jp_xcalloc(depth ? depth : 1, sizeof *p->names);
    for (size_t i = depth; i > 0 && node != 0; i--) {
        size_t len;
        const char *name = jp_flame_node_name(f, node, &len);
        p->names[i - 1] = jp_xstrndup(name, len);
        node = f->nodes[node].parent;
        p->n++;
    }
}

/* The deepest node of f reached by following p's names from the root. */
static uint32_t path_follow(const jp_flame *f, const name_path *p)
{
    uint32_t node = 0;
    for (size_t i = 0; i < p->n; i++) {
        uint32_t c = f->nodes[node].first_child;
        for (; c != JP_FLAME_NONE; c = f->nodes[c].next_sibling) {
            size_t len;
            const char *name = jp_flame_node_name(f, c, &len);
            if (p->names[i] && strlen(p->names[i]) == len && !memcmp(name, p->names[i], len))
                break;
        }
        if (c == JP_FLAME_NONE)
            break;
        node = c;
    }
    return node;
}

/* The zoom stack and then the selection of v (in its tree `cur`) as name
 * paths: v->nzoom + 1 of them. */
static name_path *zoom_save(const tui_flame_view *v)
{
    name_path *paths = jp_xcalloc(v->nzoom + 1, sizeof *paths);
    for (size_t i = 0; i <= v->nzoom; i++)
        path_save(v->cur, i < v->nzoom ? v->zoom[i] : v->sel, &paths[i]);
    return paths;
}

/* Frees the n + 1 paths of zoom_save. */
static void zoom_paths_free(name_path *paths, size_t n)
{
    for (size_t i = 0; i <= n; i++) {
        for (size_t k = 0; k < paths[i].n; k++)
            free(paths[i].names[k]);
        free(paths[i].names);
    }
    free(paths);
}

/* Zooms v (in its tree `cur`, not zoomed yet) and selects as the n + 1
 * paths say, as far as they still exist; frees the paths. With `apply`
 * false only frees them. */
static void zoom_restore(tui_flame_view *v, name_path *paths, size_t n, bool apply)
{
    for (size_t i = 0; apply && i <= n; i++) {
        uint32_t node = path_follow(v->cur, &paths[i]);
        if (i < n)
            tui_flame_view_zoom_push(v, node); /* a node reached twice zooms once */
        else
            v->sel = node;
    }
    zoom_paths_free(paths, n);
}

void tui_flame_view_zoom_push(tui_flame_view *v, uint32_t node)
{
    if (node == tui_flame_view_zoom_root(v) || node >= v->cur->count)
        return;
    v->zoom = jp_xgrow(v->zoom, &v->zoom_cap, v->nzoom + 1, sizeof *v->zoom);
    v->zoom[v->nzoom++] = node;
    v->scroll = 0;
    mark_all_dirty(v);
}

bool tui_flame_view_zoom_pop(tui_flame_view *v)
{
    if (!v->nzoom)
        return false;
    v->sel = v->zoom[--v->nzoom];
    v->scroll = 0;
    mark_all_dirty(v);
    return true;
}

static void reverse_off(tui_flame_view *v)
{
    if (!v->rev)
        return;
    jp_flame_free(v->rev);
    v->rev = NULL;
    v->cur = v->fwd;
    v->old_of = NULL;
    v->zoom = jp_xgrow(v->zoom, &v->zoom_cap, v->saved_nzoom ? v->saved_nzoom : 1, sizeof *v->zoom);
    if (v->saved_nzoom)
        memcpy(v->zoom, v->saved_zoom, v->saved_nzoom * sizeof *v->zoom);
    v->nzoom = v->saved_nzoom;
    v->sel = v->saved_sel;
    v->last_child = JP_FLAME_NONE;
    mark_all_dirty(v);
}

/* Rebuilds the forward tree (kind or threads changed) keeping the zoom
 * stack and the selection where the same path exists. */
static void rebuild(tui_flame_view *v, jp_kind k, bool threads)
{
    reverse_off(v);
    bool same_shape = threads == v->threads;
    size_t nzoom = v->nzoom;
    name_path *paths = zoom_save(v);
    jp_flame_free(v->fwd);
    v->fwd = v->cur = jp_flame_build(v->prof, k, threads);
    v->old_of = NULL;
    v->kind = k;
    v->threads = threads;
    v->nzoom = 0;
    v->sel = 0;
    /* with threads on or off the paths mean other things: start at the top */
    zoom_restore(v, paths, nzoom, same_shape);
    v->last_child = JP_FLAME_NONE;
    v->scroll = 0;
    mark_all_dirty(v);
}

void tui_flame_view_carry(tui_flame_view *v, const tui_flame_view *old)
{
    if (old->kind != v->kind)
        return; /* another kind (asked for while comparing): a view of its own */
    v->focus = old->focus;
    /* a message stays until the next key, whatever window is shown */
    memcpy(v->msg, old->msg, sizeof v->msg);
    v->msg_error = old->msg_error;
    v->io_panel = old->io_panel && v->io;
    v->io_scroll = old->io_scroll;
    if (old->pattern[0])
        tui_flame_view_search(v, old->pattern);
    if (old->rev || old->threads != v->threads)
        return; /* from a callers tree or another shape the new one starts at the top */
    zoom_restore(v, zoom_save(old), old->nzoom, true);
}

bool tui_flame_view_set_kind(tui_flame_view *v, jp_kind k)
{
    if (!jp_profile_has_kind(v->prof, k)) {
        tui_flame_view_message(v, true, "no %s events in this recording", jp_kind_name(k));
        return false;
    }
    if (k == v->kind && !v->rev)
        return true;
    rebuild(v, k, v->threads);
    tui_flame_view_message(v, false, "showing %s", jp_kind_name(k));
    return true;
}

void tui_flame_view_set_io(tui_flame_view *v, const jp_io_detail *io)
{
    v->io = io;
    if (!io)
        v->io_panel = false;
}

void tui_flame_view_set_diff(tui_flame_view *v, jp_diff *d, const char *base)
{
    v->diff = d;
    v->diff_base = base;
    v->old_of = NULL;
    mark_all_dirty(v);
}

double tui_flame_view_old_total(const tui_flame_view *v, uint32_t node)
{
    if (!v->diff || !v->old_cur || node >= v->cur->count || v->old_map[node] == JP_FLAME_NONE)
        return 0;
    return (double)jp_flame_total(v->old_cur, v->old_map[node], v->by_value) *
           jp_diff_scale_for(v->diff, v->by_value);
}

/* Key m: the next normalisation (sample, second, none). */
static void norm_cycle(tui_flame_view *v)
{
    if (!v->diff) {
        tui_flame_view_message(v, true, "m changes the normalisation of a comparison (--diff OLD)");
        return;
    }
    static const jp_diff_norm order[] = {JP_DIFF_PER_SAMPLE, JP_DIFF_PER_SECOND, JP_DIFF_NONE};
    int at = 0;
    for (int i = 0; i < 3; i++)
        if (order[i] == v->diff->norm)
            at = i;
    jp_error err;
    jp_error_init(&err);
    for (int i = 1; i <= 3; i++) {
        jp_diff_norm n = order[(at + i) % 3];
        if (jp_diff_set_norm(v->diff, n, &err) == JP_OK) {
            mark_all_dirty(v);
            tui_flame_view_message(v, false, "normalised %s: baseline x %.4g",
                                   n == JP_DIFF_NONE         ? "none"
                                   : n == JP_DIFF_PER_SAMPLE ? "per sample"
                                                             : "per second",
                                   jp_diff_scale_for(v->diff, v->by_value));
            return;
        }
    }
}

/* Key i: the endpoints and files of the I/O waits, in place of the table. */
static void io_toggle(tui_flame_view *v)
{
    if (!v->io) {
        tui_flame_view_message(v, true,
                               "no I/O detail: start jprof-top with --io-detail (hosts, "
                               "ports and paths are then read, locally only)");
        return;
    }
    if (v->io_panel && v->kind == JP_KIND_IO) {
        v->io_panel = false;
        tui_flame_view_message(v, false, "top table");
        return;
    }
    if (v->kind != JP_KIND_IO && !tui_flame_view_set_kind(v, JP_KIND_IO))
        return;
    v->io_panel = true;
    v->io_scroll = 0;
    tui_flame_view_message(v, false, "I/O waits by endpoint and file (local only)");
}

static bool io_shown(const tui_flame_view *v)
{
    return v->io && v->io_panel && v->kind == JP_KIND_IO;
}

static void kind_cycle(tui_flame_view *v, int dir)
{
    for (int i = 1; i <= JP_KIND_COUNT; i++) {
        jp_kind k = (jp_kind)(((int)v->kind + dir * i + 2 * JP_KIND_COUNT) % JP_KIND_COUNT);
        if (jp_profile_has_kind(v->prof, k)) {
            if (k != v->kind)
                tui_flame_view_set_kind(v, k);
            else
                tui_flame_view_message(v, false, "%s is the only kind in this recording",
                                       jp_kind_name(k));
            return;
        }
    }
    tui_flame_view_message(v, true, "no profile events in this recording");
}

static void reverse_toggle(tui_flame_view *v)
{
    if (v->rev) {
        reverse_off(v);
        tui_flame_view_message(v, false, "callers view closed");
        return;
    }
    uint32_t frame = v->cur->nodes[v->sel].frame;
    if (frame == JP_FLAME_NONE) {
        tui_flame_view_message(v, true, "select a frame first: r shows who calls it");
        return;
    }
    v->saved_zoom =
        jp_xgrow(v->saved_zoom, &v->saved_cap, v->nzoom ? v->nzoom : 1, sizeof *v->saved_zoom);
    if (v->nzoom)
        memcpy(v->saved_zoom, v->zoom, v->nzoom * sizeof *v->zoom);
    v->saved_nzoom = v->nzoom;
    v->saved_sel = v->sel;
    v->rev = jp_flame_build_reverse(v->prof, v->kind, frame, v->threads);
    v->cur = v->rev;
    v->old_of = NULL;
    v->nzoom = 0;
    uint32_t focus = v->rev->nodes[0].first_child;
    v->sel = focus != JP_FLAME_NONE ? focus : 0;
    v->last_child = JP_FLAME_NONE;
    v->scroll = 0;
    mark_all_dirty(v);
}

void tui_flame_view_reverse(tui_flame_view *v, bool on)
{
    if (on != (v->rev != NULL))
        reverse_toggle(v);
}

void tui_flame_view_search(tui_flame_view *v, const char *pattern)
{
    snprintf(v->pattern, sizeof v->pattern, "%s", pattern);
    v->nmatches = 0;
    v->share = 0;
    v->dirty_search = true;
}

/* Moves the selection to the next (dir 1) or previous (-1) matching bar,
 * left to right then top to bottom, which is the tree's pre-order. */
static void search_step(tui_flame_view *v, int dir)
{
    if (!v->pattern[0]) {
        tui_flame_view_message(v, true, "no search: press / to search");
        return;
    }
    const tui_flame_layout *l = &v->layout;
    int cur = tui_flame_layout_find(l, v->sel);
    long best = -1, wrap = -1;
    for (size_t i = 0; i < l->nbars; i++) {
        const tui_bar *b = &l->bars[i];
        if (!v->matches[b->node])
            continue;
        long key = (long)b->x * 65536 + b->depth;
        long here = cur < 0 ? -1 : (long)l->bars[cur].x * 65536 + l->bars[cur].depth;
        bool ahead = dir > 0 ? key > here : (cur < 0 || key < here);
        long bk = best < 0 ? 0 : (long)l->bars[best].x * 65536 + l->bars[best].depth;
        long wk = wrap < 0 ? 0 : (long)l->bars[wrap].x * 65536 + l->bars[wrap].depth;
        if (ahead && (best < 0 || (dir > 0 ? key < bk : key > bk)))
            best = (long)i;
        if (wrap < 0 || (dir > 0 ? key < wk : key > wk))
            wrap = (long)i;
    }
    if (wrap < 0) {
        tui_flame_view_message(v, true, "no match shown: matches are too narrow here, zoom in");
        return;
    }
    if (best < 0) {
        best = wrap;
        tui_flame_view_message(v, false, "search wrapped");
    }
    v->sel = l->bars[best].node;
    v->last_child = JP_FLAME_NONE;
}

static tui_action prompt_key(tui_flame_view *v, int key)
{
    switch (key) {
    case TUI_KEY_ESC:
        v->prompt = false;
        return TUI_ACTION_REDRAW;
    case TUI_KEY_ENTER:
        v->prompt = false;
        v->input[v->input_len] = '\0';
        tui_flame_view_search(v, v->input);
        if (!v->input_len)
            tui_flame_view_message(v, false, "search cleared");
        return TUI_ACTION_REDRAW;
    case TUI_KEY_BACKSPACE:
        /* Drop a whole UTF-8 sequence, not just its last byte. */
        while (v->input_len > 0 && ((unsigned char)v->input[--v->input_len] & 0xc0) == 0x80)
            ;
        return TUI_ACTION_REDRAW;
    default:
        if (key >= 0x20 && key < 0x7f && v->input_len + 1 < sizeof v->input) {
            v->input[v->input_len++] = (char)key;
            return TUI_ACTION_REDRAW;
        }
        return TUI_ACTION_NONE;
    }
}

static void start_prompt(tui_flame_view *v)
{
    v->prompt = true;
    snprintf(v->input, sizeof v->input, "%s", v->pattern);
    v->input_len = strlen(v->input);
}

/* Keys that mean the same whichever panel has the focus. */
static bool global_key(tui_flame_view *v, int key, tui_action *act)
{
    *act = TUI_ACTION_REDRAW;
    switch (key) {
    case 'q':
    case TUI_KEY_F10:
        *act = TUI_ACTION_QUIT;
        return true;
    case '?':
    case 'h':
    case TUI_KEY_F1:
        v->help = true;
        return true;
    case '/':
    case TUI_KEY_F3:
        start_prompt(v);
        return true;
    case 'n':
    case 'N':
        search_step(v, key == 'n' ? 1 : -1);
        return true;
    case 'r':
        reverse_toggle(v);
        return true;
    case 'k':
    case 'K':
        kind_cycle(v, key == 'k' ? 1 : -1);
        return true;
    case 'v':
        v->by_value = !v->by_value;
        mark_all_dirty(v);
        tui_flame_view_message(v, false, "values: %s",
                               v->by_value ? jp_kind_unit(v->kind) : "samples");
        return true;
    case 't':
        rebuild(v, v->kind, !v->threads);
        tui_flame_view_message(v, false, "threads %s", v->threads ? "on top" : "merged");
        return true;
    case TUI_KEY_TAB:
        v->focus = v->focus == TUI_FOCUS_FLAME ? TUI_FOCUS_TABLE : TUI_FOCUS_FLAME;
        return true;
    case 'i':
        io_toggle(v);
        return true;
    case 'm':
        norm_cycle(v);
        return true;
    case TUI_KEY_RESIZE:
        return true;
    default:
        if (key >= '1' && key <= '9' && key - '1' < JP_KIND_COUNT) {
            tui_flame_view_set_kind(v, (jp_kind)(key - '1'));
            return true;
        }
        if (key == '0' && JP_KIND_IO < JP_KIND_COUNT) { /* the tenth kind */
            tui_flame_view_set_kind(v, JP_KIND_IO);
            return true;
        }
        return false;
    }
}

/* The GC screen over the flame view: scrolls; G, Esc or Backspace go back. */
static tui_action gc_key(tui_flame_view *v, int key)
{
    int h = v->rows - 2, max = (int)v->gc->count - h;
    if (tui_scroll_key(&v->gc_scroll, key, h > 1 ? h - 1 : 1, max)) {
        if (v->gc_scroll > max)
            v->gc_scroll = max;
        if (v->gc_scroll < 0)
            v->gc_scroll = 0;
        return TUI_ACTION_REDRAW;
    }
    switch (key) {
    case 'G':
    case TUI_KEY_ESC:
    case TUI_KEY_BACKSPACE:
        tui_lines_cleanup(v->gc);
        free(v->gc);
        v->gc = NULL;
        return TUI_ACTION_REDRAW;
    case 'q':
    case TUI_KEY_F10:
        return TUI_ACTION_QUIT;
    default:
        return TUI_ACTION_NONE;
    }
}

static void gc_open(tui_flame_view *v)
{
    v->gc = jp_xcalloc(1, sizeof *v->gc);
    tui_lines_init(v->gc);
    tui_report_gc(v->prof, v->cols, 10, v->gc);
    v->gc_scroll = 0;
}

tui_action tui_flame_view_key(tui_flame_view *v, int key)
{
    if (v->help) {
        v->help = false;
        return TUI_ACTION_REDRAW;
    }
    if (v->gc)
        return gc_key(v, key);
    if (key == 'G' && !v->prompt) {
        gc_open(v);
        return TUI_ACTION_REDRAW;
    }
    if (v->prompt)
        return prompt_key(v, key);
    v->msg[0] = '\0';
    tui_action act;
    if (global_key(v, key, &act))
        return act;
    if (v->focus == TUI_FOCUS_TABLE && io_shown(v))
        return tui_io_panel_key(v, key);
    if (v->focus == TUI_FOCUS_TABLE)
        return tui_flame_table_key(v, key);
    return tui_flame_panel_key(v, key);
}

/* ---- derived state ---- */

/* Rows: 3 header lines, the panels, a status line and the key bar; tiny
 * terminals lose the header first, then the key bar. Below 12 body rows
 * only the focused panel is shown. */
static void geometry(tui_flame_view *v)
{
    int header = v->rows >= 8 ? 3 : v->rows >= 5 ? 1 : 0;
    int footer = v->rows >= 4 ? 2 : v->rows >= 2 ? 1 : 0;
    int body = v->rows - header - footer;
    if (body < 0)
        body = 0;
    if (body >= 12) {
        v->table_h = body / 3 + 1;
        v->flame_h = body - v->table_h;
    } else if (v->focus == TUI_FOCUS_TABLE) {
        v->table_h = body;
        v->flame_h = 0;
    } else {
        v->flame_h = body;
        v->table_h = 0;
    }
    v->flame_top = header;
    v->table_top = header + v->flame_h;
}

static bool is_ancestor(const jp_flame *f, uint32_t anc, uint32_t node)
{
    while (node != JP_FLAME_NONE && f->nodes[node].depth > f->nodes[anc].depth)
        node = f->nodes[node].parent;
    return node == anc;
}

/* Keeps the selection inside the zoomed subtree and on a drawn bar, and
 * scrolls so that its row is on screen. */
static void fix_selection(tui_flame_view *v)
{
    const jp_flame *f = v->cur;
    uint32_t zr = tui_flame_view_zoom_root(v);
    if (v->sel >= f->count || !is_ancestor(f, zr, v->sel))
        v->sel = zr;
    while (v->sel != zr && tui_flame_layout_find(&v->layout, v->sel) < 0)
        v->sel = f->nodes[v->sel].parent;
    int d = (int)(f->nodes[v->sel].depth - f->nodes[zr].depth);
    if (v->flame_h > 0) {
        if (d < v->scroll)
            v->scroll = d;
        if (d >= v->scroll + v->flame_h)
            v->scroll = d - v->flame_h + 1;
    }
    int max_scroll = (int)v->layout.depths - v->flame_h;
    if (v->scroll > max_scroll)
        v->scroll = max_scroll;
    if (v->scroll < 0)
        v->scroll = 0;
}

static void run_search(tui_flame_view *v)
{
    const jp_flame *f = v->cur;
    v->matches = jp_xgrow(v->matches, &v->matches_cap, f->count, 1);
    memset(v->matches, 0, v->matches_cap);
    size_t nf = v->prof->nframes ? v->prof->nframes : 1;
    v->frame_matches = jp_xgrow(v->frame_matches, &v->frame_matches_cap, nf, 1);
    memset(v->frame_matches, 0, v->frame_matches_cap);
    v->nmatches = 0;
    v->share = 0;
    if (!v->pattern[0])
        return;
    char err[160];
    long n = jp_flame_search(f, tui_flame_view_zoom_root(v), v->pattern, v->by_value, v->matches,
                             &v->share, err, sizeof err);
    if (n < 0) {
        tui_flame_view_message(v, true, "bad regex /%s/: %s", v->pattern, err);
        v->pattern[0] = '\0';
        memset(v->matches, 0, v->matches_cap);
        return;
    }
    v->nmatches = n;
    for (size_t i = 0; i < f->count; i++)
        if (v->matches[i] && f->nodes[i].frame < nf)
            v->frame_matches[f->nodes[i].frame] = 1;
}

/* The old side of the tree shown, and the largest change under the zoom
 * root (the colour scale). */
static void diff_overlay(tui_flame_view *v)
{
    if (v->old_of != v->cur) {
        jp_flame_free(v->old_cur);
        free(v->old_map);
        v->old_cur = jp_diff_old_tree(v->diff, v->cur, &v->old_map);
        v->old_of = v->cur;
        v->dirty_layout = v->dirty_top = true;
    }
}

static void diff_scale(tui_flame_view *v, uint32_t zr)
{
    const jp_flame *f = v->cur;
    double mx = 0;
    uint32_t n = zr;
    while (n != JP_FLAME_NONE) { /* pre-order walk of the zoomed subtree */
        if (n != 0) {
            double dl = (double)jp_flame_total(f, n, v->by_value) - tui_flame_view_old_total(v, n);
            if (dl < 0)
                dl = -dl;
            if (dl > mx)
                mx = dl;
        }
        n = jp_flame_next_preorder(f, n, zr);
    }
    v->diff_max = mx;
}

static void diff_table(tui_flame_view *v, uint32_t zr)
{
    free(v->drows);
    free(v->top);
    v->ntop =
        jp_diff_top_under(v->diff, v->cur, v->old_cur, v->old_map, zr, v->by_value, &v->drows);
    v->top = jp_xcalloc(v->ntop ? v->ntop : 1, sizeof *v->top);
    for (size_t i = 0; i < v->ntop; i++)
        v->top[i].frame = v->drows[i].frame;
}

void tui_flame_view_update(tui_flame_view *v)
{
    geometry(v);
    uint32_t zr = tui_flame_view_zoom_root(v);
    if (v->diff)
        diff_overlay(v);
    if (v->dirty_layout) {
        tui_flame_layout_build(&v->layout, v->cur, zr, v->by_value, v->cols);
        if (v->diff)
            diff_scale(v, zr);
        v->dirty_layout = false;
    }
    fix_selection(v);
    if (v->dirty_search) {
        run_search(v);
        v->dirty_search = false;
    }
    if (v->dirty_top && v->diff) {
        diff_table(v, zr);
        v->top_sel = 0;
        v->top_scroll = 0;
        v->dirty_top = false;
    }
    if (v->dirty_top) {
        free(v->top);
        v->top = NULL;
        v->ntop = jp_flame_top(v->cur, zr, v->by_value, &v->top);
        v->top_sel = 0;
        v->top_scroll = 0;
        v->dirty_top = false;
    }
    tui_flame_table_fix(v);
}

void tui_flame_view_render(const tui_flame_view *v, tui_canvas *c)
{
    tui_canvas_resize(c, v->rows, v->cols);
    if (v->help) {
        tui_flame_chrome_help(v, c);
        return;
    }
    if (v->gc) {
        tui_canvas_puts(c, 0, 0, "GC and memory: G or Esc back to the flame graph, q quits",
                        TUI_STYLE_TITLE, TUI_F_BOLD);
        for (int r = 1; r < v->rows && (size_t)(v->gc_scroll + r - 1) < v->gc->count; r++) {
            const tui_line *l = &v->gc->items[v->gc_scroll + r - 1];
            tui_canvas_puts(c, r, 0, l->text, l->style, l->flags);
        }
        return;
    }
    if (v->flame_top >= 1)
        tui_flame_chrome_title(v, c, 0);
    if (v->flame_top >= 3) {
        tui_flame_chrome_kinds(v, c, 1);
        tui_flame_chrome_breadcrumb(v, c, 2);
    }
    if (v->flame_h > 0)
        tui_flame_panel_render(v, c, v->flame_top, v->flame_h);
    if (v->table_h > 0 && io_shown(v))
        tui_io_panel_render(v, c, v->table_top, v->table_h);
    else if (v->table_h > 0)
        tui_flame_table_render(v, c, v->table_top, v->table_h);
    int used = v->table_top + v->table_h;
    if (used < v->rows)
        tui_flame_chrome_status(v, c, used);
    if (used + 1 < v->rows)
        tui_flame_chrome_keybar(v, c, used + 1);
}

bool tui_scroll_key(int *pos, int key, int page, int end)
{
    switch (key) {
    case TUI_KEY_UP:
        (*pos)--;
        return true;
    case TUI_KEY_DOWN:
        (*pos)++;
        return true;
    case TUI_KEY_PGUP:
        *pos -= page;
        return true;
    case TUI_KEY_PGDN:
    case ' ':
        *pos += page;
        return true;
    case TUI_KEY_HOME:
        *pos = 0;
        return true;
    case TUI_KEY_END:
        *pos = end;
        return true;
    default:
        return false;
    }
}
