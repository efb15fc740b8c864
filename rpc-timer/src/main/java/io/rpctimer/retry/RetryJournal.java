package io.rpctimer.retry;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * A durable, write-ahead record of the failed calls a consumer instance still has to retry, so that they survive a
 * crash, a restart or a deploy, and move to a surviving instance of a fleet when their owner dies.
 *
 * <p>The retry lifecycle calls it at exactly these points: {@link #append} when a call fails back (before its caller
 * gets the empty result), {@link #fence} right before each retry is sent, {@link #remove} at the call's outcome
 * ({@link #bury} when it is abandoned, if the journal keeps dead letters),
 * {@link #release} when a reference is destroyed while its application runs, {@link #claim} when a reference starts
 * and then periodically (its own entries from an earlier run, those of instances that are gone, and released ones),
 * and {@link #unpark} when room frees on the wheel for calls that were spilled past the in-memory cap. The success
 * path never calls it.
 *
 * <p>Entries are keyed by {@link CallKey} (application, service, method, {@code retry.id}). Every entry has one owner
 * instance at a time; an instance only changes entries it owns, never replaces a row another owner holds, and a dead
 * instance's entries are adopted with the database's own guard (a conditional update on the owner and its lease),
 * never a lock of ours. The payload (the call's arguments and attachments, serialized by the caller with the
 * reference's own serialization) is opaque here and protected by a checksum.
 *
 * <h3>Fencing</h3>
 * In a fleet, a paused or partitioned instance may have been taken for dead and its calls adopted. So before each
 * send the lifecycle calls {@link #fence}: one conditional write, judged by the database on the database's clock,
 * that both checks that this instance still owns the call with a valid lease and records the attempt. An instance
 * whose lease renewals have failed for most of a lease answers false to {@link #leaseHeld()} and sends nothing.
 * A {@link #claim} or {@link #unpark} may fence the entries it hands out in the transaction that hands them out
 * ({@link RetryJournalEntry#fenced()}): the first retry of such an entry needs no fence of its own if it is sent
 * within {@link #fenceValidityMillis()} of the moment the claim or unpark was called.
 *
 * <p><b>Threading:</b> implementations are thread-safe. {@link #append} blocks the calling thread until the change is
 * durable (implementations batch concurrent calls into one commit) or its write timeout; {@link #fence} and
 * {@link #remove} return at once and complete later, on a thread of the journal's. A write whose outcome is unknown
 * throws (or completes with) a {@link RetryJournalException} whose {@link RetryJournalException#maybeWritten()} is
 * true. Times are epoch milliseconds.
 */
public interface RetryJournal extends AutoCloseable {

    /** What an {@link #append} did. */
    enum Append {
        /** The call is durable. */
        APPENDED,
        /** A call with the same {@link CallKey} is pending already (here or at another instance): nothing written. */
        DUPLICATE
    }

    /** The database's verdict at {@link #fence}. */
    enum Fence {
        /** This instance owns the call, its lease is valid, and the attempt is recorded: send it. */
        OWNED,
        /** Another instance (or another run of this instance's identity) owns the call now: do not send. */
        ADOPTED,
        /** There is no such call: it ended elsewhere, or its append never took effect. */
        GONE,
        /** The call is this instance's, but its lease is not valid for long enough to send now: try later. */
        LEASE_EXPIRED
    }

    /**
     * Persists a call that has just failed back. Returns once it is durable.
     *
     * @param entry  the call, owned by this instance
     * @param parked true if the call is not on the wheel (spilled past the in-memory cap): {@link #unpark} hands it
     *               back later; false if it is scheduled in memory now
     * @return {@link Append#APPENDED}, or {@link Append#DUPLICATE} if a call with its key is pending already
     * @throws RetryJournalException if the store failed; see {@link RetryJournalException#maybeWritten()}
     */
    Append append(RetryJournalEntry entry, boolean parked) throws RetryJournalException;

    /**
     * The fence before retry {@code attempt} of a call is sent: confirms on the database's clock that this instance
     * owns the call with a valid lease, and records that the attempt is under way ({@code attempt + 1} is then the
     * retry a new owner would send next, due at {@code nextDueEpochMillis}).
     *
     * @param key                the call
     * @param attempt            the retry about to be sent, 1-based
     * @param nextDueEpochMillis when the retry after it is due, should this one fail or its sender die
     * @param lastProvider       the provider of the attempt that failed last, or null
     * @param lastFailure        a short text of that failure (class and message, bounded), or null
     * @return the verdict; completes exceptionally with a {@link RetryJournalException} if the store failed
     */
    CompletionStage<Fence> fence(CallKey key, int attempt, long nextDueEpochMillis, String lastProvider,
                                 String lastFailure);

    /**
     * Removes a call at its outcome (delivered, abandoned). A call handed over at a graceful stop is NOT removed: it
     * resumes at the next start or with a survivor.
     *
     * @return true if this instance's row was removed; false if there was none of this instance's (another instance
     *     adopted it, or it was never written); completes exceptionally if the store failed
     */
    CompletionStage<Boolean> remove(CallKey key);

    /**
     * Moves a call this run holds into the journal's dead letters at its {@code ABANDONED} outcome, in one
     * transaction: the dead letter is written and the pending call removed together, and only while this run still
     * holds the call (a call another instance adopted is left to it). A dead letter of the same key is replaced.
     * Returns at once and completes later, as {@link #remove}.
     *
     * <p>The default, for a journal that keeps no dead letters ({@link #deadLetters()} null), removes the call.
     *
     * @return true if this run's call was moved; false if this run holds no such call; completes exceptionally if
     *     the store failed
     */
    default CompletionStage<Boolean> bury(CallKey key, Abandonment abandonment) {
        return remove(key);
    }

    /**
     * @return the dead letters this journal keeps (one set per application, shared by the instances of a fleet), or
     *     null if it keeps none: the lifecycle then keeps them in memory
     */
    default DeadLetterStore deadLetters() {
        return null;
    }

    /**
     * Gives up calls this instance holds on its wheel (a reference destroyed while its application runs), so that
     * the next {@link #claim} of their service — this instance's or another's — takes them.
     *
     * @throws RetryJournalException if the store failed; the calls are then taken at the next start or after this
     *                               instance's lease
     */
    void release(List<CallKey> keys) throws RetryJournalException;

    /**
     * Takes over what this instance should resume for one service, up to {@code limit} entries: first its own
     * entries from an earlier run of the same instance identity (scheduled or parked then; none that this run
     * scheduled) and its parked entries, then released entries and entries of instances of the same application whose
     * lease has expired, which become this instance's as they are handed out. Claimed entries count as scheduled (not
     * parked). A dead instance's entries past {@code limit} stay its own, for the next claim or {@link #unpark} of any
     * surviving instance: survivors share them. Calling it again (a second reference of the service, or the periodic
     * claim) hands out only parked and newly adopted entries, never one that is scheduled now.
     *
     * <p>An entry handed out {@link RetryJournalEntry#fenced() fenced} was fenced by the transaction that handed it
     * out, as {@link #fence} fences retry {@link RetryJournalEntry#attempt()}: its transaction checked this instance's
     * ownership and lease on the database's clock and recorded that retry as under way (the row's next retry is
     * {@code attempt + 1}; its due time is left as it was). Its {@link Fence#OWNED} verdict holds for
     * {@link #fenceValidityMillis()} from the moment this method was called; a send later than that needs a fence.
     * A retry recorded so and never sent (this instance stopped or died first) counts as spent, as after a fence.
     *
     * @param application the Dubbo application name
     * @param serviceKey  the service key ({@code group/interface:version})
     * @param limit       how many to return at most, {@code >= 0}
     * @return the claimed entries: this instance's own earliest due first, then adopted ones earliest due first
     *     (per dead instance); a torn or corrupt entry is skipped with one error naming it
     */
    List<RetryJournalEntry> claim(String application, String serviceKey, int limit) throws RetryJournalException;

    /**
     * Hands back up to {@code limit} parked entries of a service owned by this instance, earliest due first, and
     * marks them scheduled; when this instance has fewer, adopts the rest as {@link #claim} does (released entries,
     * and those of instances whose lease has expired), so that room freed on the wheel drains a dead instance's
     * backlog without waiting for the next periodic claim. Entries may be handed out fenced, as by {@link #claim}.
     */
    List<RetryJournalEntry> unpark(String application, String serviceKey, int limit) throws RetryJournalException;

    /**
     * @return true if other instances may adopt this instance's entries (a shared database with leases): then a
     *     failed {@link #fence} must not be taken as leave to send
     */
    boolean fences();

    /**
     * @return false while this instance cannot show that its lease is valid (its renewals have failed for most of a
     *     lease, by its own monotonic clock): send nothing until it is renewed. Always true without a lease.
     */
    boolean leaseHeld();

    /**
     * @return how long, in milliseconds from the moment a {@link #fence} was asked for, its {@link Fence#OWNED}
     *     verdict is leave to send: the fence showed the lease valid at least that long past its own execution, so no
     *     other instance can have adopted the call before then. A send later than that needs a new fence.
     *     {@link Long#MAX_VALUE} without a lease.
     */
    default long fenceValidityMillis() {
        return Long.MAX_VALUE;
    }

    /** @return a one-line description of the store's state for operators (kind, location, owner, health); no secret */
    String describe();

    /** Releases the store's resources; entries stay for the next start. Idempotent. */
    @Override
    void close();
}
