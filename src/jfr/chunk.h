/* chunk.h - reading one chunk into the profile (internal to src/jfr).
 *
 * A jfr_ctx is the state of one jfr_read_* call: the input, the profile and
 * report being filled, the resolved options, and what carries from chunk to
 * chunk (sampling settings, warnings already given). Everything a chunk
 * builds (metadata, pool index, caches, plans) is freed when it ends. */
#ifndef JP_JFR_CHUNK_H
#define JP_JFR_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jfr/internal.h"
#include "model/profile.h"

/* Sampling settings found in jdk.ActiveSetting events. */
typedef struct jfr_settings {
    bool any;           /* the chunk had a setting we use */
    int64_t jdk_period; /* JDK: ExecutionSample "period", ns (smallest seen) */
    bool has_interval;  /* async-profiler: "interval" of the main event, ns */
    int64_t interval;
    bool has_wall; /* async-profiler: "wall" interval next to cpu, ns */
    int64_t wall;
    bool has_event; /* async-profiler: "event" (cpu, wall, itimer, ...) */
    char event[32];
} jfr_settings;

typedef struct jfr_header {
    int major, minor;
    uint64_t size, cp, meta; /* chunk size; offsets within the chunk */
    int64_t start_ns, duration_ns, start_ticks, ticks_per_sec;
    uint8_t flags; /* byte 67: bit 0 = compressed integers */
} jfr_header;

typedef struct chunk chunk;

typedef struct jfr_ctx {
    const uint8_t *base;
    size_t len;
    const char *name;
    jp_profile *prof;
    jfr_report *rep;
    uint32_t kinds; /* effective mask of jp_kind bits */
    bool threads;
    bool filter; /* keep events with from_ns <= start < to_ns */
    int64_t from_ns, to_ns;
    bool release; /* base is our own mapping: give parsed pages back */
    size_t page;
    jfr_warner warn;
    jfr_settings carried; /* settings in force from earlier chunks */
    chunk *prev;          /* the chunk before, kept for its pool look-ups */
    size_t prev_off;      /* where it starts */
} jfr_ctx;

/* Parses and checks the header of the chunk at `off` (chunk number `no`).
 * Damage (cut header, bad magic, impossible or unfinished sizes and offsets)
 * is an error through err. */
jp_err jfr_header_parse(const jfr_ctx *c, size_t off, uint32_t no, jfr_header *h, jp_error *err);

/* Reads the chunk at `off` whose header is h. Events decoded before damage
 * stay in the profile. */
jp_err jfr_chunk_read(jfr_ctx *c, size_t off, uint32_t no, const jfr_header *h);

/* Frees what the context keeps between chunks. */
void jfr_ctx_cleanup(jfr_ctx *c);

/* Gives the whole pages of [from, to) back to the kernel when c->release. */
void jfr_release(jfr_ctx *c, size_t from, size_t to);

/* Parses a JFR timespan setting ("20 ms", "10ms", "1 s", "500 us") to ns. */
bool jfr_timespan_parse(const char *s, int64_t *ns);

#endif
