package io.rpctimer.console;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rpctimer.console.OutcomesPerMinute.Minute;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryOutcome;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class OutcomesPerMinuteTest {

    private static final long MINUTE = OutcomesPerMinute.MINUTE_MILLIS;
    /** A clock 10 s into some minute, far from the epoch. */
    private final AtomicLong now = new AtomicLong(29_000_000L * MINUTE + 10_000);
    private final OutcomesPerMinute ring = new OutcomesPerMinute(now::get);

    private static RetryEvent event(RetryEvent.Type type, long epochMillis) {
        return new RetryEvent(type, "app", "id", "svc", "m", 1, null, 0, null, epochMillis);
    }

    private Minute last() {
        List<Minute> minutes = ring.minutes();
        return minutes.get(minutes.size() - 1);
    }

    @Test
    void outcomeEventsAreCountedInTheMinuteTheyHappened() {
        ring.onEvent(event(RetryEvent.Type.DELIVERED, now.get()));
        ring.onEvent(event(RetryEvent.Type.DELIVERED, now.get()));
        ring.onEvent(event(RetryEvent.Type.ABANDONED, now.get() - MINUTE));
        ring.onEvent(event(RetryEvent.Type.REJECTED, now.get()));
        ring.onEvent(event(RetryEvent.Type.HANDED_OVER, now.get()));
        List<Minute> minutes = ring.minutes();
        assertEquals(OutcomesPerMinute.MINUTES, minutes.size());
        assertEquals(new Minute(now.get() - 10_000, 2, 0, 1, 1), minutes.get(59));
        assertEquals(new Minute(now.get() - 10_000 - MINUTE, 0, 1, 0, 0), minutes.get(58));
        assertEquals(now.get() - 10_000 - 59 * MINUTE, minutes.get(0).startEpochMillis(), "oldest first, an hour");
    }

    @Test
    void stepsThatAreNoOutcomeAreNotCounted() {
        ring.onEvent(event(RetryEvent.Type.SCHEDULED, now.get()));
        ring.onEvent(event(RetryEvent.Type.SENT, now.get()));
        ring.onEvent(event(RetryEvent.Type.FAILED, now.get()));
        assertEquals(0, ring.minutes().stream().mapToLong(Minute::total).sum());
    }

    @Test
    void aBucketIsZeroedWhenTheRingComesRoundToItAnHourLater() {
        ring.record(RetryOutcome.DELIVERED, now.get());
        now.addAndGet(OutcomesPerMinute.MINUTES * MINUTE);
        assertEquals(0, ring.minutes().stream().mapToLong(Minute::total).sum(), "an hour later, nothing is shown");
        ring.record(RetryOutcome.ABANDONED, now.get());
        assertEquals(new Minute(now.get() - 10_000, 0, 1, 0, 0), last());
    }

    @Test
    void eventsOutsideTheHourAreNotCountedNorOverwriteANewerMinute() {
        ring.record(RetryOutcome.DELIVERED, now.get());
        ring.record(RetryOutcome.DELIVERED, now.get() - OutcomesPerMinute.MINUTES * MINUTE); // same bucket, old
        ring.record(RetryOutcome.DELIVERED, now.get() + 5 * MINUTE); // a clock far ahead
        assertEquals(1, ring.minutes().stream().mapToLong(Minute::total).sum());
        assertEquals(1, last().delivered());
    }
}
