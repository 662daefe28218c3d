#!/usr/bin/env python3
"""gc_oracle.py - the GC summary jprof-top must print, computed independently
from the JDK's own `jfr print --json`, and compared with jprof-top's.

Usage: gc_oracle.py --jfr PATH FILE GOT.json [--expect]

GOT.json is the "gc" object of `jprof-top -b --jfr FILE --format json`.
--expect prints the oracle's own numbers instead of comparing.

The definitions (docs: jprof-top(1), "GC"):
  collections    jdk.GarbageCollection events
  pauses         jdk.GCPhasePause events; their durations give the total,
                 the nearest-rank p50 and p99 (rank = ceil(p/100 x n)) and max
  longest        the longest GCPhasePause (the first of equal ones in file
                 order), its name, and the collector (name) and cause of the
                 jdk.GarbageCollection with the same gcId
  heap           per gcId the first "Before GC" and the last "After GC"
                 jdk.GCHeapSummary (by time) when both exist; before/after of
                 the pair with the latest "After GC", min/max of the afters
  alloc          heap growth: the sum over consecutive pairs (by their After
                 time) of max(0, before[i] - after[i-1]), over the time from
                 the first pair's After to the last pair's Before
Every number must be equal to the nanosecond and the byte. Exit 0 when all
match, 1 when any differs, 2 on usage errors.
"""

import argparse
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jfr_oracle import duration_ns, iter_events, timestamp_ns  # noqa: E402

GC_EVENTS = "jdk.GarbageCollection,jdk.GCPhasePause,jdk.GCHeapSummary"


def read_events(jfr, path):
    cmd = [jfr, "print", "--json", "--events", GC_EVENTS, path]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        sys.stderr.write("gc_oracle: %s failed: %s\n" % (" ".join(cmd), proc.stderr.decode(errors="replace")))
        sys.exit(1)
    return list(iter_events(proc.stdout.decode("utf-8", errors="surrogateescape")))


def nearest_rank(sorted_vals, pct):
    rank = math.ceil(pct * len(sorted_vals) / 100)
    return sorted_vals[max(rank, 1) - 1]


def expect(events):
    gcs, pauses, heaps = [], [], []
    for ev in events:
        v = ev["values"]
        if ev["type"] == "jdk.GarbageCollection":
            gcs.append(v)
        elif ev["type"] == "jdk.GCPhasePause":
            pauses.append(v)
        elif ev["type"] == "jdk.GCHeapSummary":
            heaps.append(v)
    out = {"collections": len(gcs), "pauses": len(pauses)}
    durs = [duration_ns(p["duration"]) for p in pauses]
    if durs:
        s = sorted(durs)
        out["pause_total_ns"] = sum(durs)
        out["pause_p50_ns"] = nearest_rank(s, 50)
        out["pause_p99_ns"] = nearest_rank(s, 99)
        out["pause_max_ns"] = s[-1]
        worst = pauses[durs.index(s[-1])]
        gc = next((g for g in gcs if g["gcId"] == worst["gcId"]), None)
        out["longest"] = {
            "gc_id": worst["gcId"],
            "start_ns": timestamp_ns(worst["startTime"]),
            "phase": worst.get("name") or "unknown",
            "collector": (gc or {}).get("name") or "unknown",
            "cause": (gc or {}).get("cause") or "unknown",
        }
    by_id = {}
    for h in sorted(heaps, key=lambda h: timestamp_ns(h["startTime"])):
        pair = by_id.setdefault(h["gcId"], {})
        t = timestamp_ns(h["startTime"])
        if h["when"] == "Before GC" and "before" not in pair:
            pair["before"], pair["before_t"] = h["heapUsed"], t
        elif h["when"] == "After GC":
            pair["after"], pair["after_t"] = h["heapUsed"], t
    pairs = sorted((p for p in by_id.values() if "before" in p and "after" in p), key=lambda p: p["after_t"])
    if pairs:
        afters = [p["after"] for p in pairs]
        out["heap"] = {
            "gcs": len(pairs),
            "before_bytes": pairs[-1]["before"],
            "after_bytes": pairs[-1]["after"],
            "after_min_bytes": min(afters),
            "after_max_bytes": max(afters),
        }
    if len(pairs) >= 2:
        grown = sum(max(0, pairs[i]["before"] - pairs[i - 1]["after"]) for i in range(1, len(pairs)))
        span = pairs[-1]["before_t"] - pairs[0]["after_t"]
        if span > 0:
            out["alloc"] = {"bytes": grown, "span_ns": span, "source": "heap growth between collections"}
    return out


def compare(want, got, path=""):
    bad = []
    for k, w in want.items():
        g = got.get(k) if isinstance(got, dict) else None
        if isinstance(w, dict):
            if not isinstance(g, dict):
                bad.append("%s%s: expected an object, got %r" % (path, k, g))
            else:
                bad += compare(w, g, path + k + ".")
        elif g != w:
            bad.append("%s%s: expected %r, got %r" % (path, k, w, g))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jfr", default=os.environ.get("JFR", "jfr"))
    ap.add_argument("file")
    ap.add_argument("got", nargs="?")
    ap.add_argument("--expect", action="store_true")
    a = ap.parse_args()
    want = expect(read_events(a.jfr, a.file))
    if a.expect or not a.got:
        print(json.dumps(want, indent=1, sort_keys=True))
        return 0
    with open(a.got) as f:
        got = json.load(f)
    bad = compare(want, got)
    for line in bad:
        print(line)
    if not bad:
        print("gc summary matches: %d collections, %d pauses, %s heap pairs" % (
            want["collections"], want["pauses"], want.get("heap", {}).get("gcs", 0)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
