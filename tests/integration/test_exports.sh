#!/bin/bash
# test_exports.sh - jprof-top's exports read back by tools that owe nothing
# to jprof: `--format pprof` decoded by protoc (with the pprof schema in
# pprof_profile.proto) must give exactly the collapsed stacks and totals of
# `--format collapsed`, for every kind of the fixtures and the demo
# recording, with and without thread labels.
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
for k in cpu alloc lock; do
    unit=nanoseconds
    [ "$k" = alloc ] && unit=bytes
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

summary "exports"
