package io.rpctimer.retry;

/**
 * A snapshot of failback counters. Every call that failed its first attempt is counted once in
 * {@code failedCalls} and ends in exactly one outcome, so
 * {@code failedCalls == delivered + abandoned + rejected + handedOver + pending}.
 *
 * <p><b>Threading:</b> immutable, thread-safe.
 *
 * @param failedCalls     calls whose first attempt failed with a failure the policy retries
 * @param pending         calls with a retry pending now
 * @param retriesSent     retries sent to a provider
 * @param retriesFailed   retries that failed
 * @param delivered       calls a retry delivered
 * @param abandoned       calls given up
 * @param rejected        calls refused at the pending cap
 * @param handedOver      calls handed to the {@link RetryStore} at shutdown
 * @param listenerErrors  exceptions thrown by listeners (logged, otherwise ignored)
 */
public record RetryStats(long failedCalls, long pending, long retriesSent, long retriesFailed, long delivered,
                         long abandoned, long rejected, long handedOver, long listenerErrors) {

    /** @return calls that reached an outcome */
    public long ended() {
        return delivered + abandoned + rejected + handedOver;
    }
}
