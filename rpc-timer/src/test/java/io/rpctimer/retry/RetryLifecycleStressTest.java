package io.rpctimer.retry;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.wheel.WheelTimer;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The lifecycle on a real wheel and real threads: replies from an "I/O" pool racing a reference's destroy and the
 * application's close, and 10,000 retries waiting for the budget while the wheel keeps its ticks. Tagged
 * {@code stress}; {@code mvn -B verify} runs it (skip locally with {@code -DexcludedGroups=stress}).
 */
@Tag("stress")
@org.junit.jupiter.api.Timeout(120)
class RetryLifecycleStressTest {

    private static final int PRODUCERS = 4;
    private static final int CALLS_PER_PRODUCER = 2_500;

    /**
     * 10,000 calls over two references, admitted from 4 threads; replies (delivered, RPC failure, business failure)
     * come from 2 other threads after 0-3 ms; one reference is destroyed and then the application closed while
     * replies are in flight. Every call has exactly one outcome event, its handle completes with that same outcome,
     * and the counters add up.
     */
    @Test
    void racingRepliesDestroyAndClose_everyCallExactlyOneOutcome() throws Exception {
        WheelTimer timer = WheelTimer.builder().tickDuration(1, TimeUnit.MILLISECONDS).build();
        ExecutorService dispatch = Executors.newFixedThreadPool(3);
        ScheduledExecutorService io = Executors.newScheduledThreadPool(2);
        ExecutorService producers = Executors.newFixedThreadPool(PRODUCERS);
        Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        Map<String, RetryOutcome> outcomeOfEvent = new ConcurrentHashMap<>();
        CountDownLatch firstDelivery = new CountDownLatch(1);
        try {
            RetryLifecycle lifecycle = RetryLifecycle.builder("stress").timer(timer).executor(dispatch)
                    .journal(new FakeJournal()).listener(e -> {
                        if (e.isOutcome()) {
                            outcomes.computeIfAbsent(e.retryId(), k -> new AtomicInteger()).incrementAndGet();
                            outcomeOfEvent.put(e.retryId(), e.type().outcome());
                            if (e.type().outcome() == RetryOutcome.DELIVERED) {
                                firstDelivery.countDown();
                            }
                        }
                    }).build();
            // retries 2 ms to ~160 ms apart: the first replies come at once, and calls are still pending when the
            // reference is destroyed and the application closed, even if this thread is descheduled for a while
            RetryPolicy policy = RetryPolicy.builder().retries(5).firstDelay(2, TimeUnit.MILLISECONDS)
                    .multiplier(3).maxDelay(200, TimeUnit.MILLISECONDS).build();
            List<RetryReference<String>> refs = new ArrayList<>();
            for (String key : List.of("a", "b")) {
                refs.add(lifecycle.<String>reference(key, (call, attempt) -> randomReply(io)).policies(m -> policy)
                        .limits(4_000, OverflowPolicy.LOG).decoder(e -> "x").build());
            }
            Map<String, CompletableFuture<CallOutcome>> handles = new ConcurrentHashMap<>();
            CountDownLatch halfway = new CountDownLatch(PRODUCERS);
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int p = 0; p < PRODUCERS; p++) {
                int producer = p;
                done.add(producers.submit(() -> produce(producer, refs, handles, halfway)));
            }
            halfway.await(60, TimeUnit.SECONDS);
            // replies must be flowing when the reference is destroyed: warm producers admit all 10,000 calls in a
            // few ms, and without this the destroy and the close could both come before the first retry is due.
            // A latch, not a poll: by a poll's next look (Awaitility's 100 ms) every call could have ended
            assertTrue(firstDelivery.await(30, TimeUnit.SECONDS), "no retry delivered in 30 s");
            refs.get(0).destroy();
            for (java.util.concurrent.Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            lifecycle.close();

            int total = PRODUCERS * CALLS_PER_PRODUCER;
            assertEquals(total, handles.size());
            await().atMost(Duration.ofSeconds(30)).until(() -> outcomes.size() == total);
            outcomes.forEach((id, n) -> assertEquals(1, n.get(), "outcomes of " + id));
            handles.forEach((id, h) -> assertEquals(outcomeOfEvent.get(id), h.getNow(null).outcome(), id));
            RetryStats s = lifecycle.stats();
            assertEquals(total, s.failedCalls());
            assertEquals(total, s.ended());
            assertEquals(0, s.pending());
            assertTrue(s.delivered() > 0 && s.handedOver() > 0, s.toString());
        } finally {
            producers.shutdownNow();
            io.shutdownNow();
            dispatch.shutdownNow();
            timer.stop();
        }
    }

    private static void produce(int producer, List<RetryReference<String>> refs,
                                Map<String, CompletableFuture<CallOutcome>> handles, CountDownLatch halfway) {
        for (int i = 0; i < CALLS_PER_PRODUCER; i++) {
            if (i == CALLS_PER_PRODUCER / 2) {
                halfway.countDown();
            }
            String id = producer + "-" + i;
            Admission a = refs.get(i % 2).admit("m", id, id, id.getBytes(StandardCharsets.UTF_8), "p:1",
                    new ConnectException("refused"), true);
            handles.put(id, a.outcome().toCompletableFuture());
        }
    }

    private static CompletableFuture<AttemptResult> randomReply(ScheduledExecutorService io) {
        CompletableFuture<AttemptResult> reply = new CompletableFuture<>();
        io.schedule(() -> {
            int r = ThreadLocalRandom.current().nextInt(10);
            reply.complete(r < 5 ? AttemptResult.delivered("p:2")
                    : r < 9 ? AttemptResult.failed("p:2", new ConnectException("refused"), true)
                    : AttemptResult.failed("p:2", new IllegalStateException("business"), false));
        }, ThreadLocalRandom.current().nextInt(3), TimeUnit.MILLISECONDS);
        return reply;
    }

    /**
     * 10,000 retries due at once behind a budget of 2,000 a second wait for tokens while the wheel keeps
     * ticking (one timeout for all of them, not 10,000); every one is delivered, no faster than the budget allows,
     * and while they wait the wheel's tick lag stays under 50 ms. (The tick in which all 10,000 fall due at once
     * costs what it costs the wheel to hand 10,000 timeouts over; it is not the budget's, and not measured here.) (Their order is {@link BudgetGateTest}'s: the wheel itself does not
     * order timeouts within one tick.)
     */
    @Test
    void tenThousandWaitingForTheBudget_wheelLagStaysLow_allDeliveredInOrder() throws Exception {
        WheelTimer timer = WheelTimer.builder().tickDuration(1, TimeUnit.MILLISECONDS).build();
        ExecutorService dispatch = Executors.newSingleThreadExecutor();
        try {
            RetryLifecycle lifecycle = RetryLifecycle.builder("lag").timer(timer).executor(dispatch).build();
            RetryPolicy policy = RetryPolicy.builder().retries(1).firstDelay(200, TimeUnit.MILLISECONDS).jitter(0)
                    .build();
            RetryReference<String> ref = lifecycle.<String>reference("k", (call, attempt) ->
                    CompletableFuture.completedFuture(AttemptResult.delivered("p"))).policies(m -> policy).limits(20_000, OverflowPolicy.REJECT)
                    .budget(RetryBudget.tokenBucket(0, 2_000, 10, TimeUnit.SECONDS, System::nanoTime)).build();
            long start = System.nanoTime();
            for (int i = 0; i < 10_000; i++) {
                ref.admit("m", String.format("c%05d", i), "x", null, null, new ConnectException("x"), false);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> ref.state().waitingForBudget() > 2_000);
            long ticks = timer.stats().ticks();
            await().atMost(Duration.ofSeconds(30)).until(() -> timer.stats().ticks() > ticks + 1);
            long onTheWheel = timer.stats().pendingTimeouts();
            assertTrue(onTheWheel <= 2, "waiting retries are off the wheel: " + onTheWheel + " timeouts on it");
            List<Long> lagSamplesNanos = new ArrayList<>();
            while (lifecycle.stats().delivered() < 10_000 && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(60)) {
                lagSamplesNanos.add(timer.stats().lastTickLagNanos());
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // a sampling period, not a wait for an event
            }
            assertEquals(10_000, lifecycle.stats().delivered());
            long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertTrue(elapsedMillis >= 200 + (10_000 - 2_000) / 2, "released at most 2,000/s after a burst of "
                    + "at most 2,000 saved tokens: " + elapsedMillis + " ms");
            lagSamplesNanos.sort(null);
            long p90Millis = TimeUnit.NANOSECONDS.toMillis(lagSamplesNanos.get(lagSamplesNanos.size() * 9 / 10));
            long maxMillis = TimeUnit.NANOSECONDS.toMillis(lagSamplesNanos.get(lagSamplesNanos.size() - 1));
            System.out.printf("10,000 behind a 2,000/s budget: delivered in %d ms; tick lag while waiting p90 %d ms, "
                    + "max %d ms (%d samples); over the whole run max %d ms%n", elapsedMillis, p90Millis, maxMillis,
                    lagSamplesNanos.size(), TimeUnit.NANOSECONDS.toMillis(timer.stats().maxTickLagNanos()));
            // the p90, not the max: on a shared 2-core box any thread can lose the CPU for 50 ms now and then
            assertTrue(p90Millis < 50, "tick lag while waiting, p90: " + p90Millis + " ms");
        } finally {
            dispatch.shutdownNow();
            timer.stop();
        }
    }
}
