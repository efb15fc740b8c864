package io.rpctimer.retry;

/**
 * What the glue sees of a call the {@link RetryLifecycle} is retrying: enough to send the next attempt.
 *
 * <p><b>Threading:</b> thread-safe; every getter reads the latest value.
 *
 * @param <P> the glue's in-memory form of the call
 */
public interface FailedCall<P> {

    /** @return the call's {@code retry.id}, stable across its retries */
    String retryId();

    /** @return the Dubbo application that made the call */
    String application();

    /** @return the reference's service key ({@code group/interface:version}) */
    String serviceKey();

    /** @return the method name */
    String method();

    /** @return what the glue handed to {@link RetryReference#admit} (or decoded from the journal) */
    P payload();

    /** @return retries sent so far (0 before the first) */
    int attempt();

    /** @return the provider of the attempt that failed last, or null */
    String lastProvider();

    /** @return the class and a short message of the last failure (at most 120 characters), or null */
    String lastFailure();

    /** @return when the call first failed, epoch milliseconds */
    long createdEpochMillis();

    /**
     * The glue selected {@code provider} for the attempt in flight and is sending it: call it once per attempt that
     * reaches a provider. Reported as a {@link RetryEvent.Type#SENT} event and counted in
     * {@link RetryStats#retriesSent()}; an attempt that fails before a provider is selected is not a sent retry.
     */
    void sent(String provider);
}
