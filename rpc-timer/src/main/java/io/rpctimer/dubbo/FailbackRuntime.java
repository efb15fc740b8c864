package io.rpctimer.dubbo;

import io.rpctimer.retry.SlowLaneExecutor;
import io.rpctimer.timeout.FutureTimeoutChecker;
import io.rpctimer.wheel.SharedWheelTimer;
import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.Timer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What the {@code wheelfailback} invokers of one Dubbo application share: a lease on the JVM-wide wheel, a
 * future-timeout checker on it, the lanes retries are sent on (a reference whose sends are slow gets the slow lane),
 * and the set of calls with a retry pending, which {@link #close()} hands to the
 * {@link io.rpctimer.retry.RetryStore} when the application is destroyed.
 *
 * <p>A reference can also be destroyed while the application runs ({@code ReferenceConfig.destroy()}, a migration
 * rule replacing it). Dubbo then destroys its directory but never calls the cluster invoker, so while any retry is
 * pending a sweep on the wheel looks every {@value #SWEEP_MILLIS} ms for calls whose reference is gone and hands them
 * over; a reference's retries are handed over within about a second of its destruction, not when each comes due.
 *
 * <p><b>Threading:</b> thread-safe.
 */
final class FailbackRuntime {

    /** How often the sweep looks for destroyed references, in milliseconds. */
    static final long SWEEP_MILLIS = 1_000;

    private final SharedWheelTimer.Lease lease;
    private final Timer timer;
    private final FutureTimeoutChecker checker;
    private final SlowLaneExecutor lanes;
    private final Set<RetryTimerTask> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    /** Whether the sweep runs on the wheel by itself (tests may call {@link #sweep()} themselves instead). */
    private final boolean sweeps;
    /** Whether a sweep is on the wheel. */
    private final AtomicBoolean sweeping = new AtomicBoolean();
    /** The sweep's timeout, cancelled when the last pending call ends so that an idle wheel holds nothing of ours. */
    private volatile Timeout sweep;

    /** Borrows the shared wheel. */
    FailbackRuntime() {
        this(SharedWheelTimer.acquire());
    }

    private FailbackRuntime(SharedWheelTimer.Lease lease) {
        this.lease = lease;
        this.timer = lease.timer();
        this.checker = new FutureTimeoutChecker(timer);
        this.lanes = SlowLaneExecutor.builder().threadNamePrefix("rpc-timer-retry").build();
        this.sweeps = true;
    }

    /** Runs on {@code timer}, sending retries on the thread that fires them (tests); {@link #close()} leaves it. */
    FailbackRuntime(Timer timer) {
        this(timer, SlowLaneExecutor.builder().lanes(Runnable::run, Runnable::run).build());
    }

    /** Runs on {@code timer}, sending retries from {@code lanes} (tests); {@link #close()} leaves the timer. */
    FailbackRuntime(Timer timer, SlowLaneExecutor lanes) {
        this(timer, lanes, false);
    }

    /** As {@link #FailbackRuntime(Timer, SlowLaneExecutor)}, sweeping on {@code timer} by itself if {@code sweeps}. */
    FailbackRuntime(Timer timer, SlowLaneExecutor lanes, boolean sweeps) {
        this.lease = null;
        this.timer = timer;
        this.checker = new FutureTimeoutChecker(timer);
        this.lanes = lanes;
        this.sweeps = sweeps;
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
        } else if (sweeps && sweeping.compareAndSet(false, true)) {
            scheduleSweep();
        }
    }

    private void scheduleSweep() {
        try {
            sweep = timer.newTimeout(t -> sweep(), SWEEP_MILLIS, TimeUnit.MILLISECONDS);
        } catch (IllegalStateException | RejectedExecutionException e) {
            sweeping.set(false); // the wheel stopped: the application is closing, and close() hands everything over
        }
    }

    /**
     * Hands over the pending calls whose reference was destroyed. While calls are pending and the runtime is open,
     * the sweep puts itself back on the wheel.
     */
    void sweep() {
        for (RetryTimerTask call : pending) {
            if (call.owner().isGone()) {
                call.handOver(null);
            }
        }
        if (!sweeps || closed) {
            return;
        }
        if (!pending.isEmpty()) {
            scheduleSweep();
            return;
        }
        sweeping.set(false);
        if (!pending.isEmpty() && sweeping.compareAndSet(false, true)) {
            scheduleSweep(); // a call came in between the check and the reset
        }
    }

    /** @return whether the call was tracked */
    boolean untrack(RetryTimerTask call) {
        if (!pending.remove(call)) {
            return false;
        }
        Timeout t = sweep;
        // a sweep already running (cancel fails) finds nothing pending and stops by itself
        if (pending.isEmpty() && t != null && t.cancel()) {
            sweeping.set(false);
            if (!pending.isEmpty() && sweeping.compareAndSet(false, true)) {
                scheduleSweep(); // a call came in meanwhile
            }
        }
        return true;
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
        lanes.shutdown();
        if (lease != null) {
            lease.release();
        }
    }
}
