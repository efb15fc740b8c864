package io.rpctimer.bench.failback;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A control for the timers' tick lag: a daemon thread that only sleeps, 10 ms at a time, and records how late it
 * wakes. Whatever delays it (the machine's other work, GC pauses) delays a timer's worker too; a timer lag far above
 * this one means the timer's worker itself was held up.
 *
 * <p><b>Threading:</b> start and close from one thread; the sleeper thread writes the maximum, any thread reads it.
 */
final class SleeperLag implements AutoCloseable {

    private static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final Thread thread;
    private volatile boolean stopped;
    private volatile long maxLagNanos; // written by the sleeper thread only

    private SleeperLag() {
        thread = new Thread(this::run, "failback-bench-sleeper");
        thread.setDaemon(true);
    }

    static SleeperLag start() {
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
    double maxLagMillis() {
        return maxLagNanos / 1e6;
    }

    @Override
    public void close() {
        stopped = true;
        LockSupport.unpark(thread);
    }
}
