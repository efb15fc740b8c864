package io.rpctimer.retry;

/**
 * One reference's retries as an operator sees them ({@link RetryLifecycle#state()}).
 *
 * <p><b>Threading:</b> immutable; a weakly consistent snapshot.
 *
 * @param serviceKey             the reference's service key
 * @param pending                calls in memory with a retry pending (on the wheel, waiting for the budget, or in
 *                               flight)
 * @param waitingForBudget       of those, due retries waiting for a budget token
 * @param parked                 calls this instance parked in the journal past the cap and has not unparked yet
 * @param oldestPendingAgeMillis how long the oldest pending call has been failing, in milliseconds; 0 if none
 * @param budgetWaits            due retries that had to wait for a token, since the start
 * @param budget                 the budget's state in one line
 * @param stats                  the reference's counters
 * @param sendsDeferred          attempts put back on the wheel unsent because this instance could not show it held
 *                               its lease, or the journal could not be asked (each tried again a second later)
 */
public record ReferenceState(String serviceKey, int pending, int waitingForBudget, long parked,
                             long oldestPendingAgeMillis, long budgetWaits, String budget, RetryStats stats,
                             long sendsDeferred) {
}
