package io.rpctimer.bench.failback;

import static io.rpctimer.bench.failback.ScenarioRun.round1;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Turns the runs into the result file's scenarios, ratios and target verdicts, and into markdown tables. The targets
 * are checked for {@code wheelfailback}, and reported for Dubbo's failback alongside:
 * <ul>
 *   <li><b>0 lost silently</b>: no call ends with neither an outcome nor a delivery (DemoConsumer's {@code lost}), and
 *       every rejected call's caller got the exception;</li>
 *   <li><b>worst tick lag under {@value #TICK_LAG_TARGET_MS} ms</b>: both the worst probe lateness (a zero-delay
 *       timeout's lateness past the tick it was due at) and the worker's own worst tick lag;</li>
 *   <li><b>drain no slower than the backoff schedule allows</b>: every failed-back call was settled before the consumer
 *       closed, and the drain (last send to the last retry completed at a provider) is at most what the schedule
 *       allows plus {@value #TICK_LAG_TARGET_MS} ms, where "allows" is, over the calls a retry delivered, the latest
 *       of: that retry's due time (when it was scheduled + its drawn delay, jitter included) + one 10 ms tick + the
 *       retry's own time from sent to completed.</li>
 * </ul>
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
final class ComparisonReport {

    static final double TICK_LAG_TARGET_MS = 50;

    private ComparisonReport() {
    }

    /** @return one line for the console */
    static String summary(RunResult r) {
        return String.format(Locale.ROOT, "first try %d, on retry %d, failed to caller %d, rejected %d (told %d), "
                        + "dropped at cap %d, abandoned %d, handed over %d, LOST %d (silently %d), duplicates %d; "
                        + "drain %s; probe lag %s, worker lag %s, sleeper %s",
                r.report.deliveredFirstTry(), r.report.deliveredOnAnyRetry(), r.report.callerErrors(),
                r.report.rejected(), r.report.rejectedCallerTold(), r.droppedAtCap(), r.abandoned(),
                r.report.handedOver(), r.report.lost(), r.lostSilently(), r.report.duplicates(),
                seconds(r.times.drainMillis()), ms(r.worstProbeLatenessMillis()), ms(r.workerTickLagMillis()),
                ms(r.sleeperLagMillis()));
    }

    /** Adds the scenarios (both runs' figures, ratios, target verdicts) to {@code results}. */
    static void analyse(Map<String, Object> results, List<RunResult> runs) {
        List<Object> scenarios = new ArrayList<>();
        for (Scenario s : Scenario.values()) {
            Optional<RunResult> d = find(runs, s, ScenarioRun.DUBBO);
            Optional<RunResult> w = find(runs, s, ScenarioRun.WHEEL);
            if (d.isEmpty() && w.isEmpty()) {
                continue;
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", s.id);
            m.put("title", s.title);
            RunResult any = w.orElseGet(d::get);
            m.put("load", any.plan.load());
            m.put("fault", any.plan.fault());
            Map<String, Object> byCluster = new LinkedHashMap<>();
            d.ifPresent(r -> byCluster.put(ScenarioRun.DUBBO, r.figures));
            w.ifPresent(r -> byCluster.put(ScenarioRun.WHEEL, r.figures));
            m.put("runs", byCluster);
            if (d.isPresent() && w.isPresent()) {
                Map<String, Object> ratios = new LinkedHashMap<>();
                ratios.put("worstProbeLateness", ratio(d.get().worstProbeLatenessMillis(),
                        w.get().worstProbeLatenessMillis()));
                ratios.put("workerTickLag", ratio(d.get().workerTickLagMillis(), w.get().workerTickLagMillis()));
                ratios.put("drain", ratio(d.get().times.drainMillis(), w.get().times.drainMillis()));
                m.put("ratiosDubboOverWheelfailback", ratios);
            }
            Map<String, Object> targets = new LinkedHashMap<>();
            w.ifPresent(r -> targets.put(ScenarioRun.WHEEL, verdicts(r)));
            d.ifPresent(r -> targets.put(ScenarioRun.DUBBO, verdicts(r)));
            m.put("targets", targets);
            scenarios.add(m);
        }
        results.put("scenarios", scenarios);
    }

    private static Optional<RunResult> find(List<RunResult> runs, Scenario s, String cluster) {
        return runs.stream().filter(r -> r.scenario == s && r.cluster.equals(cluster)).findFirst();
    }

    /** A target's verdict: met or not, and the plain sentence. */
    record Verdict(boolean met, String sentence) {
        Map<String, Object> toMap() {
            return ScenarioRun.map("met", met, "sentence", sentence);
        }
    }

    static Map<String, Object> verdicts(RunResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("zeroLostSilently", lost(r).toMap());
        m.put("tickLagUnder50ms", lag(r).toMap());
        m.put("drainWithinSchedule", drain(r).toMap());
        return m;
    }

    static Verdict lost(RunResult r) {
        long silent = r.lostSilently();
        if (silent == 0) {
            return new Verdict(true, String.format(Locale.ROOT, "0 calls lost silently (%d rejected, every caller "
                    + "told; %d failed to the caller)", r.report.rejected(), r.report.callerErrors()));
        }
        String how = r.wheel() ? "" : String.format(Locale.ROOT, "; Dubbo's log shows %d retries dropped at the "
                + "pending cap and %d calls abandoned after 3 retries", r.droppedAtCap(), r.abandoned());
        return new Verdict(false, String.format(Locale.ROOT, "%d of %d calls lost silently: their callers got the "
                        + "failback empty result and no provider ever completed them%s", silent, r.report.sent(),
                how));
    }

    static Verdict lag(RunResult r) {
        double probe = r.worstProbeLatenessMillis();
        double worker = r.workerTickLagMillis();
        double worst = r.worstTickLagMillis();
        String figures = String.format(Locale.ROOT, "probe %s, worker %s (a thread that only sleeps 10 ms: %s)",
                ms(probe), ms(worker), ms(r.sleeperLagMillis()));
        if (Double.isNaN(worst)) {
            return new Verdict(true, "the failback timer never started: the cluster put no call up for retry");
        }
        return worst < TICK_LAG_TARGET_MS
                ? new Verdict(true, "worst tick lag " + ms(worst) + " < 50 ms: " + figures)
                : new Verdict(false, "worst tick lag " + ms(worst) + ", target < 50 ms: " + figures);
    }

    static Verdict drain(RunResult r) {
        CallTimeline.Times t = r.times;
        if (!r.settled()) {
            return new Verdict(false, String.format(Locale.ROOT, "not every failed-back call was settled when the "
                    + "consumer closed, %s after the last send (%d retries still pending); drain so far %s",
                    seconds(r.settleWaitMillis()), r.pendingAtClose(), seconds(t.drainMillis())));
        }
        if (!r.wheel()) {
            return new Verdict(true, "every call settled; drain " + seconds(t.drainMillis())
                    + " (Dubbo's fixed 5 s period on a 1 s tick: no backoff schedule to compare with)");
        }
        boolean met = t.drainMillis() <= t.scheduleAllowsMillis() + TICK_LAG_TARGET_MS;
        return new Verdict(met, String.format(Locale.ROOT, "drain %s, the schedule allows %s (+ 50 ms); the "
                        + "worst retry went out %s after its due time; the last delivery was retry %d",
                seconds(t.drainMillis()), seconds(t.scheduleAllowsMillis()), ms(t.worstRetryLatenessMillis()),
                t.lastDeliveringRetry()));
    }

    /** @return the markdown: header, chart, summary, one table per scenario, the targets */
    static String markdown(Map<String, Object> results, List<RunResult> runs, String png) {
        StringBuilder b = new StringBuilder();
        @SuppressWarnings("unchecked")
        Map<String, Object> machine = (Map<String, Object>) results.get("machine");
        b.append("# Failback end to end: Dubbo's `failback` vs `wheelfailback` (").append(results.get("mode"))
                .append(" run)\n\n");
        b.append("<!-- generated by io.rpctimer.bench.failback.FailbackComparison; do not edit by hand -->\n\n");
        b.append(String.format(Locale.ROOT, "Run `%s` of %s, %s min. %s, %s cores, %s; %s; %s; Dubbo %s; rpc-timer "
                        + "at commit `%s` (uncommitted changes under rpc-timer/: %s).%n", results.get("mode"), machine.get("date"),
                results.get("durationMinutes"), machine.get("cpu"), machine.get("cores"), machine.get("memory"),
                machine.get("os"), machine.get("jvm"), ((Map<?, ?>) machine.get("versions")).get("dubbo"),
                machine.get("gitCommit"), machine.get("rpcTimerUncommittedChanges")));
        b.append(String.format(Locale.ROOT, "Load average (1, 5, 15 min) at the start %s, at the end %s; other "
                        + "processes used %s cores on average during the run.%n%n", results.get("loadAverageAtStart"),
                results.get("loadAverageAtEnd"), results.get("foreignCoresWholeRun")));
        b.append("Both clusters: timeout 1 s, `retries=3`, `failbacktasks=100` (Dubbo's defaults). Dubbo's failback "
                + "retries every 5 s (fixed) on a `HashedWheelTimer` with a 1 s tick whose worker runs each retry "
                + "itself; `wheelfailback` with `failback.delay=5000` and its defaults: retries after 5, 10 and 20 s, "
                + "each ±20% (jitter 0.2), on the shared 10 ms wheel whose worker runs nothing. Each run starts a "
                + "fresh embedded ZooKeeper, providers p1 and p2 and a consumer; Dubbo's run first. After the last "
                + "send a run waits until every call settled and no provider holds a call, at most 45 s (Dubbo: "
                + "also stops once its timer had no retry pending for 3 s), then closes the consumer.\n\n");
        b.append("![Dubbo's failback vs wheelfailback](").append(png).append(")\n\n");

        b.append("## Summary\n\n");
        b.append("| scenario | lost silently: Dubbo | wheelfailback | not delivered, caller told: Dubbo | "
                + "wheelfailback | worst tick lag: Dubbo | wheelfailback | drain: Dubbo | wheelfailback |\n");
        b.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Scenario s : Scenario.values()) {
            Optional<RunResult> d = find(runs, s, ScenarioRun.DUBBO);
            Optional<RunResult> w = find(runs, s, ScenarioRun.WHEEL);
            if (d.isEmpty() && w.isEmpty()) {
                continue;
            }
            b.append("| (").append(s.id).append(") ").append(s.title);
            cells(b, d, w, r -> String.valueOf(r.lostSilently()));
            cells(b, d, w, r -> String.valueOf(r.report.rejectedCallerTold() + r.report.callerErrors()));
            cells(b, d, w, r -> ms(r.worstTickLagMillis()));
            cells(b, d, w, r -> seconds(r.times.drainMillis()));
            b.append(" |\n");
        }
        b.append("\n*Worst tick lag*: the larger of the probe's and the worker's figure (rows below). *Drain*: from "
                + "the last send to the last retry completed at a provider.\n\n");

        for (Scenario s : Scenario.values()) {
            Optional<RunResult> d = find(runs, s, ScenarioRun.DUBBO);
            Optional<RunResult> w = find(runs, s, ScenarioRun.WHEEL);
            if (d.isEmpty() && w.isEmpty()) {
                continue;
            }
            scenarioTable(b, s, d, w);
        }

        b.append("## Targets\n\n");
        b.append("| scenario | cluster | 0 lost silently | worst tick lag < 50 ms | drain within the backoff "
                + "schedule |\n|---|---|---|---|---|\n");
        List<String> misses = new ArrayList<>();
        for (Scenario s : Scenario.values()) {
            for (String c : List.of(ScenarioRun.WHEEL, ScenarioRun.DUBBO)) {
                Optional<RunResult> r = find(runs, s, c);
                if (r.isEmpty()) {
                    continue;
                }
                Verdict l = lost(r.get());
                Verdict g = lag(r.get());
                Verdict dr = drain(r.get());
                b.append("| (").append(s.id).append(") | ").append(c).append(" | ").append(verdict(l))
                        .append(" | ").append(verdict(g)).append(" | ")
                        .append(c.equals(ScenarioRun.WHEEL) ? verdict(dr) : "n/a: " + dr.sentence()).append(" |\n");
                if (c.equals(ScenarioRun.WHEEL)) {
                    for (Verdict v : List.of(l, g, dr)) {
                        if (!v.met()) {
                            misses.add("(" + s.id + ") " + v.sentence() + ".");
                        }
                    }
                }
            }
        }
        b.append("\n");
        if (misses.isEmpty()) {
            b.append("wheelfailback met every target in every scenario of this run.\n");
        } else {
            b.append("wheelfailback missed:\n\n");
            misses.forEach(m -> b.append("- ").append(m).append('\n'));
        }
        return b.toString();
    }

    private static void scenarioTable(StringBuilder b, Scenario s, Optional<RunResult> d, Optional<RunResult> w) {
        RunResult any = w.orElseGet(d::get);
        b.append("### (").append(s.id).append(") ").append(s.title).append("\n\n");
        b.append(any.plan.load()).append("; ").append(any.plan.fault()).append(".\n\n");
        b.append("| | Dubbo `failback` | `wheelfailback` | Dubbo / wheelfailback |\n|---|---:|---:|---:|\n");
        row(b, "calls sent", d, w, r -> String.valueOf(r.report.sent()), null);
        row(b, "delivered on the first try", d, w, r -> String.valueOf(r.report.deliveredFirstTry()), null);
        row(b, "delivered on retry (by retry number)", d, w, r -> r.report.deliveredOnAnyRetry()
                + (r.wheel() && !r.report.deliveredOnRetry().isEmpty() ? " " + r.report.deliveredOnRetry() : ""),
                null);
        row(b, "failed to the caller (the caller got the exception; not retried)", d, w,
                r -> String.valueOf(r.report.callerErrors()), null);
        row(b, "rejected at the pending cap (caller told)", d, w, r -> r.report.rejected() + " ("
                + r.report.rejectedCallerTold() + ")", null);
        row(b, "retries dropped at the pending cap, only a log line", d, w, r -> r.wheel() ? "0" :
                String.valueOf(r.droppedAtCap()), null);
        row(b, "abandoned after 3 retries", d, w, r -> String.valueOf(r.abandoned()) + (r.wheel() ? "" : " (log)"),
                null);
        row(b, "handed over at shutdown (to the RetryStore)", d, w, r -> r.wheel()
                ? String.valueOf(r.report.handedOver()) : "n/a", null);
        row(b, "**lost** (no outcome, no delivery)", d, w, r -> "**" + r.report.lost() + "**", null);
        row(b, "lost silently (lost + rejected without telling)", d, w, r -> String.valueOf(r.lostSilently()), null);
        row(b, "never completed by any provider", d, w, r -> String.valueOf(r.times.neverCompleted()), null);
        row(b, "duplicates (extra completions at providers)", d, w, r -> String.valueOf(r.report.duplicates()),
                null);
        row(b, "drain: last send to last retry completed", d, w, r -> seconds(r.times.drainMillis())
                        + (r.settled() ? "" : " (not settled)"), r -> r.times.drainMillis());
        row(b, "drain the backoff schedule allows", d, w, r -> r.wheel() ? seconds(r.times.scheduleAllowsMillis())
                : "n/a", null);
        row(b, "worst retry sent after its due time", d, w, r -> r.wheel() ? ms(r.times.worstRetryLatenessMillis())
                : "n/a", null);
        row(b, "worst tick lag, probe (0-delay timeout, past its tick)", d, w,
                r -> ms(r.worstProbeLatenessMillis()), RunResult::worstProbeLatenessMillis);
        row(b, "worst tick lag, worker (Dubbo: sampled; rpc-timer: its stat)", d, w,
                r -> ms(r.workerTickLagMillis()), RunResult::workerTickLagMillis);
        row(b, "control: worst oversleep of a 10 ms sleeper thread", d, w, r -> ms(r.sleeperLagMillis()), null);
        row(b, "retries still pending when the consumer closed", d, w, r -> String.valueOf(r.pendingAtClose()),
                null);
        row(b, "other processes' CPU during the run (cores)", d, w, r -> String.format(Locale.ROOT, "%.2f",
                r.foreignCores()), null);
        row(b, "run time (setup to teardown)", d, w, r -> seconds(r.wallMillis()), null);
        b.append('\n');
        for (Optional<RunResult> o : List.of(d, w)) {
            o.ifPresent(r -> {
                b.append("- **").append(r.cluster).append("**: callers saw ").append(r.callerSaw());
                b.append("; faults: ").append(String.join("; ", r.faultLog()));
                if (!r.wheel()) {
                    b.append(String.format(Locale.ROOT, "; Dubbo's log: %d failed calls put up for retry, %d "
                                    + "failed retries, %d retries dropped at the cap when first put on the timer, "
                                    + "%d when put back, %d calls abandoned; %d probes counted, %d refused at the "
                                    + "cap", r.count(LogTap.Marker.DUBBO_FAILED_BACK),
                            r.count(LogTap.Marker.DUBBO_RETRY_FAILED), r.count(LogTap.Marker.DUBBO_DROPPED_AT_CAP),
                            r.count(LogTap.Marker.DUBBO_TASK_THREW), r.count(LogTap.Marker.DUBBO_ABANDONED),
                            r.probesCounted(), r.probesRefused()));
                } else {
                    b.append(String.format(Locale.ROOT, "; %d retries sent, %d failed; drawn delays by retry "
                                    + "number %s; %d probes counted", r.retryStats().retriesSent(),
                            r.retryStats().retriesFailed(), r.times.drawnDelays(), r.probesCounted()));
                }
                if (!r.senderFailures().isEmpty()) {
                    b.append("; ").append(r.senderFailures().size()).append(" callers FAILED unexpectedly, e.g. ")
                            .append(r.senderFailures().values().iterator().next());
                }
                b.append(".\n");
            });
        }
        b.append('\n');
    }

    private static void row(StringBuilder b, String name, Optional<RunResult> d, Optional<RunResult> w,
                            Function<RunResult, String> cell, java.util.function.ToDoubleFunction<RunResult> ratio) {
        b.append("| ").append(name).append(" | ").append(d.map(cell).orElse("—")).append(" | ")
                .append(w.map(cell).orElse("—")).append(" | ");
        if (ratio != null && d.isPresent() && w.isPresent()) {
            b.append(ratio(ratio.applyAsDouble(d.get()), ratio.applyAsDouble(w.get())));
        }
        b.append(" |\n");
    }

    private static void cells(StringBuilder b, Optional<RunResult> d, Optional<RunResult> w,
                              Function<RunResult, String> cell) {
        b.append(" | ").append(d.map(cell).orElse("—")).append(" | ").append(w.map(cell).orElse("—"));
    }

    private static String verdict(Verdict v) {
        return (v.met() ? "met: " : "**missed**: ") + v.sentence();
    }

    /** @return "12.3×", or "" when either side is 0 or unknown */
    static String ratio(double a, double b) {
        if (Double.isNaN(a) || Double.isNaN(b) || a <= 0 || b <= 0) {
            return "";
        }
        double r = a / b;
        return (r >= 100 ? String.format(Locale.ROOT, "%.0f", r) : r >= 10 ? String.format(Locale.ROOT, "%.1f", r)
                : String.format(Locale.ROOT, "%.2f", r)) + "×";
    }

    static String ms(double millis) {
        if (Double.isNaN(millis)) {
            return "n/a";
        }
        return millis >= 1000 ? String.format(Locale.ROOT, "%,.0f ms", millis)
                : millis >= 10 ? String.format(Locale.ROOT, "%.0f ms", millis)
                : String.format(Locale.ROOT, "%.1f ms", round1(millis));
    }

    static String seconds(double millis) {
        return Double.isNaN(millis) ? "n/a" : String.format(Locale.ROOT, "%.2f s", millis / 1000);
    }
}
