package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link InMemoryRetryStore}: a bounded store that drops its oldest retries, and counts them. */
class InMemoryRetryStoreTest {

    private static PendingRetry retry(String id) {
        return new PendingRetry(id, "io.rpctimer.Greeting", null, null, "greet", new String[] {"java.lang.String"},
                new Object[] {"arg-" + id}, Map.of("retry.id", id), 1, "RpcException: timeout", 1_000L);
    }

    private static List<String> ids(List<PendingRetry> retries) {
        return retries.stream().map(PendingRetry::retryId).toList();
    }

    @Test
    void pastItsCapacity_theOldestAreDropped_andCounted() {
        InMemoryRetryStore store = new InMemoryRetryStore(3);
        for (int i = 1; i <= 5; i++) {
            store.handOver(retry("r" + i));
        }
        assertEquals(List.of("r3", "r4", "r5"), ids(store.retries()));
        assertEquals(3, store.size());
        assertEquals(2, store.dropped());
        assertEquals("InMemoryRetryStore(3 held, 2 dropped, capacity 3)", store.toString());
    }

    @Test
    void defaultStore_holdsTenThousand_thenDropsTheOldest() {
        InMemoryRetryStore store = new InMemoryRetryStore();
        for (int i = 0; i <= InMemoryRetryStore.DEFAULT_CAPACITY; i++) {
            store.handOver(retry("r" + i));
        }
        assertEquals(10_000, store.capacity());
        assertEquals(10_000, store.size());
        assertEquals(1, store.dropped());
        assertEquals("r1", store.retries().get(0).retryId());
    }

    @Test
    void drain_emptiesTheStore_andRoomIsFreeAgain() {
        InMemoryRetryStore store = new InMemoryRetryStore(2);
        store.handOver(retry("a"));
        store.handOver(retry("b"));
        assertEquals(List.of("a", "b"), ids(store.drain()));
        store.handOver(retry("c"));
        store.handOver(retry("d"));
        assertEquals(List.of("c", "d"), ids(store.retries()));
        assertEquals(0, store.dropped());
    }

    @Test
    void capacityBelowOne_isRefused_namingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new InMemoryRetryStore(0));
        assertEquals("capacity: 0 (expected: >= 1)", e.getMessage());
    }

    @Test
    void concurrentHandOvers_neverHoldMoreThanTheCapacity_andLoseNoneUncounted() throws Exception {
        InMemoryRetryStore store = new InMemoryRetryStore(100);
        Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++) {
            int first = t;
            threads[t] = new Thread(() -> {
                for (int i = 0; i < 1_000; i++) {
                    store.handOver(retry(first + "-" + i));
                }
            });
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join(30_000);
        }
        assertEquals(100, store.size());
        assertEquals(4_000 - 100, store.dropped());
        assertTrue(store.retries().stream().allMatch(r -> r.retryId().endsWith("-999")
                || Integer.parseInt(r.retryId().substring(2)) >= 900), "the newest are kept: " + ids(store.retries()));
    }
}
