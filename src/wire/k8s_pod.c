#include "wire/k8s_pod.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void jp_pod_cleanup(jp_pod *p)
{
    char **s[] = {&p->uid,        &p->name,      &p->ns,
                  &p->node,       &p->phase,     &p->resource_version,
                  &p->label_name, &p->label_app, &p->label_hash,
                  &p->owner_kind, &p->owner_name};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        free(*s[i]);
    for (size_t i = 0; i < p->nann; i++) {
        free((char *)p->ann[i].key);
        free((char *)p->ann[i].value);
    }
    for (size_t i = 0; i < p->ncontainers; i++) {
        free(p->containers[i].name);
        free(p->containers[i].id);
    }
    memset(p, 0, sizeof *p);
}

void jp_pod_move(jp_pod *dst, jp_pod *src)
{
    *dst = *src;
    memset(src, 0, sizeof *src);
}

/* ---- decoding ---- */

typedef struct dec {
    jp_error *err;
    char path[96]; /* "items[3]" etc., prefixed to messages */
} dec;

static jp_err dec_fail(dec *d, jp_err code, const char *field, const char *what)
{
    return jp_error_set(d->err, code, "%s%s%s: %s", d->path, d->path[0] ? "." : "", field, what);
}

/* Copies an optional string member; absent or null leaves *out NULL. */
static jp_err dec_str(dec *d, json_t *obj, const char *key, const char *field, char **out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return JP_OK;
    if (!json_is_string(v))
        return dec_fail(d, JP_ERR_FORMAT, field, "must be a string");
    size_t n = json_string_length(v);
    if (n > JP_POD_STR_MAX)
        return dec_fail(d, JP_ERR_LIMIT, field, "string longer than the limit");
    if (memchr(json_string_value(v), '\0', n))
        return dec_fail(d, JP_ERR_FORMAT, field, "contains a NUL byte");
    free(*out);
    *out = jp_xstrndup(json_string_value(v), n);
    return JP_OK;
}

static jp_err dec_labels(dec *d, json_t *meta, jp_pod *p)
{
    json_t *l = json_object_get(meta, "labels");
    if (!l || json_is_null(l))
        return JP_OK;
    if (!json_is_object(l))
        return dec_fail(d, JP_ERR_FORMAT, "metadata.labels", "must be an object");
    jp_err rc;
    if ((rc = dec_str(d, l, "app.kubernetes.io/name", "metadata.labels", &p->label_name)) ||
        (rc = dec_str(d, l, "app", "metadata.labels", &p->label_app)) ||
        (rc = dec_str(d, l, "pod-template-hash", "metadata.labels", &p->label_hash)))
        return rc;
    return JP_OK;
}

static jp_err dec_annotations(dec *d, json_t *meta, jp_pod *p)
{
    json_t *a = json_object_get(meta, "annotations");
    if (!a || json_is_null(a))
        return JP_OK;
    if (!json_is_object(a))
        return dec_fail(d, JP_ERR_FORMAT, "metadata.annotations", "must be an object");
    const char *key;
    json_t *v;
    json_object_foreach(a, key, v)
    {
        if (strncmp(key, "jprof.io/", 9) != 0)
            continue; /* others are none of our business, whatever their size */
        if (p->nann == JP_POD_ANN_MAX)
            return dec_fail(d, JP_ERR_LIMIT, "metadata.annotations", "too many jprof.io/ keys");
        if (!json_is_string(v))
            return dec_fail(d, JP_ERR_FORMAT, "metadata.annotations", "values must be strings");
        size_t kn = strlen(key), vn = json_string_length(v);
        if (kn > 128 || vn > JP_POD_STR_MAX)
            return dec_fail(d, JP_ERR_LIMIT, "metadata.annotations", "value longer than the limit");
        p->ann[p->nann].key = jp_xstrndup(key, kn);
        p->ann[p->nann].value = jp_xstrndup(json_string_value(v), vn);
        p->nann++;
    }
    return JP_OK;
}

static jp_err dec_owner(dec *d, json_t *meta, jp_pod *p)
{
    json_t *o = json_object_get(meta, "ownerReferences");
    if (!o || json_is_null(o))
        return JP_OK;
    if (!json_is_array(o))
        return dec_fail(d, JP_ERR_FORMAT, "metadata.ownerReferences", "must be an array");
    size_t i;
    json_t *r;
    json_array_foreach(o, i, r)
    {
        if (i >= 64)
            break;
        if (!json_is_object(r))
            return dec_fail(d, JP_ERR_FORMAT, "metadata.ownerReferences", "must hold objects");
        bool controller = json_is_true(json_object_get(r, "controller"));
        if (p->owner_kind && !controller)
            continue; /* the controller reference wins over others */
        jp_err rc;
        if ((rc = dec_str(d, r, "kind", "metadata.ownerReferences.kind", &p->owner_kind)) ||
            (rc = dec_str(d, r, "name", "metadata.ownerReferences.name", &p->owner_name)))
            return rc;
        if (controller)
            break;
    }
    return JP_OK;
}

static jp_err dec_statuses(dec *d, json_t *status, const char *key, jp_pod *p)
{
    json_t *a = json_object_get(status, key);
    if (!a || json_is_null(a))
        return JP_OK;
    if (!json_is_array(a))
        return dec_fail(d, JP_ERR_FORMAT, key, "must be an array");
    size_t i;
    json_t *c;
    json_array_foreach(a, i, c)
    {
        if (p->ncontainers == JP_POD_CONTAINERS_MAX)
            return dec_fail(d, JP_ERR_LIMIT, key, "more containers than the limit");
        if (!json_is_object(c))
            return dec_fail(d, JP_ERR_FORMAT, key, "must hold objects");
        jp_pod_container *pc = &p->containers[p->ncontainers++];
        char *id = NULL;
        jp_err rc;
        if ((rc = dec_str(d, c, "name", key, &pc->name)) ||
            (rc = dec_str(d, c, "containerID", key, &id))) {
            free(id);
            return rc;
        }
        if (id) {
            pc->id = jp_xstrdup(jp_pod_container_id_strip(id));
            free(id);
        }
    }
    return JP_OK;
}

static jp_err dec_pod(dec *d, json_t *o, jp_pod *p)
{
    if (!json_is_object(o))
        return dec_fail(d, JP_ERR_FORMAT, "", "a pod must be an object");
    json_t *meta = json_object_get(o, "metadata");
    if (!json_is_object(meta))
        return dec_fail(d, JP_ERR_FORMAT, "metadata", "required object is missing");
    json_t *spec = json_object_get(o, "spec");
    json_t *status = json_object_get(o, "status");
    jp_err rc;
    if ((rc = dec_str(d, meta, "uid", "metadata.uid", &p->uid)) ||
        (rc = dec_str(d, meta, "name", "metadata.name", &p->name)) ||
        (rc = dec_str(d, meta, "namespace", "metadata.namespace", &p->ns)) ||
        (rc = dec_str(d, meta, "resourceVersion", "metadata.resourceVersion",
                      &p->resource_version)) ||
        (rc = dec_labels(d, meta, p)) || (rc = dec_annotations(d, meta, p)) ||
        (rc = dec_owner(d, meta, p)))
        return rc;
    if (!p->uid || !p->name || !p->ns)
        return dec_fail(d, JP_ERR_FORMAT, "metadata", "uid, name and namespace are required");
    if (json_is_object(spec) && (rc = dec_str(d, spec, "nodeName", "spec.nodeName", &p->node)))
        return rc;
    json_t *sc = json_is_object(spec) ? json_object_get(spec, "securityContext") : NULL;
    p->sets_user = json_is_object(sc) && (json_is_integer(json_object_get(sc, "runAsUser")) ||
                                          json_is_true(json_object_get(sc, "runAsNonRoot")));
    if (json_is_object(status) && ((rc = dec_str(d, status, "phase", "status.phase", &p->phase)) ||
                                   (rc = dec_statuses(d, status, "containerStatuses", p)) ||
                                   (rc = dec_statuses(d, status, "initContainerStatuses", p))))
        return rc;
    return JP_OK;
}

static json_t *load(dec *d, const char *text, size_t len, jp_err *rc)
{
    if (len > JP_K8S_BODY_MAX) {
        *rc = jp_error_set(d->err, JP_ERR_LIMIT, "response of %zu bytes exceeds the %u byte limit",
                           len, JP_K8S_BODY_MAX);
        return NULL;
    }
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        *rc = jp_error_set(d->err, JP_ERR_FORMAT, "not JSON: line %d column %d: %s", je.line,
                           je.column, je.text);
    else if (!json_is_object(root)) {
        json_decref(root);
        root = NULL;
        *rc = jp_error_set(d->err, JP_ERR_FORMAT, "expected a JSON object");
    }
    return root;
}

void jp_pod_list_init(jp_pod_list *l)
{
    memset(l, 0, sizeof *l);
}

void jp_pod_list_cleanup(jp_pod_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        jp_pod_cleanup(&l->items[i]);
    free(l->items);
    free(l->resource_version);
    memset(l, 0, sizeof *l);
}

jp_err jp_pod_list_parse(const char *text, size_t len, jp_pod_list *out, jp_error *err)
{
    dec d = {.err = err};
    jp_err rc = JP_OK;
    json_t *root = load(&d, text, len, &rc);
    if (!root)
        return rc;
    json_t *meta = json_object_get(root, "metadata");
    json_t *items = json_object_get(root, "items");
    if (json_is_object(meta) && (rc = dec_str(&d, meta, "resourceVersion",
                                              "metadata.resourceVersion", &out->resource_version)))
        goto out;
    if (!json_is_array(items) && !json_is_null(items)) {
        rc = dec_fail(&d, JP_ERR_FORMAT, "items", "must be an array");
        goto out;
    }
    if (json_array_size(items) > JP_POD_LIST_MAX) {
        rc = dec_fail(&d, JP_ERR_LIMIT, "items", "more pods than the limit");
        goto out;
    }
    for (size_t i = 0; i < json_array_size(items); i++) {
        snprintf(d.path, sizeof d.path, "items[%zu]", i);
        out->items = jp_xgrow(out->items, &out->cap, out->count + 1, sizeof *out->items);
        jp_pod *p = &out->items[out->count];
        memset(p, 0, sizeof *p);
        out->count++;
        if ((rc = dec_pod(&d, json_array_get(items, i), p)))
            goto out;
    }
out:
    json_decref(root);
    return rc;
}

static jp_err dec_error_event(dec *d, json_t *obj, jp_pod_watch_event *ev)
{
    json_t *code = json_is_object(obj) ? json_object_get(obj, "code") : NULL;
    json_t *msg = json_is_object(obj) ? json_object_get(obj, "message") : NULL;
    ev->code = json_is_integer(code) ? (int)json_integer_value(code) : 0;
    snprintf(ev->message, sizeof ev->message, "%.200s",
             json_is_string(msg) ? json_string_value(msg) : "");
    ev->type = ev->code == 410 ? JP_POD_WATCH_GONE : JP_POD_WATCH_ERROR;
    return JP_OK;
}

jp_err jp_pod_watch_event_parse(const char *line, size_t len, jp_pod_watch_event *ev, jp_error *err)
{
    memset(ev, 0, sizeof *ev);
    dec d = {.err = err};
    jp_err rc = JP_OK;
    if (len > JP_K8S_LINE_MAX)
        return jp_error_set(err, JP_ERR_LIMIT, "watch event of %zu bytes exceeds the limit", len);
    json_t *root = load(&d, line, len, &rc);
    if (!root)
        return rc;
    json_t *type = json_object_get(root, "type");
    json_t *obj = json_object_get(root, "object");
    const char *t = json_is_string(type) ? json_string_value(type) : "";
    if (strcmp(t, "ERROR") == 0) {
        rc = dec_error_event(&d, obj, ev);
        goto out;
    }
    static const struct {
        const char *name;
        jp_pod_watch_type type;
    } types[] = {{"ADDED", JP_POD_WATCH_ADDED},
                 {"MODIFIED", JP_POD_WATCH_MODIFIED},
                 {"DELETED", JP_POD_WATCH_DELETED},
                 {"BOOKMARK", JP_POD_WATCH_BOOKMARK}};
    size_t i = 0;
    while (i < sizeof types / sizeof types[0] && strcmp(types[i].name, t) != 0)
        i++;
    if (i == sizeof types / sizeof types[0]) {
        rc = dec_fail(&d, JP_ERR_FORMAT, "type", "unknown watch event type");
        goto out;
    }
    ev->type = types[i].type;
    snprintf(d.path, sizeof d.path, "object");
    if (ev->type == JP_POD_WATCH_BOOKMARK) {
        json_t *meta = json_is_object(obj) ? json_object_get(obj, "metadata") : NULL;
        if (!json_is_object(meta))
            rc = dec_fail(&d, JP_ERR_FORMAT, "metadata", "required object is missing");
        else
            rc = dec_str(&d, meta, "resourceVersion", "metadata.resourceVersion",
                         &ev->pod.resource_version);
        goto out;
    }
    rc = dec_pod(&d, obj, &ev->pod);
out:
    json_decref(root);
    return rc;
}

/* ---- naming ---- */

static bool hash_alphabet(const char *s, size_t n)
{
    /* k8s.io/apimachinery rand.SafeEncodeString: no vowels, no 0, 1, 3 */
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    if (n == 0 || n > 10)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr(alphabet, s[i]))
            return false;
    return true;
}

void jp_pod_rs_to_deployment(const char *rs, const char *hash, char *out, size_t len)
{
    size_t n = strlen(rs);
    const char *dash = strrchr(rs, '-');
    if (hash && *hash) {
        size_t h = strlen(hash);
        if (n > h + 1 && rs[n - h - 1] == '-' && strcmp(rs + n - h, hash) == 0) {
            snprintf(out, len, "%.*s", (int)(n - h - 1), rs);
            return;
        }
    }
    if (dash && dash != rs && hash_alphabet(dash + 1, strlen(dash + 1))) {
        snprintf(out, len, "%.*s", (int)(dash - rs), rs);
        return;
    }
    snprintf(out, len, "%s", rs);
}

const char *jp_pod_service(const jp_pod *p, char *buf, size_t len, char *workload, size_t wlen)
{
    char wl[JP_POD_STR_MAX + 32] = "";
    char wname[JP_POD_STR_MAX + 1] = "";
    if (p->owner_kind && p->owner_name) {
        if (strcmp(p->owner_kind, "ReplicaSet") == 0) {
            jp_pod_rs_to_deployment(p->owner_name, p->label_hash, wname, sizeof wname);
            snprintf(wl, sizeof wl, "Deployment/%s", wname);
        } else {
            snprintf(wname, sizeof wname, "%s", p->owner_name);
            snprintf(wl, sizeof wl, "%s/%s", p->owner_kind, p->owner_name);
        }
    }
    if (workload)
        snprintf(workload, wlen, "%s", wl);
    const char *svc = p->label_name  ? p->label_name
                      : p->label_app ? p->label_app
                      : wname[0]     ? wname
                      : p->name      ? p->name
                                     : "";
    snprintf(buf, len, "%s", svc);
    return buf;
}

static char *dup0(const char *s)
{
    return s ? jp_xstrdup(s) : NULL;
}

void jp_pod_copy(jp_pod *dst, const jp_pod *src)
{
    memset(dst, 0, sizeof *dst);
    dst->uid = dup0(src->uid);
    dst->name = dup0(src->name);
    dst->ns = dup0(src->ns);
    dst->node = dup0(src->node);
    dst->phase = dup0(src->phase);
    dst->resource_version = dup0(src->resource_version);
    dst->label_name = dup0(src->label_name);
    dst->label_app = dup0(src->label_app);
    dst->label_hash = dup0(src->label_hash);
    dst->owner_kind = dup0(src->owner_kind);
    dst->owner_name = dup0(src->owner_name);
    for (size_t i = 0; i < src->nann; i++) {
        dst->ann[i].key = dup0(src->ann[i].key);
        dst->ann[i].value = dup0(src->ann[i].value);
    }
    dst->nann = src->nann;
    for (size_t i = 0; i < src->ncontainers; i++) {
        dst->containers[i].name = dup0(src->containers[i].name);
        dst->containers[i].id = dup0(src->containers[i].id);
    }
    dst->ncontainers = src->ncontainers;
    dst->sets_user = src->sets_user;
}

const char *jp_pod_container_id_strip(const char *s)
{
    const char *p = strstr(s, "://");
    return p ? p + 3 : s;
}
