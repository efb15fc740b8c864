package io.rpctimer.retry;

/**
 * Receives every {@link RetryEvent}. Register one programmatically, or as a service: list the implementation class
 * in {@code META-INF/services/io.rpctimer.retry.RetryListener} (it needs a public no-argument constructor).
 *
 * <p><b>Threading:</b> implementations must be thread-safe: events arrive from the caller's thread, the retry
 * executor and Dubbo's I/O threads, concurrently. Keep {@link #onEvent} short; an exception it throws is logged and
 * counted, and never changes the call's outcome.
 */
@FunctionalInterface
public interface RetryListener {

    /** @param event what happened to a failed call */
    void onEvent(RetryEvent event);
}
