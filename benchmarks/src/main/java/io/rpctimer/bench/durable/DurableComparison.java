package io.rpctimer.bench.durable;

import io.rpctimer.bench.BenchArgs;
import io.rpctimer.bench.ForeignLoadMonitor;
import io.rpctimer.bench.MachineInfo;
import io.rpctimer.bench.ResultsPage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The durable path against db-scheduler, side by side on one embedded PostgreSQL: {@code calls} calls due at once
 * (the end of an outage) drained by 1, 2 and 4 instances of each system, every instance a JVM of its own
 * ({@link DrainWorker}), rounds alternating which system goes first. See {@link Trial} for one drain and
 * {@code docs/benchmarks/durable-path.md} for the design and the results.
 *
 * <p>Run (writes {@code benchmarks/results/durable/durable-<mode>[-<label>].json}; {@link DurableReport} turns it
 * into the doc's tables):
 * <pre>
 * benchmarks/run.sh full durable        # 100,000 calls, 3 rounds: about 30 min on a quiet 2-core machine
 * benchmarks/run.sh quick durable       # 10,000 calls, 1 round: about 5 min
 * java -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.durable.DurableComparison full benchmarks/results/durable \
 *     [--calls N] [--rounds R] [--instances 1,2,4] [--warmup W] [--label name]
 *     [--failbacktasks n --lease ms --claimperiod ms]             # rpc-timer's tuning
 *     [--threads n --lower x --upper y --pollms ms]                # db-scheduler's tuning
 *     [--param synchronous_commit=off ...]                        # PostgreSQL settings
 *     [--jfr /tmp/jfr/]                                            # a flight recording of every worker
 * </pre>
 *
 * <p><b>Threading:</b> a main program; trials run one after the other.
 */
public final class DurableComparison {

    private DurableComparison() {
    }

    public static void main(String[] argv) throws Exception {
        BenchArgs a = BenchArgs.parse(argv, List.of("calls", "warmup", "rounds", "instances", "label", "failbacktasks",
                "lease", "claimperiod", "threads", "lower", "upper", "pollms", "limitminutes", "jfr"));
        String mode = BenchArgs.mode(a.positional(0, "quick"));
        Path out = Path.of(a.positional(1, "benchmarks/results/durable"));
        String label = a.option("label", "");
        Map<String, Object> results = run(mode, DurableSettings.of(mode, a), Files.createTempDirectory("durable"));
        ResultsPage.write(out, "durable", mode, label, results, DurableReport::markdown);
    }

    /** Runs every trial; the work directory gets the workers' log. @return the results, for JSON */
    static Map<String, Object> run(String mode, DurableSettings s, Path work) throws Exception {
        long start = System.nanoTime();
        Map<String, Object> results = new LinkedHashMap<>();
        results.put("mode", mode);
        results.put("machine", MachineInfo.collect());
        results.put("loadAverageAtStart", ForeignLoadMonitor.loadAverages());
        results.put("settings", s.describe());
        List<Map<String, Object>> trials = new ArrayList<>();
        try (PgServer pg = PgServer.start(s.pg())) {
            results.put("postgresql", pg.describe());
            Trial trial = new Trial(pg, s, work);
            for (int round = 0; round < s.rounds(); round++) {
                for (int i = 0; i < s.instances().size(); i++) {
                    int n = s.instances().get(i);
                    for (String system : order(round, i)) {
                        System.err.printf("round %d, %d instance(s), %s ...%n", round + 1, n, system);
                        Map<String, Object> t = trial.run(system, n, round);
                        System.err.printf("  %.0f calls/s, %.2f transactions/call, %.0f us CPU/call, tally %s%n",
                                (Double) t.get("callsPerSecond"), (Double) t.get("transactionsPerCall"),
                                (Double) t.get("cpuUsPerCall"), t.get("tally"));
                        trials.add(t);
                    }
                }
            }
        }
        results.put("trials", trials);
        results.put("loadAverageAtEnd", ForeignLoadMonitor.loadAverages());
        results.put("durationMinutes", Math.round((System.nanoTime() - start) / 6e9) / 10.0);
        results.put("workDirectory", work.toString());
        return results;
    }

    /** @return the systems in the order they run: alternating by round and instance count */
    static List<String> order(int round, int instanceIndex) {
        return (round + instanceIndex) % 2 == 0 ? List.of(DrainWorker.RPC_TIMER, DrainWorker.DB_SCHEDULER)
                : List.of(DrainWorker.DB_SCHEDULER, DrainWorker.RPC_TIMER);
    }
}
