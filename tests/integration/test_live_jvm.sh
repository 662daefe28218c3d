#!/bin/bash
# test_live_jvm.sh - src/jvm against real JDK 17 and JDK 25 JVMs, through the
# developer tool jprof-probe (exit code = 10 + jp_err on failure).
#
# Per JDK: tests/java/Deadlocks.java -> both deadlock cycles with the right
# thread names and lock classes, from the helper jar and from Thread.print;
# tests/java/Contention.java -> hottest threads first, contended monitor and
# ReentrantLock with owner and waiters; a JFR window dumped and stopped, also
# when the tool is killed with SIGTERM; error cases (no such pid, not a JVM
# left alive, attach disabled, agent loading refused on JDK 25, not
# permitted, attach timeout, JVM exited during attach); and afterwards no
# jprof file in the target's /tmp and no jprof recording in JFR.check.
# The engine interface (jvm/engine.h) as a collector: a JFR window, kill -9
# mid-window and its recovery; the same with async-profiler when
# JPROF_ASPROF_LIB names a libasyncProfiler.so (else a loud SKIPPED line).
#
# Environment: JPROF_PROBE (default ./jprof-probe), JPROF_HELPER_JAR
# (default ./jprof-helper.jar), JDK17_HOME, JDK25_HOME; CI=true turns a
# missing JDK into a failure. Exit: 0 pass, 1 fail, 77 skipped (not in CI).
set -u

. "$(dirname "$0")/lib.sh"
probe=${JPROF_PROBE:-$builddir/jprof-probe}
export JPROF_HELPER_JAR=${JPROF_HELPER_JAR:-$builddir/jprof-helper.jar}
work=$builddir/tests/integration/live-jvm.d
classes=$work/classes

[ -x "$probe" ] || skip_or_fail "$probe not built"
[ -r "$JPROF_HELPER_JAR" ] || skip_or_fail "helper jar $JPROF_HELPER_JAR not built (javac missing?)"
command -v python3 >/dev/null || skip_or_fail "python3 not found"
compile_live_workloads
touch "$work/started"
chmod -R a+rX "$work"

# check_json FILE PYTHON-ASSERTIONS: runs the assertions with d = the JSON
check_json() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
EOF
}

leftovers() { # files jprof might have left in the target's /tmp or cwd
    local pid=$1 f owner
    # /tmp is shared with every test running in parallel: count only files
    # made since this test started whose jprof process is gone (a live
    # jprof's file is work in progress, not a leftover).
    for f in $(cd "/proc/$pid/root/tmp" 2>/dev/null &&
        find . -maxdepth 1 -newer "$work/started" \( -name 'jprof-*' -o -name '.attach_pid*' \) -printf '%f\n' |
        grep -E '^(jprof-[0-9]+-[0-9]+-[0-9a-f]+|jprof-helper-.*\.jar|\.attach_pid)'); do
        owner=$(sed -nE 's/^jprof-([0-9]+)-[0-9]+-.*/\1/p' <<<"$f")
        if [ -n "$owner" ] && kill -0 "$owner" 2>/dev/null; then
            continue
        fi
        # the helper jar's name is fixed (repeated loads reuse the loaded
        # class; jprof programs take turns on a lock beside it) and names no
        # owner: it is another test's while any jprof program runs
        if [[ $f == jprof-helper-* ]] &&
            pgrep -x 'jprof-top|jprof-probe|jprof-agent|kubectl-jprof|jprof-server' >/dev/null; then
            continue
        fi
        echo "$f"
    done
    ls -a "/proc/$pid/cwd" "$work/cwd" 2>/dev/null | grep -E '^\.attach_pid' || true
}

deadlock_checks='
names = sorted(sorted(t["name"] for t in c["threads"]) for c in d["deadlocks"])
assert names == [["mon-deadlock-1", "mon-deadlock-2"], ["rl-deadlock-1", "rl-deadlock-2"]], names
for c in d["deadlocks"]:
    mon = c["threads"][0]["name"].startswith("mon")
    cls = "live.Deadlocks$Account" if mon else "java.util.concurrent.locks.ReentrantLock$NonfairSync"
    for i, t in enumerate(c["threads"]):
        nxt = c["threads"][(i + 1) % len(c["threads"])]
        assert t["waits_for"]["class"] == cls and t["holds"]["class"] == cls, t
        assert t["waits_for"]["id"] == nxt["holds"]["id"], (t, nxt)
        assert "Deadlocks" in (t["waits_for"]["frame"] or ""), t
    assert c["jvm_confirmed"], c
assert not any(t["name"] == "bystander" for c in d["deadlocks"] for t in c["threads"])
'

contention_checks='
ranked = [t["name"] for t in d["threads"] if t["cpu_pct"] is not None]
assert ranked[0] == "hot-spinner", ranked[:5]
assert ranked.index("warm-spinner") < min(ranked.index(n) for n in ranked if n.startswith(("ledger-", "vault-"))), ranked
hot = d["threads"][0]
assert hot["cpu_confidence"] == "exact" and hot["cpu_pct"] > 5, hot
# the snapshot may catch the spinner one call below its loop, or (a
# safepoint where the call returns, seen once with JDK 25) in the loop itself
assert any(f.startswith("live.Contention$Hot.spin") for f in hot["stack"][:3]) or \
    hot["stack"][0].startswith("live.Contention.lambda$main$0("), hot["stack"][:3]
locks = {l["lock"]["class"]: l for l in d["locks"]}
led = locks["live.Contention$Ledger"]
assert led["owner"]["name"] == "ledger-owner" and led["owner_blocks"] == 3, led
assert sorted(w["name"] for w in led["waiters"]) == ["ledger-waiter-1", "ledger-waiter-2", "ledger-waiter-3"], led
assert all(w["state"] == "BLOCKED" for w in led["waiters"]), led
vault = locks["java.util.concurrent.locks.ReentrantLock$NonfairSync"]
assert vault["owner"]["name"] == "vault-owner", vault
assert sorted(w["name"] for w in vault["waiters"]) == ["vault-waiter-1", "vault-waiter-2"], vault
assert d["locks"][0]["lock"]["class"] == "live.Contention$Ledger", d["locks"][0]
assert d["deadlocks"] == [], d["deadlocks"]
byname = {t["name"]: t for t in d["threads"]}
assert byname["parker"]["state"] == "WAITING" and byname["sleeper"]["state"] == "TIMED_WAITING"
assert byname["waiter"]["waiting"]["kind"] == "wait" and byname["waiter"]["waiting"]["owner"] is None
'

run_jdk() {
    local v=$1 home=$2
    echo "--- JDK $v ($home)"
    start_jvm "$home" Deadlocks || { fail "JDK $v: Deadlocks workload"; return; }
    local dpid=$jvm_pid
    for src in helper thread-print; do
        local out="$work/dl-$v-$src.json"
        if "$probe" json "$dpid" "$src" 100 >"$out" 2>"$out.err" &&
            check_json "$out" "assert d['source'] == '$src', d['source']
$deadlock_checks" >"$out.check" 2>&1; then
            pass "JDK $v $src: both deadlock cycles, thread names, locks and frames"
        else
            fail "JDK $v $src: deadlocks"
            cat "$out.err" "$out.check" | sed 's/^/      /'
        fi
    done

    start_jvm "$home" Contention || { fail "JDK $v: Contention workload"; return; }
    local cpid=$jvm_pid
    for src in helper thread-print; do
        local out="$work/ct-$v-$src.json"
        if "$probe" json "$cpid" "$src" 1000 >"$out" 2>"$out.err" &&
            check_json "$out" "$contention_checks" >"$out.check" 2>&1; then
            pass "JDK $v $src: hottest threads first, contended monitor and ReentrantLock"
        else
            fail "JDK $v $src: contention"
            cat "$out.err" "$out.check" | sed 's/^/      /'
        fi
    done

    # a live JFR window: dumped, readable by the JDK's jfr tool, stopped
    local jfr="$work/win-$v.jfr"
    if "$probe" jfr "$cpid" 2 "$jfr" >"$work/jfr-$v.out" 2>&1 &&
        "$home/bin/jfr" print --events jdk.ExecutionSample "$jfr" | grep -q 'live.Contention$Hot.spin'; then
        pass "JDK $v: JFR window dumped with the hot method in it"
    else
        fail "JDK $v: JFR window"
        sed 's/^/      /' "$work/jfr-$v.out"
    fi
    # SIGTERM while recording: the tool must stop its recording on the way out
    "$probe" jfr "$cpid" 60 >"$work/jfr-term-$v.out" 2>&1 &
    local tool=$!
    for _ in $(seq 50); do
        grep -q started "$work/jfr-term-$v.out" && break
        sleep 0.1
    done
    kill -TERM "$tool"
    wait "$tool"
    local check
    check=$("$probe" jfr-check "$cpid" 2>&1)
    if grep -q cleaned "$work/jfr-term-$v.out" && ! grep -q 'name=jprof-' <<<"$check"; then
        pass "JDK $v: SIGTERM during a recording leaves no recording running"
    else
        fail "JDK $v: recording left after SIGTERM: $check"
    fi

    for p in "$dpid" "$cpid"; do
        local left
        left=$(leftovers "$p")
        check=$("$probe" jfr-check "$p" 2>&1)
        if [ -z "$left" ] && ! grep -q 'name=jprof-' <<<"$check"; then
            pass "JDK $v pid $p: no files left in the target, no recording running"
        else
            fail "JDK $v pid $p: left behind: $left / $check"
        fi
    done
    kill "$dpid" "$cpid"
}

# expect_exit NAME WANT-CODE WANT-TEXT CMD...
expect_exit() {
    local name=$1 want=$2 text=$3
    shift 3
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" = "$want" ] && grep -q -- "$text" <<<"$out"; then
        pass "$name"
    else
        fail "$name: exit $rc (want $want): $out"
    fi
}

# start_paused HOME [JVM-OPTION...]: a JVM held by HotSpot's PauseAtStartup
# until the file $pause goes, once it has mapped libjvm.so; sets sp
start_paused() {
    local home=$1
    shift
    rm -f "$pause"
    (cd "$work/cwd" && exec "$home/bin/java" -XX:+UnlockDiagnosticVMOptions -XX:+PauseAtStartup \
        "-XX:PauseAtStartupFile=$pause" "$@" -Xmx64m -cp "$classes" live.Deadlocks 600 >/dev/null 2>&1) &
    sp=$!
    pids+=("$sp")
    for _ in $(seq 100); do
        [ -e "$pause" ] && grep -q /libjvm.so "/proc/$sp/maps" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# A JVM that has mapped libjvm.so but not yet installed its SIGQUIT handler
# (its first tens of ms; PauseAtStartup holds it there): SIGQUIT would end
# it, so jprof must wait for the handler, or for the socket of a JVM run
# with -Xrs (no handler ever; the socket opens at start-up).
starting_case() {
    local home=$1 pause=$work/vm.paused.$$ sp
    echo "--- a JVM still starting"
    if ! start_paused "$home"; then
        fail "the paused JVM did not start"
        return
    fi
    expect_exit "a starting JVM is not signalled: attach times out" 20 "no SIGQUIT handler" \
        env JPROF_ATTACH_TIMEOUT=1s "$probe" snapshot "$sp" thread-print
    if kill -0 "$sp" 2>/dev/null; then pass "the starting JVM survives the attach"; else fail "the starting JVM was killed"; fi
    [ -z "$(leftovers "$sp")" ] && pass "no trigger file left for the starting JVM"
    (sleep 1 && rm -f "$pause") &
    # (its threads may not have met their deadlocks yet: only the attach counts)
    expect_exit "attach waits for the handler, then works" 0 "source=thread-print threads=" \
        env JPROF_ATTACH_TIMEOUT=30s "$probe" snapshot "$sp" thread-print
    kill "$sp" 2>/dev/null

    if ! start_paused "$home" -Xrs; then
        fail "the paused -Xrs JVM did not start"
        return
    fi
    (sleep 1 && rm -f "$pause") &
    expect_exit "a starting -Xrs JVM is reached through its socket, never signalled" 0 \
        "source=thread-print threads=" env JPROF_ATTACH_TIMEOUT=30s "$probe" snapshot "$sp" thread-print
    if kill -0 "$sp" 2>/dev/null; then pass "the -Xrs JVM survives the attach"; else fail "the -Xrs JVM was killed"; fi
    kill "$sp" 2>/dev/null
}

error_cases() {
    local home=$1
    echo "--- error cases"
    expect_exit "no such pid" 18 "no process" "$probe" snapshot 999999999
    sleep 100 &
    local sp=$!
    pids+=("$sp")
    expect_exit "not a JVM" 23 "not a HotSpot JVM" "$probe" snapshot "$sp"
    if kill -0 "$sp" 2>/dev/null; then pass "sleep survives untouched"; else fail "sleep was killed"; fi

    # an Eclipse OpenJ9 JVM maps a libjvm.so too, and answers SIGQUIT with a
    # javacore: a process that maps both names (a lookalike: no OpenJ9 here;
    # SIGQUIT would end it) must be refused untouched
    mkdir -p "$work/j9/lib/default"
    head -c 8192 /dev/zero >"$work/j9/lib/default/libjvm.so"
    head -c 8192 /dev/zero >"$work/j9/lib/default/libj9vm29.so"
    python3 -c '
import mmap, sys, time
files = [open(f, "rb") for f in sys.argv[1:]]
maps = [mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) for f in files]
print("ready", flush=True)
time.sleep(600)' "$work/j9/lib/default/libjvm.so" "$work/j9/lib/default/libj9vm29.so" >"$work/j9.out" &
    local jp=$!
    pids+=("$jp")
    for _ in $(seq 50); do grep -q ready "$work/j9.out" && break; sleep 0.1; done
    expect_exit "an OpenJ9 JVM is refused" 23 "Eclipse OpenJ9" "$probe" snapshot "$jp"
    if kill -0 "$jp" 2>/dev/null; then pass "the OpenJ9 lookalike survives untouched"; else fail "the OpenJ9 lookalike was signalled"; fi
    kill "$jp"

    start_jvm "$home" Deadlocks -XX:+DisableAttachMechanism || fail "JVM without attach"
    expect_exit "attach mechanism disabled" 24 "DisableAttachMechanism" "$probe" snapshot "$jvm_pid"
    [ -z "$(leftovers "$jvm_pid")" ] && kill -0 "$jvm_pid" && pass "attach-disabled JVM unharmed"

    start_jvm "$home" Deadlocks || fail "JVM for timeout"
    local tp=$jvm_pid
    kill -STOP "$tp"
    expect_exit "attach timed out" 20 "no attach listener" env JPROF_ATTACH_TIMEOUT=1s "$probe" snapshot "$tp" thread-print
    [ -z "$(leftovers "$tp")" ] && pass "timed-out attach leaves no trigger file"
    kill -CONT "$tp"
    sleep 0.5
    expect_exit "attach works after the JVM resumes" 0 "deadlock 2" "$probe" snapshot "$tp" thread-print

    starting_case "$home"

    start_jvm "$home" Deadlocks || fail "JVM for exit"
    local xp=$jvm_pid
    kill -STOP "$xp"
    (sleep 0.7 && kill -KILL "$xp") &
    expect_exit "JVM exited during attach" 25 "exited" env JPROF_ATTACH_TIMEOUT=5s "$probe" snapshot "$xp" thread-print
    wait "$xp" 2>/dev/null

    if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
        start_jvm "$home" Deadlocks || fail "JVM for permission"
        # a copy nobody may run wherever the checkout lies
        copy_for_any_user "$probe" || fail "a copy of $probe for nobody"
        expect_exit "not permitted" 19 "run jprof as that user or as root" \
            runuser -u nobody -- "$any_user_copy" snapshot "$jvm_pid"
        kill "$jvm_pid"
    else
        echo "note: not root; the 'not permitted' case needs another user and is not run"
    fi
}

# A JVM in its own pid and mount namespaces with a private /tmp, as in a
# container: the socket is found through /proc/PID/root and the NSpid.
container_case() {
    local home=$1
    echo "--- container-like namespaces"
    if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
        echo "note: needs root and unshare; the namespace case is not run"
        return
    fi
    local mark="-Djprof.test.ns=$$.$RANDOM" out="$work/ns.out"
    # The classes travel in through a pipe: the checkout may itself live under
    # /tmp, which the private tmpfs hides.
    tar -C "$classes" -cf - . | unshare -p -f -m --mount-proc sh -c "mount -t tmpfs tmpfs /tmp &&
        mkdir /tmp/classes && tar -C /tmp/classes -xf - && cd / &&
        exec '$home/bin/java' -Xmx64m $mark -cp /tmp/classes live.Deadlocks 600 </dev/null" >"$out" 2>&1 &
    pids+=("$!")
    local np=""
    for _ in $(seq 100); do
        grep -q ready "$out" 2>/dev/null && np=$(pgrep -f -- "$mark" | while read -r p; do
            [ "$(readlink "/proc/$p/exe")" != "$(readlink -f "$home/bin/java")" ] || echo "$p"
        done | head -1) && break
        sleep 0.1
    done
    if [ -z "$np" ]; then
        fail "namespaced JVM did not start: $(cat "$out")"
        return
    fi
    pids+=("$np")
    local nspid
    nspid=$(awk '/^NStgid:/ {print $NF}' "/proc/$np/status")
    for src in helper thread-print; do
        expect_exit "namespaced JVM (host pid $np, ns pid $nspid) via $src" 0 "deadlock 2 (jvm-confirmed)" \
            "$probe" snapshot "$np" "$src"
    done
    [ -z "$(leftovers "$np")" ] && pass "namespaced JVM: nothing left in its private /tmp" ||
        fail "namespaced JVM: left $(leftovers "$np")"
    kill "$np"
}

agent_refused() {
    local home=$1
    echo "--- agent loading refused (JDK 21+)"
    start_jvm "$home" Deadlocks -XX:-EnableDynamicAgentLoading || fail "JVM without agents"
    expect_exit "agent loading refused (flag seen)" 26 "EnableDynamicAgentLoading" \
        "$probe" snapshot "$jvm_pid" helper
    expect_exit "auto falls back to thread-print" 0 "source=thread-print" \
        "$probe" snapshot "$jvm_pid" auto
    # the same flag hidden in an @argfile: the JVM's own refusal text is recognised
    echo "-XX:-EnableDynamicAgentLoading" >"$work/argfile"
    start_jvm "$home" Deadlocks "@$work/argfile" || fail "JVM without agents (argfile)"
    expect_exit "agent loading refused (JVM reply)" 26 "Dynamic agent loading is not enabled" \
        "$probe" snapshot "$jvm_pid" helper
    [ -z "$(leftovers "$jvm_pid")" ] && pass "refused agent leaves no jar behind"
}

# engine_window V ENGINE KINDS: a Contention JVM profiled through the engine
# interface (jvm/engine.h, collector role, as jprof-agent and jprof-probe
# use it): one window read, then kill -9 mid-window and a second run that
# takes the orphaned session over; nothing left afterwards.
engine_window() {
    local v=$1 home=$2 engine=$3 kinds=$4 name=$5
    start_jvm "$home" Contention || { fail "JDK $v $name: Contention workload"; return; }
    local cpid=$jvm_pid out="$work/engine-$v-$name.out"
    # the workload's monitors stay held: no lock is entered within a window
    if "$probe" engine "$cpid" "$engine" 2 "$kinds" >"$out" 2>&1 &&
        grep -q "^started $name\$" "$out" && grep -qE '^kind=cpu events=[1-9]' "$out" &&
        { [ "$name" = jfr ] || grep -qE '^kind=wall events=[1-9]' "$out"; }; then
        pass "JDK $v $name engine: a window with cpu events$([ "$name" = jfr ] || echo " and wall")"
    else
        fail "JDK $v $name engine: window" "$(head -c 400 "$out")"
    fi
    "$probe" engine "$cpid" "$engine" 60 "$kinds" >"$out.kill" 2>&1 &
    local p=$! n=0
    # attaching takes seconds on a loaded machine: a generous bound
    while ! grep -q '^started' "$out.kill" 2>/dev/null && kill -0 "$p" 2>/dev/null && [ $n -lt 600 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    grep -q '^started' "$out.kill" ||
        fail "JDK $v $name engine: the window to kill never started" "$(head -c 400 "$out.kill")"
    kill -KILL "$p"
    wait "$p" 2>/dev/null
    [ -e "/proc/$cpid/root/tmp/jprof/probe-dev-session-$cpid" ] &&
        pass "JDK $v $name engine: kill -9 mid-window leaves the session marker" ||
        fail "JDK $v $name engine: no marker after kill -9" "$(ls "/proc/$cpid/root/tmp/jprof" 2>&1)"
    if "$probe" engine "$cpid" "$engine" 1 "$kinds" >"$out.again" 2>&1 &&
        grep -q '^recovered an earlier session and its data' "$out.again"; then
        pass "JDK $v $name engine: the next run takes the orphaned session over"
    else
        fail "JDK $v $name engine: recovery" "$(head -c 400 "$out.again")"
    fi
    local check
    check=$("$probe" jfr-check "$cpid" 2>&1)
    # /tmp/jprof is shared with whatever else runs here: only ours count
    local ours
    ours=$(ls "/proc/$cpid/root/tmp/jprof" 2>/dev/null | grep -E -- "-$cpid(\.|-|\$)" || true)
    [ -z "$(leftovers "$cpid")$ours" ] && ! grep -q 'name=jprof-probe-dev' <<<"$check" &&
        pass "JDK $v $name engine: no recording and no file of this JVM left" ||
        fail "JDK $v $name engine: left $(leftovers "$cpid") $ours $check"
    kill "$cpid"
}

# helper_protocol V HOME: the helper's file protocol, driven through the
# JDK's attach API: out= created empty by the asker is replaced by the
# snapshot; with claimed=1, out= gone (the asker stopped waiting) means no
# file at all, not even the helper's temporary one
helper_protocol() {
    local v=$1 home=$2
    echo "--- JDK $v: the helper's out= file"
    start_jvm "$home" Deadlocks || { fail "JDK $v: Deadlocks workload"; return; }
    local pid=$jvm_pid name="jprof-helper-test-$$-$v"
    local inner="/tmp/$name.json" host="/proc/$jvm_pid/root/tmp/$name.json"
    : >"$host"
    if "$home/bin/java" "$srcdir/tests/java/HelperLoad.java" "$pid" "$JPROF_HELPER_JAR" "out=$inner" \
        >"$work/hl-$v.out" 2>&1 && head -c 12 "$host" | grep -q '^{"format":1' && [ ! -e "$host.part" ]; then
        pass "JDK $v: the snapshot replaces the empty out= file"
    else
        fail "JDK $v: helper with out= present" "$(cat "$work/hl-$v.out")" "$(head -c 200 "$host")"
    fi
    rm -f "$host"
    if "$home/bin/java" "$srcdir/tests/java/HelperLoad.java" "$pid" "$JPROF_HELPER_JAR" "out=$inner,claimed=1" \
        >"$work/hl2-$v.out" 2>&1 && [ ! -e "$host" ] && [ ! -e "$host.part" ]; then
        pass "JDK $v: claimed=1 and out= gone before the snapshot is ready: nothing is written"
    else
        fail "JDK $v: helper with out= gone" "$(cat "$work/hl2-$v.out")" "$(ls -l "$host"* 2>&1)"
    fi
    rm -f "$host" "$host.part"
    # an asker that does not claim (an older jprof): out= is written as before
    if "$home/bin/java" "$srcdir/tests/java/HelperLoad.java" "$pid" "$JPROF_HELPER_JAR" "out=$inner" \
        >"$work/hl3-$v.out" 2>&1 && head -c 12 "$host" | grep -q '^{"format":1' && [ ! -e "$host.part" ]; then
        pass "JDK $v: without claimed=1 the snapshot is written as before"
    else
        fail "JDK $v: helper without claimed=1" "$(cat "$work/hl3-$v.out")" "$(ls -l "$host"* 2>&1)"
    fi
    rm -f "$host" "$host.part"
    kill "$pid"
}

engine_case() {
    local v=$1 home=$2
    echo "--- JDK $v: the engine interface"
    engine_window "$v" "$home" jfr cpu,alloc,lock jfr
    if [ -n "${JPROF_ASPROF_LIB:-}" ]; then
        engine_window "$v" "$home" "$JPROF_ASPROF_LIB" cpu,wall,alloc,lock async-profiler
    else
        echo "**********************************************************************"
        echo "SKIPPED: JPROF_ASPROF_LIB not set: the async-profiler engine was not tested here"
        echo "**********************************************************************"
    fi
}

run_jdk 17 "$jdk17"
helper_protocol 17 "$jdk17"
engine_case 17 "$jdk17"
error_cases "$jdk17"
container_case "$jdk17"
if have_jdk25; then
    run_jdk 25 "$jdk25"
    helper_protocol 25 "$jdk25"
    agent_refused "$jdk25"
fi

summary "live JVM"
