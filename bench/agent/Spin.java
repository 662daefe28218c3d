// Spin - a CPU-bound stand-in service for the agent overhead benchmark.
// Usage: java -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,Spin::unit Spin SECONDS
// One thread works; the main thread prints "t S N" (work units done by second S)
// every 10 seconds and "ops N" (all work units) at the end.
//
// Built so that its speed does not depend on the JIT's history: starting the
// Flight Recorder for the first time throws away all compiled code, and the
// code compiled again from a different profile ran up to 13 % faster or
// slower than the first - which would read as a profiling cost (or gain).
// So the work is one small method, compiled on its own (not inlined into a
// loop compiled on stack replacement), and nothing about the reporting runs
// in the working thread.
public final class Spin {
    static volatile long done; // work units finished
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

    static void work() {
        long h = 1;
        for (long n = 1;; n++) {
            h = unit(h + n);
            done = n;
            if ((n & 0xffff) == 0)
                sink = h;
        }
    }

    public static void main(String[] args) throws InterruptedException {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 60;
        Thread worker = new Thread(Spin::work, "spin");
        worker.setDaemon(true);
        long start = System.nanoTime();
        worker.start();
        for (long s = 10; s <= seconds; s += 10) {
            long wait = start + s * 1_000_000_000L - System.nanoTime();
            if (wait > 0)
                Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
            if (s < seconds)
                System.out.println("t " + s + " " + done);
        }
        long wait = start + seconds * 1_000_000_000L - System.nanoTime();
        if (wait > 0)
            Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
        System.out.println("ops " + done);
    }
}
