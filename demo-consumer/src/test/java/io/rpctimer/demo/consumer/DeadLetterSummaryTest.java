package io.rpctimer.demo.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DeadLetterSummaryTest {

    private static final long SECOND = 1_000_000_000L;

    @Test
    void everyReplayedCallDelivered_readsNoneLost_andPassesTheRun() {
        DeadLetterSummary s = DeadLetterSummary.of(List.of("a", "b", "c"), Set.of(), Map.of("a", 1, "b", 1, "c", 1),
                Set.of("b", "c"), Set.of("b", "c"), Set.of("b", "c"), Set.of(), List.of(0L, SECOND / 10), 10);
        assertEquals("2 abandoned, 2 replayed, 2 delivered, 0 lost", s.line());
        assertTrue(s.ok());
        assertEquals(10.0, s.seenPerSecond(), 1e-9);
        assertEquals(100, s.spanMillis());
        assertTrue(s.lines().contains("  2 abandoned, 2 replayed, 2 delivered, 0 lost"), s.lines().toString());
    }

    @Test
    void aCallNeitherDeliveredNorStillDead_isLost_andFailsTheRun() {
        // b was replayed and never completed; c is still a dead letter; d's caller got an exception; e vanished
        DeadLetterSummary s = DeadLetterSummary.of(List.of("a", "b", "c", "d", "e"), Set.of("d"), Map.of("a", 1),
                Set.of("b", "c"), Set.of("b"), Set.of(), Set.of("c"), List.of(), 10);
        assertEquals(List.of("b", "e"), s.lostIds());
        assertEquals("2 abandoned, 1 replayed, 0 delivered, 2 lost", s.line());
        assertFalse(s.ok());
        assertEquals("2 lost (b, e)", s.problem());
        assertEquals(0.0, s.seenPerSecond());
    }

    @Test
    void aCallThatRanTwice_failsTheRun_thoughNoneIsLost() {
        DeadLetterSummary s = DeadLetterSummary.of(List.of("a", "b"), Set.of(), Map.of("a", 1, "b", 2), Set.of("b"),
                Set.of("b"), Set.of("b"), Set.of(), List.of(5L), 10);
        assertEquals("1 abandoned, 1 replayed, 1 delivered, 0 lost", s.line());
        assertFalse(s.ok());
        assertEquals(List.of("b"), s.ranTwice());
        assertEquals("1 ran twice (b)", s.problem());
    }

    @Test
    void aDeliveryTheLedgersNeverSaw_isNotCountedDelivered() {
        // the consumer heard DELIVERED for b, but no provider completed it: the ledger has the last word
        DeadLetterSummary s = DeadLetterSummary.of(List.of("b"), Set.of(), Map.of(), Set.of("b"), Set.of("b"),
                Set.of("b"), Set.of(), List.of(), 10);
        assertEquals("1 abandoned, 1 replayed, 0 delivered, 1 lost", s.line());
        assertFalse(s.ok());
    }

    @Test
    void aReplayThatFailed_failsTheRun_andSaysWhy() {
        DeadLetterSummary s = DeadLetterSummary.failed("retry journal x: down");
        assertFalse(s.ok());
        assertEquals("the replay failed: retry journal x: down", s.problem());
        assertEquals(List.of("Dead letters (the providers' ledgers and the consumer's outcomes)",
                "  the replay failed: retry journal x: down"), s.lines());
    }
}
