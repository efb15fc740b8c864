package io.rpctimer.retry;

/**
 * What happens to a failed call when the pending-retry cap is reached. With {@link #REJECT} and {@link #LOG} the
 * call's outcome is {@link RetryOutcome#REJECTED}: counted, sent to listeners and logged; never a silent drop. With
 * {@link #SPILL} and a {@link RetryJournal}, the call is kept in the journal (parked) instead, and goes on the wheel
 * when room frees; without a journal, or when the journal fails, {@link #SPILL} rejects as {@link #REJECT} does.
 *
 * <p><b>Threading:</b> immutable.
 */
public enum OverflowPolicy {
    /** The caller gets an exception saying the cap was reached (the default). */
    REJECT,
    /** The caller gets the empty failback result; the rejection is only counted, reported and logged. */
    LOG,
    /** The call is appended to the journal as parked, its caller gets the empty result, and it is retried later. */
    SPILL
}
