/* app_common.h - what jprof-top's two front ends share: main.c (recordings
 * and local JVMs) and remote_cli.c (a service on jprof-server). The options
 * both accept, the usage-error message, the terminal check of the
 * interactive views, and the glue that runs a typed view as a tui_app.
 *
 * Nothing here owns memory; everything prints to stderr only (jprof-top's
 * front ends are the program's main, where printing belongs). */
#ifndef JP_TUI_APP_COMMON_H
#define JP_TUI_APP_COMMON_H

#include <getopt.h>
#include <stdbool.h>

#include "tui/target.h"
#include "tui/terminal.h"

/* getopt values of the long options without a short letter that both front
 * ends accept; main.c numbers its own others from 1000, remote_cli.c from
 * 2000. */
enum { TUI_OPT_VALUE = 900, TUI_OPT_FROM, TUI_OPT_TO };

/* The entries of struct option that mean the same in both front ends: batch
 * mode, the output format, the profile kind and value, the time range, the
 * refresh interval and help. Spelled as a list so each table stays one array
 * for getopt_long. */
// clang-format off
#define TUI_COMMON_OPTIONS                                  \
    {"batch", no_argument, NULL, 'b'},                      \
    {"format", required_argument, NULL, 'f'},               \
    {"event", required_argument, NULL, 'e'},                \
    {"value", required_argument, NULL, TUI_OPT_VALUE},      \
    {"from", required_argument, NULL, TUI_OPT_FROM},        \
    {"to", required_argument, NULL, TUI_OPT_TO},            \
    {"delay", required_argument, NULL, 'd'},                \
    {"help", no_argument, NULL, 'h'}
// clang-format on

/* "jprof-top: MESSAGE" and the pointer to --help on stderr; returns
 * TUI_EXIT_USAGE. */
int tui_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* True when stdin and stdout are terminals; else says to use -b. */
bool tui_have_terminal(void);

/* Runs the app until it quits or tui_stop_signal is set (the caller
 * installs the handlers); a failure is printed. Returns TUI_EXIT_OK or
 * TUI_EXIT_ERROR. */
int tui_app_run(const tui_app *app);

/* TUI_APP_CALLBACKS(P) defines the four static callbacks a tui_app needs,
 * each handing the app's void *ctx to P_resize, P_key, P_tick and P_render of
 * a view; TUI_APP_INIT(P, VIEW, POLL_MS) is the tui_app made of them, stopped
 * by the signal handlers of live.h. C cannot call the typed functions through
 * void * pointers without these wrappers; one macro keeps them in one place. */
#define TUI_APP_CALLBACKS(P)                                                                       \
    static void P##_app_resize(void *ctx, int rows, int cols)                                      \
    {                                                                                              \
        P##_resize(ctx, rows, cols);                                                               \
    }                                                                                              \
    static tui_action P##_app_key(void *ctx, int key)                                              \
    {                                                                                              \
        return P##_key(ctx, key);                                                                  \
    }                                                                                              \
    static bool P##_app_tick(void *ctx)                                                            \
    {                                                                                              \
        return P##_tick(ctx);                                                                      \
    }                                                                                              \
    static void P##_app_render(void *ctx, tui_canvas *c)                                           \
    {                                                                                              \
        P##_render(ctx, c);                                                                        \
    }

#define TUI_APP_INIT(P, VIEW, POLL_MS)                                                             \
    {                                                                                              \
        .ctx = (VIEW), .resize = P##_app_resize, .key = P##_app_key, .tick = P##_app_tick,         \
        .render = P##_app_render, .stop = &tui_stop_signal, .poll_ms = (POLL_MS)                   \
    }

#endif
