#!/usr/bin/env bash
# test_kubectl_jprof.sh - kubectl-jprof and jprof-probe end to end, against
# a FAKE kubectl (tests/integration/fake-kubectl.py; no API server or cluster
# runs here). Each "pod" is a real JVM (tests/java Deadlocks / Contention,
# JDK 17, and JDK 25 when present) started in its own pid and mount
# namespaces with a private tmpfs on /tmp, as a container would be; the fake
# maps `kubectl exec` to nsenter into them. Covers threads/locks/deadlocks
# (-o json, same shape as jprof-top -b -p PID --format json), -s over two
# pods, flame of the hot method, a container without sh, the probe killed
# with SIGKILL and kubectl killed mid-session (nothing left in the pod's
# /tmp, no recording left: jcmd 1 JFR.check inside), annotations round
# trip, and the time to the first answer. Needs root, unshare, nsenter,
# python3.
set -u
. "$(dirname "$0")/lib.sh"

work=$builddir/tests/integration/kubectl-jprof.d
classes=$work/classes
plugin=$builddir/kubectl-jprof
mkdir -p "$work"

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null || ! command -v nsenter >/dev/null; then
    skip_or_fail "kubectl-jprof test needs root, unshare and nsenter (namespaced JVMs)"
fi
command -v python3 >/dev/null || skip_or_fail "python3 not found (the FAKE kubectl)"
compile_live_workloads

export FAKE_KUBE_DIR=$work KUBECTL=$here/fake-kubectl.py JPROF_PROBE=$builddir/jprof-probe
rm -f "$work/calls.log"

# start_pod NAME JAVA_HOME CLASS: the JVM as pid 1 of new pid+mount
# namespaces with /tmp a private tmpfs; the classes come in through a pipe
# (the checkout may live under /tmp, which the tmpfs hides). Sets pod_pid
# (the JVM's pid as the host sees it). Contention's hot spinner burns 60%
# of a core, not all of it: two such pods for three minutes would take most
# of a 2-core machine from the tests beside this one (still the busiest thread).
# The workloads run for an hour (the EXIT trap ends them): on a loaded machine
# this test takes more than the ten minutes they used to live, and its last
# cases found the pods gone.
start_pod() {
    local name=$1 home=$2 cls=$3 mark="-Djprof.test.pod=$1.$$" out="$work/$1.out"
    tar -C "$classes" -cf - . | unshare -p -f -m --mount-proc sh -c "mount -t tmpfs tmpfs /tmp &&
        mkdir /tmp/classes && tar -C /tmp/classes -xf - && cd / &&
        exec '$home/bin/java' -Xmx64m -Dcontention.hot=60 $mark -cp /tmp/classes live.$cls 3600 </dev/null" >"$out" 2>&1 &
    pids+=("$!")
    pod_pid=
    for _ in $(seq 200); do
        grep -q ready "$out" 2>/dev/null && pod_pid=$(pgrep -f -- "$mark" | while read -r p; do
            [ "$(readlink "/proc/$p/exe")" != "$(readlink -f "$home/bin/java")" ] || echo "$p"
        done | head -1) && [ -n "$pod_pid" ] && break
        sleep 0.1
    done
    [ -n "$pod_pid" ] || { fail "pod $name: JVM did not start: $(cat "$out")"; return 1; }
    pids+=("$pod_pid")
}

# in_pod PID CMD...: runs CMD inside the pod's namespaces
in_pod() {
    local p=$1
    shift
    nsenter -t "$p" -p -m -- "$@"
}

# leftovers PID: jprof files in the pod's /tmp (the JVM's own JFR repository
# directory, named by date, and its attach socket are not ours)
leftovers() {
    in_pod "$1" sh -c 'ls -A /tmp /dev/shm 2>/dev/null' | grep -E 'jprof' || true
}

# recordings PID: jprof recordings the JVM still runs
recordings() {
    in_pod "$1" "$jdk17/bin/jcmd" 1 JFR.check 2>&1 | grep -o 'name=jprof[^ ]*' || true
}

jdk_b=$jdk17
have_jdk25 && jdk_b=$jdk25
start_pod dl-1 "$jdk17" Deadlocks || summary "kubectl-jprof"
dl=$pod_pid
start_pod hot-1 "$jdk17" Contention || summary "kubectl-jprof"
hot1=$pod_pid
start_pod hot-2 "$jdk_b" Contention || summary "kubectl-jprof"
hot2=$pod_pid

cat >"$work/state.json" <<JSON
{"pods": [
 {"name": "dl-1", "namespace": "shop", "labels": {"app.kubernetes.io/name": "ledger"},
  "owner": "ReplicaSet/ledger-5d8f7c9b4", "containers": [{"name": "app", "pid": $dl}]},
 {"name": "hot-1", "namespace": "shop", "labels": {"app": "hot"},
  "containers": [{"name": "sidecar-nosh", "pid": $hot1, "nosh": true}, {"name": "app", "pid": $hot1}]},
 {"name": "hot-2", "namespace": "shop", "labels": {"app": "hot"},
  "containers": [{"name": "app", "pid": $hot2}]},
 {"name": "nosh-1", "namespace": "shop", "labels": {},
  "containers": [{"name": "distroless", "pid": $dl, "nosh": true}]},
 {"name": "dl-arm", "namespace": "shop", "arch": "arm64", "node": "arm-node",
  "containers": [{"name": "app", "pid": $dl}]},
 {"name": "dl-arm-nouname", "namespace": "shop", "arch": "arm64", "nouname": true,
  "node": "arm-node", "containers": [{"name": "app", "pid": $dl}]},
 {"name": "dl-s390x", "namespace": "shop", "arch": "s390x", "node": "s390x-node",
  "containers": [{"name": "app", "pid": $dl}]}],
 "nodes": [{"name": "arm-node", "arch": "arm64"}, {"name": "s390x-node", "arch": "s390x"}],
 "services": [{"name": "ledger-svc", "namespace": "shop",
               "selector": {"app.kubernetes.io/name": "ledger"}}]}
JSON

"$KUBECTL" version | grep -q FAKE && pass "the fake kubectl says it is a FAKE" || fail "fake kubectl"

echo "--- help, version, probe size"
"$plugin" --help | grep -q "kubectl jprof COMMAND" && pass "kubectl-jprof --help" || fail "--help"
"$plugin" --version | grep -q "^kubectl-jprof (jprof)" && pass "kubectl-jprof --version" || fail "--version"
"$builddir/jprof-probe" --version | grep -q "protocol 1" && pass "jprof-probe --version" || fail "probe --version"
size=$(stat -c %s "$builddir/jprof-probe")
file "$builddir/jprof-probe" | grep -q "statically linked" && pass "jprof-probe is static" ||
    echo "note: jprof-probe is not static (sanitizer build?)"
[ "$size" -lt 2097152 ] && pass "jprof-probe is $size bytes (< 2 MB)" || fail "jprof-probe is $size bytes"

echo "--- deadlocks, threads, locks (-o json)"
t0=$(date +%s%N)
"$plugin" -n shop deadlocks dl-1 -o json >"$work/dl.json" 2>"$work/dl.err"
st=$?
t1=$(date +%s%N)
first_ms=$(((t1 - t0) / 1000000))
echo "time from start to the first answer (deadlocks, one snapshot, FAKE kubectl): $first_ms ms"
[ "$st" = 5 ] && pass "deadlocks exits 5 when there is one" || fail "deadlocks exit $st" "$(cat "$work/dl.err")"
names=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(sorted(t["name"] for c in d["deadlocks"] for t in c["threads"])))' "$work/dl.json" 2>&1)
[ "$names" = "mon-deadlock-1 mon-deadlock-2 rl-deadlock-1 rl-deadlock-2" ] &&
    pass "deadlocks: the monitor and the ReentrantLock cycle, right names" || fail "deadlock names: $names"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d["target"]; assert t["pod"]=="dl-1" and t["container"]=="app" and t["namespace"]=="shop", t' "$work/dl.json" &&
    pass "the answer names pod, container and namespace" || fail "target of the answer"
# the same JSON shape as jprof-top -b -p PID --format json
"$builddir/jprof-top" -b -p "$dl" --format json -d 0.2 --count 1 >"$work/local.json" 2>"$work/local.err"
shape=$(python3 - "$work/local.json" "$work/dl.json" <<'PY'
import json, sys
a = json.loads(open(sys.argv[1]).readline())
b = json.load(open(sys.argv[2]))
missing = sorted(set(a) - set(b))
ta = set(a["threads"][0]); tb = set(b["threads"][0])
print("ok" if not missing and ta == tb else "missing %s threads %s" % (missing, sorted(ta ^ tb)))
PY
)
[ "$shape" = ok ] && pass "-o json has jprof-top -b -p PID --format json's shape" || fail "JSON shape: $shape" "$(head -c 300 "$work/local.err")"

"$plugin" -n shop threads -s ledger-svc -o json >"$work/th.json" 2>"$work/th.err" &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n={t["name"] for t in d["threads"]}; assert {"bystander","mon-deadlock-1","rl-deadlock-2"} <= n, n' "$work/th.json" &&
    pass "threads -s SVC (service selector): the workload's thread names" || fail "threads -s" "$(cat "$work/th.err")"
"$plugin" -n shop locks dl-1 -o json >"$work/lk.json" 2>"$work/lk.err" &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); w={x["name"] for l in d["locks"] for x in l["waiters"]}; assert "mon-deadlock-1" in w, w' "$work/lk.json" &&
    pass "locks: contended monitors with their waiters" || fail "locks" "$(cat "$work/lk.err")"
"$plugin" -n shop locks dl-1 >"$work/lk.txt" 2>&1 && grep -q "^LOCKS" "$work/lk.txt" &&
    pass "locks -o text" || fail "locks text" "$(head -5 "$work/lk.txt")"

echo "--- -s over two pods (labels app=hot, no service); busy threads"
"$plugin" -n shop threads -s hot -o json --interval 1s >"$work/hot.json" 2>"$work/hot.err"
res=$(python3 - "$work/hot.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
pods = sorted(r["target"]["pod"] for r in rows)
tops = [r["threads"][0]["name"] for r in rows]
cont = [r["target"]["container"] for r in rows]
print("pods=%s top=%s containers=%s" % (",".join(pods), ",".join(tops), ",".join(cont)))
PY
)
[ "$res" = "pods=hot-1,hot-2 top=hot-spinner,hot-spinner containers=app,app" ] &&
    pass "-s hot: two pods, the first container with a JVM (a shell-less sidecar skipped), hot-spinner busiest" ||
    fail "two pods: $res" "$(cat "$work/hot.err")"

echo "--- flame of the hot method"
# flame_has FORMAT FILE: a 4 s recording of hot-2 into FILE holds Hot.spin;
# on a loaded machine a JVM's first seconds of JFR can come out nearly
# empty, so a second recording is allowed (and said)
flame_has() {
    local fmt=$1 out=$2 try
    for try in 1 2; do
        "$plugin" -n shop flame hot-2 -d 4s -o "$fmt" -f "$out" 2>"$work/fl.err"
        grep -q 'live.Contention$Hot.spin' "$out" && return 0
        echo "note: flame -o $fmt try $try: no Hot.spin ($(wc -l <"$out") lines)"
    done
    return 1
}
flame_has collapsed "$work/hot.collapsed" &&
    pass "flame -o collapsed: live.Contention\$Hot.spin is sampled" || fail "flame" "$(cat "$work/fl.err"; head -5 "$work/hot.collapsed")"
flame_has top "$work/hot.top" && pass "flame -o top" || fail "flame -o top" "$(cat "$work/fl.err"; head -8 "$work/hot.top")"
# sampled every 10 ms by default (not the snapshot commands' 1 s --interval):
# the spinner, on 60% of a core, gives dozens of samples in 4 s even on a
# loaded machine; at 1 s it gave at most 4, and now and then none
n=$(sed -nE '1s/.* samples ([0-9]+) .*/\1/p' "$work/hot.top")
[ "${n:-0}" -ge 20 ] && pass "flame samples every 10 ms by default ($n samples in 4 s)" ||
    fail "flame: ${n:-no} samples in 4 s (sampled too sparsely?)" "$(head -1 "$work/hot.top")"
"$plugin" -n shop flame hot-2 -d 1s --interval 2s >"$work/fl-int.out" 2>&1
st=$?
[ "$st" = 2 ] && grep -q 'sampling period is 1ms to 1s' "$work/fl-int.out" &&
    pass "flame --interval 2s: refused, with the range (exit $st)" || fail "flame --interval 2s: exit $st" "$(cat "$work/fl-int.out")"
[ -z "$(leftovers "$hot2")" ] && [ -z "$(recordings "$hot2")" ] &&
    pass "after flame: nothing in the pod's /tmp, no recording" || fail "after flame: $(leftovers "$hot2") $(recordings "$hot2")"

echo "--- a container without sh"
"$plugin" -n shop threads nosh-1 >"$work/nosh.out" 2>&1
st=$?
[ "$st" != 0 ] && grep -q 'has no shell (sh)' "$work/nosh.out" && grep -q 'this works: kubectl jprof -n shop threads nosh-1 --debug-image [a-z]' "$work/nosh.out" &&
    pass "no sh: a clear message and the command that works (--debug-image; exit $st)" || fail "no sh" "$(cat "$work/nosh.out")"
"$plugin" -n shop threads nosh-1 -c distroless --debug-image jprof/jprof:test >"$work/nosh2.out" 2>&1
grep -q 'kubectl debug failed too' "$work/nosh2.out" && grep -q '"debug",' "$work/calls.log" &&
    pass "no sh with --debug-image: kubectl debug attempted, its failure reported" || fail "debug fallback" "$(cat "$work/nosh2.out")"

echo "--- pods of another architecture: the probe of the pod's architecture is sent"
# the FAKE claims arm64 for dl-arm (its loader's uname -m says aarch64) and
# runs the probe it receives under qemu-aarch64-static: only an arm64 probe
# answers there
export FAKE_QEMU_ARM64=${JPROF_CROSS_EMULATOR:-$(command -v qemu-aarch64-static)}
if [ -x "$builddir/jprof-probe-arm64" ] && [ -x "$FAKE_QEMU_ARM64" ]; then
    "$plugin" -v -n shop deadlocks dl-arm -o json >"$work/arm.json" 2>"$work/arm.err"
    st=$?
    names=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(sorted(t["name"] for c in d["deadlocks"] for t in c["threads"])))' "$work/arm.json" 2>&1)
    [ "$st" = 5 ] && [ "$names" = "mon-deadlock-1 mon-deadlock-2 rl-deadlock-1 rl-deadlock-2" ] &&
        pass "an arm64 pod: deadlocks answered by the probe run under qemu-aarch64 (exit 5, both cycles)" ||
        fail "arm64 pod: exit $st, $names" "$(tail -5 "$work/arm.err")"
    grep -q "^+ pod dl-arm runs on arm64 (aarch64): sending $builddir/jprof-probe-arm64\$" "$work/arm.err" &&
        pass "-v says the pod runs on arm64 (aarch64) and jprof-probe-arm64 is sent" ||
        fail "arm64 pod: which probe" "$(grep '^+ pod' "$work/arm.err")"
    "$plugin" -v -n shop threads dl-arm-nouname -o json >"$work/arm2.json" 2>"$work/arm2.err" &&
        grep -q '"get", "node", "arm-node"' "$work/calls.log" &&
        grep -q "^+ pod dl-arm-nouname runs on arm64: sending $builddir/jprof-probe-arm64\$" "$work/arm2.err" &&
        pass "a pod whose loader cannot tell its machine: its node's architecture (arm64) picks the probe" ||
        fail "node architecture fallback" "$(tail -5 "$work/arm2.err")"
    "$builddir/jprof-top" -b -n shop --pod dl-arm -d 0.2 >"$work/top-arm.txt" 2>"$work/top-arm.err" &&
        grep -q '^DEADLOCK 1: 2 threads' "$work/top-arm.txt" &&
        pass "jprof-top -b --pod on the arm64 pod: deadlocks through jprof-probe-arm64" ||
        fail "jprof-top on the arm64 pod" "$(head -5 "$work/top-arm.txt"; tail -3 "$work/top-arm.err")"
    wait_clean_dl=$(leftovers "$dl")
    [ -z "$wait_clean_dl" ] && pass "the arm64 probe removed itself from the pod" || fail "arm64 probe left $wait_clean_dl"
else
    why="no jprof-probe-arm64 in the build or no qemu-aarch64-static (docs/ARM64.md; scripts/install-deps)"
    [ "${CI:-}" = true ] && fail "missing under CI=true: $why" || echo "SKIP: the arm64 pod cases: $why"
fi
# no probe for the pod's architecture: a message naming it and what to install
env -u JPROF_PROBE "$plugin" -n shop threads dl-s390x >"$work/s390x.out" 2>&1
st=$?
[ "$st" != 0 ] && grep -q "pod dl-s390x runs on s390x (s390x): no jprof-probe-s390x is installed next to $builddir: install jprof's s390x probe there" "$work/s390x.out" &&
    pass "a pod of an architecture without a probe: exit $st, the architecture and what to install named" ||
    fail "s390x pod: exit $st" "$(cat "$work/s390x.out")"
"$plugin" -n shop threads dl-s390x >"$work/s390x2.out" 2>&1
grep -q "the probe $builddir/jprof-probe is an amd64 program, and there is no jprof-probe-s390x beside it" "$work/s390x2.out" &&
    pass "--probe/JPROF_PROBE of another architecture than the pod's: said so" || fail "s390x with JPROF_PROBE" "$(cat "$work/s390x2.out")"
[ -z "$(leftovers "$dl")" ] && pass "nothing is left in a pod no probe was sent to" || fail "left $(leftovers "$dl")"

# wait_for COND-CMD...: polls up to 20 s
wait_for() {
    for _ in $(seq 200); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
probe_running() { leftovers "$1" | grep -q 'jprof-probe-'; }
zombies() { in_pod "$1" sh -c 'grep -l "^State:.*Z" /proc/[0-9]*/status' 2>/dev/null; }
no_zombie() { [ -z "$(zombies "$1")" ]; }
recording_running() { [ -n "$(recordings "$1")" ]; }
clean() { [ -z "$(leftovers "$1")" ] && [ -z "$(recordings "$1")" ]; }

echo "--- the probe killed with SIGKILL mid-recording"
"$plugin" -n shop flame hot-1 -c app -d 60s >"$work/k1.out" 2>&1 &
cl=$!
pids+=("$cl")
if wait_for recording_running "$hot1"; then
    # the probe that serves is the watchdog's child; its pid is in worker.pid
    worker=$(in_pod "$hot1" sh -c 'cat /tmp/jprof-probe-*/worker.pid' 2>/dev/null | head -1)
    in_pod "$hot1" kill -9 "$worker"
    wait_for clean "$hot1" && pass "probe SIGKILLed: its watchdog stopped the recording and removed its files" ||
        fail "after SIGKILL: left $(leftovers "$hot1") $(recordings "$hot1")"
    wait_for no_zombie "$hot1" && pass "and reaped it: no zombie under the JVM (pid 1, which reaps nothing)" ||
        fail "zombies in the pod: $(zombies "$hot1")"
    wait_for sh -c "! kill -0 $cl 2>/dev/null" && pass "the client ends when the probe dies" || fail "client hangs"
    grep -q "kubectl-jprof:" "$work/k1.out" && pass "the client says why: $(grep kubectl-jprof: "$work/k1.out" | tail -1 | cut -c1-100)" || fail "no message"
else
    fail "recording never started" "$(cat "$work/k1.out")"
fi

echo "--- kubectl killed mid-session"
"$plugin" -n shop flame hot-1 -c app -d 60s >"$work/k2.out" 2>&1 &
cl=$!
pids+=("$cl")
if wait_for recording_running "$hot1"; then
    kpid=$(pgrep -f "fake-kubectl.py -n shop exec -i hot-1" | head -1)
    kill -9 "$kpid"
    wait_for clean "$hot1" && pass "kubectl killed: the probe saw its input close, stopped the recording, removed its files" ||
        fail "after kubectl died: left $(leftovers "$hot1") $(recordings "$hot1")"
    wait_for sh -c "! kill -0 $cl 2>/dev/null" && pass "the client ends when kubectl dies" || fail "client hangs after kubectl died"
else
    fail "recording never started (2)" "$(cat "$work/k2.out")"
fi

echo "--- SIGTERM to the client mid-recording"
"$plugin" -n shop flame hot-1 -c app -d 60s >"$work/k3.out" 2>&1 &
cl=$!
pids+=("$cl")
if wait_for recording_running "$hot1"; then
    kill -TERM "$cl"
    wait_for clean "$hot1" && pass "client SIGTERMed: bye sent, nothing left in the pod" ||
        fail "after SIGTERM: left $(leftovers "$hot1") $(recordings "$hot1")"
else
    fail "recording never started (3)" "$(cat "$work/k3.out")"
fi

echo "--- a leftover of an earlier probe is removed, a live one is kept"
in_pod "$dl" sh -c 'mkdir /tmp/jprof-probe-99999.AbCdEf && touch /tmp/jprof-probe-99999.AbCdEf/jprof-probe'
"$plugin" -n shop locks dl-1 >/dev/null 2>&1
[ -z "$(leftovers "$dl")" ] && pass "stale probe directory of a gone probe removed" || fail "stale dir: $(leftovers "$dl")"

echo "--- annotations round trip (agent precedence)"
ann() { python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); print(d["mode"], d["reason"], " ".join("%s=%s" % kv for kv in sorted(d["annotations"].items())))'; }
"$plugin" -n shop enable dl-1 >/dev/null && r=$("$plugin" -n shop status dl-1 -o json | ann)
[ "$r" = "continuous None jprof.io/profile=continuous" ] && pass "enable -> continuous" || fail "enable: $r"
"$plugin" -n shop profile dl-1 --for 15m --events cpu,lock >/dev/null && r=$("$plugin" -n shop status dl-1 -o json | ann)
case $r in "temporary None jprof.io/events=cpu,lock jprof.io/profile=continuous jprof.io/profile-until="*Z) pass "profile --for 15m: the window wins over continuous" ;; *) fail "profile --for: $r" ;; esac
"$plugin" -n shop disable dl-1 >/dev/null && r=$("$plugin" -n shop status dl-1 -o json | ann)
[ "$r" = "disabled disabled jprof.io/events=cpu,lock jprof.io/profile=disabled" ] && pass "disable wins and drops the window" || fail "disable: $r"
"$plugin" -n shop profile dl-1 --for 15m 2>"$work/p.err" >/dev/null
grep -q "disabled, which wins" "$work/p.err" && pass "profile on a disabled pod says disabled wins" || fail "profile on disabled: $(cat "$work/p.err")"
"$plugin" -n shop profile dl-1 --for 25h >/dev/null 2>&1
[ $? = 2 ] && pass "--for longer than 24h is refused" || fail "--for 25h accepted"
"$plugin" -n shop profile dl-1 >/dev/null 2>&1
[ $? = 2 ] && pass "profile without --for is refused" || fail "profile without --for"
"$plugin" -n shop enable -s ledger-svc --workload >"$work/wl.out" 2>&1 && grep -q "rolls its pods" "$work/wl.out" &&
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); p=s["patches"][-1]; assert p["ref"]=="deployment/ledger" and p["patch"]["spec"]["template"]["metadata"]["annotations"]["jprof.io/profile"]=="continuous", p' "$work/state.json" &&
    pass "--workload patches the Deployment's pod template and says it rolls the pods" || fail "--workload: $(cat "$work/wl.out")"
"$plugin" --context ctx-a --kubeconfig /nonexistent/kc -n shop status dl-1 >/dev/null 2>&1
grep -- '"--context", "ctx-a", "--kubeconfig", "/nonexistent/kc", "-n", "shop", "exec"' "$work/calls.log" >/dev/null &&
    pass "--context/--kubeconfig/-n reach every kubectl call" || fail "global options: $(tail -2 "$work/calls.log")"

echo "--- errors"
"$plugin" -n shop threads no-such-pod >/dev/null 2>"$work/e1"
[ $? = 4 ] && grep -q "no pod no-such-pod" "$work/e1" && pass "unknown pod: exit 4, message" || fail "unknown pod: $(cat "$work/e1")"
KUBECTL=/nonexistent/kubectl "$plugin" -n shop threads dl-1 >/dev/null 2>"$work/e2"
grep -q "cannot run /nonexistent/kubectl" "$work/e2" && pass "missing kubectl named" || fail "missing kubectl: $(cat "$work/e2")"
printf '#!/bin/sh\nsleep 30\n' >"$work/slow-kubectl" && chmod +x "$work/slow-kubectl"
t0=$(date +%s)
KUBECTL=$work/slow-kubectl "$plugin" -n shop --timeout 1s threads dl-1 >/dev/null 2>"$work/e3"
t1=$(date +%s)
grep -q "no answer within 1 s" "$work/e3" && [ $((t1 - t0)) -lt 5 ] && pass "a hanging kubectl is killed after --timeout" || fail "timeout: $(cat "$work/e3")"

echo "--- jprof-top through kubectl: the screens and the batch output every source has"
top=$builddir/jprof-top
unset JPROF_SERVER # no server configured: -n/-s goes through kubectl
"$top" -b -n shop -s hot --format json -d 0.5 >"$work/top-hot.json" 2>"$work/top-hot.err"
res=$(python3 - "$work/top-hot.json" <<'PY' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["via"] == "kubectl" and d["namespace"] == "shop" and d["service"] == "hot", d.keys()
where = sorted(j["where"] for j in d["jvms"])
tops = [j["threads"][0]["name"] for j in d["jvms"]]
via = sorted({j["via"] for j in d["jvms"]})
pct = all((j["threads"][0]["cpu_pct"] or 0) > 0 for j in d["jvms"])
print("where=%s top=%s via=%s busy=%s" % (",".join(where), ",".join(tops), ",".join(via), pct))
PY
)
[ "$res" = "where=pod shop/hot-1/app,pod shop/hot-2/app top=hot-spinner,hot-spinner via=kubectl busy=True" ] &&
    pass "jprof-top -b -n -s (no server): every pod's JVM in the shape of -b -p, hot-spinner busiest" ||
    fail "jprof-top -b through kubectl: $res" "$(cat "$work/top-hot.err")"
"$top" -b -n shop --pod dl-1 -d 0.2 >"$work/top-dl.txt" 2>"$work/top-dl.err" &&
    grep -q '^DEADLOCK 1: 2 threads' "$work/top-dl.txt" && grep -q 'pod shop/dl-1/app' "$work/top-dl.txt" &&
    pass "jprof-top -b --pod: the text of -b -p (deadlocks, the pod named)" ||
    fail "jprof-top -b --pod" "$(head -20 "$work/top-dl.txt"; cat "$work/top-dl.err")"
"$top" -b -n shop -s hot --range 1h >/dev/null 2>"$work/top-range.err"
[ $? = 2 ] && grep -q -- "--range reads a server" "$work/top-range.err" &&
    pass "jprof-top: --range through kubectl is a usage error that says why" || fail "--range: $(cat "$work/top-range.err")"
for p in "$dl" "$hot1" "$hot2"; do
    wait_for clean "$p" || fail "after jprof-top -b: pod pid $p left $(leftovers "$p") $(recordings "$p")"
done

if command -v tmux >/dev/null; then
    sock=jprof-kube-$$
    tscreen() { tmux -L "$sock" capture-pane -p -t "$1:" 2>/dev/null; }
    # tstep NAME DESCRIPTION PATTERN: until the screen matches (30 s)
    tstep() {
        for _ in $(seq 150); do
            tscreen "$1" | grep -qE -- "$3" && { pass "$2"; return 0; }
            sleep 0.2
        done
        fail "$2 (no /$3/ on screen)" "$(tscreen "$1")"
        return 1
    }
    tmux -L "$sock" new-session -d -s kt -x 160 -y 45 \
        "'$top' -n shop -s hot -d 1; echo \$? >'$work/kt.rc'; sleep 600"
    tstep kt "jprof-top -n -s (kubectl): the list of the service's pods" 'pods of service shop/hot \(2\)'
    tstep kt "the list names each pod" '^hot-1 '
    tmux -L "$sock" send-keys -t kt: Home Enter
    tstep kt "Enter opens the pod: the title names pod, container and JVM" 'jprof-top +pod shop/hot-1/app pid 1 live\.Contention'
    tstep kt "Threads through kubectl: hot-spinner with its CPU%" '^ +[0-9.]+ .* RUNNABLE .* hot-spinner '
    tmux -L "$sock" send-keys -t kt: L
    tstep kt "Locks through kubectl: the contended monitor's owner" 'owner "ledger-owner" .* blocks 3 threads'
    tmux -L "$sock" send-keys -t kt: F
    tstep kt "Flame through kubectl: the hot method after a window recorded in the pod" 'Contention\$Hot\.spin'
    wait_for recording_running "$hot1" && pass "the Flame screen records with JFR inside the pod" ||
        fail "no recording in the pod while on Flame"
    tmux -L "$sock" send-keys -t kt: B
    tstep kt "B through kubectl: the pod's window kept as the baseline" 'baseline kept \(baseline [0-9:]+Z\+'
    tstep kt "the pod's next windows are drawn compared with it" \
        '^ +[0-9]+ +[0-9]+ +([-+][0-9]+|=) +[0-9]+ +[0-9]+ +([-+][0-9]+|=) +live\.Contention\$Hot\.spin'
    tmux -L "$sock" send-keys -t kt: B
    # G: the probe's GC summary of the window it records (a collection made here)
    tmux -L "$sock" send-keys -t kt: G
    in_pod "$hot1" "$jdk17/bin/jcmd" 1 GC.run >/dev/null 2>&1
    tstep kt "G through kubectl: the GC screen from the probe's summary of the window" \
        '^GC: [1-9][0-9]* collections, [1-9][0-9]* pauses in '
    tstep kt "GC screen through kubectl: longest pause with collector and cause" \
        '^longest: .* of G1[A-Za-z]+, cause: '
    # H: the Heap screen takes nothing by itself (a histogram pauses the JVM); r and a -all
    tmux -L "$sock" send-keys -t kt: H
    tstep kt "H through kubectl: no histogram until asked, and why (a safepoint)" \
        '^No class histogram yet\. r takes one now \(pauses the JVM\)'
    tmux -L "$sock" send-keys -t kt: r
    tstep kt "r through kubectl: the pod's class histogram of live objects" \
        '^HEAP +class histogram of live objects at .* in [0-9.]+[kM]? objects of [0-9]+ classes'
    tstep kt "the Heap screen says how long it paused the JVM and why" \
        '^ +it paused the JVM [0-9.]+ ?[mun]?s: a class histogram stops the JVM'
    tmux -L "$sock" send-keys -t kt: a r
    tstep kt "a, r through kubectl: a histogram of every object (-all), the growth since the first" \
        '^HEAP +class histogram of every object \(-all\)'
    tstep kt "from the second histogram on, what grew" '^GROWTH over .* \(2 histograms\)'
    tmux -L "$sock" send-keys -t kt: S
    tstep kt "Status: the source is kubectl" 'source: kubectl, kubectl exec into the pod'
    tmux -L "$sock" send-keys -t kt: o
    tstep kt "o: back to the pods of the service" 'pods of service shop/hot'
    wait_for clean "$hot1" && pass "leaving the pod: its probe stopped the recording and removed itself" ||
        fail "after o: left $(leftovers "$hot1") $(recordings "$hot1")"
    tmux -L "$sock" send-keys -t kt: q
    wait_for test -s "$work/kt.rc" && [ "$(cat "$work/kt.rc")" = 0 ] && pass "q quits (status 0)" ||
        fail "q: status $(cat "$work/kt.rc" 2>/dev/null)"

    # kubectl jprof top: the same screens, through the plugin
    tmux -L "$sock" new-session -d -s kp -x 160 -y 45 \
        "'$plugin' -n shop top dl-1; echo \$? >'$work/kp.rc'; sleep 600"
    tstep kp "kubectl jprof top POD opens jprof-top on the pod" 'jprof-top +pod shop/dl-1/app pid 1 live\.Deadlocks'
    tmux -L "$sock" send-keys -t kp: D
    tstep kp "kubectl jprof top: Deadlocks with the monitor cycle" '^DEADLOCK [12]: 2 threads.*"mon-deadlock-1" -> "mon-deadlock-2"'
    tmux -L "$sock" send-keys -t kp: q
    wait_for test -s "$work/kp.rc" && wait_for clean "$dl" && pass "kubectl jprof top: q leaves nothing in the pod" ||
        fail "kubectl jprof top: rc $(cat "$work/kp.rc" 2>/dev/null), left $(leftovers "$dl")"
    tmux -L "$sock" kill-server 2>/dev/null
else
    skip_or_fail "tmux not found: the interactive kubectl screens are not tested"
fi

for p in "$dl" "$hot1" "$hot2"; do
    [ -z "$(leftovers "$p")" ] || fail "pod pid $p: left $(leftovers "$p")"
    no_zombie "$p" || fail "pod pid $p: zombies after every session: $(zombies "$p")"
done
summary "kubectl-jprof"
