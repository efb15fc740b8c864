package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A replay's pace: one send per interval, never a backlog at once, and nothing held back once it ends; and on a
 * reference, due retries held at the pace on top of the budget.
 */
class PacerTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final AtomicLong nanos = new AtomicLong(1_000 * MS);

    private int allowed(Pacer p, int asks) {
        int n = 0;
        for (int i = 0; i < asks; i++) {
            n += p.tryAcquire() ? 1 : 0;
        }
        return n;
    }

    @Test
    void oneSendPerIntervalAndAtMostTwoAtOnceAfterALateRelease() {
        Pacer p = new Pacer(10, 60_000 * MS, nanos::get); // 100 ms apart

        assertEquals(1, allowed(p, 5), "the first goes at once");
        assertEquals(100 * MS, p.nanosUntilSlot());
        nanos.addAndGet(99 * MS);
        assertEquals(0, allowed(p, 5));
        nanos.addAndGet(MS);
        assertEquals(1, allowed(p, 5));
        nanos.addAndGet(10_000 * MS); // a release that ran 10 s late: no backlog of 100 at once
        assertEquals(2, allowed(p, 200));
        nanos.addAndGet(100 * MS);
        assertEquals(1, allowed(p, 5));
    }

    @Test
    void aRefundGivesTheSlotBack() {
        Pacer p = new Pacer(10, 60_000 * MS, nanos::get);
        assertTrue(p.tryAcquire());
        assertFalse(p.tryAcquire());
        p.refund();
        assertTrue(p.tryAcquire());
    }

    @Test
    void afterItsEndThePaceHoldsNothingBack() {
        Pacer p = new Pacer(1, 2_000 * MS, nanos::get);
        assertEquals(1, allowed(p, 5));
        nanos.set(2_000 * MS);
        assertFalse(p.active());
        assertEquals(5, allowed(p, 5));
        assertEquals(0, p.nanosUntilSlot());
    }

    @Test
    void aReferencesDueRetriesGoAtThePaceOnTopOfAnUnlimitedBudget() {
        LifecycleRig rig = new LifecycleRig(false).reference();
        for (int i = 0; i < 10; i++) {
            rig.admit("c" + i); // all due at +1 s
        }
        rig.reference.pace(10, rig.clockMillis.get() + 60_000);

        int[] sentAt = new int[2_001];
        for (int ms = 1; ms <= 2_000; ms++) {
            rig.advance(1, TimeUnit.MILLISECONDS);
            sentAt[ms] = rig.sent.size();
        }

        assertEquals(0, sentAt[999]);
        assertEquals(2, sentAt[1_000], "due together: the pace lets two go, then one each 100 ms");
        assertEquals(2, sentAt[1_099]);
        assertEquals(3, sentAt[1_100]);
        assertEquals(10, sentAt[1_800]);
        assertEquals(10, rig.reference.state().pending());
    }
}
