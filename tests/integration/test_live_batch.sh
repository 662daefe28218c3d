#!/bin/bash
# test_live_batch.sh - `jprof-top -b` on real JDK 17 and JDK 25 JVMs.
#
# Per JDK: the list of local JVMs; JSON of tests/java/Deadlocks.java with
# both deadlock cycles (thread names, the lock each waits for and holds) from
# both snapshot sources; JSON of tests/java/Contention.java with the busiest
# thread first and its CPU% measured over the interval, the contended lock's
# owner and "blocks", target.jvm filled in; --count N gives N JSON lines;
# the text report; nothing left in the target. Then every error case with
# its exit status and a message saying what to do: no such process (4), not
# a JVM (5, left alive), not permitted (6), attach timed out (7), the JVM
# exited during the attach (8), attach disabled (9), agent loading refused
# (10; auto falls back and says so), someone else's async-profiler (11).
#
# Environment: JPROF_TOP (default ./jprof-top), JPROF_HELPER_JAR (default
# ./jprof-helper.jar), JDK17_HOME, JDK25_HOME; CI=true turns a missing JDK
# or tool into a failure. Exit: 0 pass, 1 fail, 77 skipped (not in CI).
set -u

. "$(dirname "$0")/lib.sh"
top_bin=${JPROF_TOP:-$builddir/jprof-top}
export JPROF_HELPER_JAR=${JPROF_HELPER_JAR:-$builddir/jprof-helper.jar}
work=$builddir/tests/integration/live-batch.d
classes=$work/classes

[ -x "$top_bin" ] || skip_or_fail "$top_bin not built"
[ -r "$JPROF_HELPER_JAR" ] || skip_or_fail "helper jar $JPROF_HELPER_JAR not built (javac missing?)"
command -v python3 >/dev/null || skip_or_fail "python3 not found"
compile_live_workloads
rm -f "$work/toppids"
chmod -R a+rX "$work"

# check_json FILE PYTHON: runs the assertions with d = the first JSON line,
# lines = all of them
check_json() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
d = lines[0]
exec(sys.argv[2])
EOF
}

# top ARGS...: jprof-top, its pid noted: other jprof tests (and a jprof-agent
# scanning this machine) may leave their own files in the shared /tmp
top() {
    "$top_bin" "$@" &
    local p=$!
    echo "$p" >>"$work/toppids"
    wait "$p"
}
ours() { tr '\n' '|' <"$work/toppids" 2>/dev/null | sed 's/|$//'; }

leftovers() {
    local pid=$1 ids
    ids=$(ours)
    ls -a "/proc/$pid/root/tmp" "/proc/$pid/cwd" 2>/dev/null |
        grep -E "^(jprof-(${ids:-none})-[0-9]+-[0-9a-f]+|jprof-asprof\.so|\.attach_pid${pid}\$)" || true
}

recordings() {
    local ids
    ids=$(ours)
    "$1/bin/jcmd" "$2" JFR.check 2>&1 | grep -E "name=jprof-(${ids:-none})-" || true
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
assert d["target"]["main_class"] == "live.Deadlocks", d["target"]
assert d["target"]["jvm"] and d["target"]["jvm"].startswith("JDK "), d["target"]
'

contention_checks='
assert d["source"] in ("helper", "thread-print"), d["source"]
for key in ("target", "source", "threads", "locks", "deadlocks"):
    assert key in d, key
t0 = d["threads"][0]
for key in ("id", "name", "state", "cpu_ns", "cpu_pct", "stack"):
    assert key in t0, key
assert t0["name"] == "hot-spinner", [t["name"] for t in d["threads"][:4]]
assert t0["cpu_pct"] is not None and t0["cpu_pct"] > 5 and t0["cpu_confidence"] == "exact", t0
assert 900 <= d["interval_ms"] <= 15000, d["interval_ms"]  # -d 1, plus a loaded machine
# in spin, or (a snapshot taken at the safepoint between two calls) its loop
assert t0["stack"][0].startswith(("live.Contention$Hot.spin", "live.Contention.lambda$main$0")), t0["stack"][:2]
led = [l for l in d["locks"] if l["lock"]["class"] == "live.Contention$Ledger"][0]
assert led["owner"]["name"] == "ledger-owner" and led["owner_blocks"] == 3, led
assert d["deadlocks"] == [], d["deadlocks"]
assert d["target"]["jvm"].startswith("JDK "), d["target"]
assert d["jprof"]["snapshot_ms"] > 0 and d["process"]["cpu_pct"] is not None, (d["jprof"], d["process"])
'

# expect_exit NAME WANT-CODE WANT-TEXT CMD...: exit status and a stderr line
expect_exit() {
    local name=$1 want=$2 text=$3
    shift 3
    local out rc
    out=$("$@" 2>&1 >/dev/null)
    rc=$?
    if [ "$rc" = "$want" ] && grep -q -- "$text" <<<"$out" && [ "$(wc -l <<<"$out")" -le 2 ]; then
        pass "$name (exit $rc: $(head -1 <<<"$out"))"
    else
        fail "$name: exit $rc (want $want): $out"
    fi
}

run_jdk() {
    local v=$1 home=$2
    echo "--- JDK $v ($home)"
    start_jvm "$home" Deadlocks || { fail "JDK $v: Deadlocks workload"; return; }
    local dpid=$jvm_pid
    start_jvm "$home" Contention || { fail "JDK $v: Contention workload"; return; }
    local cpid=$jvm_pid

    if top -b >"$work/list-$v.out" 2>&1 && grep -qE "^$dpid +[^ ]+ +[0-9a-z]+ +live.Deadlocks" "$work/list-$v.out" &&
        grep -qE "^$cpid .*live.Contention" "$work/list-$v.out"; then
        pass "JDK $v: -b without -p lists the JVMs with pid, user, uptime, main class"
    else
        fail "JDK $v: list"; sed 's/^/      /' "$work/list-$v.out"
    fi

    for src in helper thread-print; do
        local out="$work/dl-$v-$src.json"
        if top -b -p "$dpid" -f json -d 0.2 --snapshot "$src" >"$out" 2>"$out.err" &&
            check_json "$out" "assert d['source'] == '$src', d['source']
$deadlock_checks" >"$out.check" 2>&1; then
            pass "JDK $v $src: deadlock threads by name, with the locks they wait for and hold"
        else
            fail "JDK $v $src: deadlocks"
            cat "$out.err" "$out.check" | sed 's/^/      /'
        fi
    done

    local out="$work/ct-$v.json"
    if top -b -p "$cpid" --format json -d 1 >"$out" 2>"$out.err" &&
        check_json "$out" "$contention_checks" >"$out.check" 2>&1; then
        pass "JDK $v: busiest thread first with CPU% from the second snapshot, lock owner blocks 3"
    else
        fail "JDK $v: contention JSON"
        cat "$out.err" "$out.check" | sed 's/^/      /'
    fi

    out="$work/count-$v.json"
    if top -b -p "$cpid" -f json -d 0.3 --count 3 --snapshot thread-print >"$out" 2>"$out.err" &&
        check_json "$out" '
assert len(lines) == 3, len(lines)
for x in lines:
    assert x["source"] == "thread-print" and 250 <= x["interval_ms"] <= 15000, x["interval_ms"]
assert lines[0]["taken_at"] < lines[1]["taken_at"] < lines[2]["taken_at"]' >"$out.check" 2>&1; then
        pass "JDK $v: --count 3 prints three JSON lines, each over the interval"
    else
        fail "JDK $v: --count"
        cat "$out.err" "$out.check" | sed 's/^/      /'
    fi

    out="$work/text-$v.txt"
    top -b -p "$cpid" -d 0.5 >"$out" 2>"$out.err"
    local rc=$?
    if [ $rc = 0 ] && grep -q "^pid $cpid  live.Contention  JDK " "$out" && grep -q "BUSY THREADS" "$out" &&
        [ "$(grep -A3 'BUSY THREADS' "$out" | tail -1 | grep -c hot-spinner)" = 1 ] &&
        grep -q 'owner "ledger-owner" (TIMED_WAITING) blocks 3 threads' "$out" &&
        grep -q '^no deadlock' "$out"; then
        pass "JDK $v: text report (header, busy threads, locks, deadlocks)"
    else
        fail "JDK $v: text report (exit $rc)"; sed 's/^/      /' "$out" "$out.err" | head -20
    fi
    top -b -p "$dpid" -d 0.2 >"$out" 2>&1
    if grep -q '^DEADLOCK 1: 2 threads, confirmed by the JVM: "mon-deadlock-1" -> "mon-deadlock-2"' "$out" &&
        grep -q '^DEADLOCK 2: .*"rl-deadlock-1" -> "rl-deadlock-2"' "$out" &&
        grep -q 'waits for live.Deadlocks$Account@.*held by "mon-deadlock-2"' "$out"; then
        pass "JDK $v: text report draws both deadlock chains"
    else
        fail "JDK $v: text deadlocks"; sed 's/^/      /' "$out" | head -30
    fi

    for p in "$dpid" "$cpid"; do
        local left rec
        left=$(leftovers "$p")
        rec=$(recordings "$home" "$p")
        if [ -z "$left" ] && [ -z "$rec" ]; then
            pass "JDK $v pid $p: no files left in the target, no recording running"
        else
            fail "JDK $v pid $p: left behind: $left / $rec"
        fi
    done
    kill "$dpid" "$cpid"
}

error_cases() {
    local home=$1
    echo "--- error cases"
    expect_exit "no such process" 4 "no process" top -b -p 999999999
    sleep 100 &
    local sp=$!
    pids+=("$sp")
    expect_exit "not a JVM" 5 "not a HotSpot JVM" top -b -p "$sp"
    if kill -0 "$sp" 2>/dev/null; then pass "the sleep process survives untouched"; else fail "sleep was killed"; fi

    start_jvm "$home" Deadlocks -XX:+DisableAttachMechanism || fail "JVM without attach"
    expect_exit "attach mechanism disabled" 9 "DisableAttachMechanism" top -b -p "$jvm_pid"
    [ -z "$(leftovers "$jvm_pid")" ] && kill -0 "$jvm_pid" && pass "attach-disabled JVM unharmed"

    start_jvm "$home" Deadlocks || fail "JVM for timeout"
    local tp=$jvm_pid
    kill -STOP "$tp"
    expect_exit "attach timed out" 7 "no attach listener" env JPROF_ATTACH_TIMEOUT=1s "$top_bin" -b -p "$tp"
    [ -z "$(leftovers "$tp")" ] && pass "timed-out attach leaves no trigger file"
    kill -CONT "$tp"
    sleep 0.5
    expect_exit "attach works after the JVM resumes" 0 "" top -b -p "$tp" -d 0.2

    start_jvm "$home" Deadlocks || fail "JVM for exit"
    local xp=$jvm_pid
    kill -STOP "$xp"
    (sleep 0.7 && kill -KILL "$xp") &
    expect_exit "JVM exited during attach" 8 "exited" env JPROF_ATTACH_TIMEOUT=5s "$top_bin" -b -p "$xp"
    wait "$xp" 2>/dev/null

    if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
        start_jvm "$home" Deadlocks || fail "JVM for permission"
        # a copy nobody may run wherever the checkout lies
        copy_for_any_user "$top_bin" || fail "a copy of $top_bin for nobody"
        expect_exit "not permitted" 6 "run jprof as that user or as root" \
            runuser -u nobody -- "$any_user_copy" -b -p "$jvm_pid"
        kill "$jvm_pid"
    else
        echo "note: not root; the 'not permitted' case needs another user and is not run"
    fi

    # someone else's async-profiler: a stand-in library of that name, loaded at start
    if command -v cc >/dev/null; then
        mkdir -p "$work/other"
        printf '#include <jni.h>\n#include <jvmti.h>\nJNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *o, void *r) { return 0; }\n' >"$work/other/fake.c"
        if cc -shared -fPIC -I"$home/include" -I"$home/include/linux" -o "$work/other/libasyncProfiler.so" "$work/other/fake.c" 2>"$work/other/cc.err"; then
            start_jvm "$home" Contention "-agentpath:$work/other/libasyncProfiler.so" || fail "JVM with a foreign profiler"
            # only the async-profiler engine conflicts, and batch mode has none
            if top -b -p "$jvm_pid" 2>/dev/null | grep -q "live.Contention"; then
                pass "someone else's async-profiler: batch still samples threads"
            else
                fail "someone else's async-profiler: batch refused the JVM"
            fi
            expect_exit "--asprof in batch mode" 2 "batch mode prints thread snapshots" \
                top -b -p "$jvm_pid" --asprof "$work/other/libasyncProfiler.so"
            [ -z "$(leftovers "$jvm_pid")" ] && pass "conflict: nothing copied into the target"
            kill "$jvm_pid"
        else
            fail "building the stand-in profiler library: $(cat "$work/other/cc.err")"
        fi
    elif [ "${CI:-}" = true ]; then
        fail "no C compiler for the profiler conflict case"
    fi
    expect_exit "usage: --asprof in batch mode, even without a library" 2 \
        "batch mode prints thread snapshots" top -b -p "$$" --asprof "$work/none/libasyncProfiler.so"
}

agent_refused() {
    local home=$1
    echo "--- agent loading refused (JDK 21+)"
    start_jvm "$home" Deadlocks -XX:-EnableDynamicAgentLoading || fail "JVM without agents"
    local ap=$jvm_pid
    expect_exit "agent loading refused, --snapshot helper" 10 "EnableDynamicAgentLoading" \
        top -b -p "$ap" --snapshot helper -d 0.2
    local out="$work/refused.json"
    if top -b -p "$ap" -f json -d 0.2 >"$out" 2>"$out.err" &&
        grep -q "the helper could not load, used Thread.print" "$out.err" &&
        check_json "$out" "assert d['source'] == 'thread-print' and d['fallback'], (d['source'], d['fallback'])
$deadlock_checks" >"$out.check" 2>&1; then
        pass "auto falls back to thread-print, says so, and still finds both deadlocks"
    else
        fail "auto fallback"; cat "$out.err" "$out.check" | sed 's/^/      /'
    fi
    [ -z "$(leftovers "$ap")" ] && pass "refused agent leaves no jar behind"
    kill "$ap"
}

run_jdk 17 "$jdk17"
error_cases "$jdk17"
if have_jdk25; then
    run_jdk 25 "$jdk25"
    agent_refused "$jdk25"
fi

summary "live batch"
