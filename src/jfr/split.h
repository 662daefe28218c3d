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
 * which bounds memory whatever the chunk's size.
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

#define JFR_SPLIT_BLOCK (1u << 20) /* default block size */
#define JFR_SPLIT_AHEAD 4
#define JFR_SPLIT_MAX_EVENT (64u << 20) /* a wanted event longer than this: damage */

/* Decodes the events at [start, end) of src with t on `jobs` threads (> 1)
 * into acc.
 * True when all of it decoded; false (acc and the callback's state then
 * hold part of the run: the caller resets them) on damage or when no
 * thread could start. */
bool jfr_split_run(const jfr_evtab *t, jfr_acc *acc, const jfr_src *src, uint64_t start,
                   uint64_t end, int jobs, size_t block, jfr_rare_fn rare, void *rare_arg);

#endif
