/*
 * JprofWorkload - a small Java service stand-in whose profile has a known shape.
 *
 * Used by the integration tests, the benchmarks and samples/make-demo.sh to
 * make JFR recordings. Every kind jprof shows gets one clearly named source:
 *
 *   cpu    Checkout.computeTotals -> Crypto.hashLoop   (threads "checkout-N")
 *   alloc  Catalog.buildProducts  -> Catalog.describe  (thread  "catalog")
 *   lock   Inventory.reserve, synchronized on one monitor (threads "inventory-N")
 *   park   Payments.settle on one ReentrantLock         (threads "payments-N")
 *          Dispatcher.take waiting on a Condition       (thread  "dispatcher")
 *          Scheduler.tick in LockSupport.parkNanos       (thread  "scheduler")
 *   io     with -Dworkload.io=true only (thread names stay fixed otherwise):
 *          Orders.awaitReply blocked in a loopback socket read (thread "orders"),
 *          the peer answering every 20 ms (thread "orders-peer"), and
 *          Ledger.append / Ledger.replay writing and reading 1 MiB of a temp
 *          file every 20 ms (thread "ledger")
 *   gc     with -Dworkload.gc=true only: Churn.run allocates about 200 MB/s of
 *          64 KiB arrays, keeps the last 16 MiB alive (some survive a young
 *          collection and are copied), a 4 MiB array every 100 ms (humongous
 *          in G1), and calls System.gc() once half-way (thread "churn"):
 *          young collections every few hundred ms and one full collection;
 *          with -Dworkload.only=gc as well, the churn thread is the only one
 *          (a JVM that collects and does little else, for tests that run it
 *          next to another workload)
 *
 * Usage: java [-Dworkload.heavy=true] [-Dworkload.hot=mix] -cp DIR shop.JprofWorkload [SECONDS]
 * SECONDS defaults to 10. By default the catalog thread rests 1 ms between
 * batches so a 10 s recording stays a few MB; workload.heavy=true drops the
 * rest (benchmarks want many allocation events).
 * Runs for SECONDS, then stops every thread and exits 0. Thread count and
 * names never vary, so two runs differ only in sample counts.
 */
package shop;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

public final class JprofWorkload {
    static volatile boolean running = true;
    /* Results are published here so the JIT cannot drop the work. */
    static volatile long sink;

    public static void main(String[] args) throws InterruptedException {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 10;
        List<Thread> threads = new ArrayList<>();
        boolean gcOnly = "gc".equals(System.getProperty("workload.only"));
        if (!gcOnly) {
            for (int i = 0; i < 2; i++) {
                threads.add(start("checkout-" + i, Checkout::run));
            }
            threads.add(start("catalog", Catalog::run));
            for (int i = 0; i < 3; i++) {
                threads.add(start("inventory-" + i, Inventory::run));
            }
            for (int i = 0; i < 3; i++) {
                threads.add(start("payments-" + i, Payments::run));
            }
            Dispatcher dispatcher = new Dispatcher();
            threads.add(start("dispatcher", dispatcher::consume));
            threads.add(start("producer", dispatcher::produce));
            threads.add(start("scheduler", Scheduler::run));
        }
        if (Boolean.getBoolean("workload.io")) {
            Orders orders = new Orders();
            threads.add(start("orders", orders::run));
            threads.add(start("orders-peer", orders::peer));
            threads.add(start("ledger", Ledger::run));
        }
        if (Boolean.getBoolean("workload.gc")) {
            long halfway = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds) / 2;
            threads.add(start("churn", () -> Churn.run(halfway)));
        }

        Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
        running = false;
        for (Thread t : threads) {
            t.join(5000);
        }
        System.out.println("JprofWorkload done, sink=" + (sink & 0xff));
        System.exit(0);
    }

    static Thread start(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }
}

/* CPU: a pure computation loop, the hottest stack of the recording. */
final class Checkout {
    static void run() {
        long total = 0;
        while (JprofWorkload.running) {
            total += computeTotals(2000);
        }
        JprofWorkload.sink += total;
    }

    /* -Dworkload.hot=mix moves the checkout work into Crypto.mixLoop: a
     * second recording whose hot method changed, for the comparison tests. */
    static final boolean MIX = "mix".equals(System.getProperty("workload.hot"));

    static long computeTotals(int items) {
        long sum = 0;
        for (int i = 0; i < items; i++) {
            sum += MIX ? Crypto.mixLoop(i, 64) : Crypto.hashLoop(i, 64);
        }
        return sum;
    }
}

final class Crypto {
    static long hashLoop(long seed, int rounds) {
        long h = seed * 0x9E3779B97F4A7C15L;
        for (int r = 0; r < rounds; r++) {
            h ^= h >>> 31;
            h *= 0xBF58476D1CE4E5B9L;
            h ^= h >>> 29;
        }
        return h;
    }

    static long mixLoop(long seed, int rounds) {
        long h = seed + 0x632BE59BD9B4E019L;
        for (int r = 0; r < rounds; r++) {
            h = Long.rotateLeft(h * 0x94D049BB133111EBL, 27) ^ r;
        }
        return h;
    }
}

/* Allocation: arrays and strings, kept briefly so they are not scalar-replaced. */
final class Catalog {
    static final boolean HEAVY = Boolean.getBoolean("workload.heavy");

    static void run() {
        while (JprofWorkload.running) {
            List<String> products = buildProducts(500);
            JprofWorkload.sink += products.size();
            if (!HEAVY) {
                rest(1);
            }
        }
    }

    /* Thread.sleep, not parkNanos: the rest must not show up as a park event. */
    static void rest(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static List<String> buildProducts(int n) {
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long[] prices = new long[64 + (i & 63)];
            prices[i & 63] = i;
            out.add(describe(i, prices));
        }
        return out;
    }

    static String describe(int id, long[] prices) {
        StringBuilder sb = new StringBuilder(96);
        sb.append("product-").append(id).append(':').append(prices.length).append(':').append(prices[id & 63]);
        return sb.toString();
    }
}

/* Monitor contention: three threads take turns on one lock and work ~3 ms inside. */
final class Inventory {
    static final Object STOCK_LOCK = new Object();
    static long stock;

    static void run() {
        while (JprofWorkload.running) {
            reserve();
            LockSupport.parkNanos(200_000);
        }
    }

    static void reserve() {
        synchronized (STOCK_LOCK) {
            stock += busyMillis(3);
        }
    }

    static long busyMillis(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        long x = 0;
        while (System.nanoTime() < end) {
            x += Crypto.hashLoop(x, 8);
        }
        return x;
    }
}

/* java.util.concurrent contention: threads park inside ReentrantLock.lock(). */
final class Payments {
    static final ReentrantLock LEDGER = new ReentrantLock();
    static long balance;

    static void run() {
        while (JprofWorkload.running) {
            settle();
            LockSupport.parkNanos(200_000);
        }
    }

    static void settle() {
        LEDGER.lock();
        try {
            balance += Inventory.busyMillis(3);
        } finally {
            LEDGER.unlock();
        }
    }
}

/* A consumer that waits on a Condition for work a producer hands out every 5 ms
 * (the producer sleeps, so only the consumer's waits are park events). */
final class Dispatcher {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition ready = lock.newCondition();
    private final ArrayDeque<Integer> queue = new ArrayDeque<>();

    void produce() {
        int n = 0;
        while (JprofWorkload.running) {
            lock.lock();
            try {
                queue.add(n++);
                ready.signal();
            } finally {
                lock.unlock();
            }
            Catalog.rest(5);
        }
    }

    void consume() {
        while (JprofWorkload.running) {
            Integer job = take();
            if (job != null) {
                JprofWorkload.sink += job;
            }
        }
    }

    Integer take() {
        lock.lock();
        try {
            while (queue.isEmpty()) {
                if (!JprofWorkload.running) {
                    return null;
                }
                try {
                    ready.await(50, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    return null;
                }
            }
            return queue.poll();
        } finally {
            lock.unlock();
        }
    }
}

/* A periodic task that sleeps with LockSupport.parkNanos between ticks. */
final class Scheduler {
    static void run() {
        while (JprofWorkload.running) {
            tick();
        }
    }

    static void tick() {
        JprofWorkload.sink += System.nanoTime() & 1;
        LockSupport.parkNanos(4_000_000);
    }
}

/* I/O on a socket: "orders" asks its peer over loopback and blocks in the
 * read until the answer comes, 20 ms later (jdk.SocketRead). */
final class Orders {
    private final ServerSocket server;

    Orders() {
        try {
            server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    void run() {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            byte[] buf = new byte[512];
            while (JprofWorkload.running) {
                out.write(buf, 0, 64);
                out.flush();
                JprofWorkload.sink += awaitReply(in, buf);
            }
        } catch (IOException e) {
            if (JprofWorkload.running) throw new IllegalStateException(e);
        }
    }

    static int awaitReply(InputStream in, byte[] buf) throws IOException {
        return in.read(buf);
    }

    void peer() {
        try (Socket s = server.accept()) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            byte[] buf = new byte[512];
            while (JprofWorkload.running && in.read(buf) > 0) {
                Thread.sleep(20);
                out.write(buf, 0, 256);
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            /* the end of the run closes the sockets */
        }
    }
}

/* I/O on a file: "ledger" writes 1 MiB and reads it back (jdk.FileWrite,
 * jdk.FileRead), then rests 20 ms so the CPU profile stays Checkout's. */
final class Ledger {
    static void run() {
        byte[] block = new byte[1 << 18];
        try {
            File f = File.createTempFile("jprof-workload-ledger", ".dat");
            f.deleteOnExit();
            while (JprofWorkload.running) {
                append(f, block);
                JprofWorkload.sink += replay(f, block);
                Thread.sleep(20);
            }
            f.delete();
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    static void append(File f, byte[] block) throws IOException {
        try (FileOutputStream out = new FileOutputStream(f)) {
            for (int i = 0; i < 4; i++) out.write(block);
        }
    }

    static long replay(File f, byte[] block) throws IOException {
        long n = 0;
        try (FileInputStream in = new FileInputStream(f)) {
            int r;
            while ((r = in.read(block)) > 0) n += r;
        }
        return n;
    }
}

/* Garbage: young collections at a steady pace, with survivors. */
final class Churn {
    static void run(long fullGcAt) {
        byte[][] keep = new byte[256][];
        int n = 0;
        boolean fullDone = false;
        long nextBig = System.nanoTime();
        while (JprofWorkload.running) {
            /* 8 x 64 KiB, then 2 ms of rest: about 200 MB/s */
            for (int i = 0; i < 8; i++) {
                byte[] b = new byte[64 * 1024];
                b[n & 0xffff] = (byte) n;
                keep[n++ & 255] = b;
            }
            long now = System.nanoTime();
            if (now >= nextBig) {
                byte[] big = new byte[4 << 20];
                JprofWorkload.sink += big[n & 0xfffff];
                nextBig = now + TimeUnit.MILLISECONDS.toNanos(100);
            }
            if (!fullDone && now >= fullGcAt) {
                System.gc();
                fullDone = true;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
        JprofWorkload.sink += keep[0] == null ? 0 : keep[0].length;
    }
}
