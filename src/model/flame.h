/* flame.h - the flame tree of one profile kind, its top table and search.
 *
 * A flame tree merges stacks root first: node = (parent, frame). The tree
 * carries both counts so a view can switch between samples and value without
 * rebuilding. Children are kept sorted by total value, descending, then name.
 *
 * Ownership: jp_flame_build*() return a heap tree freed by jp_flame_free();
 * the tree borrows the profile, which must outlive it. Not thread-safe. */
#ifndef JP_MODEL_FLAME_H
#define JP_MODEL_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

#define JP_FLAME_NONE UINT32_MAX
/* node.frame / jp_top_row.frame of cells that carry no thread in a tree
 * built with threads: not a profile frame index; name it with
 * jp_flame_frame_name(). */
#define JP_FLAME_UNKNOWN_THREAD (UINT32_MAX - 1)

typedef struct jp_flame_node {
    uint32_t frame;        /* profile frame index; JP_FLAME_NONE for the root */
    uint32_t parent;       /* JP_FLAME_NONE for the root */
    uint32_t first_child;  /* JP_FLAME_NONE when a leaf */
    uint32_t next_sibling; /* JP_FLAME_NONE when last */
    uint32_t depth;        /* root = 0 */
    uint64_t self_samples, total_samples;
    uint64_t self_value, total_value;
} jp_flame_node;

typedef struct jp_flame {
    const jp_profile *prof;
    jp_kind kind;
    bool threads;         /* thread names form the first level */
    bool reversed;        /* callers tree: root's children are the focus frame */
    uint32_t focus_frame; /* the frame a reversed tree is about */
    jp_flame_node *nodes; /* nodes[0] is the root ("all") */
    size_t count, cap;
    uint32_t max_depth;
} jp_flame;

/* Builds the tree of kind k. With threads, each stack is prefixed by its
 * thread (cells without a thread go under "[unknown thread]"). */
jp_flame *jp_flame_build(const jp_profile *p, jp_kind k, bool threads);

/* Builds the callers tree of `frame`: for each stack containing the frame,
 * the path from its leaf-most occurrence back to the root, focus frame first.
 * Self counts of a reversed tree are the stacks that end at the path's end. */
jp_flame *jp_flame_build_reverse(const jp_profile *p, jp_kind k, uint32_t frame, bool threads);

void jp_flame_free(jp_flame *f);

/* Printed name of a node ("all" for the root). */
const char *jp_flame_node_name(const jp_flame *f, uint32_t node, size_t *len);

/* Printed name of a frame value found in a node or top row, including
 * JP_FLAME_UNKNOWN_THREAD ("[unknown thread]") and JP_FLAME_NONE ("all"). */
const char *jp_flame_frame_name(const jp_flame *f, uint32_t frame, size_t *len);

/* Re-orders every child list by total samples or total value (descending),
 * then name; trees are built ordered by value. */
void jp_flame_sort_by(jp_flame *f, bool by_value);

/* Total of a node in samples or value. */
static inline uint64_t jp_flame_total(const jp_flame *f, uint32_t node, bool value)
{
    return value ? f->nodes[node].total_value : f->nodes[node].total_samples;
}
static inline uint64_t jp_flame_self(const jp_flame *f, uint32_t node, bool value)
{
    return value ? f->nodes[node].self_value : f->nodes[node].self_samples;
}

/* The node after n in a pre-order walk of root's subtree (n first, then its
 * children, each with its subtree), JP_FLAME_NONE after the last. */
static inline uint32_t jp_flame_next_preorder(const jp_flame *f, uint32_t n, uint32_t root)
{
    if (f->nodes[n].first_child != JP_FLAME_NONE)
        return f->nodes[n].first_child;
    while (n != root && f->nodes[n].next_sibling == JP_FLAME_NONE)
        n = f->nodes[n].parent;
    return n == root ? JP_FLAME_NONE : f->nodes[n].next_sibling;
}

/* ---- top table ---- */
typedef struct jp_top_row {
    uint32_t frame;
    uint64_t self_samples, total_samples;
    uint64_t self_value, total_value;
} jp_top_row;

/* Self and total per frame over the subtree of `root` (a frame counted once
 * per stack even when recursive), sorted by self (value or samples,
 * descending), then total, then name. *rows is heap memory for the caller
 * to free(). Returns the number of rows. */
size_t jp_flame_top(const jp_flame *f, uint32_t root, bool by_value, jp_top_row **rows);

/* ---- search ---- */
/* Marks nodes in the subtree of `root` whose name matches the POSIX extended
 * regex `pattern` (matches[node] = 1, array of f->count bytes owned by the
 * caller) and returns in *share the total (samples or value) of stacks
 * through any match, each stack counted once. Returns the number of matching
 * nodes, or -1 when the regex does not compile (errbuf gets the reason). */
long jp_flame_search(const jp_flame *f, uint32_t root, const char *pattern, bool by_value,
                     uint8_t *matches, uint64_t *share, char *errbuf, size_t errlen);

#endif
