package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournalEntry;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One append, update or remove waiting for the {@link GroupCommitWriter}'s next commit.
 *
 * <p><b>Threading:</b> created by the calling thread, executed by the writer thread; {@link #take} and
 * {@link #abandon} decide, once, which of the two owns it when the caller stops waiting.
 */
final class JournalWrite {

    enum Kind { APPEND, UPDATE, REMOVE }

    private static final int QUEUED = 0;
    private static final int TAKEN = 1;
    private static final int ABANDONED = 2;

    final Kind kind;
    final String retryId;
    /** APPEND only. */
    final RetryJournalEntry entry;
    final boolean parked;
    /** UPDATE only. */
    final int attempt;
    final long dueEpochMillis;
    final String lastProvider;
    final String lastFailure;
    /** true when the row was written; false when an update or remove found no row owned by this instance. */
    final CompletableFuture<Boolean> done = new CompletableFuture<>();
    private final AtomicInteger state = new AtomicInteger(QUEUED);

    private JournalWrite(Kind kind, String retryId, RetryJournalEntry entry, boolean parked, int attempt,
                         long dueEpochMillis, String lastProvider, String lastFailure) {
        this.kind = kind;
        this.retryId = retryId;
        this.entry = entry;
        this.parked = parked;
        this.attempt = attempt;
        this.dueEpochMillis = dueEpochMillis;
        this.lastProvider = lastProvider;
        this.lastFailure = lastFailure;
    }

    static JournalWrite append(RetryJournalEntry entry, boolean parked) {
        return new JournalWrite(Kind.APPEND, entry.retryId(), entry, parked, 0, 0, null, null);
    }

    static JournalWrite update(String retryId, int attempt, long dueEpochMillis, String lastProvider,
                               String lastFailure) {
        return new JournalWrite(Kind.UPDATE, retryId, null, false, attempt, dueEpochMillis, lastProvider,
                lastFailure);
    }

    static JournalWrite remove(String retryId) {
        return new JournalWrite(Kind.REMOVE, retryId, null, false, 0, 0, null, null);
    }

    /** Writer thread: @return true if the caller still waits, and the write is now the writer's to execute. */
    boolean take() {
        return state.compareAndSet(QUEUED, TAKEN);
    }

    /** Calling thread, after its wait ran out: @return true if the writer will never execute this write. */
    boolean abandon() {
        return state.compareAndSet(QUEUED, ABANDONED);
    }
}
