package io.rpctimer.retry;

import java.util.Map;
import java.util.Set;

/**
 * Where an application's dead letters are kept: a journal's table ({@link RetryJournal#deadLetters()}), shared by
 * every instance of a fleet on one database, or the lifecycle's list in memory. {@link DeadLetters} is the API
 * operators use; this is the store behind it.
 *
 * <p>Every operation is scoped to one application. A store never touches a pending call, except that
 * {@link #revive} makes dead letters pending again. Each dead letter is revived or purged at most once, whatever
 * runs at the same time (two operators, two instances): the store's own atomic step decides.
 *
 * <p><b>Threading:</b> implementations are thread-safe; every method may block the calling thread on the store (a
 * journal bounds each statement by its claim timeout). Times are epoch milliseconds.
 */
public interface DeadLetterStore {

    /** Returned by {@link Reviver#take} to leave a dead letter where it is. */
    long NOT_TAKEN = -1;

    /** @return true if the dead letters survive a restart (a journal), false if they are in memory */
    boolean durable();

    /** @return what it is, for operators: the journal's description, or "memory (lost at restart)"; no secret */
    String describe();

    /**
     * @param page     1-based
     * @param pageSize {@code >= 1}
     * @return one page of the dead letters matching {@code filter}, newest first
     * @throws RetryJournalException if the store failed
     */
    DeadLetterPage list(String application, DeadLetterFilter filter, int page, int pageSize)
            throws RetryJournalException;

    /**
     * @return how many dead letters match {@code filter}, by service key (no entry for a service with none)
     * @throws RetryJournalException if the store failed
     */
    Map<String, Long> count(String application, DeadLetterFilter filter) throws RetryJournalException;

    /**
     * Deletes the dead letters matching {@code filter}, in one atomic step.
     *
     * @return how many this call deleted
     * @throws RetryJournalException if the store failed; then none was deleted
     */
    long purge(String application, DeadLetterFilter filter) throws RetryJournalException;

    /**
     * Drops the dead letters older than {@code retentionMillis}, then the oldest past {@code max}, and counts what
     * is left.
     *
     * @throws RetryJournalException if the store failed
     */
    Trimmed trim(String application, long retentionMillis, long max) throws RetryJournalException;

    /**
     * Makes the dead letters matching {@code filter} of the given services pending calls again, oldest first, each
     * asked of {@code reviver} first. A journal moves each taken dead letter into its pending calls in one
     * transaction (owned by this instance, parked, next retry 1, due when {@code reviver} says), which only one
     * reviver ever wins; the reference's unpark or claim then puts it on the wheel. A store in memory removes it and
     * hands it to {@code reviver}, which puts it on the wheel itself.
     *
     * @param serviceKeys the services to revive dead letters of (those with a live reference here)
     * @return what was revived; {@link Revived#failure()} is set if the store failed after some were revived
     * @throws RetryJournalException if the store failed before any was revived
     */
    Revived revive(String application, DeadLetterFilter filter, Set<String> serviceKeys, Reviver reviver)
            throws RetryJournalException;

    /** Decides, for each dead letter a revive finds, whether it goes back and when. */
    @FunctionalInterface
    interface Reviver {
        /**
         * @param letter  the dead letter
         * @param payload for a journal, the call as the pending entry it would become ({@link RetryJournalEntry},
         *                next retry 1; a journal asks before it moves the letter, and may then lose it to another
         *                reviver); for a store in memory, the glue's in-memory call, already taken out of the store
         * @return when the call's first retry is due, epoch milliseconds; or {@link #NOT_TAKEN} to leave it dead
         */
        long take(DeadLetter letter, Object payload);
    }

    /**
     * What a trim did.
     *
     * @param expired   dropped past the retention
     * @param dropped   dropped past the maximum, oldest first
     * @param remaining dead letters of the application after the trim
     */
    record Trimmed(long expired, long dropped, long remaining) {
    }

    /**
     * What a revive did.
     *
     * @param revived   by service key, the dead letters made pending again
     * @param taken     dead letters another revive or a purge took first
     * @param conflicts dead letters left because a call with the same key is pending
     * @param failure   the store's failure that ended the revive early, or null
     */
    record Revived(Map<String, Long> revived, long taken, long conflicts, RetryJournalException failure) {

        public Revived {
            revived = Map.copyOf(revived);
        }

        /** @return all the dead letters made pending again */
        public long total() {
            return revived.values().stream().mapToLong(Long::longValue).sum();
        }
    }
}
