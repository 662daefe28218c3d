/* merge.h - adding decoded chunks to the output profile, in file order.
 *
 * Internal to src/jfr. The merger is where chunk results meet: sampling
 * settings carry from chunk to chunk (async-profiler writes them in the
 * first chunk only), so the kind of a jdk.ExecutionSample cell and the value
 * of cpu/wall cells (samples x period) are decided here; frames and stacks
 * are re-interned into the output unless the chunk decoded into it directly;
 * warnings keep the first of each category; malloc/free pairing runs over
 * the chunks in order. Caller storage (_init/_cleanup); not thread-safe:
 * one thread merges. */
#ifndef JP_JFR_MERGE_H
#define JP_JFR_MERGE_H

#include "jfr/chunk.h"
#include "jfr/leak.h"

typedef struct jfr_merger {
    const jfr_ctx *c;
    jp_profile *out;
    jfr_report *rep;
    jfr_warner warn;
    jfr_settings carried; /* settings in force from earlier chunks */
    jfr_leak leak;
} jfr_merger;

void jfr_merger_init(jfr_merger *m, const jfr_ctx *c, jp_profile *out, jfr_report *rep);
void jfr_merger_cleanup(jfr_merger *m);

/* Adds what chunk o decoded (all of it, even when o->rc says it was cut
 * short) and returns o->rc, with its message copied into the report. */
jp_err jfr_merger_add(jfr_merger *m, const jfr_chunk_out *o);

/* Ends the read: with c->leak, adds the mallocs never freed (tail rule). */
void jfr_merger_finish(jfr_merger *m, double tail);

#endif
