package io.rpctimer.retry;

import io.rpctimer.wheel.Ticker;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The token bucket behind {@link RetryBudget#tokenBucket}: see there for the rule.
 *
 * <p><b>Threading:</b> thread-safe. {@link #onSuccess()} only increments a {@link LongAdder} (the success path never
 * takes the lock); the successes are folded into the balance under the lock by the next {@link #tryAcquire()} or
 * {@link #nanosUntilToken()}.
 *
 * <p>Concurrency: every field but {@link #newSuccesses} is guarded by {@code this}.
 */
final class TokenBucketBudget implements RetryBudget {

    private static final double NANOS_PER_SECOND = TimeUnit.SECONDS.toNanos(1);
    /** Below one token by less than this is a whole token: ten refills of 0.1 add up to 0.9999999999999999. */
    private static final double ONE_TOKEN = 1.0 - 1e-9;

    private final double ratio;
    private final double minPerNano;
    private final double minReserve;
    private final long windowNanos;
    private final Ticker ticker;
    private final LongAdder newSuccesses = new LongAdder();

    private double tokens;
    private long refilledAtNanos;
    private long windowStartNanos;
    private long successesThisWindow;
    private long successesLastWindow;
    private long granted;

    TokenBucketBudget(double ratio, double minPerSecond, long windowNanos, Ticker ticker) {
        if (!(ratio >= 0) || Double.isInfinite(ratio)) {
            throw new IllegalArgumentException("ratio: " + ratio + " (expected: >= 0)");
        }
        if (!(minPerSecond >= 0) || Double.isInfinite(minPerSecond)) {
            throw new IllegalArgumentException("minPerSecond: " + minPerSecond + " (expected: >= 0)");
        }
        if (ratio == 0 && minPerSecond == 0) {
            throw new IllegalArgumentException("minPerSecond: 0 (expected: > 0 when ratio is 0)");
        }
        if (windowNanos <= 0) {
            throw new IllegalArgumentException("window: " + windowNanos + " ns (expected: > 0)");
        }
        this.ratio = ratio;
        this.minPerNano = minPerSecond / NANOS_PER_SECOND;
        this.minReserve = Math.max(1.0, minPerSecond);
        this.windowNanos = windowNanos;
        this.ticker = ticker;
        long now = ticker.nanoTime();
        this.refilledAtNanos = now;
        this.windowStartNanos = now;
        this.tokens = 1.0; // the first retry after a start is never held back
    }

    @Override
    public synchronized boolean tryAcquire() {
        refill(ticker.nanoTime());
        if (tokens < ONE_TOKEN) {
            return false;
        }
        tokens = Math.max(0, tokens - 1.0);
        granted++;
        return true;
    }

    @Override
    public synchronized long nanosUntilToken() {
        refill(ticker.nanoTime());
        if (tokens >= ONE_TOKEN) {
            return 0;
        }
        if (minPerNano == 0) {
            return NEVER;
        }
        return Math.max(1, (long) Math.ceil((1.0 - tokens) / minPerNano));
    }

    @Override
    public void onSuccess() {
        newSuccesses.increment();
    }

    private void refill(long now) {
        long elapsed = Math.max(0, now - refilledAtNanos);
        refilledAtNanos = now;
        long s = recent(newSuccesses.sumThenReset(), elapsed);
        rotateWindow(now);
        successesThisWindow += s;
        double cap = ratio * (successesThisWindow + successesLastWindow) + minReserve;
        tokens = Math.min(cap, tokens + ratio * s + elapsed * minPerNano);
    }

    /**
     * The successes since the last look happened at unknown times in the {@code elapsed} since: taken as spread
     * evenly over it, only the last window's share is recent. So a long healthy spell without retries does not buy
     * a burst of them at the next outage.
     */
    private long recent(long successes, long elapsed) {
        return elapsed <= windowNanos ? successes : Math.round(successes * ((double) windowNanos / elapsed));
    }

    private void rotateWindow(long now) {
        long sinceStart = now - windowStartNanos;
        if (sinceStart < windowNanos) {
            return;
        }
        successesLastWindow = sinceStart < 2 * windowNanos ? successesThisWindow : 0;
        successesThisWindow = 0;
        windowStartNanos = now;
    }

    @Override
    public synchronized String describe() {
        refill(ticker.nanoTime());
        return String.format("token bucket: %.1f tokens, %d retries granted, %d successes in the last %d ms "
                        + "(ratio %s, min %s/s)", tokens, granted, successesThisWindow + successesLastWindow,
                TimeUnit.NANOSECONDS.toMillis(windowNanos), ratio, minPerNano * NANOS_PER_SECOND);
    }

    @Override
    public String toString() {
        return describe();
    }
}
