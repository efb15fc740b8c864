package io.rpctimer.dedup;

import java.util.concurrent.TimeUnit;

/**
 * How long a {@link DedupStore} keeps its entries.
 *
 * <h3>Started window</h3>
 * How long a started entry blocks other deliveries of its key when its owner never reports done or release: the
 * provider died, or the store could not record the outcome. Longer than the longest run of a deduplicated method, or a
 * slow but alive execution loses its entry and a retry may run beside it. Every retry that arrives within the window
 * is refused ({@code IN_PROGRESS}) and uses up one of the consumer's retries, so it must also be well inside the
 * consumer's retry horizon, or a call whose provider died is abandoned. Default 30 s.
 *
 * <h3>Done window</h3>
 * How long a done entry suppresses new deliveries of its key: at least the consumer's retry horizon, the time from a
 * call's first attempt to its last retry. With wheelfailback's defaults (3 retries after about 5, 10 and 20 s, jitter
 * 0.2, plus each attempt's timeout) that is under a minute; a retry journal that restores retries after a consumer
 * restart lengthens it by the downtime. Default 120 s.
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param startedMillis the started window in milliseconds, 1 ms .. 1 day
 * @param doneMillis the done window in milliseconds, 1 ms .. 30 days
 */
public record DedupWindows(long startedMillis, long doneMillis) {

    /** The default started window, in milliseconds. */
    public static final long DEFAULT_STARTED_MILLIS = 30_000;
    /** The default done window, in milliseconds. */
    public static final long DEFAULT_DONE_MILLIS = 120_000;
    private static final long MAX_STARTED_MILLIS = TimeUnit.DAYS.toMillis(1);
    private static final long MAX_DONE_MILLIS = TimeUnit.DAYS.toMillis(30);
    private static final DedupWindows DEFAULTS = new DedupWindows(DEFAULT_STARTED_MILLIS, DEFAULT_DONE_MILLIS);

    /**
     * @throws IllegalArgumentException {@code startedMillis: 0 (expected: 1..86400000)}, and likewise for
     *         {@code doneMillis}
     */
    public DedupWindows {
        if (startedMillis < 1 || startedMillis > MAX_STARTED_MILLIS) {
            throw new IllegalArgumentException("startedMillis: " + startedMillis + " (expected: 1.."
                    + MAX_STARTED_MILLIS + ")");
        }
        if (doneMillis < 1 || doneMillis > MAX_DONE_MILLIS) {
            throw new IllegalArgumentException("doneMillis: " + doneMillis + " (expected: 1.." + MAX_DONE_MILLIS
                    + ")");
        }
    }

    /** @return 30 s started, 120 s done */
    public static DedupWindows defaults() {
        return DEFAULTS;
    }

    @Override
    public String toString() {
        return "started " + startedMillis + " ms, done " + doneMillis + " ms";
    }
}
