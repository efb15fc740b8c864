package io.rpctimer.wheel;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The worker thread shell on real time: every wait is bounded by {@code @Timeout} or Awaitility. */
@org.junit.jupiter.api.Timeout(30)
class WheelTimerTest {

    private WheelTimer timer = WheelTimer.builder().tickDuration(10, TimeUnit.MILLISECONDS).build();

    @AfterEach
    void stopTimer() {
        timer.stop();
    }

    @Test
    void expiredTaskRunsOnExecutorNotWorker() throws Exception {
        CompletableFuture<String> ranOn = new CompletableFuture<>();
        timer.newTimeout(t -> ranOn.complete(Thread.currentThread().getName()), 10, TimeUnit.MILLISECONDS);
        String thread = ranOn.get(5, TimeUnit.SECONDS);
        assertTrue(thread.startsWith("rpc-timer-executor-"), thread);
    }

    /**
     * The seeds' own example: two tasks due at 1 s that each block for 2 s. On Netty's and Dubbo's wheels the
     * second starts 2 s late; here both start within a tick of each other. The timer has Netty's default tick,
     * 100 ms, so that a loaded 2-core machine scheduling the second executor thread a little late does not fail it.
     */
    @Test
    void twoBlockingTasksDueTogetherStartWithinOneTick() throws Exception {
        timer.stop();
        timer = WheelTimer.builder().tickDuration(100, TimeUnit.MILLISECONDS).build();
        CountDownLatch bothStarted = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        List<Long> startNanos = new CopyOnWriteArrayList<>();
        TimerTask blockFor2s = t -> {
            startNanos.add(System.nanoTime());
            bothStarted.countDown();
            release.await(2, TimeUnit.SECONDS); // the task's own work: blocks up to 2 s
        };
        timer.newTimeout(blockFor2s, 1, TimeUnit.SECONDS);
        timer.newTimeout(blockFor2s, 1, TimeUnit.SECONDS);

        assertTrue(bothStarted.await(1_900, TimeUnit.MILLISECONDS), "second task waited for the first");
        release.countDown();
        long apartNanos = Math.abs(startNanos.get(0) - startNanos.get(1));
        assertTrue(apartNanos <= timer.tickDurationNanos(), "started " + apartNanos + " ns apart");
    }

    @Test
    void nappingWorkerIsWokenByANewTimeout() throws Exception {
        timer.newTimeout(t -> { }, 1, TimeUnit.HOURS);
        await().atMost(Duration.ofSeconds(5)).until(timer::isNapping);
        CountDownLatch ran = new CountDownLatch(1);
        long wakes = timer.producerWakes();
        timer.newTimeout(t -> ran.countDown(), 20, TimeUnit.MILLISECONDS);
        assertEquals(wakes + 1, timer.producerWakes(), "newTimeout woke the worker");
        assertTrue(ran.await(5, TimeUnit.SECONDS));
    }

    @Test
    void nappingWorkerIsWokenByACancel() {
        Timeout far = timer.newTimeout(t -> { }, 1, TimeUnit.HOURS);
        await().atMost(Duration.ofSeconds(5)).until(timer::isNapping);
        assertTrue(far.cancel());
        assertFalse(timer.isNapping(), "cancel woke the worker");
        await().atMost(Duration.ofSeconds(5)).until(() -> timer.stats().cancelledTimeouts() == 1);
    }

    @Test
    void workerStartsLazilyOnFirstTimeout() {
        assertFalse(workerThreadAlive(), "worker started before any newTimeout");
        timer.newTimeout(t -> { }, 1, TimeUnit.HOURS);
        assertTrue(workerThreadAlive());
    }

    private boolean workerThreadAlive() {
        String name = timer.toString().substring("WheelTimer(".length()).split(",")[0];
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name));
    }

    @Test
    void stopIsIdempotentAndReturnsTimeoutsThatNeverRan() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        timer.newTimeout(t -> ran.countDown(), 1, TimeUnit.MILLISECONDS);
        Timeout far1 = timer.newTimeout(t -> { }, 1, TimeUnit.HOURS);
        Timeout far2 = timer.newTimeout(t -> { }, 2, TimeUnit.DAYS);
        Timeout cancelled = timer.newTimeout(t -> { }, 1, TimeUnit.HOURS);
        cancelled.cancel();
        assertTrue(ran.await(5, TimeUnit.SECONDS));

        assertEquals(Set.of(far1, far2), timer.stop());
        assertEquals(Set.of(), timer.stop());
    }

    @Test
    void newTimeoutAfterStopThrows() {
        timer.newTimeout(t -> { }, 1, TimeUnit.HOURS);
        timer.stop();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS));
        assertEquals("timer stopped: newTimeout is not allowed after stop()", e.getMessage());
    }

    @Test
    void newTimeoutOnNeverStartedStoppedTimerThrows() {
        timer.stop();
        assertThrows(IllegalStateException.class, () -> timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS));
    }

    /** A task (an executor thread) may stop its own timer; only the worker thread may not. */
    @Test
    void stopFromATaskStopsTheTimer() throws Exception {
        Timeout far = timer.newTimeout(t -> { }, 1, TimeUnit.HOURS);
        CompletableFuture<Set<Timeout>> stopped = new CompletableFuture<>();
        timer.newTimeout(t -> {
            try {
                stopped.complete(t.timer().stop());
            } catch (Throwable e) {
                stopped.completeExceptionally(e);
            }
        }, 1, TimeUnit.MILLISECONDS);
        assertEquals(Set.of(far), stopped.get(10, TimeUnit.SECONDS));
        assertThrows(IllegalStateException.class, () -> timer.newTimeout(t -> { }, 1, TimeUnit.SECONDS));
    }

    /** A direct executor runs tasks on the worker thread: stopping from there would wait for itself. */
    @Test
    void stopFromTheWorkerThreadThrowsAndTheTimerGoesOn() throws Exception {
        timer.stop();
        timer = WheelTimer.builder().tickDuration(10, TimeUnit.MILLISECONDS).executor(Runnable::run).build();
        CompletableFuture<Throwable> thrown = new CompletableFuture<>();
        timer.newTimeout(t -> {
            try {
                t.timer().stop();
                thrown.complete(null);
            } catch (Throwable e) {
                thrown.complete(e);
            }
        }, 1, TimeUnit.MILLISECONDS);
        Throwable e = thrown.get(5, TimeUnit.SECONDS);
        assertTrue(e instanceof IllegalStateException, String.valueOf(e));
        CountDownLatch ran = new CountDownLatch(1);
        timer.newTimeout(t -> ran.countDown(), 1, TimeUnit.MILLISECONDS);
        assertTrue(ran.await(5, TimeUnit.SECONDS));
    }

    @Test
    void timeoutReportsItsTimer() throws Exception {
        Timeout t = timer.newTimeout(x -> { }, 1, TimeUnit.HOURS);
        assertSame(timer, t.timer());
    }

    @Test
    void taskThatThrowsDoesNotHurtTheWheel() throws Exception {
        timer.newTimeout(t -> {
            throw new IllegalStateException("boom (expected by the test)");
        }, 1, TimeUnit.MILLISECONDS);
        CountDownLatch ran = new CountDownLatch(1);
        timer.newTimeout(t -> ran.countDown(), 20, TimeUnit.MILLISECONDS);
        assertTrue(ran.await(5, TimeUnit.SECONDS));
        await().atMost(Duration.ofSeconds(5)).until(() -> timer.stats().failedTasks() == 1);
    }

    /**
     * Saturation policy: a one-thread executor with no queue refuses while its thread is busy. The worker keeps
     * ticking (it never blocks), defers the refused tasks, and runs every one of them once the executor frees up.
     */
    @Test
    void saturatedExecutorNeitherBlocksTheWorkerNorDropsTasks() throws Exception {
        ThreadPoolExecutor oneThread = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new SynchronousQueue<>());
        timer.stop();
        timer = WheelTimer.builder().tickDuration(10, TimeUnit.MILLISECONDS).executor(oneThread).build();
        try {
            CountDownLatch release = new CountDownLatch(1);
            AtomicInteger ran = new AtomicInteger();
            timer.newTimeout(t -> release.await(10, TimeUnit.SECONDS), 1, TimeUnit.MILLISECONDS);
            for (int i = 0; i < 5; i++) {
                timer.newTimeout(t -> ran.incrementAndGet(), 20, TimeUnit.MILLISECONDS);
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> timer.stats().deferredHandOffs() >= 3);
            long ticks = timer.stats().ticks();
            await().atMost(Duration.ofSeconds(5)).until(() -> timer.stats().ticks() > ticks + 5); // still ticking
            assertEquals(0, ran.get());

            release.countDown();
            await().atMost(Duration.ofSeconds(5)).until(() -> ran.get() == 5);
        } finally {
            oneThread.shutdownNow();
        }
    }

    @Test
    void statsAreReadableWhileRunning() {
        for (int i = 0; i < 10; i++) {
            timer.newTimeout(t -> { }, 1, TimeUnit.MILLISECONDS);
        }
        timer.newTimeout(t -> { }, 1, TimeUnit.HOURS);
        await().atMost(Duration.ofSeconds(5)).until(() -> timer.stats().expiredTimeouts() == 10);
        TimerStats s = timer.stats();
        assertEquals(11, s.scheduledTimeouts());
        assertEquals(1, s.pendingTimeouts());
        assertTrue(s.ticks() > 0);
        assertTrue(s.maxTickLagNanos() >= s.lastTickLagNanos());
    }

    @Test
    void maxPendingTimeoutsIsEnforced() {
        timer.stop();
        timer = WheelTimer.builder().maxPendingTimeouts(3).build();
        for (int i = 0; i < 3; i++) {
            timer.newTimeout(t -> { }, 1, TimeUnit.HOURS);
        }
        java.util.concurrent.RejectedExecutionException e = assertThrows(
                java.util.concurrent.RejectedExecutionException.class,
                () -> timer.newTimeout(t -> { }, 1, TimeUnit.HOURS));
        assertEquals("pendingTimeouts: 3 (expected: < maxPendingTimeouts: 3)", e.getMessage());
    }

    @Test
    void tickBelowOneMillisecondIsRaisedToOne() {
        WheelTimer t = WheelTimer.builder().tickDuration(100, TimeUnit.MICROSECONDS).build();
        assertEquals(TimeUnit.MILLISECONDS.toNanos(1), t.tickDurationNanos());
        t.stop();
    }

    @ParameterizedTest
    @CsvSource({"1, 2", "2, 2", "3, 4", "512, 512", "1000, 1024", "1073741824, 1073741824"})
    void ticksPerWheelIsNormalisedToAPowerOfTwo(int requested, int expected) {
        WheelTimer t = WheelTimer.builder().ticksPerWheel(requested).build(); // buckets are allocated lazily
        assertEquals(expected, t.ticksPerWheel());
        t.stop();
    }

    @Test
    void badArgumentsAreRejectedNamingParameterAndValue() {
        WheelTimer.Builder b = WheelTimer.builder();
        assertMessage(IllegalArgumentException.class, "tickDuration: 0 (expected: > 0)",
                () -> b.tickDuration(0, TimeUnit.SECONDS));
        assertMessage(IllegalArgumentException.class, "tickDuration: -5 (expected: > 0)",
                () -> b.tickDuration(-5, TimeUnit.SECONDS));
        assertMessage(NullPointerException.class, "unit: null (expected: a TimeUnit)", () -> b.tickDuration(1, null));
        assertMessage(IllegalArgumentException.class, "ticksPerWheel: 0 (expected: > 0)", () -> b.ticksPerWheel(0));
        assertMessage(IllegalArgumentException.class, "ticksPerWheel: -1 (expected: > 0)", () -> b.ticksPerWheel(-1));
        assertMessage(IllegalArgumentException.class, "ticksPerWheel: 1073741825 (expected: <= 1073741824)",
                () -> b.ticksPerWheel((1 << 30) + 1));
        assertMessage(NullPointerException.class, "executor: null (expected: an Executor)",
                () -> b.executor((Executor) null));
        assertMessage(NullPointerException.class, "ticker: null (expected: a Ticker)", () -> b.ticker(null));
        assertMessage(NullPointerException.class, "task: null (expected: a TimerTask)",
                () -> timer.newTimeout(null, 1, TimeUnit.SECONDS));
        assertMessage(NullPointerException.class, "unit: null (expected: a TimeUnit)",
                () -> timer.newTimeout(t -> { }, 1, null));
    }

    private static void assertMessage(Class<? extends Throwable> type, String message,
                                      org.junit.jupiter.api.function.Executable call) {
        assertEquals(message, assertThrows(type, call).getMessage());
    }

    @Test
    void tooManyInstancesAreCountedForTheWarning() {
        int before = WheelTimer.aliveInstances();
        WheelTimer[] timers = new WheelTimer[3];
        for (int i = 0; i < timers.length; i++) {
            timers[i] = WheelTimer.builder().build();
        }
        assertEquals(before + 3, WheelTimer.aliveInstances());
        for (WheelTimer t : timers) {
            t.stop();
        }
        assertEquals(before, WheelTimer.aliveInstances());
        assertNotEquals(0, WheelTimer.INSTANCE_COUNT_WARNING);
    }
}
