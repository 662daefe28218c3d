#!/bin/bash
# test_install.sh - `make install DESTDIR=...` as a packager runs it: every
# program lands in PREFIX/bin and answers --version with the build's version,
# the man pages and the helper jar are installed, and a program run from the
# staged tree finds the helper jar next to itself (PREFIX/share/jprof), not
# the one of the build tree, when it takes a thread snapshot.
# Exit: 0 all passed, 1 some check failed.
set -u

. "$(dirname "$0")/lib.sh"
dest=$(mktemp -d "${TMPDIR:-/tmp}/jprof-install.XXXXXX")
cleanup_dirs+=("$dest")
chmod 755 "$dest"
work=$dest/work
classes=$work/classes
mkdir -p "$work"

if ! make -C "$builddir" install DESTDIR="$dest" >"$dest/install.log" 2>&1; then
    fail "make install DESTDIR=$dest" "$(tail -n 8 "$dest/install.log")"
    summary "install"
fi
prefix=$(sed -n 's/^prefix = //p' "$builddir/Makefile")
root=$dest$prefix
version=$(sed -n 's/^VERSION = //p' "$builddir/Makefile")
n=0
for p in "$root"/bin/*; do
    [ -x "$p" ] || continue
    n=$((n + 1))
    out=$("$p" --version 2>&1)
    if [ $? -eq 0 ] && grep -qF -- "$version" <<<"$out"; then
        pass "$(basename "$p") --version from the staged tree: $out"
    else
        fail "$(basename "$p") --version: '$out' (want $version)"
    fi
done
[ $n -ge 3 ] && pass "$n programs installed in $prefix/bin" || fail "only $n programs in $root/bin"
for m in man1/jprof-top.1 man7/jprof.7 man8/jprof-agent.8 man8/jprof-server.8; do
    [ -s "$root/share/man/$m" ] && pass "man page $m installed" || fail "man page $m missing"
done
jar=$root/share/jprof/jprof-helper.jar
if [ ! -s "$jar" ]; then
    fail "the helper jar is not installed at $jar"
elif ! command -v strace >/dev/null; then
    skip_or_fail "strace (apt-get install strace) to see which helper jar is used"
else
    compile_live_workloads || fail "compiling the live workloads"
    if start_jvm "$jdk17" Deadlocks; then
        env -u JPROF_HELPER_JAR strace -f -e trace=access,openat -o "$dest/strace.out" \
            "$root/bin/jprof-top" -b -p "$jvm_pid" --snapshot helper --format json >"$dest/snap.json" 2>"$dest/err"
        if grep -Eq '"source": *"helper"' "$dest/snap.json" && grep -qF "$jar" "$dest/strace.out" &&
            ! grep -E 'openat.*jprof-helper\.jar' "$dest/strace.out" | grep -vF "$jar" | grep -qF "$builddir/"; then
            pass "the staged jprof-top takes a helper snapshot with the jar next to it"
        else
            fail "staged helper snapshot" "$(head -c 300 "$dest/err")" \
                "$(grep jprof-helper "$dest/strace.out" | head -n 4)"
        fi
        kill "$jvm_pid"
    else
        fail "the Deadlocks workload did not start"
    fi
fi
summary "install"
