package io.rpctimer.demo.provider.fault;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * What the service does with one call, as decided by {@link FaultInjector#nextServiceFault()}: wait for
 * {@link #delayElapsed()}, then either answer or, if {@link #rejects()}, throw {@code NotificationRejectedException}.
 *
 * <p>Immutable, so thread-safe; one instance per call.
 */
public final class ServiceFault {
    private final String rejectReason; // null: answer normally
    private final Duration delay;
    private final CompletableFuture<Void> delayElapsed;

    ServiceFault(String rejectReason, Duration delay, CompletableFuture<Void> delayElapsed) {
        this.rejectReason = rejectReason;
        this.delay = delay;
        this.delayElapsed = delayElapsed;
    }

    /** @return true if the call must fail with a business exception */
    public boolean rejects() {
        return rejectReason != null;
    }

    /** @return why the call is rejected, e.g. {@code "fail 30%"}; null if it is not */
    public String rejectReason() {
        return rejectReason;
    }

    /** @return the planned delay (latency + hang, whole milliseconds); zero = none */
    public Duration delay() {
        return delay;
    }

    /**
     * @return completes normally (never exceptionally) when the delay has elapsed, or earlier when the injector is
     *         cleared or released; already complete if there is no delay. Completion may run dependent stages on the
     *         JDK's delay-scheduler thread or on the thread calling {@code clear()}: keep them short.
     */
    public CompletableFuture<Void> delayElapsed() {
        return delayElapsed;
    }

    @Override
    public String toString() {
        return "ServiceFault[" + (rejects() ? "reject (" + rejectReason + ")" : "answer") + ", delay "
                + delay.toMillis() + " ms]";
    }
}
