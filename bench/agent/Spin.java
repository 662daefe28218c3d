// Spin - a CPU-bound stand-in service for the agent overhead benchmark.
// Usage: java Spin SECONDS; prints "t S N" (work units done by second S) every
// 10 seconds, and "ops N" (all work units) when it ends.
public final class Spin {
    static volatile long sink;

    static long unit(long seed) {
        long h = seed;
        for (int i = 0; i < 10_000; i++) {
            h ^= h << 13;
            h ^= h >>> 7;
            h ^= h << 17;
        }
        return h;
    }

    public static void main(String[] args) {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 60;
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L;
        long next = start + 10_000_000_000L;
        long ops = 0, h = 1, now;
        while ((now = System.nanoTime()) < end) {
            if (now >= next) {
                System.out.println("t " + (next - start) / 1_000_000_000L + " " + ops);
                next += 10_000_000_000L;
            }
            for (int k = 0; k < 100; k++) {
                h = unit(h + k);
                ops++;
            }
        }
        sink = h;
        System.out.println("ops " + ops);
    }
}
