/*
 * ManyThreads - a JVM with N (default 2000) threads at a realistic stack
 * depth, for jprof's snapshot benchmark (bench/live/run).
 *
 *   40% parked (LockSupport.park), 25% sleeping, 20% in Object.wait() on a
 *   shared monitor, 10% BLOCKED on a monitor held by "holder", 5% spinning
 *   lightly (RUNNABLE, a little CPU); every thread ~20 frames deep.
 *
 * Usage: java -Xss256k -cp DIR live.ManyThreads [THREADS] [SECONDS]
 * (prints "ready" once every thread is in place).
 */
package live;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

public final class ManyThreads {
    static final Object MAILBOX = new Object();
    static final Object GATE = new Object();
    static volatile long sink;
    static CountDownLatch started;

    static void deep(int depth, Runnable r) {
        if (depth > 0) {
            deep(depth - 1, r);
        } else {
            r.run();
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static Runnable behaviour(int i) {
        int m = i % 20;
        if (m < 8) {
            return () -> {
                started.countDown();
                while (true) {
                    LockSupport.park();
                }
            };
        } else if (m < 13) {
            return () -> {
                started.countDown();
                while (true) {
                    sleep(60_000);
                }
            };
        } else if (m < 17) {
            return () -> {
                synchronized (MAILBOX) {
                    started.countDown();
                    while (true) {
                        try {
                            MAILBOX.wait();
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            };
        } else if (m < 19) {
            return () -> {
                started.countDown();
                synchronized (GATE) {
                    sink++;
                }
            };
        }
        return () -> {
            started.countDown();
            while (true) {
                for (int k = 0; k < 10_000; k++) {
                    sink += k;
                }
                sleep(20);
            }
        };
    }

    public static void main(String[] args) throws InterruptedException {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        long seconds = args.length > 1 ? Long.parseLong(args[1]) : 600;
        started = new CountDownLatch(n);
        Thread holder = new Thread(() -> {
            synchronized (GATE) {
                while (true) {
                    sleep(60_000);
                }
            }
        }, "holder");
        holder.setDaemon(true);
        holder.start();
        Thread.sleep(50);
        for (int i = 0; i < n; i++) {
            Runnable r = behaviour(i);
            Thread t = new Thread(() -> deep(16, r), "worker-" + i);
            t.setDaemon(true);
            t.start();
        }
        started.await();
        Thread.sleep(500);
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(seconds * 1000);
        System.exit(0);
    }
}
