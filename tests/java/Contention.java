/*
 * Contention - a JVM whose threads have known CPU use and lock contention,
 * for jprof's live tests.
 *
 *   "hot-spinner"       burns a full core in Hot.spin (hottest thread); with
 *                       -Dcontention.hot=P, P% of a core (spins P ms of
 *                       every 100), for tests that share a small machine
 *   "warm-spinner"      burns ~30% of a core in Hot.spin, sleeps the rest
 *   "ledger-owner"      holds the monitor of Contention$Ledger and sleeps inside it;
 *   "ledger-waiter-1..3" BLOCKED entering that monitor (monitor contention)
 *   "vault-owner"       holds ReentrantLock "vault" and sleeps;
 *   "vault-waiter-1..2" parked in vault.lock() (ReentrantLock contention)
 *   "waiter"            Object.wait() on Contention$Mailbox (WAITING, no owner)
 *   "parker"            LockSupport.park() (WAITING)
 *   "sleeper"           Thread.sleep (TIMED_WAITING)
 *
 * Usage: java -cp DIR live.Contention [SECONDS]  (default 600; prints "ready").
 */
package live;

import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

public final class Contention {
    static volatile long sink;
    static volatile boolean running = true;

    static final class Ledger {
    }

    static final class Mailbox {
    }

    static final class Hot {
        static long spin(long nanos) {
            long end = System.nanoTime() + nanos;
            long x = 1;
            while (System.nanoTime() < end) {
                for (int i = 0; i < 1000; i++) {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                }
            }
            return x;
        }
    }

    static final Ledger LEDGER = new Ledger();
    static final Mailbox MAILBOX = new Mailbox();
    static final ReentrantLock VAULT = new ReentrantLock();

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void post(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    static void holdLedger() {
        synchronized (LEDGER) {
            while (running) {
                sleep(1000);
            }
        }
    }

    static void enterLedger() {
        synchronized (LEDGER) {
            sink++;
        }
    }

    static void holdVault() {
        VAULT.lock();
        try {
            while (running) {
                sleep(1000);
            }
        } finally {
            VAULT.unlock();
        }
    }

    static void enterVault() {
        VAULT.lock();
        try {
            sink++;
        } finally {
            VAULT.unlock();
        }
    }

    public static void main(String[] args) throws InterruptedException {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 600;
        int hot = Math.max(1, Math.min(100, Integer.getInteger("contention.hot", 100)));
        post(() -> {
            while (running) {
                sink += Hot.spin(1_000_000L * hot);
                if (hot < 100) {
                    sleep(100L - hot);
                }
            }
        }, "hot-spinner");
        post(() -> {
            while (running) {
                sink += Hot.spin(30_000_000L);
                sleep(70);
            }
        }, "warm-spinner");
        post(Contention::holdLedger, "ledger-owner");
        post(Contention::holdVault, "vault-owner");
        while (!VAULT.isLocked()) {
            Thread.sleep(5);
        }
        Thread.sleep(50);
        for (int i = 1; i <= 3; i++) {
            post(Contention::enterLedger, "ledger-waiter-" + i);
        }
        for (int i = 1; i <= 2; i++) {
            post(Contention::enterVault, "vault-waiter-" + i);
        }
        post(() -> {
            synchronized (MAILBOX) {
                try {
                    MAILBOX.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }, "waiter");
        post(LockSupport::park, "parker");
        post(() -> sleep(seconds * 1000), "sleeper");
        while (VAULT.getQueueLength() < 2) {
            Thread.sleep(5);
        }
        Thread.sleep(200);
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(seconds * 1000);
        running = false;
        System.exit(0);
    }
}
