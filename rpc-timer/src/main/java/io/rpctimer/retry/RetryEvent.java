package io.rpctimer.retry;

/**
 * One step in the life of a failed call, sent to {@link RetryListener}s. Attempt 0 is the original call; retry
 * {@code k} is attempt {@code k}.
 *
 * <p><b>Threading:</b> immutable, thread-safe.
 *
 * @param type        what happened
 * @param application the Dubbo application that made the call, or null when the reporter does not know it
 * @param retryId     the call's retry id, stable across its retries (the {@code retry.id} attachment)
 * @param service     the service interface name
 * @param method      the method name
 * @param attempt     see {@link Type}
 * @param provider    the provider address ({@code host:port}) of the attempt, or null when none was involved; for
 *                    {@link Type#SCHEDULED}, that of the attempt that failed
 * @param delayMillis for {@link Type#SCHEDULED}, the delay until the retry, in milliseconds; otherwise 0
 * @param failure     the failure of the attempt (FAILED, ABANDONED; for SCHEDULED, of the attempt that failed; for
 *                    REJECTED, a {@link java.util.concurrent.RejectedExecutionException} saying why, caused by the
 *                    call's failure), or null
 * @param epochMillis when it happened, in milliseconds since the epoch
 * @param custody     for {@link Type#HANDED_OVER}, where the call is now; otherwise null
 */
public record RetryEvent(Type type, String application, String retryId, String service, String method, int attempt,
                         String provider, long delayMillis, Throwable failure, long epochMillis, Custody custody) {

    /** An event that is not a hand-over ({@code custody} is null). */
    public RetryEvent(Type type, String application, String retryId, String service, String method, int attempt,
                      String provider, long delayMillis, Throwable failure, long epochMillis) {
        this(type, application, retryId, service, method, attempt, provider, delayMillis, failure, epochMillis, null);
    }

    /** An event whose reporter does not know the application ({@code application} is null). */
    public RetryEvent(Type type, String retryId, String service, String method, int attempt, String provider,
                      long delayMillis, Throwable failure, long epochMillis) {
        this(type, null, retryId, service, method, attempt, provider, delayMillis, failure, epochMillis);
    }

    /** The kinds of step; the last four are the call's outcome. */
    public enum Type {
        /** Retry {@code attempt} was put on the wheel, due after {@code delayMillis}. */
        SCHEDULED(null),
        /** Retry {@code attempt} was sent to {@code provider}. */
        SENT(null),
        /** Retry {@code attempt} failed; a SCHEDULED or an ABANDONED event follows. */
        FAILED(null),
        /** Retry {@code attempt} succeeded. */
        DELIVERED(RetryOutcome.DELIVERED),
        /** Given up after {@code attempt} retries. */
        ABANDONED(RetryOutcome.ABANDONED),
        /** Refused at the pending cap; {@code attempt} is 0. */
        REJECTED(RetryOutcome.REJECTED),
        /**
         * Left for someone else: at a stop (kept in the journal, or handed to the {@link RetryStore}), or because
         * another instance adopted the call; {@code attempt} is the retry that was pending, {@code custody} says
         * where the call is.
         */
        HANDED_OVER(RetryOutcome.HANDED_OVER);

        private final RetryOutcome outcome;

        Type(RetryOutcome outcome) {
            this.outcome = outcome;
        }

        /** @return the outcome this event ends the call with, or null if the call goes on */
        public RetryOutcome outcome() {
            return outcome;
        }
    }

    /** Where a {@link Type#HANDED_OVER} call went. */
    public enum Custody {
        /** In the journal: it resumes at the next start, or with a surviving instance of the fleet. */
        JOURNAL,
        /** In the journal if its write committed: the write's outcome is unknown. */
        JOURNAL_UNCONFIRMED,
        /** Another instance adopted it (or ended it) meanwhile: that instance sends it, not this one. */
        ANOTHER_INSTANCE,
        /** No journal holds it: handed to the {@link RetryStore}. */
        RETRY_STORE,
        /** Kept nowhere: {@code failure} says why (the RetryStore refused it). */
        NOWHERE
    }

    /** @return whether this event ends the call */
    public boolean isOutcome() {
        return type.outcome != null;
    }
}
