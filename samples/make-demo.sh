#!/bin/sh
# make-demo.sh [JAVA_HOME] - re-creates samples/demo.jfr, the small recording
# the README opens first (`jprof-top --jfr samples/demo.jfr`).
#
# It is the test workload (tests/java/JprofWorkload.java: a CPU-bound
# checkout, an allocating catalog, monitor and ReentrantLock contention,
# Condition and parkNanos waits) recorded for a few seconds by JDK 17 with the
# `profile` settings plus TLAB allocation events and 1 ms lock/park thresholds
# (tests/integration/record-jfr.sh). GC phase events, which say nothing about
# the code, are left out and parks are kept from 2 ms to keep the file under
# 400 KB; so are the environment
# variables and process list of the recording machine, which a file shipped
# with the project has no business carrying.
#
# Environment: DEMO_SECONDS (default 4), DEMO_OUT (default samples/demo.jfr).
set -u
here=$(cd "$(dirname "$0")" && pwd)
jhome=${1:-/usr/lib/jvm/java-17-openjdk-amd64}
secs=${DEMO_SECONDS:-4}
out=${DEMO_OUT:-$here/demo.jfr}
limit=400000

off=jdk.GCPhaseParallel,jdk.GCPhasePauseLevel1,jdk.GCPhasePauseLevel2
off=$off,jdk.PromoteObjectInNewPLAB,jdk.PromoteObjectOutsidePLAB
off=$off,jdk.InitialEnvironmentVariable,jdk.SystemProcess
extra=$(echo "$off" | sed 's/,/#enabled=false,/g; s/$/#enabled=false/')
# Parks of 1-2 ms are mostly the contended box oversleeping a 0.2 ms parkNanos.
extra=$extra,jdk.ThreadPark#threshold=2ms
JPROF_JFR_EXTRA=$extra \
    "$here/../tests/integration/record-jfr.sh" "$jhome" "$out.tmp" "$secs" || exit 1
size=$(wc -c <"$out.tmp")
if [ "$size" -ge "$limit" ]; then
    echo "make-demo.sh: $out.tmp is $size bytes, over the $limit byte budget; try DEMO_SECONDS=$((secs - 1))" >&2
    exit 1
fi
mv "$out.tmp" "$out"
echo "wrote $out ($size bytes)"
