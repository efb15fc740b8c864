package io.rpctimer.demo.provider.ledger;

/**
 * How a call served by a demo provider ended, as the provider saw it. The consumer may see something else: a call
 * that {@link #COMPLETED} after the consumer's timeout is a failure there (and a duplicate if it is retried).
 *
 * <p>Immutable, so thread-safe.
 */
public enum CallOutcome {
    /** The service answered normally. */
    COMPLETED,
    /** The service refused it with {@code NotificationRejectedException} (injected business failure). */
    REJECTED,
    /** Failed at the RPC level before the service ran (injected error). */
    RPC_ERROR,
    /** Failed for any other reason. */
    FAILED
}
