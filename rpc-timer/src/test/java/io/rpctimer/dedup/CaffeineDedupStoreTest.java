package io.rpctimer.dedup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The in-memory store's states and windows, on a fake clock. */
class CaffeineDedupStoreTest {

    private final AtomicLong nanos = new AtomicLong();
    private final CaffeineDedupStore store = new CaffeineDedupStore(1_000, new DedupWindows(1_000, 10_000),
            nanos::get);

    private void advanceMillis(long millis) {
        nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    @Test
    void claim_startedKey_inProgressUntilDone_thenAlreadyDone() {
        Claim first = store.claim("k");
        assertEquals(Claim.Status.CLAIMED, first.status());
        assertEquals(Claim.Status.IN_PROGRESS, store.claim("k").status());
        store.done(first);
        assertEquals(Claim.Status.ALREADY_DONE, store.claim("k").status());
    }

    @Test
    void release_afterFailedRun_nextDeliveryRunsIt() {
        store.release(store.claim("k"));
        assertEquals(Claim.Status.CLAIMED, store.claim("k").status());
    }

    @Test
    void startedWindow_ownerNeverReports_entryExpiresAndIsTakenOver() {
        Claim dead = store.claim("k");
        advanceMillis(999);
        assertEquals(Claim.Status.IN_PROGRESS, store.claim("k").status());
        advanceMillis(2);
        Claim next = store.claim("k");
        assertEquals(Claim.Status.CLAIMED, next.status());
        store.release(dead); // the dead owner's late release does not free the new owner's entry
        assertEquals(Claim.Status.IN_PROGRESS, store.claim("k").status());
        store.done(dead);
        assertEquals(Claim.Status.IN_PROGRESS, store.claim("k").status());
        store.done(next);
        assertEquals(Claim.Status.ALREADY_DONE, store.claim("k").status());
    }

    @Test
    void doneWindow_entryLivesItsWindowThenTheKeyRunsAgain() {
        store.done(store.claim("k"));
        advanceMillis(9_999);
        assertEquals(Claim.Status.ALREADY_DONE, store.claim("k").status());
        advanceMillis(2);
        assertEquals(Claim.Status.CLAIMED, store.claim("k").status());
    }

    @Test
    void badArguments_failNamingTheValue() {
        assertEquals("maxEntries: 0 (expected: 1..100000000)", assertThrows(IllegalArgumentException.class,
                () -> new CaffeineDedupStore(0, DedupWindows.defaults())).getMessage());
        assertEquals("startedMillis: 0 (expected: 1..86400000)", assertThrows(IllegalArgumentException.class,
                () -> new DedupWindows(0, 1)).getMessage());
        assertEquals("key: 401 characters (expected: 1..400 characters)", assertThrows(
                IllegalArgumentException.class, () -> store.claim("k".repeat(401))).getMessage());
        assertEquals("claim: IN_PROGRESS (expected: CLAIMED)", assertThrows(IllegalArgumentException.class,
                () -> store.done(Claim.inProgress("k"))).getMessage());
    }
}
