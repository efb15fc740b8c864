package io.rpctimer.retry;

import java.util.concurrent.atomic.LongAdder;

/**
 * The counters behind {@link RetryStats}, kept from the events a retry engine reports.
 *
 * <p><b>Threading:</b> thread-safe and lock-free; {@link #snapshot()} is weakly consistent under concurrent updates
 * (each counter is exact, the set of them may straddle an event).
 */
final class RetryCounters {

    private final LongAdder failedCalls = new LongAdder();
    private final LongAdder retriesSent = new LongAdder();
    private final LongAdder retriesFailed = new LongAdder();
    private final LongAdder delivered = new LongAdder();
    private final LongAdder abandoned = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final LongAdder handedOver = new LongAdder();
    private final LongAdder listenerErrors = new LongAdder();

    /** A call failed its first attempt with a retryable failure: it will be SCHEDULED or REJECTED. */
    public void callFailed() {
        failedCalls.increment();
    }

    /** Counts one event by its type. */
    public void record(RetryEvent.Type type) {
        switch (type) {
            case SENT -> retriesSent.increment();
            case FAILED -> retriesFailed.increment();
            case DELIVERED -> delivered.increment();
            case ABANDONED -> abandoned.increment();
            case REJECTED -> rejected.increment();
            case HANDED_OVER -> handedOver.increment();
            case SCHEDULED -> { }
        }
    }

    public void listenerError() {
        listenerErrors.increment();
    }

    /** @return the counters now */
    public RetryStats snapshot() {
        long d = delivered.sum();
        long a = abandoned.sum();
        long r = rejected.sum();
        long h = handedOver.sum();
        long failed = failedCalls.sum();
        long pending = Math.max(0, failed - d - a - r - h);
        return new RetryStats(failed, pending, retriesSent.sum(), retriesFailed.sum(), d, a, r, h,
                listenerErrors.sum());
    }
}
