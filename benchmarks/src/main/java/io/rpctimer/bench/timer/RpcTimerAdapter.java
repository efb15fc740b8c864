package io.rpctimer.bench.timer;

import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.TimerTask;
import io.rpctimer.wheel.WheelTimer;
import java.util.concurrent.TimeUnit;

/**
 * rpc-timer's {@link WheelTimer}: 10 ms tick, 512 buckets per level, its default executor (a pool of
 * {@code max(2, cores)} daemon threads, 2 on the benchmark machine) runs due tasks.
 *
 * <p><b>Threading:</b> thread-safe, as the wheel.
 */
final class RpcTimerAdapter extends NettyShapedAdapter<WheelTimer, TimerTask, Timeout> {

    static final String WORKER = "bench-rpc-timer-wheel";

    RpcTimerAdapter(Runnable onFire) {
        super(WORKER, WheelTimer.builder()
                        .tickDuration(BenchConfig.TICK_MILLIS, TimeUnit.MILLISECONDS)
                        .ticksPerWheel(BenchConfig.TICKS_PER_WHEEL)
                        .threadName(WORKER)
                        .build(),
                WheelTimer::newTimeout, Timeout::cancel, action -> timeout -> action.run(), onFire);
    }

    @Override
    void start() {
        scheduleAndCancel(BenchConfig.CALL_TIMEOUT_NANOS); // the worker starts on the first newTimeout
    }

    @Override
    public void close() {
        timer().stop();
    }
}
