#!/bin/bash
# test_jfr_oracle.sh - jprof-top's batch collapsed output against the JDK's
# own `jfr print --json` (tests/integration/jfr_oracle.py), stack by stack.
#
# Records the test workload with JDK 17 and JDK 25 (once per run, kept in
# tests/integration/jfr-oracle.d/ of the build dir), then compares, for every
# profile kind, the exact set of `stack value` lines: samples, totals, the
# --threads view, the async-profiler fixtures, a two-chunk file, a file cut
# in its last chunk, a file with a wrong magic and an empty file. The GC
# summary ("gc" of --format json: pauses, longest, heap before/after,
# allocation rate from heap growth) against gc_oracle.py, to the ns and byte.
#
# Environment (all optional):
#   JPROF_TOP        the jprof-top binary (default ./jprof-top, run from the build dir)
#   JPROF_FIXTURES   async-profiler fixtures (default SRCDIR/tests/fixtures/jfr)
#   JDK17_HOME       default /usr/lib/jvm/java-17-openjdk-amd64
#   JDK25_HOME       default /usr/lib/jvm/temurin-25-jdk-amd64
#   JPROF_WORKLOAD_CLASSES  compiled workload (default tests/java/classes)
#   RECORD_SECONDS   length of each recording (default 10)
#   CI=true          a missing JDK, tool or fixture fails instead of skipping
# Exit: 0 all passed, 1 some case failed, 77 nothing could run (not in CI).
set -u

. "$(dirname "$0")/lib.sh"
top=${JPROF_TOP:-$builddir/jprof-top}
fixtures=${JPROF_FIXTURES:-$srcdir/tests/fixtures/jfr}
secs=${RECORD_SECONDS:-10}
oracle="$here/jfr_oracle.py"
work=$builddir/tests/integration/jfr-oracle.d
export JPROF_WORKLOAD_CLASSES=${JPROF_WORKLOAD_CLASSES:-$builddir/tests/java/classes}
export JFR_ORACLE_CACHE=$work/cache
# 10 ms: record-jfr.sh pins jdk.ExecutionSample#period at this value.
period_ns=10000000

nmissing=0

# A missing prerequisite: loud, and a failure under CI=true.
missing() {
    nmissing=$((nmissing + 1))
    if [ "${CI:-}" = true ]; then
        echo "FAIL: missing under CI=true: $1" >&2
        echo "FAIL: missing under CI=true: $1"
        nfail=$((nfail + 1))
    else
        echo "MISSING (not tested): $1" >&2
        echo "MISSING (not tested): $1"
    fi
}

finish() {
    if [ "$nfail" -eq 0 ] && [ "$npass" -eq 0 ]; then
        echo "$npass passed, $nfail failed"
        echo "SKIP: nothing could be tested (see MISSING lines above)" >&2
        exit 77
    fi
    summary
}

csort() {
    LC_ALL=C sort
}

# sum_collapsed FILE... : adds the values of equal stacks (multi-chunk expectations).
sum_collapsed() {
    cat "$@" | awk '{
        i = match($0, / -?[0-9]+$/)
        if (i == 0) { print "bad line: " $0 > "/dev/stderr"; next }
        a[substr($0, 1, i - 1)] += substr($0, i + 1)
    } END { for (k in a) printf "%s %.0f\n", k, a[k] }' | csort
}

# run_top OUT ERR ARGS... : runs jprof-top -b, returns its exit status.
run_top() {
    local out=$1 err=$2
    shift 2
    "$top" -b "$@" >"$out" 2>"$err"
}

# compare NAME EXPECTED_FILE TOP_ARGS... : exact comparison of sorted lines.
compare() {
    local name=$1 exp=$2
    shift 2
    local got=$work/got.txt err=$work/got.err rc
    run_top "$got.raw" "$err" "$@"
    rc=$?
    csort <"$got.raw" >"$got"
    csort <"$exp" >"$exp.sorted"
    if [ $rc -ne 0 ]; then
        fail "$name: jprof-top exited $rc" "command: jprof-top -b $*" "stderr: $(head -c 400 "$err")"
        return
    fi
    if [ ! -s "$exp.sorted" ]; then
        fail "$name: the oracle found no events (the recording lacks this kind)"
        return
    fi
    if cmp -s "$exp.sorted" "$got"; then
        pass "$name ($(wc -l <"$got") stacks)"
        return
    fi
    local d
    d=$(diff "$exp.sorted" "$got" | grep '^[<>]' | cut -c1-600 | head -n 12)
    fail "$name: output differs from the oracle ('<' expected, '>' jprof-top)" \
        "command: jprof-top -b $*" \
        "expected $(wc -l <"$exp.sorted") stacks, got $(wc -l <"$got")" "$d"
}

# oracle OUT FILE JFRTOOL KIND ARGS...
oracle() {
    local out=$1 file=$2 tool=$3
    shift 3
    if ! python3 "$oracle" --jfr "$tool" "$file" "$@" >"$out"; then
        fail "oracle failed on $file $*"
        return 1
    fi
}

# check_file LABEL FILE JFRTOOL KINDS TOTAL_KINDS THREAD_KINDS CPU_TOTAL(yes|no)
check_file() {
    local label=$1 file=$2 tool=$3 kinds=$4 totals=$5 threads=$6 cputotal=$7 k
    local exp=$work/exp.txt
    for k in $kinds; do
        oracle "$exp" "$file" "$tool" "$k" || continue
        compare "$label $k samples" "$exp" --jfr "$file" --event "$k" --format collapsed --value samples
        case " $totals " in
        *" $k "*)
            oracle "$exp" "$file" "$tool" "$k" --value total || continue
            compare "$label $k total" "$exp" --jfr "$file" --event "$k" --format collapsed --value total
            ;;
        esac
        case " $threads " in
        *" $k "*)
            oracle "$exp" "$file" "$tool" "$k" --threads || continue
            compare "$label $k samples --threads" "$exp" --jfr "$file" --event "$k" --format collapsed --threads
            ;;
        esac
        if [ "$cputotal" = yes ] && [ "$k" = cpu ]; then
            oracle "$exp" "$file" "$tool" cpu --value total --period-ns "$period_ns" || continue
            compare "$label cpu total (samples x 10 ms)" "$exp" --jfr "$file" --event cpu --format collapsed --value total
        fi
    done
}

# check_args NAME FILE JFRTOOL KIND ORACLE_ONLY ARGS... : the oracle and
# jprof-top both get ARGS (--value, --threads, --state, --leak, --tail mean
# the same to both); the oracle also ORACLE_ONLY (e.g. "--period-ns N").
check_args() {
    local name=$1 file=$2 tool=$3 k=$4 only=$5 exp=$work/exp-args.txt
    shift 5
    # shellcheck disable=SC2086 # ORACLE_ONLY is split on purpose
    oracle "$exp" "$file" "$tool" "$k" $only "$@" || return
    compare "$name" "$exp" --jfr "$file" --event "$k" --format collapsed "$@"
}

# compare_sum NAME FILE KIND VALUE PART1 TOOL1 PART2 TOOL2 : FILE is PART1
# followed by PART2, so its stacks are the sums of theirs.
compare_sum() {
    local name=$1 file=$2 k=$3 val=$4 p1=$5 t1=$6 p2=$7 t2=$8
    oracle "$work/ea.txt" "$p1" "$t1" "$k" --value "$val" || return
    oracle "$work/eb.txt" "$p2" "$t2" "$k" --value "$val" || return
    sum_collapsed "$work/ea.txt" "$work/eb.txt" >"$work/exp-sum.txt"
    compare "$name" "$work/exp-sum.txt" --jfr "$file" --event "$k" --format collapsed --value "$val"
}

# expect_damage NAME FILE EXPECTED_STDOUT|- ARGS... : non-zero exit, an error
# naming the file on stderr, and exactly the expected lines (or none) on stdout.
expect_damage() {
    local name=$1 file=$2 exp=$3
    shift 3
    local out=$work/dmg.out err=$work/dmg.err rc base
    run_top "$out" "$err" --jfr "$file" "$@"
    rc=$?
    base=$(basename "$file")
    if [ $rc -eq 0 ]; then
        fail "$name: jprof-top exited 0 on damaged input" "stderr: $(head -c 300 "$err")"
        return 1
    fi
    if ! grep -q -- "$base" "$err"; then
        fail "$name: the error does not name the file $base" "stderr: $(head -c 300 "$err")"
        return 1
    fi
    if [ "$exp" = - ]; then
        if [ -s "$out" ]; then
            fail "$name: printed stacks from a file with nothing valid" "stdout: $(head -c 300 "$out")"
            return 1
        fi
    else
        csort <"$out" >"$out.sorted"
        csort <"$exp" >"$exp.sorted"
        if ! cmp -s "$exp.sorted" "$out.sorted"; then
            fail "$name: the partial output differs from the oracle of the intact chunk" \
                "$(diff "$exp.sorted" "$out.sorted" | grep '^[<>]' | cut -c1-600 | head -n 8)"
            return 1
        fi
    fi
    pass "$name (exit $rc: $(head -n 1 "$err" | cut -c1-200))"
}

# check_io_detail LABEL FILE JFRTOOL: --io-detail's endpoints and paths
# (events, ns blocked) against the oracle's, exactly; the plain io output
# holds none of them (they stay out of the profile).
check_io_detail() {
    local label=$1 f=$2 tool=$3 exp=$work/io-exp.txt got=$work/io-got.txt
    if ! python3 "$oracle" --jfr "$tool" "$f" io --io-detail >"$exp" || [ ! -s "$exp" ]; then
        fail "$label io --io-detail: the oracle found no I/O events"
        return
    fi
    if ! "$top" -b --jfr "$f" --io-detail --format json 2>"$work/io.err" | python3 -c '
import json, sys
d = json.load(sys.stdin)["io_detail"]
rows = []
for side, t, col in (("sockets", "socket", "endpoint"), ("files", "file", "path")):
    listed = 0
    for r in d[side]["top"]:
        rows.append("%s\t%s\t%d\t%d" % (t, r[col], r["events"], r["blocked_ns"]))
        listed += r["events"]
    assert listed + d[side]["unlisted_events"] == d[side]["events"], side
print("\n".join(sorted(rows)))' >"$got"; then
        fail "$label io --io-detail: jprof-top failed" "$(head -c 300 "$work/io.err")"
        return
    fi
    if cmp -s "$exp" "$got"; then
        pass "$label io --io-detail: $(grep -c '^socket' "$got") endpoints, $(grep -c '^file' "$got") files, events and ns as jfr print says"
    else
        fail "$label io --io-detail differs from the oracle ('<' expected, '>' jprof-top)" \
            "$(diff "$exp" "$got" | grep '^[<>]' | cut -c1-300 | head -n 8)"
    fi
    local ep
    ep=$(awk -F '\t' '$1 == "socket" { print $2; exit }' "$exp")
    if "$top" -b --jfr "$f" --io-detail | grep -qF -- "$ep"; then
        pass "$label io --io-detail text: lists $ep"
    else
        fail "$label io --io-detail text: $ep missing"
    fi
    if "$top" -b --jfr "$f" --event io --format json | grep -qF -- "$ep"; then
        fail "$label io: the endpoint $ep is in the plain JSON output (it must stay out of the profile)"
    else
        pass "$label io: no endpoint in the profile's own JSON"
    fi
}

# ---- prerequisites ----
if [ ! -x "$top" ]; then
    echo "FAIL: no jprof-top at $top (run make first)"
    exit 99
fi
if ! command -v python3 >/dev/null; then
    missing "python3 (needed by the oracle)"
    finish
fi
rm -rf "$work"
mkdir -p "$work" || exit 99

jdks=""
for j in "17:$jdk17" "25:$jdk25"; do
    v=${j%%:*}
    h=${j#*:}
    if [ -x "$h/bin/java" ] && [ -x "$h/bin/jfr" ]; then
        jdks="$jdks $v"
    else
        missing "JDK $v not found at $h (set JDK${v}_HOME); its recordings are not tested"
    fi
done

jdk_home() {
    if [ "$1" = 17 ]; then echo "$jdk17"; else echo "$jdk25"; fi
}
# Any available jfr tool reads the async-profiler fixtures.
anyjfr=""
for v in $jdks; do
    anyjfr=${anyjfr:-$(jdk_home "$v")/bin/jfr}
done

# ---- record (in parallel: the wall time is what bounds the test) ----
recorders=""
for v in $jdks; do
    # JDK 25's CPU-time sampler (JEP 509) is off in every .jfc: switched on
    # here, at the 10 ms the JDK's profile.jfc names.
    extra=""
    [ "$v" = 25 ] && extra="jdk.CPUTimeSample#enabled=true,jdk.CPUTimeSample#throttle=10ms"
    # the workload's socket and file I/O too (kind io), and garbage (GC summary)
    JPROF_WORKLOAD_IO=1 JPROF_WORKLOAD_GC=1 JPROF_JFR_EXTRA=$extra "$here/record-jfr.sh" "$(jdk_home "$v")" "$work/jdk$v.jfr" "$secs" \
        2>"$work/record$v.log" &
    recorders="$recorders $!"
done
for p in $recorders; do
    wait "$p" || true
done
recorded=""
for v in $jdks; do
    if [ -s "$work/jdk$v.jfr" ]; then
        recorded="$recorded $v"
        pass "JDK $v recording made ($(wc -c <"$work/jdk$v.jfr") bytes)"
    else
        fail "JDK $v recording failed" "$(head -c 600 "$work/record$v.log")"
    fi
done

# ---- warm the oracle's cache, one background job per recording: `jfr print
# --json` and its parsing are most of this test's time, and there are 2 cores ----
warm=""
for v in $recorded; do
    (for k in cpu alloc lock park io old; do
        python3 "$oracle" --jfr "$(jdk_home "$v")/bin/jfr" "$work/jdk$v.jfr" "$k" --count >/dev/null 2>&1
    done) &
    warm="$warm $!"
done
for p in $warm; do
    wait "$p" || true
done

# ---- JDK recordings ----
for v in $recorded; do
    f=$work/jdk$v.jfr
    tool=$(jdk_home "$v")/bin/jfr
    for k in cpu alloc lock park io old; do
        n=$(python3 "$oracle" --jfr "$tool" "$f" "$k" --count)
        if [ "${n:-0}" -gt 0 ]; then
            pass "JDK $v recording has $n $k events"
        else
            fail "JDK $v recording has no $k events (workload or recording settings broken)"
        fi
    done
    check_file "jdk$v" "$f" "$tool" "cpu alloc lock park io old" "alloc lock park io old" "cpu" yes
    # the time blocked in I/O is the workload's: Orders.awaitReply waits for
    # the peer's answer (JDK 22+ reports I/O events from the caller's frame)
    if "$top" -b --jfr "$f" --event io --format top 2>/dev/null | sed -n 3,10p |
        grep -q 'shop\.Orders\.awaitReply\|java\.net\.Socket\$SocketInputStream\.read'; then
        pass "jdk$v io: the socket read Orders.awaitReply waits in is among the top frames"
    else
        fail "jdk$v io: no socket read among the top frames" "$("$top" -b --jfr "$f" --event io --format top 2>&1 | head -10)"
    fi
    check_io_detail "jdk$v" "$f" "$tool"
    if [ "$v" = 25 ]; then
        n=$(python3 "$oracle" --jfr "$tool" "$f" cputime --count)
        if [ "${n:-0}" -gt 0 ]; then
            pass "JDK 25 recording has $n jdk.CPUTimeSample events"
            check_file "jdk25" "$f" "$tool" cputime cputime cputime no
            lost=$(python3 "$oracle" --jfr "$tool" "$f" cputime --lost)
            got=$("$top" -b --jfr "$f" --event cputime --format json 2>/dev/null |
                python3 -c 'import json,sys; print(json.load(sys.stdin)["meta"]["lost_samples"])')
            if [ "$lost" = "$got" ]; then
                pass "jdk25 cputime: lost samples reported ($got, as jdk.CPUTimeSamplesLost says)"
            else
                fail "jdk25 cputime: lost samples $got, jdk.CPUTimeSamplesLost says $lost"
            fi
        else
            fail "JDK 25 recording has no jdk.CPUTimeSample (jdk.CPUTimeSample#enabled=true ignored?)"
        fi
    fi
done

# ---- the GC summary: jprof-top's "gc" against gc_oracle.py (jfr print --json) ----
check_gc() {
    local v=$1 f=$2 tool=$3 got=$work/gc-got$1.json out
    if ! "$top" -b --jfr "$f" --format json 2>"$work/gc.err" |
        python3 -c 'import json,sys; json.dump(json.load(sys.stdin)["gc"], sys.stdout)' >"$got"; then
        fail "jdk$v gc: no \"gc\" object in --format json" "$(head -c 300 "$work/gc.err")"
        return
    fi
    if out=$(python3 "$here/gc_oracle.py" --jfr "$tool" "$f" "$got"); then
        pass "jdk$v gc: $out; pause count, total, p50/p99/max, longest, heap, alloc as jfr print says"
    else
        fail "jdk$v gc: the summary differs from jfr print" "$(echo "$out" | head -n 8)"
    fi
    # the workload's garbage made young collections and one System.gc()
    if python3 - "$got" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
ok = g["collections"] >= 5 and g["pauses"] >= 5 and g["heap"] and g["alloc"] and g["recorded"]
sys.exit(0 if ok else 1)
PY
    then
        pass "jdk$v gc: the churn workload's collections are there ($(python3 -c 'import json,sys; g=json.load(open(sys.argv[1])); print(g["collections"], "collections,", g["pauses"], "pauses, max", g["pause_max_ns"], "ns")' "$got"))"
    else
        fail "jdk$v gc: too few collections for the churn workload" "$(head -c 400 "$got")"
    fi
    if "$tool" print --events jdk.GarbageCollection "$f" | grep -q 'cause = "System.gc()"'; then
        pass "jdk$v gc: the workload's System.gc() is recorded"
    else
        fail "jdk$v gc: no System.gc() collection in the recording"
    fi
    "$top" -b --jfr "$f" --format gc >"$work/gc.txt" 2>&1
    if grep -q '^longest: .* of G1' "$work/gc.txt" && grep -q 'heap dump' "$work/gc.txt" &&
        grep -q '^|.*[@]' "$work/gc.txt"; then
        pass "jdk$v gc: --format gc names the longest pause's collector, draws the pauses, says what JFR cannot tell"
    else
        fail "jdk$v gc: --format gc text incomplete" "$(head -n 12 "$work/gc.txt")"
    fi
}
for v in $recorded; do
    check_gc "$v" "$work/jdk$v.jfr" "$(jdk_home "$v")/bin/jfr"
done

# ---- a time window: --from/--to as RFC 3339 instants inside the first JDK recording ----
# shellcheck disable=SC2086 # split on purpose: one word per JDK
set -- $recorded
if [ $# -ge 1 ]; then
    f=$work/jdk$1.jfr
    tool=$(jdk_home "$1")/bin/jfr
    # From 30 % to 60 % of the chunk (start and duration are header bytes 32..47).
    read -r from_ns to_ns from_txt to_txt <<<"$(python3 - "$f" <<'PY'
import datetime, struct, sys
h = open(sys.argv[1], "rb").read(48)
start, dur = struct.unpack(">qq", h[32:48])
def rfc(ns):
    t = datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % (ns % 10**9)
a, b = start + dur * 3 // 10, start + dur * 6 // 10
print(a, b, rfc(a), rfc(b))
PY
)"
    for k in cpu alloc; do
        oracle "$work/exp.txt" "$f" "$tool" "$k" --from-ns "$from_ns" --to-ns "$to_ns" || continue
        n_win=$(awk '{ s += $NF } END { print s + 0 }' "$work/exp.txt")
        n_all=$(python3 "$oracle" --jfr "$tool" "$f" "$k" --count)
        if [ "$n_win" -le 0 ] || [ "$n_win" -ge "$n_all" ]; then
            fail "jdk$1 $k --from/--to: the window holds $n_win of $n_all events; the case would prove nothing"
            continue
        fi
        compare "jdk$1 $k samples --from $from_txt --to $to_txt ($n_win of $n_all events)" "$work/exp.txt" \
            --jfr "$f" --event "$k" --format collapsed --from "$from_txt" --to "$to_txt"
    done
fi

# ---- the recording shipped for the README (samples/make-demo.sh, JDK 17) ----
demo=$srcdir/samples/demo.jfr
if [ ! -r "$demo" ]; then
    fail "samples/demo.jfr is missing (samples/make-demo.sh re-creates it)"
elif [ -x "$jdk17/bin/jfr" ]; then
    check_file "demo.jfr" "$demo" "$jdk17/bin/jfr" "cpu alloc lock park" "alloc lock park" "" yes
fi

# ---- async-profiler fixtures (tests/fixtures/jfr/README.md says how each was made) ----
# Every kind each file has, stack for stack and frame name for frame name:
# native, C++, kernel and vdso frames (asprof-native), the itimer and ctimer
# engines, the threads option, and a JDK 25 target.
if [ -z "$anyjfr" ]; then
    missing "no jfr tool: the fixtures cannot be checked"
else
    for spec in \
        "asprof-cpu-alloc-lock|cpu alloc lock park|alloc lock park|cpu park" \
        "asprof-wall|wall||wall" \
        "asprof-native|cpu||cpu" \
        "asprof-itimer|cpu||" \
        "asprof-ctimer|cpu||" \
        "asprof-threads|cpu||cpu" \
        "asprof-jdk25|cpu alloc lock park|alloc lock park|lock"; do
        IFS='|' read -r name kinds totals threads <<<"$spec"
        fx=$fixtures/$name.jfr
        if [ ! -r "$fx" ]; then
            fail "fixture $fx is missing (it ships with the project)"
            continue
        fi
        check_file "$name" "$fx" "$anyjfr" "$kinds" "$totals" "$threads" no
    done
    # The native fixture must really hold what it is there for.
    fx=$fixtures/asprof-native.jfr
    if [ -r "$fx" ]; then
        "$top" -b --jfr "$fx" --event cpu --format collapsed >"$work/native.txt" 2>/dev/null
        for want in '(^|;)__vdso_clock_gettime(;| )' '(^|;)do_syscall_64(;| )' '(^|;)os::javaTimeNanos(;| )'; do
            if grep -Eq "$want" "$work/native.txt"; then
                pass "asprof-native: a bare frame matching /$want/"
            else
                fail "asprof-native: no frame matching /$want/" "$(head -c 300 "$work/native.txt")"
            fi
        done
        if grep -Eq '(^|;)(vdso|libc\.so\.6|libjvm\.so)\.' "$work/native.txt"; then
            fail "asprof-native: a native frame carries its library as a class" \
                "$(grep -Eo '(^|;)(vdso|libc\.so\.6|libjvm\.so)\.[^;]*' "$work/native.txt" | head -3)"
        else
            pass "asprof-native: native frames print bare, whatever their library"
        fi
    fi
    # The two-chunk fixture is the two files above, concatenated. The JDK's
    # jfr tool misreads its second chunk (it resolves constant pool keys of
    # chunk 2 against chunk 1's pools: async-profiler restarts its keys in
    # every chunk), so the expectation is the sum of the two parts.
    fx=$fixtures/asprof-two-chunks.jfr
    p1=$fixtures/asprof-cpu-alloc-lock.jfr
    p2=$fixtures/asprof-wall.jfr
    if [ -r "$fx" ] && [ -r "$p1" ] && [ -r "$p2" ]; then
        for kv in "cpu samples" "alloc samples" "alloc total" "lock samples" "lock total" "park samples" "wall samples"; do
            # shellcheck disable=SC2086 # "kind value"
            set -- $kv
            compare_sum "asprof-two-chunks $1 $2" "$fx" "$1" "$2" "$p1" "$anyjfr" "$p2" "$anyjfr"
        done
    else
        fail "fixture $fx or its parts are missing (they ship with the project)"
    fi
fi

# ---- the kinds of the newer recorders (tests/fixtures/jfr/README.md) ----
# async-profiler 2.x's mixed cpu+wall file: jdk.ExecutionSample split by
# thread state, cpu + wall = every sample, and --state on both; native
# memory (with the leak pairing and the tail rule), live objects and native
# locks; asprof-all holds all of them next to cpu.
check_new_kinds() {
    local fx=$fixtures/asprof2-cpu-wall.jfr f
    if [ ! -r "$fx" ]; then
        fail "fixture $fx is missing (it ships with the project)"
        return
    fi
    check_args "asprof2-cpu-wall cpu samples" "$fx" "$anyjfr" cpu ""
    check_args "asprof2-cpu-wall wall samples" "$fx" "$anyjfr" wall ""
    check_args "asprof2-cpu-wall cpu total (x 10 ms)" "$fx" "$anyjfr" cpu "--period-ns 10000000" --value total
    check_args "asprof2-cpu-wall wall total (x 20 ms)" "$fx" "$anyjfr" wall "--period-ns 20000000" --value total
    check_args "asprof2-cpu-wall wall --threads" "$fx" "$anyjfr" wall "" --threads
    check_args "asprof2-cpu-wall wall --state RUNNABLE" "$fx" "$anyjfr" wall "" --state RUNNABLE
    check_args "asprof2-cpu-wall wall --state state_sleeping" "$fx" "$anyjfr" wall "" --state state_sleeping
    check_args "asprof2-cpu-wall cpu --state STATE_DEFAULT" "$fx" "$anyjfr" cpu "" --state STATE_DEFAULT
    check_args "asprof2-cpu-wall wall --state RUNNABLE,SLEEPING" "$fx" "$anyjfr" wall "" --state RUNNABLE,SLEEPING
    local ncpu nwall nall
    ncpu=$("$top" -b --jfr "$fx" --event cpu | awk '{ s += $NF } END { print s + 0 }')
    nwall=$("$top" -b --jfr "$fx" --event wall | awk '{ s += $NF } END { print s + 0 }')
    nall=$("$anyjfr" summary "$fx" | awk '$1 == "jdk.ExecutionSample" { print $2 }')
    if [ "$ncpu" -gt 0 ] && [ "$nwall" -gt 0 ] && [ $((ncpu + nwall)) = "${nall:-x}" ]; then
        pass "asprof2-cpu-wall: cpu $ncpu + wall $nwall = $nall jdk.ExecutionSample"
    else
        fail "asprof2-cpu-wall: cpu $ncpu + wall $nwall != ${nall:-?} jdk.ExecutionSample"
    fi
    for spec in "asprof-nativemem|nativemem" "asprof-live|live alloc" \
        "asprof-nativelock|nativelock" "asprof-all|cpu nativemem live nativelock alloc"; do
        IFS='|' read -r name kinds <<<"$spec"
        f=$fixtures/$name.jfr
        if [ ! -r "$f" ]; then
            fail "fixture $f is missing (it ships with the project)"
            continue
        fi
        local nocpu=${kinds/cpu /}
        check_file "$name" "$f" "$anyjfr" "$kinds" "$nocpu" "$kinds" no
        case " $kinds " in
        *" nativemem "*)
            check_args "$name nativemem --leak" "$f" "$anyjfr" nativemem "" --leak
            check_args "$name nativemem --leak total" "$f" "$anyjfr" nativemem "" --leak --value total
            check_args "$name nativemem --leak --tail 0" "$f" "$anyjfr" nativemem "" --leak --tail 0 --value total
            check_args "$name nativemem --leak --tail 0.5 --threads" "$f" "$anyjfr" nativemem "" --leak --tail 0.5 --threads
            ;;
        esac
    done
    # A kind the file lacks is a message naming the kinds it has.
    f=$fixtures/asprof-nativemem.jfr
    if "$top" -b --jfr "$f" --event cpu >"$work/lack.out" 2>"$work/lack.err"; then
        fail "asprof-nativemem --event cpu: exit 0 for a kind the file lacks"
    elif grep -q "no cpu events; kinds present: nativemem" "$work/lack.err"; then
        pass "asprof-nativemem --event cpu: $(head -c 160 "$work/lack.err")"
    else
        fail "asprof-nativemem --event cpu: unclear message" "$(head -c 300 "$work/lack.err")"
    fi
    if "$top" -b --jfr "$f" >"$work/only.out" 2>"$work/only.err" && [ -s "$work/only.out" ]; then
        pass "asprof-nativemem without --event: read (only nativemem events)"
    else
        fail "asprof-nativemem without --event: rejected" "$(head -c 300 "$work/only.err")"
    fi
}
if [ -n "$anyjfr" ]; then
    check_new_kinds
fi

# ---- chunks in parallel: the output of --jobs N is the serial output ----
check_jobs() {
    local f=$1 label=$2 k fmt a b bad=0 n=0
    for k in cpu wall alloc lock park nativemem live nativelock cputime; do
        for fmt in collapsed top json; do
            run_top "$work/j1.out" "$work/j1.err" --jfr "$f" --event "$k" --format "$fmt" --threads --jobs 1
            a=$?
            run_top "$work/j4.out" "$work/j4.err" --jfr "$f" --event "$k" --format "$fmt" --threads --jobs 4
            b=$?
            n=$((n + 1))
            if [ $a != $b ] || ! cmp -s "$work/j1.out" "$work/j4.out" || ! cmp -s "$work/j1.err" "$work/j4.err"; then
                fail "$label $k $fmt: --jobs 4 differs from --jobs 1 (exit $a vs $b)" \
                    "$(diff "$work/j1.out" "$work/j4.out" | head -c 400)"
                bad=1
            fi
        done
    done
    run_top "$work/j1.out" "$work/j1.err" --jfr "$f" --event nativemem --leak --jobs 1
    run_top "$work/j4.out" "$work/j4.err" --jfr "$f" --event nativemem --leak --jobs 4
    cmp -s "$work/j1.out" "$work/j4.out" || { fail "$label nativemem --leak: --jobs 4 differs"; bad=1; }
    run_top "$work/j1.out" "$work/j1.err" --jfr "$f" --io-detail --format json --jobs 1
    run_top "$work/j4.out" "$work/j4.err" --jfr "$f" --io-detail --format json --jobs 4
    cmp -s "$work/j1.out" "$work/j4.out" || { fail "$label --io-detail: --jobs 4 differs"; bad=1; }
    [ $bad = 0 ] && pass "$label: --jobs 4 prints what --jobs 1 prints ($n kind/format pairs, --leak, --io-detail)"
    # The events read through mapped windows of the file (JPROF_JFR_READ,
    # src/jfr/src.h) instead of copied by pread: the same output.
    bad=0
    for k in cpu wall alloc lock nativemem; do
        for j in 1 4; do
            JPROF_JFR_READ=pread run_top "$work/j1.out" "$work/j1.err" --jfr "$f" --event "$k" --format json --jobs "$j"
            a=$?
            JPROF_JFR_READ=map run_top "$work/j4.out" "$work/j4.err" --jfr "$f" --event "$k" --format json --jobs "$j"
            b=$?
            if [ $a != $b ] || ! cmp -s "$work/j1.out" "$work/j4.out"; then
                fail "$label $k --jobs $j: mapped differs from pread (exit $b vs $a)" \
                    "$(diff "$work/j1.out" "$work/j4.out" | head -c 400)"
                bad=1
            fi
        done
    done
    [ $bad = 0 ] && pass "$label: read through mapped windows, --jobs 1 and 4 print what pread reads give"
    JPROF_JFR_READ=mmap run_top "$work/j4.out" "$work/j4.err" --jfr "$f" --event cpu
    a=$?
    if [ $a = 2 ] && grep -q 'JPROF_JFR_READ=mmap: say auto, map or pread' "$work/j4.err"; then
        pass "JPROF_JFR_READ=mmap is refused (exit 2): $(head -n 1 "$work/j4.err")"
    else
        fail "JPROF_JFR_READ=mmap: exit $a, $(head -c 200 "$work/j4.err")"
    fi
}
many=$work/many-chunks.jfr
: >"$many"
for x in asprof-two-chunks asprof-all asprof2-cpu-wall asprof-jdk25 asprof-nativemem asprof-live; do
    [ -r "$fixtures/$x.jfr" ] && cat "$fixtures/$x.jfr" >>"$many"
done
for v in $recorded; do cat "$work/jdk$v.jfr" >>"$many"; done
if [ -s "$many" ]; then
    check_jobs "$many" "fixtures and recordings as one many-chunk file"
fi

# ---- a file of two chunks from two different JDKs: the sum of both ----
# Each chunk carries its own metadata and type ids. (The JDK's jfr tool itself
# cannot read this file, it reuses the first chunk's metadata; the expectation
# is therefore computed from the two files apart.)
# shellcheck disable=SC2086 # split on purpose: one word per JDK
set -- $recorded
if [ $# -ge 2 ]; then
    a=$work/jdk$1.jfr
    b=$work/jdk$2.jfr
    ta=$(jdk_home "$1")/bin/jfr
    tb=$(jdk_home "$2")/bin/jfr
    multi=$work/multi-chunk.jfr
    cat "$a" "$b" >"$multi"
    for k in cpu alloc lock park; do
        for val in samples total; do
            [ "$val" = total ] && [ "$k" = cpu ] && continue
            compare_sum "multi-chunk (jdk$1+jdk$2) $k $val" "$multi" "$k" "$val" "$a" "$ta" "$b" "$tb"
        done
    done

    # Two chunks of the same JVM (what chunk rotation produces): twice one file.
    same=$work/same-jdk.jfr
    cat "$a" "$a" >"$same"
    for k in cpu alloc; do
        compare_sum "multi-chunk (jdk$1+jdk$1) $k samples" "$same" "$k" samples "$a" "$ta" "$a" "$ta"
    done

    # ---- the mixed file cut in the middle of its second chunk ----
    la=$(wc -c <"$a")
    lb=$(wc -c <"$b")
    cut_at=$((la + lb / 2))
    trunc=$work/truncated.jfr
    head -c "$cut_at" "$multi" >"$trunc"
    for k in cpu alloc; do
        oracle "$work/ea.txt" "$a" "$ta" "$k" || continue
        if expect_damage "truncated second chunk $k" "$trunc" "$work/ea.txt" \
            --event "$k" --format collapsed --value samples; then
            # The message must say where: which chunk, at which byte offset.
            err=$work/dmg.err
            if ! grep -Eq 'chunk[ #]*[12]\b' "$err"; then
                fail "truncated second chunk $k: the error does not name the chunk" "stderr: $(head -c 300 "$err")"
            fi
            off=$(grep -Eo '@ ?0x[0-9a-fA-F]+|offset [0-9]+|@ ?[0-9]+' "$err" | head -n 1 | grep -Eo '0x[0-9a-fA-F]+|[0-9]+$')
            if [ -z "$off" ]; then
                fail "truncated second chunk $k: the error gives no byte offset" "stderr: $(head -c 300 "$err")"
            elif [ $((off)) -lt "$la" ] || [ $((off)) -gt "$cut_at" ]; then
                fail "truncated second chunk $k: offset $off is outside the damaged chunk [$la, $cut_at]" \
                    "stderr: $(head -c 300 "$err")"
            else
                pass "truncated second chunk $k: error names chunk and offset $off"
            fi
        fi
    done
else
    missing "two JDK recordings are needed for the multi-chunk and truncation cases"
fi

# ---- inputs that are not JFR at all ----
src=""
for v in $recorded; do src=${src:-$work/jdk$v.jfr}; done
[ -z "$src" ] && [ -r "$fixtures/asprof-wall.jfr" ] && src=$fixtures/asprof-wall.jfr
if [ -n "$src" ]; then
    bad=$work/wrong-magic.jfr
    { printf 'FLX\0'; tail -c +5 "$src"; } >"$bad"
    expect_damage "wrong magic" "$bad" - --event cpu --format collapsed
fi
empty=$work/empty.jfr
: >"$empty"
expect_damage "empty file" "$empty" - --event cpu --format collapsed
expect_damage "missing file" "$work/no-such-file.jfr" - --event cpu --format collapsed

finish
