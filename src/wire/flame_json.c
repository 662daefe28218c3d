#include "wire/flame_json.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

json_t *jp_json_string(const char *s, size_t len)
{
    json_t *j = json_stringn(s, len);
    if (j)
        return j;
    /* jansson refuses invalid UTF-8; keep the name readable instead. */
    char *copy = jp_xmalloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        copy[i] = s[i];
        if ((unsigned char)s[i] >= 0x80 || s[i] == '\0')
            copy[i] = '?';
    }
    copy[len] = '\0';
    j = json_stringn(copy, len);
    free(copy);
    return j ? j : json_string("?");
}

/* The old side of a comparison, per node (NULL: a plain tree). */
typedef struct old_side {
    const uint64_t *total, *self;
    double scale;
} old_side;

/* A baseline figure: an integer as the server's diff answers it when not
 * scaled (--normalize none), else the normalised value. */
static json_t *base_value(uint64_t v, double scale)
{
    return scale == 1.0 ? json_integer((json_int_t)v) : json_real((double)v * scale);
}

static json_t *node_json(const jp_flame *f, uint32_t n, bool by_value, const old_side *old,
                         json_t **children)
{
    size_t len;
    const char *name = jp_flame_node_name(f, n, &len);
    json_t *o = json_object();
    json_object_set_new(o, "name", jp_json_string(name, len));
    uint32_t frame = f->nodes[n].frame;
    if (frame != JP_FLAME_NONE) {
        /* Indexes past the profile's frames mark cells without a thread. */
        jp_frame_kind k = frame < f->prof->nframes ? jp_frame_primary_kind(&f->prof->frames[frame])
                                                   : JP_FRAME_THREAD;
        json_object_set_new(o, "type", json_string(jp_frame_kind_name(k)));
    }
    json_object_set_new(o, "self", json_integer((json_int_t)jp_flame_self(f, n, by_value)));
    json_object_set_new(o, "total", json_integer((json_int_t)jp_flame_total(f, n, by_value)));
    if (old) { /* the names of jprof-server's /api/v1/flamegraph/diff */
        json_object_set_new(o, "base_self", base_value(old->self[n], old->scale));
        json_object_set_new(o, "base_total", base_value(old->total[n], old->scale));
    }
    *children = json_array();
    json_object_set_new(o, "children", *children);
    return o;
}

static json_t *tree_json(const jp_flame *f, uint32_t root, bool by_value, const old_side *old)
{
    if (!f || root >= f->count)
        return json_object();
    /* Pre-order walk along the tree's links; open[d] is the children array
     * of the last node seen at relative depth d, i.e. of the parent of the
     * next node at depth d + 1. */
    uint32_t base = f->nodes[root].depth;
    size_t nopen = (size_t)f->max_depth - base + 2;
    // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
    json_t **open = jp_xcalloc(nopen, sizeof *open);
    json_t *top = node_json(f, root, by_value, old, &open[0]);
    uint32_t n = f->nodes[root].first_child;
    while (n != JP_FLAME_NONE) {
        uint32_t d = f->nodes[n].depth - base;
        if (d >= nopen) /* max_depth is a promise of flame.c; do not trust it blindly */
            // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
            open = jp_xgrow(open, &nopen, (size_t)d + 1, sizeof *open);
        json_t *kids;
        json_array_append_new(open[d - 1], node_json(f, n, by_value, old, &kids));
        open[d] = kids;
        n = jp_flame_next_preorder(f, n, root);
    }
    free(open);
    return top;
}

json_t *jp_flame_json(const jp_flame *f, uint32_t root, bool by_value)
{
    return tree_json(f, root, by_value, NULL);
}

json_t *jp_flame_diff_json(jp_diff *d)
{
    jp_diff_tree(d);
    old_side old = {d->node_old_total, d->node_old_self, d->old_scale};
    return tree_json(d->tree, 0, d->by_value, &old);
}
