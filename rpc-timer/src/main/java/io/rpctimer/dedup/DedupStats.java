package io.rpctimer.dedup;

/**
 * A snapshot of {@link DedupCounters}. Every call that carried a retry id on a deduplicated method is counted once,
 * as executed, suppressed, refused or unprotected.
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param executed calls claimed and run (they then ended done or released)
 * @param suppressed calls not run because an earlier execution completed: answered with an empty success
 * @param inProgress calls refused because an execution had started and not ended: answered with a retryable error
 * @param storeFailures store operations that failed (claim, done or release)
 * @param unprotected calls run without protection because the claim failed
 */
public record DedupStats(long executed, long suppressed, long inProgress, long storeFailures, long unprotected) {
}
