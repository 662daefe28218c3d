/*
 * DemoService - the service of jprof's local demo (scripts/demo), with four
 * known problems for jprof-top to find:
 *
 *   hot method        Pricing.applyDiscounts burns CPU   (threads "http-worker-1..2")
 *   allocation        Reports.render builds big strings   (thread  "report-builder")
 *   contended lock    Inventory.reserve holds one monitor while it waits
 *                     (threads "inventory-1..3": two of them BLOCKED at any time)
 *   deadlock          "order-sync" holds Orders, waits for Stock;
 *                     "stock-sync" holds Stock, waits for Orders  (forever)
 *
 * Usage: java -cp DIR demo.DemoService [SECONDS]   (default: until killed)
 */
package demo;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

public final class DemoService {
    static volatile long sink;

    static final class Pricing {
        static long applyDiscounts(long seed) {
            long x = seed;
            for (int i = 0; i < 200_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
                x ^= x >>> 17;
            }
            return x;
        }

        /* busy about half the time, so the demo leaves the machine some air */
        static void serve() {
            long n = 0;
            while (true) {
                long end = System.nanoTime() + 6_000_000;
                while (System.nanoTime() < end) {
                    sink += applyDiscounts(n++);
                }
                pause(6);
            }
        }
    }

    static final class Reports {
        static String render(int rows) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < rows; i++) {
                sb.append("row ").append(i).append(": ").append(new int[64].length).append('\n');
            }
            return sb.toString();
        }

        static void build() {
            while (true) {
                List<String> pages = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    pages.add(render(500));
                }
                sink += pages.size();
                pause(5);
            }
        }
    }

    static final class Inventory {
        static final Object STOCK_LOCK = new Object();
        static long reserved;

        /* holds the monitor while it waits on a slow "backend": the other
         * inventory threads queue up behind it (long enough for the JDK's
         * lock events), without burning CPU */
        static void reserve() {
            synchronized (STOCK_LOCK) {
                reserved++;
                pause(15);
            }
        }

        static void run() {
            while (true) {
                reserve();
                pause(1);
            }
        }
    }

    static final class Orders {
    }

    static final class Stock {
    }

    static final Orders ORDERS = new Orders();
    static final Stock STOCK = new Stock();

    static void syncBoth(Object first, Object second, CountDownLatch both) {
        synchronized (first) {
            both.countDown();
            try {
                both.await();
            } catch (InterruptedException e) {
                return;
            }
            synchronized (second) {
                sink++;
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

    static void start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    public static void main(String[] args) throws InterruptedException {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : Long.MAX_VALUE / 1000;
        for (int i = 1; i <= 2; i++) {
            start("http-worker-" + i, Pricing::serve);
        }
        start("report-builder", Reports::build);
        for (int i = 1; i <= 3; i++) {
            start("inventory-" + i, Inventory::run);
        }
        CountDownLatch both = new CountDownLatch(2);
        start("order-sync", () -> syncBoth(ORDERS, STOCK, both));
        start("stock-sync", () -> syncBoth(STOCK, ORDERS, both));
        System.out.println("DemoService ready");
        Thread.sleep(seconds * 1000);
        System.exit(0);
    }
}
