package io.rpctimer.timeout;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.Timer;
import io.rpctimer.wheel.TimerStats;
import io.rpctimer.wheel.TimerTask;
import io.rpctimer.wheel.WheelTimer;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
    void futureDoneInTimeCancelsItsWheelTimeout() throws Exception {
        CompletableFuture<String> call = new CompletableFuture<>();
        checker.watch(call, 30, TimeUnit.SECONDS);
        call.complete("ok");
        assertEquals("ok", call.get());
        await().atMost(Duration.ofSeconds(5)).until(() -> timer.stats().cancelledTimeouts() == 1);
        assertEquals(0, timer.stats().pendingTimeouts());
    }

    @Test
    void aMillionFastCallsLeaveNothingPending() {
        int calls = 1_000_000;
        for (int i = 0; i < calls; i++) {
            CompletableFuture<Integer> call = new CompletableFuture<>();
            checker.watch(call, 30, TimeUnit.SECONDS);
            call.complete(i);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> timer.stats().cancelledTimeouts() == calls);
        assertEquals(0, timer.stats().pendingTimeouts());
        assertEquals(0, checker.timedOut());
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

    /** {@code arm} adds no stage to the future: the caller's own callback cancels the timeout it returns. */
    @Test
    void armedTimeoutAddsNoStage_timesTheFutureOut_andIsCancelledByItsCaller() throws Exception {
        CompletableFuture<String> late = new CompletableFuture<>();
        Timeout t = checker.arm(late, 30, TimeUnit.MILLISECONDS, FutureTimeoutCheckerTest::late, null);
        assertEquals(0, late.getNumberOfDependents());
        ExecutionException e = assertThrows(ExecutionException.class, () -> late.get(5, TimeUnit.SECONDS));
        assertEquals("late by 30", e.getCause().getMessage());
        assertTrue(t.isExpired());

        CompletableFuture<String> onTime = new CompletableFuture<>();
        Timeout cancelled = checker.arm(onTime, 30, TimeUnit.SECONDS, FutureTimeoutCheckerTest::late, null);
        onTime.complete("ok");
        assertTrue(cancelled.cancel());
        await().atMost(Duration.ofSeconds(5)).until(() -> timer.stats().pendingTimeouts() == 0);

        assertEquals(null, checker.arm(CompletableFuture.completedFuture("x"), 1, TimeUnit.SECONDS,
                FutureTimeoutCheckerTest::late, null), "a done future needs no timeout");
    }

    /** An armed timeout nobody cancels finds its future done when it falls due, and leaves it alone. */
    @Test
    void armedTimeoutNeverCancelledLeavesADoneFutureAlone() {
        CompletableFuture<String> call = new CompletableFuture<>();
        Timeout t = checker.arm(call, 20, TimeUnit.MILLISECONDS, FutureTimeoutCheckerTest::late, null);
        call.complete("ok");
        await().atMost(Duration.ofSeconds(5)).until(t::isExpired);
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
