package io.rpctimer.bench.massfailure;

import io.rpctimer.bench.BenchArgs;
import io.rpctimer.bench.Figures;
import io.rpctimer.bench.ForeignLoadMonitor;
import io.rpctimer.bench.Json;
import io.rpctimer.bench.MachineInfo;
import io.rpctimer.testkit.DubboNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Mass failure and recovery: {@code calls} calls while every provider fails, then the providers recover;
 * Dubbo's {@code failback} first, then {@code wheelfailback}, each on fresh components in this JVM
 * ({@link MassFailureRun}). Writes {@code massfailure-<mode>[-<label>].json} and {@code .md} to the output directory.
 *
 * <p>Targets (wheelfailback): nothing lost; the retry timer's tick lag under 50 ms throughout; the heap per pending
 * retry at most 300 bytes beyond its arguments.
 *
 * <pre>
 * benchmarks/run.sh quick massfailure   # 20,000 calls, about 2 min on a quiet 2-core machine
 * benchmarks/run.sh full massfailure    # 100,000 calls, about 5 min
 * benchmarks/run.sh full massfailure --label journal --clusters wheelfailback --param failback.store=embedded
 * benchmarks/run.sh full massfailure --label budget --clusters wheelfailback --param failback.budget.minrate=1000
 * java -Xmx2g -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.massfailure.MassFailureComparison quick|full
 *      [outDir] [--calls N] [--threads N] [--clusters failback,wheelfailback] [--label NAME] [--param key=value]...
 * </pre>
 *
 * <p>Exit code 0 when every run completed (whatever the targets say), 1 if a run failed, 2 on bad arguments.
 *
 * <p><b>Threading:</b> single-threaded {@code main}.
 */
public final class MassFailureComparison {

    static final double MAX_TICK_LAG_MS = 50;
    static final double MAX_BYTES_PER_PENDING = 300;

    private MassFailureComparison() {
    }

    /**
     * @return the settings of a mode, with the overrides of the command line. The first retry comes after the heap
     *         is read (sending 100,000 failing calls takes about 10 s here, 20,000 about 2 s): a retry that ran
     *         before the reading would add its in-flight state to the heap per pending retry.
     */
    static MassFailureRun.Settings settings(String mode, BenchArgs args) {
        boolean full = BenchArgs.mode(mode).equals("full");
        return new MassFailureRun.Settings(args.intOption("calls", full ? 100_000 : 20_000, 1),
                args.intOption("threads", 32, 1), 10, full ? 30_000 : 5_000, Duration.ofMinutes(full ? 5 : 3),
                args.params());
    }

    public static void main(String[] args) throws Exception {
        BenchArgs parsed;
        MassFailureRun.Settings settings;
        List<String> clusters;
        try {
            parsed = BenchArgs.parse(args, List.of("calls", "threads", "clusters", "label"));
            settings = settings(parsed.positional(0, "quick"), parsed);
            clusters = List.of(parsed.option("clusters", MassFailureRun.DUBBO + "," + MassFailureRun.WHEEL)
                    .split(","));
            if (!parsed.option("label", "x").matches("[A-Za-z0-9-]{1,40}")) {
                throw new IllegalArgumentException("--label: '" + parsed.option("label", "") + "' (expected: 1 to 40"
                        + " letters, digits or '-')");
            }
            for (String c : clusters) {
                if (!c.equals(MassFailureRun.DUBBO) && !c.equals(MassFailureRun.WHEEL)) {
                    throw new IllegalArgumentException("--clusters: '" + c + "' (expected: failback, wheelfailback)");
                }
            }
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(2);
            return;
        }
        String mode = parsed.positional(0, "quick");
        Path out = Path.of(parsed.positional(1, "benchmarks/results/massfailure"));
        Files.createDirectories(out);
        if (System.getProperty("dubbo.application.logger") == null) {
            System.setProperty("dubbo.application.logger", "slf4j");
        }
        DubboNode.disableDubboShutdownHooks();
        Map<String, Object> results = new LinkedHashMap<>();
        results.put("mode", mode);
        results.put("machine", MachineInfo.collect());
        results.put("settings", settingsMap(settings));
        List<Map<String, Object>> runs = new ArrayList<>();
        boolean failed = false;
        long start = System.nanoTime();
        try (ForeignLoadMonitor monitor = ForeignLoadMonitor.start()) {
            for (String cluster : clusters) {
                System.out.printf(Locale.ROOT, "%s: %d calls while both providers fail every call%n", cluster,
                        settings.calls());
                ForeignLoadMonitor.Mark mark = monitor.mark();
                try {
                    Map<String, Object> r = MassFailureRun.run(cluster, settings);
                    r.put("foreignCores", Math.round(monitor.coresSince(mark) * 100) / 100.0);
                    runs.add(r);
                    System.out.println("    " + r);
                } catch (Exception | Error e) {
                    failed = true;
                    System.out.println("    FAILED: " + e);
                    e.printStackTrace(System.out);
                }
            }
        }
        results.put("runs", runs);
        results.put("targets", targets(runs));
        results.put("durationMinutes", Math.round((System.nanoTime() - start) / 6e8) / 100.0);
        String label = parsed.option("label", "");
        String base = "massfailure-" + mode + (label.isEmpty() ? "" : "-" + label);
        Files.writeString(out.resolve(base + ".json"), Json.write(results), StandardCharsets.UTF_8);
        String md = markdown(results);
        Files.writeString(out.resolve(base + ".md"), md, StandardCharsets.UTF_8);
        System.out.println();
        System.out.println(md);
        System.out.println("written: " + out.resolve(base + ".json") + ", .md");
        System.exit(failed ? 1 : 0);
    }

    private static Map<String, Object> settingsMap(MassFailureRun.Settings s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("calls", s.calls());
        m.put("senderThreads", s.senderThreads() + " sync callers, as fast as the calls fail");
        m.put("outage", "both providers fail every call at the RPC level (errorRate 1.0) until all calls are sent "
                + "and the heap is measured");
        m.put("retries", s.retries());
        m.put("failbacktasks", 2L * s.calls());
        m.put("firstDelayMillis", s.firstDelayMillis() + " (wheelfailback; Dubbo's failback: every 5 s)");
        m.put("recoveryLimitSeconds", s.recoveryLimit().toSeconds());
        m.put("extraParams", s.params());
        m.put("maxHeap", Runtime.getRuntime().maxMemory());
        return m;
    }

    /** @return the targets, judged on the wheelfailback run (Dubbo's figures beside them for reference) */
    static List<Map<String, Object>> targets(List<Map<String, Object>> runs) {
        List<Map<String, Object>> t = new ArrayList<>();
        for (Map<String, Object> r : runs) {
            if (!MassFailureRun.WHEEL.equals(r.get("cluster"))) {
                continue;
            }
            double lost = MassFailureRun.num(r, "lost");
            t.add(Figures.target("nothing lost", lost, "== 0", lost == 0));
            double lag = MassFailureRun.num(r, "tickLagWorstMs");
            t.add(Figures.target("tick lag < 50 ms throughout (ms)", lag, "< " + MAX_TICK_LAG_MS,
                    lag < MAX_TICK_LAG_MS));
            double bytes = MassFailureRun.num(r, "heapPerPendingRetryBytes");
            t.add(Figures.target("heap per pending retry beyond its arguments (bytes)", bytes,
                    "<= " + MAX_BYTES_PER_PENDING,
                    bytes <= MAX_BYTES_PER_PENDING));
        }
        return t;
    }

    /** The figures in the report, by key, with their labels. */
    private static final String[][] ROWS = {
            {"calls", "calls sent"},
            {"sendSeconds", "sending took (s)"},
            {"pendingAtPeak", "retries pending when all were sent"},
            {"heapPerPendingRetryBytes", "heap per pending retry, beyond its arguments (bytes, after GC)"},
            {"retriesArrivedBeforeHeapReading", "  retries already sent at that reading (clean: 0)"},
            {"heapPeakBytes", "peak heap used, garbage included (bytes)"},
            {"tickLagWhileSendingMs", "worst tick lag while sending (ms)"},
            {"tickLagDuringRecoveryMs", "worst tick lag during recovery (ms)"},
            {"wheelMaxTickLagMsWholeRun", "shared wheel's own worst tick lag, forced GCs included (ms)"},
            {"lastDeliveryAfterRecoverySeconds", "last call delivered, after recovery (s)"},
            {"lastDeliveryAfterFirstSendSeconds", "last call delivered, after the first send (s)"},
            {"cpuCoresWhileSending", "CPU of this JVM while sending (cores; consumer, providers, ZooKeeper)"},
            {"cpuCoresDuringRecovery", "CPU of this JVM until the last delivery or the limit (cores)"},
            {"delivered", "calls delivered"},
            {"lost", "calls lost"},
            {"lostSilently", "  of which silently"},
            {"duplicates", "duplicate deliveries"},
            {"peakRetriesPerSecondAtProviders", "providers' peak incoming retries per second"},
            {"callerSawError", "callers that saw an error"},
    };

    @SuppressWarnings("unchecked")
    static String markdown(Map<String, Object> results) {
        StringBuilder md = new StringBuilder("## Mass failure and recovery\n");
        md.append('\n').append(Figures.runLine(results)).append("\n\n");
        List<Map<String, Object>> runs = (List<Map<String, Object>>) results.get("runs");
        md.append("| figure");
        runs.forEach(r -> md.append(" | ").append(r.get("cluster")));
        md.append(" |\n|---");
        runs.forEach(r -> md.append("|---"));
        md.append("|\n");
        for (String[] row : ROWS) {
            md.append("| ").append(row[1]);
            runs.forEach(r -> md.append(" | ").append(r.containsKey(row[0]) ? fmt(r.get(row[0])) : "—"));
            md.append(" |\n");
        }
        md.append("\n### Targets (wheelfailback)\n\n| target | measured | threshold | met |\n|---|---|---|---|\n");
        for (Map<String, Object> t : (List<Map<String, Object>>) results.get("targets")) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s |%n", t.get("target"), fmt(t.get("measured")),
                    t.get("threshold"), (Boolean) t.get("met") ? "yes" : "**no**"));
        }
        return md.toString();
    }

    private static String fmt(Object v) {
        if (v instanceof Double d) {
            return Double.isNaN(d) ? "n/a" : String.format(Locale.ROOT, Math.abs(d) >= 100 ? "%.0f" : "%.2f", d);
        }
        return String.valueOf(v);
    }
}
