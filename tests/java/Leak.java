/*
 * Leak - a Java service stand-in with a heap leak of known class and rate,
 * for the heap histogram (jprof-top --heap, the Heap screen, the agent's
 * jprof.io/heap-histogram) and the `old` kind (jdk.OldObjectSample).
 *
 *   leak     SessionCache.remember puts leak.rate (default 2000) new
 *            leak.SessionRecord objects a second into a HashMap that is never
 *            cleared (thread "sessions"); the count follows the clock, so
 *            after t seconds there are rate x t of them, however late the
 *            thread was scheduled
 *   garbage  Churn.run allocates about leak.garbage (default 20) MB a second
 *            of byte arrays and strings that die at once (thread "churn")
 *   fill     with -Dleak.fill=MB, before anything else, keeps MB of live small
 *            objects (Filler, 48 bytes with its array slot) reachable: a big
 *            heap to time a histogram on (docs/PERFORMANCE.md)
 *
 * SessionRecord has sixteen long fields (144 bytes with compressed class
 * pointers), bigger than the map's node (32) and key (16), so by bytes it
 * grows fastest of all classes, and only SessionCache.remember allocates it.
 *
 * Usage: java [-Dleak.rate=N] [-Dleak.garbage=MB] [-Dleak.fill=MB] -cp DIR leak.Leak [SECONDS]
 * Prints "leak: ready rate=N" once the leak runs, then exits 0 after SECONDS
 * (default 60).
 */
package leak;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class Leak {
    static volatile boolean running = true;
    static volatile long sink;

    public static void main(String[] args) throws InterruptedException {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 60;
        long rate = Long.getLong("leak.rate", 2000);
        long garbage = Long.getLong("leak.garbage", 20);
        List<Filler> fill = Filler.fill(Long.getLong("leak.fill", 0));
        Thread sessions = new Thread(() -> SessionCache.run(rate), "sessions");
        Thread churn = new Thread(() -> Churn.run(garbage), "churn");
        sessions.start();
        churn.start();
        System.out.println("leak: ready rate=" + rate + " fill=" + fill.size());
        System.out.flush();
        Thread.sleep(seconds * 1000);
        running = false;
        sessions.join();
        churn.join();
        sink += fill.size();
    }

    /* The leaking class: sixteen longs, so its shallow size stands out. */
    static final class SessionRecord {
        long id, created, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14;

        SessionRecord(long id) {
            this.id = id;
            this.created = System.nanoTime();
        }
    }

    static final class SessionCache {
        static final Map<Long, SessionRecord> SESSIONS = new HashMap<>();

        static void run(long rate) {
            long start = System.nanoTime();
            long made = 0;
            while (running) {
                long due = (System.nanoTime() - start) / 1000 * rate / 1000000;
                while (made < due) {
                    remember(made++);
                }
                sleep(5);
            }
        }

        /* The leak: every record is kept, none is ever removed. */
        static void remember(long id) {
            SESSIONS.put(id, new SessionRecord(id));
        }
    }

    static final class Churn {
        static void run(long mbPerSecond) {
            long perTick = mbPerSecond * 1024 * 1024 / 100; /* every 10 ms */
            while (running) {
                long done = 0;
                while (done < perTick) {
                    byte[] b = new byte[4096];
                    b[done % 4096 == 0 ? 1 : 2] = 1;
                    String s = "request-" + done;
                    sink += b.length + s.length();
                    done += 4096 + 48;
                }
                sleep(10);
            }
        }
    }

    /* Small live objects for a big heap: 48 bytes each with its slot. */
    static final class Filler {
        long a, b, c;
        Filler next;

        static List<Filler> fill(long mb) {
            long n = mb * 1024 * 1024 / 48;
            List<Filler> all = new ArrayList<>((int) Math.min(n, Integer.MAX_VALUE - 8));
            for (long i = 0; i < n; i++) {
                Filler f = new Filler();
                f.a = i;
                all.add(f);
            }
            return all;
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            running = false;
        }
    }
}
