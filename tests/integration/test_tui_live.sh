#!/bin/bash
# test_tui_live.sh - the interactive jprof-top on real JVMs, driven in tmux and
# read back from the screen, on JDK 17 and JDK 25.
#
# With no argument: the list of local JVMs, Enter opens one. With -p on
# tests/java/Contention.java: Threads shows the hot spinner first; Enter on
# a thread shows its stack; filter and sort; Locks shows the contended
# monitor's owner and "blocks 3 threads"; Flame shows Hot.spin after a
# window; q quits with status 0. On tests/java/Deadlocks.java: Deadlocks
# draws both cycles with the thread names. Then, while the Flame screen
# records: SIGTERM to jprof-top, and the terminal closing (SIGHUP), each
# leaving no jprof recording in `jcmd JFR.check` and no jprof file in the
# target's /tmp. --asprof with a file that is not a library: a clear
# message on the Flame screen and nothing left behind.
#
# Environment: JPROF_TOP (default ./jprof-top), JPROF_HELPER_JAR, JDK17_HOME,
# JDK25_HOME, TUI_TIMEOUT (seconds per screen, default 15); CI=true turns a
# missing tool into a failure. Exit: 0 pass, 1 fail, 77 skipped (not in CI).
set -u

. "$(dirname "$0")/lib.sh"
top=${JPROF_TOP:-$builddir/jprof-top}
export JPROF_HELPER_JAR=${JPROF_HELPER_JAR:-$builddir/jprof-helper.jar}
timeout=${TUI_TIMEOUT:-15}
work=$builddir/tests/integration/tui-live.d
classes=$work/classes
sock=jprof-tui-live-$$
tmux_sock=$sock
# a failed step shows the screen it looked at
on_fail() {
    [ -s "$work/screen" ] && sed 's/^/      | /' "$work/screen"
}

[ -x "$top" ] || skip_or_fail "$top not built"
[ -r "$JPROF_HELPER_JAR" ] || skip_or_fail "helper jar $JPROF_HELPER_JAR not built"
command -v tmux >/dev/null || skip_or_fail "tmux not found (apt-get install tmux)"
compile_live_workloads

# files of the jprof-top processes this test ran (other jprof tests may
# share the host's /tmp with these JVMs)
toppids=()
leftovers() {
    local ids
    ids=$(IFS='|'; echo "${toppids[*]:-none}")
    ls -a "/proc/$1/root/tmp" 2>/dev/null | grep -E "^(jprof-($ids)-[0-9]+-[0-9a-f]+|jprof-asprof\.so)" || true
}
recordings() {
    local ids
    ids=$(IFS='|'; echo "${toppids[*]:-none}")
    "$1/bin/jcmd" "$2" JFR.check 2>&1 | grep -E "name=jprof-($ids)-" || true
}

# run NAME ARGS...: jprof-top in a 150x40 tmux window; its pid goes to
# $work/NAME.pid and the window stays after it exits (for its status)
run() {
    local name=$1
    shift
    rm -f "$work/$name.pid" "$work/$name.rc"
    local cmd="'$top'"
    for a in "$@"; do cmd+=" '$a'"; done
    # the shell waits for jprof-top and writes its exit status
    tmux -L "$sock" new-session -d -s "$name" -x 150 -y 40 "$cmd; echo \$? >'$work/$name.rc'; sleep 600"
    local shell_pid
    shell_pid=$(tmux -L "$sock" display -p -t "$name:" '#{pane_pid}')
    for _ in $(seq 50); do
        pgrep -P "$shell_pid" -x jprof-top >"$work/$name.pid" && break
        sleep 0.1
    done
    toppids+=("$(cat "$work/$name.pid" 2>/dev/null)")
}
screen() { tmux -L "$sock" capture-pane -p -t "$1:" >"$work/screen" 2>/dev/null; }
keys() {
    local name=$1
    shift
    tmux -L "$sock" send-keys -t "$name:" "$@"
}

# wait_for NAME PATTERN [SECONDS]: until the screen has a line matching the ERE
wait_for() {
    local deadline=$((SECONDS + ${3:-$timeout}))
    while [ $SECONDS -le "$deadline" ]; do
        screen "$1"
        grep -qE -- "$2" "$work/screen" && return 0
        sleep 0.2
    done
    return 1
}
# step NAME DESCRIPTION PATTERN [SECONDS]
step() {
    if wait_for "$1" "$3" "${4:-$timeout}"; then pass "$2"; else fail "$2 (no /$3/ on screen)"; fi
}
# press_step NAME KEY DESCRIPTION PATTERN [SECONDS]: sends KEY, then again
# every 3 s, until the screen matches PATTERN. On a loaded machine a key can
# be lost (an F-key's escape sequence split past ESCDELAY reads as Esc); the
# screen keys only select a screen, so sending one twice is harmless.
press_step() {
    local name=$1 key=$2 desc=$3 pat=$4 deadline=$((SECONDS + ${5:-$timeout}))
    while [ $SECONDS -le "$deadline" ]; do
        keys "$name" "$key"
        if wait_for "$name" "$pat" 3; then
            pass "$desc"
            return
        fi
    done
    fail "$desc (no /$pat/ on screen)"
}
# the first table row below the THREAD header
first_thread_row() {
    screen "$1"
    awk '/^ +CPU% +CPU STATE/ { getline; print; exit }' "$work/screen"
}
wait_exit() { # NAME WANT-STATUS DESCRIPTION
    local deadline=$((SECONDS + timeout))
    while [ $SECONDS -le $deadline ]; do
        [ -s "$work/$1.rc" ] && break
        sleep 0.2
    done
    local st
    st=$(cat "$work/$1.rc" 2>/dev/null)
    if [ "$st" = "$2" ]; then pass "$3 (status $2)"; else fail "$3: status '$st', want $2"; fi
}

# wait_clean HOME PID: until the target has no jprof recording and no jprof
# file (bounded); the checks after it say what is left
wait_clean() {
    local deadline=$((SECONDS + timeout))
    while [ $SECONDS -le $deadline ] && [ -n "$(recordings "$1" "$2")$(leftovers "$2")" ]; do
        sleep 0.3
    done
}

run_jdk() {
    local v=$1 home=$2
    echo "--- JDK $v ($home)"
    start_jvm "$home" Contention || { fail "JDK $v: Contention workload"; return; }
    local cpid=$jvm_pid
    start_jvm "$home" Deadlocks || { fail "JDK $v: Deadlocks workload"; return; }
    local dpid=$jvm_pid

    # the list of JVMs, then Enter on the Contention one
    run "list$v"
    step "list$v" "JDK $v: no argument lists the local JVMs" "^ +$cpid +[^ ]+ +[0-9a-z]+ +live\.Contention"
    local idx
    idx=$(awk '/PID +USER +UPTIME/ {n=0; on=1; next} on && /^ +[0-9]+ / {if ($1 == '"$cpid"') {print n; exit} n++}' "$work/screen")
    for _ in $(seq "${idx:-0}"); do keys "list$v" Down; done
    keys "list$v" Enter
    step "list$v" "JDK $v: Enter on the list opens that JVM" "^jprof-top +pid $cpid live\.Contention +JDK "
    keys "list$v" q
    wait_exit "list$v" 0 "JDK $v: q quits the live view"

    local w="ct$v"
    run "$w" -p "$cpid" -d 1
    step "$w" "JDK $v: Threads screen with the header (JVM version, states, CPU, heap, cost)" \
        "Threads [0-9]+: .*run [0-9]+ .*blocked 3 .*CPU [0-9]+% +heap .* of .* +cost [0-9]+ ms"
    local row="" deadline=$((SECONDS + timeout))
    # the top frame is the spin loop nearly always, but a snapshot may catch
    # the thread between two calls (in the lambda that calls it): the next
    # refresh, a second later, is looked at then
    while [ $SECONDS -le $deadline ]; do
        row=$(first_thread_row "$w")
        grep -qE '^ +[0-9.]+ .* RUNNABLE .* hot-spinner .*live\.Contention\$Hot\.spin' <<<"$row" && break
        sleep 0.3
    done
    if grep -qE '^ +[0-9.]+ .* RUNNABLE .* hot-spinner .*live\.Contention\$Hot\.spin' <<<"$row"; then
        pass "JDK $v: Threads shows the hot spinner first with its CPU%"
    else
        fail "JDK $v: first thread row: $row"
    fi
    keys "$w" Home Enter
    step "$w" "JDK $v: Enter on a thread shows its stack" '^ +at live\.Contention\$Hot\.spin\(Contention\.java:[0-9]+\)'
    grep -q '"hot-spinner" +id [0-9]+' "$work/screen" || grep -qE '"hot-spinner" +id' "$work/screen" ||
        fail "JDK $v: the stack screen does not name the thread"
    keys "$w" Escape
    keys "$w" / l e d g e r Enter
    step "$w" "JDK $v: filter by name" "sort: CPU%  filter: ledger"
    if awk '/^ +CPU% +CPU STATE/ {on=1; next} on && /^ *$/ {exit} on' "$work/screen" | grep -vq ledger; then
        fail "JDK $v: the filter shows other threads"
    fi
    keys "$w" Escape s
    step "$w" "JDK $v: s sorts by total CPU" "sort: total CPU"
    press_step "$w" F6 "JDK $v: Locks shows the contended monitor's owner and blocks" \
        'live\.Contention\$Ledger@[0-9a-f]+ \(monitor\): owner "ledger-owner" .* blocks 3 threads'
    step "$w" "JDK $v: Locks lists the waiters" '^ +enter +"ledger-waiter-1" \(BLOCKED\)'
    press_step "$w" F8 "JDK $v: Flame shows the hot method after a window" 'Contention\$Hot\.spin' 20
    [ -n "$(recordings "$home" "$cpid")" ] && pass "JDK $v: the Flame screen records with JFR" ||
        fail "JDK $v: no jprof recording while on Flame"
    # B: this window becomes the baseline; later windows are drawn compared
    # with it (the title grows "vs baseline", the table turns into changes)
    keys "$w" B # a toggle: sent once
    step "$w" "JDK $v: B keeps the window as the baseline" 'baseline kept \(baseline [0-9:]+Z\+'
    step "$w" "JDK $v: the comparison's table: old, new and change per frame" \
        'OLD-SELF +NEW-SELF +CHANGE +OLD-TOTAL +NEW-TOTAL +CHANGE +FRAME'
    # a later window: the title's event count moves on, Hot.spin has both sides
    local base_title later="" t
    base_title=$(grep -m1 -oE 'vs baseline .* cpu: [0-9]+ events' "$work/screen")
    deadline=$((SECONDS + 15))
    while [ $SECONDS -le $deadline ]; do
        screen "$w"
        t=$(grep -m1 -oE 'vs baseline .* cpu: [0-9]+ events' "$work/screen")
        if [ -n "$t" ] && [ "$t" != "$base_title" ] &&
            grep -qE '^ +[0-9]+ +[0-9]+ +([-+][0-9]+|=) +[0-9]+ +[0-9]+ +([-+][0-9]+|=) +live\.Contention\$Hot\.spin' "$work/screen"; then
            later=1
            break
        fi
        sleep 0.3
    done
    [ -n "$later" ] && pass "JDK $v: a later window is compared with the kept one (Hot.spin: old, new, change)" ||
        fail "JDK $v: no later window compared with the baseline ($base_title)" "$(cat "$work/screen")"
    keys "$w" m
    step "$w" "JDK $v: m normalises the comparison per second" 'baseline normalised per second'
    keys "$w" B
    step "$w" "JDK $v: B again drops the baseline" 'baseline dropped: the window alone again'
    screen "$w"
    grep -q 'vs baseline' "$work/screen" && fail "JDK $v: still compared after B" || pass "JDK $v: the window alone after B"
    keys "$w" q
    wait_exit "$w" 0 "JDK $v: q quits from Flame"
    wait_clean "$home" "$cpid"
    [ -z "$(recordings "$home" "$cpid")$(leftovers "$cpid")" ] &&
        pass "JDK $v: after q no recording and no file in the target" ||
        fail "JDK $v: left after q: $(recordings "$home" "$cpid") $(leftovers "$cpid")" "$(jvm_attach_thread "$cpid")"

    w="dl$v"
    run "$w" -p "$dpid" --snapshot thread-print
    press_step "$w" F7 "JDK $v: Deadlocks shows the monitor cycle with thread names" \
        '^DEADLOCK [12]: 2 threads.*"mon-deadlock-1" -> "mon-deadlock-2" -> "mon-deadlock-1"'
    grep -qE '^DEADLOCK [12]: 2 threads.*"rl-deadlock-1" -> "rl-deadlock-2"' "$work/screen" &&
        grep -qE 'waits for java\.util\.concurrent\.locks\.ReentrantLock\$NonfairSync@[0-9a-f]+ +held by "rl-deadlock-' "$work/screen" &&
        pass "JDK $v: Deadlocks shows the ReentrantLock cycle, where each waits and who holds" ||
        fail "JDK $v: ReentrantLock cycle"
    step "$w" "JDK $v: the tab says 2 deadlocks" 'F7Deadlocks\(2\)'
    keys "$w" q

    # SIGTERM while the Flame screen records
    w="term$v"
    run "$w" -p "$cpid" -d 1
    wait_for "$w" "hot-spinner" >/dev/null
    press_step "$w" F8 "JDK $v: F8 opens the Flame screen" 'Flame\(rec\)'
    local n=0
    while [ -z "$(recordings "$home" "$cpid")" ] && [ $n -lt 25 ]; do sleep 0.2; n=$((n + 1)); done
    kill -TERM "$(cat "$work/$w.pid")"
    wait_exit "$w" 143 "JDK $v: SIGTERM while recording ends jprof-top"
    wait_clean "$home" "$cpid"
    [ -z "$(recordings "$home" "$cpid")$(leftovers "$cpid")" ] &&
        pass "JDK $v: after SIGTERM JFR.check lists no jprof recording, /tmp has no jprof file" ||
        fail "JDK $v: left after SIGTERM: $(recordings "$home" "$cpid") $(leftovers "$cpid")"

    # the terminal closes (SIGHUP) while the Flame screen records
    w="hup$v"
    run "$w" -p "$cpid" -d 1
    wait_for "$w" "hot-spinner" >/dev/null
    press_step "$w" F8 "JDK $v: F8 opens the Flame screen" 'Flame\(rec\)'
    n=0
    while [ -z "$(recordings "$home" "$cpid")" ] && [ $n -lt 25 ]; do sleep 0.2; n=$((n + 1)); done
    local jp
    jp=$(cat "$work/$w.pid")
    tmux -L "$sock" kill-session -t "$w"
    n=0
    while kill -0 "$jp" 2>/dev/null && [ $n -lt $((timeout * 5)) ]; do sleep 0.2; n=$((n + 1)); done
    ! kill -0 "$jp" 2>/dev/null && [ -z "$(recordings "$home" "$cpid")$(leftovers "$cpid")" ] &&
        pass "JDK $v: the terminal closing (SIGHUP) stops the recording and leaves no file" ||
        fail "JDK $v: after SIGHUP: alive=$(kill -0 "$jp" 2>/dev/null && echo yes) $(recordings "$home" "$cpid") $(leftovers "$cpid")"
    kill "$cpid" "$dpid"
}

asprof_case() {
    local home=$1
    echo "--- --asprof with a file that is not a library"
    start_jvm "$home" Contention || { fail "Contention workload"; return; }
    local cpid=$jvm_pid
    mkdir -p "$work/bogus"
    echo "not a shared object" >"$work/bogus/libasyncProfiler.so"
    run asprof -p "$cpid" --asprof "$work/bogus/libasyncProfiler.so"
    wait_for asprof "hot-spinner" >/dev/null
    press_step asprof F8 "--asprof: a library the JVM cannot load is reported on the Flame screen" \
        "loading /tmp/jprof/libasyncProfiler-jprof-top-$cpid\.so failed"
    keys asprof q
    wait_exit asprof 0 "--asprof: q quits"
    [ -z "$(leftovers "$cpid")" ] && ! grep -q libasyncProfiler-jprof-top "/proc/$cpid/maps" &&
        ! ls "/proc/$cpid/root/tmp/jprof" 2>/dev/null | grep -q "jprof-top-$cpid\." &&
        pass "--asprof: nothing left in the target" || fail "--asprof: left $(leftovers "$cpid")"
    kill "$cpid"

    echo "--- --asprof with someone else's async-profiler loaded"
    if ! command -v cc >/dev/null; then
        [ "${CI:-}" = true ] && fail "no C compiler for the profiler conflict case"
        echo "note: no C compiler; the profiler conflict case is not run"
        return
    fi
    printf '#include <jni.h>\nJNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *v, char *o, void *r) { return 0; }\n' >"$work/bogus/fake.c"
    mkdir -p "$work/bogus/other"
    cc -shared -fPIC -I"$home/include" -I"$home/include/linux" -o "$work/bogus/other/libasyncProfiler.so" \
        "$work/bogus/fake.c" || { fail "building the stand-in profiler"; return; }
    start_jvm "$home" Contention "-agentpath:$work/bogus/other/libasyncProfiler.so" ||
        { fail "JVM with a foreign profiler"; return; }
    cpid=$jvm_pid
    run foreign -p "$cpid" --asprof "$work/bogus/libasyncProfiler.so"
    step foreign "--asprof, someone else's profiler: the live view opens" "hot-spinner"
    # The message is folded into the screen's width: the other library's
    # path (as long as the build directory's) may be on a line of its own.
    press_step foreign F8 "--asprof, someone else's profiler: the Flame screen says so" \
        "already has an async-profiler loaded by someone else"
    step foreign "--asprof, someone else's profiler: it names the other library" \
        "other/libasyncProfiler\.so"
    press_step foreign F6 "--asprof, someone else's profiler: Locks still work" "owner \"ledger-owner\""
    keys foreign q
    wait_exit foreign 0 "--asprof, someone else's profiler: q quits"
    [ -z "$(leftovers "$cpid")" ] && ! grep -q libasyncProfiler-jprof-top "/proc/$cpid/maps" &&
        pass "--asprof, someone else's profiler: nothing copied" || fail "conflict: left $(leftovers "$cpid")"
    kill "$cpid"
}

exit_case() {
    local home=$1
    echo "--- the JVM exits under jprof-top; Ctrl-C"
    start_jvm "$home" Deadlocks || { fail "Deadlocks workload"; return; }
    local dpid=$jvm_pid
    run gone -p "$dpid" -d 0.5
    wait_for gone "mon-deadlock-1" >/dev/null
    kill -KILL "$dpid"
    step gone "the JVM exiting is shown, with its last snapshot" "EXITED"
    grep -q "the JVM has exited" "$work/screen" && grep -q "mon-deadlock-1" "$work/screen" &&
        pass "the last snapshot stays on screen with a message" || fail "exited JVM message"
    keys gone q
    wait_exit gone 0 "q after the JVM exited"
    start_jvm "$home" Deadlocks || { fail "Deadlocks workload"; return; }
    dpid=$jvm_pid
    run intr -p "$dpid"
    wait_for intr "mon-deadlock-1" >/dev/null
    keys intr C-c
    wait_exit intr 130 "Ctrl-C (SIGINT) ends jprof-top"
    [ -z "$(leftovers "$dpid")" ] && pass "Ctrl-C leaves nothing in the target" || fail "left after Ctrl-C: $(leftovers "$dpid")" "$(jvm_attach_thread "$dpid")"
    kill "$dpid"
}

run_jdk 17 "$jdk17"
asprof_case "$jdk17"
exit_case "$jdk17"
if have_jdk25; then
    run_jdk 25 "$jdk25"
fi

summary "live TUI"
