package io.rpctimer.retry;

/**
 * How a call that failed its first attempt ended. Every such call ends in exactly one outcome.
 *
 * <p><b>Threading:</b> immutable.
 */
public enum RetryOutcome {
    /** A retry succeeded; the event carries the attempt that did. */
    DELIVERED,
    /** Every retry of the budget failed, or a retry failed in a way the policy does not retry. */
    ABANDONED,
    /** The pending cap was reached when the call first failed, so no retry was scheduled. */
    REJECTED,
    /** The consumer shut down while the retry was pending; it went to the {@link RetryStore}. */
    HANDED_OVER
}
