package io.rpctimer.bench.timer;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The JDK's {@link ScheduledThreadPoolExecutor} with {@code setRemoveOnCancelPolicy(true)}, so that a cancelled
 * task leaves the heap at once instead of lingering until its delay: a binary heap under one lock, O(log n)
 * schedule and cancel. Due tasks run on the pool's thread(s).
 *
 * <p><b>Threading:</b> thread-safe, as the executor.
 */
final class JdkStpeAdapter extends BenchTimer {

    static final String WORKER = "bench-jdk-stpe";

    private final ScheduledThreadPoolExecutor executor;
    private final Runnable shared;

    /**
     * @param onFire  the shared task's action
     * @param threads core pool size: 1 as a single timer thread, like the wheels' one worker
     */
    JdkStpeAdapter(Runnable onFire, int threads) {
        this.executor = new ScheduledThreadPoolExecutor(threads, BenchConfig.daemonThreads(WORKER));
        this.executor.setRemoveOnCancelPolicy(true);
        this.shared = onFire;
    }

    @Override
    boolean scheduleAndCancel(long delayNanos) {
        return executor.schedule(shared, delayNanos, TimeUnit.NANOSECONDS).cancel(false);
    }

    @Override
    void scheduleShared(long delayNanos) {
        executor.schedule(shared, delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    void schedule(Runnable task, long delayNanos) {
        executor.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    void start() {
        executor.prestartAllCoreThreads();
    }

    @Override
    String workerThreadName() {
        return WORKER;
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
