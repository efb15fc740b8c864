package io.rpctimer.bench.timer;

import io.rpctimer.wheel.TimerTask;
import io.rpctimer.wheel.WheelTimer;
import java.util.concurrent.TimeUnit;

/**
 * rpc-timer's {@link WheelTimer}: 10 ms tick, 512 buckets per level, its default executor (a pool of
 * {@code max(2, cores)} daemon threads, 2 on the benchmark machine) runs due tasks.
 *
 * <p><b>Threading:</b> thread-safe, as the wheel.
 */
final class RpcTimerAdapter extends BenchTimer {

    static final String WORKER = "bench-rpc-timer-wheel";

    private final WheelTimer timer;
    private final TimerTask shared;

    RpcTimerAdapter(Runnable onFire) {
        this.timer = WheelTimer.builder()
                .tickDuration(BenchConfig.TICK_MILLIS, TimeUnit.MILLISECONDS)
                .ticksPerWheel(BenchConfig.TICKS_PER_WHEEL)
                .threadName(WORKER)
                .build();
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
        scheduleAndCancel(BenchConfig.CALL_TIMEOUT_NANOS); // the worker starts on the first newTimeout
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
