package io.rpctimer.retry;

/**
 * One recorded step in the life of a failed call, as {@link RetryLifecycle#history} returns it for operators.
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param type        what happened
 * @param retryId     the call's {@code retry.id}
 * @param serviceKey  the reference's service key
 * @param method      the method name
 * @param attempt     as in {@link RetryEvent}
 * @param provider    the provider involved, or null
 * @param delayMillis for SCHEDULED, the delay until the retry, in milliseconds; otherwise 0
 * @param failure     the class and a short message of the failure involved, or null
 * @param epochMillis when it happened, epoch milliseconds
 */
public record RetryStep(RetryEvent.Type type, String retryId, String serviceKey, String method, int attempt,
                        String provider, long delayMillis, String failure, long epochMillis) {
}
