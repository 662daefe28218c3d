/* source.h - where the data of jprof-top's screens comes from.
 *
 * The screens (screens.h: picker, Threads, Locks, Deadlocks, Flame, Status,
 * GC) and the batch output (batch.h) draw one model, a tui_target (target.h): the current
 * and previous thread snapshots with their analyses, the header numbers and
 * the last profile window. They never know where it came from. A source
 * fills it through a small table of operations:
 *
 *   refresh     take a thread snapshot (a new jp_snapshot) and update the
 *               header numbers it knows (JVM version, process CPU, heap);
 *   prof_start  start a rolling profile window (the Flame screen);
 *   prof_read   read the current window as a parsed profile;
 *   prof_stop   stop it and remove everything it left in the target;
 *   prof_label  the Flame title's words for the engine and span;
 *   close       free the source's own state (after prof_stop);
 * and, where the source has them (NULL otherwise):
 *   busy        the snapshot evidence of busy threads when it does not come
 *               from two snapshots taken here (a stored snapshot carries
 *               its own CPU deltas);
 *   cpu         the profile evidence of busy threads when it is not the
 *               window of the Flame screen (the server's newest windows);
 *   status      lines for the Status screen after the common ones;
 *   flame_key   keys of the Flame screen the source handles (the server's
 *               range and pod scope); true reads the window again, false
 *               with a message (a range at its end) only says it;
 *   heap        a class histogram into l->histograms (report_heap.h): taken now
 *               when the source can (a pid, a pod: it pauses the JVM, so
 *               only when the user asks), or what the server stored for
 *               the range (the agent's jprof.io/heap-histogram windows);
 *   gc          the GC screen's lines when the GC evidence is not the
 *               Flame window's GC log (the server's stored summaries over
 *               the Flame range, the probe's summary of the pod's window),
 *               drawn by tui_report_gc_data (tui/report_gc.h);
 *   prof_engine what records the window, when the source records it;
 *   alive       whether the connection to the target still stands.
 *
 * A picker (tui_picker) lists what a source can open - the JVMs of this
 * machine, the pods of a service - and opens the row chosen.
 *
 * Sources, one file each: a pid on this machine (source_pid.c: attach,
 * src/jvm), a target of a service on jprof-server (source_server.c) and a
 * pod through `kubectl exec` and jprof-probe (source_kubectl.c). A .jfr
 * file is one finished profile and is drawn by the flame view directly
 * (flame_view.h), with the same keys.
 *
 * Every operation reports failure through jp_error with a message that says
 * what to do; JP_ERR_EXITED from refresh means the
 * target is gone (the screens keep its last snapshot). Not thread-safe. */
#ifndef JP_TUI_SOURCE_H
#define JP_TUI_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "jfr/jfr.h"
#include "model/analyze.h"
#include "model/busy.h"
#include "model/profile.h"
#include "model/snapshot.h"

typedef struct tui_target tui_target;
struct tui_lines;
typedef struct tui_target_opts tui_target_opts;

typedef struct tui_source_ops {
    const char *name; /* "pid", "kubectl", "server": in the JSON output and messages */
    const char *how;  /* the Status screen's words for how it reads the target */
    /* *out: a new snapshot the caller takes over */
    jp_err (*refresh)(tui_target *l, jp_snapshot **out, jp_error *err);
    jp_err (*prof_start)(tui_target *l, jp_error *err);
    /* *out: a new profile of the window (events older than the window
     * dropped), or NULL when nothing changed since the last read (the
     * screen keeps it); *rep says what was read (start/end, partial);
     * *tail: damage only in a chunk still being written (not an error) */
    jp_err (*prof_read)(tui_target *l, jp_profile **out, jfr_report *rep, bool *tail,
                        jp_error *err);
    void (*prof_stop)(tui_target *l);
    void (*prof_label)(const tui_target *l, char *buf, size_t len);
    void (*close)(tui_target *l);
    void (*busy)(const tui_target *l, jp_busy_list *out);
    void (*cpu)(const tui_target *l, jp_cpu_evidence *out);
    void (*status)(const tui_target *l, struct tui_lines *out);
    bool (*flame_key)(tui_target *l, int key, char *msg, size_t len);
    void (*gc)(tui_target *l, int width, struct tui_lines *out);
    jp_err (*heap)(tui_target *l, bool all, jp_error *err);
    /* heap reads histograms stored earlier (nothing pauses the JVM, so the
     * Heap screen reads them on entering) instead of taking one now */
    bool heap_stored;
    /* the engine the source records the window with, in a sentence
     * ("async-profiler"); NULL when it records nothing itself (the server:
     * the agents did) */
    const char *(*prof_engine)(const tui_target *l);
    /* false once the source's connection to the target ended (a probe
     * gone): a wait ends early, the next operation says why */
    bool (*alive)(const tui_target *l);
} tui_source_ops;

/* ---- pickers ---- */

#define TUI_PICK_TEXT 512

typedef struct tui_pick_row {
    char text[TUI_PICK_TEXT];
    bool disabled; /* shown dim; Enter explains instead of opening */
} tui_pick_row;

typedef struct tui_pick_list {
    tui_pick_row *rows;
    size_t count, cap;
} tui_pick_list;

void tui_pick_list_init(tui_pick_list *l);
void tui_pick_list_cleanup(tui_pick_list *l);
tui_pick_row *tui_pick_list_add(tui_pick_list *l);

typedef struct tui_picker tui_picker;
struct tui_picker {
    char title[160];   /* "Java virtual machines on this machine" */
    char head[160];    /* the column header line */
    char empty[200];   /* said when the list is empty */
    int64_t rescan_ns; /* scan again this often while shown; 0: once */
    /* fills *out (reset first) */
    jp_err (*scan)(tui_picker *p, tui_pick_list *out, jp_error *err);
    /* opens row i of the last scan with the view's options */
    jp_err (*open)(tui_picker *p, size_t i, const tui_target_opts *o, tui_target **out,
                   jp_error *err);
    void (*free)(tui_picker *p);
    void *ctx;
};

void tui_picker_free(tui_picker *p);

#endif
