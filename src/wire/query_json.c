#include "wire/query_json.h"

#include <string.h>

#include "base/xalloc.h"

const char *jp_query_str(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

long long jp_query_int(const json_t *obj, const char *key, long long dflt)
{
    const json_t *v = json_object_get(obj, key);
    if (json_is_integer(v))
        return (long long)json_integer_value(v);
    if (json_is_real(v))
        return (long long)json_real_value(v);
    return dflt;
}

double jp_query_num(const json_t *obj, const char *key, double dflt)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

const char *jp_query_error_message(const json_t *answer)
{
    return jp_query_str(json_object_get(answer, "error"), "message");
}

/* The server keeps printed names only; a Java frame prints as
 * "pkg.Class.method", a native one as a bare symbol. The guess only picks
 * colours and how a bar label is shortened. */
static jp_frame_kind guess_kind(const char *name, size_t len)
{
    if (!len || name[0] == '[')
        return JP_FRAME_UNKNOWN;
    bool dot = false;
    for (size_t i = 0; i < len; i++) {
        if (name[i] == ' ' || name[i] == '/' || name[i] == ':')
            return JP_FRAME_NATIVE;
        dot |= name[i] == '.';
    }
    return dot && name[len - 1] != '.' ? JP_FRAME_JIT : JP_FRAME_NATIVE;
}

static uint64_t node_count(const json_t *n, const char *key)
{
    long long v = jp_query_int(n, key, 0);
    return v > 0 ? (uint64_t)v : 0;
}

/* One level of the walk: the node, its frame, and the next child to visit. */
typedef struct walk {
    const json_t *node;
    size_t next;
    uint64_t children_total;
} walk;

typedef struct fold {
    jp_profile *p;
    jp_kind k;
    bool by_value;
    const char *kself, *ktotal; /* the node's fields read */
    uint32_t *path;             /* frame indexes, root first (the "all" node has none) */
    uint32_t omitted;
} fold;

static void fold_add(fold *f, size_t depth, uint64_t amount)
{
    if (!amount || !depth)
        return; /* the root's own self is nothing: every sample has a frame */
    uint32_t st = jp_profile_stack(f->p, f->path, depth, false);
    jp_profile_add(f->p, f->k, st, JP_NO_THREAD, f->by_value ? 0 : amount, f->by_value ? 0 : amount,
                   f->by_value ? amount : 0);
}

/* Leaves node w at `depth`: its self, then what its cut children carried. */
static void fold_leave(fold *f, const walk *w, size_t depth)
{
    fold_add(f, depth, node_count(w->node, f->kself));
    uint64_t total = node_count(w->node, f->ktotal), self = node_count(w->node, f->kself);
    if (total > self + w->children_total) {
        f->path[depth] = f->omitted;
        fold_add(f, depth + 1, total - self - w->children_total);
    }
}

jp_err jp_query_flame_add(jp_profile *p, jp_kind k, const json_t *answer, bool by_value,
                          jp_error *err)
{
    return jp_query_flame_add_side(p, k, answer, by_value, false, err);
}

jp_err jp_query_flame_add_side(jp_profile *p, jp_kind k, const json_t *answer, bool by_value,
                               bool base, jp_error *err)
{
    const json_t *root = json_object_get(answer, "tree");
    if (!json_is_object(root))
        return jp_error_set(err, JP_ERR_FORMAT, "the flamegraph answer has no tree");
    fold f = {p,
              k,
              by_value,
              base ? "base_self" : "self",
              base ? "base_total" : "total",
              jp_xcalloc(JP_QUERY_MAX_DEPTH + 2, sizeof(uint32_t)),
              0};
    f.omitted = jp_profile_frame(p, JP_QUERY_OMITTED, strlen(JP_QUERY_OMITTED), JP_FRAME_UNKNOWN);
    walk *st = jp_xcalloc(JP_QUERY_MAX_DEPTH + 1, sizeof *st);
    size_t sp = 0, nodes = 1;
    jp_err rc = JP_OK;
    st[0] = (walk){root, 0, 0};
    for (;;) {
        const json_t *kids = json_object_get(st[sp].node, "children");
        const json_t *c = json_is_array(kids) ? json_array_get(kids, st[sp].next) : NULL;
        if (!c) {
            fold_leave(&f, &st[sp], sp);
            if (sp == 0)
                break;
            st[sp - 1].children_total += node_count(st[sp].node, f.ktotal);
            sp--;
            continue;
        }
        st[sp].next++;
        const char *name = jp_query_str(c, "name");
        if (!json_is_object(c) || !name)
            continue;
        if (sp + 1 > JP_QUERY_MAX_DEPTH || ++nodes > JP_QUERY_MAX_NODES) {
            rc = jp_error_set(err, JP_ERR_LIMIT,
                              "the flame tree is deeper than %d frames or "
                              "larger than %d nodes",
                              JP_QUERY_MAX_DEPTH, JP_QUERY_MAX_NODES);
            break;
        }
        size_t len = strlen(name);
        if (len > JP_FRAME_NAME_MAX)
            len = JP_FRAME_NAME_MAX;
        f.path[sp] = jp_profile_frame(p, name, len, guess_kind(name, len));
        sp++;
        st[sp] = (walk){c, 0, 0};
    }
    free(st);
    free(f.path);
    return rc;
}
