#include "tui/canvas.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "base/xalloc.h"

void tui_canvas_init(tui_canvas *c, int rows, int cols)
{
    c->rows = c->cols = 0;
    c->cells = NULL;
    tui_canvas_resize(c, rows, cols);
}

void tui_canvas_cleanup(tui_canvas *c)
{
    free(c->cells);
    c->cells = NULL;
    c->rows = c->cols = 0;
}

void tui_canvas_resize(tui_canvas *c, int rows, int cols)
{
    if (rows < 1)
        rows = 1;
    if (cols < 1)
        cols = 1;
    if (rows != c->rows || cols != c->cols) {
        free(c->cells);
        c->cells = jp_xreallocarray(NULL, (size_t)rows * (size_t)cols, sizeof *c->cells);
        c->rows = rows;
        c->cols = cols;
    }
    tui_canvas_clear(c);
}

void tui_canvas_clear(tui_canvas *c)
{
    size_t n = (size_t)c->rows * (size_t)c->cols;
    for (size_t i = 0; i < n; i++)
        c->cells[i] = (tui_cell){.ch = ' ', .style = TUI_STYLE_NORMAL, .flags = 0};
}

/* Decodes one UTF-8 code point at s[*i]; advances *i. Invalid sequences
 * decode to U+FFFD one byte at a time so text never desynchronises. */
static uint32_t utf8_next(const char *s, size_t len, size_t *i)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned char b = u[*i];
    size_t n;
    uint32_t cp;
    if (b < 0x80) {
        (*i)++;
        return b;
    } else if ((b & 0xe0) == 0xc0) {
        n = 2, cp = b & 0x1f;
    } else if ((b & 0xf0) == 0xe0) {
        n = 3, cp = b & 0x0f;
    } else if ((b & 0xf8) == 0xf0) {
        n = 4, cp = b & 0x07;
    } else {
        (*i)++;
        return 0xfffd;
    }
    if (*i + n > len) {
        (*i)++;
        return 0xfffd;
    }
    for (size_t k = 1; k < n; k++) {
        if ((u[*i + k] & 0xc0) != 0x80) {
            (*i)++;
            return 0xfffd;
        }
        cp = cp << 6 | (u[*i + k] & 0x3f);
    }
    *i += n;
    return cp;
}

/* One column wide and printable, or '?'. */
static uint32_t cell_char(uint32_t cp)
{
    if (cp < 0x20 || cp == 0x7f || cp == 0xfffd)
        return '?';
    if (cp < 0x7f)
        return cp;
    if (cp > 0x10ffff || wcwidth((wchar_t)cp) != 1)
        return '?';
    return cp;
}

size_t tui_utf8_columns(const char *s, size_t len)
{
    size_t i = 0, cols = 0;
    while (i < len) {
        utf8_next(s, len, &i);
        cols++;
    }
    return cols;
}

size_t tui_utf8_prefix(const char *s, size_t len, size_t cols)
{
    size_t i = 0;
    while (i < len && cols > 0) {
        utf8_next(s, len, &i);
        cols--;
    }
    return i;
}

int tui_canvas_text(tui_canvas *c, int row, int col, const char *s, size_t len, int maxw,
                    tui_style style, unsigned flags)
{
    if (row < 0 || row >= c->rows || col >= c->cols || maxw == 0)
        return 0;
    int limit = c->cols - col;
    if (maxw > 0 && maxw < limit)
        limit = maxw;
    size_t i = 0;
    int w = 0;
    while (i < len && w < limit) {
        uint32_t cp = cell_char(utf8_next(s, len, &i));
        if (col + w >= 0)
            *tui_canvas_at(c, row, col + w) =
                (tui_cell){.ch = cp, .style = (uint8_t)style, .flags = (uint8_t)flags};
        w++;
    }
    return w;
}

int tui_canvas_puts(tui_canvas *c, int row, int col, const char *s, tui_style style, unsigned flags)
{
    return tui_canvas_text(c, row, col, s, strlen(s), -1, style, flags);
}

int tui_canvas_printf(tui_canvas *c, int row, int col, tui_style style, unsigned flags,
                      const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return 0;
    size_t len = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    return tui_canvas_text(c, row, col, buf, len, -1, style, flags);
}

void tui_canvas_fill(tui_canvas *c, int row, int col, int w, uint32_t ch, tui_style style,
                     unsigned flags)
{
    if (row < 0 || row >= c->rows)
        return;
    for (int x = col < 0 ? 0 : col; x < col + w && x < c->cols; x++)
        *tui_canvas_at(c, row, x) =
            (tui_cell){.ch = ch, .style = (uint8_t)style, .flags = (uint8_t)flags};
}

void tui_canvas_paint(tui_canvas *c, int row, int col, int w, tui_style style, unsigned flags)
{
    if (row < 0 || row >= c->rows)
        return;
    for (int x = col < 0 ? 0 : col; x < col + w && x < c->cols; x++) {
        tui_cell *cell = tui_canvas_at(c, row, x);
        cell->style = (uint8_t)style;
        cell->flags = (uint8_t)flags;
    }
}

static size_t utf8_put(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

size_t tui_canvas_row_text(const tui_canvas *c, int row, char *buf, size_t len)
{
    if (!len)
        return 0;
    size_t n = 0;
    if (row >= 0 && row < c->rows) {
        for (int x = 0; x < c->cols; x++) {
            char tmp[4];
            size_t k = utf8_put(c->cells[(size_t)row * (size_t)c->cols + (size_t)x].ch, tmp);
            if (n + k >= len)
                break;
            memcpy(buf + n, tmp, k);
            n += k;
        }
    }
    buf[n] = '\0';
    return n;
}
