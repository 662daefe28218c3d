/* kubectl-jprof enable | disable | profile --for D | status: the jprof.io/
 * annotations of jprof(7), written with kubectl annotate (pods) or kubectl
 * patch (the workload's pod template), read back under the agent's own
 * precedence rules (model/policy.h). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "kubectl-jprof/plugin.h"
#include "model/policy.h"

#define MAX_WINDOW_NS (24LL * 3600 * JP_NS_PER_SEC)

/* The annotations one command writes: key=value, or key- to remove. */
typedef struct ann_set {
    const char *items[4];
    size_t n;
    char until[96], events[160];
} ann_set;

static int build_set(const plugin_args *a, ann_set *s)
{
    memset(s, 0, sizeof *s);
    if (a->events) {
        uint32_t mask;
        char msg[160];
        if (!jp_policy_kinds_parse(a->events, &mask, msg, sizeof msg)) {
            fprintf(stderr, "kubectl-jprof: --events: %s\n", msg);
            return PLUGIN_EXIT_USAGE;
        }
        snprintf(s->events, sizeof s->events, JP_ANN_EVENTS "=%s", a->events);
    }
    if (strcmp(a->cmd, "enable") == 0) {
        s->items[s->n++] = JP_ANN_PROFILE "=continuous";
    } else if (strcmp(a->cmd, "disable") == 0) {
        s->items[s->n++] = JP_ANN_PROFILE "=disabled";
        s->items[s->n++] = JP_ANN_UNTIL "-";
    } else {
        if (a->for_ns <= 0) {
            fprintf(stderr, "kubectl-jprof: profile needs --for DURATION (a window always "
                            "ends; at most 24h)\n");
            return PLUGIN_EXIT_USAGE;
        }
        if (a->for_ns > MAX_WINDOW_NS) {
            fprintf(stderr, "kubectl-jprof: --for: at most 24h (use enable for continuous "
                            "profiling)\n");
            return PLUGIN_EXIT_USAGE;
        }
        char t[64];
        jp_rfc3339_format(jp_time_now_ns() + a->for_ns, t, sizeof t);
        snprintf(s->until, sizeof s->until, JP_ANN_UNTIL "=%s", t);
        s->items[s->n++] = s->until;
    }
    if (s->events[0])
        s->items[s->n++] = s->events;
    return PLUGIN_EXIT_OK;
}

static const char *ann_get(const jp_pod *p, const char *key)
{
    for (size_t i = 0; i < p->nann; i++)
        if (strcmp(p->ann[i].key, key) == 0)
            return p->ann[i].value;
    return NULL;
}

static int annotate_pods(const plugin_args *a, const jp_pod_list *pods, const ann_set *s)
{
    int status = PLUGIN_EXIT_OK;
    for (size_t i = 0; i < pods->count; i++) {
        const jp_pod *p = &pods->items[i];
        const char *args[12] = {"annotate", "--overwrite", "pod", p->name};
        size_t n = 4;
        for (size_t k = 0; k < s->n; k++)
            args[n++] = s->items[k];
        args[n] = NULL;
        jp_strbuf out;
        jp_strbuf_init(&out, 1 << 20);
        jp_error err;
        jp_error_init(&err);
        if (kube_run(&a->kube, args, &out, &err) != JP_OK)
            status = plugin_fail(&err);
        else
            printf("pod/%s annotated:%s%s%s\n", p->name, s->n > 0 ? " " : "", s->items[0],
                   s->n > 1 ? " ..." : "");
        jp_strbuf_cleanup(&out);
        const char *prof = ann_get(p, JP_ANN_PROFILE);
        if (strcmp(a->cmd, "profile") == 0 && prof && strcmp(prof, "disabled") == 0)
            fprintf(stderr,
                    "kubectl-jprof: pod %s has " JP_ANN_PROFILE "=disabled, which wins over "
                    "the window (jprof(7)); `kubectl jprof enable` first to profile it\n",
                    p->name);
    }
    return status;
}

/* The pod template of the workload that owns the pods (a Deployment through
 * its ReplicaSet, a StatefulSet, a DaemonSet). */
static int annotate_workload(const plugin_args *a, const jp_pod_list *pods, const ann_set *s)
{
    char svc[256], workload[256] = "";
    jp_pod_service(&pods->items[0], svc, sizeof svc, workload, sizeof workload);
    char *slash = strchr(workload, '/');
    if (!slash) {
        fprintf(stderr,
                "kubectl-jprof: pod %s has no owning Deployment, StatefulSet or "
                "DaemonSet to patch; annotate the pod instead (drop --workload)\n",
                pods->items[0].name);
        return PLUGIN_EXIT_NOT_FOUND;
    }
    json_t *ann = json_object();
    for (size_t k = 0; k < s->n; k++) {
        const char *eq = strchr(s->items[k], '=');
        char key[64];
        if (eq) {
            snprintf(key, sizeof key, "%.*s", (int)(eq - s->items[k]), s->items[k]);
            json_object_set_new(ann, key, json_string(eq + 1));
        } else {
            snprintf(key, sizeof key, "%.*s", (int)strlen(s->items[k]) - 1, s->items[k]);
            json_object_set_new(ann, key, json_null()); /* merge patch: remove */
        }
    }
    json_t *patch =
        json_pack("{s:{s:{s:{s:o}}}}", "spec", "template", "metadata", "annotations", ann);
    char *text = json_dumps(patch, JSON_COMPACT);
    json_decref(patch);
    char kind[64], ref[320];
    snprintf(kind, sizeof kind, "%.*s", (int)(slash - workload), workload);
    for (char *c = kind; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    snprintf(ref, sizeof ref, "%s/%s", kind, slash + 1);
    const char *args[] = {"patch", ref, "--type", "merge", "-p", text, NULL};
    jp_strbuf out;
    jp_strbuf_init(&out, 1 << 20);
    jp_error err;
    jp_error_init(&err);
    int status = PLUGIN_EXIT_OK;
    if (kube_run(&a->kube, args, &out, &err) != JP_OK)
        status = plugin_fail(&err);
    else
        printf("%s patched: its pod template now carries the annotations, so Kubernetes rolls "
               "its pods (new pods, restarted JVMs)\n",
               ref);
    jp_strbuf_cleanup(&out);
    free(text);
    return status;
}

int plugin_annotate(const plugin_args *a)
{
    ann_set s;
    int st = build_set(a, &s);
    if (st != PLUGIN_EXIT_OK)
        return st;
    jp_pod_list pods;
    jp_pod_list_init(&pods);
    st = plugin_pods(a, &pods);
    if (st == PLUGIN_EXIT_OK)
        st = a->workload ? annotate_workload(a, &pods, &s) : annotate_pods(a, &pods, &s);
    jp_pod_list_cleanup(&pods);
    return st;
}

static void print_policy(const jp_pod *p, bool json, json_t *row)
{
    jp_policy pol;
    jp_policy_eval(p->ann, p->nann, jp_time_now_ns(), NULL, &pol);
    char until[64] = "";
    if (pol.until_ns)
        jp_rfc3339_format(pol.until_ns, until, sizeof until);
    if (json) {
        json_t *ann = json_object();
        for (size_t i = 0; i < p->nann; i++)
            json_object_set_new(ann, p->ann[i].key, json_string(p->ann[i].value));
        json_object_set_new(row, "annotations", ann);
        json_object_set_new(row, "mode", json_string(jp_policy_mode_name(pol.mode)));
        json_object_set_new(row, "profiled", json_boolean(pol.profile));
        json_object_set_new(row, "reason", pol.reason ? json_string(pol.reason) : json_null());
        json_object_set_new(row, "until", until[0] ? json_string(until) : json_null());
        return;
    }
    printf("  annotations:");
    for (size_t i = 0; i < p->nann; i++)
        printf(" %s=%s", p->ann[i].key, p->ann[i].value);
    printf("%s\n", p->nann ? "" : " (none)");
    printf("  agent policy: %s%s%s%s%s\n", jp_policy_mode_name(pol.mode), until[0] ? " until " : "",
           until, pol.reason ? ", reason " : "", pol.reason ? pol.reason : "");
}

int plugin_status(const plugin_args *a)
{
    jp_pod_list pods;
    jp_pod_list_init(&pods);
    int st = plugin_pods(a, &pods);
    bool json = a->output && strcmp(a->output, "json") == 0;
    for (size_t i = 0; st == PLUGIN_EXIT_OK && i < pods.count; i++) {
        const jp_pod *p = &pods.items[i];
        jp_error err;
        jp_error_init(&err);
        kube_session *s = NULL;
        jp_err rc = kube_session_open(&a->kube, p->name, a->container, p, &s, &err);
        const kube_hello *h = rc == JP_OK ? kube_session_hello(s) : NULL;
        json_t *row = json ? json_object() : NULL;
        if (json) {
            json_object_set_new(row, "pod", json_string(p->name));
            json_object_set_new(row, "node", p->node ? json_string(p->node) : json_null());
            json_object_set_new(row, "container",
                                h ? json_string(kube_session_container(s)) : json_null());
            json_object_set_new(row, "jvm_found", json_boolean(h && h->has_jvm));
            json_object_set_new(row, "jvm",
                                h && h->has_jvm ? json_string(h->jvm_version) : json_null());
            json_object_set_new(row, "main_class",
                                h && h->has_jvm ? json_string(h->main_class) : json_null());
            json_object_set_new(
                row, "error", h && h->has_jvm ? json_null() : json_string(h ? h->error : err.msg));
        } else {
            printf("pod %s (node %s)\n", p->name, p->node ? p->node : "?");
            if (h && h->has_jvm)
                printf("  JVM: pid %d in container %s, %s, %s\n", h->jvm_pid,
                       kube_session_container(s), h->jvm_version,
                       h->main_class[0] ? h->main_class : "?");
            else
                printf("  JVM: not found: %s\n", h ? h->error : err.msg);
        }
        kube_session_close(s);
        print_policy(p, json, row);
        if (json) {
            json_dumpf(row, stdout, JSON_COMPACT);
            fputc('\n', stdout);
            json_decref(row);
        }
    }
    jp_pod_list_cleanup(&pods);
    if (a->server)
        fprintf(stderr,
                "kubectl-jprof: agent status from %s: use jprof-top --server %s "
                "(not queried here yet)\n",
                a->server, a->server);
    return st;
}
