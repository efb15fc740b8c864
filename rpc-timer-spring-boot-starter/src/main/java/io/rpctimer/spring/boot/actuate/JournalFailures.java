package io.rpctimer.spring.boot.actuate;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Whether an application's journal failed recently: remembers, per application, its journal failure count and when
 * that count last grew, as seen by successive health reads. A count that grew within the window means the journal
 * failed in it, whatever the journal's own description says now.
 *
 * <p><b>Threading:</b> thread-safe; health reads may run concurrently.
 */
final class JournalFailures {

    /** Per application: the count last seen and when it last grew, in clock milliseconds. */
    private record Seen(long count, long grewAtMillis) {
    }

    private final Map<String, Seen> seen = new ConcurrentHashMap<>();
    private final long windowMillis;
    private final LongSupplier clockMillis;

    JournalFailures(long windowMillis, LongSupplier clockMillis) {
        this.windowMillis = windowMillis;
        this.clockMillis = clockMillis;
    }

    /**
     * @param application the application
     * @param count       its journal failures so far (they start at 0 with the application)
     * @return whether the count grew within the window
     */
    boolean recent(String application, long count) {
        long now = clockMillis.getAsLong();
        Seen s = seen.compute(application, (k, old) -> old == null
                ? new Seen(count, count > 0 ? now : Long.MIN_VALUE)
                : count > old.count ? new Seen(count, now) : count < old.count ? new Seen(count, Long.MIN_VALUE)
                : old);
        return s.grewAtMillis != Long.MIN_VALUE && now - s.grewAtMillis <= windowMillis;
    }
}
