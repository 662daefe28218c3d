#!/usr/bin/env python3
"""test_faults.py - faults of the environment, with the real programs.

  disk_full   jprof-server's embedded store on a small tmpfs that fills up:
              ingest answers 503 (retryable) while it is full, reads keep
              working, every acknowledged batch stays queryable (also after a
              restart), writes resume once space returns;
  agent_queue the real jprof-agent (host mode, a real JVM) uploading into
              that full store: it keeps its queue, says why in /status, and
              drains it when space returns;
  target_tmp  the target JVM's /tmp full: the agent reports a clear reason
              (target_disk_full) in /status and keeps running; profiling
              resumes when space returns;
  clock_skew  windows from the future (beyond the server's tolerance) or
              older than the retention are refused with a reason; the agent
              counts them (/metrics) and /status says why.

The file systems are tmpfs mounts in a mount namespace of the test's own
(unshare -m, needs root): nothing outside the test sees them, and they go
away with the test. Without root or unshare the test is skipped loudly (it
fails when CI=true). Run from the build dir.
Exit 0 pass, 1 fail, 77 skip.
"""
import errno
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
sys.path.insert(0, HERE)
import server_api as sa  # noqa: E402  (the API suite's server driver and batches)

BUILD = os.getcwd()
AGENT = os.environ.get("JPROF_AGENT", os.path.join(BUILD, "jprof-agent"))
CLASSES = os.environ.get("JPROF_WORKLOAD_CLASSES", os.path.join(BUILD, "tests/java/classes"))
CI = os.environ.get("CI") == "true"
NS = sa.NS
WINDOW = 5
failures = []


def check(cond, what, detail=""):
    print(("PASS: " if cond else "FAIL: ") + what + ("" if cond else "  " + str(detail)[:1500]))
    sys.stdout.flush()
    if not cond:
        failures.append(what)
    return cond


def wait_for(pred, timeout=20.0, step=0.25):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            last = pred()
        except Exception:  # a server restarting, a JSON half written
            last = None
        if last:
            return last
        time.sleep(step)
    return last


def skip(msg):
    if CI:
        print("FAIL: " + msg + " (CI=true: not skipping)")
        return 1
    print("SKIP: " + msg)
    return 77


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=1777" % size, "jprof-test", path],
                   check=True)


def fill(path, leave=0):
    """Writes path/filler until the file system has only `leave` bytes free
    (0: full); returns the bytes written."""
    n = 0
    chunk = b"\0" * 65536
    with open(os.path.join(path, "filler"), "wb", buffering=0) as f:
        while leave == 0 or os.statvfs(path).f_bavail * os.statvfs(path).f_frsize > leave:
            try:
                f.write(chunk)
                f.flush()
                n += len(chunk)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
    if leave:
        return n
    # the last partial block too
    with open(os.path.join(path, "filler2"), "wb", buffering=0) as f:
        for _ in range(64):
            try:
                f.write(b"\0" * 1024)
                f.flush()
            except OSError:
                break
    return n


def unfill(path):
    for name in ("filler", "filler2"):
        try:
            os.unlink(os.path.join(path, name))
        except FileNotFoundError:
            pass


def big_batch(bid, start, pod, nframes=300):
    """A batch of unique stacks (so every one needs new rows in the store)."""
    extra = ["com.shop.gen.Unique_%s_%d.method_with_a_long_name_to_fill_pages" % (bid, k)
             for k in range(nframes)]
    return sa.make_batch(bid, start, pod=pod, docs=False, extra_frames=extra)


def samples_of(s, t0, pod):
    top = s.getj(sa.q("/api/v1/top", namespace="shop", service="checkout", pod=pod, kind="cpu",
                      limit=100000, **{"from": sa.rfc3339(t0 - 2 * 86400 * NS), "to": "now"}))
    return {r["name"] for r in top["rows"]}, top


def case_disk_full(tmp):
    data = os.path.join(tmp, "store")
    mount_tmpfs(data, "6m")
    work = os.path.join(tmp, "srv")
    os.makedirs(work)
    s = sa.Server(work, data).start()
    t0 = time.time_ns() - 30 * 60 * NS
    acked, refused = [], []
    try:
        # 1. fill the disk under a working store
        for i in range(3):
            st, r, _ = s.ingest(big_batch("df-%d" % i, t0 + i * NS, "p1"))
            if st == 200:
                acked.append("df-%d" % i)
        check(len(acked) == 3, "three batches acknowledged before the disk fills", acked)
        filled = fill(data)
        print("     filled the 6 MiB store file system with %d more bytes" % filled)
        answer = None
        for i in range(3, 200):  # bounded: the store's free pages run out quickly
            bid = "df-%d" % i
            st, r, hdr = s.ingest(big_batch(bid, t0 + i * NS, "p1"))
            if st == 200:
                acked.append(bid)
                continue
            refused.append(bid)
            answer = (st, r, hdr)
            break
        check(answer is not None and answer[0] == 503,
              "a full disk: ingest answers 503 (retryable)", answer)
        if answer:
            msg = json.dumps(answer[1])
            print("     503 answer: %s" % msg[:300])
            check("disk" in msg.lower() and "retry" in msg.lower(),
                  "the 503 says the disk is full and to retry", msg)
            check(answer[2].get("Retry-After") is not None,
                  "the 503 carries Retry-After", answer[2])
        # 2. while full: reads work, acknowledged data all there
        names, top = samples_of(s, t0, "p1")
        missing = [b for b in acked if not any(b in n for n in names)]
        check(not missing, "while full: reads work, %d acknowledged batches queryable" % len(acked),
              missing[:5])
        st, r, _ = s.ingest(big_batch("df-x", t0 + 500 * NS, "p1"))
        check(st == 503, "still full: still 503", (st, r))
        # a batch for a day that has no file yet: its file cannot be made
        st, r, _ = s.ingest(big_batch("df-y", t0 - 86400 * NS, "p1"))
        check(st == 503, "full: a batch for a new day file is refused with 503", (st, r))
        st, body = s.get(sa.q("/api/v1/top", namespace="shop", service="checkout", kind="cpu",
                              **{"from": sa.rfc3339(t0 - 2 * 86400 * NS), "to": "now"}))
        check(st == 200, "full: reads over the day whose file could not be made still work",
              (st, body[:300]))
        hz = s.request("GET", "/healthz")
        check(hz[0] == 200, "healthz answers while the disk is full", hz[:2])
        m = s.request("GET", "/metrics", token="admin")[1].decode()
        check(re.search(r'jprof_server_ingest_batches_total\{outcome="rejected",reason="unavailable"\} [1-9]', m) is not None,
              "/metrics counts the 503s", m[:400])
        # 3. space returns: the refused batch and new ones are accepted
        unfill(data)
        starts = {"df-x": t0 + 500 * NS, "df-y": t0 - 86400 * NS}
        for bid in refused + ["df-x", "df-y"]:
            start = starts[bid] if bid in starts else t0 + int(bid[3:]) * NS
            st, r, _ = s.ingest(big_batch(bid, start, "p1"))
            check(st == 200 and r.get("status") == "accepted",
                  "space back: refused batch %s accepted" % bid, (st, r))
            acked.append(bid)
        st, r, _ = s.ingest(big_batch("df-after", t0 + 600 * NS, "p1"))
        check(st == 200, "space back: new batches accepted", (st, r))
        acked.append("df-after")
        # 4. a restart: every acknowledged batch survived
        s.stop()
        s.start()
        names, _ = samples_of(s, t0, "p1")
        missing = [b for b in acked if not any(b in n for n in names)]
        check(not missing, "after a restart: all %d acknowledged batches queryable" % len(acked),
              missing[:5])
        st, r, _ = s.ingest(big_batch(acked[0], t0, "p1"))
        check(r.get("status") == "duplicate", "an acknowledged batch id is still known", r)
    finally:
        s.stop()
        unfill(data)
    return data


def agent_env(tmp, port):
    with open(os.path.join(tmp, "ingest.tok"), "w") as f:
        f.write(sa.TOKENS["ingest"] + "\n")


def start_agent(tmp, conf, server_url, log, extra=()):
    a = subprocess.Popen([AGENT, "--mode", "host", "--config", conf, "--window", "%ds" % WINDOW,
                          "--scan-interval", "1s", "--server", server_url, "--token-file",
                          os.path.join(tmp, "ingest.tok"), "--queue-bytes", "4m",
                          "--metrics-listen", "127.0.0.1:0", "--namespace", "shop"] + list(extra),
                         stdout=open(os.path.join(tmp, log), "a"), stderr=subprocess.STDOUT,
                         cwd=tmp)
    m = wait_for(lambda: re.search(r"metrics on port (\d+)",
                                   open(os.path.join(tmp, log)).read()), 10)
    a.murl = "http://127.0.0.1:%s" % (m.group(1) if m else "0")
    return a


def agent_get(a, path):
    with urllib.request.urlopen(a.murl + path, timeout=5) as r:
        body = r.read().decode()
    return json.loads(body) if path == "/status" else body


def metric(a, name):
    m = re.search(r"^%s (\d+)" % re.escape(name), agent_get(a, "/metrics"), re.M)
    return int(m.group(1)) if m else -1


def stop(p):
    if p and p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def case_agent(tmp):
    """The real agent into a full store; then the target JVM's /tmp full."""
    data = os.path.join(tmp, "store2")
    mount_tmpfs(data, "8m")
    work = os.path.join(tmp, "srv2")
    os.makedirs(work)
    s = sa.Server(work, data).start()
    # the JVM's /tmp (where the agent puts its settings and JFR files): a
    # small tmpfs over /tmp in a mount namespace of the JVM's own, as a
    # container's /tmp is; the agent reaches it through /proc/PID/root, as it
    # does for a container. The test's own files stay where they are even when
    # the clone is itself under /tmp. The classes are copied into the tmpfs
    # before it is moved over /tmp (the original path may be under /tmp).
    # PerfDisableSharedMem: a JVM whose hsperfdata file (mmap, /tmp) meets a
    # full tmpfs dies of SIGBUS, which is the JDK's, not what is tested here
    stage = os.path.join(tmp, "jvmtmp")
    os.makedirs(stage)
    script = ('mount -t tmpfs -o size=96m,mode=1777 jprof-test "$1" && '  # the agent wants 64M free
              'cp -r "$2" "$1/classes" && mount --move "$1" /tmp && '
              'exec java -Xmx128m -XX:+PerfDisableSharedMem -cp /tmp/classes shop.JprofWorkload 400')
    wl = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
                           stage, CLASSES],
                          stdout=open(os.path.join(tmp, "wl.log"), "a"), stderr=subprocess.STDOUT)
    jtmp = "/proc/%d/root/tmp" % wl.pid
    wait_for(lambda: os.path.isdir(os.path.join(jtmp, "classes")), 10)
    agent = None
    try:
        conf = os.path.join(tmp, "agent.conf")
        with open(conf, "w") as f:
            f.write("pid %d jprof.io/events=cpu\n" % wl.pid)
        agent_env(tmp, s.port)
        agent = start_agent(tmp, conf, "http://127.0.0.1:%d" % s.port, "agent.log")
        ok = wait_for(lambda: metric(agent, "jprof_agent_uploads_ok") >= 1, 4 * WINDOW + 30)
        check(ok, "agent: first batches accepted")
        # the store's disk fills: the agent's batches are answered 503 and kept
        fill(data)
        before_ok = metric(agent, "jprof_agent_uploads_ok")
        st = wait_for(lambda: (lambda j: j if j["upload"]["queue_bytes"] > 0
                               and "503" in j["upload"]["last_error"] else None)(
                                   agent_get(agent, "/status")), 6 * WINDOW + 30)
        check(st, "agent: server disk full -> 503, the batch stays queued, /status says why",
              agent_get(agent, "/status").get("upload"))
        if st:
            print("     agent /status upload: %s" % json.dumps(st["upload"])[:300])
        check(metric(agent, "jprof_agent_uploads_rejected") == 0
              and metric(agent, "jprof_agent_uploads_dropped") == 0,
              "agent: nothing refused or dropped while the server's disk is full")
        check(metric(agent, "jprof_agent_uploads_retried") >= 1, "agent: retries counted")
        unfill(data)
        st = wait_for(lambda: (lambda j: j if j["upload"]["queue_bytes"] == 0
                               and metric(agent, "jprof_agent_uploads_ok") > before_ok
                               and not j["upload"]["last_error"] else None)(
                                   agent_get(agent, "/status")), 60)
        check(st, "agent: space back -> the queue drains, last_error clears",
              agent_get(agent, "/status").get("upload"))

        # the target's /tmp nearly full (8 MiB left, the agent wants 64): the
        # agent stops recording before the JDK's own writes fill it (a JFR
        # repository that cannot be written shuts the JVM down)
        fill(jtmp, 8 << 20)

        def reason():
            for t in agent_get(agent, "/status")["targets"]:
                if t["pid"] == wl.pid and t.get("reason") == "target_disk_full":
                    return t
            return None
        t = wait_for(reason, 6 * WINDOW + 40)
        check(t, "target /tmp full: reason target_disk_full in /status",
              agent_get(agent, "/status")["targets"])
        if t:
            print("     target status: %s" % json.dumps(t)[:400])
            check("space" in (t.get("message") or "").lower(),
                  "the message says the space ran out", t)
        if not check(agent.poll() is None and wl.poll() is None, "agent and JVM still running",
                     (agent.poll(), wl.poll())):
            for log in ("wl.log", "agent.log"):
                with open(os.path.join(tmp, log), errors="replace") as f:
                    print("     %s tail: %s" % (log, f.read()[-1500:].replace("\n", "\n     ")))
        unfill(jtmp)
        wc = metric(agent, "jprof_agent_windows_collected")
        back = wait_for(lambda: metric(agent, "jprof_agent_windows_collected") > wc, 8 * WINDOW + 60)
        check(back, "target /tmp has space again: windows are collected again")
    finally:
        stop(agent)
        if wl.poll() is None:
            wl.kill()
            wl.wait()
        s.stop()


def case_clock_skew(tmp):
    """Windows from the future or older than the retention: refused, with a
    reason; the real agent (its clock ahead of the server's) counts them."""
    work = os.path.join(tmp, "srv3")
    os.makedirs(work)
    s = sa.Server(work, os.path.join(tmp, "data3")).start()
    now = time.time_ns()
    try:
        cases = (("sk-ok", now - 60 * NS, None), ("sk-near", now + 120 * NS, None),
                 ("sk-future", now + 3600 * NS, "future"),
                 ("sk-old", now - 9 * 86400 * NS, "retention"))
        for bid, start, code in cases:
            st, r, _ = s.ingest(sa.make_batch(bid, start, docs=False))
            ref = r.get("windows_refused") or []
            if code:
                check(st == 200 and r.get("windows") == 0 and len(ref) == 1
                      and ref[0].get("code") == code and ref[0].get("reason"),
                      "clock skew: %s window refused with code %s and a reason" % (bid, code), r)
            else:
                check(st == 200 and r.get("windows") == 1 and not ref,
                      "clock skew: %s window accepted (within the tolerance)" % bid, r)
        ing = s.getj("/api/v1/ingestion")["server_since_start"]
        check(ing.get("windows_refused_future") == 1 and ing.get("windows_refused_retention") == 1,
              "/api/v1/ingestion counts refused windows by reason", ing)
    finally:
        s.stop()
    # the agent's clock 2 h ahead of the server's (the server's test clock
    # offset moves the server back): every window is refused as future
    s = sa.Server(work, os.path.join(tmp, "data4"), env_extra={"JPROF_TEST_CLOCK_OFFSET": "-2h"})
    s.start()
    wl = subprocess.Popen(["java", "-Xmx128m", "-cp", CLASSES, "shop.JprofWorkload", "400"],
                          stdout=open(os.path.join(tmp, "wl3.log"), "a"), stderr=subprocess.STDOUT)
    agent = None
    try:
        conf = os.path.join(tmp, "agent3.conf")
        with open(conf, "w") as f:
            f.write("pid %d jprof.io/events=cpu\n" % wl.pid)
        agent_env(tmp, s.port)
        agent = start_agent(tmp, conf, "http://127.0.0.1:%d" % s.port, "agent3.log")
        ok = wait_for(lambda: metric(agent, "jprof_agent_windows_refused_future") >= 1,
                      4 * WINDOW + 40)
        check(ok, "agent ahead of the server: refused windows counted "
              "(jprof_agent_windows_refused_future)", agent_get(agent, "/metrics")[-600:])
        # /status is published once per scan: wait for it
        up = wait_for(lambda: (lambda u: u if u.get("windows_refused_future", 0) >= 1
                               and "future" in u.get("last_refused", "") else None)(
                                   agent_get(agent, "/status")["upload"]), 15)
        check(up, "agent /status says windows were refused as from the future",
              agent_get(agent, "/status")["upload"])
        if up:
            print("     agent /status upload: %s" % json.dumps(up)[:400])
        check(metric(agent, "jprof_agent_uploads_rejected") == 0
              and metric(agent, "jprof_agent_uploads_retried") == 0
              and metric(agent, "jprof_agent_uploads_ok") >= 1,
              "the batches themselves were accepted (nothing retried forever)")
    finally:
        stop(agent)
        if wl.poll() is None:
            wl.kill()
            wl.wait()
        s.stop()


def case_torture_upload(tmp):
    """The agent's Nth upload fails (JPROF_FAIL_SITE=upload JPROF_FAIL_AT=N,
    base/failinj.h) for N = 1, 2: the batch stays queued, is retried and
    delivered; nothing is dropped, and the server accepted exactly what the
    agent counts as sent."""
    for n in (1, 2):
        work = os.path.join(tmp, "srv-t%d" % n)
        os.makedirs(work)
        s = sa.Server(work, os.path.join(tmp, "data-t%d" % n)).start()
        conf = os.path.join(tmp, "agent-t.conf")
        with open(conf, "w") as f:
            f.write("# no JVM: heartbeat batches only\npid 999999999\n")
        agent_env(tmp, s.port)
        os.environ.update(JPROF_FAIL_SITE="upload", JPROF_FAIL_AT=str(n))
        try:
            agent = start_agent(tmp, conf, "http://127.0.0.1:%d" % s.port, "agent-t%d.log" % n)
        finally:
            del os.environ["JPROF_FAIL_SITE"], os.environ["JPROF_FAIL_AT"]
        try:
            ok = wait_for(lambda: metric(agent, "jprof_agent_uploads_ok") >= n + 1
                          and metric(agent, "jprof_agent_queue_bytes") == 0, 4 * WINDOW + 20)
            sent = metric(agent, "jprof_agent_uploads_ok")
            ing = s.getj("/api/v1/ingestion")["server_since_start"]
            check(ok and metric(agent, "jprof_agent_uploads_retried") == 1
                  and metric(agent, "jprof_agent_uploads_dropped") == 0
                  and ing["accepted"] + ing["duplicate"] >= sent,
                  "torture: upload %d fails once: retried, delivered, nothing dropped "
                  "(agent ok %d, server accepted %d)" % (n, sent, ing["accepted"]),
                  agent_get(agent, "/metrics")[-800:])
        finally:
            stop(agent)
            s.stop()


def main():
    if os.environ.get("JPROF_FAULTS_NS") != "1":
        if os.geteuid() != 0 or not shutil.which("unshare"):
            return skip("test_faults.py needs root and unshare(1) for its tmpfs mounts")
        env = dict(os.environ, JPROF_FAULTS_NS="1")
        r = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable,
                            os.path.abspath(__file__)] + sys.argv[1:], env=env)
        if r.returncode == 125 or r.returncode == 126:
            return skip("unshare -m failed (%d)" % r.returncode)
        return r.returncode
    only = os.environ.get("JPROF_ONLY", "")
    # not under /tmp: the agent case mounts its own /tmp
    os.makedirs(os.path.join(BUILD, "tests/integration"), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="faults.", dir=os.path.join(BUILD, "tests/integration"))
    mounts = []
    try:
        try:
            mount_tmpfs(os.path.join(tmp, "probe"), "1m")
            mounts.append(os.path.join(tmp, "probe"))
        except (subprocess.CalledProcessError, OSError) as e:
            return skip("cannot mount a tmpfs here: %s" % e)
        for name, fn in (("disk_full", case_disk_full), ("agent", case_agent),
                         ("clock_skew", case_clock_skew), ("torture_upload", case_torture_upload)):
            if only and only not in name:
                continue
            print("---- %s" % name)
            t = time.time()
            try:
                fn(tmp)
            except Exception as e:  # a failing case must not stop the others
                check(False, "%s: %s: %s" % (name, type(e).__name__, e))
            print("---- %s: %.1f s" % (name, time.time() - t))
    finally:
        subprocess.run(["sh", "-c", "grep -o ' %s[^ ]*' /proc/mounts | sort -r | "
                        "while read m; do umount -l $m; done" % tmp])
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
