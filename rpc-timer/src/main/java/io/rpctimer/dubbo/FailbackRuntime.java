package io.rpctimer.dubbo;

import io.rpctimer.timeout.FutureTimeoutChecker;
import io.rpctimer.wheel.SharedWheelTimer;
import io.rpctimer.wheel.Timer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the {@code wheelfailback} invokers of one Dubbo application share: a lease on the JVM-wide wheel, a
 * future-timeout checker on it, and the set of calls with a retry pending, which {@link #close()} hands to the
 * {@link io.rpctimer.retry.RetryStore} when the application is destroyed.
 *
 * <p><b>Threading:</b> thread-safe.
 */
final class FailbackRuntime {

    private final SharedWheelTimer.Lease lease;
    private final Timer timer;
    private final FutureTimeoutChecker checker;
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
    }

    /** Runs on {@code timer} (tests); {@link #close()} leaves it running. */
    FailbackRuntime(Timer timer) {
        this.lease = null;
        this.timer = timer;
        this.checker = new FutureTimeoutChecker(timer);
    }

    Timer timer() {
        return timer;
    }

    FutureTimeoutChecker checker() {
        return checker;
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

    /** Hands the pending retries of {@code owner}, a reference being destroyed, to the store. */
    void handOver(WheelFailbackClusterInvoker<?> owner) {
        for (RetryTimerTask call : pending) {
            if (call.owner() == owner) {
                call.handOver(null);
            }
        }
    }

    /** Hands every pending retry to the store, then gives the wheel back. */
    void close() {
        closed = true;
        for (RetryTimerTask call : pending) {
            call.handOver(null);
        }
        if (lease != null) {
            lease.release();
        }
    }
}
