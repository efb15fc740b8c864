package io.rpctimer.retry;

/**
 * Receives the retries still pending when the consumer shuts down, so they are kept rather than lost. The default is
 * an {@link InMemoryRetryStore}, which keeps the latest {@value InMemoryRetryStore#DEFAULT_CAPACITY} of them for the
 * life of the JVM (readable by code that outlives the Dubbo application, e.g. a test or a launcher), dropping and
 * counting older ones; a durable store can replay them after a restart.
 *
 * <p>Register a store programmatically, or as a service: list the implementation class in
 * {@code META-INF/services/io.rpctimer.retry.RetryStore}.
 *
 * <p><b>Threading:</b> implementations must be thread-safe.
 */
@FunctionalInterface
public interface RetryStore {

    /**
     * Takes one pending retry. An exception is logged and counted, and the retry is then reported as
     * {@code HANDED_OVER} with the failure attached, never dropped silently.
     *
     * @param retry the pending retry
     * @throws Exception if the store could not keep it
     */
    void handOver(PendingRetry retry) throws Exception;
}
