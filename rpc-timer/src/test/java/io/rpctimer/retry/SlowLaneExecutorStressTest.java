package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many kinds from many threads, on the real lanes: every task either runs exactly once or is refused to its caller,
 * never both, never neither. One kind in five is slow, so kinds move between the lanes while others submit; small
 * queues make both lanes refuse; few kind records and a short window make records be forgotten while their tasks run.
 *
 * <p>Tagged {@code stress}; {@code mvn -B verify} runs it (skip it locally with {@code -DexcludedGroups=stress}).
 */
@Tag("stress")
class SlowLaneExecutorStressTest {

    private static final int SUBMITTERS = 8;
    private static final int TASKS_PER_SUBMITTER = 2_500;
    private static final int KINDS = 50;

    @Test
    @Timeout(120)
    void manyKindsFromManyThreads_everyTaskRunsOnceOrIsRefused() throws Exception {
        SlowLaneExecutor lanes = SlowLaneExecutor.builder().fastThreads(4).slowThreads(4).queueCapacity(3_000)
                .slowRun(1, TimeUnit.MILLISECONDS).window(50, TimeUnit.MILLISECONDS).maxKinds(16)
                .threadNamePrefix("stress").build();
        int total = SUBMITTERS * TASKS_PER_SUBMITTER;
        AtomicIntegerArray runs = new AtomicIntegerArray(total);
        AtomicIntegerArray refused = new AtomicIntegerArray(total);
        LongAdder onSlowLane = new LongAdder();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService submitters = Executors.newFixedThreadPool(SUBMITTERS);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int s = 0; s < SUBMITTERS; s++) {
                int first = s * TASKS_PER_SUBMITTER;
                done.add(submitters.submit(() -> {
                    go.await();
                    for (int id = first; id < first + TASKS_PER_SUBMITTER; id++) {
                        submit(lanes, id, runs, refused, onSlowLane);
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            submitters.shutdownNow();
        }
        lanes.shutdown();
        assertTrue(lanes.awaitTermination(60, TimeUnit.SECONDS), "queued tasks ran after shutdown");

        int ran = 0;
        for (int id = 0; id < total; id++) {
            assertEquals(1, runs.get(id) + refused.get(id), "task " + id + ": ran " + runs.get(id)
                    + " times, refused " + refused.get(id) + " times");
            ran += runs.get(id);
        }
        System.out.printf("SlowLaneExecutorStressTest: %d tasks, %d ran (%d on the slow lane), %d refused%n",
                total, ran, onSlowLane.sum(), total - ran);
        assertTrue(onSlowLane.sum() > 0, "the slow kinds reached the slow lane");
        assertTrue(lanes.trackedKinds() <= 16, "records bounded: " + lanes.trackedKinds());
    }

    private static void submit(SlowLaneExecutor lanes, int id, AtomicIntegerArray runs, AtomicIntegerArray refused,
                               LongAdder onSlowLane) {
        int kind = id % KINDS;
        boolean slowKind = kind % 5 == 0;
        try {
            lanes.execute("kind-" + kind, () -> {
                runs.incrementAndGet(id);
                if (Thread.currentThread().getName().startsWith("stress-slow-")) {
                    onSlowLane.increment();
                }
                if (slowKind) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2)); // the work of a slow kind
                }
            });
        } catch (RejectedExecutionException e) {
            refused.incrementAndGet(id);
        }
    }
}
