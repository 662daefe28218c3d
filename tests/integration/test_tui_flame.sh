#!/bin/bash
# test_tui_flame.sh - the real jprof-top: its command line in batch mode, and
# the interactive flame view driven in tmux and read back from the screen.
#
# Batch: usage errors exit 2, a missing file or kind exits 1 with a message
# that names it, a file damaged part way prints what it read and exits 3.
# Interactive, on the async-profiler fixture at 80x24: header and root bar,
# move and zoom (the zoom line names the frame), zoom out, regex search (the
# share on screen equals the share computed from the batch output), callers
# view, kind switch, window resizes, quit with status 0. Then a larger
# window on samples/demo.jfr: help screen, search and step through matches.
#
# Environment (all optional):
#   JPROF_TOP       the jprof-top binary (default ./jprof-top, run from the build dir)
#   JPROF_FIXTURES  async-profiler fixtures (default SRCDIR/tests/fixtures/jfr)
#   TUI_TIMEOUT     seconds to wait for a screen (default 10)
#   CI=true         a missing tmux or fixture fails instead of skipping
# Exit: 0 all passed, 1 some step failed, 77 nothing could run (not in CI).
set -u

. "$(dirname "$0")/lib.sh"
top=${JPROF_TOP:-$builddir/jprof-top}
fixtures=${JPROF_FIXTURES:-$srcdir/tests/fixtures/jfr}
timeout=${TUI_TIMEOUT:-10}
fixture=$fixtures/asprof-cpu-alloc-lock.jfr
demo=$srcdir/samples/demo.jfr

[ -x "$top" ] || skip_or_fail "jprof-top binary $top (build it first: make jprof-top)"
[ -r "$fixture" ] || skip_or_fail "fixture $fixture (set JPROF_FIXTURES)"
command -v tmux >/dev/null 2>&1 || skip_or_fail "tmux (apt-get install tmux)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/jprof-tui.XXXXXX")
sock=jprof-tui-test-$$
tmux_sock=$sock
cleanup_dirs+=("$tmp")

# ---- batch mode: arguments and exit statuses ----

# expect_exit NAME STATUS STDERR_PATTERN -- ARGS...: runs jprof-top, checks
# the exit status and that stderr (or stdout for --help) matches.
expect_exit() {
    local name=$1 want=$2 pattern=$3
    shift 4
    "$top" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    local got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$name: exit $got, want $want" "$(head -3 "$tmp/err")"
    elif ! grep -qE -- "$pattern" "$tmp/err" "$tmp/out"; then
        fail "$name: output does not match /$pattern/" "$(head -3 "$tmp/err")"
    else
        pass "$name (exit $want)"
    fi
}

expect_exit "bad --event" 2 "unknown kind 'bogus'" -- -b --jfr "$fixture" --event bogus
expect_exit "bad --value" 2 "--value must be samples or total" -- -b --jfr "$fixture" --value x
expect_exit "bad --format" 2 "unknown format 'svg'" -- -b --jfr "$fixture" --format svg
expect_exit "bad --from" 2 "--from: " -- -b --jfr "$fixture" --from yesterday
expect_exit "no --jfr" 2 "no recording given" -- -b --event cpu
expect_exit "unknown option" 2 "unknown option '--frobnicate'" -- --frobnicate
expect_exit "missing option value" 2 "needs a value" -- -b --jfr
expect_exit "--format without -b" 2 "add -b" -- --jfr "$fixture" --format top
expect_exit "namespace without service (no server: kubectl)" 2 "through kubectl: give -s SERVICE or --pod POD" -- -n shop
expect_exit "namespace without service (server)" 2 "needs both -n NAMESPACE and -s SERVICE" -- -n shop --via server
expect_exit "missing file" 1 "$tmp/nope.jfr: .*No such file or directory" -- \
    -b --jfr "$tmp/nope.jfr"
expect_exit "kind not in the file" 1 "no wall events; kinds present: cpu, alloc, lock, park" -- \
    -b --jfr "$fixture" --event wall
printf 'not a flight recording, just text\n' >"$tmp/text.jfr"
expect_exit "not a JFR file" 1 "text.jfr" -- -b --jfr "$tmp/text.jfr"
expect_exit "interactive without a terminal" 2 "needs a terminal" -- --jfr "$fixture"
expect_exit "--help" 0 "^Usage: jprof-top" -- --help
expect_exit "--version" 0 "^jprof-top \(jprof\) [0-9]" -- --version

# A file cut in its second chunk: the first chunk is printed, then exit 3.
two=$fixtures/asprof-two-chunks.jfr
if [ -r "$two" ]; then
    size=$(stat -c %s "$two")
    head -c $((size - 1000)) "$two" >"$tmp/cut.jfr"
    "$top" -b --jfr "$tmp/cut.jfr" --event cpu >"$tmp/cut.out" 2>"$tmp/cut.err"
    rc=$?
    if [ "$rc" -eq 3 ] && [ -s "$tmp/cut.out" ] && grep -q "^jprof-top: .*cut.jfr" "$tmp/cut.err"; then
        pass "damaged file: partial output, error on stderr (exit 3)"
    else
        fail "damaged file: exit $rc, $(wc -l <"$tmp/cut.out") lines" "$(head -3 "$tmp/cut.err")"
    fi
    "$top" -b --jfr "$tmp/cut.jfr" --event cpu -f json 2>/dev/null |
        grep -q '"partial":true' && pass "damaged file: JSON says partial" ||
        fail "damaged file: JSON without \"partial\":true"
else
    skip_or_fail "fixture $two"
fi

# ---- the interactive view ----

# Expected numbers come from batch mode on the same file, so the screen is
# checked against jprof-top's own exact output.
"$top" -b --jfr "$fixture" --event cpu >"$tmp/cpu.txt" 2>/dev/null
cpu_events=$(awk '{ s += $NF } END { print s }' "$tmp/cpu.txt")
share=$(awk '{ v = $NF; $NF = ""; t += v; if ($0 ~ /Crypto/) m += v }
             END { printf "%.1f", 100 * m / t }' "$tmp/cpu.txt")

if infocmp tmux-256color >/dev/null 2>&1; then
    term=tmux-256color
else
    term=screen
fi

# start NAME COLS ROWS FILE: runs jprof-top in a new tmux session; its exit
# status lands in $tmp/NAME.status.
printf 'set -g status off\nset -g default-terminal %s\n' "$term" >"$tmp/tmux.conf"
start() {
    tmux -L "$sock" -f "$tmp/tmux.conf" new-session -d -s "$1" -x "$2" -y "$3" \
        "LC_ALL=C.UTF-8 '$top' --jfr '$4'; echo \$? > '$tmp/$1.status'; sleep 600"
}
screen() {
    tmux -L "$sock" capture-pane -p -t "$1"
}
# wait_for NAME LINE PATTERN: polls until screen line LINE (1-based; 0 =
# any line; negative = from the bottom) matches the ERE PATTERN.
wait_for() {
    local name=$1 line=$2 pattern=$3 deadline=$((SECONDS + timeout))
    while [ $SECONDS -le "$deadline" ]; do
        if [ -e "$tmp/$name.status" ]; then
            return 1 # exited
        fi
        screen "$name" >"$tmp/screen"
        if [ "$line" -eq 0 ]; then
            grep -qE -- "$pattern" "$tmp/screen" && return 0
        else
            local text
            if [ "$line" -gt 0 ]; then
                text=$(sed -n "${line}p" "$tmp/screen")
            else
                text=$(tail -n $((-line)) "$tmp/screen" | head -1)
            fi
            printf '%s\n' "$text" | grep -qE -- "$pattern" && return 0
        fi
        sleep 0.1
    done
    return 1
}
# step NAME DESCRIPTION LINE PATTERN: a wait_for that reports.
step() {
    if wait_for "$1" "$3" "$4"; then
        pass "$2"
    else
        local why="screen:"
        [ -e "$tmp/$1.status" ] && why="jprof-top exited with $(cat "$tmp/$1.status"); last screen:"
        fail "$2 (line $3 should match /$4/)" "$why" "$(sed 's/^/      | /' "$tmp/screen")"
    fi
}
keys() {
    local name=$1
    shift
    tmux -L "$sock" send-keys -t "$name" "$@"
}
# The selected frame's name, from the status line "total P% N  self P% N  NAME".
selected() {
    screen "$1" | tail -n 2 | head -1 | sed -E 's/.*self [^ ]+ [^ ]+  //; s/ +$//'
}
# ERE-quote a frame name.
quote() {
    printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'
}
# finish NAME: q must end jprof-top with status 0.
finish() {
    keys "$1" q
    local deadline=$((SECONDS + timeout))
    while [ ! -e "$tmp/$1.status" ] && [ $SECONDS -le "$deadline" ]; do
        sleep 0.1
    done
    if [ "$(cat "$tmp/$1.status" 2>/dev/null)" = 0 ]; then
        pass "$1: q quits with exit status 0"
    else
        fail "$1: after q, exit status '$(cat "$tmp/$1.status" 2>/dev/null)' (want 0)"
    fi
}

base=$(basename "$fixture")
start small 80 24 "$fixture"
step small "80x24: header names the file, kind and events" 1 \
    "^$(quote "$base")  cpu: $cpu_events events"
step small "80x24: kinds line shows cpu selected" 2 '^\[cpu\] wall alloc lock park'
step small "80x24: root bar 'all' on top" 4 '^all'
step small "80x24: top table and key bar" 0 'SELF +SELF% +TOTAL +TOTAL% +FRAME \([0-9]+\) under all'

keys small Down Down Down
step small "80x24: Down moves the selection" -2 '^total [0-9.]+% [0-9.kM]+  self '
# on a loaded machine the keys may not have been drawn yet: wait (bounded)
# until the selection has left the root
frame=$(selected small)
deadline=$((SECONDS + timeout))
while [ "$frame" = all ] && [ $SECONDS -le $deadline ]; do
    sleep 0.2
    frame=$(selected small)
done
keys small Enter
step small "80x24: Enter zooms: the zoom line ends with '$frame'" 3 "> $(quote "$frame")( |$)"
step small "80x24: the zoomed frame is the top bar" 4 "^$(quote "$frame")"
step small "80x24: the top table follows the zoom" 0 "FRAME \([0-9]+\) under "
keys small Escape
step small "80x24: Esc zooms back out" 3 '^Zoom: all( |$)'

keys small /
step small "80x24: / opens the search prompt" -2 '^Search \(regex\):'
keys small -l Crypto
keys small Enter
step small "80x24: search shows the matched share ($share%)" -2 "^/Crypto/ $share% \("
keys small n
keys small r
step small "80x24: r shows the callers of a Crypto frame" 3 '^Callers of [^:]*Crypto[^:]*: all'
step small "80x24: the callers view has the frame on its second row" 5 'Crypto'
keys small r
step small "80x24: r again goes back" 3 '^Zoom: all( |$)'

keys small k
step small "80x24: k switches to the next kind (alloc)" 1 "  alloc: [0-9]+ events"
step small "80x24: kinds line shows alloc selected" 2 '^cpu wall \[alloc\] lock park'
keys small 4
step small "80x24: 4 switches to lock" 2 '^cpu wall alloc \[lock\] park'
keys small v
step small "80x24: v shows totals in human units" 2 '\[lock\] park  ns'
keys small 2
step small "80x24: an absent kind is refused with a message" -2 'no wall events in this recording'

tmux -L "$sock" resize-window -t small -x 132 -y 40
step small "resize to 132x40: redrawn at the new size" 0 '\[lock\] park  ns +interp jit'
if [ "$(screen small | wc -l)" -eq 40 ]; then pass "resize to 132x40: 40 rows drawn"; else fail "resize to 132x40: $(screen small | wc -l) rows"; fi
tmux -L "$sock" resize-window -t small -x 30 -y 6
sleep 0.3
step small "resize to 30x6: still running and drawn" 1 "^$(quote "${base:0:10}")"
tmux -L "$sock" resize-window -t small -x 20 -y 2
sleep 0.3
tmux -L "$sock" resize-window -t small -x 80 -y 24
step small "resize back to 80x24: header and kind intact" 1 "^$(quote "$base")  lock: "
finish small

if [ -r "$demo" ]; then
    "$top" -b --jfr "$demo" >"$tmp/demo.txt" 2>/dev/null
    dkind=$(awk 'NR==1 {print}' <("$top" -b --jfr "$demo" -f json 2>/dev/null |
        sed -E 's/.*"kind":"([a-z]+)".*/\1/'))
    dshare=$(awk '{ v = $NF; $NF = ""; t += v; if ($0 ~ /Crypto|Inventory/) m += v }
                  END { printf "%.1f", 100 * m / t }' "$tmp/demo.txt")
    start big 160 50 "$demo"
    step big "160x50: header of demo.jfr" 1 "^demo\\.jfr  $dkind: [0-9]+ events"
    step big "160x50: root bar and legend" 0 'interp jit inl c1 native c\+\+ kernel thread'
    keys big '?'
    step big "160x50: ? shows the help" 0 'Frame colours:'
    keys big x
    step big "160x50: any key closes the help" 3 '^Zoom: all'
    keys big G
    step big "160x50: G shows the GC summary of demo.jfr" 0 '^longest: .* of G1New, cause: '
    step big "160x50: the GC screen points at the Heap screen and the old kind first" 0 \
        'What stays on the heap and what grows: the Heap screen \(H, or --heap'
    step big "160x50: ... and at a heap dump only for paths to GC roots" 0 \
        'a heap dump \(jcmd PID GC\.heap_dump FILE\) only for who holds them \(paths to GC roots\)'
    keys big G
    step big "160x50: G again goes back to the flame graph" 3 '^Zoom: all'
    keys big /
    keys big -l 'Crypto|Inventory'
    keys big Enter
    step big "160x50: search /Crypto|Inventory/ shows $dshare%" -2 "^/Crypto\\|Inventory/ $dshare% \("
    keys big n
    step big "160x50: n selects a match" -2 '  [^ ]*(Crypto|Inventory)[^ ]*$'
    first=$(selected big)
    keys big n
    sleep 0.3
    keys big N
    step big "160x50: n then N comes back to the same match" -2 "  $(quote "$first")\$"
    keys big Tab Down
    step big "160x50: Tab moves to the top table" 0 '^ +SELF +SELF%'
    row=$(screen big | grep -nE '^ +SELF +SELF%' | cut -d: -f1)
    second=$(screen big | sed -n "$((row + 2))p" | cut -c39- | sed 's/ *$//')
    keys big Enter
    step big "160x50: Enter on the table's second row selects '$second'" -2 "  $(quote "$second")\$"
    finish big
else
    skip_or_fail "samples/demo.jfr (created by samples/make-demo.sh)"
fi

# ---- the newer kinds: keys 6-9, with the counts batch mode prints ----
# (batch output equals the JDK's jfr print: test_jfr_oracle.sh)
events_of() { # FILE KIND
    "$top" -b --jfr "$1" --event "$2" 2>/dev/null | awk '{ s += $NF } END { print s + 0 }'
}
all=$fixtures/asprof-all.jfr
mixed=$fixtures/asprof2-cpu-wall.jfr
if [ -r "$all" ] && [ -r "$mixed" ]; then
    start kinds 100 30 "$all"
    step kinds "asprof-all: opens on cpu ($(events_of "$all" cpu) events)" 1 \
        "^asprof-all\.jfr  cpu: $(events_of "$all" cpu) events"
    step kinds "asprof-all: the kinds line lists the kinds it has" 2 \
        '^\[cpu\] wall alloc lock park nativemem live nativelock '
    for kv in "6 nativemem" "7 live" "8 nativelock"; do
        k=${kv#* }
        keys kinds "${kv%% *}"
        step kinds "asprof-all: key ${kv%% *} shows $k ($(events_of "$all" "$k") events)" 1 \
            "^asprof-all\.jfr  $k: $(events_of "$all" "$k") events"
    done
    keys kinds 9
    step kinds "asprof-all: key 9 says the file has no cputime" 0 'no cputime events in this recording'
    finish kinds
    start mixed 100 30 "$mixed"
    step mixed "asprof2-cpu-wall: cpu is the STATE_DEFAULT samples ($(events_of "$mixed" cpu))" 1 \
        "^asprof2-cpu-wall\.jfr  cpu: $(events_of "$mixed" cpu) events"
    keys mixed 2
    step mixed "asprof2-cpu-wall: wall is every other state ($(events_of "$mixed" wall))" 1 \
        "^asprof2-cpu-wall\.jfr  wall: $(events_of "$mixed" wall) events"
    finish mixed
else
    skip_or_fail "fixtures $all and $mixed"
fi

summary
