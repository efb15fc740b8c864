package io.rpctimer.demo.consumer;

import io.rpctimer.demo.provider.ledger.CallOutcome;
import io.rpctimer.demo.provider.ledger.CallRecord;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * When the providers received retries, and when they completed first tries, as the providers' ledgers tell it: for
 * the busiest second of retries, set against what the retry budget allowed in that second ({@link #peak}).
 *
 * <p><b>Threading:</b> thread-safe: providers' threads {@link #record}, one thread reads {@link #peak} at the end.
 */
public final class RetryArrivals {

    private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** The receipt times ({@link System#nanoTime()}) of retries (attempt 1 and more), and of first tries completed. */
    private final ConcurrentLinkedQueue<Long> retries = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Long> firstTries = new ConcurrentLinkedQueue<>();

    /**
     * The busiest second of retries at the providers.
     *
     * @param startNanos       when that second began ({@link System#nanoTime()})
     * @param retries          retries the providers received in it
     * @param firstTrySuccesses first tries the providers completed in it: the budget's deposits
     */
    public record Peak(long startNanos, int retries, int firstTrySuccesses) {
        /**
         * @param ratio       {@code failback.budget.ratio}
         * @param minPerSecond {@code failback.budget.minrate}
         * @return the retries the budget let through in that second: the minimum rate plus the ratio's share of
         *         the first-try successes (tokens saved up before it come on top, at most the bucket's cap)
         */
        public double allowed(double ratio, double minPerSecond) {
            return minPerSecond + ratio * firstTrySuccesses;
        }
    }

    /** Counts one call a provider ended: a retry by its receipt, a completed first try as a budget deposit. */
    void record(CallRecord call, CallOutcome outcome) {
        if (call.attempt() >= 1) {
            retries.add(call.receivedNanos());
        } else if (call.attempt() == 0 && outcome == CallOutcome.COMPLETED) {
            firstTries.add(call.receivedNanos());
        }
    }

    /** @return retries the providers received so far */
    public int retries() {
        return retries.size();
    }

    /** @return the second (any second, not a clock-aligned one) in which the providers received the most retries */
    public Optional<Peak> peak() {
        long[] r = sorted(retries);
        if (r.length == 0) {
            return Optional.empty();
        }
        int best = 0;
        int bestCount = 0;
        int end = 0;
        for (int start = 0; start < r.length; start++) {
            while (end < r.length && r[end] - r[start] < WINDOW_NANOS) {
                end++;
            }
            if (end - start > bestCount) {
                bestCount = end - start;
                best = start;
            }
        }
        long from = r[best];
        long[] f = sorted(firstTries);
        int successes = (int) Arrays.stream(f).filter(t -> t >= from && t - from < WINDOW_NANOS).count();
        return Optional.of(new Peak(from, bestCount, successes));
    }

    private static long[] sorted(ConcurrentLinkedQueue<Long> times) {
        long[] a = times.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(a);
        return a;
    }
}
