package io.rpctimer.retry;

import java.util.concurrent.CompletionStage;

/**
 * The {@link RetryJournal}'s store failed (disk full, database down or too slow, a corrupt record). The message names
 * the store and what failed.
 *
 * <p>A write whose outcome is unknown (it was under way when the caller stopped waiting, or its commit's
 * acknowledgement was lost) is <em>maybe written</em>: {@link #maybeWritten()} is true, and {@link #resolution()}
 * completes once the journal knows — true if the write took effect, false if it did not (exceptionally if it never
 * finds out). A caller must then treat the row as possibly present: remove it at the call's outcome, and never tell
 * anyone that the call was refused.
 *
 * <p><b>Threading:</b> immutable once thrown.
 */
public class RetryJournalException extends Exception {

    private static final long serialVersionUID = 1L;

    private final transient CompletionStage<Boolean> resolution;

    /** A failure after which the write is known not to have taken effect. */
    public RetryJournalException(String message, Throwable cause) {
        this(message, cause, null);
    }

    /**
     * @param resolution null if the write is known not to have taken effect; otherwise its eventual outcome
     */
    public RetryJournalException(String message, Throwable cause, CompletionStage<Boolean> resolution) {
        super(message, cause);
        this.resolution = resolution;
    }

    /** @return true if the write may have taken effect despite this failure */
    public boolean maybeWritten() {
        return resolution != null;
    }

    /** @return the write's eventual outcome (true: written), or null if it is known not to have taken effect */
    public CompletionStage<Boolean> resolution() {
        return resolution;
    }
}
