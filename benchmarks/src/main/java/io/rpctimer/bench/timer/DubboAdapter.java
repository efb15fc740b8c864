package io.rpctimer.bench.timer;

import java.util.concurrent.TimeUnit;
import org.apache.dubbo.common.timer.HashedWheelTimer;
import org.apache.dubbo.common.timer.TimerTask;

/**
 * Dubbo's own {@link HashedWheelTimer} (3.3.6, the one behind failback retries and call timeouts): 10 ms tick, 512
 * buckets, no pending limit. Due tasks run on the worker thread; Dubbo offers no other option.
 *
 * <p><b>Threading:</b> thread-safe, as the timer.
 */
final class DubboAdapter extends BenchTimer {

    static final String WORKER = "bench-dubbo-wheel";

    private final HashedWheelTimer timer;
    private final TimerTask shared;

    DubboAdapter(Runnable onFire) {
        this.timer = new HashedWheelTimer(BenchConfig.daemonThreads(WORKER), BenchConfig.TICK_MILLIS,
                TimeUnit.MILLISECONDS, BenchConfig.TICKS_PER_WHEEL);
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
    }
}
