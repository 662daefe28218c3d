#!/bin/bash
# test_k8s_manifests.sh - contrib/k8s renders offline with `kubectl
# kustomize` (the default and every overlay), and each rendering passes
# k8s_check.py, the project's own schema check: limits, probes on the real
# endpoints, non-root, capabilities with reasons, RBAC, NetworkPolicy, image
# tags as scripts/build-images names them. The real jprof-server runs with
# the embedded overlay's arguments and answers its probes. Then broken copies
# of the manifests must fail the check, each for its own reason. Last, the
# agent's capability list is tried for real on a JVM of another user.
# No cluster is involved: nothing is applied anywhere.
# Exit: 0 all passed, 1 some check failed, 77 skipped (no kubectl; a failure
# under CI=true).
set -u

. "$(dirname "$0")/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/jprof-k8s.XXXXXX")
cleanup_dirs+=("$work")
kubectl=${KUBECTL:-kubectl}
command -v "$kubectl" >/dev/null ||
    skip_or_fail "kubectl to render the manifests (apt-get install kubernetes-client)"
echo "kubectl: $("$kubectl" version --client 2>/dev/null | head -n 1)"

ref=$("$srcdir/scripts/build-images" --print-ref "$srcdir") || fail "scripts/build-images --print-ref"
echo "image scripts/build-images builds from this tree: $ref"
check() { python3 "$here/k8s_check.py" --image "$ref" --bindir "$builddir" "$@"; }

# render DIR NAME: kubectl kustomize DIR > $work/NAME.yaml
render() {
    if "$kubectl" kustomize "$1" >"$work/$2.yaml" 2>"$work/$2.err"; then
        pass "kubectl kustomize ${1#"$srcdir"/} renders ($(grep -c '^kind:' "$work/$2.yaml") objects)"
        return 0
    fi
    fail "kubectl kustomize $1" "$(head -n 5 "$work/$2.err")"
    return 1
}

for o in default embedded clickhouse clickhouse-cluster; do
    dir=$srcdir/contrib/k8s/overlays/$o
    [ $o = default ] && dir=$srcdir/contrib/k8s
    render "$dir" $o || continue
    extra=()
    [ $o = default ] || extra=(--overlay $o)
    [ $o = embedded ] && extra+=(--run-server)
    if check --source "$srcdir/contrib/k8s" "${extra[@]}" "$work/$o.yaml" >"$work/$o.check" 2>&1; then
        pass "k8s_check $o: $(tail -n 1 "$work/$o.check")"
    else
        fail "k8s_check $o" "$(grep -v '^PASS' "$work/$o.check" | head -n 12)"
    fi
done
cmp -s "$work/default.yaml" "$work/embedded.yaml" &&
    pass "the default install is the embedded overlay" ||
    fail "contrib/k8s renders something else than overlays/embedded"

# Broken copies: each edit of a good rendering must fail the check, and the
# failure must name the problem.
# broken NAME EXPECTED-FAIL-TEXT SED-SCRIPT [FILE]
broken() {
    local name=$1 want=$2 script=$3 base=${4:-embedded}
    sed "$script" "$work/$base.yaml" >"$work/bad-$name.yaml"
    if cmp -s "$work/$base.yaml" "$work/bad-$name.yaml"; then
        fail "broken copy '$name': the edit changed nothing (test out of date)"
        return
    fi
    check "$work/bad-$name.yaml" >"$work/bad-$name.out" 2>&1
    local rc=$?
    if [ $rc -ne 0 ] && grep -q "FAIL: .*$want" "$work/bad-$name.out"; then
        pass "broken copy '$name' fails: $(grep -m 1 "FAIL: .*$want" "$work/bad-$name.out")"
    else
        fail "broken copy '$name' was not caught (exit $rc, want a FAIL about '$want')" \
            "$(grep FAIL "$work/bad-$name.out" | head -n 3)"
    fi
}
if [ -s "$work/embedded.yaml" ] && [ -s "$work/clickhouse.yaml" ]; then
    broken privileged "not privileged" 's/privileged: false/privileged: true/'
    broken latest "'latest' tag" 's|image: jprof/jprof:.*|image: jprof/jprof:latest|'
    broken other-image "what scripts/build-images builds" 's|image: jprof/jprof:.*|image: example/jprof:9.9.9|'
    broken no-memory-limit "limits.memory set" '0,/limits:/{/limits:/{n;n;d}}'
    broken rbac-delete "verbs only get/list/watch" 's/- watch/- watch\n  - delete/'
    broken rbac-secrets "only core pods" 's/^  - pods$/  - pods\n  - secrets/'
    broken probe-path "asks jprof-server's /healthz" 's|path: /healthz|path: /nothing|'
    broken probe-port "port 9999 is the one" '0,/port: http$/s/port: http$/port: 9999/'
    broken root-server "runAsNonRoot" 's/runAsNonRoot: true/runAsNonRoot: false/'
    broken capability "only the agent's capabilities" 's/- FOWNER/- SYS_ADMIN/'
    broken secret "no Secret" '1i apiVersion: v1\nkind: Secret\nmetadata:\n  name: t\n  namespace: jprof\nstringData:\n  token: committed\n---'
    broken no-policy "NetworkPolicy governs" 's/name: jprof-agent$/name: jprof-agent/; /^kind: NetworkPolicy/,/^---/s/app.kubernetes.io\/name: jprof-agent/app.kubernetes.io\/name: nothing/'
    broken scrape-port "prometheus.io/port" 's/prometheus.io\/port: "9464"/prometheus.io\/port: "9465"/'
    broken unknown-flag "every flag is in jprof-server --help" 's/- --metrics-no-auth/- --metrics-no-auht/'
    broken escalation "allowPrivilegeEscalation false" '0,/allowPrivilegeEscalation: false/s//allowPrivilegeEscalation: true/'
    broken ch-one-replica "more than one replica" 's/replicas: 2/replicas: 1/' clickhouse
    broken ch-data-dir "no --data-dir" 's|- --clickhouse-database=jprof|- --clickhouse-database=jprof\n        - --data-dir=/tmp/x|' clickhouse
    # a capability without its reason, in a copy of the source tree
    cp -r "$srcdir/contrib/k8s" "$work/src-k8s"
    sed -i '/# send SIGQUIT/,/its attach listener/d' "$work/src-k8s/base/agent.yaml"
    check --source "$work/src-k8s" "$work/embedded.yaml" >"$work/bad-comment.out" 2>&1
    grep -q 'FAIL: .*capability KILL has a comment' "$work/bad-comment.out" &&
        pass "a capability without a comment fails: $(grep -m 1 FAIL "$work/bad-comment.out")" ||
        fail "a capability without a comment was not caught"
    # not YAML kustomize writes: a clear error, exit 2
    printf 'kind: Pod\nspec:\n\tcontainers: []\n' >"$work/bad-yaml.yaml"
    check "$work/bad-yaml.yaml" >"$work/bad-yaml.out" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q 'bad-yaml.yaml:3: tab' "$work/bad-yaml.out" &&
        pass "malformed input: exit 2 with the file and line ($(head -n 1 "$work/bad-yaml.out"))" ||
        fail "malformed input: exit $rc" "$(head -n 2 "$work/bad-yaml.out")"
fi

# The agent's capabilities, for real: a JVM of another user (nobody), and
# jprof-top (the same src/jvm attach and snapshot code as the agent) as root
# with exactly the capabilities base/agent.yaml adds: a helper snapshot
# works; without any one of them it fails. Needs root and setpriv.
caps=$(sed -n '/^ *add:$/,/^ *volumeMounts:$/s/^ *- \([A-Z_]*\)$/\1/p' "$srcdir/contrib/k8s/base/agent.yaml")
java=$jdk17/bin/java
classes=$builddir/tests/java/classes
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    skip_or_fail "root and setpriv (util-linux) to try the agent's capabilities"
elif [ ! -x "$java" ] || [ ! -s "$classes/shop/JprofWorkload.class" ]; then
    skip_or_fail "JDK 17 at $jdk17 and the test workload (make jprof-workload)"
else
    echo "the agent's capabilities in base/agent.yaml:" $caps
    jvmdir=$work/jvm
    mkdir -p "$jvmdir" && cp -r "$classes" "$jvmdir/" && chmod 755 "$work" && chmod -R a+rX "$jvmdir"
    # with_caps "CAP CAP...": jprof-top as root bounded to those capabilities
    with_caps() {
        local b=-all c
        for c in $1; do b="$b,+${c,,}"; done
        timeout 60 setpriv --bounding-set "$b" --inh-caps -all -- "$builddir/jprof-top" -b -p "$jpid" \
            -d 0.3 --format json --snapshot helper >"$work/caps.out" 2>"$work/caps.err"
    }
    # a fresh JVM for each try: the first attach (SIGQUIT) is part of it
    fresh_jvm() {
        [ -n "${jpid:-}" ] && kill "$jpid" 2>/dev/null
        setpriv --reuid=65534 --regid=65534 --clear-groups "$java" -cp "$jvmdir/classes" \
            shop.JprofWorkload 300 >"$work/jvm.log" 2>&1 &
        jpid=$!
        pids+=("$jpid")
        # until main() runs (its "catalog" thread): an agent loaded while the
        # JVM still starts can fail inside it (NullPointerException in the
        # instrument agent's loading, seen once in ~10 runs); the capabilities
        # are what this checks
        for _ in $(seq 1 300); do
            grep -qx catalog /proc/"$jpid"/task/*/comm 2>/dev/null && return 0
            sleep 0.1
        done
        return 1
    }
    if fresh_jvm && with_caps "$caps" && grep -q '"state"' "$work/caps.out"; then
        pass "root with only the manifest's $(wc -w <<<"$caps") capabilities takes a helper snapshot of user nobody's JVM"
    else
        fail "the manifest's capabilities do not suffice" "$(head -c 300 "$work/caps.err")"
    fi
    # a socket left at the JVM's pid by a dead process of another user (pids
    # are reused; a JVM killed with -9 leaves its socket) is set aside
    if fresh_jvm && python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' "/tmp/.java_pid$jpid" &&
        with_caps "$caps" && grep -q '"state"' "$work/caps.out"; then
        pass "a stale root socket at the JVM's pid is set aside and the snapshot is taken"
    else
        fail "a stale root socket at the JVM's pid stops the attach" "$(head -c 300 "$work/caps.err")"
    fi
    for drop in $caps; do
        fresh_jvm
        if with_caps "$(tr ' ' '\n' <<<"$caps" | grep -vx "$drop")"; then
            fail "$drop looks unneeded: the snapshot worked without it (drop it from the manifest?)"
        else
            pass "without $drop the attach fails: $(head -n 1 "$work/caps.err")"
        fi
    done
    kill "$jpid" 2>/dev/null
fi
summary "k8s manifests"
