/* diff.h - two profiles of one kind compared: what grew, what shrank.
 *
 * The comparison lives in one profile of its own (`prof`) that holds the
 * frames and stacks of both: its kind table holds the NEW profile's cells,
 * plus a zero cell for every stack only the OLD one has, so a flame tree of
 * it has the new profile's widths and a node for everything that vanished.
 * The old side is kept per cell (`old_samples`/`old_value`, parallel to the
 * cells) and, once jp_diff_tree() ran, per tree node.
 *
 * Normalisation makes two recordings of different length or load
 * comparable: NONE compares raw counts; PER_SAMPLE scales the old side so
 * its total equals the new total (shares are compared); PER_SECOND scales it
 * by the ratio of the recordings' durations (rates are compared). The scale
 * is applied when reading old values (jp_diff_old()), never stored.
 *
 * Ownership: jp_diff_new() returns a heap object freed by jp_diff_free();
 * it copies what it needs, so the inputs may be freed afterwards. The tree
 * belongs to the diff. Not thread-safe. */
#ifndef JP_MODEL_DIFF_H
#define JP_MODEL_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "model/flame.h"
#include "model/profile.h"

typedef enum jp_diff_norm { JP_DIFF_NONE = 0, JP_DIFF_PER_SAMPLE, JP_DIFF_PER_SECOND } jp_diff_norm;

/* "none", "sample", "second"; parse returns false for anything else. */
const char *jp_diff_norm_name(jp_diff_norm n);
bool jp_diff_norm_parse(const char *s, jp_diff_norm *out);

typedef struct jp_diff {
    jp_profile *prof; /* frames and stacks of both; kinds[kind]: new cells (+ zero cells) */
    jp_kind kind;
    bool threads;
    bool by_value; /* compare values (ns, bytes) instead of samples */
    jp_diff_norm norm;
    double old_scale;                  /* factor that normalises the old side */
    int64_t old_span_ns, new_span_ns;  /* the recordings' durations, 0 unknown */
    uint64_t *old_samples, *old_value; /* per cell of prof->kinds[kind] */
    uint64_t old_total_samples, old_total_value;
    /* jp_diff_tree(): the flame tree of prof and the old totals per node */
    jp_flame *tree;
    uint64_t *node_old_total, *node_old_self; /* in the measure chosen, unscaled */
} jp_diff;

/* Compares kind k of `old` and `new_` (either may have no events of k: its
 * side is all zeros). JP_ERR_USAGE for a kind out of range, or when
 * PER_SECOND is asked and a recording's duration is unknown. */
jp_err jp_diff_new(const jp_profile *old, const jp_profile *new_, jp_kind k, bool threads,
                   bool by_value, jp_diff_norm norm, jp_diff **out, jp_error *err);
void jp_diff_free(jp_diff *d);

/* The old side of a raw count, normalised. */
static inline double jp_diff_old(const jp_diff *d, uint64_t raw)
{
    return (double)raw * d->old_scale;
}

/* Changes the normalisation (d->old_scale); JP_ERR_USAGE, d unchanged,
 * when PER_SECOND is asked and a duration is unknown. */
jp_err jp_diff_set_norm(jp_diff *d, jp_diff_norm norm, jp_error *err);

/* The factor that normalises the old side when comparing samples
 * (by_value false) or values: PER_SAMPLE depends on the measure. */
double jp_diff_scale_for(const jp_diff *d, bool by_value);

/* The old side laid over a tree f built from d->prof (forward or reversed,
 * with or without threads): a new tree of the old side built the same way
 * (jp_flame_free), and in *map (a new array of f->count, free()) the node
 * of it that has the same path as each node of f. Every node of f has one:
 * d->prof holds a (zero) cell for every stack of either side. */
jp_flame *jp_diff_old_tree(jp_diff *d, const jp_flame *f, uint32_t **map);

/* Builds d->tree and the per-node old totals (idempotent). */
void jp_diff_tree(jp_diff *d);

/* One row of the table of changes: a frame's self and total on both sides
 * (old normalised), recursion counted once, like the top table. */
typedef struct jp_diff_row {
    uint32_t frame; /* index into d->prof */
    double old_self, old_total;
    uint64_t new_self, new_total;
} jp_diff_row;

/* The frames whose self or total changed, sorted by the size of the change
 * of self (then total, then name), at most `limit` (0 = all). *rows is a new
 * array (free()); returns how many. */
size_t jp_diff_top(const jp_diff *d, size_t limit, jp_diff_row **rows);

/* The same table under node `root` of a tree f and its old tree (from
 * jp_diff_old_tree), in samples or values, old side normalised with
 * jp_diff_scale_for(d, by_value): the zoomed and reversed views' table. */
size_t jp_diff_top_under(const jp_diff *d, const jp_flame *f, const jp_flame *old,
                         const uint32_t *map, uint32_t root, bool by_value, jp_diff_row **rows);

#endif
