#!/usr/bin/env python3
"""fake-kubectl.py - a FAKE kubectl for jprof's tests. No API server and no
cluster run here: this script answers the handful of kubectl commands
kubectl-jprof uses from a state directory ($FAKE_KUBE_DIR/state.json), and
maps `kubectl exec` onto local JVMs that the test started in their own pid
and mount namespaces (nsenter -t HOSTPID -p -m), the way a container runtime
would. `exec` relays stdin/stdout through pipes, so killing this process
closes the probe's input as a real kubectl's dying stream would.

state.json: {"pods": [{"name", "namespace", "labels", "annotations", "node",
  "owner": "ReplicaSet/x-5d8f7", "containers": [{"name", "pid", "nosh"}]}],
  "services": [{"name", "namespace", "selector"}], "patches": [...]}
A container with "nosh": true answers exec of sh the way a runtime does for
an image without a shell. `debug` is refused (no ephemeral containers here).
Every call is appended to $FAKE_KUBE_DIR/calls.log (global options included).
"""
import fcntl
import json
import os
import subprocess
import sys
import threading

STATE_DIR = os.environ.get("FAKE_KUBE_DIR", ".")
STATE = os.path.join(STATE_DIR, "state.json")


def die(msg, code=1):
    sys.stderr.write(msg + "\n")
    sys.exit(code)


def load():
    with open(STATE) as f:
        return json.load(f)


def save(state):
    tmp = STATE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1)
    os.replace(tmp, STATE)


def pod_json(p):
    owner = p.get("owner")
    meta = {"name": p["name"], "namespace": p["namespace"], "uid": "uid-" + p["name"],
            "resourceVersion": "1", "labels": p.get("labels", {}),
            "annotations": p.get("annotations", {})}
    if owner:
        kind, name = owner.split("/", 1)
        meta["ownerReferences"] = [{"kind": kind, "name": name, "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": p.get("node", "fake-node"),
                     "containers": [{"name": c["name"]} for c in p["containers"]]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": c["name"], "containerID": "containerd://fake%d" % c["pid"],
                 "ready": True, "restartCount": 0} for c in p["containers"]]}}


def match(labels, sel):
    for term in sel.split(","):
        k, _, v = term.partition("=")
        if labels.get(k) != v:
            return False
    return True


def get(args, ns):
    out = None
    what = args[0]
    sel = fsel = name = None
    i = 1
    while i < len(args):
        if args[i] == "-l":
            sel = args[i + 1]
            i += 2
        elif args[i] == "--field-selector":
            fsel = args[i + 1]
            i += 2
        elif args[i] == "-o":
            out = args[i + 1]
            i += 2
        else:
            name = args[i]
            i += 1
    if out != "json":
        die("error: the FAKE kubectl only answers -o json")
    state = load()
    if what in ("service", "services", "svc"):
        for s in state.get("services", []):
            if s["name"] == name and s["namespace"] == ns:
                print(json.dumps({"kind": "Service", "metadata": {"name": name, "namespace": ns},
                                  "spec": {"selector": s["selector"]}}))
                return 0
        die('Error from server (NotFound): services "%s" not found' % name)
    if what in ("pods", "pod"):
        items = []
        for p in state["pods"]:
            if p["namespace"] != ns:
                continue
            if sel and not match(p.get("labels", {}), sel):
                continue
            if fsel and fsel != "metadata.name=" + p["name"]:
                continue
            if name and name != p["name"]:
                continue
            items.append(pod_json(p))
        print(json.dumps({"kind": "PodList", "metadata": {"resourceVersion": "1"},
                          "items": items}))
        return 0
    die("error: the FAKE kubectl does not know resource %s" % what)


def find_pod(state, ns, name):
    for p in state["pods"]:
        if p["name"] == name and p["namespace"] == ns:
            return p
    die('Error from server (NotFound): pods "%s" not found' % name)


def pump(src, dst, close_dst):
    try:
        while True:
            b = os.read(src, 65536)
            if not b:
                break
            os.write(dst, b)
    except OSError:
        pass
    if close_dst:
        try:
            os.close(dst)
        except OSError:
            pass


def exec_(args, ns):
    container = None
    i = 0
    pod = None
    while i < len(args) and args[i] != "--":
        if args[i] == "-c":
            container = args[i + 1]
            i += 2
        elif args[i] in ("-i", "--stdin"):
            i += 1
        else:
            pod = args[i]
            i += 1
    cmd = args[i + 1:]
    p = find_pod(load(), ns, pod)
    c = p["containers"][0]
    if container:
        c = next((x for x in p["containers"] if x["name"] == container), None)
        if not c:
            die('error: container %s is not valid for pod %s' % (container, pod))
    if c.get("nosh") and cmd and cmd[0] == "sh":
        die('error: Internal error occurred: error executing command in container: failed to '
            'exec in container: OCI runtime exec failed: exec failed: unable to start container '
            'process: exec: "sh": executable file not found in $PATH: unknown', 126)
    child = subprocess.Popen(["nsenter", "-t", str(c["pid"]), "-p", "-m", "--"] + cmd,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    t = threading.Thread(target=pump, args=(0, child.stdin.fileno(), True), daemon=True)
    t.start()
    pump(child.stdout.fileno(), 1, False)
    return child.wait()


def annotate(args, ns):
    state = load()
    i = 0
    kind = name = None
    changes = []
    while i < len(args):
        a = args[i]
        if a == "--overwrite":
            pass
        elif kind is None:
            kind = a
        elif name is None:
            name = a
        else:
            changes.append(a)
        i += 1
    p = find_pod(state, ns, name)
    ann = p.setdefault("annotations", {})
    for ch in changes:
        if ch.endswith("-") and "=" not in ch:
            ann.pop(ch[:-1], None)
        else:
            k, _, v = ch.partition("=")
            ann[k] = v
    save(state)
    print("pod/%s annotated" % name)
    return 0


def patch(args, ns):
    state = load()
    ref = args[0]
    body = json.loads(args[args.index("-p") + 1])
    state.setdefault("patches", []).append({"ref": ref, "namespace": ns, "patch": body})
    save(state)
    print("%s patched" % ref)
    return 0


HELP = ("FAKE kubectl for jprof's tests: no API server runs here. It answers get pods/service "
        "-o json, exec -i, annotate and patch from $FAKE_KUBE_DIR/state.json.")


def main():
    argv = sys.argv[1:]
    ns = "default"
    rest = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-n", "--namespace"):
            ns = argv[i + 1]
            i += 2
        elif a in ("--context", "--kubeconfig"):
            i += 2
        elif a == "--":
            rest.extend(argv[i:])
            break
        else:
            rest.append(a)
            i += 1
    with open(os.path.join(STATE_DIR, "calls.log"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(json.dumps([a for a in argv if "\n" not in a]) + "\n")
    if not rest or rest[0] in ("--help", "help", "version"):
        print(HELP)
        return 0
    verb, args = rest[0], rest[1:]
    if verb == "get":
        return get(args, ns)
    if verb == "exec":
        return exec_(args, ns)
    if verb == "annotate":
        return annotate(args, ns)
    if verb == "patch":
        return patch(args, ns)
    if verb == "debug":
        die("error: ephemeral containers are not available from this FAKE kubectl (no API "
            "server runs here)")
    die("error: the FAKE kubectl does not implement %s" % verb)


if __name__ == "__main__":
    sys.exit(main())
