package io.rpctimer.bench.happypath;

import io.rpctimer.bench.BenchArgs;
import io.rpctimer.bench.ForeignLoadMonitor;
import io.rpctimer.bench.Json;
import io.rpctimer.bench.MachineInfo;
import io.rpctimer.bench.TwoProviders;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.testkit.DubboNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.dubbo.config.ReferenceConfig;

/**
 * The happy path: what each consumer configuration ({@link Config}: Dubbo's {@code failover} and
 * {@code failback}, {@code wheelfailback}, {@code wheelfailback} + {@code timeoutcheck=true}) costs on calls that
 * succeed. Real Dubbo RPC on 127.0.0.1: an embedded ZooKeeper, two {@link DemoProvider}s without faults, and one
 * consumer per configuration (each its own Dubbo framework and connections), all started once. The providers'
 * ledgers count only (no entry per {@code retry.id}), so they cost the same whatever the consumer sends. Each
 * {@link Workload} (sync and async, at saturation and at a fixed rate) runs on every configuration in turn; the
 * order of the configurations rotates by one from round to round and the rounds are a multiple of the
 * configurations, so each configuration runs in each position equally often and slow drift of the machine hits each
 * alike. Before the first round every configuration runs every workload once, unmeasured (JIT), and each measured
 * phase has its own warm-up; a GC runs between phases. Each phase also records the process CPU time per answered
 * call over its measured window (the whole JVM: consumer, providers, ZooKeeper), a figure that does not depend on
 * how loaded the machine was.
 *
 * <p>With {@code --turns calls} the configurations take turns call by call instead: each round runs each workload
 * once, one phase in which call {@code i} goes to configuration {@code i mod 4} (the order rotating by one each
 * round), so that a stall of the machine falls on every configuration alike. Latency is then compared within one
 * phase; throughput and CPU time are shared, so only the p99 targets are judged. Each configuration then opens
 * {@link #IO_THREADS} connections to each provider, so that every one of them has one on each of Dubbo's I/O threads.
 *
 * <p>Writes {@code happypath-<mode>.json} (every round's figures, the merged percentiles, ratios, targets) and
 * {@code .md} to the output directory; in turns of calls {@code happypath-<mode>-calls.json} and {@code .md}.
 *
 * <pre>
 * benchmarks/run.sh quick happypath    # 4 rounds, 2 s + 3 s a phase: about 7 min on a quiet 2-core machine
 * benchmarks/run.sh full happypath     # 8 rounds, 2 s + 4 s a phase: about 15 min
 * java -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.happypath.HappyPathComparison quick|full [outDir]
 *      [--rate 3000] [--threads 8] [--outstanding 64] [--rounds N (a multiple of 4)] [--workload 1..4 (one only)]
 *      [--turns phases|calls]
 * </pre>
 *
 * <p>Exit code 0 when every phase ran, 1 if one failed, 2 on bad arguments.
 *
 * <p><b>Threading:</b> single-threaded {@code main}; each phase starts and joins its own caller threads.
 */
public final class HappyPathComparison {

    static final Duration TIMEOUT = Duration.ofSeconds(1);

    /**
     * Dubbo's Netty I/O threads: the consumers' (one group in the JVM) and each provider's. Both hand connections
     * to their threads in turn, as they are made; in turns of calls every configuration is busy at once, so each
     * opens this many connections to each provider, one on every I/O thread on both sides, and none is placed
     * better than another.
     */
    static final int IO_THREADS = org.apache.dubbo.remoting.Constants.DEFAULT_IO_THREADS;

    /**
     * How long and how hard a run is.
     *
     * @param rounds      measured rounds, each running every workload on every configuration; a multiple of the
     *                    number of configurations
     * @param warmup      each phase's warm-up, thrown away
     * @param measure     each phase's measurement
     * @param jitWarmup   whether every configuration runs every workload once before the first round
     * @param workloads   the workloads
     * @param callTurns   whether the configurations take turns call by call in one phase per workload, rather
     *                    than a phase each
     */
    record Settings(String mode, int rounds, Duration warmup, Duration measure, boolean jitWarmup,
                    List<Workload> workloads, boolean callTurns) {

        static Settings of(String mode, BenchArgs args) {
            boolean full = BenchArgs.mode(mode).equals("full");
            List<Workload> workloads = Workload.standard(args.intOption("threads", 8, 1),
                    args.intOption("outstanding", 64, 1), args.intOption("rate", 3000, 1));
            int only = args.intOption("workload", 0, 0);
            if (only > workloads.size()) {
                throw new IllegalArgumentException("workload: " + only + " (expected: 0 for all, or 1.."
                        + workloads.size() + ")");
            }
            int configs = Config.values().length;
            int rounds = args.intOption("rounds", full ? 2 * configs : configs, 1);
            if (rounds % configs != 0) {
                throw new IllegalArgumentException("rounds: " + rounds + " (expected: a multiple of " + configs
                        + ", so that every configuration runs in every position equally often)");
            }
            String turns = args.option("turns", "phases");
            if (!turns.equals("phases") && !turns.equals("calls")) {
                throw new IllegalArgumentException("--turns: '" + turns + "' (expected: phases or calls)");
            }
            return new Settings(mode, rounds, Duration.ofSeconds(2), Duration.ofSeconds(full ? 4 : 3), true,
                    only == 0 ? workloads : List.of(workloads.get(only - 1)), turns.equals("calls"));
        }

        /** @return the estimated wall time of the phases, in seconds */
        double estimatedSeconds() {
            double phase = warmup.toMillis() / 1000.0 + measure.toMillis() / 1000.0 + 0.3;
            int phases = callTurns ? 1 : Config.values().length;
            return workloads.size() * phases * (rounds * phase + (jitWarmup ? warmup.toMillis() / 1000.0 : 0));
        }
    }

    private HappyPathComparison() {
    }

    public static void main(String[] args) throws Exception {
        BenchArgs parsed;
        Settings settings;
        try {
            parsed = BenchArgs.parse(args, List.of("rate", "threads", "outstanding", "rounds", "workload",
                    "turns"));
            settings = Settings.of(parsed.positional(0, "quick"), parsed);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(2);
            return;
        }
        Path out = Path.of(parsed.positional(1, "benchmarks/results/happypath"));
        Files.createDirectories(out);
        if (System.getProperty("dubbo.application.logger") == null) {
            System.setProperty("dubbo.application.logger", "slf4j"); // else Dubbo probes log4j first
        }
        DubboNode.disableDubboShutdownHooks(); // the run stops its own nodes
        Map<String, Object> results = new LinkedHashMap<>();
        results.put("mode", settings.mode());
        results.put("machine", MachineInfo.collect());
        results.put("loadAverageAtStart", ForeignLoadMonitor.loadAverages());
        boolean failed = false;
        long start = System.nanoTime();
        try (ForeignLoadMonitor monitor = ForeignLoadMonitor.start()) {
            ForeignLoadMonitor.Mark mark = monitor.mark();
            System.out.printf(Locale.ROOT, "happy path, %s run: %d workloads x %d configurations x %d rounds, "
                    + "about %.0f s of load%n", settings.mode(), settings.workloads().size(), Config.values().length,
                    settings.rounds(), settings.estimatedSeconds());
            try {
                results.putAll(run(settings, System.out));
            } catch (Exception | Error e) {
                failed = true;
                System.out.println("FAILED: " + e);
                e.printStackTrace(System.out);
            }
            results.put("foreignCoresWholeRun", Math.round(monitor.coresSince(mark) * 100) / 100.0);
        }
        results.put("loadAverageAtEnd", ForeignLoadMonitor.loadAverages());
        results.put("durationMinutes", Math.round((System.nanoTime() - start) / 6e8) / 100.0);
        String base = "happypath-" + settings.mode() + (settings.callTurns() ? "-calls" : "");
        Files.writeString(out.resolve(base + ".json"), Json.write(results), StandardCharsets.UTF_8);
        String md = HappyPathReport.markdown(results);
        Files.writeString(out.resolve(base + ".md"), md, StandardCharsets.UTF_8);
        System.out.println();
        System.out.println(md);
        System.out.println("written: " + out.resolve(base + ".json") + ", .md");
        System.exit(failed ? 1 : 0); // Dubbo's and ZooKeeper's leftover threads are not all daemons
    }

    /**
     * Starts the components, runs every round, stops the components.
     *
     * @return {@code settings}, {@code rounds} (raw) and the analysis ({@link HappyPathReport#analyse})
     */
    static Map<String, Object> run(Settings settings, java.io.PrintStream log) throws Exception {
        TwoProviders rig = TwoProviders.start();
        Map<Config, DubboNode> consumers = new EnumMap<>(Config.class);
        try {
            rig.providers().forEach(p -> p.ledger().setCountsOnly(true));
            String registry = rig.registry();
            Map<Config, NotificationService> services = new EnumMap<>(Config.class);
            for (Config c : Config.values()) {
                ReferenceConfig<NotificationService> ref = reference(c);
                if (settings.callTurns()) {
                    ref.setConnections(IO_THREADS);
                }
                consumers.put(c, DubboNode.create("happypath-" + c.name().toLowerCase(Locale.ROOT), registry)
                        .reference(ref).start());
                services.put(c, ref.get());
            }
            for (NotificationService service : services.values()) {
                service.send(LoadPhase.CALL_ID, LoadPhase.MESSAGE); // connects, and fails fast if it cannot
            }
            List<Map<String, Object>> rounds = rounds(settings, services, rig.providers(), log);
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("settings", settingsMap(settings));
            r.put("rounds", rounds);
            r.putAll(HappyPathReport.analyse(settings, rounds));
            return r;
        } finally {
            consumers.values().forEach(DubboNode::close);
            rig.close();
        }
    }

    static ReferenceConfig<NotificationService> reference(Config c) {
        ReferenceConfig<NotificationService> ref = new ReferenceConfig<>();
        ref.setInterface(NotificationService.class);
        ref.setCluster(c.cluster);
        ref.setTimeout((int) TIMEOUT.toMillis());
        ref.setCheck(false);
        ref.setParameters(new LinkedHashMap<>(c.parameters));
        return ref;
    }

    private static List<Map<String, Object>> rounds(Settings s, Map<Config, NotificationService> services,
                                                    List<DemoProvider> providers, java.io.PrintStream log)
            throws InterruptedException {
        Config[] configs = Config.values();
        if (s.jitWarmup()) {
            for (Workload w : s.workloads()) {
                if (s.callTurns()) {
                    LoadPhase.runInTurns(List.copyOf(services.values()), w, Duration.ZERO, s.warmup());
                    continue;
                }
                for (Config c : configs) {
                    LoadPhase.run(services.get(c), w, Duration.ZERO, s.warmup());
                }
            }
            log.println("JIT warm-up done");
        }
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int round = 0; round < s.rounds(); round++) {
            for (Workload w : s.workloads()) {
                List<Config> order = new ArrayList<>();
                for (int k = 0; k < configs.length; k++) {
                    order.add(configs[(k + round) % configs.length]);
                }
                List<LoadPhase.Result> results = new ArrayList<>();
                if (s.callTurns()) {
                    phaseStart(providers);
                    results.addAll(LoadPhase.runInTurns(order.stream().map(services::get).toList(), w, s.warmup(),
                            s.measure()));
                }
                for (int k = 0; k < order.size(); k++) {
                    Config c = order.get(k);
                    if (!s.callTurns()) {
                        phaseStart(providers);
                        results.add(LoadPhase.run(services.get(c), w, s.warmup(), s.measure()));
                    }
                    LoadPhase.Result r = results.get(k);
                    rows.add(HappyPathReport.row(round + 1, k + 1, w, c, r));
                    log.printf(Locale.ROOT, "round %d, position %d, %s, %s: %.0f calls/s, p99 %.3f ms, "
                            + "CPU %.1f us/call, GC %d ms, failed %d%n", round + 1, k + 1, w.label(), c.label,
                            r.perSecond(), r.latencyNanos().getValueAtPercentile(99) / 1e6, r.cpuMicrosPerCall(),
                            r.gcMillis(), r.failed());
                }
            }
        }
        return rows;
    }

    private static void phaseStart(List<DemoProvider> providers) {
        providers.forEach(p -> p.ledger().reset());
        System.gc();
    }

    private static Map<String, Object> settingsMap(Settings s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("rounds", s.rounds());
        m.put("warmupSecondsPerPhase", s.warmup().toMillis() / 1000.0);
        m.put("measureSecondsPerPhase", s.measure().toMillis() / 1000.0);
        m.put("jitWarmupRound", s.jitWarmup());
        m.put("workloads", s.workloads().stream().map(Workload::label).toList());
        m.put("timeoutMillis", TIMEOUT.toMillis());
        m.put("providers", "2 DemoProviders, no faults, embedded ZooKeeper, all on 127.0.0.1 in this JVM");
        m.put("configurations", java.util.Arrays.stream(Config.values())
                .map(c -> c.label + " (cluster=" + c.cluster + ", " + c.parameters + ")").toList());
        m.put("turns", s.callTurns() ? "calls" : "phases");
        m.put("connectionsPerProvider", s.callTurns() ? IO_THREADS : 1);
        m.put("order", s.callTurns()
                ? "one phase per workload and round, in which the configurations take turns call by call; the order "
                        + "rotates by one each round; a GC between phases"
                : "configurations rotate by one each round, so each runs in each position equally often; "
                        + "a GC between phases");
        m.put("providerLedger", "counts only (no entry per retry id)");
        m.put("cpu", "process CPU time over the measured window per answered call: the consumer, both providers "
                + "and ZooKeeper, all in this JVM" + (s.callTurns() ? "; in turns of calls, shared alike" : ""));
        return m;
    }
}
