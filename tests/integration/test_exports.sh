#!/bin/bash
# test_exports.sh - jprof-top's exports read back by tools that owe nothing
# to jprof: `--format pprof` decoded by protoc (with the pprof schema in
# pprof_profile.proto) must give exactly the collapsed stacks and totals of
# `--format collapsed`, for every kind of the fixtures and the demo
# recording, with and without thread labels. Then comparisons (--diff): two
# recordings of the workload whose hot method moved (-Dworkload.hot=mix)
# must show the old method shrinking and the new one growing, with sides
# that add up to each recording's totals.
#
# Environment (all optional):
#   JPROF_TOP       the jprof-top binary (default ./jprof-top, run from the build dir)
#   JPROF_FIXTURES  async-profiler fixtures (default SRCDIR/tests/fixtures/jfr)
#   CI=true         a missing protoc fails instead of skipping
# Exit: 0 all passed, 1 some case failed, 77 nothing could run (not in CI).
set -u

. "$(dirname "$0")/lib.sh"
top=${JPROF_TOP:-$builddir/jprof-top}
fixtures=${JPROF_FIXTURES:-$srcdir/tests/fixtures/jfr}
[ -x "$top" ] || skip_or_fail "jprof-top binary $top (build it first: make jprof-top)"
command -v protoc >/dev/null 2>&1 || skip_or_fail "protoc (apt-get install protobuf-compiler)"
work=$(mktemp -d "${TMPDIR:-/tmp}/jprof-exports.XXXXXX")
cleanup_dirs+=("$work")

# decode FILE.pb.gz ARGS...: the collapsed lines protoc's reading gives
decode() {
    local f=$1
    shift
    gzip -dc "$f" | protoc --proto_path="$here" --decode=perftools.profiles.Profile \
        "$here/pprof_profile.proto" | python3 "$here/pprof_collapsed.py" "$@"
}

# check NAME FILE KIND UNIT [--threads]
check() {
    local name=$1 file=$2 kind=$3 unit=$4 threads=${5:-}
    local pb=$work/out.pb.gz
    if ! "$top" -b --jfr "$file" --event "$kind" --format pprof $threads >"$pb" 2>"$work/err"; then
        fail "$name: --format pprof failed" "$(head -c 300 "$work/err")"
        return
    fi
    if ! gzip -t "$pb" 2>/dev/null || ! gzip -dc "$pb" | protoc --decode_raw >/dev/null 2>&1; then
        fail "$name: not a gzipped protobuf"
        return
    fi
    local v
    for v in samples total; do
        decode "$pb" --value "$v" $threads >"$work/got" || { fail "$name $v: protoc could not decode it"; continue; }
        "$top" -b --jfr "$file" --event "$kind" --format collapsed --value "$v" $threads >"$work/want" 2>/dev/null
        if [ "$(head -n 1 "$work/got")" != "# $kind $unit" ]; then
            fail "$name: sample type '$(head -n 1 "$work/got")', want '# $kind $unit'"
        elif tail -n +2 "$work/got" | cmp -s - "$work/want"; then
            pass "$name $v${threads:+ $threads}: pprof = collapsed ($(wc -l <"$work/want") stacks)"
        else
            fail "$name $v${threads:+ $threads}: pprof differs from collapsed" \
                "$(tail -n +2 "$work/got" | diff - "$work/want" | head -n 6)"
        fi
    done
}

for spec in "asprof-cpu-alloc-lock.jfr cpu nanoseconds" "asprof-cpu-alloc-lock.jfr alloc bytes" \
    "asprof-cpu-alloc-lock.jfr lock nanoseconds" "asprof-cpu-alloc-lock.jfr park nanoseconds" \
    "asprof-wall.jfr wall nanoseconds" "asprof-native.jfr cpu nanoseconds"; do
    # shellcheck disable=SC2086 # "file kind unit"
    set -- $spec
    [ -r "$fixtures/$1" ] || { fail "fixture $fixtures/$1 is missing (it ships with the project)"; continue; }
    check "${1%.jfr} $2" "$fixtures/$1" "$2" "$3"
done
check "asprof-cpu-alloc-lock cpu" "$fixtures/asprof-cpu-alloc-lock.jfr" cpu nanoseconds --threads
for k in cpu alloc lock old; do
    unit=nanoseconds
    [ "$k" = alloc ] || [ "$k" = old ] && unit=bytes
    check "demo.jfr $k" "$srcdir/samples/demo.jfr" "$k" "$unit" --threads
done

# a kind the file lacks: an error naming it, nothing on stdout
if "$top" -b --jfr "$fixtures/asprof-wall.jfr" --event cpu --format pprof >"$work/none" 2>"$work/err"; then
    fail "pprof of a missing kind: exit 0"
elif [ -s "$work/none" ]; then
    fail "pprof of a missing kind: wrote output"
else
    pass "pprof of a missing kind: exit non-zero, $(head -n 1 "$work/err")"
fi

# ---- comparisons: the hot method moves from Crypto.hashLoop to Crypto.mixLoop ----
export JPROF_WORKLOAD_CLASSES=${JPROF_WORKLOAD_CLASSES:-$builddir/tests/java/classes}
# DebugNonSafepoints: samples name the inlined method they were taken in,
# not the nearest safepoint's, so each recording's hot loop is its own.
jopts="-Xmx256m -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints"
if ! JPROF_JAVA_OPTS="$jopts" "$here/record-jfr.sh" "$jdk17" "$work/old.jfr" 5 >"$work/rec.log" 2>&1 ||
    ! JPROF_JAVA_OPTS="$jopts -Dworkload.hot=mix" "$here/record-jfr.sh" "$jdk17" "$work/new.jfr" 5 \
        >>"$work/rec.log" 2>&1; then
    fail "recording the two workloads" "$(tail -n 5 "$work/rec.log")"
else
    diff_top() { "$top" -b --jfr "$work/new.jfr" --diff "$work/old.jfr" --event cpu --format top "$@"; }
    diff_top >"$work/top.txt" 2>"$work/err"
    # rows: OLD-SELF NEW-SELF CHANGE OLD-TOTAL NEW-TOTAL CHANGE NAME
    row() { awk -v n="$1" '$7 == n' "$work/top.txt"; }
    hash=$(row shop.Crypto.hashLoop)
    mix=$(row shop.Crypto.mixLoop)
    # (counts, not rates: a loaded machine gives a 5 s recording fewer
    # samples: 52 in one CI run while other tests ran)
    if [ -n "$mix" ] && awk '{ exit !($1 == 0 && $2 >= 20 && $3 ~ /^\+/) }' <<<"$mix"; then
        pass "diff: the new hot method grows from nothing ($mix)"
    else
        fail "diff: Crypto.mixLoop row '$mix'" "$(head -n 5 "$work/top.txt")"
    fi
    # (another thread of the workload keeps calling hashLoop a little)
    if [ -n "$hash" ] && awk '{ exit !($1 >= 20 && $2 < $1 / 4 && $3 ~ /^-/) }' <<<"$hash"; then
        pass "diff: the old hot method shrinks ($hash)"
    else
        fail "diff: Crypto.hashLoop row '$hash'" "$(head -n 5 "$work/top.txt")"
    fi
    first=$(sed -n 3p "$work/top.txt" | awk '{ print $7 }')
    case $first in
    shop.Crypto.hashLoop | shop.Crypto.mixLoop) pass "diff: the biggest change comes first ($first)" ;;
    *) fail "diff: first row is $first" "$(head -n 5 "$work/top.txt")" ;;
    esac
    # collapsed "stack OLD NEW" with no normalisation: each side sums to its own file
    for v in samples total; do
        "$top" -b --jfr "$work/new.jfr" --diff "$work/old.jfr" --event cpu --normalize none \
            --value "$v" >"$work/diff.txt" 2>"$work/err"
        "$top" -b --jfr "$work/old.jfr" --event cpu --value "$v" >"$work/old.txt" 2>/dev/null
        "$top" -b --jfr "$work/new.jfr" --event cpu --value "$v" >"$work/new.txt" 2>/dev/null
        got=$(awk '{ o += $(NF-1); n += $NF } END { printf "%.0f %.0f", o, n }' "$work/diff.txt")
        want=$(awk '{ s += $NF } END { printf "%.0f", s }' "$work/old.txt")" "$(awk '{ s += $NF } END { printf "%.0f", s }' "$work/new.txt")
        if [ "$got" = "$want" ]; then
            pass "diff --normalize none --value $v: the sides add up to each file ($got)"
        else
            fail "diff --normalize none --value $v: sums '$got', want '$want'"
        fi
        # every stack of either file is there, with its own counts
        join -a1 -a2 -e 0 -o 0,1.2,2.2 <(sed 's/ \([0-9]*\)$/\t\1/' "$work/old.txt" | sort -t $'\t' -k1,1) \
            <(sed 's/ \([0-9]*\)$/\t\1/' "$work/new.txt" | sort -t $'\t' -k1,1) -t $'\t' |
            tr '\t' ' ' | sort >"$work/want-diff.txt"
        sort "$work/diff.txt" >"$work/got-diff.txt"
        if cmp -s "$work/got-diff.txt" "$work/want-diff.txt"; then
            pass "diff --value $v: every stack of both files with both counts ($(wc -l <"$work/got-diff.txt") stacks)"
        else
            fail "diff --value $v: stacks differ from the two files" "$(diff "$work/got-diff.txt" "$work/want-diff.txt" | head -n 4)"
        fi
    done
    # json: the root carries both sides, normalised per second here
    "$top" -b --jfr "$work/new.jfr" --diff "$work/old.jfr" --event cpu --format json --normalize second \
        >"$work/diff.json" 2>"$work/err"
    if python3 - "$work/diff.json" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
m, t = d["meta"], d["tree"]
assert m["normalised"] == "second" and t["total"] == m["new_total"], (m, t["total"])
assert abs(t["base_total"] - m["baseline_total"]) < 1e-6, (t["base_total"], m)
def sums(n, name, acc):
    if n["name"] == name:
        acc[0] += n["base_total"]
        acc[1] += n["total"]
    for c in n["children"]:
        sums(c, name, acc)
    return acc
mix, old = sums(t, "shop.Crypto.mixLoop", [0, 0]), sums(t, "shop.Crypto.hashLoop", [0, 0])
assert mix[0] == 0 and mix[1] > 0, mix
assert old[0] > 0 and old[1] < old[0] / 4, old
PY
        pass "diff --format json: both sides per node, grown and shrunk frames"
    else
        fail "diff --format json" "$(head -c 300 "$work/diff.json")"
    fi
    if "$top" -b --jfr "$work/new.jfr" --diff "$work/old.jfr" --event wall >/dev/null 2>"$work/err"; then
        fail "diff of a kind neither file has: exit 0"
    else
        grep -q "no wall events" "$work/err" && pass "diff of a missing kind: $(cat "$work/err")" ||
            fail "diff of a missing kind: $(cat "$work/err")"
    fi
fi

summary "exports"
