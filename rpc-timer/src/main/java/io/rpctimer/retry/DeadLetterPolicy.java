package io.rpctimer.retry;

import java.time.Duration;

/**
 * How many dead letters an application keeps, and for how long: each is kept for {@code retention} after it became a
 * dead letter, and at most {@code max} are kept (past it the oldest are dropped). A journal's dead letters are trimmed
 * every {@code trimPeriod} (one DELETE and one COUNT, never a query per call); a store in memory trims as it adds.
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param retention  how long a dead letter is kept, {@code >= 1 s} (default 7 days)
 * @param max        how many are kept at most per application, {@code >= 0}; 0 keeps none (an abandoned call is then
 *                   removed, as without dead letters) (default 100,000)
 * @param trimPeriod how often a journal's dead letters are trimmed and counted, {@code >= 100 ms}, or zero for never
 *                   (default 10 s)
 */
public record DeadLetterPolicy(Duration retention, long max, Duration trimPeriod) {

    public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
    public static final long DEFAULT_MAX = 100_000;
    public static final Duration DEFAULT_TRIM_PERIOD = Duration.ofSeconds(10);
    private static final DeadLetterPolicy DEFAULTS = new DeadLetterPolicy(DEFAULT_RETENTION, DEFAULT_MAX,
            DEFAULT_TRIM_PERIOD);

    /** @throws IllegalArgumentException naming the component and its value, if it is out of range */
    public DeadLetterPolicy {
        if (retention == null || retention.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("retention: " + retention + " (expected: >= 1 s)");
        }
        if (max < 0) {
            throw new IllegalArgumentException("max: " + max + " (expected: >= 0)");
        }
        if (trimPeriod == null || !trimPeriod.isZero() && trimPeriod.compareTo(Duration.ofMillis(100)) < 0) {
            throw new IllegalArgumentException("trimPeriod: " + trimPeriod + " (expected: 0, or >= 100 ms)");
        }
    }

    /** @return 7 days, 100,000, trimmed every 10 s */
    public static DeadLetterPolicy defaults() {
        return DEFAULTS;
    }

    /** @return whether abandoned calls are kept at all */
    public boolean keeps() {
        return max > 0;
    }
}
