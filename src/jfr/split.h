/* split.h - one chunk's events decoded on several threads (internal to
 * src/jfr).
 *
 * Events are size-prefixed, so the run can be cut into pieces on event
 * boundaries by reading sizes alone. The calling thread does that walk,
 * cutting pieces of about `block` bytes (slices of an input in memory; a
 * file's are read into buffers of their own, an event cut by a piece's end
 * carried into the next, an unwanted event longer than a piece passed over
 * unread), and `jobs` worker threads decode the pieces, each into an
 * accumulator of its own; the accumulators
 * are added into `acc` at the end (agg.h: the sum does not depend on who
 * added what). Rare events (events.h) are queued per piece and handed to
 * the rare callback on the calling thread in file order, piece after piece
 * as they finish, so the callback sees exactly what a serial run shows it.
 * At most JFR_SPLIT_AHEAD pieces per job are cut and not yet finished,
 * which bounds memory whatever the chunk's size. The threads, their
 * buffers and accumulators live as long as the team (one read).
 *
 * Damage anywhere (a size that does not check out, an event that does not
 * decode, a rare event whose callback fails) stops every thread and makes
 * jfr_split_run return false: the caller then decodes the chunk again on
 * one thread, which stops at the damage exactly as a serial read does (so
 * its error, its warnings and its partial result are the serial ones). */
#ifndef JP_JFR_SPLIT_H
#define JP_JFR_SPLIT_H

#include <stdbool.h>
#include <stdint.h>

#include "jfr/agg.h"
#include "jfr/events.h"
#include "jfr/src.h"

#define JFR_SPLIT_BLOCK (256u << 10) /* default piece size */
#define JFR_SPLIT_AHEAD 2
#define JFR_SPLIT_MAX_EVENT (64u << 20) /* a wanted event longer than this: damage */

/* The threads of one read and what they keep from chunk to chunk (piece
 * buffers, accumulators). Not thread-safe: one chunk at a time. */
typedef struct jfr_team jfr_team;

/* A team of `jobs` threads (>= 2; the caller of jfr_split_run is one of
 * them, the others start on the first run). */
jfr_team *jfr_team_new(int jobs);
/* Stops and joins the threads; NULL is a no-op. */
void jfr_team_free(jfr_team *tm);

/* Decodes the events at [start, end) of src with t on the team's threads
 * into acc. True when all of it decoded; false (acc and the callback's
 * state then hold part of the run: the caller resets them) on damage. */
bool jfr_split_run(jfr_team *tm, const jfr_evtab *t, jfr_acc *acc, const jfr_src *src,
                   uint64_t start, uint64_t end, size_t block, jfr_rare_fn rare, void *rare_arg);

#endif
