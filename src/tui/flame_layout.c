#include "tui/flame_layout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void tui_flame_layout_init(tui_flame_layout *l)
{
    memset(l, 0, sizeof *l);
}

void tui_flame_layout_cleanup(tui_flame_layout *l)
{
    free(l->bars);
    free(l->row_start);
    free(l->bar_of);
    memset(l, 0, sizeof *l);
}

typedef struct pending {
    uint32_t node;
    double start; /* offset inside the root, in the chosen measure */
} pending;

static int bar_cmp(const void *pa, const void *pb)
{
    const tui_bar *a = pa, *b = pb;
    if (a->depth != b->depth)
        return a->depth < b->depth ? -1 : 1;
    return (a->x > b->x) - (a->x < b->x);
}

static void add_bar(tui_flame_layout *l, uint32_t node, uint32_t depth, int x, int w)
{
    l->bars = jp_xgrow(l->bars, &l->bars_cap, l->nbars + 1, sizeof *l->bars);
    l->bars[l->nbars++] = (tui_bar){.node = node, .depth = depth, .x = x, .w = w};
}

/* Rounds both edges (not the width) so neighbours never overlap or leave
 * gaps, and the children of a bar never stick out of it. */
static void place(tui_flame_layout *l, const jp_flame *f, bool by_value, double scale,
                  pending **stack, size_t *scap)
{
    size_t top = 0;
    (*stack)[top++] = (pending){.node = l->root, .start = 0};
    uint32_t base = f->nodes[l->root].depth;
    while (top) {
        pending p = (*stack)[--top];
        double t = (double)jp_flame_total(f, p.node, by_value);
        long x0 = lround(p.start * scale), x1 = lround((p.start + t) * scale);
        if (x1 > l->width)
            x1 = l->width;
        if (x1 - x0 < 1) {
            if (t > 0)
                l->hidden++;
            continue;
        }
        add_bar(l, p.node, f->nodes[p.node].depth - base, (int)x0, (int)(x1 - x0));
        double start = p.start;
        for (uint32_t c = f->nodes[p.node].first_child; c != JP_FLAME_NONE;
             c = f->nodes[c].next_sibling) {
            *stack = jp_xgrow(*stack, scap, top + 1, sizeof **stack);
            (*stack)[top++] = (pending){.node = c, .start = start};
            start += (double)jp_flame_total(f, c, by_value);
        }
    }
}

void tui_flame_layout_build(tui_flame_layout *l, const jp_flame *f, uint32_t root, bool by_value,
                            int width)
{
    l->nbars = 0;
    l->depths = 0;
    l->hidden = 0;
    l->width = width < 1 ? 1 : width;
    l->root = root;
    l->bar_of = jp_xgrow(l->bar_of, &l->bar_of_cap, f->count ? f->count : 1, sizeof *l->bar_of);
    memset(l->bar_of, 0xff, l->bar_of_cap * sizeof *l->bar_of);
    uint64_t total = root < f->count ? jp_flame_total(f, root, by_value) : 0;
    if (total > 0) {
        size_t scap = 64;
        pending *stack = jp_xreallocarray(NULL, scap, sizeof *stack);
        place(l, f, by_value, (double)l->width / (double)total, &stack, &scap);
        free(stack);
    }
    if (l->nbars > 1)
        qsort(l->bars, l->nbars, sizeof *l->bars, bar_cmp);
    l->depths = l->nbars ? l->bars[l->nbars - 1].depth + 1 : 0;
    l->row_start =
        jp_xgrow(l->row_start, &l->rows_cap, (size_t)l->depths + 1, sizeof *l->row_start);
    size_t i = 0;
    for (uint32_t d = 0; d <= l->depths; d++) {
        while (i < l->nbars && l->bars[i].depth < d)
            i++;
        l->row_start[d] = i;
    }
    for (size_t b = 0; b < l->nbars; b++)
        l->bar_of[l->bars[b].node] = (int32_t)b;
}
