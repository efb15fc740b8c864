package io.rpctimer.wheel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

@Isolated
@org.junit.jupiter.api.Timeout(30)
class SharedWheelTimerTest {

    @Test
    void holdersShareOneTimerUntilTheLastRelease() throws Exception {
        int before = SharedWheelTimer.holders();
        SharedWheelTimer.Lease a = SharedWheelTimer.acquire();
        SharedWheelTimer.Lease b = SharedWheelTimer.acquire();
        assertSame(a.timer(), b.timer());
        assertEquals(before + 2, SharedWheelTimer.holders());

        a.release();
        a.release(); // a second release of the same lease has no effect
        assertEquals(before + 1, SharedWheelTimer.holders());
        CountDownLatch ran = new CountDownLatch(1);
        b.timer().newTimeout(t -> ran.countDown(), 1, TimeUnit.MILLISECONDS);
        assertTrue(ran.await(5, TimeUnit.SECONDS), "timer stopped while a holder remained");

        Timeout pending = b.timer().newTimeout(t -> { }, 1, TimeUnit.HOURS);
        WheelTimer first = b.timer();
        if (before == 0) {
            assertEquals(Set.of(pending), b.release(), "last release returns what never ran");
            assertThrows(IllegalStateException.class, () -> first.newTimeout(t -> { }, 1, TimeUnit.SECONDS));
            SharedWheelTimer.Lease c = SharedWheelTimer.acquire();
            assertNotSame(first, c.timer(), "a fresh timer after the last release");
            c.release();
        } else {
            pending.cancel();
            b.release();
        }
    }

    /**
     * The last lease released from a task of the shared timer (or a future callback on its executor)
     * stops it, and the next acquire starts one fresh timer, not a second one next to an orphan.
     */
    @Test
    void lastReleaseFromATaskStopsTheSharedTimer() throws Exception {
        assumeTrue(SharedWheelTimer.holders() == 0, "another test holds the shared timer");
        SharedWheelTimer.Lease lease = SharedWheelTimer.acquire();
        WheelTimer first = lease.timer();
        int aliveBefore = WheelTimer.aliveInstances();
        CompletableFuture<Set<Timeout>> released = new CompletableFuture<>();
        Timeout pending = first.newTimeout(t -> { }, 1, TimeUnit.HOURS);
        first.newTimeout(t -> {
            try {
                released.complete(lease.release());
            } catch (Throwable e) {
                released.completeExceptionally(e);
            }
        }, 1, TimeUnit.MILLISECONDS);

        assertEquals(Set.of(pending), released.get(10, TimeUnit.SECONDS), "release from a task failed");
        assertThrows(IllegalStateException.class, () -> first.newTimeout(t -> { }, 1, TimeUnit.SECONDS),
                "the released timer still runs, referenced by no one");
        assertEquals(aliveBefore - 1, WheelTimer.aliveInstances());
        SharedWheelTimer.Lease next = SharedWheelTimer.acquire();
        try {
            assertNotSame(first, next.timer());
            assertEquals(1, SharedWheelTimer.holders());
        } finally {
            next.release();
        }
    }

    @Test
    void holdersCannotStopTheSharedTimer() {
        SharedWheelTimer.Lease lease = SharedWheelTimer.acquire();
        try {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> lease.timer().stop());
            assertEquals("the shared timer is stopped by releasing the last lease, not by stop()", e.getMessage());
        } finally {
            lease.release();
        }
    }
}
