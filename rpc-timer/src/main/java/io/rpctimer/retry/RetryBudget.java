package io.rpctimer.retry;

import io.rpctimer.wheel.Ticker;
import java.util.concurrent.TimeUnit;

/**
 * How many retries of one reference may be sent now: a retry takes one token, and a due retry that finds none
 * <em>waits</em> (in order, never dropped) until one comes. Protects a provider that just came back from receiving
 * every pending retry at once.
 *
 * <p>{@link #tokenBucket} is the usual choice (retries at most a share of recent successful calls, plus a minimum
 * rate, as Finagle's and Envoy's retry budgets); {@link #unlimited()} never makes a retry wait.
 *
 * <p><b>Threading:</b> implementations are thread-safe. {@link #onSuccess()} is called on the success path of every
 * call and must stay cheap and non-blocking.
 */
public interface RetryBudget {

    /** Returned by {@link #nanosUntilToken()} when no token will come from the passing of time alone. */
    long NEVER = Long.MAX_VALUE;

    /** @return true if a token was taken and one retry may be sent now */
    boolean tryAcquire();

    /**
     * @return nanoseconds until the next token is expected, 0 if one is there now, or {@link #NEVER} if only
     *     successful calls can bring one
     */
    long nanosUntilToken();

    /** A call of the reference succeeded (not a retry: a retry that succeeds deposits nothing). */
    void onSuccess();

    /** @return a one-line description of the budget's state for operators */
    String describe();

    /** @return a budget that never makes a retry wait */
    static RetryBudget unlimited() {
        return Unlimited.INSTANCE;
    }

    /**
     * A token bucket: each successful call deposits {@code ratio} tokens, time deposits {@code minPerSecond} tokens a
     * second, and the balance is capped at {@code ratio} times the successful calls of the last {@code window} plus
     * {@code max(1, minPerSecond)}, so deposits older than about a window expire. A retry takes one token.
     *
     * @param ratio        tokens per successful call, {@code >= 0} (0.2: retries at most 20% of recent successes)
     * @param minPerSecond tokens per second whatever the successes, {@code >= 0}; with {@code ratio == 0} it must be
     *                     {@code > 0}, else no retry would ever go out
     * @param window       how far back a successful call counts, {@code > 0}
     * @param unit         the unit of {@code window}
     * @param ticker       the clock
     * @throws IllegalArgumentException if a value is out of range
     */
    static RetryBudget tokenBucket(double ratio, double minPerSecond, long window, TimeUnit unit, Ticker ticker) {
        return new TokenBucketBudget(ratio, minPerSecond, unit.toNanos(window), ticker);
    }

    /** The budget that never makes a retry wait. Stateless. */
    final class Unlimited implements RetryBudget {
        static final Unlimited INSTANCE = new Unlimited();

        private Unlimited() {
        }

        @Override
        public boolean tryAcquire() {
            return true;
        }

        @Override
        public long nanosUntilToken() {
            return 0;
        }

        @Override
        public void onSuccess() {
        }

        @Override
        public String describe() {
            return "unlimited";
        }
    }
}
