#include "kube/kube_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KUBE_SELECTOR_MAX 2048

static jp_err get_pods(const kube_opts *o, const char *flag, const char *value, jp_pod_list *out,
                       jp_error *err)
{
    const char *args[] = {"get", "pods", flag, value, "-o", "json", NULL};
    jp_strbuf sb;
    jp_strbuf_init(&sb, KUBE_OUTPUT_MAX);
    jp_err rc = kube_run(o, args, &sb, err);
    if (rc == JP_OK) {
        rc = jp_pod_list_parse(sb.data ? sb.data : "", sb.len, out, err);
        if (rc != JP_OK)
            jp_error_prefix(err, "kubectl get pods %s %s: ", flag, value);
    }
    jp_strbuf_cleanup(&sb);
    return rc;
}

/* Label keys and values as Kubernetes allows them; anything else in a
 * selector is refused rather than passed on. */
static bool label_ok(const char *s)
{
    if (!*s || strlen(s) > 316)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.' || *s == '/'))
            return false;
    return true;
}

/* spec.selector of a Service as "k=v,k=v"; 0 when it has none, 1 when
 * found, -1 on malformed input (err set). */
static int service_selector(const char *text, size_t len, const char *svc, char *buf, size_t blen,
                            jp_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root) {
        jp_error_set(err, JP_ERR_FORMAT, "service %s: not JSON: line %d: %s", svc, je.line,
                     je.text);
        return -1;
    }
    json_t *sel = json_object_get(json_object_get(root, "spec"), "selector");
    int found = 0;
    size_t off = 0;
    buf[0] = '\0';
    if (json_is_object(sel) && json_object_size(sel) > 0) {
        const char *k;
        json_t *v;
        found = 1;
        json_object_foreach(sel, k, v)
        {
            const char *s = json_string_value(v);
            if (!s || !label_ok(k) || (*s && !label_ok(s))) {
                jp_error_set(err, JP_ERR_FORMAT, "service %s: spec.selector.%.64s: not a label",
                             svc, k);
                found = -1;
                break;
            }
            int n = snprintf(buf + off, blen - off, "%s%s=%s", off ? "," : "", k, s);
            if (n < 0 || (size_t)n >= blen - off) {
                jp_error_set(err, JP_ERR_LIMIT, "service %s: selector longer than %zu bytes", svc,
                             blen);
                found = -1;
                break;
            }
            off += (size_t)n;
        }
    }
    json_decref(root);
    return found;
}

jp_err kube_pods_for_service(const kube_opts *o, const char *service, jp_pod_list *out,
                             jp_error *err)
{
    if (!label_ok(service))
        return jp_error_set(err, JP_ERR_USAGE, "service name \"%.64s\" is not valid", service);
    const char *args[] = {"get", "service", service, "-o", "json", NULL};
    jp_strbuf sb;
    jp_strbuf_init(&sb, KUBE_OUTPUT_MAX);
    jp_error e2;
    jp_error_init(&e2);
    char sel[KUBE_SELECTOR_MAX];
    int found = 0;
    jp_err rc = kube_run(o, args, &sb, &e2);
    if (rc == JP_OK)
        found = service_selector(sb.data ? sb.data : "", sb.len, service, sel, sizeof sel, err);
    else if (rc != JP_ERR_NOT_FOUND) {
        jp_strbuf_cleanup(&sb);
        *err = e2;
        return rc;
    }
    jp_strbuf_cleanup(&sb);
    if (found < 0)
        return err->code;
    if (found > 0) {
        rc = get_pods(o, "-l", sel, out, err);
        if (rc == JP_OK && out->count == 0)
            return jp_error_set(err, JP_ERR_NOT_FOUND, "service %s: no pod matches its selector %s",
                                service, sel);
        return rc;
    }
    /* no service (or one without a selector): the labels the agent names
     * services by (wire/k8s_pod.h) */
    static const char *const labels[] = {"app.kubernetes.io/name", "app"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(sel, sizeof sel, "%s=%s", labels[i], service);
        rc = get_pods(o, "-l", sel, out, err);
        if (rc != JP_OK || out->count)
            return rc;
    }
    return jp_error_set(err, JP_ERR_NOT_FOUND,
                        "no service %s with a selector, and no pod labelled "
                        "app.kubernetes.io/name=%s or app=%s%s%s",
                        service, service, service, o->ns ? " in namespace " : "",
                        o->ns ? o->ns : "");
}

jp_err kube_pod_get(const kube_opts *o, const char *pod, jp_pod_list *out, jp_error *err)
{
    if (!label_ok(pod) || strchr(pod, '/'))
        return jp_error_set(err, JP_ERR_USAGE, "pod name \"%.64s\" is not valid", pod);
    char fs[320];
    snprintf(fs, sizeof fs, "metadata.name=%s", pod);
    jp_err rc = get_pods(o, "--field-selector", fs, out, err);
    if (rc == JP_OK && out->count == 0)
        return jp_error_set(err, JP_ERR_NOT_FOUND, "no pod %s%s%s", pod,
                            o->ns ? " in namespace " : "", o->ns ? o->ns : "");
    return rc;
}
