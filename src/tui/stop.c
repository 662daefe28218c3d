/* stop.c - stopping on a signal: the handlers only set a flag (and remove
 * jprof's files when asked twice), loops look at it between steps. */
#include "tui/stop.h"

#include <signal.h>
#include <time.h>

#include "base/stopsig.h"
#include "base/timeutil.h"
#include "jvm/cleanup.h"

volatile sig_atomic_t tui_stop_signal;

static void on_stop_signal(int sig)
{
    if (tui_stop_signal) {
        /* asked twice: only async-signal-safe work is left to do */
        jvm_cleanup_unlink_files();
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    tui_stop_signal = sig;
}

void tui_stop_install(void)
{
    jp_stop_signals(on_stop_signal);
}

bool tui_stop_sleep_until(int64_t ns, bool (*done)(void *ctx), void *ctx)
{
    int64_t end = jp_time_mono_ns() + ns;
    while (!tui_stop_signal) {
        if (done && done(ctx))
            return true;
        int64_t left = end - jp_time_mono_ns();
        if (left <= 0)
            return true;
        /* with a condition to watch, look at it every 100 ms */
        if (done && left > 100 * JP_NS_PER_MS)
            left = 100 * JP_NS_PER_MS;
        struct timespec ts = {.tv_sec = left / JP_NS_PER_SEC, .tv_nsec = left % JP_NS_PER_SEC};
        nanosleep(&ts, NULL); /* EINTR: the loop looks at the flag */
    }
    return false;
}

void tui_stop_sleep(int64_t ns)
{
    tui_stop_sleep_until(ns, NULL, NULL);
}
