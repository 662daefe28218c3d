#!/usr/bin/env python3
"""test_agent_k8s.py - jprof-agent --mode k8s against the FAKE API server
(tests/integration/fake-k8s-api.py; there is no real cluster here).

Checks, through the agent's /status and /metrics:
  - only pods of this node are listed (fieldSelector);
  - annotation precedence: disabled > unexpired window > continuous > off,
    invalid values named in the reason message;
  - a temporary window expiring turns profiling off with window_expired;
  - watch events (an annotation added later) reach the agent;
  - a watch broken with 410 Gone (as an ERROR event and as an HTTP status)
    makes the agent list again, and pods added meanwhile appear;
  - a kubeconfig with an exec plugin is refused with a clear message.
The agent never attaches here: no JVM on this machine is in a known pod.

Run from the build dir (JPROF_AGENT overrides the binary). Exit 0 pass,
1 fail, 77 skip (not in CI).
"""
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.environ.get("JPROF_AGENT", os.path.join(os.getcwd(), "jprof-agent"))
FAKE = os.path.join(HERE, "fake-k8s-api.py")
TOKEN = "fake-sa-token-0123456789"
failures = []


def check(cond, what, detail=""):
    print(("PASS: " if cond else "FAIL: ") + what + ("" if cond else "  " + str(detail)))
    if not cond:
        failures.append(what)


def http(method, url, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if data:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read().decode()


def rfc3339(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(name, node="node-1", ann=None, labels=None, owner=None):
    meta = {"name": name, "namespace": "shop", "uid": "uid-" + name,
            "annotations": ann or {}, "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "controller": True}]
    return {"metadata": meta, "spec": {"nodeName": node},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "app", "containerID": "containerd://" + ("%064x" % abs(hash(name)))}]}}


def wait_for(pred, timeout=15.0, step=0.2):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        last = pred()
        if last:
            return last
        time.sleep(step)
    return last


def main():
    if not os.access(AGENT, os.X_OK):
        msg = "jprof-agent not built at " + AGENT
        if os.environ.get("CI") == "true":
            print("FAIL: " + msg)
            return 1
        print("SKIP: " + msg)
        return 77
    tmp = tempfile.mkdtemp(prefix="jprof-agent-k8s-")
    procs = []
    try:
        return run(tmp, procs)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def start_agent(tmp, procs, kubeconfig):
    log = open(os.path.join(tmp, "agent.log"), "w+")
    a = subprocess.Popen([AGENT, "--mode", "k8s", "--kubeconfig", kubeconfig, "--node", "node-1",
                          "--metrics-listen", "127.0.0.1:0", "--scan-interval", "1s"],
                         stdout=log, stderr=subprocess.STDOUT)
    procs.append(a)
    port = wait_for(lambda: re.search(r"metrics on port (\d+)",
                                      open(log.name).read()), timeout=10)
    return a, log, (int(port.group(1)) if port else None)


def run(tmp, procs):
    pf = os.path.join(tmp, "port")
    fake = subprocess.Popen([sys.executable, FAKE, "--port-file", pf, "--token", TOKEN],
                            stderr=subprocess.PIPE, text=True)
    procs.append(fake)
    banner = fake.stderr.readline()
    check("FAKE" in banner, "the fake API server says it is a fake", banner)
    wait_for(lambda: os.path.exists(pf), timeout=5)
    port = int(open(pf).read())
    base = "http://127.0.0.1:%d" % port

    now = datetime.datetime.now(datetime.timezone.utc)
    soon = rfc3339(now + datetime.timedelta(seconds=6))
    later = rfc3339(now + datetime.timedelta(hours=1))
    pods = [
        pod("checkout-7d9f8b6c5d-aaaaa", ann={"jprof.io/profile": "continuous"},
            labels={"pod-template-hash": "7d9f8b6c5d"},
            owner=("ReplicaSet", "checkout-7d9f8b6c5d")),
        pod("billing-0", ann={"jprof.io/profile": "disabled", "jprof.io/profile-until": later},
            labels={"app": "billing"}),
        pod("search-1", ann={"jprof.io/profile": "continuous", "jprof.io/profile-until": later},
            labels={"app.kubernetes.io/name": "search", "app": "ignored"}),
        pod("plain-1"),
        pod("brief-1", ann={"jprof.io/profile-until": soon}),
        pod("typo-1", ann={"jprof.io/profile": "continuous", "jprof.io/events": "cpu,heap"}),
        pod("elsewhere-1", node="node-2", ann={"jprof.io/profile": "continuous"}),
    ]
    for p in pods:
        http("POST", base + "/fake/pods", p)

    kc = os.path.join(tmp, "kubeconfig")
    with open(kc, "w") as f:
        f.write("""apiVersion: v1
kind: Config
# a fake cluster on loopback
clusters:
- cluster:
    server: %s
  name: fake
contexts:
- context:
    cluster: fake
    user: agent
  name: fake
current-context: fake
users:
- name: agent
  user:
    token: "%s"
preferences: {}
""" % (base, TOKEN))
    agent, log, mport = start_agent(tmp, procs, kc)
    check(mport is not None, "the agent starts and reports its metrics port",
          open(log.name).read())
    if mport is None:
        return 1
    murl = "http://127.0.0.1:%d" % mport

    def status():
        try:
            return json.loads(http("GET", murl + "/status"))
        except Exception:
            return None

    def podmap():
        s = status()
        if not s or "k8s" not in s or not s["k8s"]["synced"]:
            return None
        return {p["pod"]: p for p in s["k8s"]["pods"]}

    pm = wait_for(lambda: podmap() if podmap() and len(podmap()) >= 6 else None)
    check(pm is not None, "the agent lists the pods of its node", status())
    if not pm:
        return 1
    check("elsewhere-1" not in pm, "pods of other nodes are not listed", sorted(pm))
    c = pm["checkout-7d9f8b6c5d-aaaaa"]
    check(c["mode"] == "continuous" and c["profile"], "continuous annotation -> continuous", c)
    check(c["service"] == "checkout" and c["workload"] == "Deployment/checkout",
          "service from the Deployment behind the ReplicaSet", c)
    b = pm["billing-0"]
    check(b["mode"] == "disabled" and not b["profile"] and b["reason"] == "disabled",
          "disabled beats an open window", b)
    check(b["service"] == "billing", "service from label app", b)
    s = pm["search-1"]
    check(s["mode"] == "temporary" and s["profile"], "an open window beats continuous", s)
    check(s["service"] == "search", "app.kubernetes.io/name beats app", s)
    p = pm["plain-1"]
    check(p["mode"] == "off" and p["reason"] == "not_enabled", "no annotation -> off", p)
    t = pm["typo-1"]
    check(t["reason"] == "invalid_annotation" and "jprof.io/events" in t["message"]
          and not t["profile"], "an invalid value is a reason naming the annotation", t)
    br = pm["brief-1"]
    check(br["mode"] == "temporary" and br["profile"], "a short window is open at first", br)

    # the window expires while the agent runs
    exp = wait_for(lambda: (podmap() or {}).get("brief-1", {}).get("reason") == "window_expired",
                   timeout=15)
    br = (podmap() or {}).get("brief-1")
    check(bool(exp) and br and br["mode"] == "off" and not br["profile"],
          "the temporary window expires -> off, window_expired", br)

    # a change through the watch
    p = pod("plain-1", ann={"jprof.io/profile": "continuous"})
    http("POST", base + "/fake/pods", p)
    ok = wait_for(lambda: (podmap() or {}).get("plain-1", {}).get("mode") == "continuous")
    check(bool(ok), "an annotation added later arrives through the watch", podmap())

    # 410 Gone as an ERROR event: the agent lists again
    lists0 = json.loads(http("GET", base + "/fake/stats"))["lists"]
    http("POST", base + "/fake/gone?mode=event")
    http("POST", base + "/fake/pods", pod("after-gone-1", ann={"jprof.io/profile": "continuous"}))
    ok = wait_for(lambda: json.loads(http("GET", base + "/fake/stats"))["lists"] > lists0)
    check(bool(ok), "a watch ended by an ERROR 410 event makes the agent list again",
          http("GET", base + "/fake/stats"))
    ok = wait_for(lambda: "after-gone-1" in (podmap() or {}))
    check(bool(ok), "a pod added around the 410 appears after the re-list", sorted(podmap() or {}))

    # 410 Gone as the HTTP status of a watch request
    lists1 = json.loads(http("GET", base + "/fake/stats"))["lists"]
    http("POST", base + "/fake/gone?mode=http")
    ok = wait_for(lambda: json.loads(http("GET", base + "/fake/stats"))["lists"] > lists1)
    check(bool(ok), "an HTTP 410 on the watch makes the agent list again",
          http("GET", base + "/fake/stats"))
    http("DELETE", base + "/fake/pods/uid-typo-1")
    ok = wait_for(lambda: podmap() is not None and "typo-1" not in podmap())
    check(bool(ok), "a deleted pod disappears (watch resumed after the re-list)", podmap())

    metrics = http("GET", murl + "/metrics")
    m = re.search(r"^jprof_agent_k8s_relists_gone (\d+)$", metrics, re.M)
    check(m and int(m.group(1)) >= 2, "/metrics counts the re-lists after 410", m and m.group(0))
    s = status()
    check(s["k8s"]["error"] == "", "no API error is reported", s["k8s"]["error"])
    for t in s["targets"]:
        check(not t["recording"], "no JVM outside a known pod is profiled (pid %d: %s)"
              % (t["pid"], t["reason"]), t)

    agent.send_signal(signal.SIGTERM)
    rc = agent.wait(timeout=20)
    check(rc == 0, "SIGTERM stops the agent with status 0", rc)

    # a wrong token: the API answers 401 and the agent says so
    bad = os.path.join(tmp, "kubeconfig-badtoken")
    with open(bad, "w") as f:
        f.write(open(kc).read().replace(TOKEN, "wrong-token"))
    agent2, log2, mport2 = start_agent(tmp, procs, bad)
    err = wait_for(lambda: (json.loads(http("GET", "http://127.0.0.1:%d/status" % mport2))
                            .get("k8s", {}).get("error")) if mport2 else None, timeout=10)
    check(err and "401" in err, "a refused token shows as the k8s error in /status", err)
    agent2.send_signal(signal.SIGTERM)
    agent2.wait(timeout=20)

    # an exec credential plugin is refused, not run
    ex = os.path.join(tmp, "kubeconfig-exec")
    with open(ex, "w") as f:
        f.write(open(kc).read().replace('    token: "%s"' % TOKEN,
                                        "    exec:\n      command: aws\n"))
    r = subprocess.run([AGENT, "--mode", "k8s", "--kubeconfig", ex, "--node", "node-1",
                        "--metrics-listen", "off"], capture_output=True, text=True, timeout=20)
    check(r.returncode != 0 and "exec credential plugin" in r.stderr,
          "a kubeconfig with an exec plugin is refused with a clear message",
          (r.returncode, r.stderr))

    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
