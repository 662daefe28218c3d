#!/usr/bin/env python3
"""test_heap.py - "hungry": what fills the heap and what keeps growing, on a
JVM with a known leak (tests/java/Leak.java: leak.Leak$SessionRecord at
leak.rate objects a second, plus steady garbage).

Checks (JDK 17, java on PATH):
  - local pid: `jprof-top -b -p PID --heap --count 2 -d 10 --format json`
    ranks the leaking class first by growth, its instances per minute within
    20 % of the true rate, and says how long each histogram paused the JVM;
    the Heap screen (H) shows the same under tmux;
  - kubectl: `kubectl jprof heap POD` against the FAKE kubectl
    (fake-kubectl.py: no cluster runs here) with the leak as pid 1 of its own
    pid and mount namespaces, as a container: the same ranking and rate
    through jprof-probe (needs root, unshare, nsenter);
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
import json
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
TOP = os.path.join(tah.BUILD, "jprof-top")
PLUGIN = os.path.join(tah.BUILD, "kubectl-jprof")
PROBE = os.path.join(tah.BUILD, "jprof-probe")
FAKE_KUBECTL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake-kubectl.py")


def start_leak(env, classes, log, rate=RATE):
    p = env.spawn(["java", "-Xmx256m", "-Dleak.rate=%d" % rate, "-cp", classes, "leak.Leak",
                   tah.life(300)], log)
    tah.wait_for(lambda: "ready" in open(os.path.join(env.tmp, log)).read(), timeout=30)
    return p


def check_growth(where, lines):
    """The last JSON line of a --heap run: the leak first, its rate true."""
    docs = [json.loads(x) for x in lines if x.strip()]
    if not check(len(docs) == 2 and docs[1]["growth"], where + ": two histograms, the second "
                 "with the growth", lines[-1:] if lines else lines):
        return
    g = docs[1]["growth"]
    top = g["classes"][0]
    truth = RATE * 60.0
    err = abs(top["instances_per_min"] - truth) / truth
    check(top["name"] == LEAK, where + ": the leaking class grows fastest",
          [c["name"] for c in g["classes"][:5]])
    check(err <= 0.20, "%s: its rate %.0f/min is within 20 %% of the true %.0f/min (%.1f %%)"
          % (where, top["instances_per_min"], truth, 100 * err), top)
    took = docs[1]["histogram"]["took_ns"]
    check(took > 0 and "safepoint" in docs[1]["pause_note"],
          where + ": how long the histogram paused the JVM, and why", took)
    print("measured: %s growth of %s: %.0f instances/min over %.1f s, true %.0f (%.1f %% off); "
          "the histogram took %.1f ms" % (where, LEAK, top["instances_per_min"],
                                          g["span_ns"] / 1e9, truth, 100 * err, took / 1e6))


def local_pid(env, classes):
    leak = start_leak(env, classes, "leak-local.log")
    r = subprocess.run([TOP, "-b", "-p", str(leak.pid), "--heap", "--count", "2", "-d", "10",
                        "--format", "json"], capture_output=True, text=True, timeout=180)
    check(r.returncode == 0, "jprof-top -b -p PID --heap exits 0", r.stderr[-500:])
    check_growth("local pid", r.stdout.splitlines())
    # the Heap screen: H, then r takes one
    sock = os.path.join(env.tmp, "tmux.sock")
    subprocess.run(["tmux", "-S", sock, "new-session", "-d", "-x", "140", "-y", "40",
                    "%s -p %d --heap" % (TOP, leak.pid)], check=True)
    try:
        screen = tah.wait_for(lambda: (lambda t: t if "paused the JVM" in t else None)(
            subprocess.run(["tmux", "-S", sock, "capture-pane", "-p"], capture_output=True,
                           text=True).stdout), timeout=30)
        check(screen and "HEAP  class histogram of live objects" in screen and LEAK in screen,
              "the Heap screen shows the histogram and its pause (jprof-top -p PID --heap)",
              screen)
        subprocess.run(["tmux", "-S", sock, "send-keys", "r"])
        screen = tah.wait_for(lambda: (lambda t: t if "GROWTH over" in t else None)(
            subprocess.run(["tmux", "-S", sock, "capture-pane", "-p"], capture_output=True,
                           text=True).stdout), timeout=30)
        rows = [x for x in (screen or "").splitlines() if LEAK in x]
        check(screen and rows and rows[0].split()[-1] == LEAK and "+" in rows[0],
              "r takes a second one: the growth view, the leak on its first row", screen)
        subprocess.run(["tmux", "-S", sock, "send-keys", "q"])
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)
    leak.kill()


def kubectl(env, classes):
    if os.getuid() != 0 or not shutil.which("unshare") or not shutil.which("nsenter"):
        return tah.skip("kubectl heap needs root, unshare and nsenter (namespaced JVMs)")
    out = os.path.join(env.tmp, "pod.log")
    mark = "-Djprof.test.heap=%d" % os.getpid()
    tar = subprocess.Popen(["tar", "-C", classes, "-cf", "-", "."], stdout=subprocess.PIPE)
    env.procs.append(subprocess.Popen(
        ["unshare", "-p", "-f", "-m", "--mount-proc", "sh", "-c",
         "mount -t tmpfs tmpfs /tmp && mkdir /tmp/classes && tar -C /tmp/classes -xf - && cd / "
         "&& exec java -Xmx128m %s -Dleak.rate=%d -cp /tmp/classes leak.Leak %s </dev/null"
         % (mark, RATE, tah.life(300))], stdin=tar.stdout, stdout=open(out, "w"),
        stderr=subprocess.STDOUT))
    tar.stdout.close()
    tah.wait_for(lambda: "ready" in open(out).read(), timeout=30)
    pid = subprocess.run(["pgrep", "-f", "--", mark], capture_output=True, text=True).stdout.split()
    pid = [p for p in pid if os.path.basename(os.readlink("/proc/%s/exe" % p)) == "java"]
    if not check(bool(pid), "the leak runs as a pod's pid 1", open(out).read()):
        return 1
    kdir = os.path.join(env.tmp, "kube")
    os.makedirs(kdir, exist_ok=True)
    with open(os.path.join(kdir, "state.json"), "w") as f:
        json.dump({"pods": [{"name": "leak-1", "namespace": "shop", "labels": {"app": "leak"},
                             "containers": [{"name": "app", "pid": int(pid[0])}]}],
                   "services": []}, f)
    e = dict(os.environ, FAKE_KUBE_DIR=kdir, KUBECTL=FAKE_KUBECTL, JPROF_PROBE=PROBE)
    r = subprocess.run([PLUGIN, "heap", "-n", "shop", "leak-1", "--count", "2", "--interval",
                        "10s", "-o", "json"], capture_output=True, text=True, env=e, timeout=240)
    check(r.returncode == 0, "kubectl jprof heap exits 0", r.stderr[-800:])
    check_growth("kubectl", r.stdout.splitlines())
    left = subprocess.run(["nsenter", "-t", pid[0], "-p", "-m", "--", "sh", "-c",
                           "ls -A /tmp /dev/shm 2>/dev/null"], capture_output=True, text=True)
    check("jprof" not in left.stdout, "nothing of jprof left in the pod's /tmp", left.stdout)
    return 0


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
    server_screen(env, p["target"]["pod"])


def server_screen(env, pod):
    """jprof-top -n NS -s SVC (the server source): H shows what the agent stored."""
    tok = os.path.join(env.tmp, "read.tok")
    with open(tok, "w") as f:
        f.write(tah.READ + "\n")
    sock = os.path.join(env.tmp, "tmux-srv.sock")
    subprocess.run(["tmux", "-S", sock, "new-session", "-d", "-x", "140", "-y", "40",
                    "%s --server %s --token-file %s -n demo -s Leak --pod %s --screen heap"
                    % (TOP, env.base, tok, pod)], check=True)
    try:
        screen = tah.wait_for(lambda: (lambda t: t if "GROWTH over" in t else None)(
            subprocess.run(["tmux", "-S", sock, "capture-pane", "-p"], capture_output=True,
                           text=True).stdout), timeout=30)
        rows = [x for x in (screen or "").splitlines() if LEAK in x]
        check(screen and "stored by the agent" in screen and rows and rows[0].split()[-1] == LEAK,
              "jprof-top -n NS -s SVC, Heap screen: the stored histograms and their growth, the "
              "leak first", screen)
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)


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
        local_pid(env, classes)
        if kubectl(env, classes) == 77:
            return 77
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
