package io.rpctimer.retry;

import java.util.List;

/**
 * A durable, write-ahead record of the failed calls a consumer instance still has to retry, so that they survive a
 * crash, a restart or a deploy, and move to a surviving instance of a fleet when their owner dies.
 *
 * <p>The retry lifecycle calls it at exactly these points: {@link #append} when a call fails back (before its caller
 * gets the empty result), {@link #update} when the next retry of a call is scheduled, {@link #remove} at the call's
 * outcome, {@link #claim} when a reference of a service starts (its own entries from an earlier run, and those of
 * instances that are gone), and {@link #unpark} when room frees on the wheel for calls that were spilled past the
 * in-memory cap. The success path never calls it.
 *
 * <p>Entries are keyed by {@code retryId}. Every entry has one owner instance at a time; an instance only changes
 * entries it owns, and a dead instance's entries are adopted with the database's own guard (a conditional update on
 * the owner), never a lock of ours. The payload (the call's arguments and attachments, serialized by the caller with
 * the reference's own serialization) is opaque here and protected by a checksum.
 *
 * <p><b>Threading:</b> implementations are thread-safe. {@link #append}, {@link #update} and {@link #remove} may
 * block the calling thread until the change is durable (implementations batch concurrent calls into one commit);
 * they throw {@link RetryJournalException} when the store fails. Times are epoch milliseconds.
 */
public interface RetryJournal extends AutoCloseable {

    /**
     * Persists a call that has just failed back. Returns once it is durable.
     *
     * @param entry  the call, owned by this instance
     * @param parked true if the call is not on the wheel (spilled past the in-memory cap): {@link #unpark} hands it
     *               back later; false if it is scheduled in memory now
     * @throws RetryJournalException if the store could not keep it; the caller decides what the call's outcome is
     */
    void append(RetryJournalEntry entry, boolean parked) throws RetryJournalException;

    /**
     * Records a call's progress: its next retry is scheduled.
     *
     * @param retryId        the call
     * @param attempt        the retry now scheduled, 1-based
     * @param dueEpochMillis when it is due
     * @param lastProvider   the provider of the attempt that failed last, or null
     * @param lastFailure    a short text of that failure (class and message, bounded), or null
     * @return false if this instance no longer owns the entry (another instance adopted it): stop retrying it here
     * @throws RetryJournalException if the store failed
     */
    boolean update(String retryId, int attempt, long dueEpochMillis, String lastProvider, String lastFailure)
            throws RetryJournalException;

    /**
     * Removes a call at its outcome (delivered, abandoned, rejected). A call handed over at a graceful stop is NOT
     * removed: it resumes at the next start.
     *
     * @throws RetryJournalException if the store failed
     */
    void remove(String retryId) throws RetryJournalException;

    /**
     * Takes over what this instance should resume for one service: its own entries from an earlier run of the
     * same instance identity (scheduled or parked then; none that this run scheduled), its parked entries, and
     * every entry of an instance of the same application whose lease has expired. Claimed entries are owned by
     * this instance and count as scheduled (not parked). Entries past {@code limit} stay parked and are owned by
     * this instance, for {@link #unpark}. Calling it again (a second reference of the service) hands out only
     * parked and newly adopted entries, never one that is scheduled now.
     *
     * @param application the Dubbo application name
     * @param serviceKey  the service key ({@code group/interface:version})
     * @param limit       how many to return at most, {@code >= 0}
     * @return the claimed entries, earliest due first; a torn or corrupt entry is skipped with one error naming it
     */
    List<RetryJournalEntry> claim(String application, String serviceKey, int limit) throws RetryJournalException;

    /**
     * Hands back up to {@code limit} parked entries of a service owned by this instance, earliest due first, and
     * marks them scheduled.
     */
    List<RetryJournalEntry> unpark(String application, String serviceKey, int limit) throws RetryJournalException;

    /** @return a one-line description of the store's state for operators (kind, location, owner, health) */
    String describe();

    /** Releases the store's resources; entries stay for the next start. Idempotent. */
    @Override
    void close();
}
