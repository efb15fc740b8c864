package io.rpctimer.retry;

/**
 * How one failed call ended, as its per-call handle ({@link Admission#outcome()}) completes with it.
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param outcome      the outcome
 * @param retryId      the call's {@code retry.id}
 * @param attempt      for {@code DELIVERED} the retry that delivered it; for {@code ABANDONED} the retries sent; for
 *                     {@code HANDED_OVER} the retry that was pending; 0 for {@code REJECTED}
 * @param provider     the provider of that attempt, or null
 * @param lastFailure  the class and a short message of the last failure, or null
 * @param epochMillis  when the call ended, epoch milliseconds
 */
public record CallOutcome(RetryOutcome outcome, String retryId, int attempt, String provider, String lastFailure,
                          long epochMillis) {
}
