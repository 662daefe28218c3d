#include "tui/terminal.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "tui/canvas.h"

typedef struct style_def {
    short fg, bg;       /* 8-colour terminals */
    short fg256, bg256; /* 256-colour terminals */
    attr_t attr;
} style_def;

/* Frame colours: Java greens/cyans, native yellow/red, kernel purple,
 * threads blue. Indexed by tui_style. */
static const style_def styles[TUI_STYLE_COUNT] = {
    [TUI_STYLE_NORMAL] = {-1, -1, -1, -1, 0},
    [TUI_STYLE_TITLE] = {COLOR_WHITE, COLOR_BLUE, 255, 24, 0},
    [TUI_STYLE_DIM] = {-1, -1, 244, -1, A_DIM},
    [TUI_STYLE_WARN] = {COLOR_RED, -1, 196, -1, A_BOLD},
    [TUI_STYLE_ACTIVE] = {COLOR_BLACK, COLOR_CYAN, 16, 80, 0},
    [TUI_STYLE_KEY] = {-1, -1, -1, -1, A_BOLD},
    [TUI_STYLE_KEYLABEL] = {COLOR_BLACK, COLOR_CYAN, 16, 80, 0},
    [TUI_STYLE_TABLEHEAD] = {COLOR_BLACK, COLOR_GREEN, 16, 71, 0},
    [TUI_STYLE_MATCH] = {COLOR_BLACK, COLOR_WHITE, 16, 201, A_UNDERLINE},
    [TUI_STYLE_ROOT] = {COLOR_BLACK, COLOR_WHITE, 16, 250, 0},
    [TUI_STYLE_FRAME_INTERPRETED] = {COLOR_WHITE, COLOR_GREEN, 16, 114, 0},
    [TUI_STYLE_FRAME_JIT] = {COLOR_BLACK, COLOR_GREEN, 16, 35, 0},
    [TUI_STYLE_FRAME_INLINED] = {COLOR_BLACK, COLOR_CYAN, 16, 51, 0},
    [TUI_STYLE_FRAME_C1] = {COLOR_WHITE, COLOR_CYAN, 16, 37, 0},
    [TUI_STYLE_FRAME_NATIVE] = {COLOR_BLACK, COLOR_YELLOW, 16, 220, 0},
    [TUI_STYLE_FRAME_CPP] = {COLOR_WHITE, COLOR_RED, 16, 209, 0},
    [TUI_STYLE_FRAME_KERNEL] = {COLOR_WHITE, COLOR_MAGENTA, 16, 141, 0},
    [TUI_STYLE_FRAME_UNKNOWN] = {COLOR_BLACK, COLOR_WHITE, 16, 248, 0},
    [TUI_STYLE_FRAME_THREAD] = {COLOR_WHITE, COLOR_BLUE, 255, 25, 0},
    [TUI_STYLE_DIFF_SAME] = {COLOR_BLACK, COLOR_WHITE, 16, 252, 0},
    [TUI_STYLE_DIFF_GROW1] = {COLOR_BLACK, COLOR_RED, 16, 224, 0},
    [TUI_STYLE_DIFF_GROW2] = {COLOR_BLACK, COLOR_RED, 16, 210, 0},
    [TUI_STYLE_DIFF_GROW3] = {COLOR_WHITE, COLOR_RED, 231, 196, A_BOLD},
    [TUI_STYLE_DIFF_SHRINK1] = {COLOR_BLACK, COLOR_BLUE, 16, 153, 0},
    [TUI_STYLE_DIFF_SHRINK2] = {COLOR_BLACK, COLOR_BLUE, 16, 111, 0},
    [TUI_STYLE_DIFF_SHRINK3] = {COLOR_WHITE, COLOR_BLUE, 231, 27, A_BOLD},
};

static bool colours;

static void colours_init(void)
{
    colours = has_colors();
    if (!colours)
        return;
    start_color();
    use_default_colors();
    bool rich = COLORS >= 256;
    for (int s = 0; s < TUI_STYLE_COUNT; s++) {
        const style_def *d = &styles[s];
        short fg = d->fg, bg = d->bg;
        if (rich) {
            fg = d->fg256;
            bg = d->bg256;
        }
        init_pair((short)(s + 1), fg, bg);
    }
}

static attr_t cell_attrs(const tui_cell *cell, short *pair)
{
    attr_t a = styles[cell->style < TUI_STYLE_COUNT ? cell->style : 0].attr;
    if (cell->flags & TUI_F_BOLD)
        a |= A_BOLD;
    if (cell->flags & TUI_F_REVERSE)
        a |= A_REVERSE;
    if (cell->flags & TUI_F_UNDERLINE)
        a |= A_UNDERLINE;
    *pair = 0;
    if (colours)
        *pair = (short)(cell->style + 1);
    else if (cell->style >= TUI_STYLE_MATCH && cell->style != TUI_STYLE_FRAME_UNKNOWN)
        a |= A_REVERSE; /* monochrome: bars still stand out */
    return a;
}

static void blit(const tui_canvas *c)
{
    cchar_t *line = jp_xreallocarray(NULL, (size_t)c->cols, sizeof *line);
    for (int r = 0; r < c->rows; r++) {
        for (int x = 0; x < c->cols; x++) {
            const tui_cell *cell = &c->cells[(size_t)r * (size_t)c->cols + (size_t)x];
            wchar_t wc[2] = {(wchar_t)cell->ch, L'\0'};
            short pair;
            attr_t a = cell_attrs(cell, &pair);
            setcchar(&line[x], wc, a, pair, NULL);
        }
        /* add_wchnstr does not move the cursor, so the last cell of the
         * screen is safe to write. */
        mvadd_wchnstr(r, 0, line, c->cols);
    }
    free(line);
}

static int translate_key(int rc, wint_t wch)
{
    if (rc == KEY_CODE_YES) {
        switch (wch) {
        case KEY_UP:
            return TUI_KEY_UP;
        case KEY_DOWN:
            return TUI_KEY_DOWN;
        case KEY_LEFT:
            return TUI_KEY_LEFT;
        case KEY_RIGHT:
            return TUI_KEY_RIGHT;
        case KEY_HOME:
            return TUI_KEY_HOME;
        case KEY_END:
            return TUI_KEY_END;
        case KEY_PPAGE:
            return TUI_KEY_PGUP;
        case KEY_NPAGE:
            return TUI_KEY_PGDN;
        case KEY_ENTER:
            return TUI_KEY_ENTER;
        case KEY_BACKSPACE:
            return TUI_KEY_BACKSPACE;
        case KEY_RESIZE:
            return TUI_KEY_RESIZE;
        case KEY_F(1):
            return TUI_KEY_F1;
        case KEY_F(3):
            return TUI_KEY_F3;
        case KEY_F(10):
            return TUI_KEY_F10;
        case KEY_F(2):
            return TUI_KEY_F2;
        case KEY_F(4):
            return TUI_KEY_F4;
        case KEY_F(5):
            return TUI_KEY_F5;
        case KEY_F(6):
            return TUI_KEY_F6;
        case KEY_F(7):
            return TUI_KEY_F7;
        case KEY_F(8):
            return TUI_KEY_F8;
        case KEY_F(9):
            return TUI_KEY_F9;
        default:
            return 0;
        }
    }
    if (rc != OK)
        return 0;
    switch (wch) {
    case '\r':
    case '\n':
        return TUI_KEY_ENTER;
    case 127:
    case 8:
        return TUI_KEY_BACKSPACE;
    default:
        return (int)wch;
    }
}

static SCREEN *terminal_open(jp_error *err)
{
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr) {
        jp_error_set(err, JP_ERR_IO, "cannot set up the terminal (TERM=%s)",
                     getenv("TERM") ? getenv("TERM") : "unset");
        return NULL;
    }
    set_term(scr);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    colours_init();
    return scr;
}

jp_err tui_terminal_run(tui_flame_view *v, jp_error *err)
{
    SCREEN *scr = terminal_open(err);
    if (!scr)
        return err ? err->code : JP_ERR_IO;
    tui_canvas canvas;
    tui_canvas_init(&canvas, 1, 1);
    for (;;) {
        int rows, cols;
        getmaxyx(stdscr, rows, cols);
        if (rows != v->rows || cols != v->cols)
            tui_flame_view_resize(v, rows, cols);
        tui_flame_view_update(v);
        tui_flame_view_render(v, &canvas);
        erase();
        blit(&canvas);
        refresh();
        wint_t wch = 0;
        int rc = get_wch(&wch);
        int key = translate_key(rc, wch);
        if (key && tui_flame_view_key(v, key) == TUI_ACTION_QUIT)
            break;
    }
    tui_canvas_cleanup(&canvas);
    endwin();
    delscreen(scr);
    return JP_OK;
}

/* A get_wch that fails at once this many times in a row means the terminal
 * is gone (EOF on stdin) even if no SIGHUP came. */
#define DEAD_TERMINAL_ERRS 200

jp_err tui_terminal_run_app(const tui_app *app, jp_error *err)
{
    SCREEN *scr = terminal_open(err);
    if (!scr)
        return err ? err->code : JP_ERR_IO;
    tui_canvas canvas;
    tui_canvas_init(&canvas, 1, 1);
    int rows = -1, cols = -1, fast_errs = 0;
    bool redraw = true;
    timeout(app->poll_ms > 0 ? app->poll_ms : 100);
    while (!*app->stop) {
        int r, c;
        getmaxyx(stdscr, r, c);
        if (r != rows || c != cols) {
            rows = r, cols = c;
            app->resize(app->ctx, rows, cols);
            redraw = true;
        }
        if (redraw) {
            app->render(app->ctx, &canvas);
            erase();
            blit(&canvas);
            refresh();
            redraw = false;
        }
        int64_t t0 = jp_time_mono_ns();
        wint_t wch = 0;
        int rc = get_wch(&wch);
        if (*app->stop)
            break;
        if (rc == ERR) {
            fast_errs = jp_time_mono_ns() - t0 < 2000000 ? fast_errs + 1 : 0;
            if (fast_errs >= DEAD_TERMINAL_ERRS)
                break;
        } else {
            fast_errs = 0;
            int key = translate_key(rc, wch);
            if (key) {
                if (app->key(app->ctx, key) == TUI_ACTION_QUIT)
                    break;
                redraw = true;
            }
        }
        if (app->tick(app->ctx))
            redraw = true;
    }
    tui_canvas_cleanup(&canvas);
    endwin();
    delscreen(scr);
    return JP_OK;
}
