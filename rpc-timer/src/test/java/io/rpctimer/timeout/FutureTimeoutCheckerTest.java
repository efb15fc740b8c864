package io.rpctimer.timeout;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.Timer;
import io.rpctimer.wheel.TimerStats;
import io.rpctimer.wheel.TimerTask;
import io.rpctimer.wheel.WheelTimer;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

@org.junit.jupiter.api.Timeout(60)
class FutureTimeoutCheckerTest {

    private final WheelTimer timer = WheelTimer.builder().tickDuration(1, TimeUnit.MILLISECONDS).build();
    private final FutureTimeoutChecker checker = new FutureTimeoutChecker(timer);

    @AfterEach
    void stop() {
        timer.stop();
    }

    @Test
    void futureNotDoneInTimeFailsWithTimeoutOnTheExecutorNotTheWorker() throws Exception {
        CompletableFuture<String> call = new CompletableFuture<>();
        // a thread blocked in call.get() may run call's dependents itself: wait on this one instead
        CompletableFuture<String> completedOn = call.handle((r, e) -> Thread.currentThread().getName());
        checker.watch(call, 30, TimeUnit.MILLISECONDS);

        String thread = completedOn.get(5, TimeUnit.SECONDS);
        assertTrue(thread.startsWith("rpc-timer-executor-"), thread);
        ExecutionException e = assertThrows(ExecutionException.class, call::get);
        assertTrue(e.getCause() instanceof TimeoutException);
        assertEquals("timed out after 30 ms", e.getCause().getMessage());
        // counted once completeExceptionally returns, i.e. after call's dependents ran
        await().atMost(Duration.ofSeconds(5)).until(() -> checker.timedOut() == 1);
    }

    @Test
    void futureNeverTimesOutEarlyAndAtMostTwoTicksLatePlusLag() throws Exception {
        CompletableFuture<String> call = new CompletableFuture<>();
        long start = System.nanoTime();
        CompletableFuture<Long> failedAfter = call.handle((r, e) -> System.nanoTime() - start);
        checker.watch(call, 50, TimeUnit.MILLISECONDS);
        long elapsed = failedAfter.get(5, TimeUnit.SECONDS);
        assertTrue(elapsed >= TimeUnit.MILLISECONDS.toNanos(50), "timed out after " + elapsed + " ns");
    }

    /** A future that completes in time is no longer held by the checker or the wheel, though its batch is. */
    @Test
    void futureDoneInTimeIsNotHeldUntilItsDeadline() {
        WeakReference<CompletableFuture<String>> watched = watchAndComplete(checker);
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            System.gc();
            return watched.get() == null;
        });
        assertEquals(1, timer.stats().pendingTimeouts(), "the batch stays until its deadline");
    }

    private static WeakReference<CompletableFuture<String>> watchAndComplete(FutureTimeoutChecker checker) {
        CompletableFuture<String> call = new CompletableFuture<>();
        checker.watch(call, 30, TimeUnit.SECONDS);
        call.complete("ok");
        return new WeakReference<>(call);
    }

    /**
     * Futures whose deadlines fall in the same tick share one wheel timeout; each that completes in time is freed.
     */
    @Test
    void aMillionFastCallsShareFewWheelTimeoutsAndAreNotHeld() {
        int calls = 1_000_000;
        List<WeakReference<CompletableFuture<Integer>>> sample = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            CompletableFuture<Integer> call = new CompletableFuture<>();
            checker.watch(call, 30, TimeUnit.SECONDS);
            call.complete(i);
            if (i % 10_000 == 0) {
                sample.add(new WeakReference<>(call));
            }
        }
        long batches = timer.stats().scheduledTimeouts();
        // 64 a batch, and a new batch each 1 ms tick: at least 1,000,000 calls in 47 s, even on a loaded machine
        assertTrue(batches <= calls / 16, batches + " wheel timeouts for " + calls + " calls");
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            System.gc();
            return sample.stream().allMatch(r -> r.get() == null);
        });
        assertEquals(0, checker.timedOut());
    }

    /** Of futures sharing a batch, those done in time are left alone and every other one times out, once. */
    @Test
    void aBatchTimesOutExactlyItsFuturesThatAreNotDone() throws Exception {
        int calls = 1_000;
        List<CompletableFuture<Integer>> futures = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            CompletableFuture<Integer> call = new CompletableFuture<>();
            checker.watch(call, 100, TimeUnit.MILLISECONDS);
            futures.add(call);
        }
        for (int i = 0; i < calls; i += 2) {
            futures.get(i).complete(i);
        }
        CompletableFuture.allOf(futures.stream().map(f -> f.exceptionally(e -> -1)).toArray(CompletableFuture[]::new))
                .get(10, TimeUnit.SECONDS);
        for (int i = 0; i < calls; i++) {
            CompletableFuture<Integer> f = futures.get(i);
            if (i % 2 == 0) {
                assertEquals(i, f.join());
            } else {
                ExecutionException e = assertThrows(ExecutionException.class, f::get);
                assertTrue(e.getCause() instanceof TimeoutException, e.toString());
            }
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> checker.timedOut() == calls / 2);
    }

    /**
     * Threads watch and complete futures at once, with several timeouts, so that they add to the same batches and
     * replace each other's; each future that is not completed in time times out exactly once, and no other does.
     */
    @Test
    void concurrentWatchersLoseNoFutureAndTimeOutNoneDoneInTime() throws Exception {
        int threads = 4;
        int perThread = 50_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<CompletableFuture<Integer>>>> left = new ArrayList<>();
            CountDownLatch go = new CountDownLatch(1);
            for (int t = 0; t < threads; t++) {
                int seed = t;
                left.add(pool.submit(() -> {
                    go.await();
                    List<CompletableFuture<Integer>> notDone = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        CompletableFuture<Integer> call = new CompletableFuture<>();
                        checker.watch(call, 200 + (i + seed) % 7 * 30, TimeUnit.MILLISECONDS);
                        if (i % 100 == 0) {
                            notDone.add(call);
                        } else {
                            call.complete(i);
                        }
                    }
                    return notDone;
                }));
            }
            go.countDown();
            List<CompletableFuture<Integer>> notDone = new ArrayList<>();
            for (Future<List<CompletableFuture<Integer>>> f : left) {
                notDone.addAll(f.get(60, TimeUnit.SECONDS));
            }
            for (CompletableFuture<Integer> f : notDone) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof TimeoutException, e.toString());
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> checker.timedOut() == notDone.size());
            assertEquals(threads * perThread / 100, notDone.size());
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A watch or a following batch that arrives after its batch was checked (its thread stalled past the deadline)
     * is told so, and the checker schedules it on its own: none is left unchecked.
     */
    @Test
    void aBatchCheckedBeforeAWatchOrFollowerLandsRefusesThem() {
        FutureTimeoutChecker.Watch first = checker.arm(new CompletableFuture<>(), 1, TimeUnit.SECONDS,
                FutureTimeoutCheckerTest::late, null);
        CompletableFuture<String> stalled = new CompletableFuture<>();
        FutureTimeoutChecker.Watch late =
                new FutureTimeoutChecker.Watch(checker, stalled, 1, FutureTimeoutCheckerTest::late, null);
        FutureTimeoutChecker.Batch batch = new FutureTimeoutChecker.Batch(7, first);
        FutureTimeoutChecker.Batch follower = new FutureTimeoutChecker.Batch(7, late);
        batch.run(null);
        assertEquals(FutureTimeoutChecker.Batch.CHECKED, batch.add(late));
        assertFalse(batch.follow(follower), "a checked batch took a follower");
        follower.run(null);
        ExecutionException e = assertThrows(ExecutionException.class, stalled::get);
        assertEquals("late by 1", e.getCause().getMessage());
    }

    /** A batch that fills up is followed by the next, checked by the same wheel timeout. */
    @Test
    void aFullBatchIsFollowedByOneCheckedWithIt() {
        List<CompletableFuture<String>> futures = new ArrayList<>();
        FutureTimeoutChecker.Batch head = null;
        for (int i = 0; i < FutureTimeoutChecker.BATCH_SIZE + 1; i++) {
            CompletableFuture<String> f = new CompletableFuture<>();
            futures.add(f);
            FutureTimeoutChecker.Watch w =
                    new FutureTimeoutChecker.Watch(checker, f, 5, FutureTimeoutCheckerTest::late, null);
            if (head == null) {
                head = new FutureTimeoutChecker.Batch(3, w);
            } else if (i < FutureTimeoutChecker.BATCH_SIZE) {
                assertEquals(FutureTimeoutChecker.Batch.ADDED, head.add(w));
            } else {
                assertEquals(FutureTimeoutChecker.Batch.FULL, head.add(w));
                assertTrue(head.follow(new FutureTimeoutChecker.Batch(3, w)));
            }
        }
        futures.get(1).complete("in time");
        head.run(null);
        for (int i = 0; i < futures.size(); i++) {
            assertTrue(futures.get(i).isDone(), "future " + i + " not checked");
            assertEquals(i == 1, !futures.get(i).isCompletedExceptionally(), "future " + i);
        }
    }

    /** A factory that throws still ends the future: with what it threw. */
    @Test
    void exceptionFactoryThatThrowsStillEndsTheFuture() {
        CompletableFuture<String> call = new CompletableFuture<>();
        checker.watch(call, 20, TimeUnit.MILLISECONDS, ms -> {
            throw new IllegalStateException("factory broke");
        }, null);
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(5, TimeUnit.SECONDS));
        assertEquals("factory broke", e.getCause().getMessage());
    }

    @Test
    void customExceptionAndExecutorAreUsed() throws Exception {
        ExecutorService callerExecutor = Executors.newSingleThreadExecutor(r -> new Thread(r, "caller-executor"));
        try {
            CompletableFuture<String> call = new CompletableFuture<>();
            CompletableFuture<String> completedOn = call.handle((r, e) -> Thread.currentThread().getName());
            checker.watch(call, 20, TimeUnit.MILLISECONDS, ms -> new IllegalStateException("late by " + ms),
                    callerExecutor);
            assertEquals("caller-executor", completedOn.get(5, TimeUnit.SECONDS));
            ExecutionException e = assertThrows(ExecutionException.class, call::get);
            assertEquals("late by 20", e.getCause().getMessage());
        } finally {
            callerExecutor.shutdownNow();
        }
    }

    /** An executor that refuses the completion (e.g. shut down) must not leave the future pending forever. */
    @Test
    void refusingExecutorStillTimesTheFutureOutOnTheTimersExecutor() throws Exception {
        CompletableFuture<String> call = new CompletableFuture<>();
        CompletableFuture<String> completedOn = call.handle((r, e) -> Thread.currentThread().getName());
        checker.watch(call, 20, TimeUnit.MILLISECONDS, FutureTimeoutCheckerTest::late, task -> {
            throw new RejectedExecutionException("shut down");
        });
        assertTrue(completedOn.get(5, TimeUnit.SECONDS).startsWith("rpc-timer-executor-"));
        ExecutionException e = assertThrows(ExecutionException.class, call::get);
        assertEquals("late by 20", e.getCause().getMessage());
    }

    private static IllegalStateException late(long timeoutMillis) {
        return new IllegalStateException("late by " + timeoutMillis);
    }

    @Test
    void alreadyDoneFutureSchedulesNothing() {
        CompletableFuture<String> done = CompletableFuture.completedFuture("x");
        Timer refusing = new Timer() {
            @Override
            public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
                throw new AssertionError("a done future was scheduled");
            }

            @Override
            public Set<Timeout> stop() {
                return Set.of();
            }

            @Override
            public TimerStats stats() {
                return timer.stats();
            }
        };
        assertSame(done, new FutureTimeoutChecker(refusing).watch(done, 1, TimeUnit.SECONDS));
    }

    /** {@code arm} adds no stage to the future: the caller's own callback disarms the watch it returns. */
    @Test
    void armedWatchAddsNoStage_timesTheFutureOut_andIsDisarmedByItsCaller() throws Exception {
        CompletableFuture<String> late = new CompletableFuture<>();
        checker.arm(late, 30, TimeUnit.MILLISECONDS, FutureTimeoutCheckerTest::late, null);
        assertEquals(0, late.getNumberOfDependents());
        ExecutionException e = assertThrows(ExecutionException.class, () -> late.get(5, TimeUnit.SECONDS));
        assertEquals("late by 30", e.getCause().getMessage());

        WeakReference<CompletableFuture<String>> onTime = armCompleteAndDisarm(checker);
        await().atMost(Duration.ofSeconds(20)).until(() -> {
            System.gc();
            return onTime.get() == null;
        });

        assertEquals(null, checker.arm(CompletableFuture.completedFuture("x"), 1, TimeUnit.SECONDS,
                FutureTimeoutCheckerTest::late, null), "a done future needs no timeout");
    }

    private static WeakReference<CompletableFuture<String>> armCompleteAndDisarm(FutureTimeoutChecker checker) {
        CompletableFuture<String> call = new CompletableFuture<>();
        FutureTimeoutChecker.Watch w = checker.arm(call, 30, TimeUnit.SECONDS, FutureTimeoutCheckerTest::late, null);
        call.complete("ok");
        w.disarm();
        return new WeakReference<>(call);
    }

    /** An armed watch nobody disarms finds its future done when its batch is checked, and leaves it alone. */
    @Test
    void armedWatchNeverDisarmedLeavesADoneFutureAlone() {
        CompletableFuture<String> call = new CompletableFuture<>();
        checker.arm(call, 20, TimeUnit.MILLISECONDS, FutureTimeoutCheckerTest::late, null);
        call.complete("ok");
        await().atMost(Duration.ofSeconds(5)).until(() -> timer.stats().expiredTimeouts() == 1);
        assertEquals("ok", call.join());
        assertEquals(0, checker.timedOut());
    }

    @Test
    void badArgumentsAreRejectedNamingParameterAndValue() {
        CompletableFuture<String> f = new CompletableFuture<>();
        assertEquals("future: null (expected: a CompletableFuture)", assertThrows(NullPointerException.class,
                () -> checker.watch(null, 1, TimeUnit.SECONDS)).getMessage());
        assertEquals("timeout: 0 (expected: > 0)", assertThrows(IllegalArgumentException.class,
                () -> checker.watch(f, 0, TimeUnit.SECONDS)).getMessage());
        assertEquals("unit: null (expected: a TimeUnit)", assertThrows(NullPointerException.class,
                () -> checker.watch(f, 1, null)).getMessage());
        assertEquals("timeout: -1 (expected: > 0)", assertThrows(IllegalArgumentException.class,
                () -> checker.arm(f, -1, TimeUnit.SECONDS, FutureTimeoutCheckerTest::late, null)).getMessage());
        assertEquals("onTimeout: null (expected: an exception factory)", assertThrows(NullPointerException.class,
                () -> checker.arm(f, 1, TimeUnit.SECONDS, null, null)).getMessage());
        assertEquals("timer: null (expected: a Timer)", assertThrows(NullPointerException.class,
                () -> new FutureTimeoutChecker(null)).getMessage());
    }
}
