package io.rpctimer.wheel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The level structure alone, in ticks: no clock, no thread, no executor. A tick is 1 ns here, so a timeout's
 * deadline in nanoseconds is its deadline tick.
 */
class WheelLevelsTest {

    private final List<WheelTimeout> due = new ArrayList<>();

    private static WheelTimeout scheduled(long deadlineTick) {
        WheelTimeout t = new WheelTimeout(null, x -> { }, deadlineTick);
        t.compareAndSetState(WheelTimeout.ST_NEW, WheelTimeout.ST_SCHEDULED);
        return t;
    }

    /** Cancels as a producer would, without the driver's cancel queue (there is no driver here). */
    private static void cancel(WheelTimeout t) {
        assertTrue(t.compareAndSetState(WheelTimeout.ST_SCHEDULED, WheelTimeout.ST_CANCELLED));
    }

    /** Advances one tick at a time to {@code toTick}; records the tick each timeout fell due at. */
    private static Map<Long, Long> advanceTickByTick(WheelLevels levels, long toTick) {
        Map<Long, Long> dueAt = new HashMap<>();
        while (levels.currentTick() < toTick) {
            long tick = levels.currentTick() + 1;
            levels.advance(tick, t -> dueAt.put(t.deadlineNanos, tick));
        }
        return dueAt;
    }

    /** The example of {@link WheelLevels}' javadoc, step by step: where each timeout is and when it moves. */
    @Test
    void workedExampleOfTheJavadoc() {
        WheelLevels levels = new WheelLevels(1, 4);
        levels.skipTo(5);
        assertEquals(5, levels.currentTick());
        WheelTimeout d7 = scheduled(7);
        WheelTimeout d9 = scheduled(9);
        WheelTimeout d30 = scheduled(30);
        levels.file(d7);
        levels.file(d9);
        levels.file(d30);
        // level 0 bucket 3 falls due at 7, level 1 bucket 2 moves down at 8, level 2 bucket 1 at 16
        assertEquals(7, levels.nextEventTick());
        levels.advance(7, due::add);
        assertEquals(List.of(d7), due);
        assertEquals(8, levels.nextEventTick(), "d = 9 moves down at its level-1 boundary");
        long visits = levels.nodesVisited();
        levels.advance(8, due::add);
        assertEquals(visits + 1, levels.nodesVisited());
        assertEquals(9, levels.nextEventTick(), "now in level 0, due at 9");
        levels.advance(9, due::add);
        assertEquals(List.of(d7, d9), due);
        assertEquals(16, levels.nextEventTick(), "d = 30 moves from level 2 at 16");
        levels.advance(16, due::add);
        assertEquals(28, levels.nextEventTick(), "then from level 1 at 28");
        levels.advance(28, due::add);
        assertEquals(30, levels.nextEventTick(), "then falls due from level 0 at 30");
        levels.advance(30, due::add);
        assertEquals(List.of(d7, d9, d30), due);
        assertEquals(0, levels.linkedCount());
    }

    /**
     * Property test on small wheels, so timeouts cross many levels: processed tick by tick or by jumps, every
     * timeout falls due exactly at its deadline tick.
     */
    @ParameterizedTest
    @ValueSource(ints = {2, 4, 16, 512})
    void everyTimeoutFallsDueAtItsDeadlineTickWhetherWalkedOrJumped(int wheelSize) {
        Random random = new Random(wheelSize);
        WheelLevels walked = new WheelLevels(1, wheelSize);
        WheelLevels jumped = new WheelLevels(1, wheelSize);
        Set<Long> deadlines = new HashSet<>();
        for (int i = 0; i < 2_000; i++) {
            long deadline = 1 + (random.nextInt(4) == 0 ? random.nextInt(200_000) : random.nextInt(3_000));
            if (deadlines.add(deadline)) {
                walked.file(scheduled(deadline));
                jumped.file(scheduled(deadline));
            }
        }
        Map<Long, Long> walkedDueAt = advanceTickByTick(walked, 200_001);
        Map<Long, Long> jumpedDueAt = new HashMap<>();
        for (long tick = 0; tick < 200_001; tick += 1 + random.nextInt(5_000)) {
            long now = tick;
            jumped.advance(now, t -> jumpedDueAt.put(t.deadlineNanos, now));
        }
        jumped.advance(200_001, t -> jumpedDueAt.put(t.deadlineNanos, 200_001L));
        assertEquals(deadlines.size(), walkedDueAt.size());
        walkedDueAt.forEach((deadline, tick) -> assertEquals(deadline, tick, "walked: due at the wrong tick"));
        // jumping over ticks, a timeout falls due at the first advance that reaches its deadline tick
        jumpedDueAt.forEach((deadline, tick) -> assertTrue(tick >= deadline, "jumped: early"));
        assertEquals(deadlines.size(), jumpedDueAt.size());
        assertEquals(walked.nodesVisited(), jumped.nodesVisited(), "a jump visits the same buckets as a walk");
        assertTrue(jumped.tickVisits() <= walked.tickVisits());
    }

    /** Catch-up: a day's pause costs the ticks with work, not 8.64 M ticks. */
    @Test
    void aLongAdvanceVisitsOnlyTicksWithWork() {
        WheelLevels levels = new WheelLevels(1, 512);
        long day = 8_640_000;
        for (long deadline : new long[] {360_000, 7_200_000, 2 * day}) {
            levels.file(scheduled(deadline));
        }
        levels.advance(day, due::add);
        assertEquals(2, due.size());
        assertTrue(levels.tickVisits() <= 2 * 4, "ticks visited: " + levels.tickVisits()); // ≤ one per level each
        assertEquals(day, levels.currentTick());
        assertEquals(1, levels.linkedCount());
    }

    /**
     * As Caffeine's {@code advance_exception}: when the hand-over throws part-way through a bucket, the
     * rest of the bucket (and the timeout that failed, still scheduled) is linked back and time is restored.
     */
    @Test
    void aThrowPartWayThroughABucketRelinksTheRestAndRestoresTime() {
        WheelLevels levels = new WheelLevels(1, 8);
        List<WheelTimeout> filed = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            WheelTimeout t = scheduled(3);
            filed.add(t);
            levels.file(t);
        }
        levels.file(scheduled(100)); // a higher level, untouched by tick 3
        RuntimeException boom = new IllegalStateException("hand-over failed (test)");
        int[] calls = {0};
        RuntimeException thrown = assertThrows(IllegalStateException.class, () -> levels.advance(10, t -> {
            if (++calls[0] == 3) {
                throw boom;
            }
            due.add(t);
        }));
        assertSame(boom, thrown);
        assertEquals(2, levels.currentTick(), "time goes back to before the failed tick");
        assertEquals(4, levels.linkedCount(), "3 left of the bucket, 1 far ahead");
        assertEquals(3, levels.nextEventTick());

        levels.advance(10, due::add);
        assertEquals(new HashSet<>(filed), new HashSet<>(due));
        assertEquals(5, due.size(), "each handed over once");
        assertEquals(10, levels.currentTick());
    }

    /** A throw in the tick a bucket moved down: what moved stays where it went, and the tick runs again. */
    @Test
    void aThrowInTheTickOfACascadeLosesNothing() {
        WheelLevels levels = new WheelLevels(1, 4);
        for (long deadline = 16; deadline < 20; deadline++) {
            levels.file(scheduled(deadline)); // level 2, boundary 16; at 16 they go to level 0
        }
        int[] calls = {0};
        assertThrows(IllegalStateException.class, () -> levels.advance(20, t -> {
            if (++calls[0] == 1) {
                throw new IllegalStateException("test");
            }
            due.add(t);
        }));
        assertEquals(15, levels.currentTick());
        levels.advance(20, due::add);
        assertEquals(4, due.size());
        assertEquals(0, levels.linkedCount());
    }

    @Test
    void cancelledTimeoutsAreDroppedNotHandedOver() {
        WheelLevels levels = new WheelLevels(1, 4);
        WheelTimeout near = scheduled(2);
        WheelTimeout far = scheduled(40);
        levels.file(near);
        levels.file(far);
        cancel(near);
        cancel(far);
        levels.advance(64, due::add);
        assertEquals(List.of(), due);
        assertEquals(0, levels.linkedCount());
    }

    @Test
    void aPassedDeadlineIsDueAtTheNextTick() {
        WheelLevels levels = new WheelLevels(1, 8);
        levels.skipTo(50);
        WheelTimeout late = scheduled(10);
        levels.file(late);
        assertEquals(51, levels.nextEventTick());
        levels.unlink(late);
        assertEquals(0, levels.linkedCount(), "unlink finds it where file put it");
        assertEquals(Long.MAX_VALUE, levels.nextEventTick());
    }

    @Test
    void skipToStopsBeforeWork() {
        WheelLevels levels = new WheelLevels(1, 8);
        levels.file(scheduled(30));
        levels.skipTo(1_000);
        assertEquals(levels.nextEventTick() - 1, levels.currentTick());
        levels.advance(1_000, due::add);
        assertEquals(1, due.size());
    }

    @Test
    void drainToGivesEveryScheduledTimeoutOnce() {
        WheelLevels levels = new WheelLevels(1, 4);
        Set<WheelTimeout> filed = new HashSet<>();
        for (long deadline = 1; deadline < 300; deadline += 7) {
            WheelTimeout t = scheduled(deadline);
            filed.add(t);
            levels.file(t);
        }
        WheelTimeout cancelled = scheduled(5);
        levels.file(cancelled);
        cancel(cancelled);
        levels.drainTo(due::add);
        assertEquals(filed, new HashSet<>(due));
        assertEquals(filed.size(), due.size());
        assertEquals(0, levels.linkedCount());
        assertEquals(Long.MAX_VALUE, levels.nextEventTick());
    }

    @Test
    void wheelSizeMustBeAPowerOfTwo() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new WheelLevels(1, 6));
        assertEquals("wheelSize: 6 (expected: a power of two >= 2)", e.getMessage());
    }
}
