#!/usr/bin/env python3
"""test_agent_host.py - jprof-agent --mode host end to end: a real JVM (the
test workload), the real jprof-server on its embedded store, the agent with
a config that names the JVM's pid (never --all: other JVMs on this machine
are not ours to profile).

Checks:
  - cpu, alloc and lock profiles reach the server within two windows with
    the workload's hot methods on top; a thread snapshot reaches
    /api/v1/threads;
  - the server stopped for three windows: the queue stays within
    --queue-bytes, drops are counted in /status and, once the server is back,
    in /api/v1/ingestion; data resumes;
  - the agent killed with SIGKILL mid-window and started again: it recovers
    its own session (no conflict), one recording runs;
  - SIGTERM: no recording, marker or file is left in the JVM;
  - a JVM exiting mid-window is reported with reason exited;
  - GC: a JVM that collects often (-Dworkload.gc=true) gets a GC summary per
    window on the server; each stored window equals the summary gc_oracle.py
    computes from an independent JFR recording of the same JVM (`jfr print
    --json`) over that window, and GET /api/v1/gc is the merge of the stored
    windows (exact percentiles, longest pause and its collector and cause).
Run from the build dir. Exit 0 pass, 1 fail, 77 skip (not in CI).
JPROF_VALGRIND=1: the agent and the server run under valgrind's memcheck
(vgwrap.py); every wait on their work is stretched (vgwrap.slow).
"""
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gc_oracle  # noqa: E402
import vgwrap  # noqa: E402
from jfr_oracle import duration_ns, timestamp_ns  # noqa: E402

BUILD = os.getcwd()
SRCDIR = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
AGENT = os.environ.get("JPROF_AGENT", os.path.join(BUILD, "jprof-agent"))
SERVER = os.environ.get("JPROF_SERVER_BIN", os.path.join(BUILD, "jprof-server"))
CLASSES = os.environ.get("JPROF_WORKLOAD_CLASSES", os.path.join(BUILD, "tests/java/classes"))
INGEST = "ingest-token-0123456789abcdef"
READ = "read-token-0123456789abcdef"
WINDOW = 5
failures = []


def check(cond, what, detail=""):
    print(("PASS: " if cond else "FAIL: ") + what + ("" if cond else "  " + str(detail)[:1500]))
    if not cond:
        failures.append(what)
    return cond


def get(url, token=None):
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read().decode())


def wait_for(pred, timeout=20.0, step=0.3):
    """Every wait here bounds the agent's or the server's work: stretched under valgrind."""
    end = time.monotonic() + vgwrap.slow(timeout)
    last = None
    while time.monotonic() < end:
        try:
            last = pred()
        except Exception as e:  # a server restarting, a JSON half written
            last = None
            err = e
        if last:
            return last
        time.sleep(step)
    return last


def life(seconds):
    """A test JVM's lifetime (its argument), stretched under valgrind."""
    return str(int(vgwrap.slow(seconds)))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def skip(msg):
    if os.environ.get("CI") == "true":
        print("FAIL: " + msg)
        return 1
    print("SKIP: " + msg)
    return 77


class Env:
    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []
        self.agent_pids = []
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        with open(os.path.join(tmp, "tokens"), "w") as f:
            f.write("%s ingest *\n%s read *\n" % (INGEST, READ))
        with open(os.path.join(tmp, "ingest.tok"), "w") as f:
            f.write(INGEST + "\n")

    def spawn(self, args, log):
        p = subprocess.Popen(args, stdout=open(os.path.join(self.tmp, log), "a"),
                             stderr=subprocess.STDOUT, cwd=self.tmp)
        self.procs.append(p)
        return p

    def start_server(self):
        self.server = self.spawn(vgwrap.wrap("jprof-server", [SERVER, "--listen", "127.0.0.1:%d" % self.port, "--data-dir",
                                  os.path.join(self.tmp, "data"), "--tokens",
                                  os.path.join(self.tmp, "tokens")]), "server.log")
        ok = wait_for(lambda: urllib.request.urlopen(self.base + "/healthz", timeout=2), 10)
        return bool(ok)

    def start_agent(self, conf, scan="1s"):
        log = "agent-%d.log" % len(self.procs)
        a = self.spawn(vgwrap.wrap("jprof-agent", [AGENT, "--mode", "host", "--config", conf, "--window", "%ds" % WINDOW,
                        "--scan-interval", scan, "--server", self.base, "--token-file",
                        os.path.join(self.tmp, "ingest.tok"), "--queue-bytes", "8k",
                        "--metrics-listen", "127.0.0.1:0", "--namespace", "demo"]), log)
        m = wait_for(lambda: re.search(r"metrics on port (\d+)",
                                       open(os.path.join(self.tmp, log)).read()), 10)
        a.murl = "http://127.0.0.1:%s" % (m.group(1) if m else "0")
        self.agent_pids.append(a.pid)
        return a

    def status(self, agent):
        return get(agent.murl + "/status")


def target(st, pid):
    for t in st["targets"]:
        if t["pid"] == pid:
            return t
    return None


def top(env, kind):
    r = get(env.base + "/api/v1/top?namespace=demo&service=JprofWorkload&kind=%s&from=-1h&limit=5"
            % kind, READ)
    return r["rows"][0]["name"] if r.get("rows") else None


def jfr_check(pid, verbose=False):
    r = subprocess.run(["jcmd", str(pid), "JFR.check"] + (["verbose=true"] if verbose else []),
                       capture_output=True, text=True, timeout=30)
    return r.stdout


ORACLE_JFC = """<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="gc oracle">
  <event name="jdk.GarbageCollection"><setting name="enabled">true</setting>
    <setting name="threshold">0 ms</setting></event>
  <event name="jdk.GCPhasePause"><setting name="enabled">true</setting>
    <setting name="threshold">0 ms</setting></event>
  <event name="jdk.GCHeapSummary"><setting name="enabled">true</setting></event>
</configuration>
"""


def gc_oracle_start(env, pid):
    """An independent recording of the GC events only (the agent records the
    same ones, so its own recording does not change)."""
    jfc = os.path.join(env.tmp, "oracle.jfc")
    with open(jfc, "w") as f:
        f.write(ORACLE_JFC)
    wait_for(lambda: subprocess.run(["jcmd", str(pid), "VM.version"], capture_output=True,
                                    timeout=30).returncode == 0, timeout=20)
    r = subprocess.run(["jcmd", str(pid), "JFR.start", "name=jprof-test-oracle",
                        "settings=" + jfc], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and "Started recording" in r.stdout, "oracle recording starts",
          r.stdout + r.stderr)
    return os.path.join(env.tmp, "oracle.jfr")


def stored_gc_windows(env, service):
    """The GC summaries in the embedded store's day files: (pod, json)."""
    import sqlite3
    rows = []
    for db in sorted(glob.glob(os.path.join(env.tmp, "data", "jprof-*.db"))):
        c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        try:
            rows += [json.loads(j) for (j,) in c.execute(
                "SELECT g.json FROM gc g JOIN targets t ON t.id=g.target WHERE t.service=? "
                "ORDER BY g.time", (service,))]
        finally:
            c.close()
    return rows


def gc_checks(env, pid, oracle_jfr, since_ns):
    """Compares the windows that started after the oracle did (the agent may
    have found the JVM first)."""
    def enough():
        w = [x for x in stored_gc_windows(env, "GcChurn") if x["start"] >= since_ns]
        return w if len(w) >= 3 and sum(x["summary"]["pauses"] for x in w) > 0 else None
    wins = wait_for(enough, timeout=4 * WINDOW + 30, step=1.0)
    if not check(wins, "GC summaries of three windows are stored", stored_gc_windows(env, "GcChurn")):
        return
    lo, hi = wins[0]["start"], wins[-1]["start"] + 1
    def rfc3339(ns):
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 10**9)) + \
            ".%09dZ" % (ns % 10**9)
    g = get(env.base + "/api/v1/gc?" + urllib.parse.urlencode(
        {"namespace": "demo", "service": "GcChurn", "from": rfc3339(lo - 1000),
         "to": rfc3339(hi + 1000), "points": 20}), READ)
    # the oracle is dumped after the query: it holds every window queried
    r = subprocess.run(["jcmd", str(pid), "JFR.dump", "name=jprof-test-oracle",
                        "filename=" + oracle_jfr], capture_output=True, text=True, timeout=60)
    subprocess.run(["jcmd", str(pid), "JFR.stop", "name=jprof-test-oracle"],
                   capture_output=True, timeout=30)
    if not check(r.returncode == 0 and os.path.exists(oracle_jfr), "oracle recording dumped",
                 r.stdout + r.stderr):
        return
    jfr_tool = os.environ.get("JFR") or shutil.which("jfr") or "jfr"
    events = gc_oracle.read_events(jfr_tool, oracle_jfr)
    gc, meta = g["gc"], g["meta"]
    got = [w for w in wins if lo <= w["start"] < hi]
    print("NOTE: GC over %d windows: %d collections, %d pauses, max %.2f ms, %s" % (
        len(got), gc["collections"], gc["pauses"], gc["pause_max_ns"] / 1e6,
        gc["longest"]))
    check(gc["recorded"] and gc["pauses"] > 0 and gc["collections"] > 0 and
          meta["windows"] == len(got), "/api/v1/gc: pauses > 0 over the stored windows", g)

    # each stored window is the oracle's summary of the events its recording
    # holds: an event is written into the recordings running when it is
    # committed, which is when it ends, except a collection's phase pauses:
    # HotSpot sends them when the collection ends (a concurrent cycle's Remark
    # and Cleanup come with its jdk.GarbageCollection, hundreds of ms later,
    # possibly in the next window). Measured by recording windows beside a
    # continuous recording of the same JVM: 16 windows under load, every
    # event placed by this rule.
    def end_of(ev):
        v = ev["values"]
        return timestamp_ns(v["startTime"]) + duration_ns(v.get("duration"))
    gc_end = {e["values"].get("gcId"): end_of(e) for e in events
              if e["type"] == "jdk.GarbageCollection"}

    def commit_of(ev):
        gid = ev["values"].get("gcId")
        if ev["type"] == "jdk.GCPhasePause" and gid in gc_end:
            return max(end_of(ev), gc_end[gid])
        return end_of(ev)

    def in_span(ev, w):
        return w["start"] <= commit_of(ev) <= w["end"]

    # Two recordings convert ticks to ns from their own chunk anchors, so an
    # event committed within EDGE of a window's bound may fall on either side
    # in the other recording: the stored window must equal the oracle's
    # summary of the events inside, with or without each such edge event.
    EDGE = 1_000_000

    def candidates(w):
        def near(e):
            return abs(commit_of(e) - w["start"]) < EDGE or abs(commit_of(e) - w["end"]) < EDGE
        yield gc_oracle.expect([e for e in events if in_span(e, w)])
        inner = [e for e in events if in_span(e, w) and not near(e)]
        edge = [e for e in events if near(e)][:10]
        for mask in range(1 << len(edge)):
            yield gc_oracle.expect(inner + [e for i, e in enumerate(edge) if mask >> i & 1])

    def same_longest(got_l, want_l):
        # two recordings convert ticks to ns from their own chunk anchors:
        # the same event's start may differ by a few microseconds
        return all(got_l.get(k) == v for k, v in want_l.items() if k != "start_ns") and \
            abs(got_l["start_ns"] - want_l["start_ns"]) < 20_000
    exact = 0
    def matches(s, want):
        keys = ("collections", "pauses", "pause_total_ns", "pause_max_ns", "pause_p50_ns")
        same = all(s.get(k) == want.get(k, 0) for k in keys)
        if same and "longest" in want:
            same = same_longest(s["longest"], want["longest"])
        if same and "heap" in want:
            same = s["heap"] == want["heap"]
        return same

    for w in got:
        want = gc_oracle.expect([e for e in events if in_span(e, w)])
        s = w["summary"]
        same = any(matches(s, c) for c in candidates(w))
        exact += same
        if not same:
            print("NOTE: window %d..%d: stored %s, oracle %s" % (
                w["start"], w["end"], json.dumps(s, sort_keys=True),
                json.dumps(want, sort_keys=True)))
    check(exact == len(got), "every stored GC window equals the oracle over its span "
          "(counts, total, p50, max, longest, heap)", "%d of %d" % (exact, len(got)))

    # the API's answer is the merge of the stored windows
    durs = sorted(d for w in got for d in w["pause_ns"])
    n = len(durs)
    rank = (lambda p: durs[max(1, -(-p * n // 100)) - 1])
    check(gc["pauses"] == sum(w["summary"]["pauses"] for w in got) == n and
          gc["pause_total_ns"] == sum(w["summary"]["pause_total_ns"] for w in got) and
          gc["pause_max_ns"] == durs[-1] and gc["pause_p50_ns"] == rank(50) and
          gc["pause_p99_ns"] == rank(99) and meta["percentiles"] == "exact",
          "/api/v1/gc merges the windows exactly (count, total, p50, p99, max)", gc)
    # its longest pause is a real one: the oracle has it, with its collector and cause
    lg = gc["longest"]
    match = [e["values"] for e in events if e["type"] == "jdk.GCPhasePause"
             and e["values"]["gcId"] == lg["gc_id"]
             and duration_ns(e["values"]["duration"]) == gc["pause_max_ns"]
             and abs(timestamp_ns(e["values"]["startTime"]) - lg["start_ns"]) < 20_000]
    col = [e["values"] for e in events if e["type"] == "jdk.GarbageCollection"
           and e["values"]["gcId"] == lg["gc_id"]]
    check(match and col and col[0]["name"] == lg["collector"] and col[0]["cause"] == lg["cause"]
          and match[0]["name"] == lg["phase"],
          "the longest pause, its collector and cause are the oracle's", (lg, match, col))
    pts = g["points"]
    check(len(pts) == 20 and sum(p["pause_total_ns"] for p in pts) == gc["pause_total_ns"],
          "the points add up to the pause total", pts)


def run(env):
    if not check(env.start_server(), "jprof-server starts"):
        return 1
    # the JVMs' lifetimes are stretched with the agent's work under valgrind:
    # they outlive the test (the second one is stopped by the test, section 2)
    wl = env.spawn(["java", "-Xmx256m", "-cp", CLASSES, "shop.JprofWorkload", life(300)], "wl.log")
    short = env.spawn(["java", "-Xmx64m", "-cp", CLASSES, "shop.JprofWorkload", life(300)],
                      "wl2.log")
    dl = None
    src = os.path.join(SRCDIR, "tests/java/Deadlocks.java")
    if shutil.which("javac") and os.path.exists(src):
        subprocess.run(["javac", "-d", os.path.join(env.tmp, "dl"), src], check=True)
        dl = env.spawn(["java", "-Xmx64m", "-cp", os.path.join(env.tmp, "dl"), "live.Deadlocks",
                        life(300)], "deadlocks.log")
    conf = os.path.join(env.tmp, "agent.conf")
    with open(conf, "w") as f:
        # GcChurn: started later (section 2b), found by its service name
        f.write("# the JVMs of this test only\npid %d jprof.io/threads=high\npid %d\n"
                "GcChurn jprof.io/events=cpu\n" % (wl.pid, short.pid))
        if dl:
            # a temporary window (an incident): denser cpu sampling
            until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
            f.write("pid %d jprof.io/threads=high jprof.io/events=cpu jprof.io/profile-until=%s\n"
                    % (dl.pid, until))
    t0 = time.monotonic()
    agent = env.start_agent(conf)

    # 1. profiles within two windows
    hot = {"cpu": "shop.Checkout.computeTotals", "alloc": "shop.Catalog",
           "lock": "shop.Inventory.reserve"}
    for kind, want in hot.items():
        name = wait_for(lambda: (lambda n: n if n and n.startswith(want) else None)(top(env, kind)),
                        timeout=2 * WINDOW + 12)
        check(name, "%s profile on the server, %s on top" % (kind, want),
              (top(env, kind), None if name else env.status(agent)))
    check(time.monotonic() - t0 < vgwrap.slow(2 * WINDOW + 25),
          "profiles arrived within about two windows")
    th = wait_for(lambda: get(env.base + "/api/v1/threads?namespace=demo&service=JprofWorkload",
                              READ), timeout=2 * WINDOW + 10)
    check(th and "checkout-0" in json.dumps(th), "a thread snapshot reaches /api/v1/threads",
          th)

    # jprof's own JFR settings: only the events it reads, sparse sampling
    # when continuous, dense in a temporary window (docs/PERFORMANCE.md).
    # Between two windows no recording runs for a moment: ask again then.
    def period(v):
        m = re.search(r"jdk\.ExecutionSample\)\s*\[[^\]]*period=(\d+ ms)", v)
        return m.group(1) if m else None
    v = wait_for(lambda: (lambda v: v if period(v) else None)(jfr_check(wl.pid, True)), 10) or ""
    check(period(v) == "50 ms" and "jdk.ObjectAllocationSample" in v
          and "jdk.JavaMonitorEnter" in v, "continuous: cpu every 50 ms, alloc and lock events", v)
    check("jdk.ThreadDump" not in v and "jdk.CPULoad" not in v and "jdk.ThreadCPULoad" not in v
          and "jdk.GCConfiguration" not in v and "jdk.ClassLoadingStatistics" not in v,
          "continuous: none of the JDK's periodic events are recorded", v)
    # the GC summary (model/gc.h) needs a few events per collection, no more
    check("jdk.GarbageCollection" in v and "jdk.GCPhasePause" in v and "jdk.GCHeapSummary" in v
          and "jdk.GCPhasePauseLevel1" not in v,
          "continuous: the GC summary's events (per collection, not periodic) are recorded", v)
    if dl:
        v = wait_for(lambda: (lambda v: v if period(v) else None)(jfr_check(dl.pid, True)),
                     10) or ""
        check(period(v) == "10 ms" and "jdk.JavaMonitorEnter" not in v
              and "Allocation" not in v, "temporary window, events=cpu: cpu every 10 ms only", v)

    if dl:
        def cycles():
            r = get(env.base + "/api/v1/deadlocks?namespace=demo&service=Deadlocks&from=-1h",
                    READ)
            text = json.dumps(r)
            return r if all(n in text for n in ("mon-deadlock-1", "mon-deadlock-2",
                                                 "rl-deadlock-1", "rl-deadlock-2")) else None
        r = wait_for(cycles, timeout=3 * WINDOW + 20)
        check(r, "both deadlock cycles reach /api/v1/deadlocks", r or get(
            env.base + "/api/v1/deadlocks?namespace=demo&service=Deadlocks&from=-1h", READ))
        th = get(env.base + "/api/v1/threads?namespace=demo&service=Deadlocks", READ)
        check("mon-deadlock-1" in json.dumps(th), "the deadlocked JVM's threads are served", th)
    else:
        print("NOTE: no javac: the deadlock check is left out")

    # 2. a JVM exiting mid-window: its last status on the server says why.
    # It exits (SIGTERM: its shutdown runs) once the agent profiles it, not
    # after a fixed time: under load the agent may first see a JVM seconds
    # after it started, and one it never saw alive it has nothing to report.
    def short_active():
        r = get(env.base + "/api/v1/targets?namespace=demo&service=JprofWorkload&from=-1h",
                READ)
        return any(t["target"].get("pid") == short.pid and t.get("state") == "active"
                   for t in r.get("targets", []))
    check(wait_for(short_active, timeout=2 * WINDOW + 20), "the second JVM is profiled (active)",
          get(env.base + "/api/v1/targets?namespace=demo&service=JprofWorkload&from=-1h", READ))
    short.terminate()
    short.wait(timeout=vgwrap.slow(30))

    def exited():
        r = get(env.base + "/api/v1/targets?namespace=demo&service=JprofWorkload&from=-1h",
                READ)
        for t in r.get("targets", []):
            if t["target"].get("pid") == short.pid and t.get("reason") == "exited":
                return t
        return None

    ex = wait_for(exited, timeout=30 + 2 * WINDOW)
    check(ex and ex["state"] == "exited", "a JVM that exits is reported with reason exited",
          get(env.base + "/api/v1/targets?namespace=demo&service=JprofWorkload&from=-1h", READ))
    # host mode: its /tmp is ours, and what the agent put there must go with it
    mine = tuple("jprof-%d-" % p for p in env.agent_pids)

    def short_left():
        left = [f for f in os.listdir("/tmp")
                if re.match(r"jprof-\d+-\d+-.*\.(jfr|jfc|json|jar)$", f) and f.startswith(mine)]
        marker = "/tmp/jprof/agent-session-%d" % short.pid
        return left + ([marker] if os.path.exists(marker) else [])
    wait_for(lambda: not short_left(), timeout=10)
    check(not short_left(), "the exited JVM's marker and recording files are removed",
          short_left())

    # 2b. GC: a JVM that collects every few hundred ms and does little else,
    # under a service of its own, with an independent recording of its GC
    # events (started once the short JVM is done: the machine is small)
    gcw = env.spawn(["java", "-Xmx64m", "-Dworkload.gc=true", "-Dworkload.only=gc",
                     "-Djprof.service=GcChurn", "-cp", CLASSES, "shop.JprofWorkload", "300"],
                    "gc.log")
    oracle_jfr = gc_oracle_start(env, gcw.pid)
    gc_checks(env, gcw.pid, oracle_jfr, time.time_ns())
    gcw.kill()  # its work is done
    gcw.wait()

    # 3. the server away for three windows
    env.server.send_signal(signal.SIGTERM)
    env.server.wait(timeout=vgwrap.slow(20))
    time.sleep(3 * WINDOW)
    wait_for(lambda: env.status(agent)["upload"]["dropped_batches"] > 0, timeout=3 * WINDOW)
    up = env.status(agent).get("upload", {})
    check(up.get("queue_bytes", 1 << 30) <= 8 * 1024, "the queue stays within --queue-bytes", up)
    check(up.get("dropped_batches", 0) > 0 and up.get("oldest_dropped"),
          "drops are counted with the oldest dropped time", up)
    check("upload failing" in up.get("last_error", ""), "/status says the upload fails", up)
    dropped = up.get("dropped_batches", 0)
    check(env.start_server(), "jprof-server starts again")
    def drops_on_server():
        r = get(env.base + "/api/v1/ingestion", READ)
        return [c["queue"] for c in r.get("collectors", [])
                if c["queue"]["dropped_batches"] >= dropped > 0]

    # batches queued before the drops carry older counters: the count the
    # agent showed arrives with the first batch encoded after it
    q = wait_for(drops_on_server, timeout=8 * WINDOW)
    ing = get(env.base + "/api/v1/ingestion", READ)
    check(q, "the drops reach the server once it is back", ing)
    before = len(get(agent.murl + "/status")["targets"])
    ok = wait_for(lambda: re.search(r"^jprof_agent_queue_bytes 0$",
                                    urllib.request.urlopen(agent.murl + "/metrics")
                                    .read().decode(), re.M), timeout=3 * WINDOW)
    check(ok and before >= 1, "the queue drains: data resumes")

    # 4. kill -9 mid-window, start again: its own session is recovered.
    # Mid-window means half a window after the agent took one, with its
    # recording seen running: between a window's JFR.stop and the next
    # JFR.start there is none (a kill there is another case, not this one)
    def windows():
        return (target(env.status(agent), wl.pid) or {}).get("windows", 0)
    taken = windows()
    wait_for(lambda: windows() > taken, timeout=3 * WINDOW)
    time.sleep(WINDOW / 2)
    wait_for(lambda: "jprof-agent" in jfr_check(wl.pid), timeout=WINDOW)
    agent.send_signal(signal.SIGKILL)
    agent.wait()
    check("jprof-agent" in jfr_check(wl.pid), "after kill -9 the recording is still running")
    # a kill between stopping a window into a file and removing it leaves
    # that file: the killed run's name for it, planted here
    planted = "/proc/%d/root/tmp/jprof-%d-999-abcdef.jfr" % (wl.pid, agent.pid)
    with open(planted, "wb") as f:
        f.write(b"FLR\0" + b"\0" * 4096)
    agent = env.start_agent(conf)
    t = wait_for(lambda: (lambda t: t if t and t["state"] == "active" else None)(
        target(env.status(agent), wl.pid)), timeout=20)
    check(t and t["reason"] is None and "recovered" in t["message"],
          "the restarted agent recovers its own session, no conflict", t)
    check(not os.path.exists(planted),
          "the recovery removes the killed run's files from the JVM's /tmp", planted)
    check(jfr_check(wl.pid).count("name=jprof-agent") == 1, "one jprof-agent recording runs",
          jfr_check(wl.pid))

    # 5. SIGTERM leaves nothing behind
    agent.send_signal(signal.SIGTERM)
    check(agent.wait(timeout=vgwrap.slow(30)) == 0, "SIGTERM: the agent exits with status 0")
    check("jprof-agent" not in jfr_check(wl.pid), "no recording left running", jfr_check(wl.pid))
    if not check(wl.poll() is None, "the workload JVM is still alive", wl.poll()):
        return 1
    root = "/proc/%d/root/tmp" % wl.pid
    # /tmp is shared with the tests running in parallel: count the files of
    # this test's agents (named jprof-<agent pid>-...), not other jprofs' work
    mine = tuple("jprof-%d-" % p for p in env.agent_pids)
    left = [f for f in os.listdir(root)
            if re.match(r"jprof-\d+-\d+-.*\.(jfr|jfc|json|jar)$", f) and f.startswith(mine)]
    # /tmp/jprof is shared by every JVM on the host (other agents may run):
    # what must go is this JVM's marker and files, named by its pid
    if os.path.isdir(root + "/jprof"):
        left += ["jprof/" + f for f in os.listdir(root + "/jprof")
                 if re.search(r"-%d(\D|$)" % wl.pid, f)]
    check(not left, "no marker or file left in the target's /tmp", left)

    # 6. a JVM exits and the agent is stopped before its next scan sees it:
    # the stop fails, and the marker must still go (host mode: our /tmp)
    # (it exits when told, once profiled: a fixed lifetime may end before a
    # starved agent attaches)
    brief = env.spawn(["java", "-Xmx64m", "-cp", CLASSES, "shop.JprofWorkload", life(300)],
                      "wl3.log")
    conf2 = os.path.join(env.tmp, "agent2.conf")
    with open(conf2, "w") as f:
        f.write("pid %d\n" % brief.pid)

    # the agent scans once at its start and not again for 600 s: a JVM that
    # has not mapped libjvm.so yet is no JVM to it (the attach then waits
    # for its SIGQUIT handler: jvm/attach.h)
    def jvm_loaded():
        try:
            with open("/proc/%d/maps" % brief.pid) as f:
                return "/libjvm.so" in f.read()
        except OSError:
            return False
    check(wait_for(jvm_loaded, 30), "the short JVM has loaded libjvm.so")
    agent = env.start_agent(conf2, scan="600s")
    marker = "/tmp/jprof/agent-session-%d" % brief.pid
    check(wait_for(lambda: os.path.exists(marker), vgwrap.slow(30)), "the short JVM is profiled",
          marker)
    brief.terminate()
    brief.wait(timeout=vgwrap.slow(30))
    agent.send_signal(signal.SIGTERM)
    check(agent.wait(timeout=vgwrap.slow(30)) == 0,
          "SIGTERM after the JVM exited: the agent exits with 0")
    check(not os.path.exists(marker), "no marker left for a JVM that exited before the stop",
          marker)
    return 0


def main():
    for b in (AGENT, SERVER):
        if not os.access(b, os.X_OK):
            return skip("not built: " + b)
    if not shutil.which("java") or not shutil.which("jcmd"):
        return skip("no java/jcmd on PATH")
    if not os.path.exists(os.path.join(CLASSES, "shop", "JprofWorkload.class")):
        return skip("test workload not compiled (make jprof-workload)")
    tmp = tempfile.mkdtemp(prefix="agent-host-test-")
    env = Env(tmp)
    try:
        try:
            run(env)
        except Exception as e:  # said as a check, so CI's summary of FAIL lines shows it
            check(False, "the test ran to its end (%s: %s)" % (type(e).__name__, e),
                  traceback.format_exc())
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
