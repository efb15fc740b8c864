package io.rpctimer.bench.timer;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Case 4: how late timers run behind a task that blocks. Each round schedules first one task due in 1 ms (so at
 * the first tick, 0–10 ms) that sleeps 1 s, then 1,000 timers due 50–150 ms ahead (whole milliseconds, spread
 * uniformly, shuffled); each records its lateness = the time it starts running − (its schedule time + its delay).
 * Timers that run their tasks on the thread that also moves time (Netty, Dubbo, Agrona) or on a single task
 * thread (Kafka, the 1-thread JDK scheduler) wait for the blocking task: about 950 ms late. Warm-up rounds are
 * discarded; the measured rounds are pooled and reported as p50 / p99 / max in milliseconds.
 *
 * <pre>
 * java -Xms2g -Xmx2g -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.timer.LatenessHarness rpc-timer [warmupRounds rounds]
 * </pre>
 * It prints one {@code RESULT} line ({@link HarnessIo}).
 *
 * <p><b>Threading:</b> run from {@code main}; tasks write their own slot of the lateness array and count down a
 * latch that {@code main} awaits.
 */
public final class LatenessHarness {

    static final int TIMERS = 1_000;
    static final long BLOCK_MILLIS = 1_000;

    private LatenessHarness() {
    }

    public static void main(String[] args) {
        TimerImpl impl = TimerImpl.of(args[0]);
        int warmupRounds = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        HarnessIo.printAndExit(measure(impl, TIMERS, BLOCK_MILLIS, warmupRounds, rounds));
    }

    static Map<String, Object> measure(TimerImpl impl, int timers, long blockMillis, int warmupRounds, int rounds) {
        BenchTimer timer = impl.create(TimerImpl.NOOP);
        try {
            timer.start();
            long[] pooled = new long[timers * rounds];
            for (int r = 0; r < warmupRounds + rounds; r++) {
                long[] lateness = runRound(timer, timers, blockMillis);
                if (r >= warmupRounds) {
                    System.arraycopy(lateness, 0, pooled, (r - warmupRounds) * timers, timers);
                }
            }
            Arrays.sort(pooled);
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("impl", impl.label);
            result.put("samples", pooled.length);
            result.put("p50Ms", percentile(pooled, 0.50) / 1e6);
            result.put("p99Ms", percentile(pooled, 0.99) / 1e6);
            result.put("maxMs", pooled[pooled.length - 1] / 1e6);
            result.put("minMs", pooled[0] / 1e6);
            return result;
        } finally {
            timer.close();
        }
    }

    private static long[] runRound(BenchTimer timer, int timers, long blockMillis) {
        long[] lateness = new long[timers];
        long[] delaysMillis = BenchConfig.uniformDelaysMillis(timers, 50, 150, 7);
        CountDownLatch done = new CountDownLatch(timers + 1);
        timer.load(() -> {
            timer.schedule(() -> {
                BenchConfig.sleepMillis(blockMillis);
                done.countDown();
            }, TimeUnit.MILLISECONDS.toNanos(1));
            for (int i = 0; i < timers; i++) {
                int slot = i;
                long delayNanos = TimeUnit.MILLISECONDS.toNanos(delaysMillis[i]);
                long due = System.nanoTime() + delayNanos;
                timer.schedule(() -> {
                    lateness[slot] = System.nanoTime() - due;
                    done.countDown();
                }, delayNanos);
            }
        });
        try {
            if (!done.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("timers never ran: " + done.getCount());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        return lateness;
    }

    /** Nearest-rank percentile of sorted values. */
    static long percentile(long[] sorted, double p) {
        int rank = (int) Math.ceil(p * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }
}
