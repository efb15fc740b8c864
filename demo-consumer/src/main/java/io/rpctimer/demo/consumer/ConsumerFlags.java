package io.rpctimer.demo.consumer;

import io.rpctimer.demo.provider.support.Durations;
import io.rpctimer.retry.RetryOn;
import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * The command-line flags shared by {@link ConsumerApp} and {@link DemoLauncher} (a picocli mixin): the load and the
 * {@code wheelfailback} settings. Values are kept as typed and checked by {@link #resolve}, so that an error names
 * the flag and the value: {@code --delay: "soon" (expected: a number and a unit ms, s, m or h, ...)}.
 *
 * <p><b>Threading:</b> not thread-safe; picocli fills it, then one thread resolves it.
 */
public final class ConsumerFlags {

    @Option(names = "--calls", paramLabel = "N", description = "Calls to send (default: 200).")
    String calls;

    @Option(names = "--rate", paramLabel = "PER_SECOND", description = "Calls sent per second (default: 10).")
    String rate;

    @Option(names = "--mode", paramLabel = "sync|async|mixed",
            description = "sync: send() waits; async: sendAsync() returns a CompletableFuture; mixed: alternately "
                    + "(default: mixed).")
    String mode;

    @Option(names = "--timeout", paramLabel = "DURATION",
            description = "Call timeout, also of each retry, e.g. 500ms, 2s (default: 500ms).")
    String timeout;

    @Option(names = "--retries", paramLabel = "N",
            description = "Retries after the first try; 0 = none (Dubbo's 'retries'; default: 4).")
    String retries;

    @Option(names = "--delay", paramLabel = "DURATION",
            description = "Delay before the first retry (failback.delay; default: 1s).")
    String delay;

    @Option(names = "--multiplier", paramLabel = "X",
            description = "Each retry waits X times longer than the one before, X >= 1 (failback.multiplier; "
                    + "default: 2).")
    String multiplier;

    @Option(names = "--max-delay", paramLabel = "DURATION",
            description = "Cap of any retry delay, >= --delay (failback.maxdelay; default: 8s).")
    String maxDelay;

    @Option(names = "--jitter", paramLabel = "FRACTION",
            description = "Spread of each delay, 0..1: 0.2 = up to 20%% either way (failback.jitter; default: 0.2).")
    String jitter;

    @Option(names = "--failbacktasks", paramLabel = "N",
            description = "Cap of retries pending at once (Dubbo's 'failbacktasks'; default: 100, "
                    + "10 in the overflow scenario).")
    String failbackTasks;

    @Option(names = "--overflow", paramLabel = "reject|log",
            description = "Over the cap: reject = the caller gets an RpcException; log = the caller gets null "
                    + "(failback.overflow; default: reject).")
    String overflow;

    @Option(names = "--store", paramLabel = "memory|embedded",
            description = "Where failed calls wait: memory, or embedded = a journal on disk under "
                    + "~/.rpc-timer/journal/<application> that a restarted consumer resumes (failback.store; "
                    + "default: memory).")
    String store;

    @Option(names = "--retry-on", paramLabel = "rpc|all|CLASS[,CLASS]",
            description = "Failures retried: rpc = RPC failures only; all; or exception class names, e.g. "
                    + "io.rpctimer.demo.provider.api.NotificationRejectedException (failback.retryon; default: rpc).")
    String retryOn;

    @Option(names = "--budget-ratio", paramLabel = "X",
            description = "Retry budget: retries may run at most at X times the first-try successes of the last "
                    + "10 s, X >= 0 (failback.budget.ratio; default: 0.2).")
    String budgetRatio;

    @Option(names = "--budget-minrate", paramLabel = "PER_SECOND",
            description = "Retry budget: retries per second allowed whatever the successes, >= 0; > 0 when "
                    + "--budget-ratio is 0 (failback.budget.minrate; default: 10). Due retries over the budget wait, "
                    + "in order; none is dropped.")
    String budgetMinRate;

    @Option(names = "--metrics",
            description = "At the end, print the failback meters (dubbo.consumer.failback.*) of the consumer, read "
                    + "from Dubbo's Micrometer registry.")
    boolean metrics;

    @Option(names = "--events", paramLabel = "all|retries|outcomes|none",
            description = "Lines printed: retries = one per failed attempt (with the next delay) and one per "
                    + "outcome; all = one per event, 'scheduled' and 'sent' too; outcomes = DELIVERED, ABANDONED, "
                    + "REJECTED, HANDED_OVER only; none (default: retries).")
    String events;

    @Option(names = "--drain", paramLabel = "DURATION",
            description = "Longest wait for retries after the last call returned; then the consumer stops and hands "
                    + "what is pending over: to the RetryStore, or kept in the journal with --store embedded (default: the longest a retry chain can take, plus 2s).")
    String drain;

    /**
     * @param defaults the values of the flags not given
     * @return the settings
     * @throws IllegalArgumentException naming the flag and the value, e.g. {@code --calls: "0" (expected: 1..1000000)}
     */
    public RunSettings resolve(RunSettings defaults) {
        return resolve(defaults, 1);
    }

    /**
     * @param defaults the values of the flags not given
     * @param minCalls the least {@code --calls} accepted: 0 where a run may only deliver retries resumed from the
     *                 journal
     * @return the settings
     * @throws IllegalArgumentException naming the flag and the value
     */
    public RunSettings resolve(RunSettings defaults, int minCalls) {
        int nCalls = calls == null ? defaults.calls() : parseInt("--calls", calls, minCalls, 1_000_000);
        double perSecond = rate == null ? defaults.ratePerSecond() : parseDouble("--rate", rate, 0.01, 10_000);
        LoadDriver.Mode m = mode == null ? defaults.mode() : parseEnum("--mode", mode, LoadDriver.Mode.class);
        Duration t = timeout == null ? defaults.timeout() : positive("--timeout", timeout);
        int r = retries == null ? defaults.retries() : parseInt("--retries", retries, 0, 1000);
        Duration d = delay == null ? defaults.delay() : positive("--delay", delay);
        double x = multiplier == null ? defaults.multiplier() : parseDouble("--multiplier", multiplier, 1, 1e6);
        Duration max = maxDelay == null ? defaults.maxDelay() : positive("--max-delay", maxDelay);
        if (max.compareTo(d) < 0) {
            if (maxDelay == null) {
                max = d; // only --delay was given, above the default cap: the cap follows
            } else {
                throw new IllegalArgumentException("--max-delay: \"" + maxDelay + "\" (expected: >= --delay, "
                        + Human.duration(d) + ")");
            }
        }
        double j = jitter == null ? defaults.jitter() : parseDouble("--jitter", jitter, 0, 1);
        int tasks = failbackTasks == null ? defaults.failbackTasks()
                : parseInt("--failbacktasks", failbackTasks, 1, 1_000_000);
        String o = overflow == null ? defaults.overflow() : oneOf("--overflow", overflow, "reject", "log");
        String on = retryOn == null ? defaults.retryOn() : retryOn("--retry-on", retryOn);
        EventLines.Level ev = events == null ? defaults.events()
                : parseEnum("--events", events, EventLines.Level.class);
        Duration dr = drain == null ? defaults.drain() : Durations.parse("--drain", drain);
        if (store != null) {
            // read by every consumer application of this JVM as the default of failback.store
            System.setProperty("rpctimer.failback.store", oneOf("--store", store, "memory", "embedded"));
        }
        double[] budget = budget(defaults);
        return new RunSettings(nCalls, perSecond, m, t, r, d, x, max, j, tasks, o, on, ev, dr, budget[0], budget[1],
                metrics || defaults.metrics());
    }

    /** @return the budget's ratio and minimum rate: both 0 would never let a retry go out */
    private double[] budget(RunSettings defaults) {
        double ratio = budgetRatio == null ? defaults.budgetRatio()
                : parseDouble("--budget-ratio", budgetRatio, 0, 1_000_000);
        double minRate = budgetMinRate == null ? defaults.budgetMinRate()
                : parseDouble("--budget-minrate", budgetMinRate, 0, 1_000_000);
        if (ratio == 0 && minRate == 0) {
            throw new IllegalArgumentException("--budget-minrate: \"" + (budgetMinRate == null ? Human.number(minRate)
                    : budgetMinRate) + "\" (expected: > 0 when --budget-ratio is 0)");
        }
        return new double[] {ratio, minRate};
    }

    static int parseInt(String flag, String text, int min, int max) {
        try {
            int n = Integer.parseInt(text.trim());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new IllegalArgumentException(flag + ": \"" + text + "\" (expected: a whole number, " + min + ".." + max
                + ")");
    }

    static double parseDouble(String flag, String text, double min, double max) {
        try {
            double d = Double.parseDouble(text.trim());
            if (d >= min && d <= max) {
                return d;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new IllegalArgumentException(flag + ": \"" + text + "\" (expected: a number, " + Human.number(min)
                + ".." + Human.number(max) + ")");
    }

    static Duration positive(String flag, String text) {
        Duration d = Durations.parse(flag, text);
        if (d.isZero()) {
            throw new IllegalArgumentException(flag + ": \"" + text + "\" (expected: at least 1ms)");
        }
        return d;
    }

    static <E extends Enum<E>> E parseEnum(String flag, String text, Class<E> type) {
        for (E e : type.getEnumConstants()) {
            if (e.name().equalsIgnoreCase(text.trim())) {
                return e;
            }
        }
        StringBuilder expected = new StringBuilder();
        for (E e : type.getEnumConstants()) {
            expected.append(expected.length() == 0 ? "" : ", ").append(e.name().toLowerCase(Locale.ROOT));
        }
        throw new IllegalArgumentException(flag + ": \"" + text + "\" (expected: one of " + expected + ")");
    }

    private static String oneOf(String flag, String text, String... values) {
        for (String v : values) {
            if (v.equalsIgnoreCase(text.trim())) {
                return v;
            }
        }
        throw new IllegalArgumentException(flag + ": \"" + text + "\" (expected: one of " + String.join(", ", values)
                + ")");
    }

    private static String retryOn(String flag, String text) {
        try {
            RetryOn.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + ": \"" + text
                    + "\" (expected: rpc, all, or comma-separated exception class names)");
        }
        return text.trim();
    }
}
