/*
 * FixtureWork - a second small workload, used only to record the
 * async-profiler fixtures in tests/fixtures/jfr (see the README.md there).
 *
 * JprofWorkload covers the Java-level kinds (cpu, alloc, lock, park). This one
 * exists so the recordings also hold what lies below Java, with no JNI code:
 *
 *   "clock"     System.nanoTime / currentTimeMillis in a loop: clock_gettime
 *               in libc, which jumps to __vdso_clock_gettime (a vdso frame)
 *   "syscalls"  small file writes + fsync and reads of /proc/self/stat:
 *               real system calls, so kernel frames under libc
 *   "zip"       Deflater/Inflater: zlib mallocs, most freed by end(), a few
 *               kept open until exit (profiler.Malloc with and without Free)
 *   "direct"    ByteBuffer.allocateDirect: malloc through Unsafe; every 8th
 *               buffer is kept, the rest are left to the Cleaner (freed only
 *               if a GC runs)
 *   "heap-N"    three threads reading the heap usage through the MemoryMXBean:
 *               they contend on a pthread mutex inside libjvm (G1's
 *               MonitoringSupport_lock), for profiler.NativeLock and C++ frames
 *
 * Usage: java -cp DIR fixture.FixtureWork [SECONDS [GROUPS]]
 * SECONDS defaults to 5; GROUPS is a comma list of clock,syscalls,zip,direct,
 * heap (default: all) so a recording can leave out what it does not need.
 */
package fixture;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

public final class FixtureWork {
    static volatile boolean running = true;
    static volatile long sink;
    /* Native memory deliberately never freed before exit. */
    static final List<Object> kept = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 5;
        String groups = "," + (args.length > 1 ? args[1] : "clock,syscalls,zip,direct,heap") + ",";
        List<Thread> threads = new ArrayList<>();
        if (groups.contains(",clock,")) {
            threads.add(start("clock", FixtureWork::clock));
        }
        if (groups.contains(",syscalls,")) {
            threads.add(start("syscalls", FixtureWork::syscalls));
        }
        if (groups.contains(",zip,")) {
            threads.add(start("zip", FixtureWork::zip));
        }
        if (groups.contains(",direct,")) {
            threads.add(start("direct", FixtureWork::direct));
        }
        for (int i = 0; groups.contains(",heap,") && i < 3; i++) {
            threads.add(start("heap-" + i, FixtureWork::heap));
        }
        Thread.sleep(seconds * 1000);
        running = false;
        for (Thread t : threads) {
            t.join(5000);
        }
        System.out.println("FixtureWork done, sink=" + (sink & 0xff) + ", kept=" + kept.size());
        System.exit(0);
    }

    static Thread start(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void clock() {
        long x = 0;
        while (running) {
            x += System.nanoTime() ^ System.currentTimeMillis();
        }
        sink += x;
    }

    static void syscalls() {
        Path tmp = null;
        try {
            tmp = Files.createTempFile("fixturework", ".dat");
            Path stat = Paths.get("/proc/self/stat");
            ByteBuffer line = ByteBuffer.allocate(128);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                while (running) {
                    line.clear();
                    ch.write(line, 0);
                    ch.force(false);
                    sink += Files.readAllBytes(stat).length;
                }
            }
        } catch (IOException e) {
            throw new RuntimeException(e);
        } finally {
            try {
                if (tmp != null) {
                    Files.deleteIfExists(tmp);
                }
            } catch (IOException ignored) {
                // a temp file left behind is harmless
            }
        }
    }

    static void zip() {
        byte[] input = new byte[16 << 10];
        for (int i = 0; i < input.length; i++) {
            input[i] = (byte) (i % 251 ^ i >>> 7);
        }
        byte[] packed = new byte[32 << 10];
        byte[] unpacked = new byte[input.length];
        int n = 0;
        while (running) {
            Deflater d = new Deflater();
            d.setInput(input);
            d.finish();
            int len = d.deflate(packed);
            Inflater inf = new Inflater();
            inf.setInput(packed, 0, len);
            try {
                sink += inf.inflate(unpacked);
            } catch (DataFormatException e) {
                throw new RuntimeException(e);
            }
            if (++n % 16 == 0 && kept.size() < 200) {
                synchronized (kept) {
                    kept.add(d);
                    kept.add(inf);
                }
            } else {
                d.end();
                inf.end();
            }
            pause(10);
        }
    }

    static void direct() {
        int n = 0;
        while (running) {
            ByteBuffer b = ByteBuffer.allocateDirect(32 << 10);
            b.putLong(0, n);
            if (++n % 8 == 0 && kept.size() < 200) {
                synchronized (kept) {
                    kept.add(b);
                }
            }
            pause(10);
        }
    }

    static void heap() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        int n = 0;
        while (running) {
            sink += memory.getHeapMemoryUsage().getUsed();
            if (++n % 100 == 0) {
                pause(10);
            }
        }
    }

    static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
