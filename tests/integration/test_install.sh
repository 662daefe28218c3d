#!/bin/bash
# test_install.sh - `make install DESTDIR=...` as a packager runs it: every
# program lands in PREFIX/bin (tools) or PREFIX/sbin (the daemons), answers
# --version with the build's version and has its man page; the helper jar is
# installed, and a program run from the
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
for p in "$root"/bin/* "$root"/sbin/*; do
    [ -x "$p" ] || continue
    n=$((n + 1))
    name=$(basename "$p")
    case $name in
    jprof-probe-*) # the other architecture's probe (docs/ARM64.md): static, of that
        # architecture, and documented by jprof-probe(1)
        kind=$(file -b "$p")
        want=$([ "${name#jprof-probe-}" = arm64 ] && echo "ARM aarch64" || echo "x86-64")
        grep -q "$want" <<<"$kind" && grep -q "statically linked" <<<"$kind" &&
            pass "$name installed: a static $want program" || fail "$name: $kind"
        continue
        ;;
    esac
    out=$("$p" --version 2>&1)
    if [ $? -eq 0 ] && grep -qF -- "$version" <<<"$out"; then
        pass "$name --version from the staged tree: $out"
    else
        fail "$name --version: '$out' (want $version)"
    fi
    # every installed program has a man page (section 1 in bin, 8 in sbin)
    man=$(find "$root/share/man" -name "$name.[1-8]" | head -n 1)
    [ -n "$man" ] && pass "$name has its man page ${man#"$root"/share/man/}" ||
        fail "$name has no man page under $prefix/share/man"
done
[ $n -ge 3 ] && pass "$n programs installed in $prefix/bin and $prefix/sbin" ||
    fail "only $n programs in $root/bin and $root/sbin"
# the daemons are system programs (man section 8): sbin; the tools: bin
for p in sbin/jprof-agent sbin/jprof-server bin/jprof-top; do
    [ -x "$root/$p" ] && pass "$p installed" || fail "$prefix/$p missing"
done
# jprof-probe is streamed into foreign containers: it must need no library
if [ -x "$root/bin/jprof-probe" ]; then
    if LC_ALL=C ldd "$root/bin/jprof-probe" 2>&1 | grep -Eq 'not a dynamic executable|statically linked'; then
        pass "jprof-probe is statically linked"
    else
        fail "jprof-probe is dynamically linked" "$(ldd "$root/bin/jprof-probe" 2>&1 | head -n 3)"
    fi
fi
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
