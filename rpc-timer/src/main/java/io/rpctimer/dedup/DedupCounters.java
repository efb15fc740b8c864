package io.rpctimer.dedup;

import java.util.concurrent.atomic.LongAdder;

/**
 * The counters of call deduplication: executed, duplicates suppressed, in-progress refusals, store failures and calls
 * run unprotected.
 *
 * <p><b>Threading:</b> thread-safe; every method may be called from any thread. A {@link #snapshot()} taken while
 * calls are counted may be mid-update across counters.
 */
public final class DedupCounters {

    private final LongAdder executed = new LongAdder();
    private final LongAdder suppressed = new LongAdder();
    private final LongAdder inProgress = new LongAdder();
    private final LongAdder storeFailures = new LongAdder();
    private final LongAdder unprotected = new LongAdder();

    /** Counts a call that was claimed and run. */
    public void executed() {
        executed.increment();
    }

    /** Counts a duplicate that was not run. */
    public void suppressed() {
        suppressed.increment();
    }

    /** Counts a call refused because its execution was in progress. */
    public void inProgress() {
        inProgress.increment();
    }

    /** Counts a failed store operation. */
    public void storeFailure() {
        storeFailures.increment();
    }

    /** Counts a call run without protection, its claim having failed. */
    public void unprotected() {
        unprotected.increment();
    }

    /** @return the counts so far */
    public DedupStats snapshot() {
        return new DedupStats(executed.sum(), suppressed.sum(), inProgress.sum(), storeFailures.sum(),
                unprotected.sum());
    }
}
