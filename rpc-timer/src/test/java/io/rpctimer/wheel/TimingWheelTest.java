package io.rpctimer.wheel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Logic of the wheel structure, driven tick by tick by a fake ticker: no thread, no sleep. Due tasks land in a
 * {@link ManualExecutor}; the test runs them.
 */
class TimingWheelTest {

    private static final long TICK_MS = 10;

    private FakeTicker ticker = new FakeTicker(0);
    private final ManualExecutor executor = new ManualExecutor();
    private final RecordingLogger log = new RecordingLogger();
    private TimingWheel wheel = newWheel(512, -1);

    private TimingWheel newWheel(int wheelSize, long maxPending) {
        return new TimingWheel(null, ticker, TimeUnit.MILLISECONDS.toNanos(TICK_MS), wheelSize, maxPending, executor,
                log);
    }

    /** Moves the fake clock by {@code ms} and lets the wheel catch up. */
    private void advanceMillis(long ms) {
        ticker.advance(ms, TimeUnit.MILLISECONDS);
        wheel.advance(ticker.nanoTime());
    }

    /** Idles the empty wheel until the worker naps (up to the 1 s maximum). */
    private void idleUntilNapping() {
        for (int i = 0; i < TimingWheel.IDLE_ADVANCES_BEFORE_NAP + 1; i++) {
            advanceMillis(TICK_MS);
        }
        wheel.sleepNanos(ticker.nanoTime(), TimeUnit.SECONDS.toNanos(1));
        assertTrue(wheel.isNapping());
    }

    private static TimerTask counting(AtomicInteger runs) {
        return t -> runs.incrementAndGet();
    }

    @Test
    void timeoutIsHandedOverAtFirstTickAtOrAfterDeadline() {
        AtomicInteger runs = new AtomicInteger();
        WheelTimeout t = wheel.schedule(counting(runs), 25, TimeUnit.MILLISECONDS);

        advanceMillis(20); // tick 2 (20 ms) is before the deadline
        assertEquals(0, executor.runAll());
        assertFalse(t.isExpired());

        advanceMillis(10); // tick 3 (30 ms) is the first at or after 25 ms
        assertTrue(t.isExpired());
        assertEquals(1, executor.runAll());
        assertEquals(1, runs.get());
    }

    @Test
    void timeoutOnExactTickBoundaryFiresOnThatTick() {
        AtomicInteger runs = new AtomicInteger();
        wheel.schedule(counting(runs), 30, TimeUnit.MILLISECONDS);
        advanceMillis(29);
        assertEquals(0, executor.runAll());
        advanceMillis(1);
        assertEquals(1, executor.runAll());
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, -5_000, Long.MIN_VALUE})
    void zeroOrNegativeDelayRunsAtNextTick(long delay) {
        AtomicInteger runs = new AtomicInteger();
        wheel.schedule(counting(runs), delay, TimeUnit.MILLISECONDS);
        advanceMillis(TICK_MS);
        assertEquals(1, executor.runAll());
        assertEquals(1, runs.get());
    }

    @ParameterizedTest
    @ValueSource(longs = {Long.MAX_VALUE, Long.MAX_VALUE / 2, Long.MAX_VALUE - 1})
    void hugeDelayNeitherOverflowsNorFires(long delay) {
        AtomicInteger runs = new AtomicInteger();
        WheelTimeout t = wheel.schedule(counting(runs), delay, TimeUnit.DAYS);
        advanceMillis(TimeUnit.DAYS.toMillis(365));
        assertEquals(0, executor.runAll());
        assertFalse(t.isExpired());
        assertEquals(1, wheel.levels().linkedCount());
        assertTrue(t.cancel());
        advanceMillis(TICK_MS);
        assertEquals(0, wheel.levels().linkedCount());
    }

    /** nanoTime may start anywhere and wrap around; only differences count (Caffeine's clock parameterisation). */
    @ParameterizedTest
    @ValueSource(longs = {Long.MIN_VALUE, -1, 0, Long.MAX_VALUE - 25_000_000, Long.MAX_VALUE})
    void clockOriginAnywhereIncludingWrapAround(long origin) {
        ticker = new FakeTicker(origin);
        wheel = newWheel(512, -1);
        AtomicInteger runs = new AtomicInteger();
        wheel.schedule(counting(runs), 50, TimeUnit.MILLISECONDS);
        advanceMillis(40);
        assertEquals(0, executor.runAll());
        advanceMillis(10);
        assertEquals(1, executor.runAll());
    }

    @Test
    void cancelBeforeTheWorkerSeesItNeverRunsAndIsCounted() {
        AtomicInteger runs = new AtomicInteger();
        WheelTimeout t = wheel.schedule(counting(runs), 20, TimeUnit.MILLISECONDS);
        assertTrue(t.cancel());
        assertFalse(t.cancel(), "second cancel has no effect");
        assertTrue(t.isCancelled());

        advanceMillis(100);
        assertEquals(0, executor.runAll());
        assertEquals(0, runs.get());
        TimerStats s = wheel.stats();
        assertEquals(1, s.scheduledTimeouts());
        assertEquals(1, s.cancelledTimeouts());
        assertEquals(0, s.pendingTimeouts());
    }

    @Test
    void cancelAfterFilingUnlinksWithinOneTick() {
        List<WheelTimeout> all = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            all.add(wheel.schedule(t -> { }, 1_000, TimeUnit.MILLISECONDS)); // same bucket: head, middle, tail
        }
        advanceMillis(TICK_MS);
        assertEquals(5, wheel.levels().linkedCount());

        assertTrue(all.get(2).cancel()); // middle
        assertTrue(all.get(4).cancel()); // head (pushed last)
        assertTrue(all.get(0).cancel()); // tail
        advanceMillis(TICK_MS);
        assertEquals(2, wheel.levels().linkedCount());

        advanceMillis(1_000);
        assertEquals(2, executor.runAll());
        assertTrue(all.get(1).isExpired());
        assertTrue(all.get(3).isExpired());
        assertEquals(3, wheel.stats().cancelledTimeouts());
    }

    @Test
    void cancelledTimeoutIsReleasedByTheWheel() {
        WheelTimeout t = wheel.schedule(new TimerTask() {
            @Override
            public void run(Timeout timeout) {
            }
        }, 1, TimeUnit.HOURS);
        advanceMillis(TICK_MS);
        WeakReference<WheelTimeout> ref = new WeakReference<>(t);
        t.cancel();
        t = null;
        advanceMillis(TICK_MS);

        for (int i = 0; i < 50 && ref.get() != null; i++) {
            System.gc();
        }
        assertNull(ref.get(), "the wheel still references a cancelled timeout one tick after cancel()");
    }

    @Test
    void cancelAfterExpiryFails() {
        WheelTimeout t = wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS);
        advanceMillis(TICK_MS);
        assertTrue(t.isExpired());
        assertFalse(t.cancel());
        assertFalse(t.isCancelled());
    }

    /** A tick costs what expires in it: a million far-future timeouts are not walked by idle ticks. */
    @Test
    void idleTicksDoNotWalkFarFutureTimeouts() {
        int n = 1_000_000;
        TimerTask task = x -> { };
        for (int i = 0; i < n; i++) {
            wheel.schedule(task, 3_600_000 + i % 1_000, TimeUnit.MILLISECONDS);
        }
        advanceMillis(TICK_MS);
        assertEquals(n, wheel.levels().linkedCount());
        long visitedBefore = wheel.levels().nodesVisited();

        for (int i = 0; i < 1_000; i++) {
            advanceMillis(TICK_MS); // ten idle seconds, tick by tick
        }
        assertEquals(visitedBefore, wheel.levels().nodesVisited(), "idle ticks touched far-future timeouts");

        advanceMillis(3_600_000);
        assertEquals(n, executor.queued.size());
        // each timeout moves down at most once per level above 0, then expires once
        assertTrue(wheel.levels().nodesVisited() <= 3L * n, "visits: " + wheel.levels().nodesVisited());
    }

    /**
     * Property test of the level hierarchy, on small wheels so timeouts cross many levels: each timeout is handed
     * over at the first tick that is at or after its deadline and after the tick it was scheduled in (a processed
     * tick never runs again) — never earlier, never later.
     */
    @ParameterizedTest
    @ValueSource(ints = {2, 4, 16, 512})
    void everyTimeoutExpiresOnTheFirstTickReachingItsDeadline(int wheelSize) {
        wheel = newWheel(wheelSize, -1);
        Random random = new Random(wheelSize);
        Map<WheelTimeout, Long> dueTickMs = new HashMap<>();
        long nowMs = 0;
        int expiredSoFar = 0;
        for (int round = 0; round < 2_000; round++) {
            long nextTickMs = (nowMs / TICK_MS + 1) * TICK_MS;
            for (int i = 0; i < 20; i++) {
                long delayMs = random.nextInt(4) == 0 ? random.nextInt(200_000) : random.nextInt(2_000);
                long deadlineTickMs = (nowMs + delayMs + TICK_MS - 1) / TICK_MS * TICK_MS;
                dueTickMs.put(wheel.schedule(x -> { }, delayMs, TimeUnit.MILLISECONDS),
                        Math.max(deadlineTickMs, nextTickMs));
            }
            // the worker's nap decision; the next advance may come before the nap ends (a producer woke it) or after
            wheel.sleepNanos(ticker.nanoTime(), TimeUnit.SECONDS.toNanos(1));
            wheel.awake();
            long step = random.nextInt(10) == 0 ? random.nextInt(5_000) : random.nextInt(30);
            nowMs += step;
            advanceMillis(step);
            long tickTimeMs = nowMs / TICK_MS * TICK_MS;
            for (Runnable r : executor.queued) {
                long due = dueTickMs.remove((WheelTimeout) r);
                assertTrue(due <= tickTimeMs, "fired early: due at " + due + " ms, fired at " + tickTimeMs + " ms");
            }
            expiredSoFar += executor.queued.size();
            executor.queued.clear();
            for (long due : dueTickMs.values()) {
                assertTrue(due > tickTimeMs, "late: due at " + due + " ms, not fired at " + tickTimeMs + " ms");
            }
        }
        assertEquals(expiredSoFar, wheel.stats().expiredTimeouts());
    }

    /** The next tick with work, from the occupancy bitmaps, is the first tick at which a bucket is touched. */
    @ParameterizedTest
    @ValueSource(ints = {2, 4, 64, 512})
    void nextEventTickIsTheFirstTickThatTouchesABucket(int wheelSize) {
        wheel = newWheel(wheelSize, -1);
        Random random = new Random(7 * wheelSize);
        for (int round = 0; round < 300; round++) {
            for (int i = random.nextInt(4); i > 0; i--) {
                wheel.schedule(x -> { }, random.nextInt(4) == 0 ? random.nextInt(300_000) : random.nextInt(3_000),
                        TimeUnit.MILLISECONDS);
            }
            advanceMillis(TICK_MS); // file them
            executor.queued.clear();
            long next = wheel.levels().nextEventTick();
            if (next == Long.MAX_VALUE) {
                continue;
            }
            long distance = next - wheel.levels().currentTick();
            if (distance > 2_000) {
                continue; // too far to walk tick by tick
            }
            long visited = wheel.levels().nodesVisited();
            for (long step = 1; step < distance; step++) {
                advanceMillis(TICK_MS);
                assertEquals(visited, wheel.levels().nodesVisited(), "a bucket was touched before tick " + next);
            }
            advanceMillis(TICK_MS);
            assertTrue(wheel.levels().nodesVisited() > visited, "nothing happened at the predicted tick " + next);
            executor.queued.clear();
        }
    }

    @Test
    void idleWheelNapsUntilTheNextEventAndANapIsNotLag() {
        wheel.schedule(x -> { }, 3_000, TimeUnit.MILLISECONDS); // one timeout, 300 ticks ahead
        for (int i = 0; i < TimingWheel.IDLE_ADVANCES_BEFORE_NAP + 1; i++) {
            advanceMillis(TICK_MS);
        }
        long napNanos = wheel.sleepNanos(ticker.nanoTime(), TimeUnit.SECONDS.toNanos(10));
        assertTrue(wheel.isNapping());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(3_000) - TimeUnit.MILLISECONDS.toNanos(TICK_MS * 5), napNanos,
                "naps until the tick the timeout is due");
        ticker.advance(napNanos, TimeUnit.NANOSECONDS);
        wheel.awake();
        wheel.advance(ticker.nanoTime());
        assertEquals(1, executor.runAll());
        assertEquals(0, wheel.stats().lastTickLagNanos(), "the skipped ticks were not late");
    }

    @Test
    void newWorkWakesANappingWorker() {
        idleUntilNapping();
        wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS);
        assertFalse(wheel.isNapping(), "the producer's offer woke the worker");
    }

    @Test
    void aWorkerWokenFromANapIsNotLate() {
        idleUntilNapping();
        ticker.advance(57, TimeUnit.MILLISECONDS); // a producer wakes it 7 ms into a tick of the nap
        AtomicInteger runs = new AtomicInteger();
        wheel.schedule(counting(runs), 0, TimeUnit.MILLISECONDS);
        wheel.awake();
        wheel.advance(ticker.nanoTime());
        assertEquals(0, wheel.stats().maxTickLagNanos(), "the nap's ticks had nothing to do at their time");
        advanceMillis(3); // the next tick, on time
        assertEquals(1, executor.runAll());
        assertEquals(0, wheel.stats().maxTickLagNanos());
    }

    @Test
    void aNapOverslept() {
        wheel.schedule(x -> { }, 100, TimeUnit.MILLISECONDS);
        for (int i = 0; i < TimingWheel.IDLE_ADVANCES_BEFORE_NAP + 1; i++) {
            advanceMillis(TICK_MS);
        }
        long napNanos = wheel.sleepNanos(ticker.nanoTime(), TimeUnit.SECONDS.toNanos(1));
        assertTrue(wheel.isNapping());
        ticker.advance(napNanos + TimeUnit.MILLISECONDS.toNanos(4), TimeUnit.NANOSECONDS); // woke 4 ms late
        wheel.awake();
        wheel.advance(ticker.nanoTime());
        assertEquals(1, executor.runAll());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(4), wheel.stats().lastTickLagNanos(), "oversleeping is lag");
    }

    @Test
    void queuedWorkIsFiledBeforeANapAndShortensIt() {
        for (int i = 0; i < TimingWheel.IDLE_ADVANCES_BEFORE_NAP + 1; i++) {
            advanceMillis(TICK_MS);
        }
        wheel.schedule(x -> { }, 1, TimeUnit.HOURS); // queued, not yet seen by the worker
        wheel.schedule(x -> { }, 300, TimeUnit.MILLISECONDS);
        long sleep = wheel.sleepNanos(ticker.nanoTime(), TimeUnit.SECONDS.toNanos(1));
        assertTrue(wheel.isIdleNapping());
        assertEquals(2, wheel.levels().linkedCount(), "both filed before the nap");
        assertEquals(TimeUnit.MILLISECONDS.toNanos(300), sleep, "naps until the sooner one is due");
    }

    /** Puts the worker in a busy nap: a far timeout arrives at every tick, as per-call timeouts do. */
    private long busyNap() {
        for (int i = 0; i < TimingWheel.IDLE_ADVANCES_BEFORE_NAP + 1; i++) {
            wheel.schedule(x -> { }, 1, TimeUnit.HOURS);
            advanceMillis(TICK_MS);
        }
        long sleep = wheel.sleepNanos(ticker.nanoTime(), TimeUnit.SECONDS.toNanos(1));
        assertTrue(wheel.isNapping());
        assertFalse(wheel.isIdleNapping(), "timeouts keep arriving: a busy nap");
        return sleep;
    }

    @Test
    void busyWheelNapsPastTicksWithNothingDueAtMostTheBusyNap() {
        assertEquals(TimingWheel.MAX_BUSY_NAP_NANOS, busyNap());
    }

    @Test
    void timeoutDueDuringABusyNapWakesTheWorkerAndRunsOnTime() {
        long nap = busyNap();
        wheel.schedule(x -> { }, 10, TimeUnit.SECONDS); // due after the nap: it waits for the wake
        assertTrue(wheel.isNapping());
        assertEquals(0, wheel.producerWakes());
        AtomicInteger runs = new AtomicInteger();
        wheel.schedule(counting(runs), 30, TimeUnit.MILLISECONDS); // due before the nap ends
        assertFalse(wheel.isNapping());
        assertEquals(1, wheel.producerWakes());

        ticker.advance(3, TimeUnit.MILLISECONDS); // the worker wakes mid-tick
        wheel.awake();
        wheel.advance(ticker.nanoTime());
        long sleep = wheel.sleepNanos(ticker.nanoTime(), TimeUnit.SECONDS.toNanos(1));
        assertTrue(sleep < nap, "naps only until the new timeout is due");
        ticker.advance(sleep, TimeUnit.NANOSECONDS);
        wheel.awake();
        wheel.advance(ticker.nanoTime());
        assertEquals(1, executor.runAll());
        assertEquals(1, runs.get());
        assertEquals(0, wheel.stats().maxTickLagNanos(), "on time");
    }

    @Test
    void cancelDuringABusyNapWaitsForTheWake() {
        WheelTimeout filed = wheel.schedule(x -> { }, 1, TimeUnit.HOURS);
        long nap = busyNap();
        assertTrue(filed.cancel());
        assertTrue(wheel.isNapping(), "a busy nap is not ended by a cancel");
        ticker.advance(nap, TimeUnit.NANOSECONDS);
        wheel.awake();
        wheel.advance(ticker.nanoTime());
        assertEquals(1, wheel.stats().cancelledTimeouts());
        assertEquals(TimingWheel.IDLE_ADVANCES_BEFORE_NAP + 1, wheel.levels().linkedCount(), "unlinked at the wake");
    }

    @Test
    void highArrivalRateKeepsTheWorkerTicking() {
        for (int i = 0; i < TimingWheel.BUSY_NAP_BACKLOG; i++) { // a queue chunk a tick
            wheel.schedule(x -> { }, 1, TimeUnit.HOURS);
        }
        advanceMillis(TICK_MS);
        long sleep = wheel.sleepNanos(ticker.nanoTime(), TimeUnit.SECONDS.toNanos(1));
        assertFalse(wheel.isNapping());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(TICK_MS), sleep);
    }

    @Test
    void saturatedExecutorDefersInOrderAndNothingIsDropped() {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int id = i;
            wheel.schedule(t -> order.add(id), 10 * (i + 1), TimeUnit.MILLISECONDS);
        }
        executor.refuseNext = 3;
        advanceMillis(10); // timeout 0 refused
        advanceMillis(10); // timeout 0 refused again, timeout 1 queued behind it
        advanceMillis(10); // timeout 0 refused a third time
        assertEquals(0, executor.queued.size());
        assertEquals(3, wheel.stats().deferredHandOffs());

        advanceMillis(10); // executor accepts again: timeouts 0..3 handed over in order
        advanceMillis(10);
        executor.runAll();
        assertEquals(List.of(0, 1, 2, 3, 4), order);
    }

    @Test
    void maxPendingTimeoutsRejectsWithCountAndLimit() {
        wheel = newWheel(512, 2);
        wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS);
        wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS);
        RejectedExecutionException e = assertThrows(RejectedExecutionException.class,
                () -> wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS));
        assertEquals("pendingTimeouts: 2 (expected: < maxPendingTimeouts: 2)", e.getMessage());
        assertEquals(1, wheel.stats().rejectedTimeouts());

        advanceMillis(TICK_MS); // both expire: room again
        wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS);
    }

    @Test
    void cancelledTimeoutsFreeTheirPendingSlot() {
        wheel = newWheel(512, 1);
        wheel.schedule(x -> { }, 1, TimeUnit.HOURS).cancel();
        advanceMillis(TICK_MS);
        wheel.schedule(x -> { }, 1, TimeUnit.HOURS);
    }

    @Test
    void taskThatThrowsIsCountedAndOthersStillRun() {
        AtomicInteger runs = new AtomicInteger();
        wheel.schedule(t -> {
            throw new IllegalStateException("boom (expected by the test)");
        }, 10, TimeUnit.MILLISECONDS);
        wheel.schedule(counting(runs), 10, TimeUnit.MILLISECONDS);
        advanceMillis(TICK_MS);
        assertEquals(2, executor.runAll());
        assertEquals(1, runs.get());
        assertEquals(1, wheel.stats().failedTasks());

        wheel.schedule(counting(runs), 10, TimeUnit.MILLISECONDS);
        advanceMillis(TICK_MS);
        executor.runAll();
        assertEquals(2, runs.get());
    }

    @Test
    void statsCountEveryOutcome() {
        wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS);
        wheel.schedule(x -> { }, 1, TimeUnit.HOURS);
        wheel.schedule(x -> { }, 1, TimeUnit.HOURS).cancel();
        advanceMillis(TICK_MS);
        TimerStats s = wheel.stats();
        assertEquals(3, s.scheduledTimeouts());
        assertEquals(1, s.expiredTimeouts());
        assertEquals(1, s.cancelledTimeouts());
        assertEquals(1, s.pendingTimeouts());
        assertEquals(1, s.ticks());
    }

    @Test
    void tickLagIsHowLateTheTickRan() {
        wheel.schedule(x -> { }, 1, TimeUnit.HOURS);
        ticker.advance(13, TimeUnit.MILLISECONDS); // tick 1 was due at 10 ms
        wheel.advance(ticker.nanoTime());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(3), wheel.stats().lastTickLagNanos());
        ticker.advance(7, TimeUnit.MILLISECONDS); // tick 2 due at 20 ms, run on time
        wheel.advance(ticker.nanoTime());
        assertEquals(0, wheel.stats().lastTickLagNanos());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(3), wheel.stats().maxTickLagNanos());
    }

    @Test
    void lateStartIsNotCountedAsTickLag() {
        ticker.advance(5, TimeUnit.SECONDS); // the worker starts long after the wheel was created
        wheel.start(ticker.nanoTime());
        AtomicInteger runs = new AtomicInteger();
        wheel.schedule(counting(runs), 10, TimeUnit.MILLISECONDS);
        advanceMillis(TICK_MS);
        assertEquals(0, wheel.stats().maxTickLagNanos());
        assertEquals(1, executor.runAll());
    }

    @Test
    void advanceReturnsTimeUntilNextTick() {
        ticker.advance(4, TimeUnit.MILLISECONDS);
        assertEquals(TimeUnit.MILLISECONDS.toNanos(6), wheel.advance(ticker.nanoTime()));
        ticker.advance(8, TimeUnit.MILLISECONDS);
        assertEquals(TimeUnit.MILLISECONDS.toNanos(8), wheel.advance(ticker.nanoTime()));
    }

    @Test
    void drainUnprocessedReturnsFiledQueuedAndDeferredButNotCancelledOrExpired() {
        WheelTimeout filed = wheel.schedule(x -> { }, 1, TimeUnit.HOURS);
        WheelTimeout ran = wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS);
        WheelTimeout deferred = wheel.schedule(x -> { }, 20, TimeUnit.MILLISECONDS);
        WheelTimeout cancelled = wheel.schedule(x -> { }, 1, TimeUnit.HOURS);
        advanceMillis(10);
        executor.refuseNext = 1;
        advanceMillis(10);
        cancelled.cancel();
        WheelTimeout queued = wheel.schedule(x -> { }, 1, TimeUnit.HOURS);

        Set<Timeout> left = wheel.drainUnprocessed();
        assertEquals(Set.of(filed, deferred, queued), left);
        assertTrue(ran.isExpired());
    }

    // ---------------------------------------------------------------- hand-off to the executor

    /** A refused timeout is not expired: cancel() still wins and it keeps its pending slot. */
    @Test
    void refusedTimeoutStaysPendingCancellableAndCountsAgainstTheLimit() {
        wheel = newWheel(512, 10);
        executor.refuseNext = Integer.MAX_VALUE;
        List<WheelTimeout> due = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            due.add(wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS));
        }
        for (int i = 0; i < 5; i++) {
            advanceMillis(TICK_MS);
        }
        assertThrows(RejectedExecutionException.class, () -> wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS),
                "a refused timeout freed its pending slot");
        TimerStats s = wheel.stats();
        assertEquals(10, s.pendingTimeouts());
        assertEquals(0, s.expiredTimeouts());
        assertFalse(due.get(0).isExpired(), "the executor never took it");

        assertTrue(due.get(0).cancel(), "cancel() must win until the executor takes the task");
        advanceMillis(TICK_MS);
        assertEquals(9, wheel.stats().pendingTimeouts());
        assertEquals(1, wheel.stats().cancelledTimeouts());
        WheelTimeout another = wheel.schedule(x -> { }, 1, TimeUnit.HOURS); // the cancelled one's slot
        Set<Timeout> neverRan = new HashSet<>(due.subList(1, 10));
        neverRan.add(another);
        assertEquals(neverRan, wheel.drainUnprocessed());
        assertFalse(due.get(1).isExpired());
    }

    /** Only RejectedExecutionException means "not accepted"; a pool may queue and then throw. */
    @Test
    void executorThatQueuesThenThrowsRunsTheTaskOnce() {
        AtomicInteger runs = new AtomicInteger();
        WheelTimeout t = wheel.schedule(counting(runs), 10, TimeUnit.MILLISECONDS);
        executor.errorAfterQueueing = new OutOfMemoryError("unable to create native thread (test)");
        for (int i = 0; i < 5; i++) {
            advanceMillis(TICK_MS);
        }
        executor.runAll();
        assertEquals(1, runs.get(), "handed over again after the executor had taken it");
        assertTrue(t.isExpired());
        assertFalse(t.cancel());
        TimerStats s = wheel.stats();
        assertEquals(1, s.expiredTimeouts());
        assertEquals(0, s.pendingTimeouts());
        assertEquals(1, s.failedTasks(), "the failed hand-off is reported");
        assertEquals(Set.of(), wheel.drainUnprocessed());
    }

    /** An executor that fails every hand-off does not flood the log from the worker. */
    @Test
    void failingExecutorIsLoggedAtAMeasuredRate() {
        executor.failEvery = new IllegalStateException("broken executor (test)");
        for (int i = 0; i < 1_000; i++) {
            wheel.schedule(x -> { }, 100L * i, TimeUnit.MILLISECONDS); // one due every 10 ticks for 100 s
        }
        for (int i = 0; i < 10_000; i++) {
            advanceMillis(TICK_MS);
        }
        assertEquals(1, log.withThrowable(), "one stack trace, then summaries");
        assertTrue(log.entries.size() <= 1 + 100 / 10 + 1, "log calls: " + log.entries.size());
        assertTrue(log.entries.size() >= 2, "later failures are summarised, not hidden");
    }

    /** The same for an executor that refuses every hand-off. */
    @Test
    void refusingExecutorIsLoggedAtAMeasuredRate() {
        executor.refuseNext = Integer.MAX_VALUE;
        for (int i = 0; i < 1_000; i++) {
            wheel.schedule(x -> { }, 100L * i, TimeUnit.MILLISECONDS);
        }
        for (int i = 0; i < 10_000; i++) {
            advanceMillis(TICK_MS);
        }
        assertTrue(log.entries.size() <= 1 + 100 / 10 + 1, "log calls: " + log.entries.size());
        assertEquals(1_000, wheel.drainUnprocessed().size(), "refused timeouts never ran: stop() returns them");
    }

    /** A throw part-way through a bucket (here the logger) loses none of the bucket. */
    @Test
    void throwMidBucketLosesNothing() {
        List<WheelTimeout> due = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            due.add(wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS));
        }
        executor.refuseNext = 1;
        log.throwOnNext = 1;
        ticker.advance(TICK_MS, TimeUnit.MILLISECONDS);
        assertThrows(IllegalStateException.class, () -> wheel.advance(ticker.nanoTime()));

        advanceMillis(TICK_MS);
        advanceMillis(TICK_MS);
        assertEquals(3, executor.runAll(), "timeouts of the bucket were dropped");
        for (WheelTimeout t : due) {
            assertTrue(t.isExpired());
        }
        assertEquals(3, wheel.stats().expiredTimeouts());
        assertEquals(0, wheel.stats().pendingTimeouts());
    }

    // ---------------------------------------------------------------- time

    /** A timeout handed over late after an early wake from a nap is reported as lag. */
    @Test
    void lagAfterAnEarlyWakeIsMeasuredAgainstTheDeadlineHandedOver() {
        idleUntilNapping();
        ticker.advance(57, TimeUnit.MILLISECONDS); // 107 ms: a producer schedules, due at tick 11 (110 ms)
        wheel.schedule(x -> { }, 0, TimeUnit.MILLISECONDS);
        wheel.awake();
        ticker.advance(490, TimeUnit.MILLISECONDS); // the worker gets a core only at 597 ms, still inside the nap
        wheel.advance(ticker.nanoTime());
        assertEquals(1, executor.runAll());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(597 - 110), wheel.stats().lastTickLagNanos());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(597 - 110), wheel.stats().maxTickLagNanos());
    }

    /** A ticker that steps back does not park the worker for the whole gap, and it stays wakeable. */
    @Test
    void tickerSteppingBackParksAtMostTheMaximumNapAndIsWakeable() {
        wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS);
        for (int i = 0; i < 100; i++) {
            advanceMillis(TICK_MS);
        }
        ticker.advance(-1, TimeUnit.HOURS);
        wheel.advance(ticker.nanoTime());
        long maxNapNanos = TimeUnit.SECONDS.toNanos(1);
        long park = wheel.sleepNanos(ticker.nanoTime(), maxNapNanos);
        assertTrue(park <= maxNapNanos, "parks " + park + " ns");
        assertTrue(wheel.isNapping(), "a park longer than a tick must be wakeable by a producer");
        wheel.schedule(x -> { }, 10, TimeUnit.MILLISECONDS);
        assertFalse(wheel.isNapping());
    }

    /** Catch-up: after a day's pause the wheel jumps from event to event instead of walking every tick. */
    @Test
    void catchUpAfterALongPauseVisitsEventsNotTicks() {
        AtomicInteger runs = new AtomicInteger();
        wheel.schedule(counting(runs), 1, TimeUnit.HOURS);
        wheel.schedule(counting(runs), 20, TimeUnit.HOURS);
        WheelTimeout later = wheel.schedule(counting(runs), 2, TimeUnit.DAYS);
        advanceMillis(TICK_MS);
        long visits = wheel.levels().tickVisits();

        advanceMillis(TimeUnit.DAYS.toMillis(1)); // 8.64 M ticks
        assertTrue(wheel.levels().tickVisits() - visits <= 64, "ticks visited: " + (wheel.levels().tickVisits() - visits));
        assertEquals(2, executor.runAll());
        assertFalse(later.isExpired());
        advanceMillis(TimeUnit.DAYS.toMillis(1));
        assertEquals(1, executor.runAll());
    }

    @Test
    void wheelSizeMustBeAPowerOfTwo() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> newWheel(3, -1));
        assertEquals("wheelSize: 3 (expected: a power of two >= 2)", e.getMessage());
    }

    @Test
    void timeoutKnowsItsTaskAndTimer() {
        TimerTask task = x -> { };
        WheelTimeout t = wheel.schedule(task, 1, TimeUnit.SECONDS);
        assertSame(task, t.task());
        assertNull(t.timer()); // this bare wheel has no owner
    }

    @Test
    void nullTaskOrUnitIsRejectedByName() {
        NullPointerException e1 = assertThrows(NullPointerException.class,
                () -> wheel.schedule(null, 1, TimeUnit.SECONDS));
        assertEquals("task: null (expected: a TimerTask)", e1.getMessage());
        NullPointerException e2 = assertThrows(NullPointerException.class, () -> wheel.schedule(x -> { }, 1, null));
        assertEquals("unit: null (expected: a TimeUnit)", e2.getMessage());
    }
}
