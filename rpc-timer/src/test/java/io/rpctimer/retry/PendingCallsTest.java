package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class PendingCallsTest {

    private static RetryCall<Object> call(int i) {
        return new RetryCall<>(null, null, "id-" + i, "m", null, 0, null);
    }

    @Test
    void removeSaysWhetherTheCallWasIn_andSnapshotHoldsWhatIsIn() {
        PendingCalls<Object> set = new PendingCalls<>();
        List<RetryCall<Object>> calls = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            calls.add(call(i));
            set.add(calls.get(i));
        }
        for (int i = 0; i < 100; i += 2) {
            assertTrue(set.remove(calls.get(i)));
            assertFalse(set.remove(calls.get(i)), "a second remove of the same call");
        }
        assertFalse(set.remove(call(1000)), "a call never added");
        Set<RetryCall<Object>> expected = new HashSet<>();
        for (int i = 1; i < 100; i += 2) {
            expected.add(calls.get(i));
        }
        List<RetryCall<Object>> snapshot = set.snapshot();
        assertEquals(expected.size(), snapshot.size());
        assertEquals(expected, new HashSet<>(snapshot));
        set.add(calls.get(0)); // a removed call can be added again
        assertEquals(51, set.snapshot().size());
    }

    /**
     * Threads add their calls and remove them again in another order while others take snapshots: every remove of an
     * added call says true exactly once, snapshots hold only calls, and the set ends empty with every link cleared.
     */
    @Test
    @Tag("stress")
    @Timeout(120)
    void manyThreadsAddAndRemove_eachRemoveCountsOnce() throws Exception {
        int threads = 8;
        int perThread = 50_000;
        PendingCalls<Object> set = new PendingCalls<>();
        List<RetryCall<Object>> all = new ArrayList<>();
        for (int i = 0; i < threads * perThread; i++) {
            all.add(call(i));
        }
        AtomicIntegerArray removedTrue = new AtomicIntegerArray(all.size());
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = t * perThread;
                done.add(pool.submit(() -> {
                    go.await();
                    for (int i = first; i < first + perThread; i++) {
                        set.add(all.get(i));
                    }
                    // each call removed twice, by its own thread and by the next thread's range: one of them wins
                    for (int i = first + perThread - 1; i >= first; i--) {
                        if (set.remove(all.get(i))) {
                            removedTrue.incrementAndGet(i);
                        }
                        int other = (i + perThread) % all.size();
                        if (set.remove(all.get(other))) {
                            removedTrue.incrementAndGet(other);
                        }
                    }
                    return null;
                }));
            }
            Future<Integer> snapshots = pool.submit(() -> {
                go.await();
                int taken = 0;
                while (!allDone(done)) {
                    for (RetryCall<Object> c : set.snapshot()) {
                        assertTrue(c.retryId().startsWith("id-"), "a sentinel leaked into a snapshot");
                    }
                    taken++;
                }
                return taken;
            });
            go.countDown();
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            assertTrue(snapshots.get(60, TimeUnit.SECONDS) > 0);
        } finally {
            pool.shutdownNow();
        }
        // its own thread removes each call after adding it: whichever remove came first after the add said true
        for (int i = 0; i < all.size(); i++) {
            assertEquals(1, removedTrue.get(i), "removes that said true for call " + i);
            assertEquals(null, all.get(i).prevPending);
            assertEquals(null, all.get(i).nextPending);
        }
        assertEquals(0, set.snapshot().size());
    }

    private static boolean allDone(List<Future<?>> futures) {
        for (Future<?> f : futures) {
            if (!f.isDone()) {
                return false;
            }
        }
        return true;
    }
}
