/* resolve.h - lazy, cached resolution of pool keys into model stacks/threads.
 *
 * Internal to src/jfr. A resolver lives for one chunk: it decodes a pool value
 * the first time an event needs it (stack trace -> frames -> method -> class
 * -> symbol) and caches the result (stack key -> model stack index, method
 * key + frame kind -> model frame index, thread key -> thread frame index).
 * Broken references are not errors: they count a warning and print as
 * "[unknown]". Caller storage: jfr_resolver_init / jfr_resolver_cleanup; it
 * borrows meta, pools (and the input they read in place) and the profile for its whole life. */
#ifndef JP_JFR_RESOLVE_H
#define JP_JFR_RESOLVE_H

#include <stdint.h>

#include "base/strbuf.h"
#include "jfr/meta.h"
#include "jfr/pool.h"
#include "model/profile.h"

typedef struct jfr_resolver {
    const jfr_meta *m;
    const jfr_pools *pools; /* pool values lie in [pools->base, pools->end) */
    jp_profile *prof;
    jfr_warner *warn;
    /* field indexes into m->fields, JFR_NONE when the type lacks the field */
    uint32_t f_method_type, f_method_name, f_method_desc, f_class_name, f_symbol_string, f_ft_desc;
    uint32_t f_th_osname, f_th_osid, f_th_javaname, f_st_truncated, f_st_frames;
    uint32_t f_sf_method, f_sf_type, f_ts_name, f_old_type;
    /* A flat stack frame class (meta.h) whose method and type are varints:
     * frames are read by position, the two at slots sf_mslot and sf_tslot
     * (-1 when the class lacks the field). */
    bool sf_flat;
    int sf_mslot, sf_tslot;
    /* When every field is an integer and both are there (every JDK and
     * async-profiler recording): integers to skip before the first of the
     * two, between them and after, and whether the method comes first. */
    bool sf_plan, sf_mfirst;
    unsigned sf_skip[3];
    /* Flat frames seen, direct-mapped by (method key, type key): a hit
     * stands for the frame type and method lookups (made on first use). */
    struct jfr_frame_slot *fcache;
    jp_u64map stacks;                         /* stack key -> model stack index */
    jp_u64map threads;                        /* thread key -> model thread (frame) index */
    jp_u64map ftypes;                         /* frame type key -> jp_frame_kind */
    jp_u64map methods;                        /* method key -> row of mframes */
    uint32_t (*mframes)[JP_FRAME_KIND_COUNT]; /* frame index per kind, JFR_NONE unknown */
    size_t nmethods, mcap;
    uint32_t *frames; /* scratch: one stack's frames */
    size_t frames_cap;
    jp_strbuf s1, s2, s3, out;                        /* scratch text */
    uint32_t no_stack, unknown_stack, unknown_thread; /* made on first use */
    /* The previous chunk's resolver, asked for keys missing here: the JDK's
     * ids are unique per recording and JDK 17 refers to stack traces that it
     * wrote into the chunk before. prev_get(prev_arg) makes it on first use
     * (it resolves into this resolver's profile); NULL when there is none. */
    struct jfr_resolver *(*prev_get)(void *arg);
    void *prev_arg;
} jfr_resolver;

void jfr_resolver_init(jfr_resolver *r, const jfr_meta *m, const jfr_pools *pools, jp_profile *prof,
                       jfr_warner *warn);
void jfr_resolver_cleanup(jfr_resolver *r);

/* Model stack index for a stack trace key; key 0 (no stack) gives the
 * one-frame stack "[no stack]", a missing key "[unknown]". */
uint32_t jfr_resolve_stack(jfr_resolver *r, uint64_t key);
/* Model thread index for a thread key ("[unknown thread]" when missing). */
uint32_t jfr_resolve_thread(jfr_resolver *r, uint64_t key);

/* Name of a thread state key ("STATE_RUNNABLE") into out; false when the
 * key is not in the ThreadState pool. */
bool jfr_resolve_state(jfr_resolver *r, uint64_t key, jp_strbuf *out);

/* The class of an OldObject key (jdk.OldObjectSample's `object`) as Java
 * prints it ("java.util.HashMap$Node", "[Ljava.lang.Object;") into out;
 * false when the key or its class is missing. */
bool jfr_resolve_old_class(jfr_resolver *r, uint64_t key, jp_strbuf *out);

/* Reads the fields of an event (or any struct) of class cls at p by field
 * index: for each i < n, fields[i] receives into nums[i] (numbers, pool keys)
 * or texts[i] (strings, when texts[i] is not NULL). found[i] tells whether it
 * was present. A field referring to a label pool (GCName, GCCause, GCWhen)
 * gives the label's text when texts[i] is set (not found when the key is
 * missing from the pool). Returns false when the value does not decode. */
bool jfr_resolve_fields(jfr_resolver *r, uint32_t cls, const uint8_t *p, const uint8_t *end,
                        const uint32_t *fields, int n, uint64_t *nums, jp_strbuf **texts,
                        bool *found);

#endif
