package io.rpctimer.journal;

import io.rpctimer.retry.Abandonment;
import io.rpctimer.retry.CallKey;
import io.rpctimer.retry.RetryJournalEntry;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One append, fence, remove or bury waiting for the {@link GroupCommitWriter}'s next commit.
 *
 * <p>{@link #done} completes once with the write's real outcome: the {@link Outcome} once the transaction committed,
 * exceptionally once it is known not to have taken effect (rolled back, or never started), or exceptionally with
 * {@link OutcomeUnknown} if even that could not be found out. A caller that stops waiting before then does not
 * change it.
 *
 * <p><b>Threading:</b> created by the calling thread, executed by the writer thread; {@link #take} and
 * {@link #abandon} decide, once, which of the two owns it when the caller stops waiting.
 */
final class JournalWrite {

    enum Kind { APPEND, FENCE, REMOVE, BURY }

    /** What a committed write did. */
    enum Outcome {
        /** The row was inserted, updated or deleted. */
        WRITTEN,
        /** An append found a row with its key. */
        DUPLICATE,
        /** A fence, remove or bury found no row with its key. */
        GONE,
        /** A fence, remove or bury found the row held by another owner or run. */
        ADOPTED,
        /** A fence found the row this run's, but the lease too short to send. */
        LEASE_EXPIRED,
        /** An append was not written: this instance's lease row is held by another run, which took it over. */
        REFUSED
    }

    /** The write may or may not have committed, and reading it back failed too. */
    static final class OutcomeUnknown extends Exception {
        private static final long serialVersionUID = 1L;

        OutcomeUnknown(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private static final int QUEUED = 0;
    private static final int TAKEN = 1;
    private static final int ABANDONED = 2;

    final Kind kind;
    final CallKey key;
    /** APPEND only. */
    final RetryJournalEntry entry;
    final boolean parked;
    /** FENCE only: the attempt recorded as next, when it is due, and what failed last. */
    final int nextAttempt;
    final long dueEpochMillis;
    final String lastProvider;
    final String lastFailure;
    /** BURY only: how the call ended. */
    final Abandonment abandonment;
    final CompletableFuture<Outcome> done = new CompletableFuture<>();
    /** The writer thread's: the owner id this instance had when the write was executed. */
    String owner;
    private final AtomicInteger state = new AtomicInteger(QUEUED);

    private JournalWrite(Kind kind, CallKey key, RetryJournalEntry entry, boolean parked, int nextAttempt,
                         long dueEpochMillis, String lastProvider, String lastFailure, Abandonment abandonment) {
        this.kind = kind;
        this.key = key;
        this.entry = entry;
        this.parked = parked;
        this.nextAttempt = nextAttempt;
        this.dueEpochMillis = dueEpochMillis;
        this.lastProvider = lastProvider;
        this.lastFailure = lastFailure;
        this.abandonment = abandonment;
    }

    static JournalWrite append(RetryJournalEntry entry, boolean parked) {
        return new JournalWrite(Kind.APPEND, entry.key(), entry, parked, 0, 0, null, null, null);
    }

    static JournalWrite fence(CallKey key, int nextAttempt, long dueEpochMillis, String lastProvider,
                              String lastFailure) {
        return new JournalWrite(Kind.FENCE, key, null, false, nextAttempt, dueEpochMillis, lastProvider, lastFailure,
                null);
    }

    static JournalWrite remove(CallKey key) {
        return new JournalWrite(Kind.REMOVE, key, null, false, 0, 0, null, null, null);
    }

    /** Moves the call this run holds into the dead letters, and removes it: one write of three statements. */
    static JournalWrite bury(CallKey key, Abandonment abandonment) {
        return new JournalWrite(Kind.BURY, key, null, false, 0, 0, null, null, abandonment);
    }

    /** Writer thread: @return true if the caller still waits, and the write is now the writer's to execute. */
    boolean take() {
        return state.compareAndSet(QUEUED, TAKEN);
    }

    /** Calling thread, after its wait ran out: @return true if the writer will never execute this write. */
    boolean abandon() {
        return state.compareAndSet(QUEUED, ABANDONED);
    }

    @Override
    public String toString() {
        return kind + " " + key;
    }
}
