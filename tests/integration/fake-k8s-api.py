#!/usr/bin/env python3
"""fake-k8s-api.py - a FAKE Kubernetes API server for jprof-agent tests.

THIS IS NOT KUBERNETES. It serves just enough of the core/v1 pods API for
jprof-agent's pod source to be tested without a cluster:

  GET /api/v1/pods?fieldSelector=spec.nodeName=NODE         a PodList
  GET /api/v1/pods?watch=1&resourceVersion=RV&...           a watch stream
        (one JSON event per line: ADDED, MODIFIED, DELETED, BOOKMARK, ERROR)

and a control API the tests drive:

  POST   /fake/pods          body: a Pod object; added or replaced (MODIFIED)
  DELETE /fake/pods/UID      the pod is deleted (DELETED event)
  POST   /fake/gone?mode=event|http
                             compacts history: open watches get an ERROR event
                             with code 410 (mode=event, the API server's usual
                             way) and close; with mode=http the next watch
                             request from an old version is answered with an
                             HTTP 410 Status instead
  GET    /fake/stats         {"lists": n, "watches": n, "gone_sent": n}

It binds 127.0.0.1 only, prints a banner saying it is a fake, and checks
`Authorization: Bearer TOKEN` when --token is given (401 otherwise).

Usage: fake-k8s-api.py [--port N] [--port-file F] [--token T]
                       [--tls-cert PEM --tls-key PEM]  (HTTPS, as in a cluster)
"""
import argparse
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BANNER = "FAKE Kubernetes API server for tests (not Kubernetes)"


class State:
    def __init__(self):
        self.cond = threading.Condition()
        self.rv = 100
        self.pods = {}  # uid -> pod
        self.events = []  # (rv, type, pod)
        self.min_rv = 0  # watches from below this get 410
        self.generation = 0  # bumped by /fake/gone to end open watches
        self.http_gone = False
        self.stats = {"lists": 0, "watches": 0, "gone_sent": 0}

    def put(self, pod):
        with self.cond:
            self.rv += 1
            meta = pod.setdefault("metadata", {})
            meta["resourceVersion"] = str(self.rv)
            uid = meta["uid"]
            kind = "MODIFIED" if uid in self.pods else "ADDED"
            self.pods[uid] = pod
            self.events.append((self.rv, kind, pod))
            self.cond.notify_all()

    def delete(self, uid):
        with self.cond:
            pod = self.pods.pop(uid, None)
            if pod is None:
                return False
            self.rv += 1
            pod["metadata"]["resourceVersion"] = str(self.rv)
            self.events.append((self.rv, "DELETED", pod))
            self.cond.notify_all()
            return True

    def gone(self, mode):
        with self.cond:
            self.min_rv = self.rv + 1
            self.events = []
            self.http_gone = mode == "http"
            self.generation += 1
            self.cond.notify_all()


STATE = State()
TOKEN = None


def node_of(pod):
    return pod.get("spec", {}).get("nodeName")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # streams end when the connection closes

    def log_message(self, fmt, *args):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def status(self, code, reason, message):
        self.reply(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                          "message": message, "reason": reason, "code": code})

    def authorized(self):
        if TOKEN is None or self.path.startswith("/fake/"):
            return True
        if self.headers.get("Authorization") == "Bearer " + TOKEN:
            return True
        self.status(401, "Unauthorized", "Unauthorized")
        return False

    def do_GET(self):
        if not self.authorized():
            return
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        if url.path == "/fake/stats":
            with STATE.cond:
                return self.reply(200, dict(STATE.stats))
        if url.path != "/api/v1/pods":
            return self.status(404, "NotFound", "the fake serves /api/v1/pods only")
        node = None
        sel = q.get("fieldSelector", [""])[0]
        if sel.startswith("spec.nodeName="):
            node = sel[len("spec.nodeName="):]
        if q.get("watch", ["0"])[0] in ("1", "true"):
            return self.watch(node, q)
        with STATE.cond:
            STATE.stats["lists"] += 1
            items = [p for p in STATE.pods.values() if node is None or node_of(p) == node]
            self.reply(200, {"kind": "PodList", "apiVersion": "v1",
                             "metadata": {"resourceVersion": str(STATE.rv)}, "items": items})

    def send_event(self, kind, obj):
        self.wfile.write((json.dumps({"type": kind, "object": obj}) + "\n").encode())
        self.wfile.flush()

    def watch(self, node, q):
        rv = int(q.get("resourceVersion", ["0"])[0] or 0)
        timeout = min(int(q.get("timeoutSeconds", ["300"])[0]), 600)
        with STATE.cond:
            STATE.stats["watches"] += 1
            if rv and rv < STATE.min_rv and STATE.http_gone:
                STATE.stats["gone_sent"] += 1
                STATE.http_gone = False
                return self.status(410, "Expired", "too old resource version: %d (%d)"
                                   % (rv, STATE.min_rv))
            gen = STATE.generation
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        deadline = time.monotonic() + timeout
        try:
            if rv and rv < STATE.min_rv:
                with STATE.cond:
                    STATE.stats["gone_sent"] += 1
                return self.send_event("ERROR", {
                    "kind": "Status", "code": 410, "reason": "Expired",
                    "message": "too old resource version: %d (%d)" % (rv, STATE.min_rv)})
            while time.monotonic() < deadline:
                with STATE.cond:
                    pending = [e for e in STATE.events if e[0] > rv]
                    if not pending and STATE.generation == gen:
                        STATE.cond.wait(timeout=0.5)
                        pending = [e for e in STATE.events if e[0] > rv]
                    ended = STATE.generation != gen
                if ended:
                    with STATE.cond:
                        STATE.stats["gone_sent"] += 1
                        if STATE.http_gone:  # the next request gets the HTTP 410
                            return
                    return self.send_event("ERROR", {
                        "kind": "Status", "code": 410, "reason": "Expired",
                        "message": "too old resource version: %d" % rv})
                for erv, kind, pod in pending:
                    rv = erv
                    if node is None or node_of(pod) == node:
                        self.send_event(kind, pod)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self):
        url = urllib.parse.urlparse(self.path)
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n) if n else b""
        if url.path == "/fake/pods":
            STATE.put(json.loads(body))
            return self.reply(200, {"ok": True})
        if url.path == "/fake/gone":
            mode = urllib.parse.parse_qs(url.query).get("mode", ["event"])[0]
            STATE.gone(mode)
            return self.reply(200, {"ok": True})
        self.status(404, "NotFound", "unknown control path")

    def do_DELETE(self):
        url = urllib.parse.urlparse(self.path)
        if url.path.startswith("/fake/pods/"):
            ok = STATE.delete(url.path[len("/fake/pods/"):])
            return self.reply(200 if ok else 404, {"ok": ok})
        self.status(404, "NotFound", "unknown control path")


def main():
    global TOKEN
    ap = argparse.ArgumentParser(description=BANNER)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--token")
    ap.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    ap.add_argument("--tls-key", help="... and this key (PEM)")
    a = ap.parse_args()
    TOKEN = a.token
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    if a.tls_cert:
        # an in-cluster client speaks only HTTPS, checked against the
        # service account's ca.crt
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    port = srv.server_address[1]
    print("%s on %s://127.0.0.1:%d" % (BANNER, "https" if a.tls_cert else "http", port),
          file=sys.stderr, flush=True)
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        import os
        os.replace(a.port_file + ".tmp", a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
