package io.rpctimer.demo.consumer;

import io.rpctimer.retry.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * What a demo consumer run does: how many calls, how fast, sync or async, and the {@code wheelfailback} settings of
 * its reference. Built from the command line by {@link ConsumerFlags}; every value has been checked.
 *
 * <p><b>Threading:</b> immutable, thread-safe.
 *
 * @param calls          calls to send, 1..1,000,000 (the standalone consumer: 0 sends none and only delivers the
 *                       retries resumed from its journal)
 * @param ratePerSecond  calls sent per second
 * @param mode           sync, async or both alternately
 * @param timeout        the reference's call timeout (Dubbo's {@code timeout}), also each retry's
 * @param retries        Dubbo's {@code retries}: retries after the first try; 0 = none
 * @param delay          {@code failback.delay}: before the first retry
 * @param multiplier     {@code failback.multiplier}: factor between consecutive delays, at least 1
 * @param maxDelay       {@code failback.maxdelay}: cap of any delay
 * @param jitter         {@code failback.jitter}: each delay is spread by plus or minus this fraction, 0..1
 * @param failbackTasks  Dubbo's {@code failbacktasks}: cap of retries pending at once
 * @param overflow       {@code failback.overflow}: {@code reject} (the caller gets an exception) or {@code log}
 * @param retryOn        {@code failback.retryon}: {@code rpc}, {@code all} or exception class names
 * @param events         which retry events get a line
 * @param drain          the longest wait for retries after the last call returned, or null for
 *                       {@link #drainBound()}'s estimate
 * @param budgetRatio    {@code failback.budget.ratio}: retries at most this share of the first-try successes
 * @param budgetMinRate  {@code failback.budget.minrate}: retries per second allowed whatever the successes
 * @param metrics        whether the run ends by printing the consumer's failback meters
 */
public record RunSettings(int calls, double ratePerSecond, LoadDriver.Mode mode, Duration timeout, int retries,
                          Duration delay, double multiplier, Duration maxDelay, double jitter, int failbackTasks,
                          String overflow, String retryOn, EventLines.Level events, Duration drain,
                          double budgetRatio, double budgetMinRate, boolean metrics) {

    /** The defaults of the standalone consumer and of the demo's scenarios (unless a scenario says otherwise). */
    public static final RunSettings DEFAULTS = new RunSettings(200, 10, LoadDriver.Mode.MIXED, Duration.ofMillis(500),
            4, Duration.ofSeconds(1), 2.0, Duration.ofSeconds(8), 0.2, 100, "reject", "rpc",
            EventLines.Level.RETRIES, null, 0.2, 10, false);

    /** @return a copy with another {@code failbackTasks} */
    public RunSettings withFailbackTasks(int n) {
        return new RunSettings(calls, ratePerSecond, mode, timeout, retries, delay, multiplier, maxDelay, jitter, n,
                overflow, retryOn, events, drain, budgetRatio, budgetMinRate, metrics);
    }

    /**
     * @param speed how many times faster, at least 1
     * @return a copy whose call rate is {@code speed} times higher and whose retry delays are {@code speed} times
     *         shorter (at least 1 ms); the timeout and the retry budget are unchanged: the budget is the rate a
     *         provider may receive retries at, whatever the pace of the demo
     */
    public RunSettings faster(double speed) {
        return new RunSettings(calls, ratePerSecond * speed, mode, timeout, retries, divide(delay, speed), multiplier,
                divide(maxDelay, speed), jitter, failbackTasks, overflow, retryOn, events,
                drain == null ? null : divide(drain, speed), budgetRatio, budgetMinRate, metrics);
    }

    private static Duration divide(Duration d, double by) {
        return Duration.ofMillis(Math.max(1, Math.round(d.toMillis() / by)));
    }

    /** @return how long sending every call takes at {@link #ratePerSecond} */
    public Duration sendingTime() {
        return Duration.ofMillis(Math.round(calls * 1000.0 / ratePerSecond));
    }

    /** Sets the timeout and the {@code wheelfailback} URL keys on a consumer's options. */
    public DemoConsumer.Options applyTo(DemoConsumer.Options o) {
        return o.timeout(timeout)
                .parameter("retries", String.valueOf(retries))
                .parameter("failbacktasks", String.valueOf(failbackTasks))
                .parameter("failback.delay", String.valueOf(delay.toMillis()))
                .parameter("failback.multiplier", Human.number(multiplier))
                .parameter("failback.maxdelay", String.valueOf(maxDelay.toMillis()))
                .parameter("failback.jitter", Human.number(jitter))
                .parameter("failback.retryon", retryOn)
                .parameter("failback.overflow", overflow)
                .parameter("failback.budget.ratio", String.valueOf(budgetRatio))
                .parameter("failback.budget.minrate", String.valueOf(budgetMinRate));
    }

    /** @return the retry policy these settings give the reference */
    public RetryPolicy policy() {
        return RetryPolicy.builder().retries(retries).firstDelay(delay.toMillis(), TimeUnit.MILLISECONDS)
                .multiplier(multiplier).maxDelay(maxDelay.toMillis(), TimeUnit.MILLISECONDS).jitter(jitter)
                .maxPending(failbackTasks).build();
    }

    /** @return the nominal delay before each retry (without jitter), in milliseconds; empty if {@code retries} is 0 */
    public List<Long> retryDelaysMillis() {
        RetryPolicy p = policy();
        List<Long> delays = new ArrayList<>();
        for (int k = 1; k <= retries; k++) {
            delays.add(TimeUnit.NANOSECONDS.toMillis(p.backoffNanos(k, 0)));
        }
        return delays;
    }

    /**
     * @return {@link #drain} if set, else the longest a failed call can take to reach its outcome: every retry delay
     *         at its jittered maximum plus a timeout per retry, plus 2 s
     */
    public Duration drainBound() {
        if (drain != null) {
            return drain;
        }
        RetryPolicy p = policy();
        long nanos = 0;
        for (int k = 1; k <= retries; k++) {
            nanos += p.backoffNanos(k, 1.0) + timeout.toNanos();
        }
        return Duration.ofNanos(nanos).plusSeconds(2);
    }

    /**
     * @param waiting calls still waiting for a retry
     * @return {@link #drain} if set, else {@link #drainBound()} plus the time the retry budget's minimum rate takes to
     *         release one retry of each waiting call (after the last call, no first-try success adds tokens)
     */
    public Duration drainBound(long waiting) {
        if (drain != null || budgetMinRate == 0) {
            return drainBound();
        }
        return drainBound().plusMillis(Math.round(waiting * 1000 / budgetMinRate));
    }

    /** @return the retry settings in one line, e.g. {@code timeout 500 ms, retries 4 after 1 s, 2 s, 4 s, 8 s ...} */
    public String describeRetries() {
        List<String> delays = retryDelaysMillis().stream().map(Human::duration).toList();
        return String.format(Locale.ROOT, "timeout %s, retries %d%s%s, failbacktasks %d (overflow: %s), retry on %s, "
                        + "%s", Human.duration(timeout), retries,
                delays.isEmpty() ? "" : " after " + String.join(", ", delays),
                jitter == 0 || delays.isEmpty() ? "" : " (each " + Human.percent(jitter) + " either way)",
                failbackTasks, overflow, retryOn, describeBudget());
    }

    /** @return the retry budget in a few words, e.g. {@code budget 20% of first-try successes + 10/s} */
    public String describeBudget() {
        return "budget " + Human.percent(budgetRatio) + " of first-try successes + " + Human.rate(budgetMinRate);
    }

    /** @return the load in one line, e.g. {@code 200 calls at 10/s (20 s), sync and async alternately} */
    public String describeLoad() {
        return calls + " calls at " + Human.rate(ratePerSecond) + " (" + Human.duration(sendingTime()) + "), "
                + mode.description();
    }
}
