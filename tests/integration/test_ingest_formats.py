#!/usr/bin/env python3
"""test_ingest_formats.py - jprof-server takes the formats other profilers
already send, and they become profiles like the agent's.

Checks (the real jprof-server on its embedded store, the real jprof-top as
the oracle; no JVM: the recordings are the async-profiler fixtures of
tests/fixtures/jfr and the OTLP files async-profiler 4.5 wrote from them or
from a live session, see the README there):
  - OTLP profiles (POST /v1development/profiles, protobuf, gzip or not): the
    jfrconv files give the same flame tree as `jprof-top --jfr` of the JFR
    they came from, kind by kind (cpu, alloc; lock = jprof's lock + park, as
    async-profiler's lock profile holds both), samples and values; the files
    async-profiler's agent wrote give the tree of the collapsed dump of the
    same session (names put in jprof's form by this test's own reading of
    the documented rule); the answer is OTLP's protobuf response (read by
    this test's own protobuf decoder) or jprof's JSON; the same body again
    is a duplicate; resource attributes name the target; an unknown sample
    type is refused by name, garbage and oversize bodies, wrong tokens, an
    out-of-scope namespace, OTLP/JSON and a body over --max-body are refused;
    the token as the basic-auth user (a collector's basicauth) is taken; the
    Status data says where the profiles came from and when the last came.
  - OTLP out: `jprof-top -b --jfr FILE --format otlp` (with and without
    --threads), `jprof-top -b -n NS -s SVC --event KIND --format otlp` and
    GET /api/v1/flamegraph?format=otlp, read by this test's own protobuf
    decoder, equal the collapsed output (samples and values) and the stored
    tree; jprof-top's OTLP posted back gives the same tree.
  - Pyroscope's /ingest as its Java agent posts: multipart `jfr` (gzipped)
    + `labels` (a LabelsSnapshot), name=APP{service_name=..,namespace=..,
    pod=..}, from, until, format=jfr, sampleRate, spyName, the token as the
    basic-auth password: every kind's samples and total equal `jprof-top
    --jfr` on the same file, for each suite recording; the same request again
    is a duplicate, out of the token's scope a 403; a raw JFR body with a
    bearer token; format=pprof (jprof-top's own pprof export, and a Go-style
    profile this test encodes itself); format=folded refused by name.
  - jprof-top -n NS -s SVC on a pushed target, under tmux: it opens on the
    Flame screen with "source: pushed (otlp)" in the title and the top
    table of the pushed stacks; Status lists the pod as pushed, the OTLP
    engine and the sender; Threads says why it has none.
Run from the build dir. Exit 0 pass, 1 fail, 77 skip (not in CI).
JPROF_VALGRIND=1: the server runs under valgrind's memcheck (vgwrap.py).
"""
import base64
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

BUILD = os.getcwd()
SRCDIR = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
SERVER = os.environ.get("JPROF_SERVER_BIN", os.path.join(BUILD, "jprof-server"))
TOP = os.path.join(BUILD, "jprof-top")
FIX = os.environ.get("JPROF_FIXTURES", os.path.join(SRCDIR, "tests/fixtures/jfr"))
INGEST = "ingest-token-0123456789abcdef"
SCOPED = "scoped-token-0123456789abcdef"
READ = "read-token-0123456789abcdef"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_agent_host import check, failures  # noqa: E402  (PASS/FAIL lines, the failure list)
import vgwrap  # noqa: E402


# ---- this test's own protobuf wire format (reader and writer) ----

def pb_varint(b, i):
    v, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def pb_fields(b):
    """(field, wire type, value) of one message; LEN values are bytes."""
    i = 0
    while i < len(b):
        key, i = pb_varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = pb_varint(b, i)
        elif w == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif w == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif w == 2:
            n, i = pb_varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % w)
        yield f, w, v


def pb_ints(w, v):
    """A repeated varint field: packed (LEN) or one value."""
    if w != 2:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = pb_varint(v, i)
        out.append(x)
    return out


def enc_varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def enc(field, v):
    """A field: int -> varint, bytes/str -> length-delimited."""
    if isinstance(v, int):
        return enc_varint(field << 3) + enc_varint(v)
    if isinstance(v, str):
        v = v.encode()
    return enc_varint(field << 3 | 2) + enc_varint(len(v)) + v


# ---- collapsed stacks ----

def collapsed(text):
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        stack, n = line.rsplit(" ", 1)
        out[stack] = out.get(stack, 0) + int(n)
    return out


def add(a, b):
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def jfr_collapsed(jfr, kind, total=False):
    args = [TOP, "-b", "--jfr", os.path.join(FIX, jfr), "--event", kind]
    if total:
        args += ["--value", "total"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if r.returncode not in (0,):
        return {}
    return collapsed(r.stdout)


def tree_collapsed(tree, key, threads=False):
    """The stacks of a flame tree: every node's self as one line."""
    out = {}

    def walk(node, path):
        s = node.get(key, 0)
        if s and path:
            k = ";".join(path)
            out[k] = out.get(k, 0) + s
        for c in node.get("children", []):
            walk(c, path + [c["name"]])

    walk(tree, [])
    return out


def diff(a, b):
    keys = sorted(set(a) | set(b))
    return [(k, a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)][:5]



def otlp_collapsed(data):
    """This test's own reading of an OTLP ProfilesData: per (sample type,
    unit) the collapsed stacks {"[thread;]root;...;leaf": value} and the
    resource attributes {key: value}."""
    strings, funcs, locs, stacks, attrs = [], [], [], [], []
    profiles, resource = [], {}
    for f, w, v in pb_fields(data):
        if f == 2:
            for g, gw, gv in pb_fields(v):
                if g == 5:
                    strings.append(gv.decode())
                elif g == 3:
                    funcs.append({h: x for h, _, x in pb_fields(gv)})
                elif g == 2:
                    locs.append([{h: x for h, _, x in pb_fields(line)}.get(1, 0)
                                 for k, _, line in pb_fields(gv) if k == 3])
                elif g == 7:
                    ids = []
                    for k, kw, kv in pb_fields(gv):
                        if k == 1:
                            ids += pb_ints(kw, kv)
                    stacks.append(ids)
                elif g == 6:
                    a = {h: x for h, _, x in pb_fields(gv)}
                    val = {h: x for h, _, x in pb_fields(a.get(2, b""))}
                    attrs.append((a.get(1, 0), val.get(8), val.get(1)))
        elif f == 1:
            for g, _, gv in pb_fields(v):
                if g == 1:
                    for _, _, kv in pb_fields(gv):
                        kv = {h: x for h, _, x in pb_fields(kv)}
                        val = {h: x for h, _, x in pb_fields(kv.get(2, b""))}
                        resource[kv[1].decode()] = (val[1].decode() if 1 in val else val.get(3))
                elif g == 2:
                    profiles += [pv for h, _, pv in pb_fields(gv) if h == 2]
    out = {}
    for pv in profiles:
        st, samples = (0, 0), []
        for h, hw, hv in pb_fields(pv):
            if h == 1:
                vt = {k: x for k, _, x in pb_fields(hv)}
                st = (strings[vt.get(1, 0)], strings[vt.get(2, 0)])
            elif h == 2:
                samples.append(hv)
        acc = out.setdefault(st, {})
        for sv in samples:
            stack, ats, vals = 0, [], []
            for k, kw, kv in pb_fields(sv):
                if k == 1:
                    stack = kv
                elif k == 2:
                    ats += pb_ints(kw, kv)
                elif k == 4:
                    vals += pb_ints(kw, kv)
            names = []
            for li in reversed(stacks[stack]):  # leaf first -> root first
                names += [strings[funcs[fi].get(1, 0)] for fi in reversed(locs[li])]
            for a in ats:
                key, sidx, sval = attrs[a]
                if strings[key] == "thread.name":
                    names.insert(0, strings[sidx] if sidx is not None else sval.decode())
            k = ";".join(names)
            acc[k] = acc.get(k, 0) + sum(vals)
    return out, resource

# ---- the server ----

class Server:
    def __init__(self, tmp):
        self.tmp = tmp
        with open(os.path.join(tmp, "tokens"), "w") as f:
            f.write("%s ingest *\n%s ingest shop\n%s read *\n" % (INGEST, SCOPED, READ))
        port_file = os.path.join(tmp, "port")
        self.proc = subprocess.Popen(vgwrap.wrap("jprof-server", [
            SERVER, "--listen", "127.0.0.1:0", "--port-file", port_file, "--data-dir",
            os.path.join(tmp, "data"), "--tokens", os.path.join(tmp, "tokens"),
            "--max-body", str(4 << 20), "--max-decompressed", str(8 << 20)]),
            stdout=open(os.path.join(tmp, "server.log"), "w"), stderr=subprocess.STDOUT)
        for _ in range(int(vgwrap.slow(100))):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.1)
        self.base = "http://127.0.0.1:%s" % open(port_file).read().strip()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=vgwrap.slow(30))

    def post(self, path, body, headers=None, token=INGEST, basic=None):
        req = urllib.request.Request(self.base + path, data=body, method="POST")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        if basic:
            req.add_header("Authorization", "Basic " + base64.b64encode(basic.encode()).decode())
        elif token:
            req.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(req, timeout=vgwrap.slow(30)) as r:
                return r.status, r.headers.get("Content-Type"), r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read()

    def oversize(self, path, length):
        """The head of the answer to a request announcing a body of length
        bytes (the server answers before reading it)."""
        port = int(self.base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=vgwrap.slow(10)) as so:
            so.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                        "Content-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n"
                        % (path, INGEST, length)).encode())
            return so.recv(4096).decode(errors="replace")

    def get(self, path, **q):
        req = urllib.request.Request(self.base + path + "?" + urllib.parse.urlencode(q))
        req.add_header("Authorization", "Bearer " + READ)
        with urllib.request.urlopen(req, timeout=vgwrap.slow(30)) as r:
            return json.loads(r.read().decode())

    def flame(self, ns, svc, kind, threads=False):
        q = {"namespace": ns, "service": svc, "kind": kind, "from": "-30d", "by": "both",
             "max_nodes": "200000"}
        if threads:
            q["threads"] = "1"
        return self.get("/api/v1/flamegraph", **q)


def otlp_post(srv, name, ns, svc, gz=False, accept_json=True, token=INGEST):
    body = open(os.path.join(FIX, name), "rb").read()
    h = {"Content-Type": "application/x-protobuf"}
    if gz:
        body = gzip.compress(body)
        h["Content-Encoding"] = "gzip"
    if accept_json:
        h["Accept"] = "application/json"
    q = urllib.parse.urlencode({"namespace": ns, "service": svc})
    return srv.post("/v1development/profiles?" + q, body, h, token=token)


def same_tree(srv, ns, svc, kind, want_samples, want_values, what):
    f = srv.flame(ns, svc, kind)
    got_s = tree_collapsed(f["tree"], "self_samples")
    got_v = tree_collapsed(f["tree"], "self")
    check(len(want_samples) > 0 and got_s == want_samples,
          "%s: the stored %s tree's samples equal the oracle's (%d stacks)"
          % (what, kind, len(want_samples)), diff(got_s, want_samples))
    if want_values is not None:
        check(got_v == want_values, "%s: the stored %s tree's values equal the oracle's"
              % (what, kind), diff(got_v, want_values))
    return f


# ---- names as jprof prints them (this test's own reading of the rule in
# docs/API.md, "Sending from other profilers") ----

import re  # noqa: E402


def stable_class(cls):
    m = re.search(r"[/+.]0x", cls)
    if m:
        cls = cls[:m.start()]
    return re.sub(r"\$\$Lambda\$\d+$", "$$Lambda", cls)


def jprof_name(f):
    m = re.match(r"^(.+)_\[[kji01]\]$", f)
    if m:
        f = m.group(1)
    m = re.match(r"^([\w$/.+]+)\.(<\w+>|[\w$]+)$", f)
    if m and not f.startswith(("/", ".")):
        cls, meth = m.group(1), m.group(2)
        if "/" in cls or stable_class(cls) != cls:
            return stable_class(cls).replace("/", ".") + "." + meth
    return f


def agent_collapsed(name):
    """The collapsed dump of an async-profiler session: thread-first when it
    has threads; -> ({stack: samples}, {thread;stack: samples})."""
    plain, threaded = {}, {}
    for stack, n in collapsed(open(os.path.join(FIX, name)).read()).items():
        frames = stack.split(";")
        thread = None
        m = re.match(r"^\[(.*) tid=\d+\]$", frames[0])
        if m:
            thread, frames = m.group(1), frames[1:]
        k = ";".join(jprof_name(f) for f in frames)
        plain[k] = plain.get(k, 0) + n
        if thread is not None:
            tk = thread + ";" + k
            threaded[tk] = threaded.get(tk, 0) + n
    return plain, threaded


# ---- OTLP messages this test writes itself ----

def fixed64(field, v):
    return enc_varint(field << 3 | 1) + v.to_bytes(8, "little")


def mk_otlp(stype, unit, values, time_ns, attrs=(), thread=None):
    """One Resource (attrs: (key, value) strings), one profile of one sample
    type, one sample per value on the stack main -> work."""
    strings = ["", stype, unit, "f.Main.run", "f.Main.work", "thread.name", thread or ""]
    res = b"".join(enc(1, enc(1, k) + enc(2, enc(1, v))) for k, v in attrs)
    samples = b""
    for v in values:
        s = enc(1, 1) + enc(4, enc_varint(v))
        if thread:
            s += enc(2, enc_varint(1))
        samples += enc(2, s)
    prof = enc(1, enc(1, 1) + enc(2, 2)) + samples + fixed64(3, time_ns) + enc(4, 10**9)
    rp = (enc(1, res) if res else b"") + enc(2, enc(2, prof))
    dic = enc(1, b"") + enc(2, b"") + enc(2, enc(3, enc(1, 1))) + enc(2, enc(3, enc(1, 2)))
    dic += enc(3, b"") + enc(3, enc(1, 3)) + enc(3, enc(1, 4))
    dic += enc(4, enc(1, bytes(16)) + enc(2, bytes(8)))
    dic += b"".join(enc(5, s) for s in strings)
    dic += enc(6, b"") + enc(6, enc(1, 5) + enc(2, enc(1, thread or "")))
    dic += enc(7, b"") + enc(7, enc(1, enc_varint(2) + enc_varint(1)))
    return enc(1, rp) + enc(2, dic)


def otlp_raw(srv, body, q="", token=INGEST, headers=None):
    h = {"Content-Type": "application/x-protobuf", "Accept": "application/json"}
    h.update(headers or {})
    return srv.post("/v1development/profiles" + q, body, h, token=token)


def error_message(body):
    try:
        return json.loads(body)["error"]["message"]
    except (ValueError, KeyError):
        return body[:200]


# ---- OTLP in ----

def otlp_async_profiler(srv):
    jfr = "asprof-cpu-alloc-lock.jfr"
    st, ct, body = otlp_post(srv, "asprof-cpu-alloc-lock.cpu.otlp", "otlp", "jfrconv", gz=True)
    ans = json.loads(body) if st == 200 else {}
    check(st == 200 and ans.get("status") == "accepted" and ans.get("windows") == 1,
          "jfrconv's cpu OTLP (gzip) is accepted: one window", (st, body[:300]))
    for name in ("asprof-cpu-alloc-lock.alloc.otlp", "asprof-cpu-alloc-lock.lock.otlp"):
        st, ct, body = otlp_post(srv, name, "otlp", "jfrconv")
        check(st == 200, "%s is accepted" % name, (st, body[:300]))
    same_tree(srv, "otlp", "jfrconv", "cpu", jfr_collapsed(jfr, "cpu"),
              jfr_collapsed(jfr, "cpu", True), "jfrconv -o otlp --cpu vs jprof-top --jfr")
    same_tree(srv, "otlp", "jfrconv", "alloc", jfr_collapsed(jfr, "alloc"),
              jfr_collapsed(jfr, "alloc", True), "jfrconv -o otlp --alloc --total")
    same_tree(srv, "otlp", "jfrconv", "lock",
              add(jfr_collapsed(jfr, "lock"), jfr_collapsed(jfr, "park")),
              add(jfr_collapsed(jfr, "lock", True), jfr_collapsed(jfr, "park", True)),
              "jfrconv -o otlp --lock --total vs jprof's lock + park")
    # the same body again: a duplicate, nothing written twice
    st, ct, body = otlp_post(srv, "asprof-cpu-alloc-lock.cpu.otlp", "otlp", "jfrconv", gz=True)
    check(st == 200 and json.loads(body).get("status") == "duplicate",
          "the same OTLP body again is a duplicate", body[:300])
    f = srv.flame("otlp", "jfrconv", "cpu")
    check(f["meta"]["samples"] == sum(jfr_collapsed(jfr, "cpu").values()),
          "after the duplicate the cpu samples are still the recording's", f["meta"])
    # the agent's own OTLP vs the collapsed dump of the same session
    for name, kind, period in (("asprof-agent-cpu-threads", "cpu", 10**7),
                               ("asprof-agent-wall", "wall", 2 * 10**7)):
        st, ct, body = otlp_post(srv, name + ".otlp", "otlp", "agent")
        check(st == 200, "async-profiler's agent -o otlp (%s) is accepted" % kind, body[:300])
        plain, threaded = agent_collapsed(name + ".collapsed")
        same_tree(srv, "otlp", "agent", kind, plain, {k: v * period for k, v in plain.items()},
                  "asprof %s -o otlp vs its collapsed dump" % kind)
        if threaded:
            f = srv.flame("otlp", "agent", kind, threads=True)
            got = tree_collapsed(f["tree"], "self_samples")
            check(got == threaded, "the thread.name attribute [NAME tid=N] is the thread NAME",
                  diff(got, threaded))


def otlp_answers_and_identity(srv):
    now = time.time_ns()
    attrs = [("service.name", "res-svc"), ("k8s.namespace.name", "shop"),
             ("k8s.pod.name", "res-pod-1"), ("k8s.container.name", "app")]
    body = mk_otlp("cpu", "count", [4, 1], now - 60 * 10**9, attrs, thread="worker-1")
    st, ct, raw = otlp_raw(srv, body, token=SCOPED, headers={"Accept": "*/*"})
    check(st == 200 and ct == "application/x-protobuf" and raw == b"",
          "OTLP's answer: an empty ExportProfilesServiceResponse (protobuf)", (st, ct, raw))
    t = srv.get("/api/v1/targets", namespace="shop", service="res-svc", **{"from": "-1h"})
    tg = t["targets"][0]["target"] if t["targets"] else {}
    check(tg.get("pod") == "res-pod-1" and tg.get("container") == "app",
          "resource attributes name the target (k8s.namespace.name, service.name, k8s.pod.name, "
          "k8s.container.name)", t)
    hist = [h for h in t["history"] if h.get("engine") == "otlp"]
    check(hist and hist[0]["mode"] == "pushed" and hist[0]["state"] == "active",
          "its status says it was pushed over OTLP", t["history"][:2])
    f = srv.flame("shop", "res-svc", "cpu", threads=True)
    got = tree_collapsed(f["tree"], "self_samples")
    check(got == {"worker-1;f.Main.run;f.Main.work": 5}, "5 samples of worker-1, run -> work", got)
    # a window older than the retention: OTLP's partial_success says so
    old = mk_otlp("cpu", "count", [2], now - 30 * 86400 * 10**9, attrs)
    st, ct, raw = otlp_raw(srv, old, headers={"Accept": "application/x-protobuf"})
    partial = {}
    for fnum, w, v in pb_fields(raw):
        if fnum == 1:
            partial = {g: x for g, _, x in pb_fields(v)}
    check(st == 200 and partial.get(1) == 1 and b"retention" in partial.get(2, b""),
          "a window older than the retention is OTLP's partial_success (1 rejected)", (st, raw))


def otlp_refusals(srv):
    now = time.time_ns()
    st, ct, raw = otlp_raw(srv, mk_otlp("cache-misses", "events", [1], now))
    check(st == 400 and "'cache-misses'" in error_message(raw),
          "an unknown sample type is refused by name (400)", raw[:300])
    st, ct, raw = otlp_raw(srv, b"\x0a\xff\xff\xff\x0f\x01")
    check(st == 400 and "protobuf" in error_message(raw) and "@0" in error_message(raw),
          "a broken message is refused with the place (400)", raw[:300])
    bomb = gzip.compress(b"\x00" * (9 << 20))
    st, ct, raw = otlp_raw(srv, bomb, headers={"Content-Encoding": "gzip"})
    check(st == 413, "a body that inflates past --max-decompressed is 413", (st, raw[:200]))
    st, ct, raw = otlp_raw(srv, mk_otlp("cpu", "count", [1], now), token="nope-0123456789abcdef")
    check(st == 401, "an unknown token is 401", st)
    other = mk_otlp("cpu", "count", [1], now, [("k8s.namespace.name", "payments")])
    st, ct, raw = otlp_raw(srv, other, token=SCOPED)
    check(st == 403 and "payments" in error_message(raw),
          "a namespace outside the token's scope is 403", raw[:300])
    st, ct, raw = otlp_raw(srv, b"{}", headers={"Content-Type": "application/json"})
    check(st == 415, "OTLP/JSON is refused (415)", (st, raw[:200]))
    for path in ("/v1development/profiles", pyro_query("app{namespace=pyro}", "jfr")):
        head = srv.oversize(path, (4 << 20) + 1)  # the server runs with --max-body 4 MiB
        check(head.startswith("HTTP/1.1 413"), "a body over --max-body is 413 (%s)"
              % path.split("?")[0], head[:200])
    # an OpenTelemetry collector's basicauth extension: the token as the user
    st, ct, raw = srv.post("/v1development/profiles", mk_otlp("cpu", "count", [1], now),
                           {"Content-Type": "application/x-protobuf"}, basic=INGEST + ":")
    check(st == 200, "OTLP with the token as the basic-auth user is accepted", (st, raw[:200]))


# ---- Pyroscope's /ingest ----

def multipart(parts):
    """A multipart/form-data body as OkHttp writes Pyroscope's agent's."""
    boundary = "a7b3f1e0-5d2c-4c1b-9e8f-jprof"
    out = b""
    for name, data in parts:
        out += ("--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
                "Content-Length: %d\r\n\r\n" % (boundary, name, name, len(data))).encode()
        out += data + b"\r\n"
    out += ("--%s--\r\n" % boundary).encode()
    return out, "multipart/form-data; boundary=" + boundary


def labels_snapshot():
    """io.pyroscope.labels.pb.LabelsSnapshot: one context {span_name: GET /}."""
    ctx = enc(1, enc(1, 1) + enc(2, 2))
    return (enc(1, enc(1, 7) + enc(2, ctx)) + enc(2, enc(1, 1) + enc(2, "span_name")) +
            enc(2, enc(1, 2) + enc(2, "GET /")))


def pyro_query(name, fmt, **extra):
    now = int(time.time())
    q = {"name": name, "from": now - 10, "until": now, "format": fmt, "sampleRate": "100",
         "spyName": "javaspy", "units": "samples", "aggregationType": "sum"}
    q.update(extra)
    return "/ingest?" + urllib.parse.urlencode(q)


KINDS = ("cpu", "wall", "alloc", "lock", "park", "nativemem", "live", "nativelock", "cputime")


def pyroscope_jfr(srv):
    for jfr in ("asprof-cpu-alloc-lock.jfr", "asprof-wall.jfr", "asprof-jdk25.jfr"):
        svc = "pyro-" + jfr[:-4]
        data = gzip.compress(open(os.path.join(FIX, jfr), "rb").read())
        body, ctype = multipart([("jfr", data), ("labels", gzip.compress(labels_snapshot()))])
        name = "shop.app{service_name=%s,namespace=pyro,pod=%s-0,hostname=node-1}" % (svc, svc)
        url = pyro_query(name, "jfr")
        st, ct, raw = srv.post(url, body, {"Content-Type": ctype}, basic="pyroscope:" + INGEST)
        check(st == 200 and json.loads(raw).get("status") == "accepted",
              "%s posted as Pyroscope's Java agent posts it (multipart jfr + labels, basic "
              "auth) is accepted" % jfr, (st, raw[:300]))
        if jfr == "asprof-cpu-alloc-lock.jfr":  # an agent's retry: nothing written twice
            st, ct, raw = srv.post(url, body, {"Content-Type": ctype}, basic="pyroscope:" + INGEST)
            check(st == 200 and json.loads(raw).get("status") == "duplicate",
                  "the same /ingest request again is a duplicate", (st, raw[:300]))
            st, ct, raw = srv.post(url, body, {"Content-Type": ctype}, basic="pyroscope:" + SCOPED)
            check(st == 403 and "pyro" in error_message(raw),
                  "/ingest: a namespace outside the token's scope is 403", (st, raw[:300]))
        t = srv.get("/api/v1/targets", namespace="pyro", service=svc, **{"from": "-1h"})
        got_kinds = set(t["targets"][0]["kinds"]) if t["targets"] else set()
        want = {k: (jfr_collapsed(jfr, k), jfr_collapsed(jfr, k, True)) for k in KINDS}
        want_kinds = {k for k, (s, v) in want.items() if s}
        check(got_kinds == want_kinds, "%s: stored under service %s with the kinds jprof-top "
              "reads (%s)" % (jfr, svc, ",".join(sorted(want_kinds))), (got_kinds, want_kinds))
        for k in sorted(want_kinds):
            m = srv.flame("pyro", svc, k)["meta"]
            s, v = sum(want[k][0].values()), sum(want[k][1].values())
            check(m["samples"] == s and m["total"] == v,
                  "%s %s: samples %d and total %d equal jprof-top --jfr" % (jfr, k, s, v),
                  (m["samples"], m["total"]))
        hist = [h for h in t["history"] if h.get("engine") == "pyroscope"]
        check(hist and "javaspy" in (hist[0].get("message") or ""),
              "%s: the status names Pyroscope and the spy" % jfr, t["history"][:1])
    # a raw JFR body (older agents), a bearer token
    jfr = "asprof-itimer.jfr"
    st, ct, raw = srv.post(pyro_query("itimer-app.itimer{namespace=pyro}", "jfr"),
                           open(os.path.join(FIX, jfr), "rb").read(),
                           {"Content-Type": "application/octet-stream"})
    check(st == 200, "a raw JFR body with a bearer token is accepted", raw[:300])
    same_tree(srv, "pyro", "itimer-app", "cpu", jfr_collapsed(jfr, "cpu"),
              jfr_collapsed(jfr, "cpu", True), "a raw itimer JFR (name app.itimer)")


def go_pprof():
    """A pprof profile as Go writes a CPU profile: samples/count and
    cpu/nanoseconds, a period of 10 ms, a thread_name label."""
    strings = ["", "samples", "count", "cpu", "nanoseconds", "main.main", "main.work",
               "thread_name", "worker"]
    p = enc(1, enc(1, 1) + enc(2, 2)) + enc(1, enc(1, 3) + enc(2, 4))
    p += enc(2, enc(1, enc_varint(20) + enc_varint(10)) + enc(2, enc_varint(3) + enc_varint(3 * 10**7))
             + enc(3, enc(1, 7) + enc(2, 8)))
    p += enc(2, enc(1, enc_varint(10)) + enc(2, enc_varint(1) + enc_varint(10**7)))
    p += enc(4, enc(1, 10) + enc(4, enc(1, 100))) + enc(4, enc(1, 20) + enc(4, enc(1, 200)))
    p += enc(5, enc(1, 100) + enc(2, 5)) + enc(5, enc(1, 200) + enc(2, 6))
    p += b"".join(enc(6, s) for s in strings)
    p += enc(11, enc(1, 3) + enc(2, 4)) + enc(12, 10**7)
    return gzip.compress(p)


def pyroscope_pprof(srv):
    jfr = "asprof-cpu-alloc-lock.jfr"
    r = subprocess.run([TOP, "-b", "--jfr", os.path.join(FIX, jfr), "--event", "alloc",
                        "--format", "pprof"], capture_output=True, timeout=60)
    st, ct, raw = srv.post(pyro_query("exported.alloc_space{namespace=pyro}", "pprof"), r.stdout)
    check(r.returncode == 0 and st == 200, "jprof-top's pprof export posted as format=pprof",
          raw[:300])
    same_tree(srv, "pyro", "exported", "alloc", jfr_collapsed(jfr, "alloc"),
              jfr_collapsed(jfr, "alloc", True), "format=pprof (jprof-top --format pprof)")
    body, ctype = multipart([("profile", go_pprof())])
    st, ct, raw = srv.post(pyro_query("goapp.cpu{namespace=pyro}", "pprof"), body,
                           {"Content-Type": ctype}, basic=INGEST + ":")
    check(st == 200, "a Go-style pprof in a multipart 'profile' part, token as basic-auth user",
          raw[:300])
    f = srv.flame("pyro", "goapp", "cpu", threads=True)
    got_s, got_v = tree_collapsed(f["tree"], "self_samples"), tree_collapsed(f["tree"], "self")
    check(got_s == {"worker;main.main;main.work": 3, "[unknown thread];main.main": 1} and
          got_v == {"worker;main.main;main.work": 3 * 10**7, "[unknown thread];main.main": 10**7},
          "samples/count and cpu/nanoseconds make one cpu cell per stack (thread_name label)",
          (got_s, got_v))
    st, ct, raw = srv.post(pyro_query("app.cpu", "folded"), b"a;b 1")
    check(st == 415 and "folded" in error_message(raw), "format=folded is refused by name (415)",
          raw[:300])
    st, ct, raw = srv.post("/ingest?format=jfr", b"x")
    check(st == 400 and "name" in error_message(raw), "no name: 400", raw[:300])
    st, ct, raw = srv.post(pyro_query("app{namespace=pyro}", "jfr"), b"x", basic="u:wrong-token-0123456789")
    check(st == 401, "a wrong basic-auth token: 401", st)


# ---- OTLP out ----

def top_otlp(args):
    r = subprocess.run([TOP, "-b"] + args + ["--format", "otlp"], capture_output=True, timeout=60)
    if r.returncode != 0:
        return None, r.stderr.decode(errors="replace")
    return r.stdout, ""


def otlp_out(srv, tmp):
    jfr = "asprof-cpu-alloc-lock.jfr"
    path = os.path.join(FIX, jfr)
    for kind, unit in (("cpu", "nanoseconds"), ("alloc", "bytes")):
        data, err = top_otlp(["--jfr", path, "--event", kind])
        out, _ = otlp_collapsed(data or b"")
        check(out.get((kind, "count")) == jfr_collapsed(jfr, kind) and
              out.get((kind, unit)) == jfr_collapsed(jfr, kind, True),
              "jprof-top --format otlp (%s) read by this test: samples and %s equal the "
              "collapsed output" % (kind, unit), err or sorted(out))
    data, err = top_otlp(["--jfr", path, "--event", "cpu", "--threads"])
    out, _ = otlp_collapsed(data or b"")
    r = subprocess.run([TOP, "-b", "--jfr", path, "--event", "cpu", "--threads"],
                       capture_output=True, text=True, timeout=60)
    check(out.get(("cpu", "count")) == collapsed(r.stdout),
          "jprof-top --format otlp --threads: the thread.name attribute is the collapsed "
          "output's root frame", err)
    # readable by the same decoder: jprof-top's OTLP posted back
    st, ct, raw = otlp_raw(srv, data or b"", "?namespace=out&service=roundtrip")
    check(st == 200, "jprof-top's OTLP is accepted by /v1development/profiles", raw[:300])
    same_tree(srv, "out", "roundtrip", "cpu", jfr_collapsed(jfr, "cpu"),
              jfr_collapsed(jfr, "cpu", True), "jprof-top --format otlp posted back")
    # the server's flame graph as OTLP, and jprof-top's server source
    req = urllib.request.Request(srv.base + "/api/v1/flamegraph?" + urllib.parse.urlencode(
        {"namespace": "otlp", "service": "jfrconv", "kind": "cpu", "from": "-30d",
         "format": "otlp"}))
    req.add_header("Authorization", "Bearer " + READ)
    with urllib.request.urlopen(req, timeout=vgwrap.slow(30)) as resp:
        ctype, body = resp.headers.get("Content-Type"), resp.read()
    out, res = otlp_collapsed(body)
    tree = srv.flame("otlp", "jfrconv", "cpu")["tree"]
    check(ctype == "application/x-protobuf" and
          out.get(("cpu", "count")) == tree_collapsed(tree, "self_samples") and
          out.get(("cpu", "nanoseconds")) == tree_collapsed(tree, "self"),
          "/api/v1/flamegraph?format=otlp read by this test equals the stored tree", sorted(out))
    check(res.get("service.name") == "jfrconv" and res.get("k8s.namespace.name") == "otlp",
          "its resource names the service and namespace", res)
    tok = os.path.join(tmp, "read.tok")
    with open(tok, "w") as f:
        f.write(READ + "\n")
    data, err = top_otlp(["-n", "otlp", "-s", "jfrconv", "--event", "cpu", "--from", "-30d",
                          "--server", srv.base, "--token-file", tok])
    out, _ = otlp_collapsed(data or b"")
    check(out.get(("cpu", "count")) == tree_collapsed(tree, "self_samples"),
          "jprof-top -b -n NS -s SVC --event cpu --format otlp equals the stored tree", err)


# ---- jprof-top's screens of a pushed target (under tmux) ----

def tmux_wait(sess, want, secs=15):
    """The pane once it holds every string of want (or the last one seen)."""
    screen = ""
    for _ in range(int(vgwrap.slow(secs) * 5)):
        screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", sess], capture_output=True,
                                text=True).stdout
        if all(w in screen for w in want):
            break
        time.sleep(0.2)
    return screen


def tui_pushed(srv, tmp):
    """jprof-top -n shop -s res-svc: the OTLP target of otlp_answers_and_identity
    (no agent, no thread snapshot) opens on its Flame screen, titled with its
    source; its top table, the Status screen's pushed row and engine, and the
    threads screen saying why it has none."""
    if not shutil.which("tmux"):
        check(os.environ.get("CI") != "true", "tmux is installed (CI: nothing may be skipped)")
        print("SKIP: tmux is not installed: jprof-top's screens of a pushed target not checked")
        return
    tok = os.path.join(tmp, "tui.tok")
    with open(tok, "w") as f:
        f.write(READ + "\n")
    sess = "jprof-ingest-%d" % os.getpid()
    subprocess.run(["tmux", "new-session", "-d", "-s", sess, "-x", "160", "-y", "30",
                    "%s -n shop -s res-svc --server %s --token-file %s; sleep 30"
                    % (TOP, srv.base, tok)], check=True)
    try:
        s = tmux_wait(sess, ["f.Main.work", "FRAME"])
        lines = s.splitlines()
        check("source: pushed (otlp)" in lines[0] and "pod res-pod-1" in lines[0],
              "jprof-top: the pushed target opens with its source in the title", s)
        check(any(re.match(r"^\s+5 100\.0%\s+5 100\.0%\s+f\.Main\.work$", ln) for ln in lines)
              and any(re.match(r"^\s+0\s+0\.0%\s+5 100\.0%\s+f\.Main\.run$", ln) for ln in lines),
              "jprof-top: it opens on the Flame screen, the top table run -> work (5 samples)", s)
        subprocess.run(["tmux", "send-keys", "-t", sess, "F9"])
        s = tmux_wait(sess, ["engine otlp", "PROFILING"])
        row = [ln for ln in s.splitlines() if ln.startswith("res-pod-1 ")]
        check(row and re.search(r"\sactive\s+-\s+pushed\s+cpu\s", row[0]) and
              "OpenTelemetry profiles pushed by an OTLP exporter  engine otlp" in s and
              re.search(r"^otlp .*: \d+ batches accepted", s, re.M),
              "jprof-top's Status screen: the pod pushed, its kinds, the OTLP source and sender",
              s)
        subprocess.run(["tmux", "send-keys", "-t", sess, "F5"])
        s = tmux_wait(sess, ["no thread snapshots: profiles pushed by another profiler"])
        check("no thread snapshots: profiles pushed by another profiler" in s and
              "refresh failed" not in s, "jprof-top's Threads screen says why it has none", s)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", sess], capture_output=True)


def status_sources(srv):
    ing = srv.get("/api/v1/ingestion", **{"from": "-1h"})
    seen = {c.get("collector"): c.get("last_seen") for c in ing.get("collectors", [])}
    check({"otlp", "pyroscope"} <= set(seen) and seen["otlp"] and seen["pyroscope"],
          "the ingestion health lists the otlp and pyroscope senders, with their last batch",
          seen)


def main():
    for p in (SERVER, TOP):
        if not os.access(p, os.X_OK):
            print("FAIL: %s not built" % p)
            return 1
    tmp = tempfile.mkdtemp(prefix="jprof-ingest-formats.")
    srv = Server(tmp)
    try:
        otlp_async_profiler(srv)
        otlp_answers_and_identity(srv)
        otlp_refusals(srv)
        pyroscope_jfr(srv)
        pyroscope_pprof(srv)
        otlp_out(srv, tmp)
        status_sources(srv)
        tui_pushed(srv, tmp)
    finally:
        srv.stop()
        if failures:
            print("server log:\n" + open(os.path.join(tmp, "server.log")).read()[-3000:])
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
