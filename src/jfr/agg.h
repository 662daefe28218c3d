/* agg.h - a chunk's events added up by raw pool keys (internal to src/jfr).
 *
 * The event loop adds every event to a cell keyed by (slot, stack key,
 * thread key, state key) as found on the wire; keys are resolved into
 * frames and stacks once per cell when the chunk ends. Each thread decoding
 * part of a chunk has an accumulator of its own; jfr_acc_merge adds one into
 * another, and jfr_acc_sorted lists the cells in key order, so the result is
 * the same whatever the number of threads and the order they ran in.
 *
 * Events without a thread key (the reader was not asked for threads) whose
 * stack key lies in the chunk's range of stack keys and whose state key is
 * small are counted in plain arrays indexed by the stack key instead, a
 * "lane" per (slot, state): no hashing and 16 bytes per stack, which is
 * what makes the common case cheap (jfr_acc_dense sets the range).
 *
 * Memory: one cell per distinct key, 56 bytes, in a table at most half
 * full, plus 16 bytes per stack key of the range per lane used. Caller
 * storage (jfr_acc_init / jfr_acc_cleanup); not thread-safe. */
#ifndef JP_JFR_AGG_H
#define JP_JFR_AGG_H

#include <stddef.h>
#include <stdint.h>

typedef struct jfr_agg_cell {
    uint64_t stack, thread; /* pool keys */
    uint64_t state;         /* pool key */
    uint64_t events, samples, value;
    uint32_t slot; /* JFR_SLOT_* */
    uint32_t used;
} jfr_agg_cell;

/* The dense part: per stack key, events and their amount (the value, or
 * the samples of a profiler.WallClockSample, whose value is 0). */
typedef struct jfr_dense {
    uint64_t events, amount;
} jfr_dense;

#define JFR_ACC_STATES 8                    /* state keys below this have a lane of their own */
#define JFR_ACC_LANES (16 * JFR_ACC_STATES) /* slot x state */

typedef struct jfr_acc {
    jfr_agg_cell *cells;
    size_t cap, count;
    uint64_t dense_base; /* stack keys [base, base + n) go to the lanes */
    size_t dense_n;
    size_t lane_cap[JFR_ACC_LANES]; /* keys each lane's memory holds */
    jfr_dense *lane[JFR_ACC_LANES]; /* [slot * JFR_ACC_STATES + state], made on first use */
    uint64_t events_read;           /* events seen (metadata and checkpoints not counted) */
    uint64_t events_filtered;       /* dropped by --from/--to */
    uint64_t lost;                  /* jdk.CPUTimeSamplesLost.lostSamples */
} jfr_acc;

void jfr_acc_init(jfr_acc *a);
void jfr_acc_cleanup(jfr_acc *a);

void jfr_acc_grow(jfr_acc *a);

/* Pool keys are small, dense integers: two multiplications spread them well
 * enough, at a third of the cost of a full mix (this runs once per event). */
static inline size_t jfr_acc_hash(uint32_t slot, uint64_t stack, uint64_t thread, uint64_t state)
{
    uint64_t h = stack * 0x9e3779b97f4a7c15ULL ^ thread * 0xc2b2ae3d27d4eb4fULL ^
                 (uint64_t)slot << 59 ^ state << 48;
    return (size_t)(h ^ h >> 29);
}

/* Adds one event (or, from jfr_acc_merge, a cell of `events` events). */
static inline void jfr_acc_add(jfr_acc *a, uint32_t slot, uint64_t stack, uint64_t thread,
                               uint64_t state, uint64_t events, uint64_t samples, uint64_t value)
{
    if (__builtin_expect((a->count + 1) * 2 > a->cap, 0))
        jfr_acc_grow(a);
    size_t mask = a->cap - 1;
    for (size_t i = jfr_acc_hash(slot, stack, thread, state) & mask;; i = (i + 1) & mask) {
        jfr_agg_cell *c = &a->cells[i];
        if (!c->used) {
            *c = (jfr_agg_cell){.stack = stack,
                                .thread = thread,
                                .state = state,
                                .events = events,
                                .samples = samples,
                                .value = value,
                                .slot = slot,
                                .used = 1};
            a->count++;
            return;
        }
        if (c->stack == stack && c->thread == thread && c->state == state && c->slot == slot) {
            c->events += events;
            c->samples += samples;
            c->value += value;
            return;
        }
    }
}

/* Sets the range of stack keys counted in lanes (n = 0: none); lanes of
 * another range are emptied (their memory kept for the next one). */
void jfr_acc_dense(jfr_acc *a, uint64_t base, size_t n);
/* Empties a (counters, cells, lanes) and keeps its memory for reuse. */
void jfr_acc_clear(jfr_acc *a);
/* The lane of index `lane`, made (zeroed) on first use. */
jfr_dense *jfr_acc_lane(jfr_acc *a, unsigned lane);

/* Adds one event of `amount` (see jfr_dense) that has no thread key: to a
 * lane when it can, else as a cell. */
static inline void jfr_acc_add1(jfr_acc *a, uint32_t slot, uint32_t wall, uint64_t stack,
                                uint64_t thread, uint64_t state, uint64_t amount)
{
    uint64_t key = stack - a->dense_base;
    if (__builtin_expect(key < a->dense_n && (thread | (state >= JFR_ACC_STATES)) == 0, 1)) {
        unsigned lane = slot * JFR_ACC_STATES + (unsigned)state;
        jfr_dense *d = a->lane[lane];
        if (__builtin_expect(!d, 0))
            d = jfr_acc_lane(a, lane);
        d[key].events++;
        d[key].amount += amount;
        return;
    }
    jfr_acc_add(a, slot, stack, thread, state, 1, wall ? amount : 1, wall ? 0 : amount);
}

/* Adds everything src holds into dst (src is left as it was). A dst with
 * no lanes takes src's range of stack keys; lanes of another range than
 * dst's are added key by key (to dst's lanes or cells), never dropped. */
void jfr_acc_merge(jfr_acc *dst, const jfr_acc *src);

/* The cells of a, lanes included, in key order (slot, stack, thread,
 * state): a new array of *count cells (free() it), NULL when none. */
jfr_agg_cell *jfr_acc_sorted(const jfr_acc *a, size_t *count);

#endif
