#!/usr/bin/env python3
"""k8s_check.py - jprof's own schema check of rendered Kubernetes manifests
(`kubectl kustomize contrib/k8s/...` output), standard library only.

  k8s_check.py --image REF [--source DIR] [--bindir DIR] [--run-server]
               [--overlay embedded|clickhouse|clickhouse-cluster] RENDERED.yaml

Checks every workload's pod template and every container in it: requests
and limits (limits not below requests), liveness and readiness probes on an
endpoint the program really serves (its port from its own flags), non-root
except jprof-agent, no privileged, no privilege escalation, capabilities
dropped and only the agent's added (each with a comment giving the reason in
the source manifest), image tags (jprof's = what scripts/build-images
builds, never `latest`), RBAC limited to pods get/list/watch, no Secret
objects (tokens are made at install time), a NetworkPolicy for every
workload, Prometheus scrape annotations on a declared port, and every jprof
flag known to the program's --help. With --run-server, starts the real
jprof-server with the manifest's arguments (paths and address moved to a
temporary directory and 127.0.0.1) and asks it its probes' paths.

Prints PASS:/FAIL: lines and a summary; exit 0 when all passed, 1 when a
check failed, 2 on bad usage or input that is not the YAML kustomize writes.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

MAX_INPUT = 4 << 20  # rendered manifests are a few kB; refuse anything huge
WORKLOADS = ("Deployment", "DaemonSet", "StatefulSet", "Job", "CronJob", "ReplicaSet", "Pod")
AGENT_CAPS = {"SYS_PTRACE", "KILL", "SETUID", "SETGID", "CHOWN", "DAC_OVERRIDE", "FOWNER"}
# the endpoints each program serves without a token (src/server/http.c,
# src/agent/metrics.c), and the flag naming its listening address
ENDPOINTS = {"jprof-server": ("/healthz", "--listen"), "jprof-agent": ("/healthz", "--metrics-listen")}


class YamlError(Exception):
    pass


# ---- a reader for the YAML subset kustomize writes (block style) ----


def scalar(text, where):
    t = text.strip()
    if t in ("", "null", "~"):
        return None
    if t == "{}":
        return {}
    if t == "[]":
        return []
    if t[0] == '"':
        try:
            return json.loads(t)
        except ValueError as e:
            raise YamlError(f"{where}: bad double-quoted string: {e}") from None
    if t[0] == "'":
        if len(t) < 2 or t[-1] != "'":
            raise YamlError(f"{where}: unterminated single-quoted string")
        return t[1:-1].replace("''", "'")
    if t[0] == "[" and t[-1] == "]":
        return [scalar(x, where) for x in t[1:-1].split(",") if x.strip()]
    if t[0] in "{&*!|>":
        raise YamlError(f"{where}: YAML feature not expected in kustomize output: {t[:40]}")
    if t in ("true", "false"):
        return t == "true"
    if re.fullmatch(r"-?[0-9]+", t):
        return int(t)
    return t


def split_key(s, where):
    m = re.match(r'^("(?:[^"\\]|\\.)*"|[^:#\s][^:]*?):(\s+|$)(.*)$', s)
    if not m:
        return None
    key = m.group(1)
    if key[0] == '"':
        key = json.loads(key)
    return key, m.group(3)


class Reader:
    def __init__(self, lines, name):
        self.lines = lines  # (number, indent, text) without blanks/comments
        self.pos = 0
        self.name = name

    def where(self, i=None):
        i = self.pos if i is None else i
        n = self.lines[i][0] if i < len(self.lines) else "end"
        return f"{self.name}:{n}"

    def node(self, indent):
        if self.pos >= len(self.lines):
            return None
        _, ind, text = self.lines[self.pos]
        if ind < indent:
            return None
        if text.startswith("- ") or text == "-":
            return self.seq(ind)
        return self.mapping(ind)

    def block(self, parent_indent):
        out = []
        while self.pos < len(self.lines) and (
            self.lines[self.pos][1] > parent_indent or self.lines[self.pos][2] == ""
        ):
            out.append(self.lines[self.pos])
            self.pos += 1
        if not out:
            return ""
        base = min(l[1] for l in out if l[2])
        return "\n".join(" " * (l[1] - base) + l[2] for l in out) + "\n"

    def value(self, rest, indent, where):
        r = rest.strip()
        if r in ("|", "|-", ">", ">-", "|+"):
            return self.block(indent)
        if r == "":
            if self.pos < len(self.lines):
                _, ind, text = self.lines[self.pos]
                # kustomize writes a list under a key at the key's own indent
                if ind > indent or (ind == indent and text.startswith("-")):
                    return self.node(ind)
            return None
        return scalar(r, where)

    def mapping(self, indent):
        out = {}
        while self.pos < len(self.lines):
            _, ind, text = self.lines[self.pos]
            if ind < indent or text.startswith("-"):
                break
            if ind > indent:
                raise YamlError(f"{self.where()}: unexpected indentation")
            where = self.where()
            kv = split_key(text, where)
            if kv is None:
                raise YamlError(f"{where}: expected 'key: value', got {text[:60]!r}")
            self.pos += 1
            key, rest = kv
            if key in out:
                raise YamlError(f"{where}: duplicate key {key!r}")
            out[key] = self.value(rest, indent, where)
        return out

    def seq(self, indent):
        out = []
        while self.pos < len(self.lines):
            num, ind, text = self.lines[self.pos]
            if ind != indent or not text.startswith("-"):
                break
            where = self.where()
            item = text[1:].lstrip()
            inner = indent + (len(text) - len(item))
            if item == "":
                self.pos += 1
                out.append(self.node(indent + 1))
            elif split_key(item, where) and not item.startswith(("'", '"')):
                # "- key: v" starts a mapping at the item's column
                self.lines[self.pos] = (num, inner, item)
                out.append(self.mapping(inner))
            else:
                self.pos += 1
                out.append(scalar(item, where))
        return out


def load_docs(text, name):
    docs, cur, start = [], [], 1

    def flush():
        if cur:
            lines = []
            for n, raw in cur:
                if "\t" in raw[: len(raw) - len(raw.lstrip())]:
                    raise YamlError(f"{name}:{n}: tab in indentation")
                s = raw.rstrip()
                if not s.strip() or s.lstrip().startswith("#"):
                    if lines and s.strip() == "":
                        lines.append((n, 0, ""))  # keeps blank lines of block scalars
                    continue
                lines.append((n, len(s) - len(s.lstrip()), s.lstrip()))
            while lines and lines[-1][2] == "":
                lines.pop()
            if lines:
                r = Reader(lines, name)
                d = r.node(0)
                if r.pos != len(lines):
                    raise YamlError(f"{r.where()}: cannot read from here on")
                docs.append(d)

    for n, raw in enumerate(text.split("\n"), 1):
        if raw.rstrip() == "---":
            flush()
            cur, start = [], n + 1
        else:
            cur.append((n, raw))
    flush()
    return docs


# ---- the checks ----


class Result:
    def __init__(self):
        self.npass = 0
        self.nfail = 0

    def ok(self, cond, what, detail=""):
        if cond:
            self.npass += 1
            print(f"PASS: {what}")
        else:
            self.nfail += 1
            print(f"FAIL: {what}" + (f": {detail}" if detail else ""))
        return cond


def quantity(v, where):
    """CPU cores or memory bytes of a Kubernetes quantity."""
    s = str(v)
    m = re.fullmatch(r"([0-9.]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?", s)
    if not m:
        raise YamlError(f"{where}: bad quantity {s!r}")
    mul = {None: 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
           "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4}[m.group(2)]
    return float(m.group(1)) * mul


def get(d, *path, default=None):
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return default
        d = d[p]
    return d


def pod_spec(doc):
    kind = doc.get("kind")
    if kind == "Pod":
        return doc.get("spec") or {}, get(doc, "metadata") or {}
    if kind == "CronJob":
        t = get(doc, "spec", "jobTemplate", "spec", "template") or {}
    else:
        t = get(doc, "spec", "template") or {}
    return t.get("spec") or {}, t.get("metadata") or {}


def program_of(c):
    cmd = c.get("command") or []
    return os.path.basename(str(cmd[0])) if cmd else None


def arg_value(args, flag):
    for a in args:
        a = str(a)
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    for i, a in enumerate(args[:-1]):
        if a == flag:
            return str(args[i + 1])
    return None


def declared_ports(c):
    return {p.get("name"): p.get("containerPort") for p in c.get("ports") or []}


def check_image(res, who, image, want_ref):
    repo_want, tag_want = want_ref.rsplit(":", 1)
    release = re.match(r"[0-9]+\.[0-9]+\.[0-9]+", tag_want)
    m = re.fullmatch(r"([^@]+?)(?::([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(@sha256:[0-9a-f]{64})?", image or "")
    if not res.ok(m is not None, f"{who}: image {image!r} is a valid reference"):
        return
    repo, tag, digest = m.groups()
    res.ok(tag is not None or digest is not None, f"{who}: image {image} names a tag or digest")
    res.ok(tag != "latest", f"{who}: image {image} does not use the 'latest' tag")
    if repo.rsplit("/", 1)[-1] == "jprof":  # one of ours, whatever the registry
        ok_tags = {tag_want} | ({release.group(0)} if release else set())
        res.ok(repo == repo_want and tag in ok_tags,
               f"{who}: image {image} is what scripts/build-images builds",
               f"want {repo_want}:{' or '.join(sorted(ok_tags))}")


def check_probe(res, who, c, kind, prog, args):
    p = c.get(kind)
    if not res.ok(isinstance(p, dict), f"{who}: has a {kind}"):
        return None
    hg = p.get("httpGet")
    if prog in ENDPOINTS:
        path, flag = ENDPOINTS[prog]
        if not res.ok(isinstance(hg, dict), f"{who}: {kind} is an HTTP GET"):
            return None
        res.ok(hg.get("path") == path, f"{who}: {kind} asks {prog}'s {path}", f"path {hg.get('path')}")
        port = hg.get("port")
        port = declared_ports(c).get(port, port)
        listen = arg_value(args, flag) or ""
        lport = listen.rsplit(":", 1)[-1] if ":" in listen else None
        res.ok(lport is not None and str(port) == lport,
               f"{who}: {kind} port {port} is the one {prog} listens on ({flag}={listen})")
        return hg.get("path")
    res.ok(any(k in p for k in ("httpGet", "tcpSocket", "exec", "grpc")), f"{who}: {kind} has a handler")
    if isinstance(hg, dict):
        port = declared_ports(c).get(hg.get("port"), hg.get("port"))
        res.ok(port in declared_ports(c).values(), f"{who}: {kind} port {hg.get('port')} is declared")
    return None


def check_security(res, who, prog, c, pod):
    psc = pod.get("securityContext") or {}
    sc = c.get("securityContext") or {}
    res.ok(sc.get("privileged") is not True and psc.get("privileged") is not True,
           f"{who}: not privileged")
    res.ok(sc.get("allowPrivilegeEscalation") is False, f"{who}: allowPrivilegeEscalation false")
    caps = sc.get("capabilities") or {}
    res.ok("ALL" in (caps.get("drop") or []), f"{who}: drops ALL capabilities")
    added = set(caps.get("add") or [])
    if prog == "jprof-agent":
        res.ok(added <= AGENT_CAPS, f"{who}: adds only the agent's capabilities",
               f"unexpected {sorted(added - AGENT_CAPS)}")
        res.ok(pod.get("hostPID") is True, f"{who}: hostPID (finds the node's JVMs in /proc)")
        uid = sc.get("runAsUser", psc.get("runAsUser"))
        res.ok(uid == 0, f"{who}: runs as root, limited to its capabilities (attach as any user)")
    else:
        res.ok(not added, f"{who}: adds no capabilities", f"adds {sorted(added)}")
        nonroot = sc.get("runAsNonRoot", psc.get("runAsNonRoot"))
        uid = sc.get("runAsUser", psc.get("runAsUser"))
        res.ok(nonroot is True and uid not in (None, 0), f"{who}: runAsNonRoot with a numeric non-zero user",
               f"runAsNonRoot={nonroot} runAsUser={uid}")
        res.ok(pod.get("hostPID") is not True, f"{who}: no hostPID")
    if prog in ENDPOINTS:
        res.ok(sc.get("readOnlyRootFilesystem") is True, f"{who}: read-only root filesystem")
    res.ok(pod.get("hostNetwork") is not True and pod.get("hostIPC") is not True,
           f"{who}: no hostNetwork or hostIPC")


def check_resources(res, who, c):
    r = c.get("resources") or {}
    for part in ("requests", "limits"):
        for k in ("cpu", "memory"):
            res.ok(get(r, part, k) is not None, f"{who}: {part}.{k} set")
    for k in ("cpu", "memory"):
        lim, req = get(r, "limits", k), get(r, "requests", k)
        if lim is not None and req is not None:
            res.ok(quantity(lim, who) >= quantity(req, who), f"{who}: {k} limit {lim} >= request {req}")


def help_flags(bindir, prog, cache):
    if prog not in cache:
        exe = shutil.which(prog, path=bindir) if bindir else None
        if exe is None:
            cache[prog] = None
        else:
            out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30)
            cache[prog] = set(re.findall(r"--[a-z][a-z0-9-]*", out.stdout + out.stderr))
    return cache[prog]


def check_flags(res, who, prog, args, bindir, cache):
    known = help_flags(bindir, prog, cache)
    if known is None:
        return
    flags = [str(a).split("=", 1)[0] for a in args if str(a).startswith("--")]
    unknown = [f for f in flags if f not in known]
    res.ok(not unknown, f"{who}: every flag is in {prog} --help", f"unknown {unknown}")


def source_capability_comments(res, srcdir):
    """Each capability the agent adds carries a comment line right above it."""
    path = os.path.join(srcdir, "base", "agent.yaml")
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read(MAX_INPUT).split("\n")
    except OSError as e:
        res.ok(False, f"{path} readable", str(e))
        return
    in_add, prev_comment, seen = False, False, 0
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if s == "add:":
            in_add, prev_comment = True, False
            continue
        if in_add:
            if s.startswith("#"):
                prev_comment = True
            elif s.startswith("- "):
                seen += 1
                res.ok(prev_comment, f"agent.yaml:{n}: capability {s[2:]} has a comment giving the reason")
                prev_comment = False
            else:
                in_add = False
    res.ok(seen > 0, f"agent.yaml lists the agent's capabilities ({seen})")


def run_server(res, who, bindir, c):
    """The real jprof-server with the manifest's arguments, asked its probe paths."""
    exe = shutil.which("jprof-server", path=bindir)
    if not res.ok(exe is not None, f"{who}: jprof-server found in {bindir} to run"):
        return
    tmp = tempfile.mkdtemp(prefix="jprof-k8s-check.")
    proc = None
    try:
        with open(os.path.join(tmp, "tokens"), "w") as f:
            f.write("k8s-check-token-0123456789 read *\n")
        moved = []
        for a in c.get("args") or []:
            a = str(a)
            if a.startswith("--listen="):
                a = "--listen=127.0.0.1:0"
            elif a.startswith("--tokens="):
                a = "--tokens=" + os.path.join(tmp, "tokens")
            elif a.startswith("--data-dir="):
                a = "--data-dir=" + os.path.join(tmp, "data")
            moved.append(a)
        moved.append("--port-file=" + os.path.join(tmp, "port"))
        proc = subprocess.Popen([exe] + moved, stdout=subprocess.DEVNULL,
                                stderr=open(os.path.join(tmp, "err"), "w"))
        port = None
        for _ in range(100):  # up to 10 s
            if proc.poll() is not None:
                break
            try:
                with open(os.path.join(tmp, "port")) as f:
                    port = int(f.read().strip() or "0") or None
            except (OSError, ValueError):
                port = None
            if port:
                break
            time.sleep(0.1)
        if not res.ok(port is not None, f"{who}: jprof-server starts with the manifest's arguments",
                      open(os.path.join(tmp, "err")).read()[:300]):
            return
        for kind in ("readinessProbe", "livenessProbe"):
            path = get(c, kind, "httpGet", "path")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                    code = r.status
            except urllib.error.HTTPError as e:
                code = e.code
            except OSError as e:
                code = str(e)
            res.ok(code == 200, f"{who}: the running server answers its {kind} {path} with 200", f"got {code}")
        path = get(c, "ports", default=[{}])
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                body = r.read(1 << 20).decode("utf-8", "replace")
            res.ok("# TYPE" in body, f"{who}: Prometheus can scrape /metrics without a token")
        except (urllib.error.HTTPError, OSError) as e:
            res.ok(False, f"{who}: Prometheus can scrape /metrics without a token", str(e))
    finally:
        if proc and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def covered_by_policy(labels, policies):
    for p in policies:
        sel = get(p, "spec", "podSelector", "matchLabels") or {}
        types = get(p, "spec", "policyTypes") or ["Ingress"]
        if "Ingress" in types and all(labels.get(k) == v for k, v in sel.items()):
            return True
    return False


def check(docs, a, res):
    kinds = [d.get("kind") for d in docs if isinstance(d, dict)]
    res.ok(all(isinstance(d, dict) and d.get("kind") and d.get("apiVersion") for d in docs),
           f"{len(docs)} objects, each with apiVersion and kind")
    res.ok("Secret" not in kinds, "no Secret in the manifests (tokens are made at install time)")
    policies = [d for d in docs if d.get("kind") == "NetworkPolicy"]
    cache = {}
    servers = []
    for d in docs:
        kind, name = d.get("kind"), get(d, "metadata", "name")
        if kind in ("Role", "ClusterRole"):
            for i, rule in enumerate(d.get("rules") or []):
                who = f"{kind}/{name} rule {i}"
                res.ok(set(rule.get("verbs") or []) <= {"get", "list", "watch"},
                       f"{who}: verbs only get/list/watch", f"verbs {rule.get('verbs')}")
                res.ok(rule.get("resources") == ["pods"] and rule.get("apiGroups") == [""],
                       f"{who}: only core pods", f"{rule.get('apiGroups')} {rule.get('resources')}")
        if kind not in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
            res.ok(get(d, "metadata", "namespace") == "jprof", f"{kind}/{name}: in namespace jprof")
        if kind not in WORKLOADS:
            continue
        pod, meta = pod_spec(d)
        labels = meta.get("labels") or {}
        ann = meta.get("annotations") or {}
        res.ok(covered_by_policy(labels, policies), f"{kind}/{name}: a NetworkPolicy governs its ingress")
        for v in pod.get("volumes") or []:
            hp = v.get("hostPath")
            res.ok(hp is None, f"{kind}/{name}: volume {v.get('name')} is not a hostPath",
                   f"hostPath {hp}")
        ports = set()
        for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            who = f"{kind}/{name} container {c.get('name')}"
            prog = program_of(c)
            args = [str(x) for x in c.get("args") or []]
            ports |= {p.get("containerPort") for p in c.get("ports") or []}
            check_image(res, who, c.get("image"), a.image)
            check_resources(res, who, c)
            check_probe(res, who, c, "livenessProbe", prog, args)
            check_probe(res, who, c, "readinessProbe", prog, args)
            check_security(res, who, prog, c, pod)
            if prog and prog.startswith("jprof"):
                check_flags(res, who, prog, args, a.bindir, cache)
            if prog == "jprof-server":
                servers.append((d, c, args))
        if labels.get("app.kubernetes.io/name") in ("jprof-server", "jprof-agent"):
            res.ok(ann.get("prometheus.io/scrape") == "true", f"{kind}/{name}: prometheus.io/scrape")
            port = ann.get("prometheus.io/port")
            res.ok(port is not None and int(port) in ports,
                   f"{kind}/{name}: prometheus.io/port {port} is a declared container port")
    for d, c, args in servers:
        who = f"Deployment/{get(d, 'metadata', 'name')}"
        replicas = get(d, "spec", "replicas", default=1)
        embedded = arg_value(args, "--clickhouse") is None
        if embedded:
            res.ok(replicas == 1, f"{who}: one replica on the embedded store", f"replicas {replicas}")
            res.ok(get(d, "spec", "strategy", "type") == "Recreate", f"{who}: Recreate (one process owns the files)")
            ddir = arg_value(args, "--data-dir")
            mounts = {m.get("mountPath"): m.get("name") for m in c.get("volumeMounts") or []}
            vols = {v.get("name"): v for v in pod_spec(d)[0].get("volumes") or []}
            vol = vols.get(mounts.get(ddir)) or {}
            res.ok(ddir is not None and "persistentVolumeClaim" in vol,
                   f"{who}: --data-dir {ddir} is on a PersistentVolumeClaim")
            claim = get(vol, "persistentVolumeClaim", "claimName")
            res.ok(any(x.get("kind") == "PersistentVolumeClaim" and get(x, "metadata", "name") == claim
                       for x in docs), f"{who}: its claim {claim} is in the manifests")
        else:
            res.ok(isinstance(replicas, int) and replicas > 1, f"{who}: more than one replica on ClickHouse",
                   f"replicas {replicas}")
            res.ok(arg_value(args, "--data-dir") is None, f"{who}: no --data-dir: stateless on ClickHouse")
        if a.overlay:
            res.ok(embedded == (a.overlay == "embedded"), f"{who}: the store of overlay {a.overlay}")
            cluster = arg_value(args, "--clickhouse-cluster")
            res.ok((cluster is not None) == (a.overlay == "clickhouse-cluster"),
                   f"{who}: --clickhouse-cluster only in overlay clickhouse-cluster", f"{cluster}")
        if a.run_server and embedded and a.bindir:
            run_server(res, who, a.bindir, c)
    res.ok(bool(servers), "the manifests run jprof-server")
    res.ok(any(program_of(c) == "jprof-agent" for d in docs if d.get("kind") == "DaemonSet"
               for c in pod_spec(d)[0].get("containers") or []), "the manifests run jprof-agent as a DaemonSet")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rendered")
    ap.add_argument("--image", required=True, help="the reference scripts/build-images --print-ref gives")
    ap.add_argument("--source", help="contrib/k8s, for the comment checks")
    ap.add_argument("--bindir", help="where jprof-server and jprof-agent are, for --help and --run-server")
    ap.add_argument("--overlay", choices=("embedded", "clickhouse", "clickhouse-cluster"))
    ap.add_argument("--run-server", action="store_true")
    a = ap.parse_args()
    if a.bindir:
        a.bindir = os.pathsep.join(os.path.abspath(p) for p in a.bindir.split(os.pathsep))
    try:
        with open(a.rendered, "rb") as f:
            raw = f.read(MAX_INPUT + 1)
        if len(raw) > MAX_INPUT:
            raise YamlError(f"{a.rendered}: larger than {MAX_INPUT} bytes")
        docs = load_docs(raw.decode("utf-8"), a.rendered)
    except (OSError, UnicodeDecodeError, YamlError) as e:
        print(f"k8s_check: {e}", file=sys.stderr)
        return 2
    if not docs:
        print(f"k8s_check: {a.rendered}: no objects", file=sys.stderr)
        return 2
    res = Result()
    try:
        check(docs, a, res)
        if a.source:
            source_capability_comments(res, a.source)
    except YamlError as e:
        print(f"k8s_check: {e}", file=sys.stderr)
        return 2
    print(f"k8s_check {os.path.basename(a.rendered)}: {res.npass} passed, {res.nfail} failed")
    return 1 if res.nfail else 0


if __name__ == "__main__":
    sys.exit(main())
