#!/usr/bin/env python3
"""daemonset.py - runs one DaemonSet of a rendered manifest as a REAL
container (podman + runc), with exactly the privileges its pod template
declares: host PID namespace, user and group, capabilities dropped and
added, no-new-privileges, privileged or not, read-only root, memory and
CPU limits, its secret and emptyDir volumes, its environment (fieldRef
spec.nodeName included) and the service account a pod gets mounted. A
manifest change that takes away what the program needs fails the test that
runs it. What a cluster gives and this machine has not is said and bridged:

  - the pod network: the container uses the host's (the test's servers
    listen on 127.0.0.1), and the manifest's service names resolve there
    (--add-host NAME:127.0.0.1);
  - the API server: KUBERNETES_SERVICE_HOST/PORT name the test's FAKE API
    (fake-k8s-api.py over HTTPS), the service account directory holds its
    token and CA;
  - ports: every port in the program's arguments is replaced by the one the
    test chose (the host's ports are shared);
  - --set FLAG=VALUE replaces one argument (a shorter --window for a test).

  daemonset.py MANIFEST NAME IMAGE --ctr CTR --node NODE --api-port P
      --sa-dir DIR --secret NAME=DIR... --port OLD=NEW... --set FLAG=VALUE...
      [--print]

Prints the podman command line; runs it unless --print. Exit 0 when podman
started the container, 1 otherwise, 2 when the manifest asks for what this
script cannot give (it says what).
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import k8s_check  # noqa: E402  (its YAML reader: kustomize's output, stdlib only)

SA_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


def refuse(msg):
    sys.stderr.write("daemonset.py: %s\n" % msg)
    sys.exit(2)


def quantity_mib(v):
    """A memory quantity ("160Mi", "1Gi", "500M") in bytes."""
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|K|M|G)?", str(v))
    if not m:
        refuse("memory quantity %r" % v)
    mult = {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "K": 1000, "M": 10 ** 6,
            "G": 10 ** 9}[m.group(2)]
    return int(m.group(1)) * mult


def cpus(v):
    v = str(v)
    return "%.3f" % (int(v[:-1]) / 1000.0 if v.endswith("m") else float(v))


def security(pod, c):
    """podman flags for the pod's and the container's securityContext."""
    psc, sc = pod.get("securityContext") or {}, c.get("securityContext") or {}
    flags = []
    user = sc.get("runAsUser", psc.get("runAsUser"))
    group = sc.get("runAsGroup", psc.get("runAsGroup"))
    if user is not None:
        flags += ["--user", "%d%s" % (user, "" if group is None else ":%d" % group)]
    if sc.get("runAsNonRoot", psc.get("runAsNonRoot")) and user in (None, 0):
        refuse("runAsNonRoot without a non-root runAsUser")
    if sc.get("privileged"):
        flags.append("--privileged")
    if sc.get("allowPrivilegeEscalation") is False:
        flags += ["--security-opt", "no-new-privileges"]
    if sc.get("readOnlyRootFilesystem"):
        # Kubernetes adds no writable tmpfs of its own, podman would
        flags += ["--read-only", "--read-only-tmpfs=false"]
    caps = sc.get("capabilities") or {}
    for cap in caps.get("drop", []):
        flags += ["--cap-drop", cap]
    for cap in caps.get("add", []):
        flags += ["--cap-add", cap]
    seccomp = (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
    if seccomp == "Unconfined":
        flags += ["--security-opt", "seccomp=unconfined"]
    elif seccomp not in (None, "RuntimeDefault"):
        refuse("seccomp profile %s" % seccomp)
    return flags


def volumes(pod, c, secrets):
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    flags = []
    for m in c.get("volumeMounts", []):
        v = vols.get(m["name"]) or refuse("volume %s is not declared" % m["name"])
        ro = ":ro" if m.get("readOnly") else ""
        if "secret" in v:
            name = v["secret"]["secretName"]
            src = secrets.get(name) or refuse("no --secret %s=DIR given" % name)
            mode = v["secret"].get("defaultMode", 0o644)
            for f in os.listdir(src):
                os.chmod(os.path.join(src, f), mode)
            flags += ["-v", "%s:%s%s" % (src, m["mountPath"], ro or ":ro")]
        elif "emptyDir" in v:
            size = v["emptyDir"].get("sizeLimit")
            opt = "rw,mode=1777" + (",size=%d" % quantity_mib(size) if size else "")
            flags += ["--tmpfs", "%s:%s" % (m["mountPath"], opt)]
        elif "hostPath" in v:
            flags += ["-v", "%s:%s%s" % (v["hostPath"]["path"], m["mountPath"], ro)]
        else:
            refuse("volume %s: only secret, emptyDir and hostPath are mapped" % m["name"])
    return flags


def environment(c, node):
    flags = []
    for e in c.get("env", []):
        if "value" in e:
            flags += ["-e", "%s=%s" % (e["name"], e["value"])]
            continue
        path = ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
        if path != "spec.nodeName":
            refuse("env %s: only values and fieldRef spec.nodeName are mapped" % e["name"])
        flags += ["-e", "%s=%s" % (e["name"], node)]
    return flags


def arguments(c, ports, sets):
    """command + args, with the test's ports and --set values; the service
    names the arguments reach (host names of URLs)"""
    out, hosts = [], set()
    for a in list(c.get("command", [])) + list(c.get("args", [])):
        flag = a.split("=", 1)[0]
        if flag in sets:
            a = "%s=%s" % (flag, sets.pop(flag))
        for old, new in ports.items():
            a = re.sub(r":%s\b" % old, ":%s" % new, a)
        for h in re.findall(r"://([A-Za-z0-9.-]+)", a):
            hosts.add(h)
        out.append(a)
    out += ["%s=%s" % kv for kv in sets.items()]
    return out, hosts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("name")
    ap.add_argument("image")
    ap.add_argument("--ctr", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--api-port", required=True)
    ap.add_argument("--sa-dir", required=True)
    ap.add_argument("--secret", action="append", default=[])
    ap.add_argument("--port", action="append", default=[])
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--print", action="store_true")
    a = ap.parse_args()
    with open(a.manifest) as f:
        docs = k8s_check.load_docs(f.read(), a.manifest)
    ds = [d for d in docs if d.get("kind") == "DaemonSet" and d["metadata"]["name"] == a.name]
    if len(ds) != 1:
        refuse("no DaemonSet %s in %s" % (a.name, a.manifest))
    pod = ds[0]["spec"]["template"]["spec"]
    if len(pod["containers"]) != 1:
        refuse("one container per pod is mapped")
    c = pod["containers"][0]
    secrets = dict(s.split("=", 1) for s in a.secret)
    ports = dict(p.split("=", 1) for p in a.port)
    sets = dict(s.split("=", 1) for s in a.set)
    cmd = ["podman", "run", "-d", "--name", a.ctr, "--hostname", a.ctr, "--network", "host"]
    if pod.get("hostPID"):
        cmd += ["--pid", "host"]
    cmd += security(pod, c)
    limits = (c.get("resources") or {}).get("limits") or {}
    if "memory" in limits:
        cmd += ["--memory", str(quantity_mib(limits["memory"]))]
    if "cpu" in limits:
        cmd += ["--cpus", cpus(limits["cpu"])]
    cmd += volumes(pod, c, secrets)
    cmd += environment(c, a.node)
    if pod.get("automountServiceAccountToken", True):
        cmd += ["-v", "%s:%s:ro" % (a.sa_dir, SA_PATH), "-e", "KUBERNETES_SERVICE_HOST=127.0.0.1",
                "-e", "KUBERNETES_SERVICE_PORT=%s" % a.api_port]
    args, hosts = arguments(c, ports, sets)
    for h in sorted(hosts):
        if not re.fullmatch(r"[0-9.]+|localhost", h):
            cmd += ["--add-host", "%s:127.0.0.1" % h]
    if not c.get("command"):
        refuse("the container names no command")
    cmd += ["--entrypoint", args[0], a.image] + args[1:]
    print(" ".join(cmd))
    if a.print:
        return 0
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
