/* pyroscope.c - Pyroscope's series names and labels (see pyroscope.h). */
#include "wire/pyroscope.h"

#include <stdbool.h>
#include <string.h>

#include "base/xalloc.h"
#include "wire/protobuf.h"

enum { PY_NAME_MAX = 1024, PY_LABELS_MAX = 64 };

/* The suffixes Pyroscope's agents give a series name. */
static const char *const py_kinds[] = {
    "cpu",
    "itimer",
    "wall",
    "alloc_objects",
    "alloc_space",
    "inuse_objects",
    "inuse_space",
    "lock_count",
    "lock_duration",
    "mutex_count",
    "mutex_duration",
    "block_count",
    "block_duration",
    "goroutines",
    "alloc",
    "lock",
};

typedef struct py_str {
    const char *s;
    size_t len;
} py_str;

/* The slots a label can fill, in the order of jp_batch_target's strings. */
enum {
    P_SERVICE,
    P_NS,
    P_POD,
    P_HOST,
    P_CONTAINER,
    P_NODE,
    P_CLUSTER,
    P_RT_NAME,
    P_RT_VERSION,
    P_COUNT
};

static int py_slot(const char *k, size_t n)
{
    static const struct {
        const char *key;
        int slot;
    } keys[] = {
        {"service_name", P_SERVICE},
        {"namespace", P_NS},
        {"k8s_namespace_name", P_NS},
        {"pod", P_POD},
        {"k8s_pod_name", P_POD},
        {"instance", P_POD},
        {"hostname", P_HOST},
        {"container", P_CONTAINER},
        {"k8s_container_name", P_CONTAINER},
        {"node", P_NODE},
        {"k8s_node_name", P_NODE},
        {"cluster", P_CLUSTER},
        {"process.runtime.name", P_RT_NAME},
        {"process.runtime.version", P_RT_VERSION},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i].key) == n && !memcmp(keys[i].key, k, n))
            return keys[i].slot;
    return -1;
}

static bool py_clean(const char *s, size_t n, size_t max)
{
    if (!n || n > max)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

/* The labels between the braces: k=v pairs separated by commas. */
static jp_err py_labels(const char *s, size_t n, size_t max, py_str *slots, jp_error *err)
{
    size_t count = 0, i = 0;
    while (i < n) {
        const char *comma = memchr(s + i, ',', n - i);
        size_t end = comma ? (size_t)(comma - s) : n;
        const char *eq = memchr(s + i, '=', end - i);
        if (++count > PY_LABELS_MAX)
            return jp_error_set(err, JP_ERR_LIMIT, "name: more than %d labels", PY_LABELS_MAX);
        size_t kl = eq ? (size_t)(eq - s) - i : 0, vl = eq ? end - (size_t)(eq - s) - 1 : 0;
        if (!eq || !py_clean(s + i, kl, max) || !py_clean(eq + 1, vl, max))
            return jp_error_set(err, JP_ERR_FORMAT,
                                "name: label %zu is not KEY=VALUE (non-empty, no control "
                                "characters, at most %zu bytes each)",
                                count, max);
        int slot = py_slot(s + i, kl);
        if (slot >= 0)
            slots[slot] = (py_str){eq + 1, vl};
        i = end + 1;
    }
    return JP_OK;
}

static char *py_dup(const py_str *v)
{
    return v->s ? jp_xstrndup(v->s, v->len) : NULL;
}

jp_err jp_pyroscope_name(const char *name, const char *default_ns, size_t max_string,
                         jp_batch_target *t, const char **kind_hint, jp_error *err)
{
    size_t n = name ? strlen(name) : 0;
    *kind_hint = "";
    if (!n || n > PY_NAME_MAX)
        return jp_error_set(err, JP_ERR_FORMAT, "query parameter 'name' must have 1 to %d bytes",
                            PY_NAME_MAX);
    const char *brace = memchr(name, '{', n);
    size_t app = brace ? (size_t)(brace - name) : n;
    py_str slots[P_COUNT];
    memset(slots, 0, sizeof slots);
    if (brace) {
        if (name[n - 1] != '}')
            return jp_error_set(err, JP_ERR_FORMAT, "name: labels do not end with '}'");
        jp_err rc = py_labels(brace + 1, n - app - 2, max_string, slots, err);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < sizeof py_kinds / sizeof py_kinds[0]; i++) {
        size_t kl = strlen(py_kinds[i]);
        if (app > kl + 1 && name[app - kl - 1] == '.' &&
            !memcmp(name + app - kl, py_kinds[i], kl)) {
            *kind_hint = py_kinds[i];
            app -= kl + 1;
            break;
        }
    }
    if (!py_clean(name, app, max_string))
        return jp_error_set(err, JP_ERR_FORMAT,
                            "name: the application name is empty, too long or has control "
                            "characters");
    if (!slots[P_SERVICE].s)
        slots[P_SERVICE] = (py_str){name, app};
    t->service = py_dup(&slots[P_SERVICE]);
    t->ns = slots[P_NS].s ? py_dup(&slots[P_NS]) : jp_xstrdup(default_ns ? default_ns : "local");
    py_str pod = slots[P_POD].s ? slots[P_POD] : slots[P_HOST];
    t->pod = pod.s ? py_dup(&pod) : jp_xstrdup("upload");
    t->container = py_dup(&slots[P_CONTAINER]);
    t->node = py_dup(slots[P_NODE].s ? &slots[P_NODE] : &slots[P_HOST]);
    t->cluster = py_dup(&slots[P_CLUSTER]);
    if (slots[P_RT_NAME].s || slots[P_RT_VERSION].s) {
        size_t a = slots[P_RT_NAME].len, b = slots[P_RT_VERSION].len;
        char *jvm = jp_xmalloc(a + b + 2);
        memcpy(jvm, slots[P_RT_NAME].s ? slots[P_RT_NAME].s : "", a);
        jvm[a] = a && b ? ' ' : '\0';
        memcpy(jvm + a + (a && b), slots[P_RT_VERSION].s ? slots[P_RT_VERSION].s : "", b);
        jvm[a + (a && b) + b] = '\0';
        t->jvm = jvm;
    }
    return JP_OK;
}

/* LabelsSnapshot { map<int64, Context> contexts = 1; map<int64, string> strings = 2; }
 * Context { map<int64, int64> labels = 1; }: each map entry a message of
 * key = 1, value = 2. */
static jp_err py_entry(jp_pb_reader *parent, const jp_pb_field *f, bool context, jp_error *err)
{
    jp_pb_reader r, c;
    jp_pb_reader_sub(&r, parent, f, context ? "LabelsSnapshot.contexts" : "LabelsSnapshot.strings");
    jp_pb_field g, h;
    bool more;
    jp_err rc;
    while (!(rc = jp_pb_next(&r, &g, &more, err)) && more) {
        if (g.num == 1 && g.wire != JP_PB_VARINT)
            return jp_pb_wrong_wire(&r, &g, err);
        if (g.num != 2)
            continue;
        if (g.wire != JP_PB_LEN)
            return jp_pb_wrong_wire(&r, &g, err);
        if (!context)
            continue;
        jp_pb_reader_sub(&c, &r, &g, "Context");
        while (!(rc = jp_pb_next(&c, &h, &more, err)) && more)
            if (h.num == 1 && h.wire != JP_PB_LEN)
                return jp_pb_wrong_wire(&c, &h, err);
        if (rc)
            return rc;
    }
    return rc;
}

jp_err jp_pyroscope_labels(const uint8_t *data, size_t len, uint64_t *contexts, uint64_t *strings,
                           jp_error *err)
{
    jp_pb_reader r;
    jp_pb_reader_init(&r, data, len, "LabelsSnapshot");
    jp_pb_field f;
    bool more;
    jp_err rc;
    *contexts = *strings = 0;
    while (!(rc = jp_pb_next(&r, &f, &more, err)) && more) {
        if (f.num != 1 && f.num != 2)
            continue;
        if (f.wire != JP_PB_LEN)
            return jp_pb_wrong_wire(&r, &f, err);
        if ((rc = py_entry(&r, &f, f.num == 1, err)))
            return rc;
        if (f.num == 1)
            (*contexts)++;
        else
            (*strings)++;
    }
    return rc;
}
