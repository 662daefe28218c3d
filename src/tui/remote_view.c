#include "tui/remote_view.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "tui/load.h"
#include "tui/remote_report.h"

#define HEAD_ROWS 2
#define FLAME_MAX_NODES 20000

static const char *const screen_names[TUI_RSCR_COUNT] = {"Threads", "Locks", "Deadlocks", "Flame",
                                                         "Status"};
static const char screen_keys[TUI_RSCR_COUNT] = {'T', 'L', 'D', 'F', 'S'};

int tui_range_parse(const char *s)
{
    for (int i = 0; i < TUI_RANGE_COUNT; i++)
        if (!strcmp(s, tui_range_names[i]))
            return i;
    return -1;
}

static void message(tui_remote_view *v, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void message(tui_remote_view *v, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg, sizeof v->msg, fmt, ap);
    va_end(ap);
    v->msg_error = error;
}

static const char *pod_filter(const tui_remote_view *v)
{
    return v->pod >= 0 ? v->pod_name : NULL;
}

tui_remote_view *tui_remote_view_new(tui_remote *r, int64_t interval_ns, int range, const char *pod,
                                     tui_rscreen screen)
{
    tui_remote_view *v = jp_xcalloc(1, sizeof *v);
    v->r = r;
    v->rows = 24;
    v->cols = 80;
    v->screen = screen;
    v->interval_ns = interval_ns > 0 ? interval_ns : 5 * JP_NS_PER_SEC;
    v->range = range >= 0 && range < TUI_RANGE_COUNT ? range : 1;
    v->pod = -1;
    if (pod && *pod) {
        v->pod = 0;
        snprintf(v->pod_name, sizeof v->pod_name, "%s", pod);
    }
    v->flame_dirty = true;
    tui_lines_init(&v->lines);
    jfr_report_init(&v->rep);
    return v;
}

void tui_remote_view_free(tui_remote_view *v)
{
    if (!v)
        return;
    tui_view_free(v->flame);
    jp_profile_free(v->prof);
    tui_lines_cleanup(&v->lines);
    tui_remote_free(v->r);
    free(v);
}

void tui_remote_view_resize(tui_remote_view *v, int rows, int cols)
{
    v->rows = rows;
    v->cols = cols;
    if (v->flame)
        tui_view_resize(v->flame, rows - HEAD_ROWS, cols);
}

/* ---- data ---- */

static void refresh(tui_remote_view *v)
{
    jp_error err;
    jp_error_init(&err);
    if (tui_remote_refresh(v->r, pod_filter(v), &err) != JP_OK) {
        message(v, true, "%s", err.msg);
    } else {
        if (v->msg_error)
            v->msg[0] = 0; /* the server is back */
        v->refreshed = true;
    }
    v->next_refresh = jp_time_mono_ns() + v->interval_ns;
}

static void flame_load(tui_remote_view *v)
{
    v->flame_dirty = false;
    char from[16];
    snprintf(from, sizeof from, "-%s", tui_range_names[v->range]);
    jp_profile *p = NULL;
    tui_remote_flame_meta m;
    jp_error err;
    jp_error_init(&err);
    if (tui_remote_profile(v->r, 0, from, "now", pod_filter(v), FLAME_MAX_NODES, &p, &m, &err) !=
        JP_OK) {
        message(v, true, "%s", err.msg);
        return;
    }
    if (v->flame) {
        v->flame_kind = v->flame->kind;
        v->flame_by_value = v->flame->by_value;
        v->flame_kind_set = true;
    }
    tui_view_free(v->flame);
    v->flame = NULL;
    jp_profile_free(v->prof);
    v->prof = p;
    v->fmeta = m;
    jfr_report_init(&v->rep);
    jp_rfc3339_parse(m.from, &v->rep.start_ns, NULL);
    jp_rfc3339_parse(m.to, &v->rep.end_ns, NULL);
    v->rep.partial = m.partial;
    snprintf(v->flame_label, sizeof v->flame_label, "%s/%s last %s, %s", v->r->ns, v->r->svc,
             tui_range_names[v->range], v->pod >= 0 ? v->pod_name : "all pods");
    jp_kind k = JP_KIND_CPU;
    bool any = tui_kind_default(p, &k);
    if (v->flame_kind_set && jp_profile_has_kind(p, v->flame_kind))
        k = v->flame_kind;
    v->flame = tui_view_new(p, &v->rep, v->flame_label, k, v->flame_by_value, false);
    tui_view_resize(v->flame, v->rows - HEAD_ROWS, v->cols);
    v->flame_loaded_ns = jp_time_now_ns();
    if (!any)
        tui_view_message(v->flame, true, "no profile data in the last %s%s%s",
                         tui_range_names[v->range], v->pod >= 0 ? " for pod " : "",
                         v->pod >= 0 ? v->pod_name : "");
    else if (m.partial)
        tui_view_message(v->flame, true, "PARTIAL: %s", m.partial_reason);
    else
        tui_view_message(v->flame, false, "%lld windows, %.0f ms%s", m.windows, m.took_ms,
                         m.truncated ? "; the server cut small nodes ([omitted])" : "");
}

bool tui_remote_view_tick(tui_remote_view *v)
{
    bool changed = false;
    if (jp_time_mono_ns() >= v->next_refresh) {
        refresh(v);
        changed = true;
    }
    if (v->screen == TUI_RSCR_FLAME && v->flame_dirty) {
        flame_load(v);
        changed = true;
    }
    return changed;
}

/* ---- keys ---- */

static void pod_step(tui_remote_view *v, int dir)
{
    int n = (int)v->r->npods;
    /* -1 (all), 0 .. n-1 */
    int cur = -1;
    if (v->pod >= 0)
        for (int i = 0; i < n; i++)
            if (!strcmp(v->r->pods[i], v->pod_name))
                cur = i;
    int next = cur + dir;
    if (next >= n)
        next = -1;
    if (next < -1)
        next = n - 1;
    v->pod = next;
    if (next >= 0)
        snprintf(v->pod_name, sizeof v->pod_name, "%s", v->r->pods[next]);
    message(v, false, "pod: %s", next >= 0 ? v->pod_name : "all pods");
    v->flame_dirty = true;
    v->next_refresh = 0;
}

static void range_step(tui_remote_view *v, int dir)
{
    int r = v->range + dir;
    if (r < 0 || r >= TUI_RANGE_COUNT) {
        message(v, false, "range stays %s (5m 15m 1h 6h 24h)", tui_range_names[v->range]);
        return;
    }
    v->range = r;
    v->flame_dirty = true;
    message(v, false, "flame range: last %s", tui_range_names[r]);
}

static bool screen_key(tui_remote_view *v, int key)
{
    tui_rscreen s;
    switch (key) {
    case 'T':
    case TUI_KEY_F5:
        s = TUI_RSCR_THREADS;
        break;
    case 'L':
    case TUI_KEY_F6:
        s = TUI_RSCR_LOCKS;
        break;
    case 'D':
    case TUI_KEY_F7:
        s = TUI_RSCR_DEADLOCKS;
        break;
    case 'F':
    case TUI_KEY_F8:
        s = TUI_RSCR_FLAME;
        break;
    case 'S':
    case TUI_KEY_F4:
        s = TUI_RSCR_STATUS;
        break;
    default:
        return false;
    }
    /* a flame graph older than a minute is read again on the way in */
    if (s == TUI_RSCR_FLAME && v->screen != s && v->flame &&
        jp_time_now_ns() - v->flame_loaded_ns > 60 * JP_NS_PER_SEC)
        v->flame_dirty = true;
    v->screen = s;
    v->msg[0] = 0;
    return true;
}

/* Keys of every screen; false when the key is not one of them. */
static bool global_key(tui_remote_view *v, int key, tui_action *act)
{
    *act = TUI_ACTION_REDRAW;
    if (screen_key(v, key))
        return true;
    switch (key) {
    case 'q':
    case TUI_KEY_F10:
        *act = TUI_ACTION_QUIT;
        return true;
    case '<':
    case ',':
        range_step(v, -1);
        return true;
    case '>':
    case '.':
        range_step(v, 1);
        return true;
    case 'p':
    case 'P':
        pod_step(v, key == 'p' ? 1 : -1);
        return true;
    case 'R':
        v->next_refresh = 0;
        v->flame_dirty = true;
        message(v, false, "reading again");
        return true;
    case TUI_KEY_RESIZE:
        return true;
    default:
        return false;
    }
}

static tui_action text_key(tui_remote_view *v, int key)
{
    int *s = &v->scroll[v->screen], page = v->rows - HEAD_ROWS - 2;
    page = page > 1 ? page : 1;
    /* End goes past the last line; rendering clamps it */
    if (!tui_scroll_key(s, key, page, 1 << 30)) {
        switch (key) {
        case '?':
        case 'h':
        case TUI_KEY_F1:
            v->help = true;
            break;
        case 'e':
            if (v->screen != TUI_RSCR_THREADS)
                return TUI_ACTION_NONE;
            v->stacks = !v->stacks;
            message(v, false, "stacks %s", v->stacks ? "shown (12 frames)" : "hidden");
            break;
        default:
            return TUI_ACTION_NONE;
        }
    }
    if (*s < 0)
        *s = 0;
    return TUI_ACTION_REDRAW;
}

tui_action tui_remote_view_key(tui_remote_view *v, int key)
{
    if (v->help) {
        v->help = false;
        return TUI_ACTION_REDRAW;
    }
    bool flame = v->screen == TUI_RSCR_FLAME && v->flame;
    /* the flame view's prompt and help take every key */
    if (flame && (v->flame->prompt || v->flame->help))
        return tui_view_key(v->flame, key);
    tui_action act;
    if (global_key(v, key, &act))
        return act;
    if (!flame)
        return text_key(v, key);
    if (key == 't') {
        tui_view_message(v->flame, false,
                         "thread names are not in the service's flame graph; use the Threads "
                         "screen");
        return TUI_ACTION_REDRAW;
    }
    v->msg[0] = 0;
    return tui_view_key(v->flame, key);
}

/* ---- render ---- */

static void render_tabs(const tui_remote_view *v, tui_canvas *c)
{
    tui_canvas_fill(c, 0, 0, c->cols, ' ', TUI_STYLE_TITLE, 0);
    int x = tui_canvas_printf(c, 0, 0, TUI_STYLE_TITLE, TUI_F_BOLD, "jprof-top %s/%s ", v->r->ns,
                              v->r->svc);
    for (int i = 0; i < TUI_RSCR_COUNT && x < c->cols; i++) {
        bool on = (int)v->screen == i;
        x += tui_canvas_printf(c, 0, x, on ? TUI_STYLE_ACTIVE : TUI_STYLE_TITLE,
                               on ? TUI_F_REVERSE | TUI_F_BOLD : 0, " %c %s ", screen_keys[i],
                               screen_names[i]);
    }
    if (x < c->cols)
        tui_canvas_printf(c, 0, x, TUI_STYLE_TITLE, 0, "  range %s  pod %s",
                          tui_range_names[v->range], v->pod >= 0 ? v->pod_name : "all");
}

static void render_info(const tui_remote_view *v, tui_canvas *c)
{
    tui_lines ls;
    tui_lines_init(&ls);
    tui_rreport_header(v->r, &ls);
    if (ls.count > 1)
        tui_canvas_printf(c, 1, 0, TUI_STYLE_DIM, 0, "%s  server %s", ls.items[1].text, v->r->base);
    tui_lines_cleanup(&ls);
}

static void build_lines(tui_remote_view *v)
{
    tui_lines_reset(&v->lines);
    if (!v->refreshed && !v->r->threads) {
        tui_lines_add(&v->lines, TUI_STYLE_DIM, 0, "reading from %s ...", v->r->base);
        return;
    }
    switch (v->screen) {
    case TUI_RSCR_THREADS:
        tui_rreport_threads(v->r, 0, v->stacks ? 12 : 1, &v->lines);
        break;
    case TUI_RSCR_LOCKS:
        tui_rreport_locks(v->r, &v->lines);
        break;
    case TUI_RSCR_DEADLOCKS:
        tui_rreport_deadlocks(v->r, &v->lines);
        break;
    case TUI_RSCR_STATUS:
        tui_rreport_status(v->r, &v->lines);
        break;
    default:
        break;
    }
}

static void render_text(tui_remote_view *v, tui_canvas *c, int top, int h)
{
    build_lines(v);
    int max = (int)v->lines.count - h;
    int *s = &v->scroll[v->screen];
    if (*s > max)
        *s = max > 0 ? max : 0;
    for (int i = 0; i < h && (size_t)(*s + i) < v->lines.count; i++) {
        const tui_line *l = &v->lines.items[*s + i];
        tui_canvas_puts(c, top + i, 0, l->text, l->style, l->flags);
    }
}

static void render_flame(tui_remote_view *v, tui_canvas *c, int top)
{
    if (!v->flame) {
        tui_canvas_printf(c, top + (c->rows - top) / 2 - 1, 2, TUI_STYLE_DIM, 0,
                          "reading the flame graph of the last %s ...", tui_range_names[v->range]);
        return;
    }
    tui_canvas sub;
    tui_canvas_init(&sub, 1, 1);
    tui_view_update(v->flame);
    tui_view_render(v->flame, &sub);
    for (int r = 0; r < sub.rows && top + r < c->rows; r++)
        for (int x = 0; x < sub.cols && x < c->cols; x++)
            *tui_canvas_at(c, top + r, x) = *tui_canvas_at(&sub, r, x);
    tui_canvas_cleanup(&sub);
}

static void render_keybar(const tui_remote_view *v, tui_canvas *c, int row)
{
    static const char *const keys[][2] = {{"T", "Threads"},   {"e", "Stacks"}, {"L", "Locks"},
                                          {"D", "Deadlocks"}, {"F", "Flame"},  {"S", "Status"},
                                          {"<>", "Range"},    {"p", "Pod"},    {"R", "Reload"},
                                          {"?", "Help"},      {"q", "Quit"}};
    int x = 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys && x < c->cols; i++) {
        x += tui_canvas_puts(c, row, x, keys[i][0], TUI_STYLE_KEY, TUI_F_BOLD);
        x += tui_canvas_printf(c, row, x, TUI_STYLE_KEYLABEL, 0, "%s ", keys[i][1]);
    }
}

static void render_help(tui_canvas *c)
{
    static const char *const lines[] = {
        "jprof-top remote view: a service as jprof-server knows it",
        "",
        "  T F5   Threads: latest snapshot per pod, busiest first (e: stacks)",
        "  L F6   Locks: who holds what, who waits, owner chains",
        "  D F7   Deadlocks: the newest cycle per pod",
        "  F F8   Flame: all samples of the range (1-9 kinds, v values, / search,",
        "         Enter zoom, r reverse, Tab top table)",
        "  S F4   Status: pods and JVMs, reasons, status history, ingestion health",
        "  < >    flame range: 5m 15m 1h 6h 24h",
        "  p P    pod filter: all pods, then each pod",
        "  R      read everything again now",
        "  arrows PgUp PgDn Home End   scroll",
        "  q F10  quit",
        "",
        "any key closes this help"};
    for (size_t i = 0; i < sizeof lines / sizeof *lines && (int)i < c->rows; i++)
        tui_canvas_puts(c, (int)i, 1, lines[i], i ? TUI_STYLE_NORMAL : TUI_STYLE_TITLE,
                        i ? 0 : TUI_F_BOLD);
}

void tui_remote_view_render(tui_remote_view *v, tui_canvas *c)
{
    tui_canvas_resize(c, v->rows, v->cols);
    if (v->help) {
        render_help(c);
        return;
    }
    render_tabs(v, c);
    if (c->rows > 1)
        render_info(v, c);
    if (v->screen == TUI_RSCR_FLAME) {
        render_flame(v, c, HEAD_ROWS);
        if (v->msg[0] && c->rows > HEAD_ROWS) {
            tui_canvas_fill(c, c->rows - 2, 0, c->cols, ' ', TUI_STYLE_NORMAL, 0);
            tui_canvas_puts(c, c->rows - 2, 0, v->msg,
                            v->msg_error ? TUI_STYLE_WARN : TUI_STYLE_DIM,
                            v->msg_error ? TUI_F_BOLD : 0);
        }
        return;
    }
    int h = c->rows - HEAD_ROWS - 2;
    if (h > 0)
        render_text(v, c, HEAD_ROWS, h);
    if (c->rows > HEAD_ROWS + 1)
        tui_canvas_puts(c, c->rows - 2, 0, v->msg, v->msg_error ? TUI_STYLE_WARN : TUI_STYLE_DIM,
                        v->msg_error ? TUI_F_BOLD : 0);
    if (c->rows > HEAD_ROWS)
        render_keybar(v, c, c->rows - 1);
}
