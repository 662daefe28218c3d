#!/usr/bin/env python3
"""test_clickhouse_cluster.py - jprof-server on a sharded, replicated
ClickHouse: ZooKeeper and four clickhouse-server processes on loopback (2
shards x 2 replicas, clickhouse-cluster.sh), two jprof-servers with
--clickhouse-cluster (each told every node, in a different order), the real
agent in host mode on a real JVM and the load generator (bench/server/load)
uploading to both servers.

Checks:
  1. schema: replicated tables on every node, Distributed ones over them; a
     target's rows on one shard, a batch touching several targets split in
     parts, the parts on their shards;
  2. idempotency: one batch to server A, then again to B and to A: stored
     once, counted once; a batch whose commit reached one shard only (an
     attempt cut half-way) is written again whole and still counted once;
  3. faults during a fleet's ingest (the load generator, 24 agents; the real
     agent alongside): one ClickHouse replica killed, then ZooKeeper (ingest
     answers 503 and is retried, queries keep answering), then server A
     (uploads go on to B); the dead parts restarted catch up;
  4. afterwards every batch an uploader was told was stored is found: the
     flame totals per service equal what the load generator had
     acknowledged, exactly, and each acknowledged batch is there once with
     its own samples (those refused with 503 while ZooKeeper was down and
     retried too), nothing else is; the batch refused while ZooKeeper was
     down is absent until retried, then counted once; the agent's
     acknowledged batches equal the accepted batches of its collector;
     both replicas of each shard hold the same committed rows (the part
     of an INSERT ClickHouse answered "Unknown status" stays on the
     replica that wrote it: shown, not compared); the per-minute roll-up,
     where written, agrees;
  5. a whole shard down: queries answer with the other shard's data and say
     which shard is missing.
JPROF_CLUSTER_FULL=1 runs the fleet longer and larger (1,000 agents over
150 s), then a capacity run with no faults (1,000 agents, 2,000 batches of
1,000 stack rows at once; the rows/s and the CPU of the servers and of
ClickHouse per stack row, docs/SCALE.md); CI runs the short form.
Run from the build dir. Exit 0 pass, 1 fail, 77 skip (not in CI).
"""
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
import urllib.error
import urllib.parse
import urllib.request

BUILD = os.getcwd()
HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.environ.get("JPROF_SERVER_BIN", os.path.join(BUILD, "jprof-server"))
AGENT = os.environ.get("JPROF_AGENT", os.path.join(BUILD, "jprof-agent"))
LOAD = os.environ.get("JPROF_LOAD", os.path.join(BUILD, "bench/server/load"))
CLASSES = os.environ.get("JPROF_WORKLOAD_CLASSES", os.path.join(BUILD, "tests/java/classes"))
CLUSTER = os.path.join(HERE, "clickhouse-cluster.sh")
FULL = os.environ.get("JPROF_CLUSTER_FULL") == "1"
TOKEN = "cluster-admin-token-0123456789"
DB = "jt"
NS = 10**9
failures = []


def check(cond, what, detail=""):
    print(("PASS: " if cond else "FAIL: ") + what + ("" if cond else "  " + str(detail)[:2000]))
    sys.stdout.flush()
    if not cond:
        failures.append(what)
    return cond


T0 = time.monotonic()


def note(msg):
    print("NOTE: [%.1f s] %s" % (time.monotonic() - T0, msg))
    sys.stdout.flush()


def skip(msg):
    if os.environ.get("CI") == "true":
        print("FAIL: " + msg + " (CI=true: a missing tool is a failure)")
        return 1
    print("SKIP: " + msg)
    return 77


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for(pred, timeout, step=0.5):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            last = pred()
        except Exception:  # a server starting, a node restarting
            last = None
        if last:
            return last
        time.sleep(step)
    return last


def http(url, body=None, token=TOKEN, timeout=60, ctype="application/json"):
    """(status, text) of one request; 0 when it could not be sent."""
    req = urllib.request.Request(url, data=body)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    if body is not None:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except (urllib.error.URLError, OSError) as e:
        return 0, str(e)


def ch(url, sql):
    st, text = http(url, sql.encode(), token=None, ctype="text/plain")
    if st != 200:
        raise RuntimeError("%s: %s" % (sql[:80], text[:300]))
    return text


def ch_int(url, sql):
    return int(ch(url, sql).strip() or 0)


class Env:
    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = {}
        self.urls = []
        with open(os.path.join(tmp, "tokens"), "w") as f:
            f.write("%s admin *\n" % TOKEN)
        with open(os.path.join(tmp, "token"), "w") as f:
            f.write(TOKEN + "\n")

    def spawn(self, name, args):
        log = open(os.path.join(self.tmp, name + ".log"), "a")
        p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=self.tmp,
                             start_new_session=True)
        self.procs[name] = p
        return p

    def cluster(self, *args):
        r = subprocess.run([CLUSTER] + list(args) + [], capture_output=True, text=True,
                           timeout=180)
        return r

    def start_server(self, name, order, port=None):
        port = port or free_port()
        urls = ",".join(self.urls[i] for i in order)
        self.spawn(name, [SERVER, "--listen", "127.0.0.1:%d" % port, "--tokens",
                          os.path.join(self.tmp, "tokens"), "--clickhouse", urls,
                          "--clickhouse-cluster", "jprof_test", "--clickhouse-database", DB])
        base = "http://127.0.0.1:%d" % port
        ok = wait_for(lambda: http(base + "/healthz", token=None, timeout=2)[0] == 200, 120)
        return base if ok else None

    def stop(self, name, sig=signal.SIGKILL):
        p = self.procs.get(name)
        if p and p.poll() is None:
            os.killpg(p.pid, sig)
            p.wait(timeout=30)


def q(base, what, **params):
    st, text = http(base + "/api/v1/" + what + "?" + urllib.parse.urlencode(params))
    try:
        return st, json.loads(text)
    except ValueError:
        return st, text


def flame_meta(base, service, ns="bench", rng="-3h", **extra):
    """The meta of a service's cpu flame graph (samples, total, windows,
    partial, partial_reason), None when not 200."""
    st, r = q(base, "flamegraph", namespace=ns, service=service, kind="cpu", to="now",
              max_nodes="20", **dict({"from": rng}, **extra))
    if st != 200 or not isinstance(r, dict):
        note("flamegraph of %s: %s %s" % (service, st, str(r)[:600]))
        return None
    return r["meta"]


def sync_replicas(env):
    """Replication is asynchronous: make every replica current first."""
    for u in env.urls:
        for t in ch(u, "SELECT name FROM system.tables WHERE database = '%s_local'" % DB).split():
            ch(u, "SYSTEM SYNC REPLICA %s_local.%s" % (DB, t))


def batch_json(bid, pods, minute, samples, service="dedup", statuses=True):
    """A batch with one cpu window per pod (2 stacks each) and their statuses:
    a batch touching several targets, so several parts."""
    frames = ["java.lang.Thread.run", "com.dedup.Work.a", "com.dedup.Work.b"]
    stacks = [[0, 1], [0, 2]]
    start = (int(time.time()) // 60 - minute) * 60
    ts = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
    windows, sts = [], []
    for i, pod in enumerate(pods):
        tgt = {"namespace": "bench", "service": service, "pod": pod, "node": "n", "pid": 100 + i}
        windows.append({"target": tgt, "kind": "cpu", "start": ts(start), "end": ts(start + 60),
                        "period_ns": 10000000, "events": samples * 3,
                        "rows": [[0, samples, samples * 10000000],
                                 [1, 2 * samples, 2 * samples * 10000000]]})
        if statuses:
            sts.append({"target": tgt, "time": ts(start + 30), "state": "active"})
    return json.dumps({"batch_id": bid, "collector": {"id": "test@dedup"}, "frames": frames,
                       "stacks": stacks, "windows": windows, "statuses": sts}).encode()


def post(base, body):
    st, text = http(base + "/api/v1/ingest", body)
    try:
        return st, json.loads(text)
    except ValueError:
        return st, {"text": text}


def check_layout(env):
    u1 = env.urls[0]
    tables = ch(u1, "SELECT name, engine FROM system.tables WHERE database = '%s_local' "
                    "ORDER BY name" % DB)
    check("ReplicatedMergeTree" in tables and "jprof_windows" in tables,
          "replicated tables in %s_local" % DB, tables)
    dist = ch(u1, "SELECT count() FROM system.tables WHERE database = '%s' AND "
                  "engine = 'Distributed'" % DB)
    check(int(dist) >= 10, "Distributed tables in %s" % DB, dist)
    for u in env.urls[1:]:
        n = ch_int(u, "SELECT count() FROM system.tables WHERE database = '%s_local'" % DB)
        check(n == len(tables.splitlines()), "every node has the tables (%s)" % u, n)


def check_dedup(env, a, b):
    pods = ["dd-%d" % i for i in range(6)]
    body = batch_json("dedup-1", pods, 20, 5)
    s1, r1 = post(a, body)
    s2, r2 = post(b, body)
    s3, r3 = post(a, body)
    check(s1 == 200 and r1.get("status") == "accepted" and r1.get("windows") == 6,
          "a batch of six targets: accepted by server A", r1)
    check(s2 == 200 and r2.get("status") == "duplicate", "the same batch to server B: duplicate",
          r2)
    check(s3 == 200 and r3.get("status") == "duplicate", "and again to A: duplicate", r3)
    # its parts: one marker per target, on the shard of the target's rows
    sync_replicas(env)
    # (each duplicate commits its own attempt too, behind the first: count
    # the first's markers, and that three attempts are there)
    parts = [ch_int(u, "SELECT count() FROM %s_local.jprof_ingest WHERE batch_id = 'dedup-1' "
                       "AND outcome = 0 AND attempt IN (SELECT min(attempt) FROM %s_local."
                       "jprof_ingest WHERE batch_id = 'dedup-1' AND outcome = 0)" % (DB, DB))
             for u in env.urls]
    attempts = [ch_int(u, "SELECT uniqExact(attempt) FROM %s_local.jprof_ingest WHERE "
                          "batch_id = 'dedup-1' AND outcome = 0" % DB) for u in env.urls]
    check(attempts == [3, 3, 3, 3], "the accepted attempt and both duplicates' own attempts are "
          "committed on every node", attempts)
    # the visible rows (a duplicate's own rows may be written beside, never read)
    wins = [ch_int(u, "SELECT count() FROM %s_local.jprof_windows WHERE service = 'dedup' AND "
                      "attempt IN (SELECT min(attempt) FROM %s_local.jprof_ingest WHERE "
                      "outcome = 0 GROUP BY batch_id)" % (DB, DB)) for u in env.urls]
    check(parts[0] + parts[2] == 6 and parts[0] == parts[1] and parts[2] == parts[3] and
          wins == parts, "six parts: each with its windows on its shard, on both replicas",
          (parts, wins))
    check(parts[0] > 0 and parts[2] > 0, "the batch touched both shards", parts)
    m = flame_meta(b, "dedup")
    check(m and m["samples"] == 6 * 15 and m["windows"] == 6,
          "stored once, counted once: 6 windows, 90 samples", m)
    # the markers a duplicate answer trusted vanish afterwards (as ClickHouse
    # removes a part whose INSERT ended with "unknown status" once ZooKeeper
    # never heard of it): the batch stays there, once, from a later attempt
    first = ch_int(env.urls[0], "SELECT min(attempt) FROM %s.jprof_ingest WHERE batch_id = "
                                "'dedup-1' AND outcome = 0" % DB)
    for u in (env.urls[0], env.urls[2]):
        ch(u, "ALTER TABLE %s_local.jprof_ingest DELETE WHERE batch_id = 'dedup-1' AND attempt = "
              "%d" % (DB, first))
    gone = wait_for(lambda: all(ch_int(u, "SELECT count() FROM %s_local.jprof_ingest WHERE "
                                          "attempt = %d" % (DB, first)) == 0 for u in env.urls), 30)
    m = flame_meta(b, "dedup")
    check(gone and m and m["samples"] == 6 * 15 and m["windows"] == 6,
          "the accepted attempt's markers removed: still there once, from a duplicate's commit "
          "(6 windows, 90 samples)", (gone, m))
    # an attempt whose commit reached one shard only (written whole, then
    # the markers of shard 2 lost with a dying insert): not a duplicate,
    # written whole again, counted once
    body = batch_json("dedup-2", pods, 19, 7)
    s4, r4 = post(a, body)
    check(s4 == 200 and r4.get("status") == "accepted", "a second batch accepted", r4)
    ch(env.urls[2], "ALTER TABLE %s_local.jprof_ingest DELETE WHERE batch_id = 'dedup-2'" % DB)
    wait_for(lambda: all(ch_int(u, "SELECT count() FROM %s_local.jprof_ingest WHERE "
                                   "batch_id = 'dedup-2'" % DB) == 0 for u in env.urls[2:]), 30)
    m = flame_meta(b, "dedup")
    check(m and m["windows"] == 6 + parts[0], "its shard-2 parts invisible without markers", m)
    s5, r5 = post(b, body)
    check(s5 == 200 and r5.get("status") == "accepted",
          "retried: a batch committed on some parts only is not a duplicate", r5)
    s6, r6 = post(a, body)
    check(s6 == 200 and r6.get("status") == "duplicate", "once complete it is", r6)
    sync_replicas(env)
    m = flame_meta(b, "dedup")
    check(m and m["samples"] == 6 * 15 + 6 * 21 and m["windows"] == 12,
          "and counted once: 12 windows, 216 samples", m)


def metric(text, name):
    m = re.search(r"^%s (\d+)" % re.escape(name), text, re.M)
    return int(m.group(1)) if m else None


def start_agent(env, servers):
    """The real agent in host mode on the test workload, uploading to both
    servers (a failed upload is retried on the other)."""
    wl = env.spawn("workload", ["java", "-Xmx128m", "-cp", CLASSES, "shop.JprofWorkload", "600"])
    conf = os.path.join(env.tmp, "agent.conf")
    with open(conf, "w") as f:
        f.write("pid %d\n" % wl.pid)
    env.spawn("agent", [AGENT, "--mode", "host", "--config", conf, "--window", "5s",
                        "--scan-interval", "1s", "--server", ",".join(servers), "--token-file",
                        os.path.join(env.tmp, "token"), "--metrics-listen", "127.0.0.1:0",
                        "--namespace", "demo"])
    log = os.path.join(env.tmp, "agent.log")
    m = wait_for(lambda: re.search(r"metrics on port (\d+)", open(log).read()), 20)
    return "http://127.0.0.1:%s" % (m.group(1) if m else "0")


def agent_metrics(murl):
    st, text = http(murl + "/metrics", token=None, timeout=5)
    return text if st == 200 else ""


def faults(env, a_port, b):
    """The fault sequence, during the fleet's ingest."""
    time.sleep(6)
    note("kill -9 of ClickHouse n2 (a replica of shard 1)")
    env.cluster("kill", env.dir, "n2")
    time.sleep(6)
    note("kill -9 of ZooKeeper: replicated tables are read-only")
    env.cluster("kill", env.dir, "zk")
    time.sleep(2)
    m = flame_meta(b, "svc0")
    check(m is not None, "queries answer while ZooKeeper is down", m)
    env.zk_batch = batch_json("zk-down-1", ["zk-0"], 5, 1, service="zkdown")
    st, r = post(b, env.zk_batch)
    check(st == 503 and "retry later" in json.dumps(r),
          "ingest answers 503 while ZooKeeper is down (retry later)", (st, r))
    time.sleep(6)
    note("ZooKeeper back")
    r = env.cluster("restart", env.dir, "zk")
    check(r.returncode == 0, "ZooKeeper restarts", r.stderr)
    time.sleep(5)
    note("kill -9 of jprof-server A")
    env.stop("server-a")
    time.sleep(6)
    note("ClickHouse n2 and jprof-server A back")
    r = env.cluster("restart", env.dir, "n2")
    check(r.returncode == 0, "n2 restarts", r.stderr)
    check(env.start_server("server-a", [0, 1, 2, 3], port=a_port), "server A restarts")


def run_fleet(env, a, b, a_port):
    agents, windows, stacks, secs = (1000, 3, 300, 150) if FULL else (24, 8, 200, 40)
    args = [LOAD, "--url", a + "," + b, "--token", TOKEN, "--agents", str(agents), "--windows",
            str(windows), "--stacks", str(stacks), "--services", "4", "--seconds", str(secs),
            "--retry", "240", "--totals", "2", "--threads", "32", "--settle", "0",
            "--queries", "1"]
    out = open(os.path.join(env.tmp, "load.out"), "w")
    p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=env.tmp)
    try:
        faults(env, a_port, b)
        p.wait(timeout=secs + 400)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    text = open(os.path.join(env.tmp, "load.out")).read()
    print("\n".join(line for line in text.splitlines() if not line.startswith("batch ")))
    check(p.returncode == 0 and re.search(r"ingest +%d batches.* 0 errors" % (agents * windows),
                                          text), "every upload of the fleet acknowledged", text)
    totals = {m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4))) for m in
              re.finditer(r"^totals (svc\d+) batches (\d+) samples (\d+) value (\d+)", text,
                          re.M)}
    batches = [dict(zip(("id", "pod", "start", "samples", "value", "acked", "refused",
                         "unanswered"), m.groups()[:2] + tuple(int(x) for x in m.groups()[2:])))
               for m in re.finditer(r"^batch (\S+) pod (\S+) start_ns (\d+) samples (\d+) value "
                                    r"(\d+) acked (\d) refused (\d+) unanswered (\d+)$", text,
                                    re.M)]
    check(len(batches) == agents * windows, "the load generator names each batch", len(batches))
    return totals, batches


def fleet_windows(env):
    """(pod, start_ns) -> [count, samples, value] of the fleet's visible
    windows (those of a batch's first committed attempt, as the server reads
    them), from one replica of each shard: a window on both shards counts
    twice."""
    found = {}
    sql = ("SELECT pod, start_ns, count(), sum(samples), sum(value) FROM %s_local.jprof_windows "
           "WHERE ns = 'bench' AND service LIKE 'svc%%' AND attempt IN (SELECT min(attempt) FROM "
           "%s_local.jprof_ingest WHERE outcome = 0 GROUP BY batch_id) GROUP BY pod, start_ns "
           "FORMAT TSV" % (DB, DB))
    for u in (env.urls[0], env.urls[2]):
        for line in ch(u, sql).splitlines():
            pod, start, n, samples, value = line.split("\t")
            have = found.setdefault((pod, int(start)), [0, 0, 0])
            for i, x in enumerate((n, samples, value)):
                have[i] += int(x)
    return found


def batch_rows(env, bt):
    """What each node holds of a batch, to tell why it is not found: its
    commit markers and its windows, of every attempt."""
    sqls = ("SELECT attempt, outcome, part, parts, received_ns FROM %s_local.jprof_ingest WHERE "
            "batch_id = '%s' FORMAT TSV" % (DB, bt["id"]),
            "SELECT attempt, samples FROM %s_local.jprof_windows WHERE pod = '%s' AND start_ns = "
            "%d FORMAT TSV" % (DB, bt["pod"], bt["start"]))
    out = []
    for i, u in enumerate(env.urls):
        try:
            got = [ch(u, sql).strip().replace("\t", " ").replace("\n", "; ") for sql in sqls]
            out.append("n%d markers [%s] windows [%s]" % (i + 1, got[0], got[1]))
        except RuntimeError as e:
            out.append("n%d: %s" % (i + 1, e))
    # what ClickHouse said of inserts it could not confirm, and of parts
    # it removed or fetched (why a row can vanish)
    for i in range(1, 5):
        log = os.path.join(env.dir, "n%d" % i, "log", "server.log")
        try:
            lines = [x.strip()[:400] for x in open(log, errors="replace") if re.search(
                r"Unknown status|nexpected part|[Rr]emoving part|already exists; ignoring", x)]
        except OSError:
            lines = []
        out.append("n%d log (%d lines): %s" % (i, len(lines), " | ".join(lines[-6:])))
    return out


def check_each_batch(env, batches):
    """Killing ZooKeeper (and a replica, and a server) mid-insert marks no
    batch committed that was not stored: each batch acknowledged is found
    exactly once with its own samples and value (not only the service's
    sums), those refused with 503 first and retried are counted once, and
    nothing is there that was not acknowledged."""
    found = fleet_windows(env)
    acked = [b for b in batches if b["acked"]]
    wrong = [(b, found.get((b["pod"], b["start"]))) for b in acked
             if found.get((b["pod"], b["start"])) != [1, b["samples"], b["value"]]]
    check(acked and not wrong, "each of the %d acknowledged batches found exactly once, with its "
          "samples and value" % len(acked), [(w, batch_rows(env, w[0])) for w in wrong[:3]])
    extra = set(found) - set((b["pod"], b["start"]) for b in acked)
    check(not extra, "no window stored that no uploader was told was stored", sorted(extra)[:5])
    refused = [b for b in acked if b["refused"]]
    check(refused and not [w for w in wrong if w[0]["refused"]],
          "%d batches refused (503) while ZooKeeper was down, retried and acknowledged: each "
          "counted once" % len(refused), len(refused))
    note("%d batches had an upload left unanswered (server A down) and were retried"
         % len([b for b in acked if b["unanswered"]]))


def check_zk_batch(env, b):
    """The batch refused while ZooKeeper was down: absent (or, had its
    commit landed after all, there once), then retried: accepted (or a
    duplicate of that commit), counted once."""
    m = flame_meta(b, "zkdown")
    before = m["windows"] if m else None
    check(before in (0, 1), "the batch refused while ZooKeeper was down: absent, or there once "
          "(%s)" % before, m)
    st, r = post(b, env.zk_batch)
    end = time.monotonic() + 30
    while st in (429, 503) and time.monotonic() < end:
        time.sleep(1)
        st, r = post(b, env.zk_batch)
    check(st == 200 and r.get("status") == ("accepted" if before == 0 else "duplicate"),
          "retried once ZooKeeper is back: %s" % ("accepted" if before == 0 else "a duplicate"),
          (st, r))
    st, r = post(env.server_a, env.zk_batch)
    check(st == 200 and r.get("status") == "duplicate", "and again (to the other server): a "
          "duplicate", (st, r))
    m = flame_meta(b, "zkdown")
    check(m and m["windows"] == 1 and m["samples"] == 3, "counted once: 1 window, 3 samples", m)


def check_found(env, b, totals, murl):
    sync_replicas(env)
    for svc, (batches, samples, value) in sorted(totals.items()):
        m = flame_meta(b, svc)
        check(m and m["samples"] == samples and m["total"] == value and m["windows"] == batches,
              "%s: what the fleet was told was stored is all there, once (%d windows, %d "
              "samples)" % (svc, batches, samples), (m, batches, samples, value))
    # the agent: drained, its acknowledged batches are the accepted ones
    drained = wait_for(lambda: metric(agent_metrics(murl), "jprof_agent_queue_bytes") == 0, 60)
    check(drained, "the agent's queue drained", agent_metrics(murl)[-1500:])
    ok = metric(agent_metrics(murl), "jprof_agent_uploads_ok")
    env.stop("agent", signal.SIGKILL)  # nothing more in flight: the counter is final
    # every collector (the full run's fleet is 1,000 of them, the default limit)
    st, ing = q(b, "ingestion", **{"from": "-1h", "limit": "100000"})
    rows = [r for r in (ing.get("collectors", []) if st == 200 else [])
            if str(r.get("collector", "")).startswith("jprof-agent")]
    accepted = sum(r["accepted"] for r in rows)
    check(ok and ok == accepted,
          "the agent's %s acknowledged batches are the %d accepted ones of its collector"
          % (ok, accepted), rows)
    wins = sum(r["windows"] for r in rows)
    m = flame_meta(b, "JprofWorkload", ns="demo")
    check(m and m["windows"] > 0 and m["windows"] <= wins,
          "the agent's cpu windows are there (%s of %d windows)" % (m and m["windows"], wins), m)


def zk_parts(i, t):
    """The parts of table t ZooKeeper lists for node i's replica: what
    ClickHouse committed, and so what replication copies to the other."""
    return ("(SELECT name FROM system.zookeeper WHERE path = '/clickhouse/tables/%d/%s_local/%s/"
            "replicas/n%d/parts')" % (1 + i // 2, DB, t, i + 1))


def unconfirmed(env, t):
    """Per node: the active parts of table t that ZooKeeper never heard of.
    An INSERT that ClickHouse answered "Unknown status" (code 319: ZooKeeper
    lost in the middle of its commit) keeps its part where it was written
    and never copies it to the other replica; it looks at it again 5 minutes
    later (and removes it) or at a restart, so the two differ by it until
    then. The write it belonged to failed, was retried and was stored by a
    later attempt."""
    sql = ("SELECT name, rows FROM system.parts WHERE database = '%s_local' AND table = '%s' AND "
           "active AND name NOT IN %s FORMAT TSV")
    return [ch(u, sql % (DB, t, zk_parts(i, t))).split() for i, u in enumerate(env.urls)]


def said_319(env, i):
    """Whether node i answered an INSERT with "Unknown status" (code 319)."""
    try:
        with open(os.path.join(env.dir, "n%d" % (i + 1), "log", "server.log"),
                  errors="replace") as f:
            return any("Unknown status" in line for line in f)
    except OSError:
        return False


def check_replicas(env):
    """Both replicas of a shard answer the same: the same committed commit
    markers and stacks, the same visible windows and statuses (those of a
    batch's first committed attempt). A part of an INSERT ClickHouse could
    not confirm (ZooKeeper killed under it) stays on the replica that wrote
    it (unconfirmed above): not compared, only shown, and only where that
    node answered an INSERT with "Unknown status". Its windows are of an
    attempt never committed, never read; its markers may be read there (an
    earlier attempt of a batch whose data the replicas share): the visible
    windows are the same on both replicas either way."""
    visible = (" AND attempt IN (SELECT min(attempt) FROM %s_local.jprof_ingest WHERE "
               "outcome = 0 GROUP BY batch_id)" % DB)

    def counts(t):
        sync_replicas(env)
        where = visible if t in ("jprof_windows", "jprof_statuses") else ""
        return [ch_int(u, "SELECT count() FROM %s_local.%s WHERE _part IN %s%s" %
                       (DB, t, zk_parts(i, t), where)) for i, u in enumerate(env.urls)]

    raw = [ch_int(u, "SELECT count() FROM %s_local.jprof_windows" % DB) for u in env.urls]
    note("jprof_windows rows on n1..n4, committed or not: %s" % raw)

    for t in ("jprof_windows", "jprof_ingest", "jprof_stacks", "jprof_statuses"):
        same = lambda n: n[0] == n[1] and n[2] == n[3] and n[0] > 0 and n[2] > 0
        n = wait_for(lambda: (lambda c: c if same(c) else None)(counts(t)), 20, 1) or counts(t)
        detail = n
        if not same(n) and t == "jprof_ingest":
            sql = ("SELECT batch_id, attempt, part, outcome, collector FROM %s_local.%s WHERE "
                   "_part IN %s ORDER BY batch_id, attempt, part FORMAT TSV")
            rows = [set(ch(u, sql % (DB, t, zk_parts(i, t))).splitlines())
                    for i, u in enumerate(env.urls)]
            detail = (n, sorted(rows[0] ^ rows[1])[:10], sorted(rows[2] ^ rows[3])[:10])
        check(same(n), "%s: both replicas of each shard hold the same %srows" %
              (t, "visible " if t in ("jprof_windows", "jprof_statuses") else "committed "),
              detail)
        extra = unconfirmed(env, t)
        if any(extra):
            note("%s parts ZooKeeper never heard of, on n1..n4: %s" % (t, extra))
        check(all(said_319(env, i) for i in range(4) if extra[i]),
              "%s: a part on one replica only is one of an INSERT answered \"Unknown status\""
              % t, extra)


def capacity(env, a, b):
    """JPROF_CLUSTER_FULL=1 only: what the cluster sustains, no faults (the
    capacity model's figures, docs/SCALE.md): 1,000 agents upload at once,
    as fast as the two servers take them, into a namespace of their own;
    the load generator reads the CPU the two jprof-servers and the four
    clickhouse-server processes used from /proc before and after. The
    machine is shared: the load average is printed with the figures."""
    agents, windows, stacks = 1000, 2, 1000
    chp = "+".join(open(os.path.join(env.dir, "n%d" % i, "pid")).read().strip()
                   for i in range(1, 5))
    srv = "%d+%d" % (env.procs["server-a"].pid, env.procs["server-b"].pid)
    args = [LOAD, "--url", a + "," + b, "--token", TOKEN, "--namespace", "capacity", "--agents",
            str(agents), "--windows", str(windows), "--stacks", str(stacks), "--services", "4",
            "--retry", "120", "--totals", "1", "--threads", "32", "--settle", "0", "--queries",
            "1", "--cpu", "jprof-server=" + srv, "--cpu", "clickhouse=" + chp]
    note("capacity: %d agents x %d windows x %d stacks at once; load average %s" %
         (agents, windows, stacks, "%.1f %.1f %.1f" % os.getloadavg()))
    t0 = time.monotonic()
    r = subprocess.run(args, capture_output=True, text=True, timeout=900)
    note("capacity run took %.1f s; load average %s" % (time.monotonic() - t0,
                                                        "%.1f %.1f %.1f" % os.getloadavg()))
    print(r.stdout + r.stderr)
    check(r.returncode == 0 and re.search(r"ingest +%d batches.* 0 errors" % (agents * windows),
                                          r.stdout), "capacity: every upload acknowledged",
          r.stderr)
    sync_replicas(env)
    for m in re.finditer(r"^totals (svc\d+) batches (\d+) samples (\d+) value (\d+)", r.stdout,
                         re.M):
        meta = flame_meta(b, m.group(1), ns="capacity")
        check(meta and meta["windows"] == int(m.group(2)) and
              meta["samples"] == int(m.group(3)), "capacity: %s all there, once" % m.group(1),
              (meta, m.groups()))


def check_shard_down(env, b):
    env.cluster("kill", env.dir, "n3")
    env.cluster("kill", env.dir, "n4")
    m = flame_meta(b, "svc0")
    check(m and m.get("partial") and "shard 2" in (m.get("partial_reason") or ""),
          "a whole shard down: the answer is partial and names shard 2", m)
    st, r = q(b, "targets", namespace="bench", **{"from": "-1h"})
    check(st == 200 and "shard 2" in json.dumps(r), "targets too", (st, str(r)[:500]))


def check_load_fails(env):
    """The load generator's figures are only worth reading when its run
    passed: a final query that fails (here no server answers) fails it with
    a message, not a line of figures measured on errors."""
    r = subprocess.run([LOAD, "--url", "http://127.0.0.1:%d" % free_port(), "--token", TOKEN,
                        "--ingest", "0", "--queries", "1"], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 1 and "flamegraph query 1: Couldn't connect" in r.stderr and
          "p50" not in r.stdout, "the load generator fails a run whose query fails, and says so",
          (r.returncode, r.stdout, r.stderr))


def run(env):
    t0 = time.monotonic()
    r = env.cluster("start", env.dir)
    if r.returncode == 77:
        return skip(r.stderr.strip())
    if not check(r.returncode == 0, "ZooKeeper and 4 clickhouse-server start", r.stderr):
        return 1
    env.urls = r.stdout.strip().split(",")
    note("cluster up in %.1f s: %s" % (time.monotonic() - t0, env.urls))
    a = env.start_server("server-a", [0, 1, 2, 3])
    if not check(a, "jprof-server A starts (creates the tables ON CLUSTER)"):
        return 1
    b = env.start_server("server-b", [2, 3, 0, 1])
    if not check(b, "jprof-server B starts on the same cluster"):
        return 1
    a_port = int(a.rsplit(":", 1)[1])
    check_layout(env)
    check_dedup(env, a, b)
    murl = start_agent(env, [a, b])
    env.server_a = a
    totals, batches = run_fleet(env, a, b, a_port)
    check_found(env, b, totals, murl)
    check_each_batch(env, batches)
    check_zk_batch(env, b)
    check_replicas(env)
    if FULL:
        capacity(env, env.server_a, b)
    check_shard_down(env, b)
    check_load_fails(env)
    note("took %.1f s" % (time.monotonic() - t0))
    return 0


def main():
    for bin_ in (SERVER, AGENT, LOAD):
        if not os.access(bin_, os.X_OK):
            return skip("not built: " + bin_)
    if not shutil.which("java"):
        return skip("no java on PATH")
    if not os.path.exists(os.path.join(CLASSES, "shop", "JprofWorkload.class")):
        return skip("test workload not compiled (make jprof-workload)")
    tmp = tempfile.mkdtemp(prefix="jprof-ch-cluster-")
    env = Env(tmp)
    env.dir = os.path.join(tmp, "cluster")
    rc = None
    try:
        rc = run(env)
    finally:
        for name in list(env.procs):
            env.stop(name)
        note("processes stopped")
        t1 = time.monotonic()
        env.cluster("stop", env.dir)
        note("cluster stopped in %.1f s" % (time.monotonic() - t1))
        if failures:
            for f in sorted(os.listdir(tmp)):
                if f.endswith(".log"):
                    print("---- " + f)
                    print(open(os.path.join(tmp, f), errors="replace").read()[-3000:])
        shutil.rmtree(tmp, ignore_errors=True)
        note("cleaned up")
    if rc in (77, 1) and not failures:
        return rc
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
