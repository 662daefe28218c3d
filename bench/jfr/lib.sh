# shellcheck shell=bash
# bench/jfr/lib.sh - what the JFR benchmarks share; sourced, never run.
# Needs: runs (runs per measurement), timecmd (/usr/bin/time), dir (scratch).

# measure CMD... : prints the best elapsed seconds, the CPU seconds (user+sys)
# of that run and the max RSS in KB over $runs runs. Peak RSS comes from
# /usr/bin/time %M; the times from python's clock and getrusage, which have
# microsecond resolution (/usr/bin/time prints only hundredths).
measure() {
    python3 - "$runs" "$timecmd" "$dir" "$@" <<'PY'
import resource, subprocess, sys, time
runs, timecmd, d, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
best, cpu, rss = None, 0.0, 0
for _ in range(runs):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(d + "/stderr.txt", "w") as err:
        rc = subprocess.call([timecmd, "-f", "%M", "-o", d + "/time.txt"] + cmd,
                             stdout=subprocess.DEVNULL, stderr=err)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        sys.stderr.write("  (exit %d: %s)\n" % (rc, open(d + "/stderr.txt").read(200)))
    e = t1 - t0
    c = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if best is None or e < best:
        best, cpu = e, c
    with open(d + "/time.txt") as f:
        rss = max(rss, int(f.read().split()[-1]))
print("%.3f %d %.3f" % (best, rss, cpu))
PY
}

rate() { # BYTES_OR_EVENTS SECONDS SCALE
    awk -v n="$1" -v s="$2" -v k="$3" 'BEGIN { if (s <= 0) s = 0.0005; printf "%.2f", n / s / k }'
}

fmt='%-33s %-5s %8s %7s %8s %8s %10s %8s %7s\n'
# row TOOL KIND BYTES EVENTS "SECONDS RSS_KB CPU_SECONDS"
row() {
    local tool=$1 kind=$2 bytes=$3 n=$4 s rss cpu
    read -r s rss cpu <<<"$5"
    # shellcheck disable=SC2059
    printf "$fmt" "$tool" "$kind" "$s" "$cpu" "$(rate "$bytes" "$s" 1e6)" "$(rate "$bytes" "$cpu" 1e6)" \
        "$n" "$(rate "$n" "$s" 1e6)" "$(rate "$rss" 1 1024)"
}

mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
