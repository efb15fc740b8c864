package io.rpctimer.retry;

/**
 * How a call ended {@code ABANDONED}: what {@link RetryJournal#bury} records in its dead letter besides the call.
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param attempts     the retries sent, {@code >= 1}
 * @param lastProvider the provider of the last attempt, or null
 * @param lastFailure  the class and a short message of the last failure (at most 120 characters), or null
 * @param failureClass the class name of the last failure, or null
 */
public record Abandonment(int attempts, String lastProvider, String lastFailure, String failureClass) {

    /** @return the abandonment after retry {@code attempts} failed with {@code failure} at {@code provider} */
    static Abandonment of(int attempts, String provider, Throwable failure, String failureText) {
        return new Abandonment(attempts, provider, failureText, failure == null ? null : failure.getClass().getName());
    }
}
