#!/usr/bin/env bash
# test_pods.sh - kubectl jprof and jprof-top -n -s on REAL containers locked
# down the way clusters lock pods (podman + runc; tests/integration/pods.sh),
# behind a kubectl stand-in that is a FAKE API (fake-kubectl.py: no API
# server runs here). The matrix (man kubectl-jprof, "LOCKED-DOWN PODS"):
#   1 default (root, a shell, writable /tmp)
#   2 runAsNonRoot (JVM and exec as 65532), and a JVM of another uid
#   3 readOnlyRootFilesystem with an emptyDir on /tmp
#   4 /tmp and /dev/shm noexec (root writable, and read-only too)
#   5 no shell (distroless-like): the ephemeral debug container from
#     jprof's own image, end to end
#   6 every capability dropped, no-new-privileges, default seccomp
#   7 the JVM not pid 1, two JVMs in one container
#   8 -XX:+DisableAttachMechanism, -Xrs
# Each case answers (threads, deadlocks; a flame graph in case 1) or fails
# in time naming the cause and the command that works; after each session
# nothing of jprof's is left in the pod: no file, no process, no zombie.
# Prints the time to the first answer per case (docs/PERFORMANCE.md).
#
# Two sizes. By default (make check) every distinct route once, in five
# pods: the JVMs whose route differs only by the JVM (another uid, not pid
# 1, -Xrs, attach disabled, the flame graph's) share the default pod and
# are picked with --pid; runAsNonRoot, read-only root and no capabilities
# share one pod; jprof-top's screens run for the routes that differ (exec,
# the noexec fallback, the debug container); the printed debug commands are
# run as pasted. JPROF_PODS_FULL=1 (make check-pods): every case in a pod of
# its own, each through jprof-top too. Either way the agent's DaemonSet
# part runs once, beside the matrix.
set -u
. "$(dirname "$0")/lib.sh"
. "$here/pods.sh"

work=$builddir/tests/integration/pods.d
classes=$work/classes
plugin=$builddir/kubectl-jprof
top=$builddir/jprof-top
export JPROF_PROBE=$builddir/jprof-probe
unset JPROF_SERVER
pods_init "$work/podman"
compile_live_workloads
t_images=$SECONDS
pods_images
t_images=$((SECONDS - t_images))
"$KUBECTL" version | grep -q 'FAKE API' && pass "the kubectl stand-in says it is a FAKE API" ||
    fail "the stand-in does not say it is a fake"

ns=locked
# jvm [OPTIONS] CLASS: the workload's command line in the pod image (JDK
# 17); jvm25: on JDK 25 when the image has it
jvm() { echo /usr/lib/jvm/jre17/bin/java -Xmx64m -XX:+UseSerialGC -cp /app "$@"; }
jre=jre17
have_jdk25 && jre=jre25
jvm25() { echo /usr/lib/jvm/$jre/bin/java -Xmx64m -XX:+UseSerialGC -cp /app "$@"; }

# start NAME PODMAN-OPTIONS... -- IMAGE CMD...: a pod of one container
# "app", registered under its name (label app=NAME)
start() {
    local name=$1
    shift
    pod_start "$name" "$@" || return 1
    pod_register "$name" "$ns" "app:$name" "{\"app\": \"$name\"}" "${pod_uid:-}"
}

# first_answer NAME ARGS...: kubectl jprof ARGS, timed; $ms, $out, $rc
first_answer() {
    local name=$1 t0 t1
    shift
    t0=$(date +%s%N)
    "$plugin" -n "$ns" "$@" >"$work/$name.out" 2>"$work/$name.err"
    rc=$?
    t1=$(date +%s%N)
    ms=$(((t1 - t0) / 1000000))
    out=$work/$name.out
}

# threads_ok FILE: the answer holds the deadlocked workload's threads
threads_ok() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n={t["name"] for t in d["threads"]}; assert {"mon-deadlock-1","rl-deadlock-2","bystander"} <= n, n' "$1" 2>/dev/null
}

# process_ok FILE: the header's figures came from the pod (process CPU and
# heap, as the local source shows them)
process_ok() {
    python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["process"]; assert p["heap_used"] > 0 and p["heap"] and p["cpu_pct"] is not None, p' "$1" 2>/dev/null
}

# deadlocks_ok FILE: the answer holds the monitor cycle
deadlocks_ok() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n={t["name"] for c in d["deadlocks"] for t in c["threads"]}; assert {"mon-deadlock-1","mon-deadlock-2"} <= n, n' "$1" 2>/dev/null
}

# after NAME [HOSTPID]: nothing of jprof's is left in pod NAME (waits up to
# 10 s), no recording in its JVM (pid 1's, or HOSTPID's)
after() {
    local i clean=
    for i in $(seq 50); do
        pod_clean "$1" && clean=1 && break
        sleep 0.2
    done
    local rec
    rec=$(pod_recordings "$1" "${2:-}")
    [ -n "$clean" ] && [ -z "$rec" ] &&
        pass "$1: nothing left in the pod (files, processes, zombies, recordings)" ||
        fail "$1: left in the pod: $(pod_dirt "$1") recordings: $rec"
}

matrix=()
# row CASE OUTCOME: a line of the table printed at the end: $ms, the time
# to kubectl jprof's answer (or its failure), $tms, from Enter to
# jprof-top's first Threads screen
row() { matrix+=("$(printf '%-46s %-34s %8s ms %8s ms' "$1" "$2" "$ms" "${tms:--}")"); }

tmux_sock=jprof-pods-$$
# screens CASE NAME [OPTIONS...]: jprof-top -n NS -s NAME [OPTIONS] in
# tmux, as a user types it: $tms, the time from Enter (the session's start)
# to the first Threads screen holding the pod's threads; D shows the
# deadlock; q quits with status 0
screens() {
    local case=$1 name=$2 s t0 scr=
    shift 2
    s=$name
    rm -f "$work/$name.rc"
    t0=$(date +%s%N)
    tmux -L "$tmux_sock" new-session -d -s "$s" -x 160 -y 50 \
        "$(printf '%q ' "$top" -n "$ns" -s "$name" -d 1 "$@") 2>'$work/$name.tui.err'; echo \$? >'$work/$name.rc'; sleep 600"
    tms=
    for _ in $(seq 600); do
        scr=$(tmux -L "$tmux_sock" capture-pane -p -t "$s:" 2>/dev/null)
        if grep -q "jprof-top  *pod $ns/$name/app" <<<"$scr" && grep -q ' mon-deadlock-1' <<<"$scr"; then
            tms=$((($(date +%s%N) - t0) / 1000000))
            break
        fi
        [ -s "$work/$name.rc" ] && break
        sleep 0.1
    done
    if [ -n "$tms" ]; then
        pass "$case: jprof-top -n $ns -s $name: the Threads screen $tms ms after Enter"
        tmux -L "$tmux_sock" send-keys -t "$s:" D
        for _ in $(seq 150); do
            scr=$(tmux -L "$tmux_sock" capture-pane -p -t "$s:" 2>/dev/null)
            grep -q '^DEADLOCK [12]: 2 threads' <<<"$scr" && break
            sleep 0.2
        done
        grep -q '^DEADLOCK [12]: 2 threads' <<<"$scr" && pass "$case: D: the deadlock cycles" ||
            fail "$case: no deadlock on the D screen" "$scr"
    else
        fail "$case: jprof-top -n $ns -s $name: no Threads screen" "$scr" "$(cat "$work/$name.tui.err" 2>/dev/null)"
    fi
    tmux -L "$tmux_sock" send-keys -t "$s:" q
    for _ in $(seq 100); do
        [ -s "$work/$name.rc" ] && break
        sleep 0.2
    done
    [ "$(cat "$work/$name.rc" 2>/dev/null)" = 0 ] || fail "$case: jprof-top: q ended with '$(cat "$work/$name.rc" 2>/dev/null)'"
    tmux -L "$tmux_sock" kill-session -t "$s:" 2>/dev/null
}

# answers CASE NAME [PLUGIN OPTIONS...]: kubectl jprof threads (the first
# answer, timed: threads and the deadlock cycles), then (unless no_screens
# is set) jprof-top -n NS -s NAME (the pod's service, one pod: it opens at
# once) with the same options; nothing left in the pod afterwards
answers() {
    local case=$1 name=$2 ok=
    shift 2
    first_answer "$name" threads "$name" -o json "$@"
    if [ $rc = 0 ] && threads_ok "$out" && deadlocks_ok "$out"; then
        pass "$case: threads and deadlocks through kubectl in $ms ms"
        process_ok "$out" && pass "$case: the header's process CPU and heap from the pod" ||
            fail "$case: process CPU and heap" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("process"))' "$out")"
        ok=1
    else
        fail "$case: threads (exit $rc)" "$(tail -n 3 "$work/$name.err")"
    fi
    after "$name"
    tms=
    if [ -z "${no_screens:-}" ]; then
        screens "$case" "$name" "$@"
        after "$name"
        [ -n "$tms" ] || ok=
    fi
    if [ -n "$ok" ]; then
        row "$case" "answers"
    else
        row "$case" "FAILS: $(tail -n 1 "$work/$name.err" | cut -c1-60)"
    fi
}

# gone NAME...: the pods' containers removed (their JVMs off the cores),
# in the background: gone_wait waits for them
gone_pids=()
gone() {
    podman rm -f --depend -t 0 "$@" >/dev/null 2>&1 &
    gone_pids+=("$!")
}
gone_wait() { [ ${#gone_pids[@]} = 0 ] || wait "${gone_pids[@]}"; }

# refuses CASE NAME WANT-PATTERN [PLUGIN OPTIONS...]: fails in time, the
# message matches WANT-PATTERN; nothing left in the pod
refuses() {
    local case=$1 name=$2 want=$3
    shift 3
    first_answer "$name" threads "$name" "$@"
    if [ $rc != 0 ] && grep -qE -- "$want" "$work/$name.err" && [ "$ms" -lt 60000 ]; then
        pass "$case: refused in $ms ms: $(tail -n 1 "$work/$name.err" | cut -c1-160)"
        tms= row "$case" "refused, says why"
    else
        fail "$case: exit $rc in $ms ms, want /$want/" "$(tail -n 3 "$work/$name.err")"
        tms= row "$case" "FAILS: $(tail -n 1 "$work/$name.err" | cut -c1-60)"
    fi
    after "$name"
}

# pasted_opts FILE NAME: the options of the command FILE's message says
# works ("this works: kubectl jprof -n NS threads NAME OPTIONS"), which must
# name this namespace and pod
pasted_opts() {
    local cmd
    cmd=$(grep -o 'this works: kubectl jprof [^;()]*' "$1" | head -n 1 | sed 's/^this works: kubectl jprof //')
    echo "  printed: kubectl jprof $cmd" >&2
    case "$cmd " in
    "-n $ns threads $2 "*) echo "${cmd#"-n $ns threads $2"}" ;;
    *) return 1 ;;
    esac
}

# pasteable FILE NAME: the command FILE's message says works, run as pasted
# (kubectl-jprof for `kubectl jprof`)
pasteable() {
    local opts
    opts=$(pasted_opts "$1" "$2") || return 1
    # shellcheck disable=SC2086 # the words of the printed command
    timeout 120 "$plugin" -n "$ns" threads "$2" $opts -o json >"$1.paste.out" 2>"$1.paste.err" &&
        threads_ok "$1.paste.out"
}

hot=-Dcontention.hot=40
setpriv10001="setpriv --reuid=10001 --regid=10001 --clear-groups"

# full_matrix: every case in a pod of its own (JPROF_PODS_FULL=1)
full_matrix() {
    local other
    pod_uid=
    start dflt --user 0 -- "$pod_image" $(jvm live.Deadlocks 3600)
    start dflt-hot --user 0 -- "$pod_image" $(jvm $hot live.Contention 3600)
    pod_uid=65532 start nonroot --user 65532:65532 -- "$pod_image" $(jvm live.Deadlocks 3600)
    start otheruid --user 0 -- "$pod_image" $setpriv10001 $(jvm live.Deadlocks 3600)
    pod_uid=65532 start readonly --user 65532:65532 --read-only --read-only-tmpfs=false \
        --tmpfs /tmp:rw,exec,mode=1777 -- "$pod_image" $(jvm live.Deadlocks 3600)
    start noexec --user 0 --tmpfs /tmp:rw,noexec,nosuid,nodev,mode=1777 \
        --tmpfs /dev/shm:rw,noexec,nosuid,nodev -- "$pod_image" $(jvm live.Deadlocks 3600)
    start noexec-ro --user 0 --read-only --read-only-tmpfs=false \
        --tmpfs /tmp:rw,noexec,nosuid,nodev,mode=1777 --tmpfs /dev/shm:rw,noexec,nosuid,nodev \
        -- "$pod_image" $(jvm live.Deadlocks 3600)
    start nosh --user 65532:65532 -- "$nosh_image" $(jvm live.Deadlocks 3600)
    start nosh-root --user 0 -- "$nosh_image" $(jvm live.Deadlocks 3600)
    start nocaps --user 0 --cap-drop ALL --security-opt no-new-privileges -- "$pod_image" \
        $(jvm25 live.Deadlocks 3600)
    start notpid1 --user 0 -- "$pod_image" sh -c "$(jvm live.Deadlocks 3600); exit 0"
    start twojvms --user 0 -- "$pod_image" sh -c "$(jvm -Dcontention.hot=5 live.Contention 3600) & $(jvm live.Deadlocks 3600) & wait"
    start noattach --user 0 -- "$pod_image" $(jvm -XX:+DisableAttachMechanism live.Deadlocks 3600)
    start xrs --user 0 -- "$pod_image" $(jvm -Xrs live.Deadlocks 3600)
    ds_start
    pod_ready dflt dflt-hot nonroot otheruid readonly noexec noexec-ro nosh nosh-root nocaps \
        notpid1 twojvms noattach xrs ds-on ds-off
    pods_ready_s=$((SECONDS - t_pods))
    ds_agent

    echo "--- 1: default pod"
    answers "1 default (root, sh, writable /tmp)" dflt
    "$plugin" -n "$ns" flame dflt-hot -d 4s -o collapsed -f "$work/hot.collapsed" >"$work/hot.err" 2>&1
    grep -q 'live.Contention$Hot.spin' "$work/hot.collapsed" && pass "1 default: a flame graph recorded in the pod (Hot.spin)" ||
        fail "1 default: flame" "$(tail -n 3 "$work/hot.err")"
    after dflt-hot
    gone dflt dflt-hot

    echo "--- 2: runAsNonRoot; a JVM of another uid"
    answers "2 runAsNonRoot (JVM and exec 65532)" nonroot
    answers "2 JVM uid 10001, exec as root" otheruid
    gone nonroot otheruid

    echo "--- 3: readOnlyRootFilesystem, emptyDir /tmp"
    answers "3 read-only root, emptyDir /tmp" readonly
    gone readonly

    echo "--- 4: /tmp and /dev/shm noexec"
    answers "4 noexec /tmp and /dev/shm" noexec
    refuses "4 noexec /tmp, /dev/shm, read-only root" noexec-ro 'noexec.*this works: kubectl jprof'
    pasteable "$work/noexec-ro.err" noexec-ro && pass "4: the printed command works when pasted" ||
        fail "4: the printed command does not work" "$(grep -o 'kubectl debug.*' "$work/noexec-ro.err"; cat "$work/noexec-ro.err.paste.err")"
    after noexec-ro
    answers "4 ... with --debug-image (jprof takes it)" noexec-ro --debug-image "$jprof_image"
    gone noexec noexec-ro

    echo "--- 5: no shell (distroless-like)"
    refuses "5 no shell" nosh 'has no shell.*this works: kubectl jprof'
    pasteable "$work/nosh.err" nosh && pass "5: the printed command works when pasted" ||
        fail "5: the printed command does not work" "$(grep -o 'kubectl debug.*' "$work/nosh.err"; cat "$work/nosh.err.paste.err")"
    after nosh
    answers "5 no shell, --debug-image, JVM uid 65532" nosh --debug-image "$jprof_image"
    answers "5 no shell, --debug-image, JVM root" nosh-root --debug-image "$jprof_image"
    gone nosh nosh-root

    echo "--- 6: all capabilities dropped, no-new-privileges"
    answers "6 no capabilities, no-new-privileges (JDK 25)" nocaps
    gone nocaps

    echo "--- 7: the JVM not pid 1; two JVMs"
    answers "7 JVM not pid 1 (under sh)" notpid1
    first_answer twojvms threads twojvms -o json
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["target"]["main_class"] == "live.Contention", d["target"]' "$out" 2>/dev/null &&
        grep -q 'live.Deadlocks' "$work/twojvms.err" && grep -q -- '--pid ' "$work/twojvms.err" &&
        pass "7 two JVMs: the first answers, the other is named with the option that picks it" ||
        fail "7 two JVMs: the other JVM not named" "$(cat "$work/twojvms.err")"
    other=$(grep -o -- '--pid [0-9]*' "$work/twojvms.err" | head -n 1)
    answers "7 two JVMs in one container (--pid)" twojvms $other
    gone notpid1 twojvms

    echo "--- 8: attach disabled; -Xrs"
    refuses "8 -XX:+DisableAttachMechanism" noattach 'DisableAttachMechanism'
    answers "8 -Xrs" xrs
    gone noattach xrs
}

# in_background FUNCTION PREFIX: FUNCTION in a subshell in the background,
# its lines to PREFIX.log, its counts and matrix rows to PREFIX.counts
# and PREFIX.rows; in_background_wait PREFIX: waits, shows its lines and
# adds its counts and rows to this shell's
in_background() {
    (
        npass=0 nfail=0 matrix=()
        "$1"
        gone_wait
        echo "$npass $nfail" >"$2.counts"
        [ ${#matrix[@]} = 0 ] || printf '%s\n' "${matrix[@]}" >"$2.rows"
    ) >"$2.log" 2>&1 &
    bg_pid=$!
}
in_background_wait() {
    local np nf row
    wait "$bg_pid"
    cat "$1.log"
    read -r np nf <"$1.counts" 2>/dev/null || {
        np=0 nf=0
        fail "the background group ended early: no $1.counts"
    }
    npass=$((npass + np)) nfail=$((nfail + nf))
    [ -f "$1.rows" ] || return 0
    while IFS= read -r row; do matrix+=("$row"); done <"$1.rows"
}

# short_matrix: every distinct route once (make check)
short_matrix() {
    pod_uid=
    # pid 1 is the JVM (exec), four more JVMs are its children: another
    # uid's, -Xrs, attach disabled, and a busy one for the flame graph
    start dflt --user 0 -- "$pod_image" sh -c "$setpriv10001 $(jvm -Dpod.jvm=uid10001 live.Deadlocks 3600) &
        $(jvm -Dpod.jvm=xrs -Xrs live.Deadlocks 3600) &
        $(jvm -Dpod.jvm=noattach -XX:+DisableAttachMechanism live.Deadlocks 3600) &
        $(jvm -Dpod.jvm=hot $hot live.Contention 3600) &
        exec $(jvm live.Deadlocks 3600)"
    # runAsNonRoot, readOnlyRootFilesystem with an emptyDir /tmp, every
    # capability dropped, no-new-privileges, JDK 25
    pod_uid=65532 start locked --user 65532:65532 --read-only --read-only-tmpfs=false \
        --tmpfs /tmp:rw,exec,mode=1777 --cap-drop ALL --security-opt no-new-privileges \
        -- "$pod_image" $(jvm25 live.Deadlocks 3600)
    start noexec --user 0 --tmpfs /tmp:rw,noexec,nosuid,nodev,mode=1777 \
        --tmpfs /dev/shm:rw,noexec,nosuid,nodev -- "$pod_image" $(jvm live.Deadlocks 3600)
    start noexec-ro --user 0 --read-only --read-only-tmpfs=false \
        --tmpfs /tmp:rw,noexec,nosuid,nodev,mode=1777 --tmpfs /dev/shm:rw,noexec,nosuid,nodev \
        -- "$pod_image" $(jvm live.Deadlocks 3600)
    pod_uid=65532 start nosh --user 65532:65532 -- "$nosh_image" $(jvm live.Deadlocks 3600)
    ds_start
    pod_ready dflt:5 locked noexec noexec-ro nosh ds-on ds-off
    pods_ready_s=$((SECONDS - t_pods))
    ds_agent
    # the two groups of pods side by side (their sessions wait on podman,
    # kubectl and the JVMs more than they compute): the second in the
    # background, its lines shown after the first's
    # one tmux server for both (two first sessions at once could each
    # start one)
    tmux -L "$tmux_sock" new-session -d -s pods-server "sleep 3600"
    rm -f "$work/others".*
    in_background short_others "$work/others"
    short_default
    in_background_wait "$work/others"
}

# short_default: the default pod's JVMs, one after the other
short_default() {
    local p pid host named tags="uid10001 xrs noattach hot"
    local pid_uid10001 pid_xrs pid_noattach pid_hot host_uid10001 host_xrs host_noattach host_hot
    echo "--- 1, 7: the default pod: pid 1 answers, its other JVMs are named"
    answers "1 default (root, sh, writable /tmp; 5 JVMs)" dflt
    named=1
    for p in $tags; do
        read -r host pid <<<"$(pod_pid dflt "-Dpod.jvm=$p")"
        grep -q -- "--pid ${pid:-?} picks it" "$work/dflt.err" || {
            named=
            fail "7 several JVMs: $p's (pid ${pid:-?}) not named with --pid" "$(cat "$work/dflt.err")"
        }
        printf -v "pid_$p" %s "$pid"
        printf -v "host_$p" %s "$host"
    done
    [ -n "$named" ] && pass "7 several JVMs: pid 1 answers, each other JVM is named with the --pid that picks it"
    "$plugin" -n "$ns" flame dflt --pid "$pid_hot" -d 4s -o collapsed -f "$work/hot.collapsed" \
        >"$work/hot.err" 2>&1
    grep -q 'live.Contention$Hot.spin' "$work/hot.collapsed" &&
        pass "1 default: a flame graph recorded in the pod (Hot.spin, --pid)" ||
        fail "1 default: flame" "$(tail -n 3 "$work/hot.err")"
    after dflt "$host_hot"
    no_screens=1 answers "2, 7 JVM uid 10001, not pid 1, exec as root (--pid)" dflt --pid "$pid_uid10001"
    no_screens=1 answers "8 -Xrs (--pid)" dflt --pid "$pid_xrs"
    refuses "8 -XX:+DisableAttachMechanism (--pid)" dflt 'DisableAttachMechanism' --pid "$pid_noattach"
    gone dflt
}

# short_others: the pods of the other routes
short_others() {
    local opts
    echo "--- 2, 3, 6: runAsNonRoot, read-only root, no capabilities"
    no_screens=1 answers "2, 3, 6 uid 65532, read-only root, emptyDir /tmp, no caps (JDK 25)" locked
    gone locked

    echo "--- 4: /tmp and /dev/shm noexec"
    answers "4 noexec /tmp and /dev/shm" noexec
    gone noexec
    refuses "4 noexec /tmp, /dev/shm, read-only root" noexec-ro 'noexec.*this works: kubectl jprof'
    if opts=$(pasted_opts "$work/noexec-ro.err" noexec-ro); then
        # shellcheck disable=SC2086 # the words of the printed command
        no_screens=1 answers "4 ... the printed --debug-image command (JVM root)" noexec-ro $opts
    else
        fail "4: no command for this pod printed" "$(cat "$work/noexec-ro.err")"
    fi
    gone noexec-ro

    echo "--- 5: no shell (distroless-like)"
    refuses "5 no shell" nosh 'has no shell.*this works: kubectl jprof'
    if opts=$(pasted_opts "$work/nosh.err" nosh); then
        # shellcheck disable=SC2086 # the words of the printed command
        answers "5 ... the printed --debug-image command (JVM uid 65532)" nosh $opts
    else
        fail "5: no command for this pod printed" "$(cat "$work/nosh.err")"
    fi
    gone nosh
    echo "note: JPROF_PODS_FULL=1 (make check-pods) runs each case in a pod of its own, each through jprof-top"
}

# ---- the agent as its DaemonSet runs it ----
# free_port: a free TCP port on 127.0.0.1
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_port FILE: until FILE holds a port (20 s)
wait_port() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.2; done; return 1; }

# The agent as its DaemonSet runs it, in three steps around the matrix:
# ds_start (its servers and its two pods, started with the matrix's),
# ds_agent (once the pods are ready), ds_check (after the matrix: the agent
# has profiled all along). ds_pods: the pods ds_start started.
ds=$work/ds
ds_pods=
ds_start() {
    echo "--- the agent in a container with exactly its DaemonSet's privileges: its pods and servers"
    rm -rf "$ds" && mkdir -p "$ds/sa" "$ds/secret" "$ds/data"
    if ! command -v kubectl >/dev/null || ! command -v openssl >/dev/null; then
        [ "${CI:-}" = true ] && fail "kubectl and openssl (scripts/install-deps) for the DaemonSet test"
        echo "SKIP: the DaemonSet test needs kubectl (to render contrib/k8s) and openssl" >&2
        return
    fi
    kubectl kustomize "$srcdir/contrib/k8s" >"$ds/manifest.yaml" 2>"$ds/kustomize.err" || {
        fail "kubectl kustomize contrib/k8s" "$(tail -n 3 "$ds/kustomize.err")"
        return
    }
    # the FAKE API over HTTPS, as the service account's CA and token reach it
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$ds/key.pem" -out "$ds/sa/ca.crt" -days 1 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
    printf 'sa-token-%s-0123456789' $$ >"$ds/sa/token"
    printf jprof >"$ds/sa/namespace"
    python3 "$here/fake-k8s-api.py" --port-file "$ds/api.port" --token "$(cat "$ds/sa/token")" \
        --tls-cert "$ds/sa/ca.crt" --tls-key "$ds/key.pem" >"$ds/api.log" 2>&1 &
    pids+=("$!")
    printf 'ingest-tok-%s-0123456789 ingest *\nread-tok-%s-0123456789 read *\n' $$ $$ >"$ds/tokens"
    printf 'ingest-tok-%s-0123456789' $$ >"$ds/secret/token"
    printf 'read-tok-%s-0123456789' $$ >"$ds/read.tok"
    "$builddir/jprof-server" --listen 127.0.0.1:0 --port-file "$ds/server.port" --data-dir "$ds/data" \
        --tokens "$ds/tokens" >"$ds/server.log" 2>&1 &
    pids+=("$!")
    wait_port "$ds/api.port" && wait_port "$ds/server.port" || {
        fail "the FAKE API and jprof-server start" "$(tail -n 2 "$ds/api.log" "$ds/server.log")"
        return
    }
    api=https://127.0.0.1:$(cat "$ds/api.port") server=http://127.0.0.1:$(cat "$ds/server.port")
    # pods under kubelet's cgroup layout (the cgroupfs driver's
    # kubepods/QOS/pod<UID>; podman names the container's own cgroup
    # libpod-<ID> where containerd writes the bare ID). The systemd
    # driver's kubepods-*.slice names cannot be had here: podman refuses a
    # slice parent with the cgroupfs manager, and no systemd runs.
    uid_on=$(python3 -c 'import uuid; print(uuid.uuid4())')
    uid_off=$(python3 -c 'import uuid; print(uuid.uuid4())')
    pod_start ds-on --user 65532:65532 --cgroup-parent "/kubepods/burstable/pod$uid_on" -- \
        "$pod_image" $(jvm -Dcontention.hot=40 live.Contention 3600) || return
    pod_start ds-off --user 0 --cgroup-parent "/kubepods/besteffort/pod$uid_off" -- \
        "$pod_image" $(jvm live.Deadlocks 3600) || return
    ds_pods="ds-on ds-off"
}

# ds_agent: the pods are ready; they are registered and the agent starts
ds_agent() {
    [ -n "$ds_pods" ] || return 0
    local cg
    cg=$(grep -m1 memory "/proc/$(pod_hostpid ds-on)/cgroup")
    [[ $cg == *"/kubepods/burstable/pod$uid_on/"* ]] && pass "ds-on's JVM runs under kubelet's cgroup layout: $cg" ||
        fail "ds-on's cgroup: $cg"
    python3 - "$api" "$ds/sa/ca.crt" "$(cat "$ds/sa/token")" "$uid_on" "$uid_off" \
        "$(podman inspect -f '{{.Id}}' ds-on)" "$(podman inspect -f '{{.Id}}' ds-off)" <<'PY' || fail "registering the pods with the FAKE API"
import json, ssl, sys, urllib.request
api, ca, tok, uid_on, uid_off, id_on, id_off = sys.argv[1:8]
ctx = ssl.create_default_context(cafile=ca)
for name, uid, cid, ann in (("ds-on", uid_on, id_on, {"jprof.io/profile": "continuous"}),
                            ("ds-off", uid_off, id_off, {})):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "shop", "uid": uid, "annotations": ann,
                        "labels": {"app.kubernetes.io/name": "dsapp"}},
           "spec": {"nodeName": "podman-node", "containers": [{"name": "app"}]},
           "status": {"phase": "Running", "containerStatuses": [
               {"name": "app", "containerID": "containerd://" + cid, "ready": True}]}}
    req = urllib.request.Request(api + "/fake/pods", data=json.dumps(pod).encode(), method="POST")
    urllib.request.urlopen(req, context=ctx, timeout=10).read()
PY
    mport=$(free_port)
    python3 "$here/daemonset.py" "$ds/manifest.yaml" jprof-agent "$jprof_image" --ctr ds-agent \
        --node podman-node --api-port "$(cat "$ds/api.port")" --sa-dir "$ds/sa" \
        --secret jprof-agent-token="$ds/secret" --port 8480="$(cat "$ds/server.port")" \
        --set=--metrics-listen=127.0.0.1:"$mport" --set=--window=5s --set=--scan-interval=1s \
        >"$ds/agent.cmd" 2>"$ds/agent.err" || {
        fail "the agent's container from the rendered manifest" "$(cat "$ds/agent.err")"
        ds_pods=
        return
    }
    pass "the agent runs from jprof's image with the manifest's privileges: $(sed 's/.*podman run -d //; s/ --entrypoint.*//' "$ds/agent.cmd" | cut -c1-400)"
}

# ds_check: what the agent found, profiled and uploaded while the matrix ran
ds_check() {
    [ -n "$ds_pods" ] || return 0
    echo "--- the agent in a container with exactly its DaemonSet's privileges: what it did"
    # the annotated pod's JVM profiled, found by its cgroup; the other not
    local i st=
    for i in $(seq 90); do
        st=$(curl -s -m 5 "http://127.0.0.1:$mport/status")
        grep -q '"ds-on"' <<<"$st" && [ -n "$(curl -s -m 5 -H "Authorization: Bearer $(cat "$ds/read.tok")" \
            "$server/api/v1/flamegraph?namespace=shop&service=dsapp&from=-10m" | grep -o 'Hot.spin' | head -n 1)" ] && break
        sleep 2
    done
    python3 - "$st" <<'PY' && pass "agent /status: ds-on profiled (continuous), ds-off left alone" ||
import json, sys
st = json.loads(sys.argv[1])
targets = {t.get("pod"): t for t in st.get("targets", [])}
on, off = targets.get("ds-on"), targets.get("ds-off")
assert on and on.get("mode") == "continuous", on
assert off is None or off.get("mode") in ("off", "disabled"), off
PY
        fail "agent /status" "$(head -c 600 <<<"$st")" "$(podman logs ds-agent 2>&1 | tail -n 5)"
    export JPROF_SERVER=$server JPROF_TOKEN_FILE=$ds/read.tok
    "$top" -b -n shop -s dsapp --format json -d 0.2 >"$ds/top.json" 2>"$ds/top.err"
    python3 - "$ds/top.json" <<'PY' && pass "jprof-top -b -n shop -s dsapp (jprof-server): the pod, its busiest thread, process CPU (time and %) and heap" ||
import json, sys
d = json.load(open(sys.argv[1]))
jvms = d["jvms"]
assert [j["where"] for j in jvms] == ["shop/dsapp pod ds-on"], [j["where"] for j in jvms]
j = jvms[0]
assert j["threads"][0]["name"] == "hot-spinner", j["threads"][0]["name"]
assert j["process"]["heap_used"] and j["process"]["cpu_ns"], j["process"]
assert j["process"]["cpu_pct"] is not None, j["process"]
PY
        fail "jprof-top -n -s from jprof-server" "$(head -c 400 "$ds/top.json")" "$(cat "$ds/top.err")"
    unset JPROF_SERVER JPROF_TOKEN_FILE
    [ "$(curl -s -o /dev/null -w '%{http_code}' -m 5 "$server/")" = 200 ] &&
        curl -s -m 5 -H "Authorization: Bearer $(cat "$ds/read.tok")" "$server/api/v1/targets?namespace=shop" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); p={t["target"]["pod"]: t for t in d["targets"]}; assert p["ds-on"]["windows"] > 0, p["ds-on"]; off=p.get("ds-off"); assert off is None or (off["windows"] == 0 and off["state"] == "skipped"), off' &&
        pass "the web page is served, its API has ds-on profiled under shop/dsapp, ds-off skipped (not enabled)" ||
        fail "web: targets of shop" "$(curl -s -m 5 -H "Authorization: Bearer $(cat "$ds/read.tok")" "$server/api/v1/targets?namespace=shop" | head -c 400)"
    podman stop -t 10 ds-agent >/dev/null 2>&1
    podman logs ds-agent >"$ds/agent.log" 2>&1
    [ -z "$(pod_recordings ds-on)" ] && pass "the agent stopped: its recording in ds-on is stopped too" ||
        fail "recordings left in ds-on: $(pod_recordings ds-on)"
    podman rm -f -t 0 ds-agent ds-on ds-off >/dev/null 2>&1
}

t_pods=$SECONDS
if [ -n "${JPROF_PODS_FULL:-}" ]; then
    echo "--- the pods (JPROF_PODS_FULL=1: each case in a pod of its own; started together)"
    full_matrix
else
    echo "--- the pods (every distinct route once; JPROF_PODS_FULL=1 runs each case in a pod of its own)"
    short_matrix
fi
gone_wait
t_matrix=$SECONDS
ds_check

echo
printf '%s\n' "matrix: case / outcome / time to the first answer (or the failure)" "${matrix[@]}"
echo "times: images $t_images s, pods ready $pods_ready_s s, matrix $((t_matrix - t_pods)) s, agent's checks $((SECONDS - t_matrix)) s"
summary "pods"
