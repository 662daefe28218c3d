#include "tui/screens.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/units.h"
#include "tui/report_gc.h"
#include "tui/recording.h"

/* Rows above the body: title, numbers, screen tabs; below: status, keys. */
#define HEAD_ROWS 3
#define FOOT_ROWS 2
/* The first CPU% comes sooner than a long interval: half a second after
 * the first snapshot, so the first screen is useful at once. */
#define FIRST_DELTA_NS (JP_NS_PER_SEC / 2)

static const char *const sort_names[TUI_SORT_COUNT] = {"CPU%", "total CPU", "state", "name"};

void tui_screens_message(tui_screens *v, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vsnprintf(v->msg, sizeof v->msg, fmt, ap);
    va_end(ap);
    v->msg_error = error;
}

static void list_scan(tui_screens *v)
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

static tui_screens *view_new(tui_target *live, tui_picker *picker, const tui_target_opts *opts)
{
    tui_screens *v = jp_xcalloc(1, sizeof *v);
    v->live = live;
    v->picker = picker;
    v->opts = *opts;
    v->rows = 24;
    v->cols = 80;
    v->sel_id = INT64_MIN;
    tui_lines_init(&v->lines);
    tui_pick_list_init(&v->picks);
    if (!live) {
        v->picking = true;
        list_scan(v);
    } else {
        tui_screens_sync(v);
    }
    return v;
}

tui_screens *tui_screens_new(tui_target *live, const tui_target_opts *opts)
{
    return view_new(live, tui_picker_local(), opts);
}

tui_screens *tui_screens_new_with(tui_target *live, tui_picker *picker, const tui_target_opts *opts)
{
    return view_new(live, picker, opts);
}

void tui_screens_free(tui_screens *v)
{
    if (!v)
        return;
    tui_flame_view_free(v->flame);
    jp_diff_free(v->flame_diff);
    jp_profile_free(v->baseline);
    tui_target_free(v->live);
    tui_picker_free(v->picker);
    tui_pick_list_cleanup(&v->picks);
    tui_lines_cleanup(&v->lines);
    free(v->order);
    free(v->pct);
    free(v);
}

void tui_screens_resize(tui_screens *v, int rows, int cols)
{
    v->rows = rows < 1 ? 1 : rows;
    v->cols = cols < 1 ? 1 : cols;
    if (v->flame)
        tui_flame_view_resize(v->flame, v->rows - HEAD_ROWS, v->cols);
}

static int body_rows(const tui_screens *v)
{
    int h = v->rows - HEAD_ROWS - FOOT_ROWS;
    return h > 0 ? h : 0;
}

/* ---- threads: order, filter, selection ---- */

static int64_t thread_key(const jp_thread *t)
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

static void threads_build(tui_screens *v)
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
        if (thread_key(&s->threads[v->order[i]]) == v->sel_id)
            found = (int)i;
    if (found >= 0)
        v->sel = found;
    if (v->sel >= (int)v->norder)
        v->sel = (int)v->norder - 1;
    if (v->sel < 0)
        v->sel = 0;
    if (v->norder)
        v->sel_id = thread_key(&s->threads[v->order[v->sel]]);
}

/* The GC screen reads the Flame screen's window (its recording has the GC
 * events: the JDK's profile settings, the agent's own settings). */
static void gc_build(tui_screens *v)
{
    const tui_target_prof *p = &v->live->prof;
    if (v->live->ops->gc) {
        char label[128];
        tui_target_prof_label(v->live, label, sizeof label);
        tui_lines_add(&v->lines, TUI_STYLE_DIM, 0, "window: %s", label);
        v->live->ops->gc(v->live, v->cols, &v->lines);
    } else if (p->profile) {
        char label[128];
        tui_target_prof_label(v->live, label, sizeof label);
        tui_lines_add(&v->lines, TUI_STYLE_DIM, 0, "window: %s", label);
        tui_report_gc(p->profile, v->cols, 10, &v->lines);
    } else if (p->running) {
        tui_lines_add(&v->lines, TUI_STYLE_DIM, 0,
                      "recording; the GC summary comes with the first window (%.0f s)",
                      (double)v->opts.interval_ns / 1e9);
    } else {
        tui_lines_add(&v->lines, TUI_STYLE_WARN, 0, "no recording: the GC screen needs one");
    }
}

static void text_build(tui_screens *v)
{
    tui_lines_reset(&v->lines);
    if (!v->live || (!v->live->cur && v->screen != TUI_SCREEN_STATUS && v->screen != TUI_SCREEN_GC))
        return;
    if (v->stack) {
        const jp_snapshot *s = v->live->cur;
        long idx = -1;
        for (size_t i = 0; s && i < s->count && idx < 0; i++)
            if (thread_key(&s->threads[i]) == v->stack_id)
                idx = (long)i;
        if (idx >= 0)
            tui_report_stack(v->live, (size_t)idx, &v->lines);
        else
            tui_lines_add(&v->lines, TUI_STYLE_WARN, 0, "thread \"%s\" has ended", v->stack_name);
    } else if (v->screen == TUI_SCREEN_LOCKS) {
        tui_report_locks_idle(v->live, v->idle_expanded, &v->lines);
    } else if (v->screen == TUI_SCREEN_DEADLOCKS) {
        tui_report_deadlocks(v->live, &v->lines);
    } else if (v->screen == TUI_SCREEN_STATUS) {
        tui_report_status(v->live, &v->lines);
    } else if (v->screen == TUI_SCREEN_GC) {
        gc_build(v);
    }
}

void tui_screens_sync(tui_screens *v)
{
    threads_build(v);
    text_build(v);
}

/* ---- flame ---- */

/* A node of a flame tree as the names of its frames from the root: how the
 * zoom and the selection survive a new window (frame numbers do not). */
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

static void path_free(name_path *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->names[i]);
    free(p->names);
}

/* Carries zoom, selection, search and focus from the old flame view to the
 * new one (the forward tree only; a callers view starts over). */
static void flame_carry(tui_flame_view *old, tui_flame_view *nv)
{
    nv->focus = old->focus;
    /* a message stays until the next key, whatever window is shown */
    memcpy(nv->msg, old->msg, sizeof nv->msg);
    nv->msg_error = old->msg_error;
    nv->io_panel = old->io_panel && nv->io;
    nv->io_scroll = old->io_scroll;
    if (old->pattern[0])
        tui_flame_view_search(nv, old->pattern);
    if (old->rev)
        return;
    for (size_t i = 0; i <= old->nzoom; i++) {
        name_path p;
        path_save(old->cur, i < old->nzoom ? old->zoom[i] : old->sel, &p);
        uint32_t node = path_follow(nv->cur, &p);
        if (i < old->nzoom)
            tui_flame_view_zoom_push(nv, node);
        else
            nv->sel = node;
        path_free(&p);
    }
}

/* The flame view of the window (or of `want` when >= 0, a kind asked for
 * while comparing); with a baseline kept (B), the window compared with it. */
static void flame_rebuild_as(tui_screens *v, int want)
{
    tui_target_prof *p = &v->live->prof;
    if (!p->profile)
        return;
    tui_flame_view *old = v->flame;
    jp_diff *old_diff = v->flame_diff;
    v->flame = NULL;
    v->flame_diff = NULL;
    if (old) {
        v->flame_kind = old->kind;
        v->flame_by_value = old->by_value;
        v->flame_threads = old->threads;
    }
    if (old_diff)
        v->base_norm = old_diff->norm; /* m carries over to the next window */
    if (want >= 0)
        v->flame_kind = (jp_kind)want;
    jp_kind k = JP_KIND_CPU;
    tui_kind_default(p->profile, &k);
    if (v->flame_kind_set && (jp_profile_has_kind(p->profile, v->flame_kind) ||
                              (v->baseline && jp_profile_has_kind(v->baseline, v->flame_kind))))
        k = v->flame_kind;
    tui_target_prof_label(v->live, v->flame_label, sizeof v->flame_label);
    const char *problem = NULL;
    jp_error err;
    jp_error_init(&err);
    if (v->baseline && jp_diff_new(v->baseline, p->profile, k, v->flame_threads, v->flame_by_value,
                                   v->base_norm, &v->flame_diff, &err) != JP_OK) {
        v->flame_diff = NULL;
        problem = err.msg;
    }
    v->flame = tui_flame_view_new(v->flame_diff ? v->flame_diff->prof : p->profile, &p->rep,
                                  v->flame_label, k, v->flame_by_value, v->flame_threads);
    if (v->flame_diff)
        tui_flame_view_set_diff(v->flame, v->flame_diff, v->base_label);
    else
        tui_flame_view_set_io(v->flame, p->io);
    v->flame_kind_set = true;
    v->flame_kind = k;
    tui_flame_view_resize(v->flame, v->rows - HEAD_ROWS, v->cols);
    if (old) {
        if (old->kind == k)
            flame_carry(old, v->flame);
        /* the old view borrowed the previous window's profile: free it now */
        tui_flame_view_free(old);
    }
    jp_diff_free(old_diff);
    if (problem)
        tui_flame_view_message(v->flame, true, "not compared with the baseline: %s", problem);
}

static void flame_rebuild(tui_screens *v)
{
    flame_rebuild_as(v, -1);
}

/* B: the window shown becomes the baseline (a copy), and every later
 * window is drawn compared with it: the same differential view as
 * --jfr NEW --diff OLD, for any source (a pid, a pod, the server). B again
 * drops it. */
static void baseline_toggle(tui_screens *v)
{
    tui_target_prof *p = &v->live->prof;
    if (v->baseline) {
        jp_profile_free(v->baseline);
        v->baseline = NULL;
        flame_rebuild(v);
        tui_flame_view_message(v->flame, false, "baseline dropped: the window alone again");
        return;
    }
    if (!p->profile || !v->flame) {
        tui_screens_message(v, true, "no window yet to keep as the baseline");
        return;
    }
    v->baseline = jp_profile_new();
    jp_profile_merge(v->baseline, p->profile);
    v->baseline->start_ns = p->rep.start_ns;
    v->baseline->end_ns = p->rep.end_ns;
    char t[48] = "?";
    jp_rfc3339_format(p->rep.start_ns, t, sizeof t);
    char span[32] = "?";
    jp_format_ns(p->rep.end_ns > p->rep.start_ns ? (uint64_t)(p->rep.end_ns - p->rep.start_ns) : 0,
                 span, sizeof span);
    /* "baseline 17:21:05Z+10 s": the title has little room */
    snprintf(v->base_label, sizeof v->base_label, "baseline %.8sZ+%s", strlen(t) >= 19 ? t + 11 : t,
             span);
    v->base_norm = JP_DIFF_PER_SAMPLE;
    flame_rebuild(v);
    tui_flame_view_message(v->flame, false,
                           "baseline kept (%s): later windows are compared with it; m normalises, "
                           "B drops it",
                           v->base_label);
}

/* With a baseline, kind keys 1-9 and 0 build the comparison of that kind
 * (the comparison's own profile holds one kind only). */
static bool baseline_kind_key(tui_screens *v, int key)
{
    int k = key >= '1' && key <= '9' ? key - '1' : key == '0' ? (int)JP_KIND_IO : -1;
    if (!v->baseline || k < 0 || k >= JP_KIND_COUNT)
        return false;
    if (!jp_profile_has_kind(v->live->prof.profile, (jp_kind)k) &&
        !jp_profile_has_kind(v->baseline, (jp_kind)k)) {
        tui_flame_view_message(v->flame, true, "no %s events in the window nor in the baseline",
                               jp_kind_name((jp_kind)k));
        return true;
    }
    flame_rebuild_as(v, k);
    tui_flame_view_message(v->flame, false, "comparing %s", jp_kind_name((jp_kind)k));
    return true;
}

static void flame_enter(tui_screens *v)
{
    if (!v->live || v->live->prof.running)
        return;
    jp_error err;
    jp_error_init(&err);
    if (tui_target_prof_start(v->live, &err) != JP_OK) {
        tui_screens_message(v, true, "%s", err.msg);
        return;
    }
    /* the first window after one interval, later ones every interval */
    v->next_dump = jp_time_mono_ns() + v->opts.interval_ns;
    tui_screens_message(v, false, "recording started (%s); first window in %.0f s",
                        tui_target_prof_engine(v->live), (double)v->opts.interval_ns / 1e9);
}

/* ---- timed work ---- */

static bool tick_refresh(tui_screens *v, int64_t now)
{
    if (v->exited || now < v->next_refresh)
        return false;
    jp_error err;
    jp_error_init(&err);
    jp_err rc = tui_target_refresh(v->live, &err);
    bool first = v->live->nrefresh == 1;
    v->next_refresh = now + (first && v->opts.interval_ns > FIRST_DELTA_NS ? FIRST_DELTA_NS
                                                                           : v->opts.interval_ns);
    if (rc != JP_OK) {
        if (rc == JP_ERR_EXITED) { /* the source says the target is gone */
            v->exited = true;
            tui_screens_message(v, true, "the JVM has exited; showing its last snapshot (q quits)");
        } else {
            tui_screens_message(v, true, "refresh failed: %s", err.msg);
        }
        return true;
    }
    tui_screens_sync(v);
    return true;
}

static bool tick_dump(tui_screens *v, int64_t now)
{
    if ((v->screen != TUI_SCREEN_FLAME && v->screen != TUI_SCREEN_GC) || v->stack ||
        !v->live->prof.running || v->exited || now < v->next_dump)
        return false;
    jp_error err;
    jp_error_init(&err);
    v->next_dump = now + v->opts.interval_ns;
    int64_t before = v->live->prof.dumped_mono;
    if (tui_target_prof_dump(v->live, &err) != JP_OK) {
        tui_screens_message(v, true, "profile window: %s", err.msg);
        return true;
    }
    if (v->live->prof.dumped_mono == before && v->flame)
        return false; /* unchanged */
    flame_rebuild(v);
    if (v->screen == TUI_SCREEN_GC)
        text_build(v);
    return true;
}

bool tui_screens_tick(tui_screens *v)
{
    int64_t now = jp_time_mono_ns();
    if (v->paused)
        return false;
    if (v->picking) {
        if (now < v->next_list)
            return false;
        list_scan(v);
        return true;
    }
    if (!v->live)
        return false;
    bool changed = tick_refresh(v, now);
    if (tick_dump(v, now))
        changed = true;
    return changed;
}

/* ---- keys ---- */

static void set_screen(tui_screens *v, tui_screen_id s)
{
    v->stack = false;
    v->screen = s;
    if (s == TUI_SCREEN_FLAME || s == TUI_SCREEN_GC)
        flame_enter(v);
    text_build(v);
}

static tui_action picker_key(tui_screens *v, int key)
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

static tui_action prompt_key(tui_screens *v, int key)
{
    if (key == TUI_KEY_ESC) {
        v->prompt = false;
    } else if (key == TUI_KEY_ENTER) {
        v->prompt = false;
        v->input[v->input_len] = '\0';
        snprintf(v->filter, sizeof v->filter, "%s", v->input);
        threads_build(v);
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
        v->sel_id = thread_key(&v->live->cur->threads[v->order[v->sel]]);
}

static tui_action threads_key(tui_screens *v, int key)
{
    int page = body_rows(v) > 2 ? body_rows(v) - 2 : 1;
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
            v->stack_id = thread_key(t);
            snprintf(v->stack_name, sizeof v->stack_name, "%s", t->name ? t->name : "?");
            v->scroll[TUI_SCREEN_THREADS] = 0;
            text_build(v);
        }
        break;
    case 's':
        v->sort = (tui_thread_sort)((v->sort + 1) % TUI_SORT_COUNT);
        threads_build(v);
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
            threads_build(v);
            tui_screens_message(v, false, "filter cleared");
        }
        break;
    default:
        return TUI_ACTION_NONE;
    }
    return TUI_ACTION_REDRAW;
}

/* Scrolling of the text screens (Locks, Deadlocks, a stack). */
static tui_action text_key(tui_screens *v, int key)
{
    int *sc = &v->scroll[v->stack ? TUI_SCREEN_THREADS : v->screen];
    int h = body_rows(v), max = (int)v->lines.count - h;
    if (!tui_scroll_key(sc, key, h > 1 ? h - 1 : 1, max)) {
        switch (key) {
        case TUI_KEY_ESC:
        case TUI_KEY_BACKSPACE:
        case TUI_KEY_ENTER:
        case TUI_KEY_LEFT:
            if (!v->stack)
                return TUI_ACTION_NONE;
            v->stack = false;
            break;
        case 'i': /* the idle threads of each pool, by name */
            if (v->stack || v->screen != TUI_SCREEN_LOCKS)
                return TUI_ACTION_NONE;
            v->idle_expanded = !v->idle_expanded;
            text_build(v);
            break;
        default:
            return TUI_ACTION_NONE;
        }
    }
    if (*sc > max)
        *sc = max;
    if (*sc < 0)
        *sc = 0;
    return TUI_ACTION_REDRAW;
}

static bool screen_key(tui_screens *v, int key)
{
    switch (key) {
    case TUI_KEY_F5:
    case 'T':
        set_screen(v, TUI_SCREEN_THREADS);
        return true;
    case TUI_KEY_F6:
    case 'L':
        set_screen(v, TUI_SCREEN_LOCKS);
        return true;
    case TUI_KEY_F7:
    case 'D':
        set_screen(v, TUI_SCREEN_DEADLOCKS);
        return true;
    case TUI_KEY_F8:
    case 'F':
        set_screen(v, TUI_SCREEN_FLAME);
        return true;
    case TUI_KEY_F9:
    case 'S':
        set_screen(v, TUI_SCREEN_STATUS);
        return true;
    case 'G':
        set_screen(v, TUI_SCREEN_GC);
        return true;
    default:
        return false;
    }
}

/* o: back to the list the target was opened from (its recording stops) */
static tui_action back_to_list(tui_screens *v)
{
    if (!v->picker) {
        tui_screens_message(v, false, "no list to go back to (this target was named)");
        return TUI_ACTION_REDRAW;
    }
    tui_flame_view_free(v->flame);
    v->flame = NULL;
    jp_diff_free(v->flame_diff);
    v->flame_diff = NULL;
    jp_profile_free(v->baseline); /* a window of another JVM is no baseline */
    v->baseline = NULL;
    tui_target_free(v->live);
    v->live = NULL;
    v->exited = v->paused = v->stack = false;
    v->screen = TUI_SCREEN_THREADS;
    v->norder = 0;
    tui_lines_reset(&v->lines);
    v->picking = true;
    list_scan(v);
    return TUI_ACTION_REDRAW;
}

/* Flame keys a source handles itself (the server's range and pod scope):
 * the window is read again at once. */
static bool source_flame_key(tui_screens *v, int key)
{
    const tui_source_ops *ops = v->live->ops;
    char msg[200] = "";
    bool changed = ops->flame_key && ops->flame_key(v->live, key, msg, sizeof msg);
    if (!changed && !msg[0])
        return false; /* not the source's key */
    tui_screens_message(v, false, "%s", msg);
    if (v->flame)
        tui_flame_view_message(v->flame, false, changed ? "%s (reading)" : "%s", msg);
    if (changed)
        v->next_dump = 0;
    return true;
}

tui_action tui_screens_key(tui_screens *v, int key)
{
    if (v->help) {
        v->help = false;
        return TUI_ACTION_REDRAW;
    }
    if (key == TUI_KEY_RESIZE)
        return TUI_ACTION_REDRAW;
    if (v->picking)
        return picker_key(v, key);
    if (v->prompt)
        return prompt_key(v, key);
    v->msg[0] = '\0';
    if (screen_key(v, key))
        return TUI_ACTION_REDRAW;
    if (key == 'o')
        return back_to_list(v);
    if (key == 'R') { /* everything again now: snapshot and window */
        v->next_refresh = v->next_dump = 0;
        tui_screens_message(v, false, "reading again");
        return TUI_ACTION_REDRAW;
    }
    if (key == 'p' || key == 'P') {
        v->paused = !v->paused;
        tui_screens_message(v, false, "%s",
                            v->paused ? "paused: p resumes the refresh" : "refreshing again");
        if (v->flame)
            tui_flame_view_message(v->flame, false, "%s",
                                   v->paused ? "paused: p resumes the refresh"
                                             : "refreshing again");
        return TUI_ACTION_REDRAW;
    }
    /* the server's range and pod keys scope its GC screen too */
    if (v->screen == TUI_SCREEN_GC && !v->stack && v->live->ops->gc && source_flame_key(v, key)) {
        text_build(v);
        return TUI_ACTION_REDRAW;
    }
    if (v->screen == TUI_SCREEN_FLAME && !v->stack) {
        if (source_flame_key(v, key))
            return TUI_ACTION_REDRAW;
        if (!v->flame) {
            if (key == 'q' || key == TUI_KEY_F10)
                return TUI_ACTION_QUIT;
            return TUI_ACTION_NONE;
        }
        if (key == 'B' && !v->flame->prompt && !v->flame->help && !v->flame->gc) {
            baseline_toggle(v);
            return TUI_ACTION_REDRAW;
        }
        if (!v->flame->prompt && !v->flame->help && !v->flame->gc && baseline_kind_key(v, key))
            return TUI_ACTION_REDRAW;
        tui_action a = tui_flame_view_key(v->flame, key);
        v->flame_kind = v->flame->kind;
        return a;
    }
    tui_action a = TUI_ACTION_NONE;
    if (v->stack || v->screen != TUI_SCREEN_THREADS)
        a = text_key(v, key);
    else
        a = threads_key(v, key);
    if (a != TUI_ACTION_NONE)
        return a;
    switch (key) {
    case 'q':
    case TUI_KEY_F10:
        return TUI_ACTION_QUIT;
    case '?':
    case 'h':
    case TUI_KEY_F1:
        v->help = true;
        return TUI_ACTION_REDRAW;
    case 'r':
        v->next_refresh = 0; /* refresh now */
        return TUI_ACTION_REDRAW;
    default:
        return TUI_ACTION_NONE;
    }
}

/* The render half lives in live_render.c. */
