package io.rpctimer.bench.timer;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
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
final class NettyAdapter extends NettyShapedAdapter<HashedWheelTimer, TimerTask, Timeout> {

    static final String WORKER = "bench-netty-wheel";

    private final ExecutorService taskExecutor;

    /**
     * @param onFire          the shared task's action
     * @param executorThreads 0 to run tasks on the worker (Netty's default), else the size of a task pool
     */
    NettyAdapter(Runnable onFire, int executorThreads) {
        this(onFire, executorThreads == 0 ? null
                : Executors.newFixedThreadPool(executorThreads, BenchConfig.daemonThreads("bench-netty-task")));
    }

    private NettyAdapter(Runnable onFire, ExecutorService taskExecutor) {
        super(WORKER, timer(taskExecutor), HashedWheelTimer::newTimeout, Timeout::cancel,
                action -> timeout -> action.run(), onFire);
        this.taskExecutor = taskExecutor;
    }

    private static HashedWheelTimer timer(ExecutorService taskExecutor) {
        return taskExecutor == null
                ? new HashedWheelTimer(BenchConfig.daemonThreads(WORKER), BenchConfig.TICK_MILLIS,
                        TimeUnit.MILLISECONDS, BenchConfig.TICKS_PER_WHEEL)
                : new HashedWheelTimer(BenchConfig.daemonThreads(WORKER), BenchConfig.TICK_MILLIS,
                        TimeUnit.MILLISECONDS, BenchConfig.TICKS_PER_WHEEL, true, -1, taskExecutor);
    }

    @Override
    void start() {
        timer().start();
    }

    @Override
    public void close() {
        timer().stop();
        if (taskExecutor != null) {
            taskExecutor.shutdownNow();
        }
    }
}
