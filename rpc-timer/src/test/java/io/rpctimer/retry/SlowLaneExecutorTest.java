package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * The routing rules of {@link SlowLaneExecutor}, on a fake clock and lanes the test runs by hand: a task "takes"
 * time by moving the clock while it runs.
 */
class SlowLaneExecutorTest {

    private static final long SLOW_MS = 100;

    private final AtomicLong nowNanos = new AtomicLong(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(5)); // wraps
    private final Lane fast = new Lane();
    private final Lane slow = new Lane();
    private final List<String> ran = new ArrayList<>();

    /** Queues tasks until the test runs them; refuses while {@link #full}. Single-threaded. */
    private static final class Lane implements Executor {
        final Queue<Runnable> queued = new ArrayDeque<>();
        boolean full;

        @Override
        public void execute(Runnable task) {
            if (full) {
                throw new RejectedExecutionException("full (test)");
            }
            queued.add(task);
        }

        void runAll() {
            Runnable r;
            while ((r = queued.poll()) != null) {
                r.run();
            }
        }
    }

    private SlowLaneExecutor.Builder lanes(int fastThreads) {
        return SlowLaneExecutor.builder().fastThreads(fastThreads).lanes(fast, slow).ticker(nowNanos::get)
                .slowRun(SLOW_MS, TimeUnit.MILLISECONDS);
    }

    /** A task that occupies its thread for {@code millis} of the fake clock. */
    private Runnable taking(String name, long millis) {
        return () -> {
            ran.add(name);
            nowNanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
        };
    }

    private void advance(long millis) {
        nowNanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
    }

    @Test
    void kindSlowTwiceInAWindow_isIsolatedOnSlowLane_othersStayFast() {
        SlowLaneExecutor lanes = lanes(4).build();
        lanes.execute("A", taking("a1", SLOW_MS));
        fast.runAll();
        assertFalse(lanes.isIsolated("A"), "one slow run is not yet repeated");
        lanes.execute("A", taking("a2", SLOW_MS + 50));
        fast.runAll();
        assertTrue(lanes.isIsolated("A"));

        lanes.execute("A", taking("a3", 0));
        lanes.execute("B", taking("b1", 0));
        assertEquals(1, slow.queued.size(), "A's next task goes to the slow lane");
        assertEquals(1, fast.queued.size(), "B stays on the fast lane");
    }

    @Test
    void runJustUnderThreshold_isFast() {
        SlowLaneExecutor lanes = lanes(4).build();
        for (int i = 0; i < 5; i++) {
            lanes.execute("A", taking("a", SLOW_MS - 1));
            fast.runAll();
        }
        assertFalse(lanes.isIsolated("A"));
        assertTrue(slow.queued.isEmpty());
    }

    @Test
    void slowRunsInDifferentWindows_doNotIsolate() {
        SlowLaneExecutor lanes = lanes(4).window(10, TimeUnit.SECONDS).build();
        lanes.execute("A", taking("a1", SLOW_MS));
        fast.runAll();
        advance(9_900); // idle for less than a window, so A is remembered, but its window has passed
        lanes.execute("A", taking("a2", SLOW_MS));
        fast.runAll();
        assertFalse(lanes.isIsolated("A"), "one slow run per window, as XXL-JOB counts per minute");
        lanes.execute("A", taking("a3", SLOW_MS));
        fast.runAll();
        assertTrue(lanes.isIsolated("A"), "two in the new window");
    }

    @Test
    void isolatedKind_returnsToFastLaneAfterFastRunsInARow() {
        SlowLaneExecutor lanes = lanes(4).fastRunsToRestore(3).build();
        isolate(lanes, "A");
        for (int i = 0; i < 2; i++) {
            lanes.execute("A", taking("fast", 1));
            slow.runAll();
        }
        lanes.execute("A", taking("slow again", SLOW_MS));
        slow.runAll();
        lanes.execute("A", taking("fast", 1));
        slow.runAll();
        assertTrue(lanes.isIsolated("A"), "a slow run restarts the count");
        for (int i = 0; i < 2; i++) {
            lanes.execute("A", taking("fast", 1));
            slow.runAll();
        }
        assertFalse(lanes.isIsolated("A"));
        lanes.execute("A", taking("back", 0));
        assertEquals(1, fast.queued.size(), "back on the fast lane");
    }

    /** The first slow run: a run still going after the threshold sends its kind's next tasks to the slow lane. */
    @Test
    void runStillGoingPastThreshold_sendsItsKindsNextTasksToSlowLane() {
        SlowLaneExecutor lanes = lanes(6).build(); // maxFastPerKind 3: rule 3 does not decide here
        lanes.execute("A", () -> {
            advance(SLOW_MS - 1);
            lanes.execute("A", taking("a-before", 0));
            advance(1);
            lanes.execute("A", taking("a-after", 0));
            lanes.execute("B", taking("b", 0));
        });
        fast.queued.poll().run();
        assertEquals(List.of("a-before", "b"), names(fast));
        assertEquals(List.of("a-after"), names(slow));
        assertFalse(lanes.isIsolated("A"), "still one slow run");
    }

    /** Before anything ended: one kind never holds more than maxFastPerKind fast threads. */
    @Test
    void kindAtMaxFastPerKind_spillsToSlowLane_soAFastThreadStaysFree() {
        SlowLaneExecutor lanes = lanes(2).build(); // default maxFastPerKind: 1
        lanes.execute("A", taking("a1", 0));
        lanes.execute("A", taking("a2", 0));
        lanes.execute("A", taking("a3", 0));
        lanes.execute("B", taking("b1", 0));
        assertEquals(List.of("a1", "b1"), names(fast));
        assertEquals(List.of("a2", "a3"), names(slow));
        fast.runAll();
        lanes.execute("A", taking("a4", 0));
        assertEquals(List.of("a4"), names(fast), "A's fast task ended, so the lane takes A again");
    }

    @Test
    void fastLaneFull_spillsToSlowLane_bothFull_refusesAndTheTaskIsNotTaken() {
        SlowLaneExecutor lanes = lanes(2).build();
        fast.full = true;
        lanes.execute("A", taking("a1", 0));
        assertEquals(List.of("a1"), names(slow));
        slow.full = true;
        assertThrows(RejectedExecutionException.class, () -> lanes.execute("A", taking("refused", 0)));
        fast.full = false;
        slow.full = false;
        lanes.execute("A", taking("a2", 0));
        assertEquals(List.of("a2"), names(fast), "refused and spilled tasks left no count behind");
        assertEquals(List.of("a1", "a2"), ran, "the refused task stayed with the caller");
    }

    @Test
    void throwingTask_isContained_andItsRunIsCounted() {
        SlowLaneExecutor lanes = lanes(2).build();
        lanes.execute("A", () -> {
            throw new IllegalStateException("task failure (test)");
        });
        fast.runAll();
        lanes.execute("A", taking("a2", 0));
        assertEquals(List.of("a2"), names(fast), "the throwing run ended: A may use the fast lane again");
    }

    @Test
    void idleKindIsForgotten_andRecordsAreBounded() {
        SlowLaneExecutor lanes = lanes(2).maxKinds(3).window(10, TimeUnit.SECONDS).build();
        isolate(lanes, "A");
        advance(10_000);
        lanes.execute("B", taking("b", 0));
        assertFalse(lanes.isIsolated("A"), "idle for a window: forgotten");
        assertEquals(1, lanes.trackedKinds());
        for (int i = 0; i < 10; i++) {
            lanes.execute("K" + i, taking("k", 0));
        }
        assertEquals(3, lanes.trackedKinds());
        fast.runAll();
        slow.runAll();
    }

    @Test
    @Timeout(20)
    void afterShutdown_refuses_queuedTasksStillRun() throws Exception {
        SlowLaneExecutor lanes = SlowLaneExecutor.builder().threadNamePrefix("lane-test").build();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(2);
        List<String> threads = new CopyOnWriteArrayList<>();
        Runnable task = () -> {
            threads.add(Thread.currentThread().getName());
            awaitQuietly(release);
            finished.countDown();
        };
        lanes.execute("A", task);
        lanes.execute("A", task);
        lanes.shutdown();
        assertThrows(RejectedExecutionException.class, () -> lanes.execute("B", () -> { }));
        release.countDown();
        assertTrue(lanes.awaitTermination(10, TimeUnit.SECONDS));
        assertEquals(0, finished.getCount());
        assertTrue(threads.stream().allMatch(n -> n.startsWith("lane-test-")), threads::toString);
    }

    @Test
    void badSettings_nameTheValue() {
        assertBad("fastThreads: 1 (expected: >= 2)", () -> SlowLaneExecutor.builder().fastThreads(1));
        assertBad("slowThreads: 0 (expected: >= 1)", () -> SlowLaneExecutor.builder().slowThreads(0));
        assertBad("queueCapacity: 0 (expected: >= 1)", () -> SlowLaneExecutor.builder().queueCapacity(0));
        assertBad("slowRun: 0 MILLISECONDS (expected: > 0)",
                () -> SlowLaneExecutor.builder().slowRun(0, TimeUnit.MILLISECONDS));
        assertBad("window: -1 SECONDS (expected: > 0)", () -> SlowLaneExecutor.builder().window(-1, TimeUnit.SECONDS));
        assertBad("slowRunsToIsolate: 0 (expected: >= 1)", () -> SlowLaneExecutor.builder().slowRunsToIsolate(0));
        assertBad("fastRunsToRestore: 0 (expected: >= 1)", () -> SlowLaneExecutor.builder().fastRunsToRestore(0));
        assertBad("maxKinds: 0 (expected: >= 1)", () -> SlowLaneExecutor.builder().maxKinds(0));
        assertBad("threadNamePrefix: ' ' (expected: not blank)",
                () -> SlowLaneExecutor.builder().threadNamePrefix(" "));
        assertBad("maxFastPerKind: 2 (expected: < fastThreads 2, so that one kind never holds every fast thread)",
                () -> SlowLaneExecutor.builder().fastThreads(2).maxFastPerKind(2).build());
    }

    @Test
    @Timeout(10)
    void ownLanes_runTasksOnNamedDaemonThreads() throws Exception {
        SlowLaneExecutor lanes = SlowLaneExecutor.builder().threadNamePrefix("lane-test").build();
        CountDownLatch done = new CountDownLatch(1);
        Thread[] seen = new Thread[1];
        lanes.execute("A", () -> {
            seen[0] = Thread.currentThread();
            done.countDown();
        });
        assertTrue(done.await(5, TimeUnit.SECONDS));
        assertTrue(seen[0].isDaemon());
        assertEquals("lane-test-fast-1", seen[0].getName());
        lanes.shutdown();
        assertTrue(lanes.awaitTermination(5, TimeUnit.SECONDS));
    }

    private void isolate(SlowLaneExecutor lanes, String kind) {
        for (int i = 0; i < 2; i++) {
            lanes.execute(kind, taking(kind + " slow", SLOW_MS));
            fast.runAll();
            slow.runAll();
        }
        assertTrue(lanes.isIsolated(kind));
    }

    /** Runs what the lane holds and returns the names of the tasks that ran. */
    private List<String> names(Lane lane) {
        int before = ran.size();
        lane.runAll();
        return List.copyOf(ran.subList(before, ran.size()));
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void assertBad(String message, Executable setting) {
        assertEquals(message, assertThrows(IllegalArgumentException.class, setting).getMessage());
    }
}
