/* canvas.h - a character grid with styles: what a screen will show.
 *
 * Screens render into a canvas instead of calling curses, so rendering is a
 * pure function of a view's state and can be checked by unit tests without a
 * terminal; terminal.c copies the canvas to the terminal. Every cell
 * holds one code point that occupies exactly one column (wide or
 * non-printable characters are replaced by '?').
 *
 * Ownership: caller storage; tui_canvas_init() / tui_canvas_cleanup().
 * Not thread-safe. */
#ifndef JP_TUI_CANVAS_H
#define JP_TUI_CANVAS_H

#include <stddef.h>
#include <stdint.h>

/* What a cell looks like; terminal.c maps each style to colours. */
typedef enum tui_style {
    TUI_STYLE_NORMAL = 0,
    TUI_STYLE_TITLE,     /* header line */
    TUI_STYLE_DIM,       /* secondary text, absent kinds */
    TUI_STYLE_WARN,      /* partial file, errors */
    TUI_STYLE_ACTIVE,    /* the current kind, the focused panel's title */
    TUI_STYLE_KEY,       /* key bar: the key */
    TUI_STYLE_KEYLABEL,  /* key bar: what it does */
    TUI_STYLE_TABLEHEAD, /* column titles */
    TUI_STYLE_MATCH,     /* a frame matching the search */
    TUI_STYLE_ROOT,      /* the "all" bar */
    /* frame bars, one per jp_frame_kind, in that enum's order */
    TUI_STYLE_FRAME_INTERPRETED,
    TUI_STYLE_FRAME_JIT,
    TUI_STYLE_FRAME_INLINED,
    TUI_STYLE_FRAME_C1,
    TUI_STYLE_FRAME_NATIVE,
    TUI_STYLE_FRAME_CPP,
    TUI_STYLE_FRAME_KERNEL,
    TUI_STYLE_FRAME_UNKNOWN,
    TUI_STYLE_FRAME_THREAD,
    /* differential flame graph: unchanged, then grows / shrinks by
     * intensity (1 faint .. 3 strong) */
    TUI_STYLE_DIFF_SAME,
    TUI_STYLE_DIFF_GROW1,
    TUI_STYLE_DIFF_GROW2,
    TUI_STYLE_DIFF_GROW3,
    TUI_STYLE_DIFF_SHRINK1,
    TUI_STYLE_DIFF_SHRINK2,
    TUI_STYLE_DIFF_SHRINK3,
    TUI_STYLE_COUNT
} tui_style;

/* Cell flags, or-ed. */
#define TUI_F_BOLD 0x1u
#define TUI_F_REVERSE 0x2u
#define TUI_F_UNDERLINE 0x4u

typedef struct tui_cell {
    uint32_t ch; /* Unicode code point, one column wide */
    uint8_t style;
    uint8_t flags;
} tui_cell;

typedef struct tui_canvas {
    int rows, cols;
    tui_cell *cells; /* rows * cols */
} tui_canvas;

/* Sizes below 1 are clamped to 1. */
void tui_canvas_init(tui_canvas *c, int rows, int cols);
void tui_canvas_cleanup(tui_canvas *c);
/* Changes the size and clears. */
void tui_canvas_resize(tui_canvas *c, int rows, int cols);
/* Fills every cell with a blank of TUI_STYLE_NORMAL. */
void tui_canvas_clear(tui_canvas *c);

static inline tui_cell *tui_canvas_at(tui_canvas *c, int row, int col)
{
    return &c->cells[(size_t)row * (size_t)c->cols + (size_t)col];
}

/* Writes `len` bytes of UTF-8 text at (row, col), at most `maxw` columns
 * (maxw < 0: up to the right edge). Clipped to the canvas; invalid UTF-8,
 * control and wide characters become '?'. Returns the columns written. */
int tui_canvas_text(tui_canvas *c, int row, int col, const char *s, size_t len, int maxw,
                    tui_style style, unsigned flags);
/* The same for a NUL-terminated string. */
int tui_canvas_puts(tui_canvas *c, int row, int col, const char *s, tui_style style,
                    unsigned flags);
/* printf into (row, col) up to the right edge; returns the columns written. */
int tui_canvas_printf(tui_canvas *c, int row, int col, tui_style style, unsigned flags,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Fills `w` cells with code point ch. */
void tui_canvas_fill(tui_canvas *c, int row, int col, int w, uint32_t ch, tui_style style,
                     unsigned flags);
/* Sets style and flags of `w` cells, keeping their characters. */
void tui_canvas_paint(tui_canvas *c, int row, int col, int w, tui_style style, unsigned flags);

/* Columns a UTF-8 string takes on a canvas (one per code point). */
size_t tui_utf8_columns(const char *s, size_t len);
/* Byte length of the first `cols` columns of s. */
size_t tui_utf8_prefix(const char *s, size_t len, size_t cols);

/* The text of a row as UTF-8 (trailing blanks kept), for tests and dumps.
 * Returns the bytes written, always NUL-terminated when len > 0. */
size_t tui_canvas_row_text(const tui_canvas *c, int row, char *buf, size_t len);

#endif
