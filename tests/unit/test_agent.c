/* Unit tests of src/agent: policy, cgroup parsing, pod JSON, naming, host
 * config, the upload queue and back-off, the /metrics responder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/cgroup.h"
#include "agent/hostmode.h"
#include "agent/k8s_conn.h"
#include "wire/k8s_pod.h"
#include "agent/metrics.h"
#include "model/policy.h"
#include "agent/queue.h"
#include "agent/upload.h"
#include "base/base64.h"
#include "base/timeutil.h"
#include "model/profile.h"

/* 2026-11-21T10:00:00Z */
static int64_t t0(void)
{
    int64_t ns;
    assert_int_equal(jp_rfc3339_parse("2026-11-21T10:00:00Z", &ns, NULL), JP_OK);
    return ns;
}

static void eval(jp_policy *p, int64_t now, size_t n, ...)
{
    jp_kv kv[8];
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) {
        kv[i].key = va_arg(ap, const char *);
        kv[i].value = va_arg(ap, const char *);
    }
    va_end(ap);
    jp_policy_eval(kv, n, now, NULL, p);
}

static void test_policy_off_unless_asked(void **state)
{
    (void)state;
    jp_policy p;
    eval(&p, t0(), 0);
    assert_false(p.profile);
    assert_int_equal(p.mode, JP_POLICY_OFF);
    assert_string_equal(p.reason, "not_enabled");
    /* foreign annotations do not enable anything */
    eval(&p, t0(), 1, "example.com/profile", "continuous");
    assert_false(p.profile);
}

static void test_policy_precedence(void **state)
{
    (void)state;
    jp_policy p;
    int64_t now = t0();
    eval(&p, now, 1, "jprof.io/profile", "continuous");
    assert_true(p.profile);
    assert_int_equal(p.mode, JP_POLICY_CONTINUOUS);
    assert_int_equal(p.threads, JP_THREADS_LOW);
    assert_null(p.reason);
    /* an open window beats continuous and makes threads dense */
    eval(&p, now, 2, "jprof.io/profile", "continuous", "jprof.io/profile-until",
         "2026-11-21T10:30:00Z");
    assert_int_equal(p.mode, JP_POLICY_TEMPORARY);
    assert_int_equal(p.threads, JP_THREADS_HIGH);
    assert_int_equal(jp_policy_next_change(&p, now), now + 1800 * JP_NS_PER_SEC);
    /* disabled beats everything, even an open window and invalid knobs */
    eval(&p, now, 3, "jprof.io/profile", "disabled", "jprof.io/profile-until",
         "2026-11-21T10:30:00Z", "jprof.io/events", "bogus");
    assert_false(p.profile);
    assert_int_equal(p.mode, JP_POLICY_DISABLED);
    assert_string_equal(p.reason, "disabled");
    /* an expired window falls back to continuous when that is set ... */
    eval(&p, now, 2, "jprof.io/profile", "continuous", "jprof.io/profile-until",
         "2026-11-21T09:00:00Z");
    assert_int_equal(p.mode, JP_POLICY_CONTINUOUS);
    assert_true(p.profile);
    /* ... and to off with its own reason when not */
    eval(&p, now, 1, "jprof.io/profile-until", "2026-11-21T09:59:59Z");
    assert_false(p.profile);
    assert_string_equal(p.reason, "window_expired");
    assert_non_null(strstr(p.message, "2026-11-21T09:59:59"));
    /* the window ends exactly at its time */
    eval(&p, now, 1, "jprof.io/profile-until", "2026-11-21T10:00:00Z");
    assert_false(p.profile);
    eval(&p, now - 1, 1, "jprof.io/profile-until", "2026-11-21T10:00:00Z");
    assert_true(p.profile);
    assert_int_equal(p.mode, JP_POLICY_TEMPORARY);
}

static void test_policy_knobs(void **state)
{
    (void)state;
    jp_policy p;
    eval(&p, t0(), 4, "jprof.io/profile", "continuous", "jprof.io/events", "cpu, wall,park",
         "jprof.io/startup-delay", "90s", "jprof.io/threads", "off");
    assert_true(p.profile);
    assert_int_equal(p.kinds, (1u << JP_KIND_CPU) | (1u << JP_KIND_WALL) | (1u << JP_KIND_PARK));
    assert_int_equal(p.startup_delay_ns, 90 * JP_NS_PER_SEC);
    assert_int_equal(p.threads, JP_THREADS_OFF);
    /* defaults */
    eval(&p, t0(), 1, "jprof.io/profile", "continuous");
    /* alloc brings the old-object sampler (kind old) with it */
    assert_int_equal(p.kinds, (1u << JP_KIND_CPU) | (1u << JP_KIND_ALLOC) | (1u << JP_KIND_LOCK) |
                                  (1u << JP_KIND_OLD));
    assert_int_equal(p.startup_delay_ns, 0);
    assert_int_equal(p.heap_every_ns, 0);
    /* class histograms only in a temporary window: each pauses the JVM */
    eval(&p, t0(), 2, "jprof.io/profile-until", "2026-11-21T10:30:00Z", "jprof.io/heap-histogram",
         "10m");
    assert_true(p.profile);
    assert_int_equal(p.heap_every_ns, 600 * JP_NS_PER_SEC);
    eval(&p, t0(), 2, "jprof.io/profile", "continuous", "jprof.io/heap-histogram", "10m");
    assert_true(p.profile);
    assert_int_equal(p.heap_every_ns, 0);
    assert_true(p.heap_outside);
}

static void test_policy_invalid_names_the_annotation(void **state)
{
    (void)state;
    jp_policy p;
    struct {
        const char *key, *value;
    } bad[] = {{"jprof.io/profile", "yes"},
               {"jprof.io/profile-until", "tomorrow"},
               {"jprof.io/profile-until", "2027-12-31T00:00:00Z"}, /* > 31 days ahead */
               {"jprof.io/events", "cpu,heap"},
               {"jprof.io/events", ""},
               {"jprof.io/startup-delay", "soon"},
               {"jprof.io/startup-delay", "-5s"},
               {"jprof.io/threads", "medium"},
               {"jprof.io/heap-histogram", "often"},
               {"jprof.io/heap-histogram", "30s"}, /* < 1m: a full GC each time */
               {"jprof.io/heap-histogram", "25h"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        eval(&p, t0(), 2, "jprof.io/profile", "continuous", bad[i].key, bad[i].value);
        assert_false(p.profile);
        assert_string_equal(p.reason, "invalid_annotation");
        assert_non_null(strstr(p.message, bad[i].key));
    }
    char msg[128];
    uint32_t mask;
    assert_false(jp_policy_kinds_parse("cpu,heap", &mask, msg, sizeof msg));
    assert_non_null(strstr(msg, "'heap'"));
}

static void test_cgroup_formats(void **state)
{
    (void)state;
    const char *id = "3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7a8";
    char text[2048];
    agent_cgroup cg;
    /* cgroup v2, systemd driver, containerd */
    snprintf(text, sizeof text,
             "0::/kubepods.slice/kubepods-burstable.slice/"
             "kubepods-burstable-pod0f1e2d3c_4b5a_6978_8a9b_0c1d2e3f4a5b.slice/"
             "cri-containerd-%s.scope\n",
             id);
    assert_true(agent_cgroup_parse(text, strlen(text), &cg));
    assert_string_equal(cg.container_id, id);
    assert_string_equal(cg.runtime, "containerd");
    assert_string_equal(cg.pod_uid, "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b");
    /* cgroup v2, CRI-O (the conmon scope is not the container) */
    snprintf(text, sizeof text,
             "0::/kubepods.slice/kubepods-besteffort.slice/"
             "kubepods-besteffort-pod0f1e2d3c_4b5a_6978_8a9b_0c1d2e3f4a5b.slice/crio-%s.scope\n",
             id);
    assert_true(agent_cgroup_parse(text, strlen(text), &cg));
    assert_string_equal(cg.container_id, id);
    assert_string_equal(cg.runtime, "cri-o");
    snprintf(text, sizeof text, "0::/kubepods.slice/crio-conmon-%s.scope\n", id);
    agent_cgroup_parse(text, strlen(text), &cg);
    assert_string_equal(cg.container_id, "");
    /* cgroup v1, cgroupfs driver, containerd: a bare id under the pod */
    snprintf(text, sizeof text,
             "12:pids:/kubepods/burstable/pod0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b/%s\n"
             "11:memory:/kubepods/burstable/pod0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b/%s\n"
             "1:name=systemd:/kubepods/burstable/pod0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b/%s\n",
             id, id, id);
    assert_true(agent_cgroup_parse(text, strlen(text), &cg));
    assert_string_equal(cg.container_id, id);
    assert_string_equal(cg.pod_uid, "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b");
    /* podman's cgroupfs layout under a kubelet's parent (its monitor is not
     * the container) */
    snprintf(text, sizeof text,
             "8:pids:/kubepods/burstable/pod0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b/libpod-%s\n", id);
    assert_true(agent_cgroup_parse(text, strlen(text), &cg));
    assert_string_equal(cg.container_id, id);
    assert_string_equal(cg.runtime, "podman");
    assert_string_equal(cg.pod_uid, "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b");
    snprintf(text, sizeof text, "0::/machine.slice/libpod-conmon-%s.scope\n", id);
    agent_cgroup_parse(text, strlen(text), &cg);
    assert_string_equal(cg.container_id, "");
    /* Docker outside Kubernetes: v1 cgroupfs and v2 systemd */
    snprintf(text, sizeof text, "4:cpu,cpuacct:/docker/%s\n", id);
    assert_true(agent_cgroup_parse(text, strlen(text), &cg));
    assert_string_equal(cg.runtime, "docker");
    assert_string_equal(cg.pod_uid, "");
    snprintf(text, sizeof text, "0::/system.slice/docker-%s.scope\n", id);
    assert_true(agent_cgroup_parse(text, strlen(text), &cg));
    assert_string_equal(cg.container_id, id);
    assert_string_equal(cg.runtime, "docker");
    /* a host process: nothing */
    const char *host = "0::/user.slice/user-1000.slice/session-2.scope\n";
    assert_false(agent_cgroup_parse(host, strlen(host), &cg));
    /* junk does not crash */
    assert_false(agent_cgroup_parse("::::\n:\n\n", 9, &cg));
    assert_string_equal(jp_pod_container_id_strip("containerd://abc"), "abc");
    assert_string_equal(jp_pod_container_id_strip("abc"), "abc");
}

static const char *POD_LIST =
    "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"1234\"},\"items\":["
    "{\"metadata\":{\"name\":\"checkout-7d9f8b6c5d-x2x9z\",\"namespace\":\"shop\","
    "\"uid\":\"0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b\",\"resourceVersion\":\"1200\","
    "\"labels\":{\"pod-template-hash\":\"7d9f8b6c5d\",\"team\":\"x\"},"
    "\"annotations\":{\"jprof.io/profile\":\"continuous\",\"other/x\":\"y\"},"
    "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"checkout-7d9f8b6c5d\","
    "\"controller\":true}]},"
    "\"spec\":{\"nodeName\":\"node-1\"},"
    "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\","
    "\"containerID\":\"containerd://abcdef\"}]}},"
    "{\"metadata\":{\"name\":\"db-0\",\"namespace\":\"shop\",\"uid\":\"u2\","
    "\"labels\":{\"app\":\"postgres\"},"
    "\"ownerReferences\":[{\"kind\":\"StatefulSet\",\"name\":\"db\",\"controller\":true}]}}"
    "]}";

static void test_pod_list_and_naming(void **state)
{
    (void)state;
    jp_pod_list l;
    jp_pod_list_init(&l);
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jp_pod_list_parse(POD_LIST, strlen(POD_LIST), &l, &e), JP_OK);
    assert_int_equal(l.count, 2);
    assert_string_equal(l.resource_version, "1234");
    jp_pod *p = &l.items[0];
    assert_string_equal(p->name, "checkout-7d9f8b6c5d-x2x9z");
    assert_string_equal(p->node, "node-1");
    assert_int_equal(p->nann, 1); /* only jprof.io/ keys are kept */
    assert_string_equal(p->ann[0].value, "continuous");
    assert_int_equal(p->ncontainers, 1);
    assert_string_equal(p->containers[0].id, "abcdef");
    char svc[128], wl[128];
    assert_string_equal(jp_pod_service(p, svc, sizeof svc, wl, sizeof wl), "checkout");
    assert_string_equal(wl, "Deployment/checkout");
    /* label app wins over the workload; app.kubernetes.io/name over app */
    assert_string_equal(jp_pod_service(&l.items[1], svc, sizeof svc, wl, sizeof wl), "postgres");
    assert_string_equal(wl, "StatefulSet/db");
    free(l.items[1].label_app);
    l.items[1].label_app = NULL;
    assert_string_equal(jp_pod_service(&l.items[1], svc, sizeof svc, NULL, 0), "db");
    jp_pod_list_cleanup(&l);

    char d[64];
    jp_pod_rs_to_deployment("checkout-7d9f8b6c5d", NULL, d, sizeof d);
    assert_string_equal(d, "checkout");
    jp_pod_rs_to_deployment("web-api-5c8b7f9d", "5c8b7f9d", d, sizeof d);
    assert_string_equal(d, "web-api");
    jp_pod_rs_to_deployment("frontend-canary", NULL, d, sizeof d); /* vowels: not a hash */
    assert_string_equal(d, "frontend-canary");
}

static void test_pod_json_errors(void **state)
{
    (void)state;
    const char *bad[] = {
        "[]",
        "{\"items\":{}}",
        "{\"items\":[{\"metadata\":{\"name\":\"a\"}}]}", /* no uid/namespace */
        "{\"items\":[{\"metadata\":{\"name\":1,\"uid\":\"u\",\"namespace\":\"n\"}}]}",
        "{\"items\":[{\"metadata\":{\"name\":\"a\",\"uid\":\"u\",\"namespace\":\"n\","
        "\"annotations\":{\"jprof.io/profile\":7}}}]}",
        "{\"items\":[",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        jp_pod_list l;
        jp_pod_list_init(&l);
        jp_error e;
        jp_error_init(&e);
        assert_int_not_equal(jp_pod_list_parse(bad[i], strlen(bad[i]), &l, &e), JP_OK);
        assert_true(e.msg[0] != '\0');
        jp_pod_list_cleanup(&l);
    }
    /* an over-long string is a limit error naming the field */
    size_t n = JP_POD_STR_MAX + 100;
    char *big = malloc(n + 200);
    int off = snprintf(big, n + 200,
                       "{\"items\":[{\"metadata\":{\"uid\":\"u\",\"namespace\":"
                       "\"n\",\"name\":\"");
    memset(big + off, 'a', n);
    snprintf(big + off + n, 200 - 0, "\"}}]}");
    jp_pod_list l;
    jp_pod_list_init(&l);
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jp_pod_list_parse(big, strlen(big), &l, &e), JP_ERR_LIMIT);
    assert_non_null(strstr(e.msg, "items[0].metadata.name"));
    jp_pod_list_cleanup(&l);
    free(big);
}

static void test_watch_events(void **state)
{
    (void)state;
    jp_pod_watch_event ev;
    jp_error e;
    jp_error_init(&e);
    const char *add = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\",\"namespace\":"
                      "\"n\",\"uid\":\"u\",\"resourceVersion\":\"77\"}}}";
    assert_int_equal(jp_pod_watch_event_parse(add, strlen(add), &ev, &e), JP_OK);
    assert_int_equal(ev.type, JP_POD_WATCH_ADDED);
    assert_string_equal(ev.pod.resource_version, "77");
    jp_pod_cleanup(&ev.pod);
    const char *gone = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
                       "\"message\":\"too old resource version: 5 (99)\"}}";
    assert_int_equal(jp_pod_watch_event_parse(gone, strlen(gone), &ev, &e), JP_OK);
    assert_int_equal(ev.type, JP_POD_WATCH_GONE);
    assert_non_null(strstr(ev.message, "too old"));
    jp_pod_cleanup(&ev.pod);
    const char *bm =
        "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"88\"}}}";
    assert_int_equal(jp_pod_watch_event_parse(bm, strlen(bm), &ev, &e), JP_OK);
    assert_int_equal(ev.type, JP_POD_WATCH_BOOKMARK);
    assert_string_equal(ev.pod.resource_version, "88");
    jp_pod_cleanup(&ev.pod);
    const char *weird = "{\"type\":\"EXPLODED\",\"object\":{}}";
    assert_int_equal(jp_pod_watch_event_parse(weird, strlen(weird), &ev, &e), JP_ERR_FORMAT);
    jp_pod_cleanup(&ev.pod);
}

static void test_host_service_names(void **state)
{
    (void)state;
    char out[128];
#define CMD(s) s, sizeof(s)
    agent_host_service(CMD("java\0-Xmx256m\0-cp\0app.jar\0shop.checkout.CheckoutMain\0--port\0"
                           "8080"),
                       out, sizeof out);
    assert_string_equal(out, "CheckoutMain");
    agent_host_service(CMD("/usr/bin/java\0-jar\0/opt/shop/billing-1.2.jar\0"), out, sizeof out);
    assert_string_equal(out, "billing-1.2");
    agent_host_service(CMD("java\0-Djprof.service=payments\0-jar\0/opt/x.jar"), out, sizeof out);
    assert_string_equal(out, "payments");
    agent_host_service(CMD("java\0-m\0shop.app/shop.app.Main"), out, sizeof out);
    assert_string_equal(out, "Main");
    agent_host_service(CMD("java\0-version"), out, sizeof out);
    assert_string_equal(out, "");
#undef CMD
}

static void test_host_config(void **state)
{
    (void)state;
    const char *text = "# services to profile\n"
                       "checkout\n"
                       "\n"
                       "pid 4242\n"
                       "777 jprof.io/events=cpu\n"
                       "billing jprof.io/threads=high jprof.io/events=cpu,alloc\n";
    agent_host_config c;
    agent_host_config_init(&c);
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(agent_host_config_parse(text, strlen(text), &c, &e), JP_OK);
    assert_int_equal(c.count, 4);
    assert_non_null(agent_host_config_match(&c, 1, "checkout"));
    assert_null(agent_host_config_match(&c, 1, "other"));
    const agent_host_entry *b = agent_host_config_match(&c, 9, "billing");
    assert_non_null(b);
    assert_int_equal(b->nann, 2);
    assert_string_equal(b->ann[0].key, "jprof.io/threads");
    assert_int_equal(agent_host_config_match(&c, 4242, "x")->pid, 4242);
    assert_int_equal(agent_host_config_match(&c, 777, NULL)->line, 5);
    agent_host_config_cleanup(&c);
    const char *bad = "checkout\npid abc\n";
    agent_host_config_init(&c);
    assert_int_equal(agent_host_config_parse(bad, strlen(bad), &c, &e), JP_ERR_FORMAT);
    assert_non_null(strstr(e.msg, "line 2"));
    agent_host_config_cleanup(&c);
    const char *bad2 = "checkout events=cpu\n";
    agent_host_config_init(&c);
    assert_int_equal(agent_host_config_parse(bad2, strlen(bad2), &c, &e), JP_ERR_FORMAT);
    agent_host_config_cleanup(&c);
}

static agent_qitem *item(size_t len, int64_t data_ns)
{
    agent_qitem *it = calloc(1, sizeof *it);
    it->data = calloc(len, 1);
    it->len = len;
    it->id = strdup("b");
    it->data_ns = data_ns;
    return it;
}

static void test_queue_drops_oldest(void **state)
{
    (void)state;
    agent_queue q;
    agent_queue_init(&q, 100);
    for (int i = 1; i <= 3; i++)
        assert_int_equal(agent_queue_push(&q, item(30, i * 1000)), 0);
    /* 4 x 30 = 120 > 100: the fourth push drops the first */
    assert_int_equal(agent_queue_push(&q, item(30, 4000)), 1);
    assert_int_equal(q.bytes, 90);
    agent_queue_cleanup(&q);

    agent_queue_init(&q, 100);
    agent_queue_push(&q, item(40, 1000));
    agent_queue_push(&q, item(40, 2000));
    assert_int_equal(agent_queue_push(&q, item(40, 3000)), 1); /* drops the oldest */
    assert_int_equal(q.count, 2);
    assert_int_equal(q.bytes, 80);
    assert_int_equal(q.dropped_batches, 1);
    assert_int_equal(q.dropped_bytes, 40);
    assert_int_equal(q.oldest_dropped_ns, 1000);
    /* a batch in flight still counts against the limit */
    agent_qitem *it = agent_queue_take(&q);
    assert_int_equal(it->data_ns, 2000);
    assert_int_equal(q.bytes, 80);
    assert_int_equal(agent_queue_push(&q, item(40, 4000)), 1); /* drops 3000 */
    assert_int_equal(q.oldest_dropped_ns, 1000);
    /* failed: back to the front, ahead of newer data */
    agent_queue_requeue(&q, it);
    assert_int_equal(q.count, 2);
    agent_qitem *again = agent_queue_take(&q);
    assert_int_equal(again->data_ns, 2000);
    agent_queue_done(&q, again);
    agent_qitem_free(again);
    assert_int_equal(q.bytes, 40);
    /* larger than the whole limit: dropped itself */
    assert_int_equal(agent_queue_push(&q, item(500, 500)), 2);
    assert_int_equal(q.count, 0);
    assert_int_equal(q.oldest_dropped_ns, 500);
    assert_int_equal(q.bytes, 0);
    agent_queue_cleanup(&q);
}

static void test_backoff(void **state)
{
    (void)state;
    int64_t s = JP_NS_PER_SEC;
    for (uint64_t r = 0; r < 50; r++) {
        int64_t d1 = agent_backoff_ns(1, s, 60 * s, r * 7919);
        assert_true(d1 >= s / 2 && d1 <= s);
        int64_t d4 = agent_backoff_ns(4, s, 60 * s, r * 7919);
        assert_true(d4 >= 4 * s && d4 <= 8 * s);
        int64_t d30 = agent_backoff_ns(30, s, 60 * s, r * 7919);
        assert_true(d30 >= 30 * s && d30 <= 60 * s);
    }
    /* jitter: not every value is the same */
    assert_int_not_equal(agent_backoff_ns(3, s, 60 * s, 1), agent_backoff_ns(3, s, 60 * s, 999));
}

static void test_metrics_responder(void **state)
{
    (void)state;
    agent_metrics m;
    agent_metrics_init(&m);
    atomic_store(&m.jvms_discovered, 3);
    atomic_store(&m.uploads_dropped, 2);
    const char *reasons[] = {"not_enabled", "conflict"};
    uint64_t counts[] = {2, 1};
    agent_metrics_set_skipped(&m, reasons, counts, 2);
    agent_metrics_set_status(&m, strdup("{\"targets\":[]}"));
    size_t len;
    const char *req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    char *r = agent_metrics_respond(&m, req, strlen(req), &len);
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    assert_non_null(strstr(r, "jprof_agent_jvms_discovered 3\n"));
    assert_non_null(strstr(r, "jprof_agent_uploads_dropped 2\n"));
    assert_non_null(strstr(r, "jprof_agent_targets_skipped{reason=\"conflict\"} 1\n"));
    assert_non_null(strstr(r, "jprof_agent_last_upload_success_seconds 0"));
    free(r);
    req = "GET /status HTTP/1.0\r\n\r\n";
    r = agent_metrics_respond(&m, req, strlen(req), &len);
    assert_non_null(strstr(r, "{\"targets\":[]}"));
    free(r);
    req = "POST /metrics HTTP/1.0\r\n\r\n";
    r = agent_metrics_respond(&m, req, strlen(req), &len);
    assert_non_null(strstr(r, "405"));
    free(r);
    req = "GET /nope HTTP/1.0\r\n\r\n";
    r = agent_metrics_respond(&m, req, strlen(req), &len);
    assert_non_null(strstr(r, "404"));
    free(r);
    r = agent_metrics_respond(&m, "garbage", 7, &len);
    assert_non_null(strstr(r, "400"));
    free(r);
    agent_metrics_cleanup(&m);
}

static const char *KUBECONFIG = "apiVersion: v1\n"
                                "kind: Config\n"
                                "clusters:\n"
                                "- cluster:\n"
                                "    certificate-authority-data: aGVsbG8gY2E=  # 'hello ca'\n"
                                "    server: https://10.0.0.1:6443/\n"
                                "  name: prod\n"
                                "- cluster:\n"
                                "    server: https://other:6443\n"
                                "    insecure-skip-tls-verify: true\n"
                                "  name: other\n"
                                "contexts:\n"
                                "- context:\n"
                                "    cluster: prod\n"
                                "    user: agent\n"
                                "  name: prod-ctx\n"
                                "- name: other-ctx\n"
                                "  context:\n"
                                "    cluster: other\n"
                                "    user: certs\n"
                                "current-context: prod-ctx\n"
                                "preferences: {}\n"
                                "users:\n"
                                "- name: agent\n"
                                "  user:\n"
                                "    token: 'abc''def'\n"
                                "- name: certs\n"
                                "  user:\n"
                                "    client-certificate: certs/client.crt\n"
                                "    client-key-data: a2V5\n";

static void test_kubeconfig(void **state)
{
    (void)state;
    agent_k8s_conn c;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(agent_kubeconfig_parse(KUBECONFIG, strlen(KUBECONFIG), "/etc/kube", &c, &e),
                     JP_OK);
    assert_string_equal(c.server, "https://10.0.0.1:6443");
    assert_string_equal(c.token, "abc'def");
    assert_int_equal(c.ca_len, 8);
    assert_memory_equal(c.ca, "hello ca", 8);
    assert_false(c.insecure);
    agent_k8s_conn_cleanup(&c);
    /* the other context: relative file paths resolve against the file's dir */
    char *other = strdup(KUBECONFIG);
    memcpy(strstr(other, "current-context: prod-ctx"), "current-context: other-ct", 25);
    /* "other-ct" is not a context: a clear error */
    assert_int_equal(agent_kubeconfig_parse(other, strlen(other), "/etc/kube", &c, &e),
                     JP_ERR_FORMAT);
    assert_non_null(strstr(e.msg, "other-ct"));
    free(other);
    const char *json = "{\"current-context\":\"x\",\"contexts\":[{\"name\":\"x\",\"context\":"
                       "{\"cluster\":\"c\",\"user\":\"u\"}}],\"clusters\":[{\"name\":\"c\","
                       "\"cluster\":{\"server\":\"http://127.0.0.1:1\",\"insecure-skip-tls-"
                       "verify\":true}}],\"users\":[{\"name\":\"u\",\"user\":{\"client-"
                       "certificate\":\"a.crt\",\"client-key\":\"/k.key\"}}]}";
    assert_int_equal(agent_kubeconfig_parse(json, strlen(json), "/d", &c, &e), JP_OK);
    assert_true(c.insecure);
    assert_string_equal(c.cert_file, "/d/a.crt");
    assert_string_equal(c.key_file, "/k.key");
    agent_k8s_conn_cleanup(&c);
}

static void test_kubeconfig_unsupported(void **state)
{
    (void)state;
    agent_k8s_conn c;
    jp_error e;
    jp_error_init(&e);
    const char *exec = "current-context: a\ncontexts:\n- name: a\n  context:\n    cluster: c\n"
                       "    user: u\nclusters:\n- name: c\n  cluster:\n    server: https://x\n"
                       "users:\n- name: u\n  user:\n    exec:\n      command: aws\n";
    assert_int_equal(agent_kubeconfig_parse(exec, strlen(exec), NULL, &c, &e), JP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.msg, "exec credential plugin"));
    const char *anchors = "a: &x 1\nb: *x\n";
    json_t *j;
    assert_int_equal(agent_yaml_parse(anchors, strlen(anchors), &j, &e), JP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.msg, "line 1"));
    const char *tabs = "a:\n\tb: 1\n";
    assert_int_equal(agent_yaml_parse(tabs, strlen(tabs), &j, &e), JP_ERR_FORMAT);
    const char *unterminated = "a: 'abc\n";
    assert_int_equal(agent_yaml_parse(unterminated, strlen(unterminated), &j, &e),
                     JP_ERR_UNSUPPORTED);
    /* nesting is bounded */
    char deep[4096] = "";
    size_t off = 0;
    for (int i = 0; i < 60; i++)
        off += (size_t)snprintf(deep + off, sizeof deep - off, "%*sk%d:\n", i * 2, "", i);
    assert_int_not_equal(agent_yaml_parse(deep, strlen(deep), &j, &e), JP_OK);
    uint8_t *out;
    size_t n;
    assert_int_equal(jp_base64_decode("aGk=", 4, &out, &n, &e), JP_OK);
    assert_int_equal(n, 2);
    assert_memory_equal(out, "hi", 2);
    free(out);
    assert_int_equal(jp_base64_decode("a$b", 3, &out, &n, &e), JP_ERR_FORMAT);
}

static void test_yaml_subset(void **state)
{
    (void)state;
    const char *y = "# comment\n"
                    "list:\n"
                    "- a\n"
                    "- \"b # not a comment\"\n"
                    "- k: v\n"
                    "  k2: v2\n"
                    "map:\n"
                    "  nested:\n"
                    "    deep: x # trailing\n"
                    "  flag: true\n"
                    "empty: []\n";
    json_t *j;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(agent_yaml_parse(y, strlen(y), &j, &e), JP_OK);
    json_t *l = json_object_get(j, "list");
    assert_int_equal(json_array_size(l), 3);
    assert_string_equal(json_string_value(json_array_get(l, 1)), "b # not a comment");
    assert_string_equal(json_string_value(json_object_get(json_array_get(l, 2), "k2")), "v2");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(j, "map"), "nested"), "deep")),
                        "x");
    assert_true(json_is_true(json_object_get(json_object_get(j, "map"), "flag")));
    assert_int_equal(json_array_size(json_object_get(j, "empty")), 0);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_off_unless_asked),
        cmocka_unit_test(test_policy_precedence),
        cmocka_unit_test(test_policy_knobs),
        cmocka_unit_test(test_policy_invalid_names_the_annotation),
        cmocka_unit_test(test_cgroup_formats),
        cmocka_unit_test(test_pod_list_and_naming),
        cmocka_unit_test(test_pod_json_errors),
        cmocka_unit_test(test_watch_events),
        cmocka_unit_test(test_host_service_names),
        cmocka_unit_test(test_host_config),
        cmocka_unit_test(test_queue_drops_oldest),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_metrics_responder),
        cmocka_unit_test(test_kubeconfig),
        cmocka_unit_test(test_kubeconfig_unsupported),
        cmocka_unit_test(test_yaml_subset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
