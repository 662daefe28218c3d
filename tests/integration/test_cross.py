#!/usr/bin/env python3
"""test_cross.py - the other architecture's programs, run here under qemu-user.

configure finds the cross compiler (--with-cross-probe, docs/ARM64.md) and make
builds this tree for that architecture in cross-ARCH/ (jprof-probe-ARCH comes
from there). This machine has no such CPU: Debian's qemu-user-static runs
those programs, and this test checks what a user of an arm64 node relies on:

  1. the cross build's unit tests (every tests/unit program) pass;
  2. the reader gives the same output, byte for byte, as this build's on
     every JFR fixture (tests/fixtures/jfr, samples/demo.jfr): jprof-top -b
     --jfr in every kind (JSON, values), collapsed with threads, top, gc,
     pprof, io-detail, html, --leak and a --diff;
  3. jprof-probe-ARCH is static, and its protocol session (hello, refused
     lines, snapshot, a JFR profile window, bye) against real JDK 17 JVMs
     answers as this build's probe does, error replies byte for byte;
  4. an attach to a JVM of that architecture (Debian's JRE for it, unpacked
     by scripts/install-deps; JPROF_CROSS_JAVA_HOME), itself run under qemu:
     hello and a Thread.print snapshot with both deadlock cycles, through
     both probes;
  5. jprof-server's API suite (server_api.py) against the cross jprof-server.

What cannot run here is printed as "NOT RUN HERE:" lines (a JFR recording
inside the emulated JVM: JFR.start does not answer within the attach timeout
under qemu-user; real arm64 hardware is not here). Alignment faults are not
shown by qemu-user or by arm64 Linux for ordinary loads: the sanitizer run of
the unit tests (-fsanitize=undefined includes alignment) covers that.

Environment (set by make check; tests/integration/local.mk):
  JPROF_CROSS_DIR, JPROF_CROSS_ARCH, JPROF_CROSS_EMULATOR, JPROF_CROSS_UNIT_TESTS,
  JPROF_FIXTURES; JPROF_CROSS_JAVA_HOME (default /opt/jprof-test/jre-ARCH);
  JDK17_HOME; JPROF_CROSS_PARTS: the parts to run (default "unit reader probe
  jvm server"). Run from the build dir. Exit 0 pass, 1 fail, 77 skip (a
  failure under CI=true).
"""
import concurrent.futures
import json
import os
import queue
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.getcwd()
CI = os.environ.get("CI") == "true"
ARCH = os.environ.get("JPROF_CROSS_ARCH", "")
XDIR = os.path.abspath(os.environ.get("JPROF_CROSS_DIR", "cross-" + ARCH))
EMU = os.environ.get("JPROF_CROSS_EMULATOR", "")
JDK17 = os.environ.get("JDK17_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")
XJAVA = os.environ.get("JPROF_CROSS_JAVA_HOME", "/opt/jprof-test/jre-" + ARCH)
PARTS = os.environ.get("JPROF_CROSS_PARTS", "unit reader probe jvm server").split()
KINDS = ["cpu", "wall", "alloc", "lock", "park", "io", "nativemem", "live", "nativelock",
         "cputime", "old"]
ELF_MACHINE = {"arm64": "ARM aarch64", "amd64": "x86-64"}
DEADLOCK_NAMES = [["mon-deadlock-1", "mon-deadlock-2"], ["rl-deadlock-1", "rl-deadlock-2"]]
failures = []
passes = []
procs = []


def check(cond, what, detail=""):
    print(("PASS: " if cond else "FAIL: ") + what + ("" if cond else "\n      " + str(detail)[:2000]))
    sys.stdout.flush()
    (passes if cond else failures).append(what)
    return cond


def not_run(what):
    print("NOT RUN HERE: " + what)


def skip_or_fail(why):
    if CI:
        check(False, "missing under CI=true: " + why)
        finish()
    print("SKIP: " + why)
    print("SKIP: " + why, file=sys.stderr)
    sys.exit(77)


def finish():
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    print("test_cross: %d passed, %d failed" % (len(passes), len(failures)))
    sys.exit(1 if failures else 0)


def xrun(argv, **kw):
    """A program of the cross build, under the emulator."""
    return subprocess.run([EMU] + argv, **kw)


def file_of(path):
    return subprocess.run(["file", "-b", path], capture_output=True, text=True).stdout


# ---- 1. unit tests -------------------------------------------------------------

def part_unit():
    tests = os.environ.get("JPROF_CROSS_UNIT_TESTS", "").split()
    if not tests:
        check(False, "JPROF_CROSS_UNIT_TESTS names the unit tests (make check sets it)")
        return

    def one(t):
        path = os.path.join(XDIR, t)
        if ELF_MACHINE.get(ARCH, "?") not in file_of(path):
            return t, None, "not an %s program: %s" % (ARCH, file_of(path))
        start = time.monotonic()
        p = xrun([path], cwd=XDIR, capture_output=True, text=True, timeout=600)
        return t, p, "%.1f s" % (time.monotonic() - start)

    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        for t, p, note in ex.map(one, tests):
            if p is None:
                check(False, "unit %s" % t, note)
                continue
            passed = p.stdout.count("[       OK ]")
            check(p.returncode == 0 and passed > 0,
                  "unit %s on %s: %d cases passed (%s)" % (t, ARCH, passed, note),
                  (p.stdout + p.stderr)[-1500:])


# ---- 2. the reader on every fixture ---------------------------------------------

def fixtures():
    d = os.environ.get("JPROF_FIXTURES", os.path.join(SRCDIR, "tests", "fixtures", "jfr"))
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".jfr"))
    return files + [os.path.join(SRCDIR, "samples", "demo.jfr")]


def kinds_present(f):
    """The kinds this build's reader finds in f."""
    def has(k):
        return subprocess.run([os.path.join(BUILD, "jprof-top"), "-b", "--jfr", f, "--event", k,
                               "--format", "top"], capture_output=True, timeout=120).returncode == 0
    return [k for k in KINDS if has(k)]


def reader_cases(f, first):
    """(label, arguments) of the jprof-top runs compared for file f: every kind it
    has (the first file: every kind, absent ones included), the other formats."""
    kinds = KINDS if f == first else kinds_present(f)
    cases = [("%s json" % k, ["--event", k, "--format", "json", "--value", "total"]) for k in kinds]
    cases += [
        ("collapsed threads", ["--format", "collapsed", "--threads"]),
        ("top", ["--format", "top"]),
        ("gc", ["--format", "gc"]),
        ("pprof", ["--format", "pprof"]),
        ("io-detail", ["--io-detail", "--format", "json"]),
        ("diff", ["--diff", first, "--format", "collapsed"]),
    ]
    if f == first:  # the page is the same but for the tree that json shows
        cases.append(("html", ["--format", "html"]))
    if "nativemem" in kinds:
        cases.append(("nativemem --leak", ["--event", "nativemem", "--leak", "--format", "collapsed"]))
    return [(label, ["-b", "--jfr", f] + args) for label, args in cases]


def part_reader():
    files = fixtures()
    jobs = []
    for f in files:
        jobs += [(f, label, args) for label, args in reader_cases(f, files[0])]

    def one(job):
        f, label, args = job
        want = subprocess.run([os.path.join(BUILD, "jprof-top")] + args, capture_output=True,
                              timeout=120)
        got = xrun([os.path.join(XDIR, "jprof-top")] + args, capture_output=True, timeout=300)
        return f, label, want, got

    same = 0
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        for f, label, want, got in ex.map(one, jobs):
            name = "%s %s" % (os.path.basename(f), label)
            if (want.returncode, want.stdout, want.stderr) == (got.returncode, got.stdout,
                                                                got.stderr):
                same += 1
                continue
            check(False, "reader: %s: %s output differs from this build's" % (name, ARCH),
                  "exit %d vs %d; stdout %d vs %d bytes; stderr: %r vs %r" %
                  (want.returncode, got.returncode, len(want.stdout), len(got.stdout),
                   want.stderr[-300:], got.stderr[-300:]))
    check(len(jobs) == same, "reader: %d of %d runs over %d fixtures give the same exit status, stdout and "
          "stderr, byte for byte, on %s as here" % (same, len(jobs), len(files), ARCH))


# ---- 3. and 4. the probe's protocol, JVMs of both architectures ------------------

class Session:
    """One probe serving the protocol on its stdin/stdout."""

    def __init__(self, argv, label):
        self.label = label
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=BUILD)
        procs.append(self.proc)
        self.lines = queue.Queue()
        self.err = []
        threading.Thread(target=self._pump, daemon=True).start()
        self.err_reader = threading.Thread(target=lambda: self.err.extend(self.proc.stderr),
                                           daemon=True)
        self.err_reader.start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)  # the probe closed its output

    def reply(self, timeout):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return None, None
        if line is None:
            return None, None
        try:
            return line, json.loads(line)
        except ValueError:
            return line, None

    def ask(self, raw, timeout=60):
        self.proc.stdin.write(raw if isinstance(raw, bytes) else raw.encode() + b"\n")
        self.proc.stdin.flush()
        return self.reply(timeout)

    def end(self):
        line, d = self.ask('{"op":"bye"}', 30)
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = None
        self.err_reader.join(10)
        return d, rc, b"".join(self.err).decode(errors="replace")


def start_jvm(runner, java_home, cls, classes, cwd, tries):
    out = os.path.join(cwd, "%s.%s.out" % (cls, "x" if runner else "n"))
    log = open(out, "wb")
    argv = runner + [os.path.join(java_home, "bin", "java"), "-Xmx64m", "-cp", classes,
                     "live." + cls, "600"]
    p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=cwd)
    procs.append(p)
    for _ in range(tries):
        time.sleep(0.2)
        if b"ready" in open(out, "rb").read():
            return p
        if p.poll() is not None:
            break
    check(False, "live.%s started (%s)" % (cls, " ".join(argv)), open(out, "rb").read()[-800:])
    return None


def compile_workloads(work):
    classes = os.path.join(work, "classes")
    if not os.path.exists(os.path.join(classes, "live", "Contention.class")):
        javac = os.path.join(JDK17, "bin", "javac")
        if not os.access(javac, os.X_OK):
            skip_or_fail("JDK 17 not found at %s" % JDK17)
        subprocess.run([javac, "--release", "17", "-d", classes,
                        os.path.join(SRCDIR, "tests", "java", "Deadlocks.java"),
                        os.path.join(SRCDIR, "tests", "java", "Contention.java")], check=True)
    return classes


def deadlock_names(d):
    snap = (d or {}).get("snapshot") or {}
    return sorted(sorted(t["name"] for t in c["threads"]) for c in snap.get("deadlocks", []))


def snapshot_checks(s, pid, label, timeout):
    line, d = s.reply(timeout)
    hello_ok = d is not None and d.get("op") == "hello" and (d.get("jvm") or {}).get("pid") == pid
    check(hello_ok, "%s: hello names JVM %d" % (label, pid), line)
    line, d = s.ask('{"op":"snapshot","max_frames":0,"id":"s1"}', timeout)
    check(d is not None and d.get("ok") and d.get("id") == "s1" and
          deadlock_names(d) == DEADLOCK_NAMES,
          "%s: snapshot finds both deadlock cycles (%s)" % (label, deadlock_names(d)),
          (line or b"")[:600])


REFUSED = [
    ("a line that is not JSON", b"this is not json\n"),
    ("a line over 65536 bytes", b"{" + b"x" * 70000 + b"}\n"),
    ("an unknown op", b'{"op":"no-such-op","id":"u1"}\n'),
    ("another protocol number", b'{"op":"hello","protocol":2,"id":"p2"}\n'),
    ("a field of the wrong type", b'{"op":"snapshot","max_frames":"many","id":"t1"}\n'),
]


def protocol_session(argv, label, dl_pid, ct_pid):
    """The session of the probe argv against the native Deadlocks and Contention JVMs."""
    s = Session(argv + ["--pid", str(dl_pid)], label)
    snapshot_checks(s, dl_pid, label, 60)
    refused = []
    for what, raw in REFUSED:
        line, d = s.ask(raw, 30)
        check(d is not None and d.get("ok") is False and (d.get("error") or {}).get("message"),
              "%s: %s is refused with a message" % (label, what), line)
        refused.append(line)
    d, rc, err = s.end()
    check(d is not None and d.get("ok") and rc == 0 and "nothing left behind" in err,
          "%s: bye: exit 0, nothing left behind" % label, "rc %s, %s %s" % (rc, d, err[-400:]))

    s = Session(argv + ["--pid", str(ct_pid)], label)
    s.reply(60)
    line, d = s.ask('{"op":"profile_start","kinds":["cpu"],"interval_ms":10,"window_s":30}', 90)
    check(d is not None and d.get("ok") and d.get("engine") == "jfr",
          "%s: profile_start (JFR, cpu)" % label, line)
    time.sleep(4)
    line, d = s.ask('{"op":"profile_read"}', 120)
    text = json.dumps((d or {}).get("batch") or {})
    check(d is not None and d.get("ok") and "live.Contention$Hot.spin" in text,
          "%s: profile_read: the hot spinner's frames in the batch (%d bytes)" % (label, len(text)),
          (line or b"")[:600])
    line, d = s.ask('{"op":"profile_stop"}', 60)
    check(d is not None and d.get("ok"), "%s: profile_stop" % label, line)
    d, rc, err = s.end()
    check(rc == 0 and "nothing left behind" in err, "%s: bye after a profile" % label,
          "rc %s, %s" % (rc, err[-400:]))
    return refused


def part_probe(work):
    xprobe = os.path.join(BUILD, "jprof-probe-" + ARCH)
    kind = file_of(xprobe)
    check(ELF_MACHINE.get(ARCH, "?") in kind and "statically linked" in kind,
          "jprof-probe-%s is a static %s program" % (ARCH, ARCH), kind)
    p = xrun([xprobe, "--version"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and "protocol 1" in p.stdout, "jprof-probe-%s --version" % ARCH,
          p.stdout + p.stderr)
    classes = compile_workloads(work)
    dl = start_jvm([], JDK17, "Deadlocks", classes, work, 100)
    ct = start_jvm([], JDK17, "Contention", classes, work, 100)
    if not dl or not ct:
        return
    want = protocol_session([os.path.join(BUILD, "jprof-probe")], "probe (here)", dl.pid, ct.pid)
    got = protocol_session([EMU, xprobe], "probe-%s" % ARCH, dl.pid, ct.pid)
    check(want == got, "probe-%s: the refusals are the same bytes as this build's probe's" % ARCH,
          "%s\n vs %s" % (want, got))


def part_jvm(work):
    java = os.path.join(XJAVA, "bin", "java")
    if ELF_MACHINE.get(ARCH, "?") not in file_of(java):
        why = "%s JRE not found at %s (scripts/install-deps unpacks Debian's)" % (ARCH, XJAVA)
        if CI:
            check(False, "missing under CI=true: " + why)
        else:
            not_run("an attach to an %s JVM: %s" % (ARCH, why))
        return
    classes = compile_workloads(work)
    # an emulated JVM starts in tens of seconds on a busy machine
    jvm = start_jvm([EMU], XJAVA, "Deadlocks", classes, work, 900)
    if not jvm:
        return
    for argv, label in (([os.path.join(BUILD, "jprof-probe")], "probe (here)"),
                        ([EMU, os.path.join(BUILD, "jprof-probe-" + ARCH)], "probe-" + ARCH)):
        s = Session(argv + ["--pid", str(jvm.pid)], label)
        snapshot_checks(s, jvm.pid, "%s -> %s JVM" % (label, ARCH), 180)
        d, rc, err = s.end()
        check(rc == 0, "%s -> %s JVM: bye" % (label, ARCH), err[-400:])
    not_run("a JFR window in the %s JVM: under qemu-user JFR.start does not answer within "
            "the attach timeout; the probe's JFR path runs against JVMs of this machine "
            "(part 3) and on real %s hardware only" % (ARCH, ARCH))


def part_server():
    env = dict(os.environ, JPROF_SERVER_CMD="%s %s/jprof-server --data-dir {data}" % (EMU, XDIR))
    start = time.monotonic()
    p = subprocess.run([sys.executable, os.path.join(HERE, "server_api.py")], env=env,
                       capture_output=True, text=True, timeout=1200)
    cases = [ln for ln in p.stdout.splitlines() if ln.startswith(("PASS", "FAIL", "SKIP"))]
    check(p.returncode == 0 and cases and all(c.startswith("PASS") for c in cases),
          "jprof-server's API suite against the %s server: %d cases (%.0f s): %s" %
          (ARCH, len(cases), time.monotonic() - start, ", ".join(c.split()[1] for c in cases)),
          "\n".join(ln for ln in (p.stdout + p.stderr).splitlines()[-40:]))


def main():
    if not ARCH or not os.path.isdir(XDIR):
        skip_or_fail("no cross build (configure found no cross compiler: scripts/install-deps "
                     "installs it; docs/ARM64.md)")
    if not EMU or not os.access(EMU, os.X_OK):
        skip_or_fail("no qemu-user emulator for %s (Debian: qemu-user-static)" % ARCH)
    work = os.path.join(BUILD, "tests", "integration", "cross.d")
    os.makedirs(work, exist_ok=True)
    not_run("real %s hardware: the programs run under %s" % (ARCH, os.path.basename(EMU)))
    for part in PARTS:
        start, cpu = time.monotonic(), os.times()
        print("--- %s" % part)
        sys.stdout.flush()
        {"unit": part_unit, "reader": part_reader, "probe": lambda: part_probe(work),
         "jvm": lambda: part_jvm(work), "server": part_server}[part]()
        now = os.times()
        used = sum(now[:4]) - sum(cpu[:4])
        print("--- %s: %.0f s, cpu %.0f s" % (part, time.monotonic() - start, used))
    finish()


if __name__ == "__main__":
    main()
