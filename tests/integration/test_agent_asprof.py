#!/usr/bin/env python3
"""test_agent_asprof.py - jprof-agent's async-profiler engine (--asprof-lib).

Always (no library needed):
  - --asprof-lib with a relative path or a missing file: usage error (3) and
    a one-line message;
  - a file that is not a JVM agent library: the JVM's status says
    recording_failed with the reason, the JVM lives on, and SIGTERM leaves
    nothing in its /tmp/jprof.

Only when JPROF_ASPROF_LIB names a libasyncProfiler.so (one you built or
downloaded; CI has none, so without it this part prints a loud SKIPPED line
and the test passes), with a real JVM and the real jprof-server:
  - cpu, alloc, lock and wall profiles reach the server with the workload's
    hot methods; /status and the server's history say engine async-profiler;
    the library copy is the one mapped in the JVM;
  - a JVM with an async-profiler someone else loaded is skipped: conflict;
  - kill -9 mid-window, start again: the agent recovers its own session (no
    conflict, the same profiler instance, no second copy mapped);
  - SIGTERM: exit 0, no file or directory left in the JVM's /tmp/jprof; a
    third run finds the profiler idle (nothing to recover);
  - a JVM exiting mid-window: reason exited, its files gone.
Run from the build dir. Exit 0 pass (or optional part skipped), 1 fail.
"""
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_agent_host as h  # noqa: E402  (shared server/agent harness)

LIB = os.environ.get("JPROF_ASPROF_LIB", "")
WINDOW = h.WINDOW
check = h.check
failures = h.failures


def start_agent(env, conf, lib, extra=()):
    log = "agent-%d.log" % len(env.procs)
    args = [h.AGENT, "--mode", "host", "--config", conf, "--window", "%ds" % WINDOW,
            "--scan-interval", "1s", "--metrics-listen", "127.0.0.1:0", "--namespace", "demo",
            "--asprof-lib", lib] + list(extra)
    if getattr(env, "server", None):
        args += ["--server", env.base, "--token-file", os.path.join(env.tmp, "ingest.tok")]
    a = env.spawn(args, log)
    m = h.wait_for(lambda: re.search(r"metrics on port (\d+)",
                                     open(os.path.join(env.tmp, log)).read()), 10)
    a.murl = "http://127.0.0.1:%s" % (m.group(1) if m else "0")
    return a


def tgt(agent, pid):
    try:
        return h.target(h.get(agent.murl + "/status"), pid)
    except Exception:
        return None


def jprof_dir(pid, of=None):
    """The files of JVM `of` (default: pid) in pid's /tmp/jprof (in host
    mode the directory is shared by every JVM, other agents may use it)."""
    d = "/proc/%d/root/tmp/jprof" % pid
    if not os.path.isdir(d):
        return None
    return sorted(f for f in os.listdir(d) if re.search(r"-%d(\D|$)" % (of or pid), f))


def mapped_profilers(pid):
    paths = set()
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            if "libasyncProfiler" in line:
                paths.add(line.split(None, 5)[-1].strip())
    return paths


def sampling_handles(pid):
    """perf_event fds and POSIX timers in the JVM: what async-profiler's cpu
    and wall sampling hold while a session runs (perf_events, or timers
    where perf_events are not allowed)."""
    fds = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            fds += "perf_event" in os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            pass
    with open("/proc/%d/timers" % pid) as f:
        timers = sum(1 for line in f if line.startswith("ID:"))
    return fds + timers


def stop(agent, sig=signal.SIGTERM):
    agent.send_signal(sig)
    try:
        return agent.wait(timeout=30)
    except subprocess.TimeoutExpired:
        agent.kill()
        return None


def error_paths(env):
    for bad, want in (("libasyncProfiler.so", "absolute path"),
                      ("/nonexistent/libasyncProfiler.so", "No such file")):
        r = subprocess.run([h.AGENT, "--mode", "host", "--all", "--metrics-listen", "off",
                            "--asprof-lib", bad], capture_output=True, text=True, timeout=20)
        check(r.returncode == 3 and want in r.stderr and r.stderr.count("\n") == 1,
              "--asprof-lib %s: usage error saying '%s'" % (bad, want),
              (r.returncode, r.stderr))
    wl = env.spawn(["java", "-Xmx64m", "-cp", h.CLASSES, "shop.JprofWorkload", "120"], "bad.log")
    fake = os.path.join(env.tmp, "notalib.so")
    with open(fake, "w") as f:
        f.write("this is not a shared library\n")
    conf = os.path.join(env.tmp, "bad.conf")
    with open(conf, "w") as f:
        f.write("pid %d jprof.io/threads=off\n" % wl.pid)
    time.sleep(1)
    agent = start_agent(env, conf, fake)
    t = h.wait_for(lambda: (lambda t: t if t and t["state"] == "failed" else None)(
        tgt(agent, wl.pid)), timeout=30)
    check(t and t["reason"] == "recording_failed" and "loading" in t["message"],
          "a file that is not an agent library: failed, recording_failed, with the reason", t)
    print("NOTE: status of the JVM: %s" % json.dumps(t))
    check(stop(agent) == 0, "SIGTERM after a failed load: exit status 0")
    check(wl.poll() is None, "the JVM lives on after a failed load", wl.poll())
    check(not jprof_dir(wl.pid), "nothing is left in the JVM's /tmp/jprof", jprof_dir(wl.pid))
    wl.kill()
    wl.wait()


def top_names(env, kind, limit=5):
    r = h.get(env.base + "/api/v1/top?namespace=demo&service=JprofWorkload&kind=%s&from=-1h"
              "&limit=%d" % (kind, limit), h.READ)
    return [row["name"] for row in r.get("rows", [])]


def with_library(env):
    if not check(env.start_server(), "jprof-server starts"):
        return
    wl = env.spawn(["java", "-Xmx256m", "-cp", h.CLASSES, "shop.JprofWorkload", "300"], "wl.log")
    short = env.spawn(["java", "-Xmx64m", "-cp", h.CLASSES, "shop.JprofWorkload", "14"],
                      "short.log")
    other = env.spawn(["java", "-Xmx64m", "-cp", h.CLASSES, "shop.JprofWorkload", "300"],
                      "other.log")
    # someone else's async-profiler in `other`: a copy under its usual name
    theirs = os.path.join(env.tmp, "libasyncProfiler.so")
    shutil.copy(LIB, theirs)
    time.sleep(1.5)
    r = subprocess.run(["jcmd", str(other.pid), "JVMTI.agent_load", theirs, "status"],
                       capture_output=True, text=True, timeout=30)
    check(any(theirs in p for p in mapped_profilers(other.pid)),
          "a foreign async-profiler is loaded into the second JVM", (r.stdout, r.stderr))
    conf = os.path.join(env.tmp, "agent.conf")
    with open(conf, "w") as f:
        f.write("pid %d jprof.io/threads=off jprof.io/events=cpu,alloc,lock,wall\n"
                "pid %d jprof.io/threads=off\npid %d jprof.io/threads=off\n"
                % (wl.pid, short.pid, other.pid))
    agent = start_agent(env, conf, LIB)
    check(h.wait_for(lambda: jprof_dir(wl.pid, short.pid), timeout=12),
          "the short-lived JVM has its session files while it is profiled")

    hot = {"cpu": "shop.Checkout.computeTotals", "alloc": "shop.Catalog",
           "lock": "shop.Inventory.reserve", "wall": "shop."}
    for kind, want in hot.items():
        # async-profiler also shows native frames (e.g. clock_gettime under
        # System.nanoTime), so the hot method is looked for in the top five
        names = h.wait_for(lambda: (lambda n: n if any(x.startswith(want) for x in n) else None)(
            top_names(env, kind)), timeout=3 * WINDOW + 15)
        check(names, "%s profile on the server with %s in the top five" % (kind, want),
              top_names(env, kind))
    t = tgt(agent, wl.pid)
    check(t and t.get("engine") == "async-profiler" and t["state"] == "active",
          "/status: engine async-profiler, active", t)
    def history_engine():
        r = h.get(env.base + "/api/v1/targets?namespace=demo&service=JprofWorkload&from=-1h",
                  h.READ)
        return any(x.get("engine") == "async-profiler" and x["target"].get("pid") == wl.pid
                   for x in r.get("history", []))

    # statuses go up once a window: the first may predate the first session
    check(h.wait_for(history_engine, timeout=3 * WINDOW), "the server's history says async-profiler")
    ours = "/tmp/jprof/libasyncProfiler-jprof-%d.so" % wl.pid
    check(mapped_profilers(wl.pid) == {ours}, "our copy is the profiler mapped in the JVM",
          mapped_profilers(wl.pid))
    c = h.wait_for(lambda: (lambda t: t if t and t["reason"] == "conflict" else None)(
        tgt(agent, other.pid)), timeout=20)
    check(c and c["state"] == "skipped", "someone else's async-profiler: skipped, conflict", c)

    ex = h.wait_for(lambda: (lambda t: t if t and t["state"] == "exited" else None)(
        tgt(agent, short.pid)), timeout=30)
    check(ex and ex["reason"] == "exited", "a JVM exiting mid-window: reason exited", ex)
    left = jprof_dir(wl.pid, short.pid)
    check(not left, "the exited JVM's files are gone from the shared /tmp/jprof", left)

    # kill -9 mid-window, then a new agent
    time.sleep(WINDOW / 2)
    stop(agent, signal.SIGKILL)
    files = jprof_dir(wl.pid) or []
    check("agent-session-%d" % wl.pid in files and any(f.endswith(".jfr") for f in files),
          "after kill -9 the marker and the running session's file are there", files)
    before = h.get(env.base + "/api/v1/targets?namespace=demo&service=JprofWorkload&from=-1h",
                   h.READ)
    agent = start_agent(env, conf, LIB)
    t = h.wait_for(lambda: (lambda t: t if t and t["state"] == "active" else None)(
        tgt(agent, wl.pid)), timeout=20)
    check(t and t["reason"] is None and "recovered" in t["message"],
          "the restarted agent recovers its own session, no conflict", t)
    check(len(mapped_profilers(wl.pid)) == 1,
          "still one profiler instance in the JVM (the same one, reloaded by path)",
          mapped_profilers(wl.pid))
    w0 = max([x["windows"] for x in before.get("targets", [])
              if x["target"].get("pid") == wl.pid] or [0])

    def more_windows():
        r = h.get(env.base + "/api/v1/targets?namespace=demo&service=JprofWorkload&from=-1h",
                  h.READ)
        return [x for x in r.get("targets", [])
                if x["target"].get("pid") == wl.pid and x["windows"] >= w0 + 2]

    check(h.wait_for(more_windows, timeout=3 * WINDOW + 10),
          "windows keep arriving after the restart")

    check(sampling_handles(wl.pid) > 0, "while profiling, the JVM holds sampling handles",
          sampling_handles(wl.pid))
    check(stop(agent) == 0, "SIGTERM: exit status 0")
    check(sampling_handles(wl.pid) == 0, "SIGTERM: the profiler is stopped (no sampling handle)",
          sampling_handles(wl.pid))
    check(not jprof_dir(wl.pid), "SIGTERM: no file of this JVM left in /tmp/jprof",
          jprof_dir(wl.pid))
    check(wl.poll() is None and other.poll() is None, "the JVMs are still alive")

    agent = start_agent(env, conf, LIB)
    t = h.wait_for(lambda: (lambda t: t if t and t["state"] == "active" else None)(
        tgt(agent, wl.pid)), timeout=20)
    check(t and "recovered" not in t["message"],
          "a third run finds the profiler idle: the clean exit had stopped it", t)
    check(stop(agent) == 0 and not jprof_dir(wl.pid), "and leaves nothing behind either",
          jprof_dir(wl.pid))


def main():
    for b in (h.AGENT, h.SERVER):
        if not os.access(b, os.X_OK):
            return h.skip("not built: " + b)
    if not shutil.which("java") or not shutil.which("jcmd"):
        return h.skip("no java/jcmd on PATH")
    if not os.path.exists(os.path.join(h.CLASSES, "shop", "JprofWorkload.class")):
        return h.skip("test workload not compiled (make jprof-workload)")
    tmp = tempfile.mkdtemp(prefix="agent-asprof-test-")
    env = h.Env(tmp)
    env.server = None
    try:
        error_paths(env)
        if not LIB:
            print("*" * 72)
            print("SKIPPED: JPROF_ASPROF_LIB not set: the async-profiler engine itself was "
                  "not tested\n(set it to a libasyncProfiler.so you built or downloaded)")
            print("*" * 72)
        elif not os.path.isfile(LIB):
            check(False, "JPROF_ASPROF_LIB names a file", LIB)
        else:
            with_library(env)
    finally:
        for p in env.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if failures:
            for f in sorted(os.listdir(tmp)):
                if f.endswith(".log"):
                    print("---- " + f)
                    print(open(os.path.join(tmp, f)).read()[-3000:])
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
