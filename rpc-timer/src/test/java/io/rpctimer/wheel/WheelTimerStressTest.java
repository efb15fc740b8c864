package io.rpctimer.wheel;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Concurrency stress of the wheel: many producers scheduling and cancelling at once, and stop() racing newTimeout.
 * Tagged {@code stress}; {@code mvn -B verify} runs it (skip it locally with {@code -DexcludedGroups=stress}).
 */
@Tag("stress")
@org.junit.jupiter.api.Timeout(120)
class WheelTimerStressTest {

    private static final int THREADS = 4;
    private static final int PAIRS_PER_THREAD = 250_000;

    /**
     * 4 threads × 250,000 schedule/cancel pairs with random delays: every timeout either runs exactly once or is
     * cancelled — never both, never lost.
     */
    @Test
    void everyTimeoutRunsExactlyOnceOrIsCancelled() throws Exception {
        int total = THREADS * PAIRS_PER_THREAD;
        WheelTimer timer = WheelTimer.builder().tickDuration(1, TimeUnit.MILLISECONDS).build();
        AtomicIntegerArray runs = new AtomicIntegerArray(total);
        Timeout[] timeouts = new Timeout[total];
        boolean[] cancelled = new boolean[total];
        ExecutorService producers = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int p = 0; p < THREADS; p++) {
                int first = p * PAIRS_PER_THREAD;
                done.add(producers.submit(() -> produce(timer, first, runs, timeouts, cancelled)));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            int expectedRuns = 0;
            for (boolean c : cancelled) {
                expectedRuns += c ? 0 : 1;
            }
            int expected = expectedRuns;
            await().atMost(Duration.ofSeconds(60)).until(() -> sum(runs) >= expected
                    && timer.stats().pendingTimeouts() == 0);

            TimerStats stats = timer.stats();
            assertEquals(total, stats.scheduledTimeouts());
            assertEquals(expectedRuns, stats.expiredTimeouts());
            assertEquals(total - expectedRuns, stats.cancelledTimeouts());
            for (int id = 0; id < total; id++) {
                int expectedRunsOfId = cancelled[id] ? 0 : 1;
                if (runs.get(id) != expectedRunsOfId || timeouts[id].isCancelled() != cancelled[id]
                        || timeouts[id].isExpired() == cancelled[id]) {
                    fail("timeout " + id + ": runs " + runs.get(id) + ", cancel() returned " + cancelled[id]
                            + ", isCancelled " + timeouts[id].isCancelled() + ", isExpired " + timeouts[id].isExpired());
                }
            }
            assertTrue(timer.stop().isEmpty());
        } finally {
            producers.shutdownNow();
            timer.stop();
        }
    }

    /**
     * Busy naps never make a timeout late: while one thread keeps far timeouts arriving (each cancelled at once, as
     * per-call timeouts are), so that the worker parks up to {@link TimingWheel#MAX_BUSY_NAP_NANOS} at a time, the
     * test schedules short ones at random moments. Each is due inside a nap and must wake the worker: one it slept
     * through would run up to a busy nap late, half of one on average.
     */
    @Test
    void timeoutsDueDuringBusyNapsRunOnTime() throws Exception {
        WheelTimer timer = WheelTimer.builder().tickDuration(10, TimeUnit.MILLISECONDS).build();
        int count = 150;
        long[] lateNanos = new long[count];
        CountDownLatch allRan = new CountDownLatch(count);
        AtomicBoolean streaming = new AtomicBoolean(true);
        ExecutorService stream = Executors.newSingleThreadExecutor();
        try {
            Future<?> far = stream.submit(() -> {
                while (streaming.get()) {
                    timer.newTimeout(t -> { }, 1, TimeUnit.HOURS).cancel();
                    LockSupport.parkNanos(20_000); // pacing the load, not waiting for anything
                }
            });
            ThreadLocalRandom random = ThreadLocalRandom.current();
            for (int i = 0; i < count; i++) {
                int id = i;
                long delayMillis = random.nextLong(20, 80);
                long due = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis);
                timer.newTimeout(t -> {
                    lateNanos[id] = System.nanoTime() - due;
                    allRan.countDown();
                }, delayMillis, TimeUnit.MILLISECONDS);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(random.nextLong(10, 80))); // a random moment
            }
            assertTrue(allRan.await(60, TimeUnit.SECONDS));
            streaming.set(false);
            far.get(30, TimeUnit.SECONDS);

            Arrays.sort(lateNanos);
            long tick = timer.tickDurationNanos();
            long p95 = lateNanos[count * 95 / 100];
            assertTrue(p95 <= 3 * tick, "95% ran within 3 ticks of their deadline; p95 late " + p95 + " ns, max "
                    + lateNanos[count - 1] + " ns");
            assertTrue(timer.producerWakes() > 0, "short timeouts woke a napping worker");
        } finally {
            streaming.set(false);
            stream.shutdownNow();
            timer.stop();
        }
    }

    private static void produce(Timer timer, int first, AtomicIntegerArray runs, Timeout[] timeouts,
                                boolean[] cancelled) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < PAIRS_PER_THREAD; i++) {
            int id = first + i;
            Timeout t = timer.newTimeout(x -> runs.incrementAndGet(id), random.nextInt(20), TimeUnit.MILLISECONDS);
            timeouts[id] = t;
            // cancel at once, a little later (possibly racing the expiry), or never
            switch (random.nextInt(3)) {
                case 0 -> cancelled[id] = t.cancel();
                case 1 -> {
                    int earlier = id - random.nextInt(Math.min(i, 1_000) + 1);
                    cancelled[earlier] |= timeouts[earlier].cancel();
                }
                default -> { }
            }
        }
    }

    private static int sum(AtomicIntegerArray a) {
        int s = 0;
        for (int i = 0; i < a.length(); i++) {
            s += a.get(i);
        }
        return s;
    }

    /**
     * stop() racing newTimeout from three threads: every accepted timeout either ran or is returned by stop(),
     * never both, never neither; a refused one got IllegalStateException.
     */
    @Test
    void stopRacingNewTimeoutLosesNothing() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            for (int round = 0; round < 200; round++) {
                raceOnce(threads);
            }
        } finally {
            threads.shutdownNow();
        }
    }

    private static void raceOnce(ExecutorService threads) throws Exception {
        ExecutorService taskExecutor = Executors.newFixedThreadPool(2);
        WheelTimer timer = WheelTimer.builder().tickDuration(1, TimeUnit.MILLISECONDS).executor(taskExecutor)
                .build();
        Set<Timeout> ran = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));
        Set<Timeout> accepted = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));
        CountDownLatch warmedUp = new CountDownLatch(3);
        List<Future<?>> producers = new ArrayList<>();
        for (int p = 0; p < 3; p++) {
            producers.add(threads.submit(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                for (int i = 0; i < 1_000_000; i++) {
                    try {
                        accepted.add(timer.newTimeout(ran::add, random.nextInt(3), TimeUnit.MILLISECONDS));
                    } catch (IllegalStateException stopped) {
                        return;
                    }
                    if (i == 200) {
                        warmedUp.countDown();
                    }
                }
                fail("producer never saw the timer stop");
            }));
        }
        assertTrue(warmedUp.await(30, TimeUnit.SECONDS));
        Set<Timeout> left = timer.stop();
        for (Future<?> f : producers) {
            f.get(30, TimeUnit.SECONDS);
        }
        taskExecutor.shutdown();
        assertTrue(taskExecutor.awaitTermination(30, TimeUnit.SECONDS));

        for (Timeout t : left) {
            assertTrue(!ran.contains(t), "returned by stop() and also ran");
        }
        assertEquals(accepted.size(), ran.size() + left.size(), "accepted timeouts lost");
    }
}
