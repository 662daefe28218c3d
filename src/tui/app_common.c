#include "tui/app_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "tui/report_profile.h"

int tui_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("jprof-top: ", stderr);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'jprof-top --help' for more information.\n", stderr);
    return TUI_EXIT_USAGE;
}

bool tui_have_terminal(void)
{
    if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
        return true;
    fputs("jprof-top: the interactive view needs a terminal; use -b for batch output\n", stderr);
    return false;
}

int tui_app_run(const tui_app *app)
{
    jp_error err;
    jp_error_init(&err);
    if (tui_terminal_run_app(app, &err) != JP_OK) {
        fprintf(stderr, "jprof-top: %s\n", err.msg);
        return TUI_EXIT_ERROR;
    }
    return TUI_EXIT_OK;
}
