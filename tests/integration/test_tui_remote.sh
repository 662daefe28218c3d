#!/bin/bash
# test_tui_remote.sh - jprof-top's remote view (-n NS -s SVC) end to end:
# the real jprof-server on its embedded store, jprof-agent in host mode
# (5 s windows, a config naming the demo JVM's pid only) and real JVMs:
# samples/DemoService.java (hot method, allocation hot spot, contended lock,
# deadlock) and an idle JVM named into the same service but not enabled
# (a second pod with a reason).
#
#   a. batch: JSON has the deadlock cycle, the hot threads, the locks and
#      the targets; --event cpu/lock/alloc put the known methods on top;
#      the pod filter; --format gc and "gc": the GC summaries the agent
#      uploaded (pauses > 0), in the words of the local GC screen
#   b. the interactive view in tmux: every screen (G: GC from the server,
#      following the range keys), range keys, pod filter, help, q
#   c. errors: server unreachable, token missing/refused/out of scope,
#      unknown service, no terminal (exit status + message)
#   d. scripts/demo without a terminal prints the batch view, exits 0 and
#      leaves no process or temp dir behind
#
# Run from the build dir. Exit 0 pass, 1 fail, 77 skip (never in CI).
set -u
build=$(pwd)
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
top=$build/jprof-top
server_bin=$build/jprof-server
agent_bin=$build/jprof-agent
pass_n=0
fail_n=0

pass() { echo "PASS: $1"; pass_n=$((pass_n + 1)); }
fail() {
    echo "FAIL: $1"
    [ -n "${2:-}" ] && printf '%s\n' "$2" | head -n 25 | sed 's/^/    /'
    fail_n=$((fail_n + 1))
}
skip() {
    if [ "${CI:-}" = true ]; then
        echo "FAIL: $1 (CI: nothing may be skipped)"
        exit 1
    fi
    echo "SKIP: $1"
    exit 77
}

for b in "$top" "$server_bin" "$agent_bin"; do
    [ -x "$b" ] || skip "not built: $b"
done
for t in java javac tmux python3 curl; do
    command -v $t >/dev/null 2>&1 || skip "$t is not installed"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tui-remote.XXXXXX")
pids=""
sess="jprof-remote-$$"
cleanup() {
    tmux kill-session -t "$sess" 2>/dev/null
    for p in $pids; do kill -TERM "$p" 2>/dev/null; done
    sleep 0.5
    for p in $pids; do kill -KILL "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

# ---- set-up ----
printf 'ingest-tok-0123456789abcdef ingest *\nread-tok-0123456789abcdef read *\n' >"$tmp/tokens"
printf 'scoped-tok-0123456789abcdef read other\n' >>"$tmp/tokens"
echo ingest-tok-0123456789abcdef >"$tmp/ingest.tok"
echo read-tok-0123456789abcdef >"$tmp/read.tok"
echo scoped-tok-0123456789abcdef >"$tmp/scoped.tok"
echo not-a-token-0000000000000000 >"$tmp/bad.tok"
mkdir -p "$tmp/idle"
cat >"$tmp/idle/Idle.java" <<'EOF'
public final class Idle {
    public static void main(String[] a) throws Exception {
        Thread.sleep(600_000);
    }
}
EOF
javac -d "$tmp/classes" "$srcdir/samples/DemoService.java" "$tmp/idle/Idle.java" ||
    { fail "javac samples/DemoService.java"; exit 1; }

"$server_bin" --listen 127.0.0.1:0 --port-file "$tmp/port" --data-dir "$tmp/data" \
    --tokens "$tmp/tokens" >"$tmp/server.log" 2>&1 &
pids="$pids $!"
java -Xmx128m -cp "$tmp/classes" demo.DemoService 600 >"$tmp/demo.log" 2>&1 &
demo_pid=$!
java -Xmx32m -Djprof.service=DemoService -cp "$tmp/classes" Idle >"$tmp/idle.log" 2>&1 &
idle_pid=$!
pids="$pids $demo_pid $idle_pid"
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || { fail "jprof-server starts" "$(cat "$tmp/server.log")"; exit 1; }
server=http://127.0.0.1:$(cat "$tmp/port")
printf 'pid %d jprof.io/threads=high jprof.io/events=cpu,alloc,lock\n' $demo_pid >"$tmp/agent.conf"
"$agent_bin" --mode host --config "$tmp/agent.conf" --window 5s --scan-interval 1s \
    --server "$server" --token-file "$tmp/ingest.tok" --metrics-listen 127.0.0.1:0 \
    >"$tmp/agent.log" 2>&1 &
pids="$pids $!"

export JPROF_SERVER=$server JPROF_TOKEN_FILE=$tmp/read.tok
R() { "$top" "$@" -n local -s DemoService; }

# Data is there when the snapshot has CPU% (two snapshots), the deadlock
# was reported and the cpu profile has the hot method.
ready=0
for _ in $(seq 60); do
    if R -b --format json >"$tmp/view.json" 2>"$tmp/view.err" &&
        python3 - "$tmp/view.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ts = [t for e in d["jvms"] for t in e["threads"]]
ok = any(t["name"] == "http-worker-1" and t.get("cpu_pct") is not None for t in ts)
sys.exit(0 if ok and any(e["deadlocks"] for e in d["jvms"]) else 1)
EOF
    then
        if R -b --event cpu --format top 2>/dev/null | grep -q applyDiscounts; then
            ready=1
            break
        fi
    fi
    sleep 2
done
if [ $ready = 1 ]; then
    pass "the first windows and snapshots reach the server"
else
    fail "no data within 120 s" "$(cat "$tmp/view.err"; tail -n 20 "$tmp/agent.log")"
    exit 1
fi

# ---- a. batch ----
if python3 - "$tmp/view.json" <<'EOF'; then pass "batch json: the deadlock cycle (who waits for what the other holds)"; else fail "batch json: deadlock" "$(head -c 1500 "$tmp/view.json")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
th = {t["name"]: t for e in d["jvms"] for dl in e["deadlocks"] for t in dl["threads"]}
assert set(th) == {"order-sync", "stock-sync"}, th
assert th["order-sync"]["waits_for"]["id"] == th["stock-sync"]["holds"]["id"]
assert th["stock-sync"]["waits_for"]["id"] == th["order-sync"]["holds"]["id"]
assert th["order-sync"]["waits_for"]["class"].endswith("Stock"), th["order-sync"]
assert any("syncBoth" in f for f in th["order-sync"]["stack"])
EOF
if python3 - "$tmp/view.json" <<'EOF'; then pass "batch json: the hot threads first, with CPU% and stacks"; else fail "batch json: hot threads" "$(head -c 1500 "$tmp/view.json")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
e = d["jvms"][0]
assert d["via"] == "server" and e["via"] == "server" and e["where"].startswith("local/DemoService pod vm:"), e["where"]
names = [t["name"] for t in e["threads"][:4]]
assert "http-worker-1" in names and "http-worker-2" in names, names
w = [t for t in e["threads"] if t["name"] == "http-worker-1"][0]
assert w["cpu_pct"] > 2 and w["state"] and "DemoService$Pricing" in " ".join(w["stack"]), w
EOF
if python3 - "$tmp/view.json" $demo_pid $idle_pid <<'EOF'; then pass "batch json: locks and targets (active JVM, second pod not enabled)"; else fail "batch json: locks/targets" "$(head -c 2500 "$tmp/view.json")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
demo, idle = int(sys.argv[2]), int(sys.argv[3])
locks = [l for e in d["jvms"] for l in e["locks"]]
assert any((l["owner"] or {}).get("name", "").startswith(("inventory-", "order-sync", "stock-sync"))
           and l["owner_blocks"] >= 1 for l in locks), locks
t = {x["target"].get("pid"): x for x in d["targets"]}
assert t[demo]["state"] == "active", t[demo]
assert t[idle]["reason"] == "not_enabled", t[idle]
assert d["via"] == "server" and d["namespace"] == "local" and d["service"] == "DemoService"
EOF
out=$(R -b --event cpu --format top)
first=$(printf '%s\n' "$out" | sed -n 3p)
case $first in
*Pricing.applyDiscounts) pass "--event cpu --format top: the hot method on top" ;;
*) fail "--event cpu --format top: the hot method on top" "$out" ;;
esac
out=$(R -b --event lock --format top)
case $(printf '%s\n' "$out" | sed -n 3p) in
*Inventory.reserve) pass "--event lock --format top: the contended lock on top" ;;
*) fail "--event lock --format top" "$out" ;;
esac
out=$(R -b --event alloc --format top)
# Reports.build -> render allocate nearly everything; with escape analysis
# render's own arrays vanish and the self rows name build or render
if printf '%s\n' "$out" | sed -n 3,10p | grep -qE 'Reports\.(render|build)'; then
    pass "--event alloc --format top: the allocation hot spot"
else
    fail "--event alloc --format top" "$out"
fi
out=$(R -b --event cpu)
if printf '%s\n' "$out" | grep -qE '^java\.lang\.Thread\.run;.*Pricing\.applyDiscounts [0-9]+$'; then
    pass "--event cpu: collapsed stacks"
else
    fail "--event cpu: collapsed stacks" "$out"
fi
if R -b --event cpu --format json --value total --from -10m --to now |
    python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["tree"]["total"] > 0 and d["meta"]["kind"] == "cpu"'; then
    pass "--event cpu --format json --value total --from/--to"
else
    fail "--event cpu --format json"
fi
out=$(R -b)
if printf '%s\n' "$out" | grep -q 'DEADLOCK 1: 2 threads' && printf '%s\n' "$out" | grep -q 'http-worker-1' &&
    printf '%s\n' "$out" | grep -q 'not_enabled' && printf '%s\n' "$out" | grep -q 'batches accepted'; then
    pass "batch text: status, threads, locks, deadlocks, ingestion"
else
    fail "batch text" "$out"
fi
if R -b --format json --pod "vm:$idle_pid" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["pod"].endswith(sys.argv[1]) and d["jvms"] == [], d' "$idle_pid"; then
    pass "--pod: only that pod's data"
else
    fail "--pod filter"
fi

# the GC summaries: the demo's collections, uploaded per window
gc_out=""
for _ in $(seq 30); do
    gc_out=$(R -b --format gc --from -1h 2>"$tmp/gc.err")
    printf '%s\n' "$gc_out" | grep -qE '^GC: [0-9]+ collections, [1-9][0-9]* pauses in ' && break
    sleep 2
done
if printf '%s\n' "$gc_out" | grep -qE '^GC: [0-9]+ collections, [1-9][0-9]* pauses in .*% of the time paused' &&
    printf '%s\n' "$gc_out" | grep -qE '^pauses:  total .* p50 .* p99 .* max .*\(from jdk.GCPhasePause\)' &&
    printf '%s\n' "$gc_out" | grep -qE '^longest: .* of G1(New|Old|Full|Young|Mixed)[^,]*, cause: ' &&
    printf '%s\n' "$gc_out" | grep -qE '^heap:    last collection .* used' &&
    printf '%s\n' "$gc_out" | grep -q '^top allocators (allocation samples, self bytes):' &&
    printf '%s\n' "$gc_out" | grep -q 'heap dump'; then
    pass "-b --format gc: pauses, longest with collector and cause, heap, allocators"
else
    fail "-b --format gc" "$gc_out
$(cat "$tmp/gc.err")"
fi
if R -b --format json | python3 -c '
import json, sys
g = json.load(sys.stdin)["gc"]
assert g["recorded"] and g["pauses"] > 0 and g["pause_max_ns"] >= g["pause_p50_ns"] > 0, g
assert g["longest"]["collector"] != "unknown" and "heap dump" in g["cannot_tell"], g'; then
    pass "batch json: \"gc\" in the shape of the local batch JSON"
else
    fail "batch json: gc" "$(R -b --format json | head -c 600)"
fi
out=$("$top" -b -n local -s DemoService --format gc --event cpu 2>&1)
case $? in 2) pass "--format gc with --event: usage error" ;; *) fail "--format gc --event" "$out" ;; esac

# ---- b. the interactive view in tmux ----
screen() { tmux capture-pane -p -t "$sess" 2>/dev/null; }
wait_screen() { # pattern what
    for _ in $(seq 40); do
        if screen | grep -qE -- "$1"; then
            pass "tmux: $2"
            return 0
        fi
        sleep 0.25
    done
    fail "tmux: $2 (no /$1/)" "$(screen)"
    return 1
}
key() { tmux send-keys -t "$sess" "$@"; }
tmux new-session -d -s "$sess" -x 150 -y 45 \
    "JPROF_SERVER=$server JPROF_TOKEN_FILE=$tmp/read.tok $top -n local -s DemoService -d 2; echo EXIT=\$? >$tmp/tui.exit; sleep 5"
# the screens every source has (one key map): the newest snapshot opens first
wait_screen 'jprof-top +local/DemoService pod vm:[0-9]+ pid [0-9]+ ' "the title names the service, pod and JVM"
wait_screen 'http-worker-1 ' "Threads screen: the threads of the snapshot"
# busiest first: the first table row (after the CPU% header) is one of the hot workers
first_row=$(screen | awk '/^ +CPU% +CPU STATE/ { getline; print; exit }')
case $first_row in
*' http-worker-'[12]' '*) pass "tmux: Threads screen: the hot worker first" ;;
*) fail "tmux: Threads screen: the hot worker first" "$(screen)" ;;
esac
key L
wait_screen 'owner "inventory-[0-9]"|DEADLOCK' "Locks screen: owner and blocked threads"
key D
wait_screen '^DEADLOCK 1: 2 threads' "Deadlocks screen: the cycle"
screen | grep -q 'waits for demo.DemoService\$' && pass "tmux: Deadlocks screen names the locks" ||
    fail "tmux: Deadlocks screen names the locks" "$(screen)"
key S
wait_screen 'source: server' "Status screen: where the data comes from"
wait_screen 'not_enabled' "Status screen: a pod with its reason"
wait_screen 'batches accepted' "Status screen: ingestion health"
key F
wait_screen 'applyDiscounts' "Flame screen: the hot method"
wait_screen 'DemoService last 15m, pod vm:' "Flame screen: default range 15m, the pod shown"
key '>'
wait_screen 'DemoService last 1h, pod vm:' "range key > (1h): the flame graph follows the range"
key '<' '<'
wait_screen 'last 5m' "range key < (5m)"
key a
wait_screen 'last 5m, all pods' "a: the flame graph of all pods"
key a
wait_screen 'last 5m, pod vm:[0-9]+' "a again: the pod shown"
key 3
wait_screen '\[alloc\]' "flame keys still reach the flame view (3: alloc)"
key G
wait_screen '^GC: [0-9]+ collections, [1-9][0-9]* pauses in ' "G: the GC screen from the server's summaries"
wait_screen '^pauses:  total .* p50 ' "GC screen: pause total and percentiles"
wait_screen '^pause time over the range \(1 column = ' "GC screen: pauses over time (sparkline)"
wait_screen 'window: local/DemoService last 5m, pod vm:' "GC screen: the Flame screen's range and pod"
key '>'
wait_screen 'window: local/DemoService last 15m, pod vm:' "range key > on the GC screen reads the range again"
key T
wait_screen 'http-worker-1' "back to Threads"
key Home Enter
wait_screen '^ +at [a-z]' "Enter shows the selected thread's stack"
key Escape
key o
wait_screen 'pods and JVMs of local/DemoService on jprof-server' "o lists the service's pods and JVMs"
wait_screen 'not_enabled' "the list shows each target's state"
key '?'
wait_screen 'Status: where the data comes from' "help"
key x
wait_screen 'PID +STATE +REASON' "any key closes help"
key q
for _ in $(seq 40); do [ -s "$tmp/tui.exit" ] && break; sleep 0.25; done
if grep -q 'EXIT=0' "$tmp/tui.exit" 2>/dev/null; then pass "q quits with status 0"; else fail "q quits" "$(cat "$tmp/tui.exit" 2>/dev/null; screen)"; fi
tmux kill-session -t "$sess" 2>/dev/null

# ---- c. errors ----
expect() { # name status pattern -- args...
    local name=$1 want=$2 pat=$3
    shift 4
    "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    local got=$?
    if [ $got -ne "$want" ]; then
        fail "$name: exit $got, want $want" "$(cat "$tmp/err")"
    elif ! grep -qE -- "$pat" "$tmp/err"; then
        fail "$name: no /$pat/" "$(cat "$tmp/err")"
    elif [ "$want" != 2 ] && [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
        # usage errors add the "Try --help" line, like every jprof-top usage error
        fail "$name: not one line" "$(cat "$tmp/err")"
    else
        pass "$name (exit $want)"
    fi
}
expect "server unreachable" 20 "cannot reach jprof-server at http://127.0.0.1:1 \(--server\)" -- \
    "$top" -b -n local -s DemoService --server http://127.0.0.1:1
expect "no token" 21 "wants a token: give --token-file FILE or set JPROF_TOKEN_FILE" -- \
    env -u JPROF_TOKEN_FILE "$top" -b -n local -s DemoService
expect "bad token (env)" 21 "refused the token in .*bad.tok \(from JPROF_TOKEN_FILE\)" -- \
    env JPROF_TOKEN_FILE="$tmp/bad.tok" "$top" -b -n local -s DemoService
expect "bad token (option)" 21 "refused the token in .*bad.tok \(from --token-file\)" -- \
    "$top" -b -n local -s DemoService --token-file "$tmp/bad.tok"
expect "namespace out of scope" 22 "may not read namespace local" -- \
    "$top" -b -n local -s DemoService --token-file "$tmp/scoped.tok"
expect "unknown service" 23 "no service 'Nope' in namespace local .*services there: .*DemoService" -- \
    "$top" -b -n local -s Nope
expect "unknown namespace" 23 "namespace elsewhere has no data .*namespaces with data: local" -- \
    "$top" -b -n elsewhere -s Nope
expect "interactive without a terminal" 2 "needs a terminal; use -b" -- \
    "$top" -n local -s DemoService
expect "-n without -s" 2 "needs both -n NAMESPACE and -s SERVICE" -- "$top" -b -n local
expect "--format top without --event" 2 "need --event KIND" -- \
    "$top" -b -n local -s DemoService --format top

# ---- d. scripts/demo without a terminal ----
for p in $pids; do kill -TERM "$p" 2>/dev/null; done
wait 2>/dev/null
pids=""
JPROF_BUILD_DIR=$build DEMO_NO_BUILD=1 DEMO_WINDOW=5s DEMO_WAIT=100 \
    timeout 170 sh "$srcdir/scripts/demo" </dev/null >"$tmp/demo.out" 2>&1
rc=$?
dtmp=$(sed -n 's/.*embedded store in \(.*\)\/data.*/\1/p' "$tmp/demo.out" | head -n 1)
if [ $rc = 0 ] && grep -q 'DEADLOCK 1: 2 threads' "$tmp/demo.out" && grep -q 'applyDiscounts' "$tmp/demo.out"; then
    pass "scripts/demo without a terminal prints the batch view and exits 0"
else
    fail "scripts/demo without a terminal (exit $rc)" "$(tail -n 30 "$tmp/demo.out")"
fi
sleep 1
if [ -n "$dtmp" ] && [ ! -e "$dtmp" ] && ! pgrep -f "$dtmp" >/dev/null; then
    pass "scripts/demo leaves no process and no temp dir"
else
    fail "scripts/demo leaves things behind ($dtmp)" "$(pgrep -af "${dtmp:-jprof-demo}")"
fi

# ---- e. scripts/demo on a terminal: jprof-top opens, q stops everything ----
tmux new-session -d -s "$sess" -x 150 -y 45 \
    "JPROF_BUILD_DIR=$build DEMO_NO_BUILD=1 DEMO_WINDOW=5s DEMO_WAIT=100 sh $srcdir/scripts/demo; echo EXIT=\$? >$tmp/demo.exit; sleep 5"
for _ in $(seq 240); do
    screen | grep -qE 'jprof-top +local/DemoService' && break
    [ -s "$tmp/demo.exit" ] && break
    sleep 0.5
done
# the workers' top frame may be Thread.sleep: match the header and the threads
wait_screen 'jprof-top +local/DemoService' "scripts/demo on a terminal opens jprof-top on the demo service"
wait_screen 'http-worker-[12] ' "scripts/demo: the demo service's threads are shown"
# the demo's temp dir, from its JVM's class path
dtmp=$(pgrep -af 'jprof-demo\.[^/ ]*/classes' | sed -n 's/.* -cp \([^ ]*\)\/classes .*/\1/p' | head -n 1)
key q
for _ in $(seq 80); do [ -s "$tmp/demo.exit" ] && break; sleep 0.25; done
if grep -q 'EXIT=0' "$tmp/demo.exit" 2>/dev/null && [ -n "$dtmp" ] && [ ! -e "$dtmp" ] &&
    ! pgrep -f "$dtmp" >/dev/null; then
    pass "q in the demo: exit 0, every process stopped, temp dir removed"
else
    fail "q in the demo ($dtmp)" "$(cat "$tmp/demo.exit" 2>/dev/null; screen; pgrep -af "${dtmp:-jprof-demo}")"
fi
tmux kill-session -t "$sess" 2>/dev/null

echo "$pass_n passed, $fail_n failed"
[ $fail_n = 0 ]
