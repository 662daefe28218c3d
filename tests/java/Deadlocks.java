/*
 * Deadlocks - a JVM with two known deadlock cycles, for jprof's live tests.
 *
 *   monitor cycle:       "mon-deadlock-1" holds Deadlocks$Account "A", waits for "B";
 *                        "mon-deadlock-2" holds "B", waits for "A"   (synchronized)
 *   ReentrantLock cycle: "rl-deadlock-1" holds lock "L1", waits for "L2";
 *                        "rl-deadlock-2" holds "L2", waits for "L1"  (ReentrantLock)
 *   plus "bystander", a thread sleeping without any lock (no false positive).
 *
 * Usage: java -cp DIR live.Deadlocks [SECONDS]   (default 600; prints "ready"
 * once both cycles are closed, then stays until SECONDS pass).
 */
package live;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

public final class Deadlocks {
    static final class Account {
        final String name;

        Account(String name) {
            this.name = name;
        }
    }

    static final Account A = new Account("A");
    static final Account B = new Account("B");
    static final ReentrantLock L1 = new ReentrantLock();
    static final ReentrantLock L2 = new ReentrantLock();

    static void transfer(Account from, Account to, CountDownLatch both) {
        synchronized (from) {
            both.countDown();
            await(both);
            synchronized (to) {
                System.out.println("unreachable " + to.name);
            }
        }
    }

    static void lockBoth(ReentrantLock first, ReentrantLock second, CountDownLatch both) {
        first.lock();
        try {
            both.countDown();
            await(both);
            second.lock();
            second.unlock();
        } finally {
            first.unlock();
        }
    }

    static void await(CountDownLatch l) {
        try {
            l.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static Thread start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static boolean blocked(Thread t) {
        Thread.State s = t.getState();
        return s == Thread.State.BLOCKED || s == Thread.State.WAITING;
    }

    public static void main(String[] args) throws InterruptedException {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 600;
        CountDownLatch mon = new CountDownLatch(2);
        CountDownLatch rl = new CountDownLatch(2);
        Thread[] ts = {
            start("mon-deadlock-1", () -> transfer(A, B, mon)),
            start("mon-deadlock-2", () -> transfer(B, A, mon)),
            start("rl-deadlock-1", () -> lockBoth(L1, L2, rl)),
            start("rl-deadlock-2", () -> lockBoth(L2, L1, rl)),
        };
        start("bystander", () -> {
            try {
                Thread.sleep(seconds * 1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        for (Thread t : ts) {
            while (!blocked(t)) {
                Thread.sleep(5);
            }
        }
        /* the latch waits are over once all four are parked or blocked on the locks */
        while (L1.getQueueLength() + L2.getQueueLength() < 2) {
            Thread.sleep(5);
        }
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(seconds * 1000);
        System.exit(0);
    }
}
