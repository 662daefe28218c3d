/*
 * JprofHelper - jprof's thread-snapshot agent, loaded over the attach socket
 * with `load instrument false /tmp/jprof-helper-V.jar=out=/tmp/F.json`.
 *
 * agentmain writes one JSON snapshot of all threads (ThreadMXBean: states,
 * stacks, locked monitors and ownable synchronizers, the lock each thread
 * waits for and its owner, per-thread CPU time, blocked/waited counts, the
 * JVM's own deadlock detection) to the file named by out=, and returns.
 *
 * It starts no thread and keeps nothing between calls: a second load finds
 * this class already loaded by the system class loader and calls agentmain
 * again. Thread contention monitoring (blocked/waited times) is switched only
 * when asked: contention=on or contention=off.
 *
 * Argument syntax: comma-separated key=value; keys: out (required, absolute
 * path the JVM can create), claimed=1 (the asker created out empty and
 * removes it when it stops waiting: if out is gone when the snapshot is
 * ready, nothing is written; without it, as before, out is always written),
 * contention (on|off), maxdepth (frames, default 1024).
 */
package jprof.helper;

import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.lang.management.LockInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

public final class JprofHelper {
    static final int FORMAT = 1;

    private JprofHelper() {
    }

    public static void agentmain(String args, Instrumentation inst) throws IOException {
        run(args);
    }

    public static void agentmain(String args) throws IOException {
        run(args);
    }

    static Map<String, String> parse(String args) {
        Map<String, String> m = new HashMap<>();
        if (args == null) {
            return m;
        }
        for (String kv : args.split(",")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                m.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        return m;
    }

    static void run(String args) throws IOException {
        Map<String, String> opts = parse(args);
        String out = opts.get("out");
        if (out == null || !out.startsWith("/")) {
            throw new IllegalArgumentException("jprof helper: out=/absolute/path is required");
        }
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        String contention = opts.get("contention");
        if (contention != null && mx.isThreadContentionMonitoringSupported()) {
            mx.setThreadContentionMonitoringEnabled("on".equals(contention));
        }
        int maxDepth = opts.containsKey("maxdepth") ? Integer.parseInt(opts.get("maxdepth")) : 1024;
        Path target = Paths.get(out);
        Path tmp = Paths.get(out + ".part");
        Files.deleteIfExists(tmp);
        Files.createFile(tmp, PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rw-r-----")));
        // Whatever stops the snapshot half-way (an Error too: out of memory in a
        // small heap, a stack overflow) takes the temporary file with it: the
        // process that asked has already removed its names, and a file left
        // here would stay in the target's /tmp for good.
        boolean done = false;
        try {
            try (BufferedWriter w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                write(w, mx, maxDepth);
            }
            // claimed=1: the asker created `out` empty before it loaded us and
            // removes it when it stops waiting (a timeout, a signal): no `out`
            // then means nobody will read or remove what we would put there.
            boolean claimed = "1".equals(opts.get("claimed"));
            if (claimed && !Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            done = true;
        } finally {
            if (!done) {
                Files.deleteIfExists(tmp);
            }
        }
    }

    static long[] cpuTimes(ThreadMXBean mx, long[] ids) {
        long[] cpu = new long[ids.length];
        java.util.Arrays.fill(cpu, -1L);
        if (!mx.isThreadCpuTimeSupported() || !mx.isThreadCpuTimeEnabled()) {
            return cpu;
        }
        if (mx instanceof com.sun.management.ThreadMXBean) {
            return ((com.sun.management.ThreadMXBean) mx).getThreadCpuTime(ids);
        }
        for (int i = 0; i < ids.length; i++) {
            cpu[i] = mx.getThreadCpuTime(ids[i]);
        }
        return cpu;
    }

    static void write(BufferedWriter w, ThreadMXBean mx, int maxDepth) throws IOException {
        long time = System.currentTimeMillis();
        long uptime = ManagementFactory.getRuntimeMXBean().getUptime();
        ThreadInfo[] infos = mx.dumpAllThreads(true, true, maxDepth);
        long[] ids = new long[infos.length];
        for (int i = 0; i < infos.length; i++) {
            ids[i] = infos[i].getThreadId();
        }
        long[] cpu = cpuTimes(mx, ids);
        long[] dead = mx.findDeadlockedThreads();
        w.write("{\"format\":" + FORMAT + ",\"time_ms\":" + time + ",\"uptime_ms\":" + uptime);
        w.write(",\"contention_monitoring\":"
                + (mx.isThreadContentionMonitoringSupported() && mx.isThreadContentionMonitoringEnabled()));
        w.write(",\"threads\":[");
        for (int i = 0; i < infos.length; i++) {
            if (i > 0) {
                w.write(',');
            }
            thread(w, infos[i], cpu[i]);
            w.write('\n');
        }
        w.write("],\"deadlocks\":[");
        deadlocks(w, infos, dead);
        w.write("]}\n");
    }

    static void thread(BufferedWriter w, ThreadInfo t, long cpu) throws IOException {
        StackTraceElement[] st = t.getStackTrace();
        w.write("{\"id\":" + t.getThreadId() + ",\"name\":");
        str(w, t.getThreadName());
        w.write(",\"daemon\":" + t.isDaemon() + ",\"state\":\"" + t.getThreadState() + "\"");
        w.write(",\"cpu_ns\":" + cpu + ",\"blocked_count\":" + t.getBlockedCount()
                + ",\"waited_count\":" + t.getWaitedCount() + ",\"blocked_time_ms\":"
                + t.getBlockedTime() + ",\"waited_time_ms\":" + t.getWaitedTime());
        LockInfo lock = t.getLockInfo();
        if (lock != null) {
            w.write(",\"wait\":\"" + waitKind(t, st) + "\",\"lock\":");
            lock(w, lock, 0);
            w.write(",\"lock_owner_id\":" + t.getLockOwnerId());
        }
        w.write(",\"stack\":[");
        for (int k = 0; k < st.length; k++) {
            if (k > 0) {
                w.write(',');
            }
            StackTraceElement e = st[k];
            w.write("{\"c\":");
            str(w, e.getClassName());
            w.write(",\"m\":");
            str(w, e.getMethodName());
            w.write(",\"f\":");
            str(w, e.getFileName());
            w.write(",\"l\":" + (e.isNativeMethod() ? -2 : e.getLineNumber()) + "}");
        }
        w.write("],\"monitors\":[");
        MonitorInfo[] mons = t.getLockedMonitors();
        for (int k = 0; k < mons.length; k++) {
            if (k > 0) {
                w.write(',');
            }
            lock(w, mons[k], mons[k].getLockedStackDepth());
        }
        w.write("],\"synchronizers\":[");
        LockInfo[] syn = t.getLockedSynchronizers();
        for (int k = 0; k < syn.length; k++) {
            if (k > 0) {
                w.write(',');
            }
            lock(w, syn[k], -1);
        }
        w.write("]}");
    }

    /* BLOCKED is a monitor enter; WAITING in Object.wait released its monitor;
     * anything else waiting on a lock object is a park on a blocker. */
    static String waitKind(ThreadInfo t, StackTraceElement[] st) {
        if (t.getThreadState() == Thread.State.BLOCKED) {
            return "enter";
        }
        for (int k = 0; k < st.length && k < 3; k++) {
            if ("java.lang.Object".equals(st[k].getClassName())
                    && st[k].getMethodName().startsWith("wait")) {
                return "wait";
            }
        }
        return "park";
    }

    static void lock(BufferedWriter w, LockInfo l, int depth) throws IOException {
        w.write("{\"id\":" + Integer.toUnsignedString(l.getIdentityHashCode()) + ",\"class\":");
        str(w, l.getClassName());
        w.write(",\"depth\":" + depth + "}");
    }

    /* findDeadlockedThreads merges every cycle: split them by following owners. */
    static void deadlocks(BufferedWriter w, ThreadInfo[] infos, long[] dead) throws IOException {
        if (dead == null) {
            return;
        }
        Map<Long, Long> owner = new HashMap<>();
        for (ThreadInfo t : infos) {
            owner.put(t.getThreadId(), t.getLockOwnerId());
        }
        Set<Long> inDeadlock = new HashSet<>();
        for (long id : dead) {
            inDeadlock.add(id);
        }
        Set<Long> done = new HashSet<>();
        boolean first = true;
        for (long start : dead) {
            if (done.contains(start)) {
                continue;
            }
            StringBuilder sb = new StringBuilder("[");
            long cur = start;
            int n = 0;
            while (inDeadlock.contains(cur) && done.add(cur) && n < dead.length) {
                sb.append(n++ > 0 ? "," : "").append(cur);
                Long next = owner.get(cur);
                cur = next == null ? -1 : next;
            }
            sb.append(']');
            if (n > 0) {
                w.write((first ? "" : ",") + sb);
                first = false;
            }
        }
    }

    static void str(BufferedWriter w, String s) throws IOException {
        if (s == null) {
            w.write("null");
            return;
        }
        w.write('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                w.write('\\');
                w.write(c);
            } else if (c < 0x20) {
                w.write(String.format("\\u%04x", (int) c));
            } else {
                w.write(c);
            }
        }
        w.write('"');
    }
}
