package io.rpctimer.dedup;

/**
 * A {@link DedupStore} could not answer: its database is unreachable, a statement failed. The caller decides what to
 * do with the call (the {@code retrydedup} filter runs it unprotected and counts a store failure).
 *
 * <p><b>Threading:</b> an ordinary exception.
 */
public class DedupStoreException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what the store was doing, with the key
     * @param cause the store's own failure
     */
    public DedupStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
