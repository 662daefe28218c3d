"""vgwrap.py - the integration tests' programs under valgrind's memcheck.

With JPROF_VALGRIND=1 (set by `make check-valgrind-integration`), the tests
that import this start jprof-server and jprof-agent through wrap(): valgrind
memcheck with a full leak check, each process writing its report to
JPROF_VALGRIND_DIR/NAME.PID.vg. The run is quiet (-q), so an empty report is a
clean process; make check-valgrind-integration fails on any report that is not
empty (an error, or a definitely lost block), whatever the test itself said.
A process that also exits by itself exits 99 on such a finding
(--error-exitcode), which the tests that check exit statuses see as well.

Without JPROF_VALGRIND nothing changes: wrap() returns the command as it is
and slow() its argument.
"""

import os

ENABLED = os.environ.get("JPROF_VALGRIND") == "1"
# valgrind runs the programs some 10-30 times slower; the tests stretch the
# waits that bound a program's own work (start-up, a window's processing), not
# the ones that bound the test's own loops
FACTOR = float(os.environ.get("JPROF_VALGRIND_SLOW", "6")) if ENABLED else 1.0
ERROR_EXIT = 99


def report_dir():
    d = os.environ.get("JPROF_VALGRIND_DIR") or os.path.join(os.getcwd(), "valgrind.d")
    os.makedirs(d, exist_ok=True)
    return d


def wrap(name, argv):
    """argv (a list) to run under valgrind when enabled; name labels the report."""
    if not ENABLED:
        return list(argv)
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "valgrind.supp")
    vg = ["valgrind", "-q", "--tool=memcheck", "--error-exitcode=%d" % ERROR_EXIT,
          "--leak-check=full", "--errors-for-leak-kinds=definite",
          "--show-leak-kinds=definite", "--child-silent-after-fork=yes",
          "--num-callers=30", "--log-file=%s/%s.%%p.vg" % (report_dir(), name)]
    if os.path.exists(supp):
        vg.append("--suppressions=" + os.path.abspath(supp))
    return vg + list(argv)


def slow(seconds):
    """A wait that bounds the work of a program under test, stretched under valgrind."""
    return seconds * FACTOR
