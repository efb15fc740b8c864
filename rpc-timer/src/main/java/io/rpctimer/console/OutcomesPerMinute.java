package io.rpctimer.console;

import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.retry.RetryOutcome;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * How many calls of one application ended in each {@link RetryOutcome}, per one-minute bucket over the last
 * {@value #MINUTES} minutes: a ring of {@value #MINUTES} buckets fed by the lifecycle's outcome events, for the
 * console's chart. A bucket covers one wall-clock minute ({@code [m * 60000, (m + 1) * 60000)} ms since the epoch) and
 * is reused, zeroed, when the ring comes round to it an hour later. An event is counted in the minute of its own time
 * ({@link RetryEvent#epochMillis()}); one older than the window, or more than a minute in the future of the clock, is
 * not counted.
 *
 * <p>Memory: {@value #MINUTES} x 5 longs, whatever the traffic.
 *
 * <p><b>Threading:</b> thread-safe. {@link #onEvent} runs on the threads that end calls (callers, the retry executor,
 * Dubbo's I/O threads) and holds this object's monitor for a few field writes; {@link #minutes()} copies under it.
 */
public final class OutcomesPerMinute implements RetryListener {

    /** Buckets in the ring: one hour. */
    public static final int MINUTES = 60;
    static final long MINUTE_MILLIS = 60_000;

    /** One minute of the chart. {@code startEpochMillis} is the minute's first millisecond since the epoch. */
    public record Minute(long startEpochMillis, long delivered, long abandoned, long rejected, long handedOver) {

        /** @return the calls that ended in this minute, whatever their outcome */
        public long total() {
            return delivered + abandoned + rejected + handedOver;
        }
    }

    private final LongSupplier clockMillis;
    /** Guarded by this: the minute (epoch millis / 60000) each bucket holds; -1 for none yet. */
    private final long[] minuteOf = new long[MINUTES];
    /** Guarded by this: per bucket, one count per {@link RetryOutcome} ordinal. */
    private final long[][] counts = new long[MINUTES][RetryOutcome.values().length];

    /** A ring on the system clock. */
    public OutcomesPerMinute() {
        this(System::currentTimeMillis);
    }

    /** @param clockMillis milliseconds since the epoch (tests pass a fake one) */
    public OutcomesPerMinute(LongSupplier clockMillis) {
        this.clockMillis = clockMillis;
        Arrays.fill(minuteOf, -1);
    }

    @Override
    public void onEvent(RetryEvent event) {
        RetryOutcome outcome = event.type().outcome();
        if (outcome != null) {
            record(outcome, event.epochMillis());
        }
    }

    /** Counts one call that ended in {@code outcome} at {@code epochMillis}. */
    public synchronized void record(RetryOutcome outcome, long epochMillis) {
        long minute = Math.floorDiv(epochMillis, MINUTE_MILLIS);
        long now = Math.floorDiv(clockMillis.getAsLong(), MINUTE_MILLIS);
        if (minute <= now - MINUTES || minute > now + 1) {
            return;
        }
        int i = (int) Math.floorMod(minute, (long) MINUTES);
        if (minuteOf[i] != minute) {
            if (minuteOf[i] > minute) {
                return; // the bucket already holds a later minute: this one left the window
            }
            minuteOf[i] = minute;
            Arrays.fill(counts[i], 0);
        }
        counts[i][outcome.ordinal()]++;
    }

    /** @return the last {@value #MINUTES} minutes up to the clock's, oldest first; minutes without a call count 0 */
    public synchronized List<Minute> minutes() {
        long now = Math.floorDiv(clockMillis.getAsLong(), MINUTE_MILLIS);
        List<Minute> out = new ArrayList<>(MINUTES);
        for (long m = now - MINUTES + 1; m <= now; m++) {
            int i = (int) Math.floorMod(m, (long) MINUTES);
            long[] c = minuteOf[i] == m ? counts[i] : new long[RetryOutcome.values().length];
            out.add(new Minute(m * MINUTE_MILLIS, c[RetryOutcome.DELIVERED.ordinal()],
                    c[RetryOutcome.ABANDONED.ordinal()], c[RetryOutcome.REJECTED.ordinal()],
                    c[RetryOutcome.HANDED_OVER.ordinal()]));
        }
        return out;
    }
}
