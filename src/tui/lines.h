/* lines.h - styled text lines: what the text screens (Locks, Deadlocks,
 * Status, GC, a stack) draw with scrolling and batch mode prints.
 *
 * Ownership: tui_lines is caller storage (tui_lines_init/cleanup) owning its
 * strings; a line is cut at 1023 bytes. Not thread-safe. */
#ifndef JP_TUI_LINES_H
#define JP_TUI_LINES_H

#include <stddef.h>
#include <stdio.h>

#include "base/error.h"
#include "tui/canvas.h"

typedef struct tui_line {
    char *text;
    tui_style style;
    unsigned flags;
} tui_line;

typedef struct tui_lines {
    tui_line *items;
    size_t count, cap;
} tui_lines;

void tui_lines_init(tui_lines *ls);
void tui_lines_cleanup(tui_lines *ls);
void tui_lines_reset(tui_lines *ls);
void tui_lines_add(tui_lines *ls, tui_style style, unsigned flags, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes the lines as plain text; JP_ERR_IO when the stream fails. */
jp_err tui_lines_write(const tui_lines *ls, FILE *out);

#endif
