package io.rpctimer.retry;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * When and how often a failed call is retried in the background: a budget of retries, an exponential backoff with a
 * cap and jitter, which failures are retried, and the cap of pending retries. It answers one question: "after this
 * failure, the delay until the next retry — or stop".
 *
 * <p>The delay before retry {@code k} (1-based) is
 * {@code min(maxDelay, firstDelay × multiplier^(k−1) × (1 + jitter × u))}, {@code u} uniform in {@code [−1, 1)},
 * and at least 1 ms. With the defaults — 3 retries, 5 s, ×2, 60 s cap, jitter 0.2 — retries come after about
 * 5 s, 10 s and 20 s, each ±20%, so callers that failed together do not retry together.
 *
 * <p><b>Threading:</b> immutable, thread-safe. Durations are in nanoseconds unless a name says otherwise.
 */
public final class RetryPolicy {

    /** Dubbo's {@code retries} default. */
    public static final int DEFAULT_RETRIES = 3;
    /** Dubbo's {@code failbacktasks} default. */
    public static final int DEFAULT_MAX_PENDING = 100;
    /** Dubbo's failback period, 5 s. */
    public static final long DEFAULT_FIRST_DELAY_MILLIS = 5_000;
    public static final double DEFAULT_MULTIPLIER = 2.0;
    public static final long DEFAULT_MAX_DELAY_MILLIS = 60_000;
    public static final double DEFAULT_JITTER = 0.2;

    /** Returned by {@link #nextDelayNanos} when there is no next retry. */
    public static final long STOP = -1;

    private static final long MIN_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final RetryPolicy DEFAULTS = builder().build();

    private final int retries;
    private final long firstDelayNanos;
    private final double multiplier;
    private final long maxDelayNanos;
    private final double jitter;
    private final RetryOn retryOn;
    private final int maxPending;
    private final OverflowPolicy overflow;
    private final StoreDownPolicy storeDown;

    private RetryPolicy(Builder b) {
        this.retries = b.retries;
        this.firstDelayNanos = b.firstDelayNanos;
        this.multiplier = b.multiplier;
        this.maxDelayNanos = b.maxDelayNanos;
        this.jitter = b.jitter;
        this.retryOn = b.retryOn;
        this.maxPending = b.maxPending;
        this.overflow = b.overflow;
        this.storeDown = b.storeDown;
    }

    /** @return the policy with every default */
    public static RetryPolicy defaults() {
        return DEFAULTS;
    }

    /** @return a builder holding the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The delay before retry {@code retry}, or {@link #STOP}.
     *
     * @param retry      the retry about to be scheduled, 1-based: 1 after the first (original) attempt failed
     * @param failure    what the previous attempt failed with
     * @param rpcFailure whether the caller's framework classified the failure as an RPC failure
     * @return the delay in nanoseconds, or {@link #STOP} if the budget is spent or the failure is not retried
     */
    public long nextDelayNanos(int retry, Throwable failure, boolean rpcFailure) {
        if (retry < 1 || retry > retries || !retryOn.retries(failure, rpcFailure)) {
            return STOP;
        }
        return backoffNanos(retry, ThreadLocalRandom.current().nextDouble(-1.0, 1.0));
    }

    /**
     * The backoff formula without the budget and failure checks.
     *
     * @param retry 1-based retry number
     * @param u     the jitter draw, in {@code [-1, 1]}
     * @return the delay in nanoseconds, in {@code [1 ms, maxDelay]}
     */
    public long backoffNanos(int retry, double u) {
        double base = firstDelayNanos * Math.pow(multiplier, Math.max(0, retry - 1));
        double delay = Math.min(maxDelayNanos, base * (1.0 + jitter * u)); // saturates for huge exponents
        return Math.max(MIN_DELAY_NANOS, (long) delay);
    }

    /** @return whether a failure is of a kind this policy retries (ignoring the budget) */
    public boolean retries(Throwable failure, boolean rpcFailure) {
        return retryOn.retries(failure, rpcFailure);
    }

    /** @return the number of retries after the original attempt; 0 means none */
    public int retries() {
        return retries;
    }

    /** @return the delay before the first retry, in milliseconds */
    public long firstDelayMillis() {
        return TimeUnit.NANOSECONDS.toMillis(firstDelayNanos);
    }

    public double multiplier() {
        return multiplier;
    }

    /** @return the cap of any delay, in milliseconds */
    public long maxDelayMillis() {
        return TimeUnit.NANOSECONDS.toMillis(maxDelayNanos);
    }

    /** @return the jitter fraction, in {@code [0, 1]} */
    public double jitter() {
        return jitter;
    }

    public RetryOn retryOn() {
        return retryOn;
    }

    /** @return the cap of retries pending at once */
    public int maxPending() {
        return maxPending;
    }

    public OverflowPolicy overflow() {
        return overflow;
    }

    /** @return what happens to a call whose journal append the store refused */
    public StoreDownPolicy storeDown() {
        return storeDown;
    }

    @Override
    public String toString() {
        return "RetryPolicy(retries: " + retries + ", delay: " + firstDelayMillis() + " ms, multiplier: " + multiplier
                + ", maxDelay: " + maxDelayMillis() + " ms, jitter: " + jitter + ", retryOn: " + retryOn
                + ", maxPending: " + maxPending + ", overflow: " + overflow + ", storeDown: " + storeDown + ')';
    }

    /**
     * Builds a {@link RetryPolicy}. Each setter checks its value; {@link #build()} checks the rules between them.
     *
     * <p><b>Threading:</b> not thread-safe; use from one thread.
     */
    public static final class Builder {
        private int retries = DEFAULT_RETRIES;
        private long firstDelayNanos = TimeUnit.MILLISECONDS.toNanos(DEFAULT_FIRST_DELAY_MILLIS);
        private double multiplier = DEFAULT_MULTIPLIER;
        private long maxDelayNanos = TimeUnit.MILLISECONDS.toNanos(DEFAULT_MAX_DELAY_MILLIS);
        private double jitter = DEFAULT_JITTER;
        private RetryOn retryOn = RetryOn.rpc();
        private int maxPending = DEFAULT_MAX_PENDING;
        private OverflowPolicy overflow = OverflowPolicy.REJECT;
        private StoreDownPolicy storeDown = StoreDownPolicy.REJECT;

        private Builder() {
        }

        /**
         * @param retries retries after the original attempt; 0 disables retrying
         * @throws IllegalArgumentException if negative
         */
        public Builder retries(int retries) {
            if (retries < 0) {
                throw new IllegalArgumentException("retries: " + retries + " (expected: >= 0)");
            }
            this.retries = retries;
            return this;
        }

        /**
         * @param delay the delay before the first retry, in {@code unit}
         * @throws IllegalArgumentException if {@code delay <= 0}
         */
        public Builder firstDelay(long delay, TimeUnit unit) {
            if (delay <= 0) {
                throw new IllegalArgumentException("firstDelay: " + delay + " (expected: > 0)");
            }
            this.firstDelayNanos = requireUnit(unit).toNanos(delay);
            return this;
        }

        /**
         * @param multiplier the factor between consecutive delays
         * @throws IllegalArgumentException if below 1.0 or not finite
         */
        public Builder multiplier(double multiplier) {
            if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
                throw new IllegalArgumentException("multiplier: " + multiplier + " (expected: >= 1.0 and finite)");
            }
            this.multiplier = multiplier;
            return this;
        }

        /**
         * @param delay the cap of any delay, in {@code unit}; at least the first delay (checked by {@link #build()})
         * @throws IllegalArgumentException if {@code delay <= 0}
         */
        public Builder maxDelay(long delay, TimeUnit unit) {
            if (delay <= 0) {
                throw new IllegalArgumentException("maxDelay: " + delay + " (expected: > 0)");
            }
            this.maxDelayNanos = requireUnit(unit).toNanos(delay);
            return this;
        }

        /**
         * @param jitter the fraction by which each delay is spread up or down, in {@code [0, 1]}
         * @throws IllegalArgumentException if outside {@code [0, 1]}
         */
        public Builder jitter(double jitter) {
            if (!(jitter >= 0.0 && jitter <= 1.0)) {
                throw new IllegalArgumentException("jitter: " + jitter + " (expected: in [0, 1])");
            }
            this.jitter = jitter;
            return this;
        }

        /** @throws NullPointerException if null */
        public Builder retryOn(RetryOn retryOn) {
            if (retryOn == null) {
                throw new NullPointerException("retryOn: null (expected: a RetryOn)");
            }
            this.retryOn = retryOn;
            return this;
        }

        /**
         * @param maxPending the cap of retries pending at once
         * @throws IllegalArgumentException if {@code maxPending <= 0}
         */
        public Builder maxPending(int maxPending) {
            if (maxPending <= 0) {
                throw new IllegalArgumentException("maxPending: " + maxPending + " (expected: > 0)");
            }
            this.maxPending = maxPending;
            return this;
        }

        /** @throws NullPointerException if null */
        public Builder overflow(OverflowPolicy overflow) {
            if (overflow == null) {
                throw new NullPointerException("overflow: null (expected: REJECT or LOG)");
            }
            this.overflow = overflow;
            return this;
        }

        /** @throws NullPointerException if null */
        public Builder storeDown(StoreDownPolicy storeDown) {
            if (storeDown == null) {
                throw new NullPointerException("storeDown: null (expected: REJECT or MEMORY)");
            }
            this.storeDown = storeDown;
            return this;
        }

        /**
         * @return the policy
         * @throws IllegalArgumentException if {@code maxDelay < firstDelay}
         */
        public RetryPolicy build() {
            if (maxDelayNanos < firstDelayNanos) {
                throw new IllegalArgumentException("maxDelay: " + TimeUnit.NANOSECONDS.toMillis(maxDelayNanos)
                        + " ms (expected: >= firstDelay: " + TimeUnit.NANOSECONDS.toMillis(firstDelayNanos) + " ms)");
            }
            return new RetryPolicy(this);
        }

        private static TimeUnit requireUnit(TimeUnit unit) {
            if (unit == null) {
                throw new NullPointerException("unit: null (expected: a TimeUnit)");
            }
            return unit;
        }
    }
}
