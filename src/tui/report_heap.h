/* report_heap.h - the Heap screen and the --heap batch output: what is on
 * the Java heap by class (a class histogram, model/heap.h), what grew since
 * the first histogram, how long the last one paused the JVM, and why it
 * pauses at all.
 *
 * One set of lines and one JSON shape for every source: a pid on this
 * machine and a pod through kubectl take a histogram when the user asks (r
 * on the screen, --heap in batch mode, never otherwise); the server shows
 * what the agent's temporary windows stored (jprof.io/heap-histogram).
 * Each keeps a tui_heap: the first histogram, the latest, and the growth
 * between them.
 *
 * Ownership: tui_heap is caller storage (_init/_cleanup) owning its
 * histograms. Not thread-safe. */
#ifndef JP_TUI_REPORT_HEAP_H
#define JP_TUI_REPORT_HEAP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/heap.h"
#include "tui/lines.h"

typedef struct tui_heap {
    jp_heap_histo first, latest; /* count 0: none yet */
    uint32_t count;              /* histograms seen (taken, or stored in the range) */
    jp_heap_growth growth;       /* first -> latest once count >= 2 */
    jp_heap_histo names;         /* owns the names of a growth read from the server */
    char error[320];             /* the last attempt's failure, "" none */
} tui_heap;

void tui_heap_init(tui_heap *s);
void tui_heap_cleanup(tui_heap *s);
/* Takes h over as the latest (the first stays the first) and computes the
 * growth; h is left empty. */
void tui_heap_add(tui_heap *s, jp_heap_histo *h);
/* What jprof-server stored for a range: the latest histogram, the growth
 * across the range and the names it points into (all moved in, left
 * empty), and how many histograms the range held. */
void tui_heap_set_stored(tui_heap *s, jp_heap_histo *latest, jp_heap_growth *g,
                         jp_heap_histo *names, uint32_t count);

/* The lines: the latest histogram's header and pause, the growth table
 * (from the second histogram on), the biggest classes; `top` rows each;
 * `how` says how to get a (new) histogram ("r takes one", ...). */
void tui_report_heap(const tui_heap *s, size_t top, const char *how, tui_lines *ls);

/* {"histogram": <wire/heap_json.h> | null, "growth": <...> | null,
 *  "histograms": count, "pause_note": JP_HEAP_PAUSE_NOTE}; new reference. */
json_t *tui_heap_json(const tui_heap *s, size_t top);

#endif
