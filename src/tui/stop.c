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

void tui_stop_sleep(int64_t ns)
{
    int64_t end = jp_time_mono_ns() + ns;
    while (!tui_stop_signal) {
        int64_t left = end - jp_time_mono_ns();
        if (left <= 0)
            break;
        struct timespec ts = {.tv_sec = left / JP_NS_PER_SEC, .tv_nsec = left % JP_NS_PER_SEC};
        nanosleep(&ts, NULL); /* EINTR: the loop looks at the flag */
    }
}
