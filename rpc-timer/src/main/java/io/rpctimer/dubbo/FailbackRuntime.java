package io.rpctimer.dubbo;

import io.rpctimer.retry.SlowLaneExecutor;
import io.rpctimer.timeout.FutureTimeoutChecker;
import io.rpctimer.wheel.SharedWheelTimer;
import io.rpctimer.wheel.Timer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the {@code wheelfailback} invokers of one Dubbo application share: a lease on the JVM-wide wheel, a
 * future-timeout checker on it, the lanes retries are sent on (a reference whose sends are slow gets the slow lane),
 * and the set of calls with a retry pending, which {@link #close()} hands to the
 * {@link io.rpctimer.retry.RetryStore} when the application is destroyed.
 *
 * <p><b>Threading:</b> thread-safe.
 */
final class FailbackRuntime {

    private final SharedWheelTimer.Lease lease;
    private final Timer timer;
    private final FutureTimeoutChecker checker;
    private final SlowLaneExecutor lanes;
    private final Set<RetryTimerTask> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** Borrows the shared wheel. */
    FailbackRuntime() {
        this(SharedWheelTimer.acquire());
    }

    private FailbackRuntime(SharedWheelTimer.Lease lease) {
        this.lease = lease;
        this.timer = lease.timer();
        this.checker = new FutureTimeoutChecker(timer);
        this.lanes = SlowLaneExecutor.builder().threadNamePrefix("rpc-timer-retry").build();
    }

    /** Runs on {@code timer}, sending retries on the thread that fires them (tests); {@link #close()} leaves it. */
    FailbackRuntime(Timer timer) {
        this(timer, SlowLaneExecutor.builder().lanes(Runnable::run, Runnable::run).build());
    }

    /** Runs on {@code timer}, sending retries from {@code lanes} (tests); {@link #close()} leaves the timer. */
    FailbackRuntime(Timer timer, SlowLaneExecutor lanes) {
        this.lease = null;
        this.timer = timer;
        this.checker = new FutureTimeoutChecker(timer);
        this.lanes = lanes;
    }

    Timer timer() {
        return timer;
    }

    FutureTimeoutChecker checker() {
        return checker;
    }

    /** Where retries are sent from, keyed by their reference. */
    SlowLaneExecutor lanes() {
        return lanes;
    }

    boolean isClosed() {
        return closed;
    }

    void track(RetryTimerTask call) {
        pending.add(call);
        if (closed) {
            call.handOver(null); // lost the race with close(): hand over rather than leave it
        }
    }

    /** @return whether the call was tracked */
    boolean untrack(RetryTimerTask call) {
        return pending.remove(call);
    }

    /** Hands every pending retry to the store, then gives the wheel back. */
    void close() {
        closed = true;
        for (RetryTimerTask call : pending) {
            call.handOver(null);
        }
        lanes.shutdown();
        if (lease != null) {
            lease.release();
        }
    }
}
