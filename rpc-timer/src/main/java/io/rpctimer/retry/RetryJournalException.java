package io.rpctimer.retry;

/**
 * The {@link RetryJournal}'s store failed (disk full, database down or too slow, a corrupt record). The message names
 * the store and what failed.
 *
 * <p><b>Threading:</b> immutable once thrown.
 */
public class RetryJournalException extends Exception {

    private static final long serialVersionUID = 1L;

    public RetryJournalException(String message, Throwable cause) {
        super(message, cause);
    }
}
