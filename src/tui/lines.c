/* lines.c - styled text lines for the text screens and batch output. */
#include "tui/lines.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void tui_lines_init(tui_lines *ls)
{
    memset(ls, 0, sizeof *ls);
}

void tui_lines_reset(tui_lines *ls)
{
    for (size_t i = 0; i < ls->count; i++)
        free(ls->items[i].text);
    ls->count = 0;
}

void tui_lines_cleanup(tui_lines *ls)
{
    tui_lines_reset(ls);
    free(ls->items);
    tui_lines_init(ls);
}

void tui_lines_add(tui_lines *ls, tui_style style, unsigned flags, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ls->items = jp_xgrow(ls->items, &ls->cap, ls->count + 1, sizeof *ls->items);
    ls->items[ls->count++] = (tui_line){.text = jp_xstrdup(buf), .style = style, .flags = flags};
}

jp_err tui_lines_write(const tui_lines *ls, FILE *out)
{
    for (size_t i = 0; i < ls->count; i++)
        if (fputs(ls->items[i].text, out) == EOF || fputc('\n', out) == EOF)
            return JP_ERR_IO;
    return JP_OK;
}
