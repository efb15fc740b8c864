package io.rpctimer.retry;

/**
 * An operation named a {@code retry.id} that no dead letter of the application has (never abandoned, replayed or
 * purged meanwhile, or dropped by the bounds). A page can answer it with "not found" rather than "bad request".
 *
 * <p><b>Threading:</b> immutable once thrown.
 */
public class NoSuchDeadLetterException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String retryId;

    /**
     * @param application the application whose dead letters were searched
     * @param retryId     the id asked for
     */
    public NoSuchDeadLetterException(String application, String retryId) {
        super("retryId: '" + retryId + "' (expected: the retry.id of a dead letter of " + application
                + "; none has it: never abandoned, or replayed, purged or dropped since)");
        this.retryId = retryId;
    }

    /** @return the id asked for */
    public String retryId() {
        return retryId;
    }
}
