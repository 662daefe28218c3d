#!/usr/bin/env python3
"""jfr_oracle.py - what `jprof-top -b --format collapsed` must print, computed
independently with the JDK's own `jfr print --json`.

Usage: jfr_oracle.py FILE KIND [--value samples|total] [--threads]
                     [--jfr PATH] [--period-ns N] [--cache DIR] [--count]
                     [--from-ns NS] [--to-ns NS] [--state S[,S]]
                     [--leak [--tail F]] [--lost]
       jfr_oracle.py FILE io --io-detail [--jfr PATH]

KIND is cpu|wall|alloc|lock|park|nativemem|live|nativelock|cputime|io|old. Prints
one line per distinct stack,
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

Kinds and thread states, from the printed events only: jdk.ExecutionSample
is cpu, except in async-profiler files, where STATE_DEFAULT is cpu and every
other state wall (a file is async-profiler's when one of its samples has
STATE_DEFAULT, or its jdk.ActiveSetting "event" is "wall"); --state keeps
the samples whose printed `state` is listed (case-insensitive, "RUNNABLE"
short for "STATE_RUNNABLE"). nativemem is profiler.Malloc (total = size);
--leak pairs it with profiler.Free: events in time order (file order breaks
ties), a malloc counts when no later free has its address, and when its
time t <= max - int(tail * (max - min)) over all Malloc/Free times. live is
profiler.LiveObject (allocationSize), nativelock profiler.NativeLock
(duration), cputime jdk.CPUTimeSample (samplingPeriod), old
jdk.OldObjectSample (objectSize; 0 where the JDK does not record it). --lost prints the sum
of jdk.CPUTimeSamplesLost.lostSamples instead of stacks.

--io-detail (kind io only) prints what `jprof-top -b --io-detail` lists
instead of stacks: one line "TYPE<TAB>NAME<TAB>EVENTS<TAB>NS" per socket
endpoint ("host:port", the address when host is empty, IPv6 in brackets)
and per file path ("[no path]" when the event has none), sorted.

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
    "cpu": ["jdk.ExecutionSample", "jdk.ActiveSetting"],
    "wall": ["profiler.WallClockSample", "jdk.ExecutionSample", "jdk.ActiveSetting"],
    "alloc": [
        "jdk.ObjectAllocationSample",
        "jdk.ObjectAllocationInNewTLAB",
        "jdk.ObjectAllocationOutsideTLAB",
    ],
    "lock": ["jdk.JavaMonitorEnter"],
    "park": ["jdk.ThreadPark"],
    "nativemem": ["profiler.Malloc", "profiler.Free"],
    "live": ["profiler.LiveObject"],
    "nativelock": ["profiler.NativeLock"],
    "cputime": ["jdk.CPUTimeSample", "jdk.CPUTimeSamplesLost"],
    "io": ["jdk.SocketRead", "jdk.SocketWrite", "jdk.FileRead", "jdk.FileWrite"],
    "old": ["jdk.OldObjectSample"],
}

# Field holding the event's total for kinds whose value is not a duration.
SIZE_FIELD = {
    "profiler.Malloc": "size",
    "profiler.LiveObject": "allocationSize",
    "jdk.OldObjectSample": "objectSize",  # JDK 17 has none: 0
}
DURATION_FIELD = {
    "jdk.CPUTimeSample": "samplingPeriod",
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
    if etype in SIZE_FIELD:
        return 1, int(values.get(SIZE_FIELD[etype]) or 0)
    return 1, duration_ns(values.get(DURATION_FIELD.get(etype, "duration")))


def norm_state(s):
    s = (s or "").strip().upper()
    return s if s.startswith("STATE_") else "STATE_" + s


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


# jfr print is a short batch job: C1 and the serial collector take a third
# less CPU than the defaults (make check shares two cores with other tests).
JFR_JVM_OPTS = ["-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"]


def run_jfr(jfr, path, kind):
    cmd = [jfr] + JFR_JVM_OPTS + ["print", "--json", "--stack-depth", "2048", "--events",
                                  ",".join(EVENTS[kind]), path]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        sys.stderr.write("jfr_oracle: %s failed (%d): %s\n" % (" ".join(cmd), proc.returncode, proc.stderr.decode(errors="replace")))
        sys.exit(1)
    return proc.stdout.decode("utf-8", errors="surrogateescape")


def stack_key(values):
    if STACK_KEY in values:
        return values[STACK_KEY]
    thread = values.get("sampledThread", values.get("eventThread"))
    trace = values.get("stackTrace")
    if trace and trace.get("frames"):
        frames = [frame_name(f) for f in reversed(trace["frames"])]
    else:
        frames = ["[no stack]"]
    return thread_name(thread) + "\x00" + ";".join(frames)


def add(agg, key, samples, total):
    cell = agg.setdefault(key, [0, 0, 0])
    cell[0] += samples
    cell[1] = None if (total is None or cell[1] is None) else cell[1] + total
    cell[2] += 1


def select(kind, events, states, leak, tail):
    """(etype, values) of the events that make up `kind`, in file order."""
    execs = [v for t, v in events if t == "jdk.ExecutionSample"]
    ap = any(v.get("state") == "STATE_DEFAULT" for v in execs) or any(
        v.get("name") == "event" and v.get("value") == "wall"
        for t, v in events if t == "jdk.ActiveSetting")
    out = []
    for etype, values in events:
        if etype == "jdk.ActiveSetting" or etype == "jdk.CPUTimeSamplesLost":
            continue
        if etype == "jdk.ExecutionSample":
            is_cpu = values.get("state") == "STATE_DEFAULT" or not ap
            if is_cpu != (kind == "cpu"):
                continue
        if states is not None and etype in ("jdk.ExecutionSample", "profiler.WallClockSample"):
            if norm_state(values.get("state")) not in states:
                continue
        out.append((etype, values))
    if kind == "nativemem":
        out = leaks(out, tail) if leak else [(t, v) for t, v in out if t == "profiler.Malloc"]
    return out


def leaks(events, tail):
    """The mallocs of `events` (Malloc and Free, file order) never freed later,
    older than the tail cut."""
    timed = sorted(((timestamp_ns(v.get("startTime")), i, t, v) for i, (t, v) in enumerate(events)),
                   key=lambda x: (x[0], x[1]))
    if not timed:
        return []
    live = {}
    for t, i, etype, v in timed:
        addr = int(v.get("address") or 0)
        if etype == "profiler.Malloc":
            live[addr] = (t, i, etype, v)
        else:
            live.pop(addr, None)
    lo, hi = timed[0][0], timed[-1][0]
    cut = hi - int(tail * float(hi - lo))
    return [(e[2], e[3]) for e in sorted(live.values(), key=lambda x: x[1]) if e[0] <= cut]


# A compact event: its scalar values (every field the rules above read is
# one), and its stack key under a name no JFR field has.
STACK_KEY = "\x00stack"


def compact_events(jfr, path, kind):
    """[(etype, values)] of one file and kind, in file order, values compact."""
    out = []
    for ev in iter_events(run_jfr(jfr, path, kind)):
        etype = ev.get("type")
        if etype not in EVENTS[kind]:
            continue
        values = ev.get("values") or {}
        c = {k: v for k, v in values.items() if not isinstance(v, (dict, list))}
        c[STACK_KEY] = stack_key(values)
        out.append((etype, c))
    return out


def cache_file(cache, prefix, path, *parts):
    """The cache file of one answer about `path`: named by the file's path,
    size and mtime, this script's mtime (a changed rule invalidates it) and
    the parts of the question."""
    st = os.stat(path)
    me = os.stat(os.path.abspath(__file__)).st_mtime_ns
    ident = "%s|%s|%d|%d|%d|%s" % (prefix, os.path.abspath(path), st.st_size, st.st_mtime_ns, me,
                                   "|".join(map(repr, parts)))
    return os.path.join(cache, prefix + "-" + hashlib.sha1(ident.encode()).hexdigest() + ".json")


def cache_store(fname, obj):
    """Writes obj as JSON into fname atomically (parallel jobs share the cache)."""
    os.makedirs(os.path.dirname(fname), exist_ok=True)
    tmp = fname + ".tmp%d" % os.getpid()
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, fname)


def cached_events(jfr, path, kind, cache):
    """compact_events, kept in the cache so that the window, state and leak
    variants of one (file, kind) cost one `jfr print` and one parse."""
    if not cache:
        return compact_events(jfr, path, kind)
    fname = cache_file(cache, "events", path, kind, jfr)
    try:
        with open(fname) as f:
            d = json.load(f)
        stacks = d["stacks"]
        out = []
        for etype, si, values in d["events"]:
            values[STACK_KEY] = stacks[si]
            out.append((etype, values))
        return out
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        pass
    events = compact_events(jfr, path, kind)
    index, stacks, rows = {}, [], []
    for etype, values in events:
        v = dict(values)
        key = v.pop(STACK_KEY)
        if key not in index:
            index[key] = len(stacks)
            stacks.append(key)
        rows.append([etype, index[key], v])
    cache_store(fname, {"stacks": stacks, "events": rows})
    return events


def aggregate(jfr, path, kind, window=None, states=None, leak=False, tail=0.1, cache=None):
    """{"thread\\x00stack": [samples, total_or_None, events]} for one file and
    kind, of the events starting in window = (from_ns, to_ns) when given;
    "\\x00lost" holds the lost cputime samples."""
    events = []
    lost = 0
    for etype, values in cached_events(jfr, path, kind, cache):
        if window and etype != "jdk.ActiveSetting":
            t = timestamp_ns(values.get("startTime"))
            if (window[0] is not None and t < window[0]) or (window[1] is not None and t >= window[1]):
                continue
        if etype == "jdk.CPUTimeSamplesLost":
            lost += int(values.get("lostSamples") or 0)
        events.append((etype, values))
    agg = {}
    for etype, values in select(kind, events, states, leak, tail):
        samples, total = event_values(etype, values)
        add(agg, stack_key(values), samples, total)
    agg["\x00lost"] = [lost, lost, 0]
    return agg


def io_detail(jfr, path):
    """Lines "socket|file<TAB>name<TAB>events<TAB>ns" of the io events, sorted."""
    agg = {}
    for ev in iter_events(run_jfr(jfr, path, "io")):
        etype = ev.get("type")
        values = ev.get("values") or {}
        ns = duration_ns(values.get("duration"))
        if etype in ("jdk.SocketRead", "jdk.SocketWrite"):
            host = values.get("host") or values.get("address") or ""
            if ":" in host:
                host = "[" + host + "]"
            port = values.get("port")
            key = ("socket", "%s:%d" % (host or "[no address]", -1 if port is None else int(port)))
        elif etype in ("jdk.FileRead", "jdk.FileWrite"):
            key = ("file", values.get("path") or "[no path]")
        else:
            continue
        cell = agg.setdefault(key, [0, 0])
        cell[0] += 1
        cell[1] += ns
    return sorted("%s\t%s\t%d\t%d" % (k[0], k[1], v[0], v[1]) for k, v in agg.items())


def cached_aggregate(jfr, path, kind, cache, window=None, states=None, leak=False, tail=0.1):
    if not cache:
        return aggregate(jfr, path, kind, window, states, leak, tail)
    fname = cache_file(cache, "oracle", path, kind, jfr, window,
                       sorted(states) if states is not None else None, leak, tail)
    try:
        with open(fname) as f:
            return json.load(f)
    except (OSError, ValueError):
        pass
    agg = aggregate(jfr, path, kind, window, states, leak, tail, cache)
    cache_store(fname, agg)
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
    ap.add_argument("--state", default=None, help="keep samples in these thread states")
    ap.add_argument("--leak", action="store_true", help="nativemem: mallocs never freed")
    ap.add_argument("--tail", type=float, default=0.1, help="--leak: ignore the last fraction")
    ap.add_argument("--lost", action="store_true", help="print the lost cputime samples")
    ap.add_argument("--io-detail", action="store_true", help="io: endpoints and paths")
    a = ap.parse_args()

    if a.io_detail:
        if a.kind != "io":
            ap.error("--io-detail is for the io kind")
        sys.stdout.write("".join(line + "\n" for line in io_detail(a.jfr, a.file)))
        return 0

    if a.value == "total" and a.kind in ("cpu", "wall") and a.period_ns is None:
        ap.error("--value total of %s needs --period-ns" % a.kind)

    window = None
    if a.from_ns is not None or a.to_ns is not None:
        window = (a.from_ns, a.to_ns)
    states = None
    if a.state is not None:
        states = set(norm_state(x) for x in a.state.split(","))
    agg = cached_aggregate(a.jfr, a.file, a.kind, a.cache, window, states, a.leak, a.tail)
    lost = agg.pop("\x00lost", [0, 0, 0])[0]
    if a.lost:
        print(lost)
        return 0
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
