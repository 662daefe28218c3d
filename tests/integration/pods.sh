# shellcheck shell=bash disable=SC2034,SC2154
# pods.sh - real pods for the container tests, sourced after lib.sh.
#
# A pod here is a REAL container that podman runs with runc (user,
# capabilities, seccomp, read-only root, mounts and pid namespace are the
# kernel's), in a private store of the test ($pods_work/store: its own
# storage.conf and containers.conf; overlay, else vfs; runc, cgroupfs, low
# ulimits). What cannot run here is the Kubernetes API: the kubectl
# stand-in (fake-kubectl.py) answers from a registry of pods and says it
# is a FAKE API. Images, made once per test from what the build has:
#   $jprof_image   jprof's own image, loaded from the archive `make images`
#                  wrote (test_images.sh makes it first in `make check`)
#   $pod_image     Debian (the base layer of jprof's image) + a JDK 17
#                  runtime + a JDK 25 runtime (when there is one) + the
#                  workloads of tests/java in /app; runs as root by default
#   $nosh_image    distroless-like: the JDK 17 runtime, exactly the libraries
#                  it loads, /etc/passwd and /app; no shell, no coreutils
#
# Images are made once and kept in the store between runs while their
# inputs (jprof's archive, the JDKs, the workloads, pod-images.py and this
# file) are unchanged ($pods_work/images.key); containers never outlive a
# run. `make clean` removes the store.
#
# Gives: pods_init WORKDIR, pods_images, pod_start, pod_ready, pod_register,
# pod_service, pod_hostpid, pod_pid,
# pod_procs, pod_zombies, pod_leftovers, pod_recordings, pods_cleanup (on EXIT).

# pods_init WORKDIR: the private podman, or a loud skip (a failure under CI)
pods_init() {
    pods_work=$1
    [ "$(id -u)" = 0 ] || skip_or_fail "real pods need root (podman with runc)"
    command -v podman >/dev/null && command -v runc >/dev/null ||
        skip_or_fail "podman and runc (apt-get install podman runc; scripts/install-deps)"
    command -v python3 >/dev/null || skip_or_fail "python3 (the kubectl stand-in)"
    # an earlier run's files go; its store stays for its images (pods_images
    # decides whether they can be used), its containers go below
    mkdir -p "$pods_work"
    find "$pods_work" -mindepth 1 -maxdepth 1 ! -name store ! -name run ! -name tmp \
        ! -name images.key -exec rm -rf {} +
    mkdir -p "$pods_work/store" "$pods_work/run" "$pods_work/tmp"
    # overlay: a container shares its image's files (vfs copies them whole
    # for every container); vfs where overlay cannot mount
    pods_storage overlay
    # runc (crun fails on a hybrid cgroup layout), cgroupfs (no systemd
    # here), ulimits a node's runtime could pass on (podman's defaults
    # exceed this machine's hard limits and root may lack
    # CAP_SYS_RESOURCE: runc refuses more than podman's conmon has, 32768
    # processes here; nproc counts every thread of the user on the host, so
    # a low one fails exec in a pod on a busy machine), events to a file,
    # the database in the store
    local nproc
    nproc=$(ulimit -Hu)
    [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ] && nproc=32768
    cat >"$pods_work/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=$nproc:$nproc"]
netns = "none"
log_driver = "k8s-file"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$pods_work/events.log"
static_dir = "$pods_work/store/libpod"
volume_path = "$pods_work/store/volumes"
tmp_dir = "$pods_work/tmp"
EOF
    export CONTAINERS_STORAGE_CONF=$pods_work/storage.conf CONTAINERS_CONF=$pods_work/containers.conf
    export FAKE_KUBE_DIR=$pods_work KUBECTL=$here/fake-kubectl.py
    echo '{"pods": [], "services": [], "patches": []}' >"$pods_work/state.json"
    trap 'pods_cleanup; cleanup' EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT
    if ! podman info >"$pods_work/info.log" 2>&1; then
        echo "note: podman on overlay: $(tail -n 1 "$pods_work/info.log"); vfs instead"
        podman system reset -f >/dev/null 2>&1
        rm -f "$pods_work/images.key"
        pods_storage vfs
        podman info >"$pods_work/info.log" 2>&1 ||
            skip_or_fail "podman cannot run here: $(tail -n 1 "$pods_work/info.log")"
    fi
    podman rm -af -t 0 >/dev/null 2>&1
}

# pods_storage DRIVER: the private store's storage.conf
pods_storage() {
    cat >"$pods_work/storage.conf" <<EOF
[storage]
driver = "$1"
graphroot = "$pods_work/store"
runroot = "$pods_work/run"
EOF
}

# pods_cleanup: every container of the private store (debug containers
# too); its images stay for the next run (pods_images)
pods_cleanup() {
    [ -n "${pods_work:-}" ] && [ -d "$pods_work/store" ] || return 0
    podman rm -af -t 0 >/dev/null 2>&1
    rm -rf "$pods_work/rootfs"
}

# pods_images_key ARCHIVE: a digest of everything the images are made of
# (contents, not where the files are)
pods_images_key() {
    local j
    {
        sha256sum "$1" "$here/pod-images.py" "$here/pods.sh" | cut -d' ' -f1
        (cd "$classes" && find . -type f | LC_ALL=C sort | xargs -r sha256sum)
        for j in "$jdk17" "$jdk25"; do
            [ -x "$j/bin/java" ] || continue
            readlink -f "$j"
            stat -L -c '%s %Y' "$j/lib/modules" "$j/bin/java"
        done
    } | sha256sum | cut -d' ' -f1
}

# pods_images: $jprof_image loaded from its archive (built when missing),
# $pod_image and $nosh_image assembled and imported. Sets them.
pods_images() {
    local version tag archive t0
    pod_image=localhost/jprof-test/pod:latest
    nosh_image=localhost/jprof-test/nosh:latest
    # the image `make images` names after this build's version (as
    # scripts/build-images spells a tag)
    version=$(sed -n 's/^VERSION = //p' "$builddir/Makefile")
    tag=$(printf '%s' "$version" | tr -c 'A-Za-z0-9_.-' '-' | cut -c1-128)
    archive=$builddir/images/jprof-$tag.tar
    jprof_image=localhost/jprof/jprof:$tag
    if [ ! -s "$archive" ]; then
        echo "note: no $archive yet (test_images.sh makes it first in make check): make images"
        env -u CONTAINERS_STORAGE_CONF -u CONTAINERS_CONF make -C "$builddir" images \
            >"$pods_work/images.log" 2>&1 ||
            skip_or_fail "jprof's image could not be built: $(tail -n 2 "$pods_work/images.log")"
    fi
    local key
    t0=$(date +%s)
    key=$(pods_images_key "$archive")
    if [ "$(cat "$pods_work/images.key" 2>/dev/null)" = "$key" ] &&
        podman image exists "$jprof_image" && podman image exists "$pod_image" &&
        podman image exists "$nosh_image"; then
        pass "images: $jprof_image, $pod_image and $nosh_image of an earlier run (their inputs unchanged; checked in $(($(date +%s) - t0)) s)"
        return 0
    fi
    rm -f "$pods_work/images.key"
    podman rmi -af >/dev/null 2>&1
    # three at once: this machine's image of the archive's index, named as
    # a user's `podman load` names it; each pod image's root filesystem
    # streamed into its import
    local arch p1 p2 p3
    arch=$(podman info -f '{{.Host.Arch}}')
    (
        id=$(podman pull -q --arch "$arch" "oci-archive:$archive") && podman tag "$id" "$jprof_image"
    ) >"$pods_work/load.log" 2>&1 &
    p1=$!
    (
        set -o pipefail
        python3 "$here/pod-images.py" pod "$archive" "$classes" "$jdk17" \
            "$([ -x "$jdk25/bin/java" ] && echo "$jdk25")" |
            podman import -q -c 'WORKDIR /app' -c 'ENV PATH=/usr/lib/jvm/jre17/bin:/usr/bin:/bin' \
                - "$pod_image"
    ) >"$pods_work/pod-image.log" 2>&1 &
    p2=$!
    (
        set -o pipefail
        python3 "$here/pod-images.py" nosh "$classes" "$jdk17" |
            podman import -q -c 'WORKDIR /app' -c 'ENV PATH=/usr/lib/jvm/jre17/bin' - "$nosh_image"
    ) >"$pods_work/nosh-image.log" 2>&1 &
    p3=$!
    wait $p1 || fail "podman pull oci-archive:$archive" "$(tail -n 3 "$pods_work/load.log")"
    wait $p2 || fail "the pod image (pod-images.py pod | podman import)" "$(tail -n 5 "$pods_work/pod-image.log")"
    wait $p3 || fail "the shell-less image (pod-images.py nosh | podman import)" "$(tail -n 5 "$pods_work/nosh-image.log")"
    [ "$nfail" = 0 ] || summary
    echo "$key" >"$pods_work/images.key"
    pass "images: $jprof_image loaded, $pod_image ($(podman image inspect -f '{{.Size}}' "$pod_image" | awk '{ printf "%d", $1 / 1048576 }') MiB) and $nosh_image made in $(($(date +%s) - t0)) s"
}

# pod_start NAME [podman run options...] -- IMAGE COMMAND...: a pod's
# container named NAME, started detached (pod_ready waits for it)
pod_start() {
    local name=$1
    shift
    local opts=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        opts+=("$1")
        shift
    done
    shift
    podman run -d --name "$name" --hostname "$name" "${opts[@]}" "$@" >"$pods_work/$name.run" 2>&1 || {
        fail "pod $name did not start" "$(tail -n 3 "$pods_work/$name.run")"
        return 1
    }
}

# pod_ready NAME[:N]...: waits (120 s in all) until each pod's log says
# "ready" (N times for N JVMs; the workloads print it once set up)
pod_ready() {
    local arg name want end=$((SECONDS + 120))
    for arg in "$@"; do
        name=${arg%%:*}
        want=1
        [ "$name" = "$arg" ] || want=${arg#*:}
        while [ $SECONDS -lt $end ]; do
            if [ "$(podman logs "$name" 2>/dev/null | grep -c '^ready')" -ge "$want" ]; then
                pod_hostpids[$name]=$(pod_hostpid "$name")
                continue 2
            fi
            [ "$(podman inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" = true ] || break
            sleep 0.5
        done
        fail "pod $name: not $want 'ready' from its JVMs" "$(podman logs "$name" 2>&1 | tail -n 5)"
    done
}

# pod_register NAME NAMESPACE CONTAINER-NAME:CTR[,...] [LABELS-JSON] [RUN-AS-USER]
pod_register() {
    python3 - "$pods_work/state.json" "$@" <<'PY'
import fcntl, json, sys, uuid
path, name, ns, ctrs = sys.argv[1:5]
labels = json.loads(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[5] else {}
uid = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] else None
s = json.load(open(path))
s["pods"] = [p for p in s["pods"] if not (p["name"] == name and p["namespace"] == ns)]
s["pods"].append({"name": name, "namespace": ns, "uid": str(uuid.uuid4()), "labels": labels,
                  "annotations": {}, "node": "podman-node", "run_as_user": uid,
                  "containers": [{"name": c.split(":")[0], "ctr": c.split(":")[1]}
                                 for c in ctrs.split(",")]})
json.dump(s, open(path, "w"), indent=1)
PY
}

# pod_service NAME NAMESPACE SELECTOR-JSON
pod_service() {
    python3 - "$pods_work/state.json" "$@" <<'PY'
import json, sys
path, name, ns, sel = sys.argv[1:5]
s = json.load(open(path))
s["services"] = [x for x in s["services"] if not (x["name"] == name and x["namespace"] == ns)]
s["services"].append({"name": name, "namespace": ns, "selector": json.loads(sel)})
json.dump(s, open(path, "w"), indent=1)
PY
}

# pod_hostpid CTR: the host pid of the container's first process (as
# pod_ready noted it: the checks after each session ask for it often, and
# from subshells)
declare -A pod_hostpids=()
pod_hostpid() {
    local p=${pod_hostpids[$1]:-}
    if [ -n "$p" ] && [ -d "/proc/$p" ]; then
        echo "$p"
    else
        podman inspect -f '{{.State.Pid}}' "$1" 2>/dev/null
    fi
}

# pod_pid CTR WORD: "HOSTPID PID" of the pod's process whose command line
# holds WORD: its pid on the host, and in the pod's pid namespace (as
# `kubectl jprof --pid` takes it)
pod_pid() {
    local p
    for p in $(pod_procs "$1" | awk '{ print $1 }'); do
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$2" || continue
        echo "$p $(awk '/^NSpid:/ { print $NF }' "/proc/$p/status")"
        return 0
    done
    return 1
}

# pod_procs CTR: "PID STATE COMM" (host pids) of every process in the
# container's pid namespace, debug containers sharing it included
pod_procs() {
    local p0 ns
    p0=$(pod_hostpid "$1")
    [ -n "$p0" ] && [ "$p0" != 0 ] || return 0
    ns=$(readlink "/proc/$p0/ns/pid") || return 0
    ns=${ns#pid:[}
    ps -eo pid=,pidns=,stat=,comm= | awk -v ns="${ns%]}" '$2 == ns { print $1, substr($3, 1, 1), $4 }'
}

# pod_zombies CTR: the zombies in the pod
pod_zombies() { pod_procs "$1" | awk '$2 == "Z"'; }

# pod_leftovers CTR [DIR...]: jprof's files in the pod (its temp
# directories, the attach trigger), looked at from the host
pod_leftovers() {
    local ctr=$1 root d
    shift
    root=/proc/$(pod_hostpid "$ctr")/root
    for d in /tmp /dev/shm /var/tmp /app /run "$@"; do
        ls -A "$root$d" 2>/dev/null | grep -E '^(jprof|\.attach_pid)' | sed "s|^|$d/|"
    done
}

# pod_recordings CTR [HOSTPID]: jprof's recordings the pod's JVM still runs
pod_recordings() {
    local pid=${2:-$(pod_hostpid "$1")}
    # jprof-probe's developer command: an attach from the host, no JVM to start
    "$builddir/jprof-probe" jfr-check "$pid" 2>&1 | grep -o 'name=jprof[^ ]*' || true
}

# pod_clean CTR: nothing of jprof's in the pod: files, recordings, zombies,
# processes other than the pod's own
pod_clean() {
    [ -z "$(pod_leftovers "$1")" ] && [ -z "$(pod_zombies "$1")" ] &&
        ! pod_procs "$1" | grep -q jprof
}

# pod_dirt CTR: what pod_clean found, for a failure message
pod_dirt() {
    echo "files: $(pod_leftovers "$1" | tr '\n' ' ')zombies: $(pod_zombies "$1" | tr '\n' ' ')probes: $(pod_procs "$1" | grep jprof | tr '\n' ' ')"
}
