package io.rpctimer.retry;

/**
 * One failed call in a {@link RetryJournal}.
 *
 * <p><b>Threading:</b> immutable (the payload array is not copied: neither side changes it).
 *
 * @param retryId            the call's {@code retry.id}
 * @param application        the Dubbo application that made the call
 * @param serviceKey         the service key ({@code group/interface:version})
 * @param method             the method name
 * @param payload            the call's arguments and attachments, serialized by the caller; opaque here
 * @param attempt            the retry that is scheduled next, 1-based
 * @param dueEpochMillis     when that retry is due, epoch milliseconds
 * @param lastProvider       the provider of the attempt that failed last, or null
 * @param lastFailure        a short text of the last failure, or null
 * @param createdEpochMillis when the call first failed, epoch milliseconds
 * @param parkedHere         in an entry {@link RetryJournal#claim} or {@link RetryJournal#unpark} hands out: true if this
 *                           journal parked it itself (a spill of this run), false if it is new to this run (an earlier
 *                           run's, another instance's, or adopted); false in an entry to append
 * @param fenced             in an entry {@link RetryJournal#claim} or {@link RetryJournal#unpark} hands out: true if
 *                           the hand-out was also the fence of retry {@code attempt} (see
 *                           {@link RetryJournal#claim}); false in an entry to append
 */
public record RetryJournalEntry(String retryId, String application, String serviceKey, String method,
                                byte[] payload, int attempt, long dueEpochMillis, String lastProvider,
                                String lastFailure, long createdEpochMillis, boolean parkedHere, boolean fenced) {

    /** An entry to append (not {@code parkedHere}, not {@code fenced}). */
    public RetryJournalEntry(String retryId, String application, String serviceKey, String method, byte[] payload,
                             int attempt, long dueEpochMillis, String lastProvider, String lastFailure,
                             long createdEpochMillis) {
        this(retryId, application, serviceKey, method, payload, attempt, dueEpochMillis, lastProvider, lastFailure,
                createdEpochMillis, false, false);
    }

    /** An entry handed out without a fence. */
    public RetryJournalEntry(String retryId, String application, String serviceKey, String method, byte[] payload,
                             int attempt, long dueEpochMillis, String lastProvider, String lastFailure,
                             long createdEpochMillis, boolean parkedHere) {
        this(retryId, application, serviceKey, method, payload, attempt, dueEpochMillis, lastProvider, lastFailure,
                createdEpochMillis, parkedHere, false);
    }

    /** @return this entry, handed out with the fence of retry {@link #attempt()} */
    public RetryJournalEntry asFenced() {
        return new RetryJournalEntry(retryId, application, serviceKey, method, payload, attempt, dueEpochMillis,
                lastProvider, lastFailure, createdEpochMillis, parkedHere, true);
    }

    /** @return the call's key: application, service, method and {@code retry.id} */
    public CallKey key() {
        return new CallKey(application, serviceKey, method, retryId);
    }
}
