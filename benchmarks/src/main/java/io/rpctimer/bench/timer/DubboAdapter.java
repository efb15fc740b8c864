package io.rpctimer.bench.timer;

import java.util.concurrent.TimeUnit;
import org.apache.dubbo.common.timer.HashedWheelTimer;
import org.apache.dubbo.common.timer.Timeout;
import org.apache.dubbo.common.timer.TimerTask;

/**
 * Dubbo's own {@link HashedWheelTimer} (3.3.6, the one behind failback retries and call timeouts): 10 ms tick, 512
 * buckets, no pending limit. Due tasks run on the worker thread; Dubbo offers no other option.
 *
 * <p><b>Threading:</b> thread-safe, as the timer.
 */
final class DubboAdapter extends NettyShapedAdapter<HashedWheelTimer, TimerTask, Timeout> {

    static final String WORKER = "bench-dubbo-wheel";

    DubboAdapter(Runnable onFire) {
        super(WORKER, new HashedWheelTimer(BenchConfig.daemonThreads(WORKER), BenchConfig.TICK_MILLIS,
                        TimeUnit.MILLISECONDS, BenchConfig.TICKS_PER_WHEEL),
                HashedWheelTimer::newTimeout, Timeout::cancel, action -> timeout -> action.run(), onFire);
    }

    @Override
    void start() {
        timer().start();
    }

    @Override
    public void close() {
        timer().stop();
    }
}
