#!/bin/sh
# record-jfr.sh JAVA_HOME OUT.jfr SECONDS - records the test workload with the
# JDK's own Flight Recorder.
#
# Settings: the JDK's `profile` settings, plus TLAB allocation events (off in
# profile.jfc) and 1 ms thresholds for monitor enter and park (10 ms in
# profile.jfc) so every profile kind of jprof has events. The sampling period
# is pinned at 10 ms so tests know what --value total of cpu must be.
#
# Environment:
#   JPROF_WORKLOAD_CLASSES  directory holding shop/JprofWorkload.class; when
#                           unset the workload is compiled into a temp dir
#   JPROF_JFR_EXTRA         more comma-separated recording options, e.g.
#                           "jdk.GCPhaseParallel#enabled=false"
#   JPROF_JAVA_OPTS         more JVM options (default -Xmx256m)
#   JPROF_WORKLOAD_IO=1     the workload also does socket and file I/O
#                           (-Dworkload.io=true), recorded with the four
#                           I/O events at a 0 ms threshold (kind io)
#   JPROF_WORKLOAD_GC=1     the workload also churns garbage (-Dworkload.gc=true):
#                           young collections and one System.gc(); the
#                           profile settings record the GC events
# Exit status 0 when OUT.jfr was written, 1 otherwise (the JVM log is shown).
set -u

if [ $# -ne 3 ]; then
    echo "usage: $0 JAVA_HOME OUT.jfr SECONDS" >&2
    exit 2
fi
jhome=$1
out=$2
secs=$3
here=$(cd "$(dirname "$0")" && pwd)

if [ ! -x "$jhome/bin/java" ]; then
    echo "record-jfr.sh: no java in $jhome/bin" >&2
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/jprof-rec.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

classes=${JPROF_WORKLOAD_CLASSES:-}
if [ -z "$classes" ] || [ ! -f "$classes/shop/JprofWorkload.class" ]; then
    classes=$tmp/classes
    if ! "$jhome/bin/javac" -d "$classes" "$here/../java/JprofWorkload.java" >"$tmp/javac.log" 2>&1; then
        echo "record-jfr.sh: javac failed:" >&2
        cat "$tmp/javac.log" >&2
        exit 1
    fi
fi

settings="settings=profile"
settings="$settings,jdk.ObjectAllocationInNewTLAB#enabled=true"
settings="$settings,jdk.ObjectAllocationOutsideTLAB#enabled=true"
settings="$settings,jdk.JavaMonitorEnter#threshold=1ms"
settings="$settings,jdk.ThreadPark#threshold=1ms"
settings="$settings,jdk.ExecutionSample#period=10ms"
io=""
if [ "${JPROF_WORKLOAD_IO:-0}" = 1 ]; then
    io=-Dworkload.io=true
    for e in SocketRead SocketWrite FileRead FileWrite; do
        settings="$settings,jdk.$e#threshold=0ms"
    done
fi
gc=""
if [ "${JPROF_WORKLOAD_GC:-0}" = 1 ]; then
    gc=-Dworkload.gc=true
fi
if [ -n "${JPROF_JFR_EXTRA:-}" ]; then
    settings="$settings,$JPROF_JFR_EXTRA"
fi

rm -f "$out"
# dumponexit writes the recording when the workload calls System.exit.
# shellcheck disable=SC2086
"$jhome/bin/java" ${JPROF_JAVA_OPTS:--Xmx256m} $io $gc \
    "-XX:StartFlightRecording=$settings,dumponexit=true,filename=$out" \
    -cp "$classes" shop.JprofWorkload "$secs" >"$tmp/java.log" 2>&1
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$out" ]; then
    echo "record-jfr.sh: recording with $jhome failed (exit $rc); JVM output:" >&2
    cat "$tmp/java.log" >&2
    exit 1
fi
exit 0
