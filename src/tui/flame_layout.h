/* flame_layout.h - where each flame bar goes on a row of a given width.
 *
 * Pure over a flame tree: the subtree of a zoom root is laid out icicle
 * style, one row per depth below the root, each node a bar whose width is
 * its share of the root (samples or value). Bars narrower than one column
 * are left out with their subtrees and counted in `hidden`.
 *
 * Ownership: caller storage; tui_flame_layout_init() /
 * tui_flame_layout_cleanup(); the layout keeps no pointer to the tree. Not
 * thread-safe. */
#ifndef JP_TUI_FLAME_LAYOUT_H
#define JP_TUI_FLAME_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/flame.h"

typedef struct tui_bar {
    uint32_t node;
    uint32_t depth; /* rows below the zoom root (root = 0) */
    int x, w;       /* columns; w >= 1 */
} tui_bar;

typedef struct tui_flame_layout {
    tui_bar *bars; /* sorted by depth, then x */
    size_t nbars, bars_cap;
    size_t *row_start; /* bars of depth d are [row_start[d], row_start[d + 1]) */
    size_t rows_cap;
    uint32_t depths; /* rows with bars */
    int32_t *bar_of; /* node -> bar index, -1 when not laid out */
    size_t bar_of_cap;
    uint64_t hidden; /* nodes too narrow to draw (subtrees not counted) */
    int width;
    uint32_t root;
} tui_flame_layout;

void tui_flame_layout_init(tui_flame_layout *l);
void tui_flame_layout_cleanup(tui_flame_layout *l);

/* Lays out the subtree of `root` at `width` columns. A root whose total is
 * zero gives no bars at all. */
void tui_flame_layout_build(tui_flame_layout *l, const jp_flame *f, uint32_t root, bool by_value,
                            int width);

/* The bar index of a node, or -1 when it has no bar. */
static inline int tui_flame_layout_find(const tui_flame_layout *l, uint32_t node)
{
    return node < l->bar_of_cap ? l->bar_of[node] : -1;
}

#endif
