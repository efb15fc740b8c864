package io.rpctimer.bench.failback;

import static io.rpctimer.bench.failback.ScenarioRun.round1;

import io.rpctimer.demo.consumer.Report;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.wheel.TimerStats;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one scenario did on one cluster: the account of every call ({@link Report}, from {@code DemoConsumer}'s
 * accounting), the times ({@link CallTimeline.Times}), the failback timer's lateness and tick lag, Dubbo's failback log
 * lines, and how busy the machine was. Times are in milliseconds unless a name says otherwise.
 *
 * <p><b>Threading:</b> immutable once built; the builder is used by one thread.
 */
final class RunResult {

    final Scenario scenario;
    final String cluster;
    final Scenario.Plan plan;
    final Report report;
    final CallTimeline.Times times;
    final Map<String, Object> figures;
    private final Builder b;

    private RunResult(Builder b) {
        this.b = b;
        this.scenario = b.scenario;
        this.cluster = b.cluster;
        this.plan = b.plan;
        this.report = b.report;
        this.times = b.times;
        this.figures = toMap();
    }

    boolean wheel() {
        return ScenarioRun.WHEEL.equals(cluster);
    }

    /** @return calls lost without the caller being told: no outcome and no delivery, or rejected silently */
    long lostSilently() {
        return report.lost() + (report.rejected() - report.rejectedCallerTold());
    }

    /** @return Dubbo: retries its failback dropped at the pending cap, seen only as log lines; wheelfailback: 0 */
    long droppedAtCap() {
        return count(LogTap.Marker.DUBBO_DROPPED_AT_CAP) + count(LogTap.Marker.DUBBO_TASK_THREW);
    }

    /** @return calls given up after their retries: wheelfailback's ABANDONED outcomes; Dubbo's log lines */
    long abandoned() {
        return wheel() ? report.abandoned() : count(LogTap.Marker.DUBBO_ABANDONED);
    }

    /** @return the worst probe lateness, ms (NaN if no probe ran: no failure ever created Dubbo's timer) */
    double worstProbeLatenessMillis() {
        return b.worstProbeMillis;
    }

    /** @return the worst tick lag of the timer's worker: rpc-timer's own stat; Dubbo's sampled; ms */
    double workerTickLagMillis() {
        return wheel() ? (b.wheelStats == null ? Double.NaN : b.wheelStats.maxTickLagNanos() / 1e6) : b.sampledLagMillis;
    }

    /** @return the worst of the two tick lag figures, ms */
    double worstTickLagMillis() {
        double p = worstProbeLatenessMillis();
        double w = workerTickLagMillis();
        return Double.isNaN(p) ? w : Double.isNaN(w) ? p : Math.max(p, w);
    }

    double sleeperLagMillis() {
        return b.sleeperLagMillis;
    }

    double foreignCores() {
        return b.foreignCores;
    }

    long wallMillis() {
        return b.wallMillis;
    }

    boolean settled() {
        return b.settled;
    }

    /** @return how long the run waited after the last send before it closed the consumer, ms */
    long settleWaitMillis() {
        return b.settleMillis;
    }

    Map<String, Integer> callerSaw() {
        return b.callerSaw;
    }

    List<String> faultLog() {
        return b.faultLog;
    }

    long count(LogTap.Marker m) {
        return b.logLines.getOrDefault(m, 0L);
    }

    int probesCounted() {
        return b.probesCounted;
    }

    int probesRefused() {
        return b.probesRefused;
    }

    long pendingAtClose() {
        return b.pendingAtClose;
    }

    int dubboDiscardedAtStop() {
        return b.dubboDiscardedAtStop;
    }

    Map<String, Throwable> senderFailures() {
        return b.senderFailures;
    }

    RetryStats retryStats() {
        return b.retryStats;
    }

    private Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cluster", cluster);
        m.put("load", plan.load());
        m.put("fault", plan.fault());
        m.put("faultSteps", b.faultLog);
        Map<String, Object> acc = new LinkedHashMap<>(report.toMap());
        acc.remove("cluster");
        acc.put("lostSilently", lostSilently());
        acc.put("abandonedAll", abandoned());
        acc.put("droppedAtCapLogLines", droppedAtCap());
        acc.put("neverCompletedAtAProvider", times.neverCompleted());
        acc.put("deliveredByARetryAtAProvider", times.deliveredByRetry());
        acc.put("lostCallIds", report.lostCallIds());
        m.put("accounting", acc);
        m.put("callerSaw", b.callerSaw);
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("drainMillis", round1(times.drainMillis()));
        t.put("scheduleAllowsMillis", round1(times.scheduleAllowsMillis()));
        t.put("worstRetryLatenessMillis", round1(times.worstRetryLatenessMillis()));
        t.put("lastDeliveringRetry", times.lastDeliveringRetry());
        t.put("drawnDelays", times.drawnDelays());
        t.put("settledBeforeClose", b.settled);
        t.put("allCallersAnswered", b.allAnswered);
        t.put("setupMillis", b.setupMillis);
        t.put("settleWaitMillis", b.settleMillis);
        t.put("wallMillis", b.wallMillis);
        m.put("times", t);
        Map<String, Object> timer = new LinkedHashMap<>();
        timer.put("worstProbeLatenessMillis", round1(b.worstProbeMillis));
        timer.put("meanProbeLatenessMillis", round1(b.meanProbeMillis));
        timer.put("probesCounted", b.probesCounted);
        timer.put("probesAmbiguous", b.probesAmbiguous);
        timer.put("probesRefusedAtCap", b.probesRefused);
        timer.put("workerTickLagMillis", round1(workerTickLagMillis()));
        timer.put("workerTickLagSource", wheel() ? "rpc-timer's TimerStats.maxTickLagNanos (since the wheel was "
                + "created)" : "sampled from the worker's tick counter every " + TimerProbe.SAMPLE_PERIOD_MILLIS + " ms");
        if (b.wheelStats != null) {
            timer.put("wheelTicks", b.wheelStats.ticks());
            timer.put("wheelExpiredTimeouts", b.wheelStats.expiredTimeouts());
        }
        timer.put("sleeperLagMillis", round1(b.sleeperLagMillis));
        if (!wheel()) {
            timer.put("dubboTimerFound", b.dubboTimerFound);
            timer.put("dubboTimeoutsDiscardedAtStop", b.dubboDiscardedAtStop);
        }
        timer.put("retriesPendingAtClose", b.pendingAtClose);
        m.put("timer", timer);
        Map<String, Object> logs = new LinkedHashMap<>();
        b.logLines.forEach((k, v) -> logs.put(k.name(), v));
        m.put("dubboLogLines", logs);
        if (b.retryStats != null && wheel()) {
            m.put("wheelfailbackStats", ScenarioRun.map("failedCalls", b.retryStats.failedCalls(), "retriesSent",
                    b.retryStats.retriesSent(), "retriesFailed", b.retryStats.retriesFailed(), "delivered",
                    b.retryStats.delivered(), "abandoned", b.retryStats.abandoned(), "rejected",
                    b.retryStats.rejected(), "handedOver", b.retryStats.handedOver()));
            m.put("handedOverToStore", b.handedOverToStore);
        }
        m.put("machine", ScenarioRun.map("foreignCores", round2(b.foreignCores), "selfCores", round2(b.selfCores)));
        if (!b.senderFailures.isEmpty()) {
            Map<String, Object> f = new LinkedHashMap<>();
            b.senderFailures.entrySet().stream().limit(10).forEach(e -> f.put(e.getKey(), e.getValue().toString()));
            m.put("callerFailures", f);
        }
        return m;
    }

    private static double round2(double d) {
        return Double.isNaN(d) ? d : Math.round(d * 100) / 100.0;
    }

    /** Collects a run's figures as they come; used by {@link ScenarioRun} only. */
    static final class Builder {
        private final Scenario scenario;
        private final String cluster;
        private final Scenario.Plan plan;
        private Report report;
        private CallTimeline.Times times;
        private long setupMillis;
        private long settleMillis;
        private long wallMillis;
        private boolean allAnswered;
        private boolean settled;
        private double worstProbeMillis = Double.NaN;
        private double meanProbeMillis = Double.NaN;
        private int probesCounted;
        private int probesAmbiguous;
        private int probesRefused;
        private double sampledLagMillis = Double.NaN;
        private TimerStats wheelStats;
        private double sleeperLagMillis = Double.NaN;
        private long pendingAtClose;
        private boolean dubboTimerFound;
        private int dubboDiscardedAtStop;
        private Map<String, Integer> callerSaw = Map.of();
        private Map<String, Throwable> senderFailures = Map.of();
        private RetryStats retryStats;
        private int handedOverToStore;
        private List<String> faultLog = List.of();
        private Map<LogTap.Marker, Long> logLines = Map.of();
        private double foreignCores = Double.NaN;
        private double selfCores = Double.NaN;

        Builder(Scenario scenario, String cluster, Scenario.Plan plan) {
            this.scenario = scenario;
            this.cluster = cluster;
            this.plan = plan;
        }

        void report(Report r) {
            report = r;
        }

        void times(CallTimeline.Times t) {
            times = t;
        }

        void setupMillis(long v) {
            setupMillis = v;
        }

        void settleWaitMillis(long v) {
            settleMillis = v;
        }

        void wallMillis(long v) {
            wallMillis = v;
        }

        void allAnswered(boolean v) {
            allAnswered = v;
        }

        void settled(boolean v) {
            settled = v;
        }

        void probe(TimerProbe p) {
            worstProbeMillis = p.worstLatenessMillis();
            meanProbeMillis = p.meanLatenessMillis();
            probesCounted = p.probesCounted();
            probesAmbiguous = p.probesAmbiguous();
            probesRefused = p.probesRefused();
            if (p instanceof TimerProbe.Dubbo) {
                sampledLagMillis = p.worstWorkerLagMillis(); // NaN if Dubbo never created its timer
            }
        }

        void wheelStats(TimerStats s) {
            wheelStats = s;
        }

        void sleeperLagMillis(double v) {
            sleeperLagMillis = v;
        }

        void pendingAtClose(long v) {
            pendingAtClose = v;
        }

        void dubboTimerFound(boolean v) {
            dubboTimerFound = v;
        }

        void dubboDiscardedAtStop(int v) {
            dubboDiscardedAtStop = v;
        }

        void callerSaw(Map<String, Integer> v) {
            callerSaw = v;
        }

        void senderFailures(Map<String, Throwable> v) {
            senderFailures = v;
        }

        void retryStats(RetryStats v) {
            retryStats = v;
        }

        void handedOverToStore(int v) {
            handedOverToStore = v;
        }

        void faultLog(List<String> v) {
            faultLog = List.copyOf(v);
        }

        void logLines(Map<LogTap.Marker, Long> v) {
            logLines = v;
        }

        void foreignCores(double v) {
            foreignCores = v;
        }

        void selfCores(double v) {
            selfCores = v;
        }

        RunResult build() {
            if (report == null || times == null) {
                throw new IllegalStateException("run of " + scenario.id + " on " + cluster + " has no account");
            }
            return new RunResult(this);
        }
    }
}
