package io.rpctimer.retry;

import java.util.List;

/**
 * An application's retries as an operator sees them ({@link RetryLifecycle#state()}).
 *
 * <p><b>Threading:</b> immutable; a weakly consistent snapshot.
 *
 * @param application      the Dubbo application
 * @param stats            the application's counters (calls resumed from the journal count as failed calls of
 *                         this instance, so {@code failedCalls == ended + pending} holds per instance)
 * @param resumed          calls taken from the journal (an earlier run's, another instance's, or parked ones of an
 *                         earlier run)
 * @param journalFailures  journal operations that failed (the calls went on in memory)
 * @param unpersistable    calls whose payload the glue could not serialize (retried in memory only)
 * @param unreadable       journal entries skipped because their payload could not be read
 * @param journal          the journal's own description, or {@code "none"}
 * @param references       each live reference
 */
public record LifecycleState(String application, RetryStats stats, long resumed, long journalFailures,
                             long unpersistable, long unreadable, String journal, List<ReferenceState> references) {
}
