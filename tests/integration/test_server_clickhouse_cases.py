#!/usr/bin/env python3
"""test_server_clickhouse_cases.py - ClickHouse-only cases of jprof-server,
run by test_server_clickhouse.sh with a throwaway clickhouse-server:

  outage    ClickHouse stopped mid-run: ingest and queries answer 503 with a
            reason, quickly; after ClickHouse restarts the same jprof-server
            process works again by itself and nothing was counted twice.
  replicas  two jprof-server processes on one ClickHouse: a batch accepted by
            one is a duplicate on the other (no state in the server).

Environment: JPROF_SERVER_CMD (as for server_api.py), JPROF_TEST_CLICKHOUSE_DIR
and JPROF_TEST_CLICKHOUSE_CTL (clickhouse-server.sh and its directory).
Exit 0 pass, 1 fail. Every wait is bounded.
"""

import os
import subprocess
import sys
import tempfile
import shutil
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_api as api  # noqa: E402
from server_api import NS, check, make_batch, now_ns, q  # noqa: E402

CTL = os.environ.get("JPROF_TEST_CLICKHOUSE_CTL", "")
CHDIR = os.environ.get("JPROF_TEST_CLICKHOUSE_DIR", "")


def ch(cmd):
    p = subprocess.run([CTL, cmd, CHDIR], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    check(p.returncode == 0, "clickhouse-server.sh %s: %s" % (cmd, p.stderr[-500:]))


def case_outage(ctx):
    s = ctx.server()
    t0 = now_ns() - 5 * 60 * NS
    st, r, _ = s.ingest(make_batch("o-1", t0))
    check(st == 200 and r["status"] == "accepted", "before the outage: %s" % r)
    ch("stop")
    try:
        t = time.time()
        st, r, hdr = s.ingest(make_batch("o-2", t0 + NS))
        took = time.time() - t
        check(st == 503, "ingest while ClickHouse is down: %d %s" % (st, r))
        check("clickhouse" in str(r).lower(), "the reason names ClickHouse: %s" % r)
        check(took < 10, "503 came quickly (%.1fs)" % took)
        st, body = s.get(q("/api/v1/flamegraph", namespace="shop", service="checkout"))
        check(st == 503 and b"clickhouse" in body.lower(),
              "query while ClickHouse is down: %d %s" % (st, body[:300]))
        st, body = s.get("/api/v1/services")
        check(st == 503, "services while ClickHouse is down: %d" % st)
        st, body = s.get("/healthz", token=None)
        ctx.note("healthz during the outage: %d" % st)
    finally:
        ch("restart")
    # the same server process reconnects by itself (bounded wait)
    deadline = time.time() + 30
    while True:
        st, r, _ = s.ingest(make_batch("o-2", t0 + NS))
        if st == 200 or time.time() > deadline:
            break
        time.sleep(0.2)
    check(st == 200 and r["status"] == "accepted", "after the restart: %d %s" % (st, r))
    st, r, _ = s.ingest(make_batch("o-1", t0))
    check(st == 200 and r["status"] == "duplicate", "o-1 still known: %s" % r)
    fg = s.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout"))
    check(fg["meta"]["samples"] == 60, "both batches once: %s" % fg["meta"]["samples"])
    check(not fg["meta"]["partial"], "complete answer: %s" % fg["meta"])


def case_replicas(ctx):
    data = ctx.datadir()
    a = api.Server(ctx.root, data).start()
    ctx.servers.append(a)
    bdir = os.path.join(ctx.root, "b")
    os.makedirs(bdir)
    b = api.Server(bdir, data).start()  # same {data} -> same database
    ctx.servers.append(b)
    t0 = now_ns() - 5 * 60 * NS
    st, r, _ = a.ingest(make_batch("rep-1", t0))
    check(st == 200 and r["status"] == "accepted", "replica a: %s" % r)
    st, r, _ = b.ingest(make_batch("rep-1", t0))
    check(st == 200 and r["status"] == "duplicate", "replica b sees a's batch: %s" % r)
    fb = b.getj(q("/api/v1/flamegraph", namespace="shop", service="checkout"))
    check(fb["meta"]["samples"] == 30, "replica b serves a's data once: %s" % fb["meta"])


def main():
    if not CTL or not CHDIR:
        print("test_server_clickhouse_cases.py: run me from test_server_clickhouse.sh")
        return 1
    root = tempfile.mkdtemp(prefix="jprof-ch-cases.")
    failed = []
    try:
        for case in (case_outage, case_replicas):
            name = case.__name__[5:]
            ctx = api.Ctx(root, name)
            t = time.time()
            try:
                case(ctx)
                print("PASS %s (%.1fs)%s" % (name, time.time() - t,
                                              "".join("\n     " + n for n in ctx.notes)))
            except Exception as e:
                failed.append(name)
                print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
                for s in ctx.servers:
                    print("     server log tail: %s" % s.logtext()[-800:].replace("\n", "\n     "))
            finally:
                ctx.cleanup()
            sys.stdout.flush()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
