package io.rpctimer.retry;

/**
 * A call that ended {@code ABANDONED} after its retries and is kept as a dead letter, until it is replayed, purged, or
 * dropped by the bounds ({@link DeadLetterPolicy}). What an operator sees of it; the call itself (its arguments and
 * attachments) stays in the store.
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param application             the Dubbo application that made the call
 * @param serviceKey              the reference's service key ({@code group/interface:version})
 * @param method                  the method name
 * @param retryId                 the call's {@code retry.id}; a replay sends it again with this id
 * @param attempts                the retries sent before it was abandoned
 * @param firstFailureEpochMillis when its original attempt failed, epoch milliseconds (the consumer's clock)
 * @param lastFailureEpochMillis  when its last attempt failed and it became a dead letter, epoch milliseconds (with a
 *                                journal, the database's clock, which the bounds and the age filters use too)
 * @param lastFailure             the class and a short message of the last failure (at most 120 characters), or null
 * @param failureClass            the class name of the last failure, or null
 * @param lastProvider            the provider of the last attempt ({@code host:port}), or null
 * @param payloadBytes            the size of the serialized call in the journal, or -1 when it is kept in memory
 */
public record DeadLetter(String application, String serviceKey, String method, String retryId, int attempts,
                         long firstFailureEpochMillis, long lastFailureEpochMillis, String lastFailure,
                         String failureClass, String lastProvider, int payloadBytes) {

    /** @return the call's key: application, service, method and {@code retry.id} */
    public CallKey key() {
        return new CallKey(application, serviceKey, method, retryId);
    }
}
