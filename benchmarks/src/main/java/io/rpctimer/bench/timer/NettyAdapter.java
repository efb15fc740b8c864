package io.rpctimer.bench.timer;

import io.netty.util.HashedWheelTimer;
import io.netty.util.TimerTask;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Netty's {@link HashedWheelTimer} (4.2.2): 10 ms tick, 512 buckets, no pending limit. By default due tasks run on
 * the worker thread, as every user of the plain constructors gets; with {@code executorThreads > 0} they run on a
 * fixed pool given as Netty's {@code taskExecutor} instead.
 *
 * <p><b>Threading:</b> thread-safe, as the timer.
 */
final class NettyAdapter extends BenchTimer {

    static final String WORKER = "bench-netty-wheel";

    private final HashedWheelTimer timer;
    private final ExecutorService taskExecutor;
    private final TimerTask shared;

    /**
     * @param onFire          the shared task's action
     * @param executorThreads 0 to run tasks on the worker (Netty's default), else the size of a task pool
     */
    NettyAdapter(Runnable onFire, int executorThreads) {
        if (executorThreads == 0) {
            this.taskExecutor = null;
            this.timer = new HashedWheelTimer(BenchConfig.daemonThreads(WORKER), BenchConfig.TICK_MILLIS,
                    TimeUnit.MILLISECONDS, BenchConfig.TICKS_PER_WHEEL);
        } else {
            this.taskExecutor = Executors.newFixedThreadPool(executorThreads,
                    BenchConfig.daemonThreads("bench-netty-task"));
            this.timer = new HashedWheelTimer(BenchConfig.daemonThreads(WORKER), BenchConfig.TICK_MILLIS,
                    TimeUnit.MILLISECONDS, BenchConfig.TICKS_PER_WHEEL, true, -1, taskExecutor);
        }
        this.shared = timeout -> onFire.run();
    }

    @Override
    boolean scheduleAndCancel(long delayNanos) {
        return timer.newTimeout(shared, delayNanos, TimeUnit.NANOSECONDS).cancel();
    }

    @Override
    void scheduleShared(long delayNanos) {
        timer.newTimeout(shared, delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    void schedule(Runnable task, long delayNanos) {
        timer.newTimeout(timeout -> task.run(), delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    void start() {
        timer.start();
    }

    @Override
    String workerThreadName() {
        return WORKER;
    }

    @Override
    public void close() {
        timer.stop();
        if (taskExecutor != null) {
            taskExecutor.shutdownNow();
        }
    }
}
