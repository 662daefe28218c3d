# shellcheck shell=bash disable=SC2034,SC2154
# lib.sh - the set-up the shell integration tests share; sourced by them
# (`. "$(dirname "$0")/lib.sh"`), never run on its own.
#
# Gives: here, srcdir, builddir (the directory the test runs from), jdk17 and
# jdk25 (from JDK17_HOME / JDK25_HOME); pass/fail counters and `summary`, the
# final "N passed, N failed" line; skip_or_fail for a missing prerequisite
# (loud, and a failure under CI=true, where nothing may be skipped);
# have_jdk25; compile_live_workloads and start_jvm for tests/java/*.java; and
# copy_for_any_user (a program another user may run); and an EXIT trap that
# ends every process in `pids` and the tmux server named by `tmux_sock`, if
# the test set one, and removes the `cleanup_dirs`.

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
builddir=$(pwd)
jdk17=${JDK17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
jdk25=${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}

npass=0
nfail=0
pids=()
tmux_sock=
cleanup_dirs=()

pass() {
    echo "PASS: $1"
    npass=$((npass + 1))
}

# fail WHAT [DETAIL LINES...]; a test may define on_fail to show more (the
# screen of a tmux test, say).
fail() {
    echo "FAIL: $1"
    shift
    for line in "$@"; do
        echo "      $line"
    done
    nfail=$((nfail + 1))
    if declare -F on_fail >/dev/null; then
        on_fail
    fi
}

# summary [LABEL]: the final count line; exits 0 when nothing failed, else 1.
summary() {
    echo "${1:+$1: }$npass passed, $nfail failed"
    [ "$nfail" -eq 0 ] || exit 1
    exit 0
}

# skip_or_fail WHAT: a prerequisite is missing. Says so on both streams, then
# skips (77); under CI=true it is a failure instead.
skip_or_fail() {
    if [ "${CI:-}" = true ]; then
        echo "FAIL (CI): $1" >&2
        fail "missing under CI=true: $1"
        summary
    fi
    echo "SKIP: $1" >&2
    echo "SKIP: $1"
    exit 77
}

# have_jdk25: true when JDK 25 is there; else a note, or a failure under CI.
have_jdk25() {
    [ -x "$jdk25/bin/java" ] && return 0
    if [ "${CI:-}" = true ]; then
        fail "JDK 25 not found at $jdk25"
    else
        echo "note: JDK 25 not found at $jdk25; its cases are not run"
    fi
    return 1
}

cleanup() {
    local p d
    if [ -n "$tmux_sock" ]; then
        tmux -L "$tmux_sock" kill-server >/dev/null 2>&1
    fi
    for p in "${pids[@]}"; do
        kill -CONT "$p" 2>/dev/null
        kill "$p" 2>/dev/null
    done
    wait 2>/dev/null
    for d in "${cleanup_dirs[@]}"; do
        rm -rf "$d"
    done
}
trap cleanup EXIT

# copy_for_any_user PROGRAM: sets any_user_copy to a copy of PROGRAM that
# every user may run, whatever the checkout's location (under root's home
# or a mktemp -d directory, mode 0700, another user cannot reach the build
# tree): in a fresh directory under /tmp, not $TMPDIR, which may be such a
# directory too. Removed on exit.
copy_for_any_user() {
    local d
    any_user_copy=
    d=$(mktemp -d /tmp/jprof-any-user.XXXXXX) || return 1
    cleanup_dirs+=("$d")
    chmod 755 "$d" && cp "$1" "$d/" && chmod 755 "$d/${1##*/}" || return 1
    any_user_copy=$d/${1##*/}
}

# compile_live_workloads: tests/java/Deadlocks.java and Contention.java into
# $classes (package live) with JDK 17's javac, when missing or out of date;
# $work/cwd is the workloads' working directory.
compile_live_workloads() {
    [ -x "$jdk17/bin/javac" ] || skip_or_fail "JDK 17 not found at $jdk17"
    mkdir -p "$work/cwd"
    if [ ! -f "$classes/live/Contention.class" ] ||
        [ "$srcdir/tests/java/Contention.java" -nt "$classes/live/Contention.class" ] ||
        [ "$srcdir/tests/java/Deadlocks.java" -nt "$classes/live/Deadlocks.class" ]; then
        rm -rf "$classes" && mkdir -p "$classes"
        "$jdk17/bin/javac" --release 17 -d "$classes" "$srcdir/tests/java/Deadlocks.java" \
            "$srcdir/tests/java/Contention.java" || {
            fail "compiling the workloads"
            exit 1
        }
    fi
}

declare -A jvm_outs # pid -> the JVM's stdout and stderr (start_jvm)

# jvm_attach_thread PID: the JVM's Attach Listener stack now (SIGQUIT's
# thread dump goes to the JVM's output): where a load or a command is stuck
jvm_attach_thread() {
    local out=${jvm_outs[$1]:-}
    [ -n "$out" ] && kill -QUIT "$1" 2>/dev/null || return 0
    sleep 1
    awk '/^"Attach Listener"/ { p = 1 } p && /^$/ { exit } p' "$out" | tail -n 25 | sed 's/^/ /'
}

# start_jvm JAVA_HOME CLASS [JVM OPTIONS...]: runs live.CLASS from $classes
# in $work/cwd; sets $jvm_pid (also added to pids) once it printed "ready".
start_jvm() {
    local home=$1 cls=$2
    shift 2
    local out="$work/$cls.$RANDOM.out"
    (cd "$work/cwd" && exec "$home/bin/java" -Xmx64m "$@" -cp "$classes" "live.$cls" 600 >"$out" 2>&1) &
    jvm_pid=$!
    jvm_outs[$jvm_pid]=$out
    pids+=("$jvm_pid")
    for _ in $(seq 100); do
        grep -q ready "$out" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "      $cls did not get ready: $(cat "$out")"
    return 1
}
