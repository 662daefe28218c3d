/* source_pid.h - a JVM on this machine as a source of jprof-top's screens
 * (source.h), and the picker of the JVMs on this machine.
 *
 * Attaches over the HotSpot attach socket (jvm/attach.h): every refresh
 * takes a thread snapshot (helper jar or Thread.print,
 * jvm/snapshot_take.h) and reads the header numbers (process CPU from
 * /proc/PID/stat, heap from GC.heap_info). The Flame window is a rolling
 * window of a profiling engine in the viewer role (jvm/engine.h): the JDK
 * Flight Recorder with the JDK's "profile" settings, or async-profiler when
 * --asprof is given. Someone else's profiler only refuses the
 * async-profiler engine; JFR and the snapshot screens coexist with it.
 *
 * Ownership: tui_pid_open() returns a target freed by tui_target_free(),
 * which stops the engine and removes its files. Not thread-safe (see
 * jvm/attach.h). */
#ifndef JP_TUI_SOURCE_PID_H
#define JP_TUI_SOURCE_PID_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "tui/source.h"
#include "tui/target.h"

/* Opens o->pid (HotSpot check, VM.version over the attach socket; someone
 * else's async-profiler is only checked when the Flame screen starts one).
 * Errors carry a one-line message saying what to do. */
jp_err tui_pid_open(const tui_target_opts *o, tui_target **out, jp_error *err);

/* The picker of the JVMs on this machine this user may attach to. */
tui_picker *tui_picker_local(void);

#endif
