package io.rpctimer.retry;

/**
 * What happens to a failed call when the pending-retry cap is reached. Either way the call's outcome is
 * {@link RetryOutcome#REJECTED}: counted, sent to listeners and logged; never a silent drop.
 *
 * <p><b>Threading:</b> immutable.
 */
public enum OverflowPolicy {
    /** The caller gets an exception saying the cap was reached (the default). */
    REJECT,
    /** The caller gets the empty failback result; the rejection is only counted, reported and logged. */
    LOG
}
