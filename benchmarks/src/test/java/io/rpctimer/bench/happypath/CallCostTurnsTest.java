package io.rpctimer.bench.happypath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class CallCostTurnsTest {

    @Test
    void everyConfigurationMakesItsCallsInTurns_forwardsThenBackwards() {
        List<CallCost.Turn<String>> turns = CallCost.turns(List.of("a", "b", "c"), 5, 2);

        assertEquals(List.of("a", "b", "c", "c", "b", "a", "a", "b", "c"),
                turns.stream().map(CallCost.Turn::config).toList());
        assertEquals(List.of(2, 2, 2, 2, 2, 2, 1, 1, 1), turns.stream().map(CallCost.Turn::calls).toList());
        Map<String, Integer> calls = turns.stream().collect(Collectors.groupingBy(CallCost.Turn::config,
                Collectors.summingInt(CallCost.Turn::calls)));
        assertEquals(Map.of("a", 5, "b", 5, "c", 5), calls);
    }

    @Test
    void oneSliceWhenTheSliceHoldsEveryCall() {
        assertEquals(List.of(new CallCost.Turn<>("a", 3), new CallCost.Turn<>("b", 3)),
                CallCost.turns(List.of("a", "b"), 3, 2000));
    }

    @Test
    void theSnapshotLeavesOutTheThreadThatMeasures_andGroupsTheOthersByName() throws InterruptedException {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        Thread other = new Thread(() -> {
            started.countDown();
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "turns-other-1");
        other.start();
        try {
            started.await();
            ThreadCost counters = ThreadCost.takeWithout(Thread.currentThread().getId());

            assertFalse(counters.perThread().containsKey(Thread.currentThread().getId()));
            assertTrue(counters.perThread().containsKey(other.getId()));
            assertEquals("turns-other-#", counters.names().get(other.getId()), "grouped by name, digits dropped");
        } finally {
            done.countDown();
            other.join();
        }
    }
}
