#!/usr/bin/env python3
"""server_api.py - the jprof-server API suite, for any store.

The store is chosen by the server's command line, so the same suite runs
against the embedded store and ClickHouse:

  JPROF_SERVER_CMD   the server command without --listen/--tokens/--port-file;
                     "{data}" is replaced by a fresh directory per test case
                     (default: "./jprof-server --data-dir {data}")
  JPROF_TOP          jprof-top, the oracle of the JFR upload case (default ./jprof-top)
  JDK17_HOME         the JDK that records the workload for the JFR upload case
                     (default /usr/lib/jvm/java-17-openjdk-amd64, else JAVA_HOME)
  JPROF_WORKLOAD_CLASSES  compiled tests/java/JprofWorkload (default tests/java/classes)
  RECORD_SECONDS     length of that recording (default 8); it is kept in
                     tests/integration/server-api.d/ (JPROF_TEST_JFR_DIR) for
                     6 hours so the ClickHouse suite reuses it
  JPROF_ONLY         run only cases whose name contains this text
  CI=true            a missing tool (zstd, jprof-top, a JDK) fails instead of skipping
  JPROF_VALGRIND=1   every server runs under valgrind's memcheck (vgwrap.py;
                     make check-valgrind-integration)

Only loopback traffic; every loop is bounded. Exit 0 pass, 1 fail, 77 skip.
Tests never depend on today's date: times are computed from the clock, and
old data is made with the server's test-only clock offset
(JPROF_TEST_CLOCK_OFFSET).
"""

import json
import os
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import vgwrap

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.path.join(HERE, "..", ".."))
CI = os.environ.get("CI") == "true"
NS = 1_000_000_000
DAY = 86400 * NS

TOKENS = {
    "ingest": "ingest-token-0123456789",
    "read": "read-token-0123456789abc",
    "admin": "admin-token-0123456789ab",
    "read_other": "read-other-0123456789ab",   # scope: other
    "read_multi": "read-multi-0123456789ab",   # scope: shop,other
    "ingest_other": "ingest-other-012345678",  # scope: other
}
TOKEN_FILE = """# jprof-server tokens for the API suite
{ingest} ingest *
{read} read *
{admin} admin *   # comment after a token
{read_other} read other
{read_multi} read shop,other
{ingest_other} ingest other
""".format(**TOKENS)


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


class Server:
    """One jprof-server process on a loopback port chosen by the kernel."""

    def __init__(self, work, data, env_extra=None, extra_args=(), tokens=True):
        self.tokens = tokens
        self.work = work
        self.data = data
        self.env_extra = env_extra or {}
        self.extra_args = list(extra_args)
        self.proc = None
        self.port = None

    def start(self):
        cmd = os.environ.get("JPROF_SERVER_CMD", "./jprof-server --data-dir {data}")
        args = vgwrap.wrap("jprof-server", [a.replace("{data}", self.data)
                                            for a in shlex.split(cmd)])
        portfile = os.path.join(self.work, "port")
        if os.path.exists(portfile):
            os.unlink(portfile)
        tokfile = os.path.join(self.work, "tokens")
        with open(tokfile, "w") as f:
            f.write(TOKEN_FILE)
        args += ["--listen", "127.0.0.1:0", "--port-file", portfile,
                 "--web-dir", os.path.join(SRCDIR, "web")] + self.extra_args
        if self.tokens:
            args += ["--tokens", tokfile]
        env = dict(os.environ)
        env.pop("JPROF_TEST_CLOCK_OFFSET", None)
        env.update(self.env_extra)
        self.log = open(os.path.join(self.work, "server.log"), "a")
        self.proc = subprocess.Popen(args, env=env, stdout=self.log, stderr=self.log)
        for _ in range(int(vgwrap.slow(200))):
            if os.path.exists(portfile):
                with open(portfile) as f:
                    txt = f.read().strip()
                if txt:
                    self.port = int(txt)
                    return self
            if self.proc.poll() is not None:
                raise Fail("server exited at start: " + self.logtext())
            time.sleep(0.05)
        raise Fail("server did not start within %d s: %s" % (vgwrap.slow(10), self.logtext()))

    def logtext(self):
        try:
            with open(os.path.join(self.work, "server.log")) as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=vgwrap.slow(20))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc and sig == signal.SIGTERM:
            check(self.proc.returncode == 0, "server exit status %s" % self.proc.returncode)
        self.proc = None
        self.log.close()

    scheme = "http"
    ssl_ctx = None

    def url(self, path):
        return "%s://127.0.0.1:%d%s" % (self.scheme, self.port, path)

    def request(self, method, path, body=None, token=None, headers=None):
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + TOKENS.get(token, token)
        req = urllib.request.Request(self.url(path), data=body, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=vgwrap.slow(30), context=self.ssl_ctx) as r:
                return r.status, r.read(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read(), dict(e.headers)

    def get(self, path, token="admin"):
        st, body, _ = self.request("GET", path, token=token)
        return st, body

    def getj(self, path, token="admin"):
        st, body = self.get(path, token)
        check(st == 200, "GET %s -> %d %s" % (path, st, body[:300]))
        return json.loads(body)

    def ingest(self, batch, token="ingest", encoding=None):
        body = batch if isinstance(batch, bytes) else json.dumps(batch).encode()
        headers = {"Content-Type": "application/json"}
        if encoding:
            headers["Content-Encoding"] = encoding
        st, resp, hdr = self.request("POST", "/api/v1/ingest", body, token, headers)
        try:
            return st, json.loads(resp), hdr
        except ValueError:
            return st, {"raw": resp.decode(errors="replace")}, hdr


def target(pod="checkout-1", ns="shop", service="checkout"):
    return {"namespace": ns, "service": service, "pod": pod, "node": "node-1", "pid": 4242}


def make_batch(bid, start_ns, ns="shop", service="checkout", pod="checkout-1", kind="cpu",
               docs=True, collector="agent@node-1", extra_frames=()):
    """A batch with one window of 3 stacks: 30 samples, 300 ms of cpu."""
    frames = ["java.lang.Thread.run", "com.shop.Checkout.price", "com.shop.Tax.compute",
              "com.shop.Cart.add"] + list(extra_frames)
    stacks = [[0, 1], [0, 1, 2], [0, 3]] + [[0, 4 + i] for i in range(len(extra_frames))]
    rows = [[0, 10, 100_000_000], [1, 15, 150_000_000, 0], [2, 5, 50_000_000, 1]]
    rows += [[3 + i, 1, 10_000_000] for i in range(len(extra_frames))]
    b = {
        "batch_id": bid,
        "collector": {"id": collector, "version": "test"},
        "sent": start_ns + 60 * NS,
        "heartbeat": True,
        "queue": {"dropped_batches": 2, "dropped_bytes": 1000, "bytes": 10},
        "frames": frames,
        "frame_kinds": ["interpreted", "jit", "inlined", "native"][:len(frames)]
        + ["jit"] * max(0, len(frames) - 4),
        "threads": ["main", "worker-1"],
        "stacks": stacks,
        "windows": [{"target": target(pod, ns, service), "kind": kind, "start": start_ns,
                     "end": start_ns + 60 * NS, "period_ns": 10_000_000, "events": 31,
                     "rows": rows}],
    }
    if docs:
        t = start_ns + 30 * NS
        b["statuses"] = [{"target": target(pod, ns, service), "time": t, "state": "active",
                          "engine": "jfr", "mode": "temporary", "until": t + 3600 * NS},
                         {"target": target("cart-1", ns, "cart"), "time": t, "state": "skipped",
                          "reason": "conflict", "message": "async-profiler loaded by someone else"}]
        b["thread_snapshots"] = [{"target": target(pod, ns, service), "time": t, "threads": [
            {"id": 1, "name": "main", "state": "RUNNABLE", "cpu_ns": 9_000_000, "cpu_pct": 91.5,
             "stack": ["com.shop.Tax.compute", "java.lang.Thread.run"], "locks_held": ["L1"]},
            {"id": 2, "name": "worker-1", "state": "BLOCKED", "cpu_pct": 0.5,
             "waiting_on": {"lock": "L1", "kind": "enter"}, "owner_id": 1, "stack": []},
            {"id": 3, "name": "worker-2", "state": "BLOCKED", "cpu_pct": 0.0,
             "waiting_on": "L2", "owner_id": 2, "stack": []}],
            "deadlocks": []}]
        b["deadlocks"] = [{"target": target(pod, ns, service), "time": t, "threads": [
            {"name": "a", "id": 7, "waits_for": "LA", "holds": "LB"},
            {"name": "b", "id": 8, "waits_for": "LB", "holds": "LA"}]}]
    return b


def now_ns():
    return time.time_ns()


def q(path, **params):
    return path + "?" + urllib.parse.urlencode(params)


# ---------------------------------------------------------------- cases

def case_basics(ctx):
    s = ctx.server()
    st, body = s.get("/healthz", token=None)
    check(st == 200 and body.strip() == b"ok", "healthz: %d %r" % (st, body))
    st, body, hdr = s.request("GET", "/")
    check(st == 200 and b'<label for="token">Token</label>' in body, "/ serves web/index.html: %d" % st)
    csp = hdr.get("Content-Security-Policy", "")
    check("frame-ancestors 'none'" in csp and "unsafe-inline" not in csp and
          hdr.get("X-Content-Type-Options") == "nosniff", "page security headers: %s" % hdr)
    st, body = s.get("/../etc/passwd", token=None)
    check(st == 404, "path traversal refused: %d" % st)
    st, body = s.get("/api/v1/nothing")
    check(st == 404 and json.loads(body)["error"]["code"] == "not_found", "unknown endpoint 404")
    st, _, _ = s.request("DELETE", "/api/v1/services", token="admin")
    check(st == 405, "DELETE -> 405, got %d" % st)
    st, _, _ = s.request("GET", "/api/v1/ingest", token="admin")
    check(st == 405, "GET ingest -> 405, got %d" % st)


def case_endpoints(ctx):
    s = ctx.server()
    t0 = now_ns() - 10 * 60 * NS
    st, r, _ = s.ingest(make_batch("b-1", t0))
    check(st == 200 and r["status"] == "accepted", "ingest: %d %s" % (st, r))
    check(r["windows"] == 1 and r["stack_rows"] == 3 and r["documents"] == 4, "counts %s" % r)
    st, r, _ = s.ingest(make_batch("b-2", t0 + 60 * NS, pod="checkout-2"))
    check(st == 200 and r["status"] == "accepted", "ingest 2: %s" % r)

    sv = s.getj("/api/v1/services")
    names = [(x["namespace"], x["service"]) for x in sv["services"]]
    check(("shop", "checkout") in names and ("shop", "cart") in names, "services %s" % names)
    co = [x for x in sv["services"] if x["service"] == "checkout"][0]
    check(co["pods"] == 2 and co["kinds"] == ["cpu"], "checkout pods/kinds %s" % co)
    check(sv["meta"]["truncated"] is False, "services not truncated")
    sv1 = s.getj(q("/api/v1/services", limit=1))
    check(len(sv1["services"]) == 1 and sv1["meta"]["truncated"] is True, "services limit=1 cut")

    fg = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout", kind="cpu"))
    m = fg["meta"]
    check(m["samples"] == 60 and m["total"] == 600_000_000, "flame totals %s" % m)
    check(m["unit"] == "ns" and m["kind"] == "cpu" and m["windows"] == 2, "flame meta %s" % m)
    check(m["partial"] is False and m["truncated"] is False and m["omitted_nodes"] == 0, "meta")
    check(m["rows_scanned"] == 6, "rows scanned %s" % m["rows_scanned"])
    tree = fg["tree"]
    check(tree["name"] == "all" and tree["total"] == 600_000_000, "root %s" % tree["name"])
    run = tree["children"][0]
    check(run["name"] == "java.lang.Thread.run" and run["total"] == 600_000_000, "child")
    # the frame kinds the agent sent colour the page as they do jprof-top
    kinds = {c["name"]: c.get("type") for c in run["children"]}
    check(run.get("type") == "interpreted" and kinds.get("com.shop.Checkout.price") == "jit"
          and kinds.get("com.shop.Cart.add") == "native", "frame kinds %s %s" % (run.get("type"), kinds))
    fgp = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout",
                   pod="checkout-2"))
    check(fgp["meta"]["samples"] == 30, "pod filter %s" % fgp["meta"]["samples"])
    fgt = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout", thread="main"))
    check(fgt["meta"]["samples"] == 30, "thread filter: %s" % fgt["meta"]["samples"])
    fgs = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout", by="samples",
                   threads="1"))
    check(fgs["tree"]["total"] == 60 and fgs["meta"]["unit"] == "samples", "by=samples")
    tnames = sorted(c["name"] for c in fgs["tree"]["children"])
    check(tnames == ["[unknown thread]", "main", "worker-1"], "threads level %s" % tnames)
    fg2 = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout", max_nodes=2))
    check(fg2["meta"]["truncated"] is True and fg2["meta"]["nodes"] == 2, "max_nodes cut")
    check(fg2["meta"]["omitted_nodes"] == 3 and fg2["tree"]["total"] == 600_000_000, "omitted")
    empty = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout", kind="alloc"))
    check(empty["meta"]["samples"] == 0 and empty["meta"]["unit"] == "bytes", "empty alloc")
    old = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout", to="-2h"))
    check(old["meta"]["samples"] == 0, "relative to=-2h excludes the data")
    rng = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout",
                   **{"from": rfc3339(t0 - NS), "to": rfc3339(t0 + NS)}))
    check(rng["meta"]["samples"] == 30, "RFC 3339 range selects one window")

    top = s.getj(q("/api/v1/top", namespace="shop", service="checkout", limit=2))
    rows = top["rows"]
    check(len(rows) == 2 and top["meta"]["truncated"] is True and top["meta"]["rows_total"] == 4,
          "top limit %s" % top["meta"])
    check(rows[0]["name"] == "com.shop.Tax.compute" and rows[0]["self"] == 300_000_000,
          "top row 0 %s" % rows[0])
    top_all = s.getj(q("/api/v1/top", namespace="shop", service="checkout", max_nodes=1))
    run_row = [r for r in top_all["rows"] if r["name"] == "java.lang.Thread.run"][0]
    check(run_row["total"] == 600_000_000 and run_row["total_samples"] == 60, "top total")

    th = s.getj(q("/api/v1/threads", namespace="shop", service="checkout"))
    check(len(th["targets"]) == 2, "threads: one per pod")
    th["targets"].sort(key=lambda x: x["target"]["pod"])
    summ = th["targets"][0]["summary"]
    # the evidence the ranking rests on (src/model/busy.h): snapshots, and the
    # cpu windows when their threads are named
    check(summ["busy"]["confidence"] in ("snapshot", "both"), "busy confidence %s" % summ["busy"])
    check(summ["busy"]["threads"][0]["name"] == "main", "busiest is main")
    owners = {o["name"]: o["blocks"] for o in summ["blocked"]["owners"]}
    check(owners.get("main") == 2 and owners.get("worker-1") == 1, "blocks N %s" % owners)
    check(summ["states"] == {"RUNNABLE": 1, "BLOCKED": 2}, "states %s" % summ["states"])
    thf = s.getj(q("/api/v1/threads", namespace="shop", pod="checkout-1", full=1))
    check(len(thf["targets"]) == 1 and "snapshot" in thf["targets"][0]["summary"], "full=1")

    # the snapshot form that jprof-top -b --format json prints (src/wire/snapshot_json.h)
    lock = {"id": "ff708868", "class": "java.lang.Object", "kind": "monitor", "frame": None}
    snap = {"source": "helper", "taken_at": rfc3339(t0), "interval_ms": 1000, "truncated": False,
            "states": {"RUNNABLE": 1, "BLOCKED": 1},
            "threads": [
                {"id": 11, "name": "hot", "state": "RUNNABLE", "cpu_pct": 88.0,
                 "cpu_confidence": "exact", "cpu_ns": 5, "waiting": None, "held": [lock],
                 "stack": ["a.B.c(B.java:1)"]},
                {"id": 12, "name": "stuck", "state": "BLOCKED", "cpu_pct": 0.0,
                 "cpu_confidence": "exact", "waiting": {"kind": "enter", "lock": lock,
                                                        "owner": {"id": 11, "name": "hot"}},
                 "held": [], "stack": []}],
            "locks": [{"lock": lock, "owner": {"id": 11, "name": "hot"}, "owner_blocks": 1,
                       "owner_chain": ["hot"], "chain_cycles": False,
                       "waiters": [{"id": 12, "name": "stuck", "state": "BLOCKED"}]}],
            "deadlocks": []}
    b3 = {"batch_id": "b-3", "collector": {"id": "agent@node-1"},
          "thread_snapshots": [{"target": target("checkout-3"), "time": t0, "snapshot": snap}]}
    st, r, _ = s.ingest(b3)
    check(st == 200 and r["documents"] == 1, "snapshot form accepted: %s" % r)
    th3 = s.getj(q("/api/v1/threads", namespace="shop", pod="checkout-3"))["targets"][0]["summary"]
    check(th3["busy"]["confidence"] == "snapshot" and th3["busy"]["threads"][0]["name"] == "hot"
          and th3["busy"]["threads"][0]["evidence"] == "snapshot"
          and th3["busy"]["snapshot"]["interval_seconds"] == 1.0,
          "snapshot form busy %s" % th3["busy"])
    check(th3["blocked"]["owners"][0]["name"] == "hot" and th3["blocked"]["owners"][0]["blocks"] == 1,
          "snapshot form owners %s" % th3["blocked"])
    check(th3["blocked"]["threads"][0]["waiting_on"] == "java.lang.Object@ff708868",
          "waiting lock text %s" % th3["blocked"]["threads"][0])
    check(th3["locks"][0]["owner_blocks"] == 1, "lock groups: %s" % th3["locks"])
    # a cycle the producer did not report: the server finds it with the same
    # analyses as jprof-top (src/model/analyze.h)
    cyc = {"target": target("checkout-4"), "time": t0, "source": "helper", "threads": [
        {"id": 21, "name": "left", "state": "BLOCKED", "locks_held": ["a.A@a1"],
         "waiting_on": {"lock": "a.B@b2", "kind": "enter"}, "owner_id": 22,
         "stack": ["shop.Left.run(Left.java:9)"]},
        {"id": 22, "name": "right", "state": "BLOCKED", "locks_held": ["a.B@b2"],
         "waiting_on": "a.A@a1", "owner_id": 21, "stack": ["shop.Right.run(Right.java:7)"]},
        {"id": 23, "name": "behind", "state": "BLOCKED", "waiting_on": "a.B@b2",
         "owner_id": 22, "stack": []}], "deadlocks": []}
    b4 = {"batch_id": "b-4", "collector": {"id": "agent@node-1"}, "thread_snapshots": [cyc]}
    st, r, _ = s.ingest(b4)
    check(st == 200 and r["documents"] == 1, "cycle snapshot accepted: %s" % r)
    th4 = s.getj(q("/api/v1/threads", namespace="shop", pod="checkout-4"))["targets"][0]["summary"]
    dls = th4["deadlocks"]
    check(len(dls) == 1 and sorted(m["name"] for m in dls[0]["threads"]) == ["left", "right"],
          "deadlock found from the wait-for graph: %s" % dls)
    check(dls[0]["threads"][0]["waits_for"]["class"] == "a.B" and
          dls[0]["threads"][0]["stack"] == ["shop.Left.run(Left.java:9)"], "member %s" % dls[0])
    bl = {t["name"]: t for t in th4["blocked"]["threads"]}
    check(bl["left"]["cycle"] and bl["behind"]["waiting_on"] == "a.B@b2", "blocked %s" % bl)
    check([c["name"] for c in bl["behind"]["chain"]][:2] == ["right", "left"], "chain %s" %
          bl["behind"]["chain"])
    own = {o["name"]: o["blocks"] for o in th4["blocked"]["owners"]}
    check(own.get("right") == 2 and own.get("left") == 2, "blocks N in a cycle: %s" % own)

    dl = s.getj(q("/api/v1/deadlocks", namespace="shop"))
    check(len(dl["deadlocks"]) == 2, "deadlocks %d" % len(dl["deadlocks"]))
    check(dl["deadlocks"][0]["deadlock"]["threads"][0]["waits_for"] == "LA", "deadlock body")
    check(dl["deadlocks"][0]["time"] >= dl["deadlocks"][1]["time"], "newest first")
    dl1 = s.getj(q("/api/v1/deadlocks", namespace="shop", limit=1))
    check(dl1["meta"]["truncated"] is True, "deadlocks limit")

    tg = s.getj(q("/api/v1/targets", namespace="shop"))
    cart = [t for t in tg["targets"] if t["target"]["service"] == "cart"]
    check(cart and cart[0]["reason"] == "conflict" and cart[0]["state"] == "skipped",
          "status reason %s" % cart)
    check(len(tg["history"]) == 4, "history %d" % len(tg["history"]))
    # the policy the agent reported: temporary until T (an hour after the status)
    act = [t for t in tg["targets"] if t["target"]["service"] != "cart"]
    check(act and all(t["mode"] == "temporary" and t["until"] and t["until"].endswith("Z")
                      for t in act), "targets carry mode and until %s" % act)
    check(cart[0]["mode"] is None and cart[0]["until"] is None,
          "a status without mode says null %s" % cart)
    hm = [h for h in tg["history"] if h.get("mode")]
    check(hm and all(h["mode"] == "temporary" and h["until"] for h in hm), "history mode %s" % hm)

    ing = s.getj("/api/v1/ingestion")
    c = ing["collectors"][0]
    check(c["collector"] == "agent@node-1" and c["accepted"] == 4 and c["windows"] == 2,
          "ingestion %s" % c)
    check(c["queue"]["dropped_batches"] == 2 and c["last_heartbeat"], "queue counters %s" % c)

    ret = s.getj("/api/v1/retention")
    check(ret["retention_days"] == 7 and len(ret["days"]) >= 1, "retention %s" % ret)
    check(sum(d["stack_rows"] for d in ret["days"]) == 6, "retention rows")

    st, body = s.get("/metrics", token="read")
    text = body.decode()
    check(st == 200 and 'jprof_server_ingest_batches_total{outcome="accepted",reason="accepted"} 4'
          in text, "metrics accepted")
    for name in ("jprof_server_http_request_duration_seconds_bucket",
                 "jprof_server_store_partition_rows{day=", "jprof_server_store_oldest_day",
                 "jprof_server_retention_lag_seconds", "jprof_server_store_write_seconds_total",
                 "jprof_server_store_query_seconds_total"):
        check(name in text, "metric %s present" % name)
    st, _ = s.get("/metrics", token=None)
    check(st == 401, "/metrics needs a token: %d" % st)

    for bad in (q("/api/v1/flamegraph", namespace="shop"),
                q("/api/v1/flamegraph", namespace="shop", service="x", kind="heap"),
                q("/api/v1/flamegraph", namespace="shop", service="x", **{"from": "yesterday"}),
                q("/api/v1/flamegraph", namespace="shop", service="x", max_nodes="0"),
                q("/api/v1/top", namespace="shop", service="x", limit="many"),
                q("/api/v1/threads", service="x")):
        st, body = s.get(bad)
        check(st == 400 and json.loads(body)["error"]["message"], "400 for %s: %d" % (bad, st))
    # The query string as received is split and decoded by the server's own
    # parser (api_query.c): escapes in names and values decode, and what is
    # malformed or ambiguous is a 400 that says what and at which byte.
    fg2 = s.getj("/api/v1/flamegraph?namespace=sh%6Fp&servic%65=check%6Fut&kind=cpu&&by=value")
    fg1 = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout", kind="cpu"))
    check(fg2["meta"]["samples"] == fg1["meta"]["samples"] > 0 and fg2["tree"] == fg1["tree"],
          "escaped names and values decode %s" % fg2["meta"])
    for raw, part in (("namespace=shop&service=x%zz", "byte 24"),
                      ("namespace=shop%00&service=x", "%00 (a NUL byte)"),
                      ("namespace=shop&service=x&from=-1h&from=-2h", "'from' is given twice"),
                      ("namespace=shop&service=%C0%AF", "'service' is not valid UTF-8"),
                      ("namespace=shop&service=x&to=%2B100000d", "outside the times"),
                      ("namespace=shop&service=x&from=-1h&to=-2h", "must be before 'to'")):
        st, body = s.get("/api/v1/top?" + raw)
        msg = json.loads(body)["error"]["message"] if st == 400 else ""
        check(st == 400 and part in msg, "%s -> %d %r" % (raw, st, body[:200]))


def rfc3339(ns):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // NS)) + ".%03dZ" % (
        ns % NS // 1_000_000)


def case_auth(ctx):
    s = ctx.server()
    t0 = now_ns() - 5 * 60 * NS
    ok, r, _ = s.ingest(make_batch("a-1", t0))
    check(ok == 200, "seed ingest %s" % r)
    gets = ["/api/v1/services", q("/api/v1/flamegraph", namespace="shop", service="checkout"),
            q("/api/v1/top", namespace="shop", service="checkout"),
            q("/api/v1/flamegraph/diff", namespace="shop", service="checkout", base_to="-30m"),
            q("/api/v1/threads", namespace="shop"), q("/api/v1/deadlocks", namespace="shop"),
            q("/api/v1/targets", namespace="shop"), "/api/v1/ingestion", "/api/v1/retention"]
    for p in gets:
        for tok in (None, "not-a-token-at-all-xxxx"):
            st, body = s.get(p, token=tok)
            check(st == 401, "%s without valid token -> %d" % (p, st))
            check(b"Tax.compute" not in body, "no data in a 401")
        st, body = s.get(p, token="ingest")
        check(st == 403 and b"Tax.compute" not in body, "%s with ingest token -> %d" % (p, st))
        for tok in ("read", "admin"):
            st, _ = s.get(p, token=tok)
            check(st == 200, "%s with %s -> %d" % (p, tok, st))
    # bearer scheme is required; the header value is not echoed
    st, body, _ = s.request("GET", "/api/v1/services",
                            headers={"Authorization": "Basic " + TOKENS["read"]})
    check(st == 401 and TOKENS["read"].encode() not in body, "Basic is not Bearer")
    # namespace scope on reads: 403 and no stack data
    for p in gets[1:7]:
        st, body = s.get(p, token="read_other")
        check(st == 403, "%s outside scope -> %d" % (p, st))
        check(b"Tax.compute" not in body and b"Thread.run" not in body, "no stack data in 403")
    st, body = s.get(q("/api/v1/flamegraph", namespace="shop", service="checkout"),
                     token="read_multi")
    check(st == 200 and b"Tax.compute" in body, "multi-namespace scope may read shop")
    st, body = s.get(q("/api/v1/flamegraph", service="checkout"), token="read_other")
    check(st == 400, "namespace required")
    st, body = s.get(q("/api/v1/deadlocks"), token="read_other")
    check(st == 403, "scoped token must name a namespace: %d" % st)
    sv = json.loads(s.get("/api/v1/services", token="read_other")[1])
    check(sv["services"] == [], "services filtered by scope: %s" % sv["services"])
    # writes: role and scope
    for tok in ("read", None, "bogus-token-xxxxxxxxxxxx"):
        st, r, _ = s.ingest(make_batch("a-2", t0), token=tok)
        check(st == (403 if tok == "read" else 401), "ingest with %s -> %d" % (tok, st))
    st, r, _ = s.ingest(make_batch("a-3", t0), token="ingest_other")
    check(st == 403 and "outside" in r["error"]["message"], "ingest outside scope: %s" % r)
    st, r, _ = s.ingest(make_batch("a-4", t0, ns="other", docs=False), token="ingest_other")
    check(st == 200, "ingest inside scope: %d %s" % (st, r))
    st, r, _ = s.ingest(make_batch("a-5", t0), token="admin")
    check(st == 200, "admin may ingest")
    # the tokens never show up in the log
    log = s.logtext()
    for t in TOKENS.values():
        check(t not in log, "token leaked into the log")


def shape_batch(bid, start_ns, tax, cart, pod="shape-1"):
    """One window: Thread.run > Checkout.price > Tax.compute (tax samples) or
    Cart.add (cart samples), 10 ms each."""
    return {"batch_id": bid, "collector": {"id": "agent@node-1"},
            "frames": ["java.lang.Thread.run", "com.shop.Checkout.price", "com.shop.Tax.compute",
                       "com.shop.Cart.add"],
            "stacks": [[0, 1, 2], [0, 1, 3]],
            "windows": [{"target": target(pod, "shop", "shape"), "kind": "cpu", "start": start_ns,
                         "end": start_ns + 60 * NS, "period_ns": 10_000_000, "events": tax + cart,
                         "rows": [[0, tax, tax * 10_000_000], [1, cart, cart * 10_000_000]]}]}


def gc_record(pod, start_ns, pauses_ms, longest=("GC Pause", "G1Old", "System.gc()"),
              heap=(300, 100), alloc_mb=None, service="checkout"):
    """A per-window GC record as an agent uploads it (docs/API.md, "gc")."""
    ns_p = sorted(int(p * 1e6) for p in pauses_ms)
    n = len(ns_p)
    pct = (lambda k: ns_p[max(0, (k * n + 99) // 100 - 1)]) if n else (lambda k: 0)
    summ = {"from_ns": start_ns, "to_ns": start_ns + 60 * NS, "collections": n, "pauses": n,
            "pauses_from": "jdk.GCPhasePause" if n else None, "pause_total_ns": sum(ns_p),
            "pause_p50_ns": pct(50), "pause_p99_ns": pct(99),
            "pause_max_ns": ns_p[-1] if n else 0,
            "longest": {"start_ns": start_ns + NS, "gc_id": 7, "phase": longest[0],
                        "collector": longest[1], "cause": longest[2]} if n else None,
            "heap": {"gcs": n, "before_bytes": heap[0] << 20, "after_bytes": heap[1] << 20,
                     "after_min_bytes": heap[1] << 20, "after_max_bytes": heap[1] << 20},
            "alloc": None if alloc_mb is None else
            {"bytes": alloc_mb << 20, "span_ns": 60 * NS, "bytes_per_s": 0.0,
             "source": "heap growth between collections"},
            "dropped": 0}
    return {"target": target(pod, service=service), "start": start_ns, "end": start_ns + 60 * NS,
            "summary": summ, "pause_ns": ns_p}


def case_gc(ctx):
    """GC summaries ride in the batch, are kept by the store and merged by
    GET /api/v1/gc into the shape of jprof-top's "gc" object."""
    s = ctx.server()
    t0 = now_ns() - 20 * 60 * NS
    t0 -= t0 % (60 * NS)
    b1 = make_batch("gc-1", t0, docs=False)
    b1["gc"] = [gc_record("checkout-1", t0, [1, 2, 3], alloc_mb=600),
                gc_record("checkout-2", t0, [4, 40], heap=(500, 200), alloc_mb=1200,
                          longest=("Pause Young", "G1New", "G1 Evacuation Pause"))]
    b2 = make_batch("gc-2", t0 + 60 * NS, docs=False)
    b2["gc"] = [gc_record("checkout-1", t0 + 60 * NS, [5, 6], heap=(320, 120), alloc_mb=300),
                gc_record("cart-1", t0 + 60 * NS, [900], service="cart")]
    for b in (b1, b2):
        st, r, _ = s.ingest(b)
        check(st == 200 and r["status"] == "accepted", "ingest %s: %d %s" % (b["batch_id"], st, r))
    check(r["documents"] == 2, "GC records count as documents: %s" % r)
    rng = dict(namespace="shop", service="checkout",
               **{"from": rfc3339(t0 - 60 * NS), "to": rfc3339(t0 + 10 * 60 * NS)})
    g = s.getj(q("/api/v1/gc", points=10, **rng))
    gc, meta = g["gc"], g["meta"]
    allp = sorted([1, 2, 3, 4, 40, 5, 6])
    check(gc["recorded"] is True and gc["pauses"] == 7 and gc["collections"] == 7, "counts %s" % gc)
    check(gc["pause_total_ns"] == int(sum(allp) * 1e6), "total %s" % gc["pause_total_ns"])
    check(gc["pause_max_ns"] == 40_000_000 and gc["pause_p50_ns"] == 4_000_000 and
          gc["pause_p99_ns"] == 40_000_000, "percentiles %s" % gc)
    check(gc["longest"]["collector"] == "G1New" and gc["longest"]["cause"] ==
          "G1 Evacuation Pause" and gc["longest"]["phase"] == "Pause Young", "longest %s" % gc["longest"])
    check(gc["heap"]["before_bytes"] == 320 << 20 and gc["heap"]["after_bytes"] == 120 << 20 and
          gc["heap"]["after_min_bytes"] == 100 << 20 and gc["heap"]["after_max_bytes"] == 200 << 20,
          "heap: the newest window's last collection, min/max over all %s" % gc["heap"])
    check(gc["alloc"]["bytes"] == 2100 << 20 and gc["alloc"]["span_ns"] == 180 * NS,
          "alloc sums %s" % gc["alloc"])
    check(abs(gc["paused_pct"] - 100.0 * sum(allp) * 1e6 / (180 * NS)) < 1e-9,
          "paused share of the covered time %s" % gc["paused_pct"])
    check("heap dump" in gc["cannot_tell"], "cannot_tell")
    check(meta["windows"] == 3 and meta["targets"] == 2 and meta["percentiles"] == "exact" and
          meta["covered_ns"] == 180 * NS and meta["partial"] is False, "meta %s" % meta)
    pts = g["points"]
    check(len(pts) == 10 and sum(p["pauses"] for p in pts) == 7 and
          sum(p["pause_total_ns"] for p in pts) == gc["pause_total_ns"] and
          pts[0]["start_ns"] == t0 - 60 * NS and pts[-1]["end_ns"] == t0 + 10 * 60 * NS,
          "points %s" % pts)
    # one pod; another service; an empty range
    g1 = s.getj(q("/api/v1/gc", pod="checkout-2", **rng))
    check(g1["gc"]["pauses"] == 2 and g1["gc"]["pause_p50_ns"] == 4_000_000, "pod %s" % g1["gc"])
    g2 = s.getj(q("/api/v1/gc", namespace="shop", service="cart"))
    check(g2["gc"]["pause_max_ns"] == 900_000_000, "cart %s" % g2["gc"])
    g3 = s.getj(q("/api/v1/gc", namespace="shop", service="checkout", **{"from": "-30d", "to": "-29d"}))
    check(g3["gc"]["recorded"] is False and g3["gc"]["pauses"] == 0 and g3["gc"]["longest"] is None
          and g3["meta"]["windows"] == 0, "nothing stored %s" % g3)
    # the same conventions as the other queries
    st, body = s.get(q("/api/v1/gc", namespace="shop"))
    check(st == 400 and b"service" in body, "service required: %d %s" % (st, body))
    st, body = s.get(q("/api/v1/gc", namespace="shop", service="checkout", points=0))
    check(st == 400 and b"points" in body, "points range: %d" % st)
    st, body = s.get(q("/api/v1/gc", namespace="shop", service="checkout"), token="read_other")
    check(st == 403, "namespace scope: %d" % st)
    st, body = s.get(q("/api/v1/gc", namespace="shop", service="checkout"), token=None)
    check(st == 401, "auth: %d" % st)


def heap_doc(pod, t_ns, leak, service="checkout", extra=()):
    """A class histogram as the agent uploads it (docs/API.md, "heap_histograms")."""
    classes = [{"name": "[B", "module": "java.base@17", "instances": 5000, "bytes": 4_000_000},
               {"name": "com.shop.Session", "module": "", "instances": leak, "bytes": leak * 144},
               {"name": "java.lang.String", "module": "java.base@17", "instances": 3000,
                "bytes": 72_000}] + list(extra)
    classes.sort(key=lambda c: -c["bytes"])
    return {"target": target(pod, service=service), "time": t_ns,
            "histogram": {"time_ns": t_ns, "took_ns": 40_000_000, "all": False,
                          "total_instances": sum(c["instances"] for c in classes),
                          "total_bytes": sum(c["bytes"] for c in classes),
                          "classes_total": len(classes), "undercounted": 0, "classes": classes}}


def case_heap(ctx):
    """Class histograms ride in the batch, are kept by the store, and GET
    /api/v1/heap answers per pod the latest one and the growth from the
    first one of the range."""
    s = ctx.server()
    t0 = now_ns() - 30 * 60 * NS
    b1 = make_batch("heap-1", t0, docs=False)
    b1["heap_histograms"] = [heap_doc("checkout-1", t0, 1000), heap_doc("checkout-2", t0, 50)]
    b2 = make_batch("heap-2", t0 + 60 * NS, docs=False)
    b2["heap_histograms"] = [heap_doc("checkout-1", t0 + 5 * 60 * NS, 6000)]
    b3 = make_batch("heap-3", t0 + 120 * NS, docs=False)
    b3["heap_histograms"] = [heap_doc("checkout-1", t0 + 10 * 60 * NS, 11000,
                                      extra=[{"name": "com.shop.New", "module": "",
                                              "instances": 2, "bytes": 64}])]
    for b in (b1, b2, b3):
        st, r, _ = s.ingest(b)
        check(st == 200 and r["status"] == "accepted", "ingest %s: %d %s" % (b["batch_id"], st, r))
    rng = dict(namespace="shop", service="checkout",
               **{"from": rfc3339(t0 - 60 * NS), "to": rfc3339(t0 + 20 * 60 * NS)})
    h = s.getj(q("/api/v1/heap", top=2, **rng))
    pods = h["pods"]
    check([p["target"]["pod"] for p in pods] == ["checkout-1", "checkout-2"], "pods %s" % pods)
    p1 = pods[0]
    check(p1["histograms"] == 3 and p1["latest"]["time_ns"] == t0 + 10 * 60 * NS and
          len(p1["latest"]["classes"]) == 2 and p1["latest"]["cut"] is True and
          p1["latest"]["classes_total"] == 4, "latest, top 2 %s" % p1["latest"])
    g = p1["growth"]
    top = g["classes"][0]
    check(g["span_ns"] == 10 * 60 * NS and g["histograms"] == 3 and top["name"] == "com.shop.Session"
          and top["instances_delta"] == 10000 and abs(top["instances_per_min"] - 1000) < 1e-6
          and top["bytes_delta"] == 1_440_000 and len(g["classes"]) == 2,
          "growth first -> latest, the leak first %s" % g)
    check(pods[1]["histograms"] == 1 and pods[1]["growth"] is None, "one histogram: no growth")
    check("safepoint" in h["pause_note"] and h["meta"]["histograms"] == 4 and h["meta"]["pods"] == 2
          and h["meta"]["partial"] is False, "meta %s %s" % (h["pause_note"], h["meta"]))
    h1 = s.getj(q("/api/v1/heap", pod="checkout-1", **dict(rng, **{"from": rfc3339(t0 + 4 * 60 * NS)})))
    check(len(h1["pods"]) == 1 and h1["pods"][0]["growth"]["span_ns"] == 5 * 60 * NS,
          "a narrower range: growth from its first histogram %s" % h1["pods"])
    # refused shapes name the field; the same conventions as the other queries
    bad = make_batch("heap-bad", t0, docs=False)
    bad["heap_histograms"] = [heap_doc("checkout-1", t0, 10)]
    bad["heap_histograms"][0]["histogram"]["classes"][0]["bytes"] = -1
    st, r, _ = s.ingest(bad)
    check(st == 400 and "heap_histograms[0].histogram.classes[0].bytes" in json.dumps(r),
          "a bad histogram is refused naming the field: %d %s" % (st, r))
    st, body = s.get(q("/api/v1/heap", namespace="shop"))
    check(st == 400 and b"service" in body, "service required: %d %s" % (st, body))
    st, body = s.get(q("/api/v1/heap", namespace="shop", service="checkout"), token="read_other")
    check(st == 403, "namespace scope: %d" % st)


def case_diff(ctx):
    """GET /api/v1/flamegraph/diff: a range or a pod against a baseline."""
    s = ctx.server()
    t = now_ns()
    for b in (shape_batch("d-1", t - 40 * 60 * NS, 90, 10), shape_batch("d-2", t - 5 * 60 * NS, 20, 80),
              shape_batch("d-3", t - 5 * 60 * NS, 50, 0, pod="shape-2")):
        st, r, _ = s.ingest(b)
        check(st == 200, "diff seed: %s" % r)
    path = "/api/v1/flamegraph/diff"
    d = s.getj(q(path, namespace="shop", service="shape", pod="shape-1", **{"from": "-10m"},
                 base_from="-45m", base_to="-30m"))
    m = d["meta"]
    check(m["current"]["samples"] == 100 and m["base"]["samples"] == 100, "diff sides %s" % m)
    check(m["unit"] == "ns" and m["partial"] is False and m["truncated"] is False, "diff meta %s" % m)
    top = {r["name"]: r for r in d["top"]}
    cart, tax = top["com.shop.Cart.add"], top["com.shop.Tax.compute"]
    check(abs(cart["self_delta"] - 0.7) < 1e-6 and abs(tax["self_delta"] + 0.7) < 1e-6,
          "self share changes %s %s" % (cart, tax))
    check(cart["self"] == 800_000_000 and cart["base_self"] == 100_000_000, "cart values %s" % cart)
    check(d["top"][0]["name"] in ("com.shop.Cart.add", "com.shop.Tax.compute"), "largest first")
    tree = d["tree"]
    check(tree["total"] == 1_000_000_000 and tree["base_total"] == 1_000_000_000, "root %s" % tree)
    price = tree["children"][0]["children"][0]
    kids = [(c["name"], c["total"], c["base_total"]) for c in price["children"]]
    check(kids == [("com.shop.Tax.compute", 200_000_000, 900_000_000),
                   ("com.shop.Cart.add", 800_000_000, 100_000_000)],
          "children heaviest first by either share: %s" % kids)
    # base_to alone: a baseline as long as the current range, ending there
    d2 = s.getj(q(path, namespace="shop", service="shape", pod="shape-1", **{"from": "-10m"},
                  base_to="-35m"))
    check(d2["meta"]["base"]["samples"] == 100, "base_to alone %s" % d2["meta"]["base"])
    # another pod as the baseline; base_pod= (empty) is every pod
    d3 = s.getj(q(path, namespace="shop", service="shape", pod="shape-1", **{"from": "-10m"},
                  base_pod="shape-2"))
    check(d3["meta"]["base"]["pod"] == "shape-2" and d3["meta"]["base"]["samples"] == 50,
          "base_pod %s" % d3["meta"]["base"])
    d4 = s.getj(path + "?namespace=shop&service=shape&pod=shape-1&from=-10m&base_pod=")
    check(d4["meta"]["base"]["pod"] is None and d4["meta"]["base"]["samples"] == 150,
          "empty base_pod = every pod %s" % d4["meta"]["base"])
    d5 = s.getj(q(path, namespace="shop", service="shape", base_pod="shape-2", max_nodes=2,
                  by="samples", limit=1))
    check(d5["meta"]["truncated"] is True and d5["meta"]["nodes"] == 2 and
          d5["meta"]["omitted_nodes"] == 3 and d5["meta"]["unit"] == "samples", "cut %s" % d5["meta"])
    check(len(d5["top"]) == 1 and d5["meta"]["top_truncated"] is True, "limit")
    st, body = s.get(q(path, namespace="shop", service="shape", base_from="-10m", base_to="-20m"))
    check(st == 400 and b"base_from" in body, "base_from after base_to: %d" % st)
    st, body = s.get(q(path, namespace="shop", service="shape", base_from="yesterday"))
    check(st == 400, "bad base_from: %d" % st)
    # by=both: the flame tree with samples next to the value
    fg = s.getj(q("/api/v1/flamegraph", namespace="shop", service="shape", by="both"))
    check(fg["tree"]["total_samples"] == 250 and fg["tree"]["total"] == 2_500_000_000 and
          fg["meta"]["unit"] == "ns", "by=both %s" % fg["tree"])


def zstd_compress(data, level=3):
    z = shutil.which("zstd")
    if not z:
        return None
    return subprocess.run([z, "-q", "-c", "-%d" % level], input=data, stdout=subprocess.PIPE,
                          check=True).stdout


def case_malformed(ctx):
    s = ctx.server()
    t0 = now_ns() - 5 * 60 * NS
    good = make_batch("m-good", t0)

    def mutate(fn):
        b = json.loads(json.dumps(good))
        fn(b)
        return b

    corpus = [
        (b"", 400, "not valid JSON"),
        (b"{", 400, "not valid JSON"),
        (b"[1,2]", 400, "must be a JSON object"),
        (b'{"batch_id": "x", "batch_id": "y"}', 400, "batch_id: duplicate key"),
        (b'{"batch_id": "\xff\xfe", "collector": {"id": "a"}}', 400, "not valid JSON"),
        (b'{"batch_id": "\\ud800", "collector": {"id": "a"}}', 400, "not valid JSON"),
        (b'{"batch_id": "a\\q", "collector": {"id": "a"}}', 400, "not valid JSON"),
        (b'{"batch_id": "a", "collector": {"id": "a"}} x', 400, "not valid JSON"),
        (b'{"batch_id": "a", "collector": {"id": "a"}, "x": ' + b"[" * 100 + b"]" * 100 + b"}",
         400, "nested too deeply"),
        (b'{"batch_id": "a", "collector": {"id": "a"}, "stacks": [[01]]}', 400, "not valid JSON"),
        (b'{"batch_id": "a", "collector": {"id": "a"}, "stacks": [[1.5]]}', 400, "stacks[0]"),
        (mutate(lambda b: b.pop("batch_id")), 400, "batch_id"),
        (mutate(lambda b: b.update(batch_id="")), 400, "batch_id"),
        (mutate(lambda b: b.update(batch_id="x" * 129)), 400, "batch_id"),
        (mutate(lambda b: b.pop("collector")), 400, "collector"),
        (mutate(lambda b: b["windows"][0].update(kind="heap")), 400, "windows[0].kind"),
        (mutate(lambda b: b["windows"][0].update(start="yesterday")), 400, "windows[0].start"),
        (mutate(lambda b: b["windows"][0].update(end=1)), 400, "windows[0].end"),
        (mutate(lambda b: b["windows"][0]["target"].pop("service")), 400,
         "windows[0].target.service"),
        (mutate(lambda b: b["windows"][0]["rows"].append([99, 1, 1])), 400,
         "windows[0].rows[3]"),
        (mutate(lambda b: b["windows"][0]["rows"].append([0, -1, 1])), 400,
         "windows[0].rows[3]"),
        (mutate(lambda b: b["windows"][0]["rows"].extend([[0, 1, 1]] * 9 + [[0, -1, 1]])), 400,
         "windows[0].rows[12]: row fields must be integers"),
        (mutate(lambda b: b["stacks"].extend([[0]] * 8 + [[0.5]])), 400, "stacks[11]"),
        (mutate(lambda b: b["windows"][0]["rows"].append([0, 1, 1, 9])), 400, "thread index"),
        (mutate(lambda b: b["windows"][0]["rows"].append([0, 1])), 400, "windows[0].rows[3]"),
        (mutate(lambda b: b["stacks"].append([0, 77])), 400, "stacks[3]"),
        (mutate(lambda b: b["frames"].append(5)), 400, "frames[4]"),
        (mutate(lambda b: b.update(windows={})), 400, "windows"),
        (mutate(lambda b: b["thread_snapshots"][0].pop("threads")), 400,
         "thread_snapshots[0]"),
        (mutate(lambda b: b["thread_snapshots"][0]["threads"].append({"id": 9})), 400,
         "thread_snapshots[0].threads[3]"),
        (mutate(lambda b: b["deadlocks"][0].pop("time")), 400, "deadlocks[0].time"),
        (mutate(lambda b: b["statuses"][0].pop("state")), 400, "statuses[0].state"),
        (mutate(lambda b: b.update(gc={"pauses": 1})), 400, "gc: must be an array"),
        (mutate(lambda b: b.update(gc=[5])), 400, "gc[0]: must be an object"),
        (mutate(lambda b: b.update(gc=[gc_record("checkout-1", t0, [1])])
                or b["gc"][0]["summary"].update(pauses=-1)), 400, "gc[0].summary.pauses"),
        (mutate(lambda b: b.update(gc=[gc_record("checkout-1", t0, [1])])
                or b["gc"][0]["summary"]["heap"].update(after_bytes="1")), 400,
         "gc[0].summary.heap.after_bytes"),
        (mutate(lambda b: b.update(gc=[gc_record("checkout-1", t0, [1])])
                or b["gc"][0]["target"].pop("namespace")), 400, "gc[0].target.namespace"),
        (mutate(lambda b: b.update(gc=[gc_record("checkout-1", t0, [1])])
                or b["gc"][0].update(pause_ns=[1, 2])), 400, "gc[0].pause_ns"),
        (mutate(lambda b: b["queue"].update(dropped_batches="2")), 400, "queue.dropped_batches"),
        (mutate(lambda b: b.update(heartbeat="yes")), 400, "heartbeat"),
        # limits -> 413
        (mutate(lambda b: b["stacks"].append(list(range(3)) * 700)), 413, "stacks[3]"),
        (mutate(lambda b: b["frames"].append("x" * 5000)), 413, "frames[4]"),
        (mutate(lambda b: b["windows"][0]["target"].update(pod="p" * 5000)), 413,
         "windows[0].target.pod"),
        (mutate(lambda b: b.update(windows=[b["windows"][0]] * 1001)), 413, "windows"),
    ]
    for body, want, where in corpus:
        st, r, hdr = s.ingest(body if isinstance(body, bytes) else json.dumps(body).encode())
        msg = r.get("error", {}).get("message", "")
        check(st == want, "%s: want %d got %d %s" % (where, want, st, msg))
        check(where in msg, "message names %r: %r" % (where, msg))
        check("Retry-After" not in hdr, "no Retry-After on %d" % st)
    # wrong encodings
    st, r, _ = s.ingest(json.dumps(good).encode(), encoding="br")
    check(st == 415, "br -> 415, got %d" % st)
    st, r, _ = s.ingest(json.dumps(good).encode(), encoding="gzip")
    check(st == 400 and "gzip" in r["error"]["message"], "a body that is not gzip -> 400: %s" % r)
    st, r, _ = s.ingest(b"\x28\xb5\x2f\xfd garbage", encoding="zstd")
    check(st == 400 and "zstd" in r["error"]["message"], "bad zstd -> 400: %s" % r)
    # oversize body: refused from Content-Length before the body is read
    with socket.create_connection(("127.0.0.1", s.port), timeout=10) as so:
        so.sendall(("POST /api/v1/ingest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                    "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" %
                    (TOKENS["ingest"], 1 << 30)).encode())
        so.settimeout(10)
        head = so.recv(4096).decode(errors="replace")
    check(head.startswith("HTTP/1.1 413"), "1 GiB Content-Length -> 413: %r" % head[:80])
    # a body over the limit without a length (chunked) is cut off at the limit
    big = b'{"batch_id":"big","pad":"' + b"x" * (17 << 20) + b'"}'

    def chunks():
        for i in range(0, len(big), 1 << 20):
            yield big[i:i + (1 << 20)]
    req = urllib.request.Request(s.url("/api/v1/ingest"), data=chunks(), method="POST",
                                 headers={"Authorization": "Bearer " + TOKENS["ingest"],
                                          "Transfer-Encoding": "chunked"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            st = resp.status
    except urllib.error.HTTPError as e:
        st = e.code
    except (ConnectionError, urllib.error.URLError):
        st = 413  # the server may close the connection after answering
    check(st == 413, "17 MiB chunked body -> 413, got %s" % st)
    z = zstd_compress(json.dumps(good).encode())
    if z is None:
        ctx.skip_or_fail("zstd tool missing: compressed and bomb bodies not tested")
        return
    st, r, _ = s.ingest(z, encoding="zstd")
    check(st == 200 and r["status"] == "accepted", "zstd batch accepted: %s" % r)
    bomb = zstd_compress(b" " * (300 << 20), 19)
    check(len(bomb) < (1 << 20), "bomb is small: %d" % len(bomb))
    st, r, _ = s.ingest(bomb, encoding="zstd")
    check(st == 413 and "decompressed" in r["error"]["message"], "zstd bomb -> 413: %s" % r)
    # rejections are visible in ingestion health and metrics
    ing = s.getj("/api/v1/ingestion")
    check(ing["server_since_start"]["malformed"] >= 20, "malformed counted %s" %
          ing["server_since_start"])
    check(ing["server_since_start"]["too_large"] >= 6, "too_large counted")
    # still healthy, and nothing of the refused batches was stored
    fg = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout"))
    check(fg["meta"]["samples"] == 30, "only the good batch is stored: %s" % fg["meta"]["samples"])


def case_duplicates_restart(ctx):
    s = ctx.server()
    t0 = now_ns() - 5 * 60 * NS
    for i in range(3):
        st, r, _ = s.ingest(make_batch("d-%d" % i, t0 + i * NS))
        check(st == 200 and r["status"] == "accepted", "first %d: %s" % (i, r))
    st, r, _ = s.ingest(make_batch("d-1", t0))
    check(st == 200 and r["status"] == "duplicate", "duplicate before restart: %s" % r)
    s.stop()
    s.start()
    for i in range(3):
        st, r, _ = s.ingest(make_batch("d-%d" % i, t0 + i * NS))
        check(st == 200 and r["status"] == "duplicate", "after restart %d: %s" % (i, r))
    fg = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout"))
    check(fg["meta"]["samples"] == 90, "counted once: %s" % fg["meta"]["samples"])
    ing = s.getj("/api/v1/ingestion")["collectors"][0]
    check(ing["accepted"] == 3 and ing["duplicate"] == 4, "ingestion dup counts %s" % ing)
    st, body = s.get("/metrics")
    check(b'outcome="duplicate",reason="duplicate"} 3' in body, "duplicates in metrics")


def case_kill9(ctx):
    """kill -9 during sustained ingest: every acknowledged batch survives."""
    s = ctx.server()
    t0 = now_ns() - 20 * 60 * NS
    acked, lock, stop = [], threading.Lock(), threading.Event()

    def writer(w):
        for i in range(2000):  # bounded
            if stop.is_set():
                return
            bid = "k-%d-%d" % (w, i)
            b = make_batch(bid, t0 + (w * 2000 + i) * 1_000_000, pod="p%d" % w, docs=False,
                           extra_frames=["Batch_%d_%d" % (w, i)])
            try:
                st, r, _ = s.ingest(b)
            except Exception:
                return
            if st == 200 and r.get("status") == "accepted":
                with lock:
                    acked.append((w, i))
    ths = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in ths:
        t.start()
    deadline = time.time() + vgwrap.slow(20)
    while time.time() < deadline and len(acked) < 150:
        time.sleep(0.05)
    s.stop(signal.SIGKILL)
    stop.set()
    for t in ths:
        t.join(timeout=60)
    check(len(acked) >= 20, "enough batches acknowledged before the kill: %d" % len(acked))
    s.start()
    top = s.getj(q("/api/v1/top", namespace="shop", service="checkout", limit=100000,
                   **{"from": rfc3339(t0 - NS), "to": "now"}))
    names = {r["name"] for r in top["rows"]}
    missing = [a for a in acked if "Batch_%d_%d" % a not in names]
    check(not missing, "%d acknowledged batches lost after kill -9, e.g. %s" %
          (len(missing), missing[:5]))
    for w, i in acked[:10]:
        st, r, _ = s.ingest(make_batch("k-%d-%d" % (w, i), t0, docs=False))
        check(r.get("status") == "duplicate", "acknowledged batch is a duplicate after restart")
    ctx.note("kill -9: %d acknowledged batches, all queryable" % len(acked))


def case_retention(ctx):
    data = ctx.datadir()
    day = DAY
    # write as if it were 8 days (and 5 days) ago, with the test-only clock offset
    for off_days, bid in ((8, "r-old"), (5, "r-mid")):
        s = ctx.server(data=data, env={"JPROF_TEST_CLOCK_OFFSET": "-%dd" % off_days})
        then = now_ns() - off_days * day
        b = make_batch(bid, then - 10 * 60 * NS, pod="pod-%d" % off_days)
        b["heap_histograms"] = [heap_doc("pod-%d" % off_days, then - 10 * 60 * NS, 10)]
        st, r, _ = s.ingest(b)
        check(st == 200 and r["status"] == "accepted", "write at -%dd: %s" % (off_days, r))
        s.stop()
    s = ctx.server(data=data)
    ret = s.getj("/api/v1/retention")
    days = [d["day"] for d in ret["days"]]
    old_day = time.strftime("%Y-%m-%d", time.gmtime((now_ns() - 8 * day - 10 * 60 * NS) // NS))
    mid_day = time.strftime("%Y-%m-%d", time.gmtime((now_ns() - 5 * day - 10 * 60 * NS) // NS))
    check(old_day not in days, "8-day-old day removed at start: %s" % days)
    check(mid_day in days, "5-day-old day kept: %s" % days)
    check(ret["days_removed"] >= 1, "removal counted")
    check(not any(f.startswith("jprof-" + old_day) for f in os.listdir(data)),
          "the 8-day-old file is gone")
    wide = {"from": "-9d", "to": "now"}
    fg = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout", pod="pod-8",
                  **wide))
    check(fg["meta"]["samples"] == 0, "8-day-old data not served")
    fg = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout", pod="pod-5",
                  **wide))
    check(fg["meta"]["samples"] == 30, "5-day-old data served")
    hp = s.getj(q("/api/v1/heap", namespace="shop", service="checkout", **wide))
    check([p["target"]["pod"] for p in hp["pods"]] == ["pod-5"],
          "class histograms: the 8-day-old one removed with its day, the 5-day-old one kept: %s"
          % [p["target"]["pod"] for p in hp["pods"]])
    # a window 8 days old is refused with its reason, and counted
    st, r, _ = s.ingest(make_batch("r-late", now_ns() - 8 * day, docs=False))
    check(st == 200 and r["windows"] == 0 and r["windows_refused"] and
          r["windows_refused"][0]["reason"] == "older than the retention", "refused: %s" % r)
    st, body = s.get("/metrics")
    check(b'jprof_server_ingest_windows_refused_total{reason="retention"} 1' in body,
          "refusal counted in metrics")
    # the old batch id was forgotten with its day: not a duplicate any more, but still refused
    st, r, _ = s.ingest(make_batch("r-old", now_ns() - 8 * day, docs=False))
    check(r["status"] == "accepted" and r["windows"] == 0, "forgotten id: %s" % r)
    # the retention job on a schedule: the clock moves on while the server runs
    s.stop()
    s = ctx.server(data=data, env={"JPROF_TEST_CLOCK_OFFSET": "3d"})
    ret = s.getj("/api/v1/retention")
    check(mid_day not in [d["day"] for d in ret["days"]], "5+3 days old removed at start")


# ---- JFR upload: a recording made now, checked against jprof-top -b --jfr

JFR_KINDS = ("cpu", "wall", "alloc", "lock", "park", "io", "old")
JFR_CACHE_MAX_AGE = 6 * 3600  # a cached recording older than this is made again
_jfr_recording = []


def jfr_recording():
    """(path, None) of a JFR file recorded by this run (or a recent one), or
    (None, why). One recording of RECORD_SECONDS (default 8) of the test
    workload with the JDK's own recorder, kept in the build dir so the
    ClickHouse suite (another process) reuses it. The shared fixtures are not
    used: they carry their recording date and fall out of the retention."""
    if _jfr_recording:
        return _jfr_recording[0]
    cache = os.environ.get("JPROF_TEST_JFR_DIR",
                           os.path.join(os.getcwd(), "tests", "integration", "server-api.d"))
    path = os.path.join(cache, "workload.jfr")
    fresh = os.path.exists(path) and time.time() - os.path.getmtime(path) < JFR_CACHE_MAX_AGE
    if not fresh:
        jhome = None
        for cand in (os.environ.get("JDK17_HOME"), "/usr/lib/jvm/java-17-openjdk-amd64",
                     os.environ.get("JAVA_HOME")):
            if cand and os.access(os.path.join(cand, "bin", "java"), os.X_OK):
                jhome = cand
                break
        if not jhome:
            _jfr_recording.append((None, "no JDK found (JDK17_HOME, JAVA_HOME)"))
            return _jfr_recording[0]
        os.makedirs(cache, exist_ok=True)
        tmp = "%s.%d.tmp" % (path, os.getpid())
        env = dict(os.environ)
        env.setdefault("JPROF_WORKLOAD_CLASSES",
                       os.path.join(os.getcwd(), "tests", "java", "classes"))
        secs = os.environ.get("RECORD_SECONDS", "8")
        p = subprocess.run([os.path.join(HERE, "record-jfr.sh"), jhome, tmp, secs], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        if p.returncode != 0:
            raise Fail("record-jfr.sh failed (%d): %s" % (p.returncode, p.stdout[-1500:]))
        os.replace(tmp, path)  # atomic: a concurrent suite sees a whole file or none
    _jfr_recording.append((path, None))
    return _jfr_recording[0]


def jprof_top_json(top, path, kind, value):
    """jprof-top -b --jfr PATH --format json: the parsed object, or None when
    the file has no events of this kind."""
    p = subprocess.run([top, "-b", "--jfr", path, "--format", "json", "--event", kind,
                        "--value", value], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    if p.returncode != 0:
        check(b"no %s events" % kind.encode() in p.stderr,
              "jprof-top -b --jfr --event %s failed (%d): %s" % (kind, p.returncode,
                                                                p.stderr[:300]))
        return None
    return json.loads(p.stdout)


def tree_top(tree):
    """{frame name: [self, total]} of a flame tree, totals recursion-safe (a
    frame counts once per stack however often it recurs), as a top table is."""
    out = {}
    stack = [(tree, frozenset())]
    while stack:
        node, above = stack.pop()
        for c in node.get("children", ()):
            row = out.setdefault(c["name"], [0, 0])
            row[0] += c["self"]
            if c["name"] not in above:
                row[1] += c["total"]
            stack.append((c, above | {c["name"]}))
    return out


def jprof_top_rows(top, path, kind, n):
    """The first n rows of jprof-top -b --format top (samples): [(name, self, total)]."""
    p = subprocess.run([top, "-b", "--jfr", path, "--format", "top", "--event", kind],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    check(p.returncode == 0, "jprof-top --format top %s: %s" % (kind, p.stderr[:300]))
    rows = []
    for line in p.stdout.decode().splitlines():
        f = line.split(None, 4)
        if len(f) == 5 and f[0].isdigit() and f[2].isdigit():
            rows.append((f[4], int(f[0]), int(f[2])))
    return rows[:n]


def check_jfr_top(s, ns, svc, kind, rng, by_samples, by_value, top_rows):
    """/api/v1/top against the top table of jprof-top's trees: the server's 10
    first rows and jprof-top's 10 first rows, self and total, samples and value."""
    want_s, want_v = tree_top(by_samples["tree"]), tree_top(by_value["tree"])
    got = s.getj(q("/api/v1/top", namespace=ns, service=svc, kind=kind, limit=100000, **rng))
    check(got["meta"]["truncated"] is False, "%s top cut at limit=100000" % kind)
    rows = {r["name"]: r for r in got["rows"]}
    check(set(rows) == set(want_s), "%s top: frames differ: server only %s, jprof-top only %s" %
          (kind, sorted(set(rows) - set(want_s))[:5], sorted(set(want_s) - set(rows))[:5]))
    # the server's first rows (by self value) against jprof-top's numbers
    for r in got["rows"][:10]:
        w = (want_s[r["name"]][0], want_s[r["name"]][1], want_v[r["name"]][0],
             want_v[r["name"]][1])
        g = (r["self_samples"], r["total_samples"], r["self"], r["total"])
        check(g == w, "%s top %s: server self/total samples, value %s, jprof-top %s" %
              (kind, r["name"], g, w))
    want_order = sorted(want_v.values(), key=lambda x: (-x[0], -x[1]))[:10]
    got_order = [[r["self"], r["total"]] for r in got["rows"][:10]]
    check([x[0] for x in got_order] == [x[0] for x in want_order],
          "%s top: server order by self differs: %s vs %s" % (kind, got_order, want_order))
    # jprof-top's own top table (samples), row by row
    for name, self_, total in top_rows:
        r = rows.get(name)
        check(r is not None and (r["self_samples"], r["total_samples"]) == (self_, total),
              "%s top %s: jprof-top --format top %d/%d, server %s" %
              (kind, name, self_, total, r and (r["self_samples"], r["total_samples"])))
        check(want_s[name] == [self_, total], "%s: jprof-top's tree and table disagree on %s" %
              (kind, name))


def case_jfr_upload(ctx):
    top = os.environ.get("JPROF_TOP", "./jprof-top")
    if not os.access(top, os.X_OK):
        ctx.skip_or_fail("jprof-top missing: JFR upload not tested")
        return
    path, why = jfr_recording()
    if not path:
        ctx.skip_or_fail("cannot record a JFR file: %s" % why)
        return
    want = {}
    for kind in JFR_KINDS:
        a = jprof_top_json(top, path, kind, "samples")
        if a is not None:
            want[kind] = (a, jprof_top_json(top, path, kind, "total"))
    # the workload and record-jfr.sh's settings give every kind but wall
    check({"cpu", "alloc", "lock", "park"} <= set(want),
          "recording lacks kinds: has %s" % sorted(want))
    meta = want["cpu"][0]["meta"]
    # the query range comes from the recording itself: no dependence on today
    rng = {"from": rfc3339(parse_rfc3339(meta["start"]) - 60 * NS),
           "to": rfc3339(parse_rfc3339(meta["end"]) + 60 * NS)}
    s = ctx.server()
    with open(path, "rb") as f:
        body = f.read()
    up = q("/api/v1/ingest/jfr", namespace="shop", service="recorded", pod="pod-a")
    st, resp, _ = s.request("POST", up, body, "ingest")
    r = json.loads(resp)
    check(st == 200 and r["status"] == "accepted" and r["windows"] == len(want),
          "jfr upload: %d %s (kinds %s)" % (st, r, sorted(want)))
    st, resp, _ = s.request("POST", up, body, "ingest")
    check(json.loads(resp)["status"] == "duplicate", "same file twice is a duplicate")
    z = zstd_compress(body)
    if z is not None:
        st, resp, _ = s.request("POST", q("/api/v1/ingest/jfr", namespace="shop",
                                          service="recorded-z", pod="pod-a"), z, "ingest",
                                {"Content-Encoding": "zstd"})
        check(st == 200 and json.loads(resp)["status"] == "accepted", "zstd JFR upload: %d" % st)
    for kind, (by_samples, by_value) in sorted(want.items()):
        w = by_samples["meta"]
        for svc in ("recorded", "recorded-z") if z is not None else ("recorded",):
            got = s.getj(q("/api/v1/flamegraph", namespace="shop", service=svc, kind=kind,
                           **rng))["meta"]
            check((got["samples"], got["total"]) == (w["samples"], w["total"]),
                  "%s %s flame totals: server %s/%s, jprof-top %s/%s" %
                  (svc, kind, got["samples"], got["total"], w["samples"], w["total"]))
        check(w["samples"] > 0 and by_value["meta"]["total"] == w["total"], "%s meta" % kind)
        check_jfr_top(s, "shop", "recorded", kind, rng, by_samples, by_value,
                      jprof_top_rows(top, path, kind, 10))
        ctx.note("%s: %d samples, total %d: flame and top 10 equal to jprof-top" %
                 (kind, w["samples"], w["total"]))
    st, resp, _ = s.request("POST", q("/api/v1/ingest/jfr", namespace="shop", service="x"),
                            b"not a jfr file at all", "ingest")
    check(st == 400, "garbage JFR -> 400, got %d" % st)
    st, resp, _ = s.request("POST", q("/api/v1/ingest/jfr", namespace="shop", service="x"),
                            body[:len(body) // 3], "ingest")
    ctx.note("a recording cut at a third: %d %s" % (st, resp[:120]))
    check(st in (200, 400), "cut JFR -> 200 (partial) or 400, got %d" % st)
    st, resp, _ = s.request("POST", q("/api/v1/ingest/jfr", service="x"), body, "ingest")
    check(st == 400, "namespace required -> 400")
    st, resp, _ = s.request("POST", q("/api/v1/ingest/jfr", namespace="shop", service="x"),
                            body, "ingest_other")
    check(st == 403, "jfr upload outside scope -> 403")


FIXTURES = os.environ.get("JPROF_FIXTURES", os.path.join(HERE, "..", "fixtures", "jfr"))
# Each kind of the newer recorders, from the file that has it (fixtures ship
# with the project; the JDK 25 cputime recording is made now).
NEW_KIND_FILES = (
    ("asprof-all.jfr", ("cpu", "alloc", "nativemem", "live", "nativelock")),
    ("asprof2-cpu-wall.jfr", ("cpu", "wall")),
)


def fixture_now(name, dirpath):
    """A copy of fixture `name` moved to the last minutes: the server keeps 7
    days and the fixtures carry their recording date. Events are ticks after
    their chunk header's start time, so rewriting that start (bytes 32..39 of
    each header) moves every event; jprof-top and the server read the same
    copy, so the comparison stays exact."""
    with open(os.path.join(FIXTURES, name), "rb") as f:
        data = bytearray(f.read())
    off, start = 0, now_ns() - 600 * NS
    while off + 68 <= len(data) and data[off:off + 4] == b"FLR\0":
        size, = struct.unpack(">q", data[off + 8:off + 16])
        dur, = struct.unpack(">q", data[off + 40:off + 48])
        struct.pack_into(">q", data, off + 32, start)
        start += dur
        off += size
    path = os.path.join(dirpath, "now-" + name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def jdk25_cputime_recording(dirpath):
    """A JDK 25 recording with jdk.CPUTimeSample, or None without JDK 25."""
    jhome = os.environ.get("JDK25_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
    if not os.access(os.path.join(jhome, "bin", "java"), os.X_OK):
        return None
    path = os.path.join(dirpath, "jdk25-cputime.jfr")
    env = dict(os.environ)
    env["JPROF_JFR_EXTRA"] = "jdk.CPUTimeSample#enabled=true,jdk.CPUTimeSample#throttle=10ms"
    env.setdefault("JPROF_WORKLOAD_CLASSES", os.path.join(os.getcwd(), "tests", "java", "classes"))
    p = subprocess.run([os.path.join(HERE, "record-jfr.sh"), jhome, path,
                        os.environ.get("RECORD_SECONDS", "8")], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    if p.returncode != 0:
        raise Fail("record-jfr.sh (JDK 25) failed (%d): %s" % (p.returncode, p.stdout[-1500:]))
    return path


def case_jfr_new_kinds(ctx):
    """nativemem, live, nativelock, the cpu/wall split of async-profiler 2.x
    and JDK 25 cputime through JFR ingest, both stores' query API: the same
    flame totals and top tables as jprof-top on the same file."""
    top = os.environ.get("JPROF_TOP", "./jprof-top")
    if not os.access(top, os.X_OK):
        ctx.skip_or_fail("jprof-top missing: new kinds not tested")
        return
    s = ctx.server()
    files = [(fixture_now(name, ctx.root), kinds) for name, kinds in NEW_KIND_FILES]
    rec = jdk25_cputime_recording(ctx.root)
    if rec:
        files.append((rec, ("cputime", "cpu")))
    else:
        ctx.note("no JDK 25: cputime not tested through the server")
    for n, (path, kinds) in enumerate(files):
        svc = "kinds-%d" % n
        with open(path, "rb") as f:
            body = f.read()
        st, resp, _ = s.request("POST", q("/api/v1/ingest/jfr", namespace="shop", service=svc,
                                          pod="pod-a"), body, "ingest")
        check(st == 200 and json.loads(resp)["status"] == "accepted",
              "%s upload: %d %s" % (os.path.basename(path), st, resp[:200]))
        for kind in kinds:
            by_samples = jprof_top_json(top, path, kind, "samples")
            by_value = jprof_top_json(top, path, kind, "total")
            check(by_samples is not None, "%s has no %s events" % (path, kind))
            w = by_samples["meta"]
            rng = {"from": rfc3339(parse_rfc3339(w["start"]) - 60 * NS),
                   "to": rfc3339(parse_rfc3339(w["end"]) + 60 * NS)}
            got = s.getj(q("/api/v1/flamegraph", namespace="shop", service=svc, kind=kind,
                           **rng))["meta"]
            check((got["samples"], got["total"], got["unit"]) ==
                  (w["samples"], w["total"], w["unit"]),
                  "%s %s flame: server %s/%s %s, jprof-top %s/%s %s" %
                  (svc, kind, got["samples"], got["total"], got["unit"], w["samples"],
                   w["total"], w["unit"]))
            check_jfr_top(s, "shop", svc, kind, rng, by_samples, by_value,
                          jprof_top_rows(top, path, kind, 10))
            ctx.note("%s %s: %d samples, total %d %s: equal to jprof-top" %
                     (os.path.basename(path), kind, w["samples"], w["total"], w["unit"]))


def parse_rfc3339(s):
    import datetime
    d = datetime.datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    frac = s[19:].rstrip("Z")
    ns = int(d.timestamp()) * NS
    if frac.startswith("."):
        ns += int((frac[1:] + "000000000")[:9])
    return ns


def case_insecure_flag(ctx):
    """--insecure-no-auth only on loopback, and loud."""
    cmd = os.environ.get("JPROF_SERVER_CMD", "./jprof-server --data-dir {data}")
    args = vgwrap.wrap("jprof-server",
                       [a.replace("{data}", ctx.datadir()) for a in shlex.split(cmd)])
    p = subprocess.run(args + ["--insecure-no-auth", "--listen", "0.0.0.0:0"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=vgwrap.slow(30))
    check(p.returncode == 2 and b"loopback" in p.stderr, "non-loopback refused: %d %s" %
          (p.returncode, p.stderr[:200]))
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=vgwrap.slow(30))
    check(p.returncode == 2 and b"--tokens" in p.stderr, "tokens required: %s" % p.stderr[:200])
    s = ctx.server(extra_args=["--insecure-no-auth"], no_tokens=True)
    st, _ = s.get("/api/v1/services", token=None)
    check(st == 200, "insecure mode serves without a token")
    check("WARNING" in s.logtext() and "insecure" in s.logtext(), "loud warning at start")


def case_tls(ctx):
    """--tls-cert/--tls-key: HTTPS works, plain HTTP does not."""
    import ssl
    openssl = shutil.which("openssl")
    if not openssl:
        ctx.skip_or_fail("openssl missing: TLS not tested")
        return
    cert, key = os.path.join(ctx.root, "cert.pem"), os.path.join(ctx.root, "key.pem")
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=localhost"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    s = ctx.server(extra_args=["--tls-cert", cert, "--tls-key", key])
    s.scheme = "https"
    s.ssl_ctx = ssl.create_default_context(cafile=cert)
    s.ssl_ctx.check_hostname = False  # the test cert names localhost, we dial 127.0.0.1
    st, body = s.get("/healthz", token=None)
    check(st == 200 and body.strip() == b"ok", "https healthz: %d" % st)
    st, body = s.get("/api/v1/services", token="read")
    check(st == 200, "https API with a token: %d" % st)
    st, body = s.get("/api/v1/services", token=None)
    check(st == 401, "https API without a token: %d" % st)
    s.scheme, s.ssl_ctx = "http", None
    try:
        st, _ = s.get("/healthz", token=None)
        ok = st != 200
    except Exception:
        ok = True
    check(ok, "plain HTTP must not work on a TLS port")


CASES = [case_basics, case_endpoints, case_auth, case_gc, case_heap, case_diff, case_malformed,
         case_duplicates_restart, case_kill9, case_retention, case_jfr_upload, case_jfr_new_kinds,
         case_insecure_flag,
         case_tls]


class Ctx:
    def __init__(self, root, name):
        self.root = os.path.join(root, name)
        os.makedirs(self.root)
        self.servers = []
        self.ndata = 0
        self.notes = []
        self.skipped = None

    def datadir(self):
        self.ndata += 1
        return os.path.join(self.root, "data%d" % self.ndata)

    def server(self, data=None, env=None, extra_args=(), no_tokens=False):
        for old in self.servers:
            if old.proc:
                old.stop()
        s = Server(self.root, data or self.datadir(), env, extra_args, tokens=not no_tokens)
        self.servers.append(s.start())
        return s

    def cleanup(self):
        for s in self.servers:
            if s.proc:
                s.stop(signal.SIGKILL)

    def note(self, text):
        self.notes.append(text)

    def skip_or_fail(self, why):
        if CI:
            raise Fail(why + " (CI=true: not skipping)")
        self.skipped = why


def main():
    only = os.environ.get("JPROF_ONLY", "")
    root = tempfile.mkdtemp(prefix="jprof-server-api.")
    failed, skipped = [], []
    try:
        for case in CASES:
            name = case.__name__[5:]
            if only and only not in name:
                continue
            ctx = Ctx(root, name)
            t = time.time()
            try:
                case(ctx)
                if ctx.skipped:
                    skipped.append(name)
                    print("SKIP %s: %s" % (name, ctx.skipped))
                else:
                    print("PASS %s (%.1fs)%s" % (name, time.time() - t,
                                                  "".join("\n     " + n for n in ctx.notes)))
            except Exception as e:  # a failing case must not stop the others
                failed.append(name)
                print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
                for s in ctx.servers:
                    print("     server log tail: %s" % s.logtext()[-800:].replace("\n", "\n     "))
            finally:
                ctx.cleanup()
            sys.stdout.flush()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if failed:
        print("FAILED: %s" % ", ".join(failed))
        return 1
    if skipped and len(skipped) == len(CASES):
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
