#!/usr/bin/env python3
"""test_heap.py - "hungry": what fills the heap and what keeps growing, on a
JVM with a known leak (tests/java/Leak.java: leak.Leak$SessionRecord at
leak.rate objects a second, plus steady garbage).

Checks (JDK 17, java on PATH):
  - agent -> server: a host-mode agent whose config opens a temporary window
    with jprof.io/events=alloc and jprof.io/heap-histogram=10s takes class
    histograms of live objects,
    uploads them, and GET /api/v1/heap ranks the leaking class first by
    growth, its instances per minute within 20 % of the true rate; the
    agent's status says how long the last histogram paused the JVM; a JVM
    without the annotation gets none; the old kind (jdk.OldObjectSample, on
    with alloc) puts the leaking method first among the allocation sites of
    the sampled objects still alive.
Run from the build dir. Exit 0 pass, 1 fail, 77 skip (not in CI).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_agent_host as tah  # noqa: E402  (its Env, waits and checks)
from test_agent_host import check  # noqa: E402

RATE = 2000  # leaked objects a second
LEAK = "leak.Leak$SessionRecord"


def compile_leak(tmp):
    out = os.path.join(tmp, "classes")
    src = os.path.join(tah.SRCDIR, "tests/java/Leak.java")
    subprocess.run(["javac", "-d", out, src], check=True)
    return out


def heap_answer(env, pod_pid):
    r = tah.get(env.base + "/api/v1/heap?" + urllib.parse.urlencode(
        {"namespace": "demo", "service": "Leak", "from": "-1h", "top": "5"}), tah.READ)
    for p in r["pods"]:
        if p["target"].get("pid") == pod_pid:
            return p
    return None


def agent_to_server(env, classes):
    leak = env.spawn(["java", "-Xmx256m", "-Dleak.rate=%d" % RATE, "-cp", classes, "leak.Leak",
                      tah.life(300)], "leak.log")
    quiet = env.spawn(["java", "-Xmx64m", "-Dleak.rate=10", "-cp", classes, "leak.Leak",
                       tah.life(300)], "quiet.log")
    conf = os.path.join(env.tmp, "agent.conf")
    until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    with open(conf, "w") as f:
        f.write("pid %d jprof.io/profile-until=%s jprof.io/events=alloc jprof.io/heap-histogram=10s\n"
                "pid %d jprof.io/profile-until=%s jprof.io/events=cpu\n"
                % (leak.pid, until, quiet.pid, until))
    agent = env.spawn(tah.vgwrap.wrap("jprof-agent", [
        tah.AGENT, "--mode", "host", "--config", conf, "--window", "5s", "--scan-interval", "1s",
        "--heap-min-interval", "5s", "--server", env.base, "--token-file",
        os.path.join(env.tmp, "ingest.tok"), "--metrics-listen", "127.0.0.1:0",
        "--namespace", "demo"]), "agent.log")
    p = tah.wait_for(lambda: (lambda a: a if a and a["histograms"] >= 3 else None)(
        heap_answer(env, leak.pid)), timeout=90, step=1)
    if not check(p is not None, "three class histograms of the leaking JVM reach the server",
                 heap_answer(env, leak.pid)):
        return
    g = p["growth"]
    top = g["classes"][0]
    truth = RATE * 60.0
    check(top["name"] == LEAK, "the leaking class grows fastest (bytes)", [c["name"] for c in
                                                                         g["classes"]])
    err = abs(top["instances_per_min"] - truth) / truth
    check(err <= 0.20, "its rate %.0f/min is within 20 %% of the true %.0f/min (%.1f %%)"
          % (top["instances_per_min"], truth, 100 * err), top)
    print("measured: agent -> server growth of %s: %.0f instances/min over %.1f s, true %.0f "
          "(%.1f %% off); latest histogram took %.1f ms" % (
              LEAK, top["instances_per_min"], g["span_ns"] / 1e9, truth, 100 * err,
              p["latest"]["took_ns"] / 1e6))
    check(p["latest"]["all"] is False and p["latest"]["took_ns"] > 0,
          "live objects only, the time it took recorded", p["latest"]["took_ns"])
    st = tah.get(agent_url(env) + "/status")
    t = tah.target(st, leak.pid)
    check(t is not None and "paused the JVM" in (t.get("message") or ""),
          "the agent's status says how long the last histogram paused the JVM",
          t and t.get("message"))
    check(heap_answer(env, quiet.pid) is None, "no histogram of a JVM that did not ask for one")
    # the old kind came with alloc: its top allocation site is the leaking method
    old = tah.wait_for(lambda: tah.get(env.base + "/api/v1/top?" + urllib.parse.urlencode(
        {"namespace": "demo", "service": "Leak", "kind": "old", "from": "-1h", "by": "samples",
         "limit": "5"}), tah.READ).get("rows"), timeout=30, step=1)
    check(bool(old) and old[0]["name"] == "leak.Leak$SessionCache.remember",
          "old: the top allocation site of the live sampled objects is the leaking method",
          old)
    check(agent.poll() is None, "the agent is still running")


def agent_url(env):
    import re
    text = open(os.path.join(env.tmp, "agent.log")).read()
    m = re.search(r"metrics on port (\d+)", text)
    return "http://127.0.0.1:%s" % (m.group(1) if m else "0")


def main():
    for b in (tah.AGENT, tah.SERVER):
        if not os.access(b, os.X_OK):
            return tah.skip("not built: " + b)
    if not shutil.which("java") or not shutil.which("javac"):
        return tah.skip("no java/javac on PATH")
    tmp = tempfile.mkdtemp(prefix="heap-test-")
    env = tah.Env(tmp)
    try:
        classes = compile_leak(tmp)
        if check(env.start_server(), "jprof-server starts"):
            agent_to_server(env, classes)
    finally:
        for p in env.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if tah.failures:
            for f in sorted(os.listdir(tmp)):
                if f.endswith(".log"):
                    print("---- " + f)
                    print(open(os.path.join(tmp, f)).read()[-3000:])
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(tah.failures))
    return 1 if tah.failures else 0


if __name__ == "__main__":
    sys.exit(main())
