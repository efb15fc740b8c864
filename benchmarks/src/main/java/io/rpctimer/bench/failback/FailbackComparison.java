package io.rpctimer.bench.failback;

import io.rpctimer.bench.ForeignLoadMonitor;
import io.rpctimer.bench.Json;
import io.rpctimer.bench.MachineInfo;
import io.rpctimer.testkit.DubboNode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Dubbo's built-in {@code failback} cluster against rpc-timer's {@code wheelfailback}, end to
 * end over real Dubbo RPC on 127.0.0.1 with an embedded ZooKeeper. Each scenario ({@link Scenario}: (a) one provider
 * hangs, (b) both hang, (c) both fail every call, (d) async callers with a failing provider) runs twice in the same
 * JVM, Dubbo's failback first, each time on fresh components, with the same load, faults, timeout (1 s) and first
 * retry delay (5 s). Writes {@code failback-<mode>.json} (every figure), {@code .md} (tables, ratios, targets) and
 * {@code .png} (chart) to the output directory; Dubbo's, ZooKeeper's and rpc-timer's log lines go to
 * {@code failback-<mode>.log}.
 *
 * <pre>
 * benchmarks/run.sh quick failback   # about 2 min
 * benchmarks/run.sh full failback    # about 3 min
 * java -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.failback.FailbackComparison quick|full [outDir] [all|a,b,c,d]
 * </pre>
 *
 * <p>Exit code 0 when every run completed (whatever the targets say), 1 if a run failed, 2 on bad arguments.
 *
 * <p><b>Threading:</b> single-threaded {@code main}; each run starts and stops its own threads.
 */
public final class FailbackComparison {

    private FailbackComparison() {
    }

    /**
     * @param args {@code quick|full [outDir [scenarios]]}: the mode (default quick), the output directory (default
     *             {@code benchmarks/results/failback}), the scenarios ({@code all}, default, or ids such as {@code a,c})
     */
    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "quick";
        List<Scenario> scenarios;
        try {
            if (!mode.equals("quick") && !mode.equals("full")) {
                throw new IllegalArgumentException("mode: '" + mode + "' (expected: quick or full)");
            }
            if (args.length > 3) {
                throw new IllegalArgumentException("arguments: " + args.length + " (expected: quick|full [outDir "
                        + "[all|a,b,c,d]])");
            }
            scenarios = Scenario.parse(args.length > 2 ? args[2] : "all");
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(2);
            return;
        }
        Path out = Path.of(args.length > 1 ? args[1] : "benchmarks/results/failback");
        Files.createDirectories(out);
        String base = "failback-" + mode;
        if (System.getProperty("dubbo.application.logger") == null) {
            System.setProperty("dubbo.application.logger", "slf4j"); // else Dubbo probes log4j first
        }
        System.setProperty("java.awt.headless", "true");
        DubboNode.disableDubboShutdownHooks(); // every run stops its own nodes

        PrintStream console = System.out;
        Map<String, Object> results = new LinkedHashMap<>();
        results.put("mode", mode);
        results.put("machine", MachineInfo.collect());
        results.put("loadAverageAtStart", ForeignLoadMonitor.loadAverages());
        ScenarioRun.Settings settings = ScenarioRun.Settings.standard();
        results.put("settings", settingsMap(settings));
        List<RunResult> runs = new ArrayList<>();
        boolean failed = false;
        long start = System.nanoTime();
        try (ForeignLoadMonitor monitor = ForeignLoadMonitor.start();
             LogTap tap = LogTap.install(out.resolve(base + ".log"))) {
            ForeignLoadMonitor.Mark load = monitor.mark();
            console.printf(Locale.ROOT, "failback comparison, %s run: %d scenarios x 2 clusters; load average %s; "
                    + "Dubbo's log lines go to %s%n", mode, scenarios.size(), ForeignLoadMonitor.loadAverages(),
                    out.resolve(base + ".log"));
            for (Scenario s : scenarios) {
                Scenario.Plan plan = s.plan(mode.equals("full"));
                for (String cluster : List.of(ScenarioRun.DUBBO, ScenarioRun.WHEEL)) {
                    console.printf(Locale.ROOT, "(%s) %s on %s: %s; %s%n", s.id, s.title, cluster, plan.load(),
                            plan.fault());
                    try {
                        RunResult r = ScenarioRun.run(s, plan, cluster, settings, tap, monitor);
                        runs.add(r);
                        console.printf(Locale.ROOT, "    done in %.1f s: %s%n", r.wallMillis() / 1000.0,
                                ComparisonReport.summary(r));
                    } catch (Exception | Error e) {
                        failed = true;
                        console.println("    FAILED: " + e);
                        e.printStackTrace(console);
                    }
                }
            }
            results.put("foreignCoresWholeRun", Math.round(monitor.coresSince(load) * 100) / 100.0);
        }
        results.put("loadAverageAtEnd", ForeignLoadMonitor.loadAverages());
        results.put("durationMinutes", Math.round((System.nanoTime() - start) / 6e8) / 100.0);
        ComparisonReport.analyse(results, runs);
        Files.writeString(out.resolve(base + ".json"), Json.write(results), StandardCharsets.UTF_8);
        String md = ComparisonReport.markdown(results, runs, base + ".png");
        Files.writeString(out.resolve(base + ".md"), md, StandardCharsets.UTF_8);
        try {
            FailbackChart.write(runs, out.resolve(base + ".png"));
        } catch (IOException | RuntimeException e) {
            failed = true;
            console.println("chart FAILED: " + e);
        }
        console.println();
        console.println(md);
        console.println("written: " + out.resolve(base + ".json") + ", .md, .png, .log");
        System.exit(failed ? 1 : 0); // Dubbo's and ZooKeeper's leftover threads are not all daemons
    }

    private static Map<String, Object> settingsMap(ScenarioRun.Settings s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("timeoutMillis", s.timeout().toMillis());
        m.put("retries", "3 (Dubbo's default, both clusters)");
        m.put("failbacktasks", "100 (Dubbo's default, both clusters)");
        m.put("dubboFailback", "retry every 5 s (fixed, RETRY_FAILED_PERIOD), on a HashedWheelTimer with a 1 s tick "
                + "and 32 buckets, maxPendingTimeouts = failbacktasks");
        m.put("wheelfailback", "failback.delay=" + s.firstDelayMillis() + " ms, multiplier 2, max delay 60 s, jitter "
                + "0.2 (defaults): retries after 5, 10, 20 s, each +-20%; shared wheel with a 10 ms tick");
        m.put("settleMillisAfterLastSend", s.settle().toMillis());
        m.put("probePeriodMillis", TimerProbe.PROBE_PERIOD_MILLIS);
        m.put("workerSamplePeriodMillis", TimerProbe.SAMPLE_PERIOD_MILLIS);
        return m;
    }
}
