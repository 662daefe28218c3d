#!/usr/bin/env python3
"""fake-kubectl.py - a FAKE kubectl for jprof's tests. No API server and no
cluster run here: this script answers the handful of kubectl commands
jprof uses from a state directory ($FAKE_KUBE_DIR/state.json). The
containers behind its pods are of two kinds:

  {"name", "pid", "nosh"}  a local process in its own pid and mount
      namespaces, which `exec` enters with nsenter -t PID -p -m (stdin and
      stdout relayed through pipes, so killing this process closes the
      probe's input as a real kubectl's dying stream would); "nosh": true
      answers exec of sh the way a runtime does for an image without one;
  {"name", "ctr"}  a REAL container that podman runs with runc
      (tests/integration/pods.sh), where user, capability, seccomp,
      read-only root and mount isolation are the kernel's. podman runs with
      the containers.conf and storage.conf the environment names.

For real containers it behaves the way a cluster does where podman would
differ:
  exec -i POD [-c C] -- CMD...   podman exec -i; a non-zero exit ends with
      kubectl's own last line, "command terminated with exit code N"
  debug POD -i [--quiet] --profile=general --target=C --image=I [--custom=F]
        [-c NAME] -- CMD...
      an ephemeral container sharing the target's pid namespace (--pid
      container:X), as the pod-level runAsUser, else the custom profile's
      securityContext.runAsUser, else the image's user; profile general
      adds SYS_PTRACE, which (as in Kubernetes, unlike podman) a non-root
      user does not get. It is started, then attached to, as kubectl does:
      what it prints before the attach is not seen. It stays in the pod's
      spec (ephemeralContainers), its process does not.
  cp POD:PATH DEST | SRC POD:PATH  through tar in the container, as kubectl
      does (a container without tar cannot be copied from or to)
  get pods: containerStatuses carry the real container ids.
For local processes `debug` and `cp` are refused.

state.json: {"pods": [{"name", "namespace", "uid", "labels", "annotations",
  "node", "owner": "ReplicaSet/x-5d8f7", "run_as_user": the pod-level uid or
  null, "arch", "nouname", "containers": [...]}], "services": [{"name",
  "namespace", "selector"}], "nodes": [{"name", "arch"}], "patches": [...]}
A pod with "arch" (Kubernetes' name, default amd64) claims to run on that
architecture: this machine is x86-64, so the loader's `uname -m` is made to
answer that machine (or, with "nouname": true, nothing: the client then asks
the node), and for arm64 the probe the loader received is run under
qemu-aarch64-static ($FAKE_QEMU_ARM64): an x86-64 probe sent there fails the
loader's check as on a real arm64 node.
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


def change(fn):
    """fn(state) under the state's lock, then saved."""
    with open(STATE + ".lock", "a") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        state = load()
        fn(state)
        save(state)


def podman(*args, **kw):
    return subprocess.run(["podman"] + list(args), **kw)


def container_id(c):
    """A container's id in containerStatuses: the real one for a podman
    container, a made-up one for a local process."""
    if "ctr" not in c:
        return "fake%d" % c["pid"]
    r = podman("inspect", "--format", "{{.Id}}", c["ctr"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def pod_json(p):
    owner = p.get("owner")
    meta = {"name": p["name"], "namespace": p["namespace"], "uid": p.get("uid", "uid-" + p["name"]),
            "resourceVersion": "1", "labels": p.get("labels", {}),
            "annotations": p.get("annotations", {})}
    if owner:
        kind, name = owner.split("/", 1)
        meta["ownerReferences"] = [{"kind": kind, "name": name, "controller": True}]
    spec = {"nodeName": p.get("node", "fake-node"),
            "containers": [{"name": c["name"]} for c in p["containers"]]}
    if p.get("run_as_user") is not None:
        spec["securityContext"] = {"runAsUser": p["run_as_user"]}
    eph = p.get("ephemeral", [])
    if eph:
        spec["ephemeralContainers"] = [{"name": e["name"], "image": e["image"],
                                        "targetContainerName": e["target"]} for e in eph]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running", "containerStatuses": [
                {"name": c["name"], "containerID": "containerd://" + container_id(c),
                 "ready": True, "restartCount": 0} for c in p["containers"]],
                "ephemeralContainerStatuses": [
                    {"name": e["name"], "state": {"terminated": {}}} for e in eph]}}


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
    if out != "json" and not (what in ("node", "nodes") and out and out.startswith("jsonpath=")):
        die("error: the FAKE kubectl only answers -o json (and a node's architecture)")
    state = load()
    if what in ("service", "services", "svc"):
        for s in state.get("services", []):
            if s["name"] == name and s["namespace"] == ns:
                print(json.dumps({"kind": "Service", "metadata": {"name": name, "namespace": ns},
                                  "spec": {"selector": s["selector"]}}))
                return 0
        die('Error from server (NotFound): services "%s" not found' % name)
    if what in ("node", "nodes") and out.startswith("jsonpath="):
        if out != "jsonpath={.status.nodeInfo.architecture}":
            die("error: the FAKE kubectl answers one jsonpath of a node only")
        for n in state.get("nodes", []) + [{"name": "fake-node", "arch": "amd64"}]:
            if n["name"] == name:
                sys.stdout.write(n["arch"])
                return 0
        die('Error from server (NotFound): nodes "%s" not found' % name)
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


MACHINES = {"amd64": "x86_64", "arm64": "aarch64"}


def loader_for_arch(p, cmd):
    """The loader of `sh -c LOADER` as a pod of p's architecture runs it."""
    arch = p.get("arch", "amd64")
    # sh -c LOADER [sh [PID]]: $0 and $1 pass through unchanged
    if arch == "amd64" and not p.get("nouname") or cmd[:2] != ["sh", "-c"] or len(cmd) < 3:
        return cmd
    script = cmd[2]
    says = "false" if p.get("nouname") else "echo " + MACHINES.get(arch, arch)
    n_uname = script.count("uname -m")
    script = script.replace("uname -m", says).replace("/proc/sys/kernel/arch",
                                                      "/nonexistent/kernel/arch")
    n_run = script.count('"$d/jprof-probe" --')
    if arch == "arm64":
        qemu = os.environ.get("FAKE_QEMU_ARM64", "/usr/bin/qemu-aarch64-static")
        if not os.access(qemu, os.X_OK):
            die("error: the FAKE kubectl needs %s to run a pod claiming arm64" % qemu)
        script = script.replace('"$d/jprof-probe" --', '%s "$d/jprof-probe" --' % qemu)
    if n_uname != 1 or n_run < 2:
        die("error: the FAKE kubectl does not recognise this loader (uname -m %d times, the "
            "probe run %d times): tests/integration/fake-kubectl.py follows kube_session.c"
            % (n_uname, n_run))
    return ["sh", "-c", script] + cmd[3:]


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
    c = find_container(p, container, pod)
    if "ctr" in c:
        return exec_podman(c, cmd)
    if c.get("nosh") and cmd and cmd[0] == "sh":
        die('error: Internal error occurred: error executing command in container: failed to '
            'exec in container: OCI runtime exec failed: exec failed: unable to start container '
            'process: exec: "sh": executable file not found in $PATH: unknown', 126)
    cmd = loader_for_arch(p, cmd)
    child = subprocess.Popen(["nsenter", "-t", str(c["pid"]), "-p", "-m", "--"] + cmd,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    t = threading.Thread(target=pump, args=(0, child.stdin.fileno(), True), daemon=True)
    t.start()
    pump(child.stdout.fileno(), 1, False)
    return child.wait()


def find_container(p, name, pod):
    if not name:
        return p["containers"][0]
    for c in p["containers"]:
        if c["name"] == name:
            return c
    die('error: container %s is not valid for pod %s' % (name, pod))


def exec_podman(c, cmd):
    """podman exec -i, stdin and stdout straight through; stderr as it
    comes, podman's own errors in kubectl's words."""
    child = subprocess.Popen(["podman", "exec", "-i", c["ctr"]] + cmd, stderr=subprocess.PIPE)
    held = []  # podman's own "Error: ..." lines
    for line in child.stderr:
        text = line.decode(errors="replace")
        if text.startswith("Error: "):
            held.append(text)
        else:
            sys.stderr.write(text)
            sys.stderr.flush()
    rc = child.wait()
    if held and rc in (125, 126, 127):
        # the runtime refused the command (no such program)
        die("error: Internal error occurred: error executing command in container: failed to "
            "exec in container: OCI runtime exec failed: " + held[-1][7:].strip(), 1)
    sys.stderr.write("".join(held))
    if rc != 0:
        die("command terminated with exit code %d" % rc, rc)
    return 0


def image_user(image):
    r = podman("image", "inspect", "--format", "{{.Config.User}}", image,
               capture_output=True, text=True)
    user = r.stdout.strip().split(":")[0] if r.returncode == 0 else ""
    return int(user) if user.isdigit() else 0


def debug(args, ns):
    opts = {"profile": "legacy", "image": None, "target": None, "custom": None, "name": None}
    pod, quiet, i = None, False, 0
    while i < len(args) and args[i] != "--":
        a = args[i]
        key, eq, val = a.lstrip("-").partition("=")
        if a in ("-i", "--stdin", "-t", "--tty", "-it"):
            i += 1
        elif a in ("-q", "--quiet"):
            quiet, i = True, i + 1
        elif a in ("-c", "--container"):
            opts["name"], i = args[i + 1], i + 2
        elif a.startswith("--") and key in opts:
            if eq:
                opts[key], i = val, i + 1
            else:
                opts[key], i = args[i + 1], i + 2
        elif a.startswith("-"):
            die("error: unknown flag: %s" % a)
        else:
            pod, i = a, i + 1
    cmd = args[i + 1:]
    if not opts["image"]:
        die("error: --image is required")
    p = find_pod(load(), ns, pod)
    target = find_container(p, opts["target"], pod)
    if "ctr" not in target:
        die("error: ephemeral containers are not available for this pod's FAKE containers (no "
            "API server runs here)")
    # the ephemeral container's user: pod-level securityContext, else the
    # custom profile's, else the image's (profiles never set one)
    custom = {}
    if opts["custom"]:
        with open(opts["custom"]) as f:
            custom = json.load(f).get("securityContext", {})
    uid = p.get("run_as_user")
    if custom.get("runAsUser") is not None:
        uid = custom["runAsUser"]
    check = podman("image", "exists", opts["image"], capture_output=True)
    if check.returncode != 0:
        die('error: ephemeral container "debugger": image "%s": %s' % (
            opts["image"], "invalid reference format" if "+" in opts["image"] or
            opts["image"] != opts["image"].lower() else "ErrImagePull (not in this node's store)"))
    if uid is None:
        uid = image_user(opts["image"])
    name = opts["name"] or "debugger-%s" % os.urandom(3).hex()
    ctr = "%s-%s" % (target["ctr"], name)
    run = ["podman", "run", "-d", "-i", "--name", ctr, "--pid", "container:" + target["ctr"],
           "--network", "container:" + target["ctr"], "--user", "%d:%d" % (uid, uid)]
    # Kubernetes puts added capabilities in the bounding set only: a non-root
    # user gets none of them (podman would give them ambiently)
    caps = list(custom.get("capabilities", {}).get("add", []))
    if opts["profile"] == "general":
        caps.append("SYS_PTRACE")
    if uid == 0:
        for cap in caps:
            run += ["--cap-add", cap]
    r = subprocess.run(run + [opts["image"]] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die("error: ephemeral container %s did not start: %s" % (name, r.stderr.strip()))

    change(lambda s: find_pod(s, ns, pod).setdefault("ephemeral", []).append(
        {"name": name, "image": opts["image"], "target": target["name"], "ctr": ctr}))
    if not quiet:
        sys.stderr.write("Defaulting debug container name to %s.\n" % name)
    att = subprocess.run(["podman", "attach", "--sig-proxy=false", ctr])
    w = podman("wait", ctr, capture_output=True, text=True)
    code = int(w.stdout.strip() or att.returncode or 0)
    # an ephemeral container stays in the pod's spec; its process is gone
    podman("rm", "-f", "-t", "0", ctr, capture_output=True)
    return code


def annotate(args, ns):
    words = [a for a in args if a != "--overwrite"]
    name, changes = words[1], words[2:]

    def apply(state):
        ann = find_pod(state, ns, name).setdefault("annotations", {})
        for ch in changes:
            if ch.endswith("-") and "=" not in ch:
                ann.pop(ch[:-1], None)
            else:
                k, _, v = ch.partition("=")
                ann[k] = v
    change(apply)
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


def cp(args, ns):
    container = None
    paths = []
    i = 0
    while i < len(args):
        if args[i] in ("-c", "--container"):
            container, i = args[i + 1], i + 2
        else:
            paths.append(args[i])
            i += 1
    src, dst = paths
    state = load()
    if ":" in src:
        pod, _, path = src.partition(":")
        c = find_container(find_pod(state, ns, pod), container, pod)
        if "ctr" not in c:
            die("error: cp is not available for this pod's FAKE containers")
        r = subprocess.run(["podman", "exec", c["ctr"], "tar", "cf", "-", "-C",
                            os.path.dirname(path) or "/", os.path.basename(path)],
                           capture_output=True)
        if r.returncode != 0:
            die("error: %s" % r.stderr.decode(errors="replace").strip())
        os.makedirs(dst if os.path.isdir(dst) else os.path.dirname(dst) or ".", exist_ok=True)
        subprocess.run(["tar", "xf", "-", "-C", dst if os.path.isdir(dst) else
                        os.path.dirname(dst) or "."], input=r.stdout, check=True)
        return 0
    pod, _, path = dst.partition(":")
    c = find_container(find_pod(state, ns, pod), container, pod)
    if "ctr" not in c:
        die("error: cp is not available for this pod's FAKE containers")
    data = subprocess.run(["tar", "cf", "-", "-C", os.path.dirname(src) or ".",
                           os.path.basename(src)], capture_output=True, check=True).stdout
    r = subprocess.run(["podman", "exec", "-i", c["ctr"], "tar", "xf", "-", "-C", path],
                       input=data, capture_output=True)
    if r.returncode != 0:
        die("error: %s" % r.stderr.decode(errors="replace").strip())
    return 0


HELP = ("FAKE kubectl for jprof's tests: a FAKE API (no API server runs here). It answers get "
        "pods/service -o json, exec -i, debug --target --profile=general, annotate, patch and "
        "cp from $FAKE_KUBE_DIR/state.json, over local processes or REAL podman containers.")


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
        return debug(args, ns)
    if verb == "cp":
        return cp(args, ns)
    die("error: the FAKE kubectl does not implement %s" % verb)


if __name__ == "__main__":
    sys.exit(main())
