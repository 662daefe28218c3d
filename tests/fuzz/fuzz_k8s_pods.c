/* libFuzzer target: everything jprof-agent reads from outside about pods and
 * containers: a PodList and a watch event from the Kubernetes API, a
 * kubeconfig (the YAML subset), and a /proc/PID/cgroup text.
 *
 * Build (clang):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -include BUILD/config.h \
 *     -Isrc -IBUILD tests/fuzz/fuzz_k8s_pods.c src/wire/k8s_pod.c \
 *     src/agent/k8s_conn.c src/agent/cgroup.c src/model/policy.c src/jvm/proc.c \
 *     src/model/profile.c src/base/[a-z]*.c -ljansson -lm -o fuzz_k8s_pods
 *   ./fuzz_k8s_pods tests/fuzz/corpus/k8s */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "agent/cgroup.h"
#include "agent/k8s_conn.h"
#include "wire/k8s_pod.h"
#include "model/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    jp_pod_list l;
    jp_pod_list_init(&l);
    if (jp_pod_list_parse(text, size, &l, NULL) == JP_OK) {
        char svc[JP_POD_STR_MAX + 1], wl[JP_POD_STR_MAX + 32];
        for (size_t i = 0; i < l.count; i++) {
            jp_policy p;
            jp_pod_service(&l.items[i], svc, sizeof svc, wl, sizeof wl);
            jp_policy_eval(l.items[i].ann, l.items[i].nann, 0, NULL, &p);
        }
    }
    jp_pod_list_cleanup(&l);
    jp_pod_watch_event ev;
    jp_pod_watch_event_parse(text, size, &ev, NULL);
    jp_pod_cleanup(&ev.pod);
    agent_k8s_conn c;
    if (agent_kubeconfig_parse(text, size, "/d", &c, NULL) == JP_OK)
        agent_k8s_conn_cleanup(&c);
    agent_cgroup cg;
    agent_cgroup_parse(text, size, &cg);
    return 0;
}
