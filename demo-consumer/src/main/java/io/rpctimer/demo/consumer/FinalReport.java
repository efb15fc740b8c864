package io.rpctimer.demo.consumer;

import io.rpctimer.wheel.TimerStats;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The table a run ends with: what became of every call ({@link Report}), the duplicates providers saw, the retry
 * budget's effect, and the shared wheel's stats, with a note on each row, and the verdict: OK when nothing was lost
 * and the rows add up to {@code sent}.
 *
 * <p><b>Threading:</b> immutable, thread-safe.
 */
public final class FinalReport {

    /** Exit code of a run in which nothing was lost and the report adds up. */
    public static final int OK = 0;
    /** Exit code of a run that lost a call, or whose report does not add up. */
    public static final int LOST = 1;

    /**
     * Calls that providers completed more than once, and, when the providers deduplicate retries ({@code retrydedup}),
     * the deliveries they did not run.
     *
     * @param count          the number, or null when it could not be known
     * @param note           where the number comes from, or why it is unknown
     * @param suppressed     deliveries of a call already done that the providers answered without running it; null
     *                       when the providers do not deduplicate
     * @param suppressedNote what else the deduplication did
     */
    public record Duplicates(Long count, String note, Long suppressed, String suppressedNote) {
        /** @return a known count */
        public static Duplicates of(long count, String note) {
            return new Duplicates(count, note, null, null);
        }

        /** @return an unknown count, printed as n/a */
        public static Duplicates unknown(String why) {
            return new Duplicates(null, why, null, null);
        }

        /** @return these duplicates, with the deliveries the providers' deduplication suppressed */
        public Duplicates withSuppressed(long n, String note) {
            return new Duplicates(count, this.note, n, note);
        }
    }

    /**
     * What the retry budget did.
     *
     * @param ratio        {@code failback.budget.ratio}
     * @param minPerSecond {@code failback.budget.minrate}
     * @param waits        due retries that waited for a token, read before the consumer stopped; null if unknown
     * @param peak         the second in which the providers received the most retries; empty if none did, or the
     *                     providers are not watched
     * @param peakAt       when that second began, as the live lines stamp it
     */
    public record Budget(double ratio, double minPerSecond, Long waits, Optional<RetryArrivals.Peak> peak,
                         String peakAt) {
        /** @return the retries the budget allowed in the peak second; 0 without one */
        public double allowedAtPeak() {
            return peak.map(p -> p.allowed(ratio, minPerSecond)).orElse(0.0);
        }
    }

    private static final String ROW = "  %-30s %10s   %s";

    private final Report report;
    private final Optional<TimerStats> wheel;
    private final Duplicates duplicates;
    private final Budget budget;
    private final int failbackTasks;
    private final int brokenAnswers;
    private final String brokenExample;
    private final Optional<DeadLetterSummary> deadLetters;

    /**
     * @param report        the account of the run, taken after the consumer stopped
     * @param wheel         the shared wheel's stats, read before the consumer stopped it; empty if none
     * @param duplicates    what providers completed more than once
     * @param budget        what the retry budget did
     * @param failbackTasks the pending-retry cap, for the note on rejections
     * @param brokenAnswers calls whose caller got no answer because the call threw in the caller itself
     *                      ({@link LoadDriver#brokenAnswers()}); shown when not 0
     * @param brokenExample the first of them, or null
     */
    public FinalReport(Report report, Optional<TimerStats> wheel, Duplicates duplicates, Budget budget,
                       int failbackTasks, int brokenAnswers, String brokenExample) {
        this(report, wheel, duplicates, budget, failbackTasks, brokenAnswers, brokenExample, Optional.empty());
    }

    /**
     * As the constructor above, with the summary of a dead-letter replay ({@code --scenario dead-letters}): the
     * report prints it, and fails the run if it lost a call or a call ran twice.
     */
    public FinalReport(Report report, Optional<TimerStats> wheel, Duplicates duplicates, Budget budget,
                       int failbackTasks, int brokenAnswers, String brokenExample,
                       Optional<DeadLetterSummary> deadLetters) {
        this.deadLetters = deadLetters;
        this.report = report;
        this.wheel = wheel;
        this.duplicates = duplicates;
        this.budget = budget;
        this.failbackTasks = failbackTasks;
        this.brokenAnswers = brokenAnswers;
        this.brokenExample = brokenExample;
    }

    /** @return calls whose caller got no answer because the call threw in the caller itself */
    public int brokenAnswers() {
        return brokenAnswers;
    }

    /** @return the account of the run */
    public Report report() {
        return report;
    }

    /** @return the wheel's stats as read before the consumer stopped */
    public Optional<TimerStats> wheel() {
        return wheel;
    }

    /** @return the duplicates providers saw */
    public Duplicates duplicates() {
        return duplicates;
    }

    /** @return what the retry budget did */
    public Budget budget() {
        return budget;
    }

    /** @return the summary of the dead-letter replay, if the run played one to the end */
    public Optional<DeadLetterSummary> deadLetters() {
        return deadLetters;
    }

    /**
     * @return whether nothing was lost and every call is in exactly one row; with a dead-letter replay, also that it
     *         lost no call and ran none twice
     */
    public boolean ok() {
        return report.lost() == 0 && report.addsUp() && deadLetters.map(DeadLetterSummary::ok).orElse(true);
    }

    /** @return {@link #OK} or {@link #LOST} */
    public int exitCode() {
        return ok() ? OK : LOST;
    }

    /** @return the table, the wheel's stats and the verdict, as lines */
    public List<String> lines() {
        Report r = report;
        List<String> l = new ArrayList<>();
        l.add("Report");
        row(l, "sent", r.sent(), "calls made by the application");
        row(l, "delivered on the first try", r.deliveredFirstTry(), "the caller got the provider's reply");
        boolean first = true;
        for (Map.Entry<Integer, Long> e : r.deliveredOnRetry().entrySet()) {
            row(l, "delivered on retry " + e.getKey(), e.getValue(), first
                    ? "the caller got null at once (failed back); retry k delivered it later" : "");
            first = false;
        }
        if (r.deliveredOnRetry().isEmpty()) {
            row(l, "delivered on a retry", 0, "no call needed a retry");
        }
        row(l, "abandoned", r.abandoned(), "retries used up, or a failure the policy does not retry");
        row(l, "rejected", r.rejected(), "over failbacktasks=" + failbackTasks + " pending retries; "
                + r.rejectedCallerTold() + " of them told to the caller");
        row(l, "handed over", r.handedOver(), "pending when the consumer stopped: " + DemoConsumer.handedOverTo());
        row(l, "failed to the caller", r.callerErrors(), "the caller got an exception not retried (business failure)");
        if (r.pending() > 0) {
            row(l, "pending", r.pending(), "still waiting for a retry");
        }
        row(l, "lost", r.lost(), r.lost() == 0 ? "failed back and never heard of again: must be 0"
                : "LOST: " + String.join(", ", r.lostCallIds()));
        l.add(String.format(Locale.ROOT, ROW, duplicates.suppressed() == null ? "duplicates seen by providers"
                : "duplicates executed", duplicates.count() == null ? "n/a" : duplicates.count().toString(),
                duplicates.note()));
        if (duplicates.suppressed() != null) {
            row(l, "duplicates suppressed", duplicates.suppressed(), duplicates.suppressedNote());
        }
        l.add(String.format(Locale.ROOT, ROW, "drain time", Human.duration(r.drainMillis()),
                "from the last call sent to the last outcome"));
        if (brokenAnswers > 0) {
            row(l, "broke in the caller", brokenAnswers, "WARNING: not an RPC failure; their rows above come from "
                    + "the retry events. E.g. " + brokenExample);
        }
        deadLetters.ifPresent(d -> l.addAll(d.lines()));
        budgetLines(l);
        wheelLines(l);
        l.add(verdict());
        return l;
    }

    private void budgetLines(List<String> l) {
        Budget b = budget;
        l.add("Retry budget (retries at most " + Human.percent(b.ratio()) + " of first-try successes + "
                + Human.rate(b.minPerSecond()) + ": failback.budget.ratio, failback.budget.minrate)");
        l.add(String.format(Locale.ROOT, ROW, "retries that waited", b.waits() == null ? "n/a" : b.waits().toString(),
                "due retries that waited for a token (in order; none dropped)"));
        if (b.peak().isEmpty()) {
            l.add(String.format(Locale.ROOT, ROW, "most retries in 1 s", "n/a", "no retry reached a watched provider"));
            return;
        }
        RetryArrivals.Peak p = b.peak().get();
        l.add(String.format(Locale.ROOT, ROW, "most retries in 1 s", p.retries(), "received by p1 and p2 from "
                + b.peakAt() + "; the budget's rate then: " + Human.rate(b.allowedAtPeak()) + " = "
                + Human.rate(b.minPerSecond()) + " + " + Human.percent(b.ratio()) + " of " + p.firstTrySuccesses()
                + " first-try successes, plus tokens saved before"));
    }

    private void wheelLines(List<String> l) {
        l.add("Wheel (the shared timing wheel, read before the consumer stopped)");
        if (wheel.isEmpty()) {
            l.add(String.format(Locale.ROOT, ROW, "stats", "n/a", "no wheelfailback reference held the wheel"));
            return;
        }
        TimerStats w = wheel.get();
        row(l, "pending timeouts", w.pendingTimeouts(), "retries and retry timeouts still scheduled");
        l.add(String.format(Locale.ROOT, ROW, "tick lag, last / max",
                TimeUnit.NANOSECONDS.toMillis(w.lastTickLagNanos()) + " / "
                        + TimeUnit.NANOSECONDS.toMillis(w.maxTickLagNanos()) + " ms",
                "how late the worker ran its last tick / its worst tick so far"));
        row(l, "timeouts scheduled", w.scheduledTimeouts(), "expired " + w.expiredTimeouts() + " (ran), cancelled "
                + w.cancelledTimeouts() + " (reply came first), rejected " + w.rejectedTimeouts());
    }

    private String verdict() {
        Report r = report;
        String sum = r.sent() + " sent = " + r.deliveredFirstTry() + " first try + " + r.deliveredOnAnyRetry()
                + " on retry + " + r.abandoned() + " abandoned + " + r.rejected() + " rejected + " + r.handedOver()
                + " handed over + " + r.callerErrors() + " failed to the caller"
                + (r.pending() > 0 ? " + " + r.pending() + " pending" : "") + " + " + r.lost() + " lost";
        if (ok()) {
            return "OK: " + sum + ". Nothing lost.";
        }
        String dead = deadLetters.map(DeadLetterSummary::problem).orElse("");
        return "NOT OK: " + sum + (r.addsUp() ? "" : " -- the rows do not add up")
                + (dead.isEmpty() ? "" : " -- dead letters: " + dead) + ".";
    }

    private static void row(List<String> l, String name, long value, String note) {
        l.add(String.format(Locale.ROOT, ROW, name, value, note));
    }
}
