#!/usr/bin/env python3
"""test_agent_upload.py - jprof-agent's uploader against a tiny HTTP test
peer on 127.0.0.1 (python's http.server; it plays a server that refuses or
fails, which the real jprof-server will not do on demand).

No JVM is profiled: the config names no running pid, so the agent only sends
its heartbeat batches (one per window). Checks:
  - POST /api/v1/ingest with Content-Encoding: zstd, the bearer token from
    --token-file, and a unique batch id per batch;
  - 413 and 400 are not retried (each id is seen once) and are counted;
  - 503 is retried with the same batch id, with growing delays, and counted;
  - /status shows why the server refused.
Run from the build dir. Exit 0 pass, 1 fail, 77 skip (not in CI).
JPROF_VALGRIND=1: the agent runs under valgrind's memcheck (vgwrap.py).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import vgwrap

AGENT = os.environ.get("JPROF_AGENT", os.path.join(os.getcwd(), "jprof-agent"))
TOKEN = "upload-test-token-0123456789"
failures = []
SEEN = []  # (time, batch id, status answered, headers)
MODE = {"answer": 200}
LOCK = threading.Lock()


def check(cond, what, detail=""):
    print(("PASS: " if cond else "FAIL: ") + what + ("" if cond else "  " + str(detail)[:1500]))
    if not cond:
        failures.append(what)


class Peer(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        with LOCK:
            code = MODE["answer"]
            SEEN.append((time.monotonic(), self.headers.get("X-Jprof-Batch-Id"), code,
                         dict(self.headers), self.path, body[:4]))
        msg = json.dumps({"error": {"status": code, "message": "test peer says %d" % code}})
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(msg)))
        self.end_headers()
        self.wfile.write(msg.encode())


def metric(murl, name):
    text = urllib.request.urlopen(murl + "/metrics", timeout=5).read().decode()
    m = re.search(r"^%s (\S+)$" % name, text, re.M)
    return float(m.group(1)) if m else None


def wait_for(pred, timeout):
    """Every wait here bounds the agent's work: stretched under valgrind."""
    end = time.monotonic() + vgwrap.slow(timeout)
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.2)
    return pred()


def main():
    if not os.access(AGENT, os.X_OK):
        if os.environ.get("CI") == "true":
            print("FAIL: jprof-agent not built")
            return 1
        print("SKIP: jprof-agent not built at " + AGENT)
        return 77
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Peer)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    tmp = tempfile.mkdtemp(prefix="agent-upload-test-")
    tok = os.path.join(tmp, "token")
    conf = os.path.join(tmp, "agent.conf")
    with open(tok, "w") as f:
        f.write(TOKEN + "\n")
    with open(conf, "w") as f:
        f.write("# nothing running has this pid\npid 999999999\n")
    log = open(os.path.join(tmp, "agent.log"), "w+")
    agent = subprocess.Popen(vgwrap.wrap("jprof-agent", [
        AGENT, "--mode", "host", "--config", conf, "--window", "5s",
        "--server", "http://127.0.0.1:%d/" % srv.server_address[1],
        "--token-file", tok, "--metrics-listen", "127.0.0.1:0"]),
        stdout=log, stderr=subprocess.STDOUT)
    try:
        m = wait_for(lambda: re.search(r"metrics on port (\d+)", open(log.name).read()), 10)
        murl = "http://127.0.0.1:%s" % m.group(1)
        # accepted
        wait_for(lambda: len(SEEN) >= 2, 15)
        first = SEEN[0]
        check(first[4] == "/api/v1/ingest", "POSTs to /api/v1/ingest", first[4])
        check(first[3].get("Authorization") == "Bearer " + TOKEN, "sends the bearer token",
              first[3].get("Authorization"))
        check(first[3].get("Content-Encoding") == "zstd" and first[5] == b"\x28\xb5\x2f\xfd",
              "the body is zstd", (first[3].get("Content-Encoding"), first[5]))
        check(len({s[1] for s in SEEN}) == len(SEEN) and all(SEEN[i][1] for i in range(2)),
              "every batch has its own id", [s[1] for s in SEEN])
        check(metric(murl, "jprof_agent_uploads_ok") >= 2, "accepted uploads are counted")
        # 413 and 400: not retried
        for code in (413, 400):
            with LOCK:
                MODE["answer"] = code
                n0 = len(SEEN)
            wait_for(lambda: len(SEEN) >= n0 + 2, 15)
            with LOCK:
                ids = [s[1] for s in SEEN[n0:] if s[2] == code]
            check(len(ids) >= 2 and len(set(ids)) == len(ids),
                  "%d is not retried (each refused id seen once)" % code, ids)
        # the server saw the 4th refused batch before the agent read the answer
        rej = wait_for(lambda: (lambda v: v if v is not None and v >= 4 else None)(
            metric(murl, "jprof_agent_uploads_rejected")), 10)
        check(rej is not None and rej >= 4, "refusals are counted",
              metric(murl, "jprof_agent_uploads_rejected"))
        st = json.loads(urllib.request.urlopen(murl + "/status", timeout=5).read())
        check("test peer says 400" in st["upload"]["last_error"],
              "/status says why the server refused", st["upload"])
        # 503: retried with the same id and growing delays
        with LOCK:
            MODE["answer"] = 503
            n0 = len(SEEN)
        wait_for(lambda: len(SEEN) >= n0 + 4, 25)
        with LOCK:
            tries = SEEN[n0:]
        same = [s for s in tries if s[1] == tries[0][1]]
        check(len(same) >= 4, "503 is retried with the same batch id", [s[1] for s in tries])
        gaps = [b[0] - a[0] for a, b in zip(same, same[1:])]
        # full jitter in [d/2, d] with d doubling: the third gap is always longer
        check(len(gaps) >= 3 and gaps[2] > gaps[0] * 1.2, "retries back off", gaps)
        check(metric(murl, "jprof_agent_uploads_retried") >= 3, "retries are counted")
        with LOCK:
            MODE["answer"] = 200
            n0 = len(SEEN)
        ok = wait_for(lambda: any(s[1] == tries[0][1] and s[2] == 200 for s in SEEN[n0:]), 20)
        check(ok, "the retried batch goes through once the server answers 200")
        agent.send_signal(signal.SIGTERM)
        check(agent.wait(timeout=vgwrap.slow(20)) == 0, "the agent exits with status 0 on SIGTERM")
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        srv.shutdown()
        if failures:
            print(open(log.name).read()[-2000:])
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
