#!/usr/bin/env python3
"""jfr_oracle.py - what `jprof-top -b --format collapsed` must print, computed
independently with the JDK's own `jfr print --json`.

Usage: jfr_oracle.py FILE KIND [--value samples|total] [--threads]
                     [--jfr PATH] [--period-ns N] [--cache DIR] [--count]
                     [--from-ns NS] [--to-ns NS]

KIND is cpu|wall|alloc|lock|park. Prints one line per distinct stack,
`root;...;leaf VALUE`, sorted. Frame names follow jprof's rule: the class name
with '/' turned into '.', then '.' and the method; the bare method for C++ and
Kernel frames, for Native frames with async-profiler's made-up descriptors
("()L;", "(Lk;)L;": their "class" is a library) and for frames without a class;
"[unknown]" for a missing method;
"[no stack]" for an event without a stack trace. --threads puts the thread
name on top (javaName, else osName, else "[tid=N]"; "[unknown thread]").

--value total needs a period for cpu and wall: the oracle does not decode
jdk.ActiveSetting type ids, so the caller passes --period-ns (e.g. 10000000
for a JDK recording made with settings=profile).

--cache DIR keeps the per-stack aggregate of each (file, kind) so that the
variants (samples, total, threads) cost one `jfr print` only. --count prints
the number of events instead of the stacks (to check against `jfr summary`).
--from-ns/--to-ns keep the events with from <= startTime < to (ns since the
epoch), which is what jprof-top's --from/--to mean.

The jfr tool is taken from --jfr, else $JFR, else `jfr` on PATH. Exit 0 on
success, 2 on usage errors, 1 when `jfr print` fails.
"""

import argparse
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys

EVENTS = {
    "cpu": ["jdk.ExecutionSample"],
    "wall": ["profiler.WallClockSample"],
    "alloc": [
        "jdk.ObjectAllocationSample",
        "jdk.ObjectAllocationInNewTLAB",
        "jdk.ObjectAllocationOutsideTLAB",
    ],
    "lock": ["jdk.JavaMonitorEnter"],
    "park": ["jdk.ThreadPark"],
}

# Field holding the event's "size" for --value total of alloc.
ALLOC_FIELD = {
    "jdk.ObjectAllocationSample": "weight",
    "jdk.ObjectAllocationInNewTLAB": "tlabSize",
    "jdk.ObjectAllocationOutsideTLAB": "allocationSize",
}

# java.time.Duration.toString(): PT[-]nH[-]nM[-]n.nnnS, or with a day part.
DURATION_RE = re.compile(
    r"^(?P<sign>-)?P(?:(?P<d>-?\d+)D)?"
    r"(?:T(?:(?P<h>-?\d+)H)?(?:(?P<m>-?\d+)M)?(?:(?P<s>-?\d+)(?:\.(?P<f>\d{1,9}))?S)?)?$"
)


def duration_ns(text):
    """Exact nanoseconds of a java.time.Duration string ("PT0.012345S")."""
    if text is None:
        return 0
    if isinstance(text, (int, float)):
        return int(text)
    m = DURATION_RE.match(text)
    if not m:
        raise ValueError("unparsable duration %r" % text)
    ns = 0
    for key, scale in (("d", 86400), ("h", 3600), ("m", 60)):
        if m.group(key):
            ns += int(m.group(key)) * scale * 1_000_000_000
    if m.group("s"):
        whole = m.group("s")
        frac = int((m.group("f") or "").ljust(9, "0"))
        # Duration prints "-0.5S" as seconds -0 and fraction 5: the sign covers both.
        if whole.startswith("-"):
            ns += int(whole) * 1_000_000_000 - frac
        else:
            ns += int(whole) * 1_000_000_000 + frac
    if m.group("sign"):
        ns = -ns
    return ns


TIME_RE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$")


def timestamp_ns(text):
    """Exact ns since the epoch of an ISO-8601 instant ("...T22:03:41.939639271Z")."""
    m = TIME_RE.match(text or "")
    if not m:
        raise ValueError("unparsable time %r" % text)
    zone = "+00:00" if m.group(3) == "Z" else m.group(3)
    secs = int(datetime.datetime.fromisoformat(m.group(1) + zone).timestamp())
    return secs * 1_000_000_000 + int((m.group(2) or "").ljust(9, "0"))


HIDDEN_SUFFIX = re.compile(r"[/+.]0x")
LAMBDA_COUNTER = re.compile(r"\$\$Lambda\$[0-9]+$")


def stable_class(cname):
    # Same rule as src/jfr/frame_name.c: drop a hidden class's per-run address
    # and a lambda's per-run counter.
    m = HIDDEN_SUFFIX.search(cname)
    if m:
        cname = cname[: m.start()]
    return LAMBDA_COUNTER.sub("$$Lambda", cname)


def frame_name(frame):
    method = frame.get("method")
    if not method or method.get("name") is None:
        return "[unknown]"
    name = method["name"]
    cls = method.get("type") or {}
    cname = cls.get("name") if isinstance(cls, dict) else None
    ftype = frame.get("type")
    if ftype in ("C++", "Kernel"):
        return name
    # async-profiler's own native frames carry a made-up descriptor and the
    # library as their "class"; the JDK's Native frames are Java methods.
    if ftype == "Native" and method.get("descriptor") in ("()L;", "(Lk;)L;"):
        return name
    if not cname:
        # A frame without a class (never seen in JDK files): no ".method".
        return name
    return stable_class(cname).replace("/", ".") + "." + name


def thread_name(thread):
    if not thread:
        return "[unknown thread]"
    if thread.get("javaName"):
        return thread["javaName"]
    if thread.get("osName"):
        return thread["osName"]
    return "[tid=%d]" % (thread.get("osThreadId") or 0)


def event_values(etype, values):
    """(samples, total) of one event; total is None when it needs a period."""
    if etype == "profiler.WallClockSample":
        n = int(values.get("samples") or 0)
        return n, None
    if etype == "jdk.ExecutionSample":
        return 1, None
    if etype in ALLOC_FIELD:
        return 1, int(values.get(ALLOC_FIELD[etype]) or 0)
    return 1, duration_ns(values.get("duration"))


def iter_events(text):
    """Yields the event objects of `jfr print --json` one by one, so that the
    decoded tree of one event at a time is alive (outputs reach hundreds of MB)."""
    dec = json.JSONDecoder()
    start = text.find('"events"')
    if start < 0:
        return
    pos = text.index("[", start) + 1
    n = len(text)
    while pos < n:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n or text[pos] == "]":
            return
        obj, pos = dec.raw_decode(text, pos)
        yield obj


def run_jfr(jfr, path, kind):
    cmd = [jfr, "print", "--json", "--stack-depth", "2048", "--events", ",".join(EVENTS[kind]), path]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        sys.stderr.write("jfr_oracle: %s failed (%d): %s\n" % (" ".join(cmd), proc.returncode, proc.stderr.decode(errors="replace")))
        sys.exit(1)
    return proc.stdout.decode("utf-8", errors="surrogateescape")


def aggregate(jfr, path, kind, window=None):
    """{"thread\\x00stack": [samples, total_or_None, events]} for one file and
    kind, of the events starting in window = (from_ns, to_ns) when given."""
    agg = {}
    for ev in iter_events(run_jfr(jfr, path, kind)):
        etype = ev.get("type")
        if etype not in EVENTS[kind]:
            continue
        values = ev.get("values") or {}
        if window:
            t = timestamp_ns(values.get("startTime"))
            if (window[0] is not None and t < window[0]) or (window[1] is not None and t >= window[1]):
                continue
        thread = values.get("sampledThread", values.get("eventThread"))
        trace = values.get("stackTrace")
        if trace and trace.get("frames"):
            frames = [frame_name(f) for f in reversed(trace["frames"])]
        else:
            frames = ["[no stack]"]
        key = thread_name(thread) + "\x00" + ";".join(frames)
        samples, total = event_values(etype, values)
        cell = agg.setdefault(key, [0, 0, 0])
        cell[0] += samples
        cell[1] = None if (total is None or cell[1] is None) else cell[1] + total
        cell[2] += 1
    return agg


def cached_aggregate(jfr, path, kind, cache, window=None):
    if not cache:
        return aggregate(jfr, path, kind, window)
    st = os.stat(path)
    me = os.stat(os.path.abspath(__file__)).st_mtime_ns  # a changed naming rule invalidates it
    ident = "%s|%d|%d|%s|%s|%s|%d" % (os.path.abspath(path), st.st_size, st.st_mtime_ns, kind, jfr, window, me)
    fname = os.path.join(cache, "oracle-" + hashlib.sha1(ident.encode()).hexdigest() + ".json")
    try:
        with open(fname) as f:
            return json.load(f)
    except (OSError, ValueError):
        pass
    agg = aggregate(jfr, path, kind, window)
    os.makedirs(cache, exist_ok=True)
    tmp = fname + ".tmp%d" % os.getpid()
    with open(tmp, "w") as f:
        json.dump(agg, f)
    os.replace(tmp, fname)
    return agg


def main():
    ap = argparse.ArgumentParser(description="collapsed stacks of a JFR file via the JDK's jfr tool")
    ap.add_argument("file")
    ap.add_argument("kind", choices=sorted(EVENTS))
    ap.add_argument("--value", choices=["samples", "total"], default="samples")
    ap.add_argument("--threads", action="store_true")
    ap.add_argument("--jfr", default=os.environ.get("JFR") or "jfr")
    ap.add_argument("--period-ns", type=int, default=None)
    ap.add_argument("--cache", default=os.environ.get("JFR_ORACLE_CACHE"))
    ap.add_argument("--count", action="store_true", help="print the number of events only")
    ap.add_argument("--from-ns", type=int, default=None)
    ap.add_argument("--to-ns", type=int, default=None)
    a = ap.parse_args()

    if a.value == "total" and a.kind in ("cpu", "wall") and a.period_ns is None:
        ap.error("--value total of %s needs --period-ns" % a.kind)

    window = None
    if a.from_ns is not None or a.to_ns is not None:
        window = (a.from_ns, a.to_ns)
    agg = cached_aggregate(a.jfr, a.file, a.kind, a.cache, window)
    if a.count:
        print(sum(c[2] for c in agg.values()))
        return 0

    out = {}
    for key, (samples, total, _events) in agg.items():
        thread, stack = key.split("\x00", 1)
        name = thread + ";" + stack if a.threads else stack
        if a.value == "samples":
            v = samples
        elif a.kind in ("cpu", "wall"):
            v = samples * a.period_ns
        else:
            v = total
        out[name] = out.get(name, 0) + v
    lines = sorted("%s %d" % (k, v) for k, v in out.items())
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
