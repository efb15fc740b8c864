package io.rpctimer.demo.consumer;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A control for the wheel's tick lag: a daemon thread that only sleeps, 10 ms at a time (the wheel's tick), and
 * records how late it wakes. Whatever delays it (an overloaded machine, GC pauses) delays the wheel's worker too; so
 * a worker lag far above this one means the worker itself was held up, which it must never be. The fault-injection
 * suite and the failback benchmarks report it next to every tick lag they measure.
 *
 * <p><b>Threading:</b> start and close from one thread; the thread it starts writes the maximum, any thread reads it.
 * Times in milliseconds.
 */
public final class SleeperLag implements AutoCloseable {

    private static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final Thread thread;
    private volatile boolean stopped;
    private volatile long maxLagNanos; // written by the sleeper thread only

    private SleeperLag() {
        thread = new Thread(this::run, "sleeper-lag");
        thread.setDaemon(true);
    }

    /** @return a started sleeper (a daemon thread named {@code sleeper-lag}) */
    public static SleeperLag start() {
        SleeperLag s = new SleeperLag();
        s.thread.start();
        return s;
    }

    private void run() {
        while (!stopped) {
            long t0 = System.nanoTime();
            LockSupport.parkNanos(PERIOD_NANOS);
            long lag = System.nanoTime() - t0 - PERIOD_NANOS;
            if (lag > maxLagNanos && !stopped) {
                maxLagNanos = lag;
            }
        }
    }

    /** @return the worst oversleep so far, in milliseconds */
    public double maxLagMillis() {
        return maxLagNanos / 1e6;
    }

    /** Stops the thread. Idempotent. */
    @Override
    public void close() {
        stopped = true;
        LockSupport.unpark(thread);
    }
}
