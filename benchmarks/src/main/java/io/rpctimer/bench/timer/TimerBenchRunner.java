package io.rpctimer.bench.timer;

import io.rpctimer.bench.ForeignLoadMonitor;
import io.rpctimer.bench.Json;
import io.rpctimer.bench.MachineInfo;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the five timer cases for every implementation in one go and writes the raw numbers, the ratios and the
 * targets to {@code <out>/timer-<mode>.json} and {@code .md}, and the main comparisons to {@code .png}.
 *
 * <p>JMH cases run one configuration at a time through JMH's API (forks, warm-up and measurement from the mode;
 * every fork with a pre-touched 4 GB heap, so that first-touch page faults do not land in some measurements); the
 * other cases run each implementation in its own JVM. Before each measurement the runner waits for the rest of
 * the machine to be quiet ({@link ForeignLoadMonitor}); a measurement during which other processes used more than
 * {@value #DISTURBED_CORES} of a core on average is repeated (up to {@code attempts} times, the least disturbed
 * kept), and the foreign load is recorded with every row.
 *
 * <p>Every JMH fork and harness JVM runs on the runner's own JVM. {@code run.sh --jdk <home>} starts the runner
 * on another JDK and labels the result files with it ({@code -Dbench.jvmLabel=jdk25}: {@code timer-full-jdk25.*});
 * on JDK 24 and later every JVM gets {@link BenchConfig#jvmFlags()}.
 *
 * <p>Case 1's report shows every fork's iterations ({@link ForkSpread}), and its every-fork targets pair the
 * slowest fork of one cell with the fastest of the other. System properties narrow a run: {@code bench.cases} (some
 * of {@link #CASES}, comma-separated; the files are then named {@code timer-<mode>-<case>+<case>}),
 * {@code bench.forks}, and on a machine that is never quiet {@code bench.attempts=1} and
 * {@code bench.quietWaitMillis=0}.
 *
 * <pre>
 * benchmarks/run.sh quick      # or: java -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.timer.TimerBenchRunner quick benchmarks/results
 * benchmarks/run.sh full
 * benchmarks/run.sh full timer --cases scheduleCancel --forks 8
 * benchmarks/run.sh full timer --jdk /usr/lib/jvm/temurin-25-jdk-amd64
 * </pre>
 *
 * <p><b>Threading:</b> single-threaded (plus the monitor's sampler).
 */
public final class TimerBenchRunner {

    static final double QUIET_CORES = 0.10;
    /**
     * JMH warm-up iterations of 1 s for case 1, the same in both modes and for every implementation. Netty's
     * schedule + cancel rate keeps climbing for its first 2–4 s in a fork (JIT of its worker loop and queues); the
     * quick mode used to warm up for 1 s only, which measured Netty before it was warm. 5 s covers that climb.
     */
    static final int WARMUP_ITERATIONS = 5;
    /**
     * Every JMH fork's heap, for every implementation: fixed and pre-touched, so that first-touch page faults do not
     * land in some measurements (the more a timer allocates, the more it paid). The runner passes these itself, so
     * that a fork on another JVM ({@code run.sh --jdk}) gets them too. A peer whose hand-off backlog is GC-bound
     * (Netty, Dubbo: see the GC share in the report) is sensitive to the heap, so the system property
     * {@code bench.jmhHeap} (run.sh: the environment variable {@code BENCH_JMH_HEAP}) replaces these flags, for every
     * implementation alike, to check that sensitivity; the flags used are in the results ({@code forkJvm}).
     */
    static final List<String> JMH_HEAP = List.of(System.getProperty("bench.jmhHeap",
            "-Xms4g -Xmx4g -XX:+AlwaysPreTouch").trim().split("\\s+"));
    static final double DISTURBED_CORES = 0.15;

    /**
     * How much of everything a run does.
     *
     * @param forks              JMH forks per configuration
     * @param warmupIterations   JMH warm-up iterations (1 s each for throughput, single shots for case 2)
     * @param measureIterations  JMH measurement iterations
     * @param fireAllWarmup      case 2 warm-up single shots
     * @param fireAllMeasure     case 2 measured single shots
     * @param latenessWarmup     case 4 warm-up rounds
     * @param latenessRounds     case 4 measured rounds (1,000 timers each)
     * @param idleWindowMillis   case 5 measurement window, per state (empty, 1M pending)
     * @param attempts           tries of a disturbed measurement
     * @param quietSamples       consecutive quiet 500 ms samples wanted before a measurement
     * @param quietWaitMillis    longest wait for a quiet machine before a measurement
     */
    record RunSettings(String name, int forks, int warmupIterations, int measureIterations, int fireAllWarmup,
                       int fireAllMeasure, int latenessWarmup, int latenessRounds, long idleWindowMillis,
                       int attempts, int quietSamples, long quietWaitMillis) {

        static RunSettings of(String name) {
            return switch (name) {
                case "quick" -> new RunSettings("quick", 1, WARMUP_ITERATIONS, 3, 2, 3, 1, 1, 1_000, 2, 2, 30_000);
                case "full" -> new RunSettings("full", 5, WARMUP_ITERATIONS, 5, 5, 10, 2, 3, 5_000, 4, 4, 120_000);
                default -> throw new IllegalArgumentException("mode: " + name + " (expected: quick or full)");
            };
        }

        /**
         * @return these settings with the forks, attempts and quiet wait replaced where the system properties
         *     {@code bench.forks}, {@code bench.attempts} and {@code bench.quietWaitMillis} are set: on a machine
         *     that is never quiet, waiting and repeating only make the run longer
         */
        RunSettings withOverrides() {
            return new RunSettings(name, positive("bench.forks", forks), warmupIterations, measureIterations,
                    fireAllWarmup, fireAllMeasure, latenessWarmup, latenessRounds, idleWindowMillis,
                    positive("bench.attempts", attempts), quietSamples,
                    Long.getLong("bench.quietWaitMillis", quietWaitMillis));
        }

        private static int positive(String property, int otherwise) {
            int value = Integer.getInteger(property, otherwise);
            if (value <= 0) {
                throw new IllegalArgumentException(property + ": " + value + " (expected: > 0)");
            }
            return value;
        }
    }

    /** The cases a run can do, in the order it does them; the system property {@code bench.cases} picks some. */
    static final List<String> CASES = List.of("scheduleCancel", "fireAll", "memory", "lateness", "idleCpu");

    /**
     * @param property a comma-separated list of {@link #CASES}, or null for all
     * @return the cases to run, in {@link #CASES} order
     * @throws IllegalArgumentException naming the first unknown case
     */
    static List<String> cases(String property) {
        if (property == null || property.isBlank()) {
            return CASES;
        }
        List<String> wanted = List.of(property.trim().split("\\s*,\\s*"));
        for (String c : wanted) {
            if (!CASES.contains(c)) {
                throw new IllegalArgumentException("bench.cases: " + c + " (expected some of " + CASES + ")");
            }
        }
        return CASES.stream().filter(wanted::contains).toList();
    }

    private final RunSettings settings;
    private final ForeignLoadMonitor monitor;
    private final Map<String, Object> results;

    private TimerBenchRunner(RunSettings settings, ForeignLoadMonitor monitor, Map<String, Object> results) {
        this.settings = settings;
        this.monitor = monitor;
        this.results = results;
    }

    public static void main(String[] args) throws IOException {
        RunSettings settings = RunSettings.of(args.length > 0 ? args[0] : "quick").withOverrides();
        List<String> cases = cases(System.getProperty("bench.cases"));
        Path out = Path.of(args.length > 1 ? args[1] : "benchmarks/results");
        Files.createDirectories(out);
        Map<String, Object> results = new LinkedHashMap<>();
        results.put("mode", settings.name());
        results.put("machine", MachineInfo.collect());
        results.put("settings", settingsMap(settings));
        results.put("forkJvm", BenchConfig.javaBinary() + " " + String.join(" ", JMH_HEAP) + " "
                + String.join(" ", BenchConfig.jvmFlags()));
        long start = System.nanoTime();
        try (ForeignLoadMonitor monitor = ForeignLoadMonitor.start()) {
            TimerBenchRunner runner = new TimerBenchRunner(settings, monitor, results);
            Map<String, Runnable> steps = Map.of("scheduleCancel", runner::scheduleCancel, "fireAll",
                    runner::fireAll, "memory", runner::memory, "lateness", runner::lateness, "idleCpu", runner::idleCpu);
            cases.forEach(c -> steps.get(c).run());
        }
        results.put("durationMinutes", (System.nanoTime() - start) / 60e9);
        ResultsReport.analyse(results);
        String base = "timer-" + settings.name() + BenchConfig.jvmSuffix()
                + (cases.equals(CASES) ? "" : "-" + String.join("+", cases));
        Files.writeString(out.resolve(base + ".json"), Json.write(results), StandardCharsets.UTF_8);
        // the chart draws every case: a run of some cases has its tables only
        String png = cases.equals(CASES) ? base + ".png" : null;
        Files.writeString(out.resolve(base + ".md"), ResultsReport.markdown(results, png), StandardCharsets.UTF_8);
        if (png != null) {
            ResultsChart.write(results, out.resolve(png));
        }
        System.out.println(ResultsReport.markdown(results, png));
        System.out.println("written: " + out.resolve(base + ".json") + ", .md" + (png != null ? ", .png" : ""));
    }

    private static Map<String, Object> settingsMap(RunSettings s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cases", cases(System.getProperty("bench.cases")));
        m.put("jmhForks", s.forks());
        m.put("attempts", s.attempts());
        m.put("quietWaitMillis", s.quietWaitMillis());
        m.put("jmhWarmup", s.warmupIterations() + " x 1 s");
        m.put("jmhMeasurement", s.measureIterations() + " x 1 s");
        m.put("fireAllShots", s.fireAllWarmup() + " warm-up + " + s.fireAllMeasure() + " measured per fork");
        m.put("latenessRounds", s.latenessWarmup() + " warm-up + " + s.latenessRounds() + " measured");
        m.put("idleWindowMillis", s.idleWindowMillis());
        m.put("tickMillis", BenchConfig.TICK_MILLIS);
        m.put("ticksPerWheel", BenchConfig.TICKS_PER_WHEEL);
        m.put("agronaTickNanos", BenchConfig.AGRONA_TICK_NANOS);
        m.put("kafkaTickMillis", BenchConfig.KAFKA_TICK_MILLIS);
        m.put("kafkaWheelSize", BenchConfig.KAFKA_WHEEL_SIZE);
        return m;
    }

    // ------------------------------------------------------------------ case 1

    private void scheduleCancel() {
        List<Map<String, Object>> rows = list("scheduleCancel");
        for (int threads : new int[] {1, 2}) {
            for (int pending : new int[] {0, BenchConfig.MANY_PENDING}) {
                for (TimerImpl impl : TimerImpl.MAIN) {
                    if (impl == TimerImpl.AGRONA && threads > 1) {
                        continue; // single-threaded wheel
                    }
                    rows.add(measured("schedule+cancel " + impl.label + " threads=" + threads + " pending=" + pending,
                            () -> scheduleCancelRow(impl, threads, pending)));
                }
            }
        }
    }

    private Map<String, Object> scheduleCancelRow(TimerImpl impl, int threads, int pending) {
        String benchmark = impl == TimerImpl.AGRONA
                ? AgronaScheduleCancelBenchmark.class.getName() + ".oneThread"
                : ScheduleCancelBenchmark.class.getName() + (threads == 1 ? ".oneThread" : ".twoThreads");
        ChainedOptionsBuilder options = jmhOptions(benchmark)
                .param("pending", String.valueOf(pending))
                .warmupIterations(settings.warmupIterations())
                .warmupTime(TimeValue.seconds(1))
                .measurementIterations(settings.measureIterations())
                .measurementTime(TimeValue.seconds(1))
                .addProfiler(GCProfiler.class);
        if (impl != TimerImpl.AGRONA) {
            options.param("impl", impl.label);
        }
        RunResult run = runJmh(options);
        Map<String, Object> row = row(impl);
        row.put("threads", threads);
        row.put("pending", pending);
        row.put("opsPerUs", run.getPrimaryResult().getScore());
        row.put("opsPerUsError", run.getPrimaryResult().getScoreError());
        row.put("allocBytesPerOp", secondary(run, "gc.alloc.rate.norm"));
        double gcMs = secondary(run, "gc.time");
        row.put("gcTimeMs", gcMs);
        // gc.time is summed over every measured iteration of every fork, 1 s each: the share of the measured time
        // spent in GC pauses shows a peer whose throughput is held by its own garbage (its hand-off backlog)
        row.put("gcTimePercent", (Double.isNaN(gcMs) ? 0 : gcMs) / (10.0 * settings.forks()
                * settings.measureIterations()));
        row.put("iterationOpsPerUs", iterationScores(run, IterationResult::getPrimaryResult));
        // GC per iteration: a slow fork without GC in its slow iterations is not held by garbage
        row.put("iterationGcMs", iterationScores(run, iteration -> secondary(iteration.getSecondaryResults(),
                "gc.time")));
        return row;
    }

    // ------------------------------------------------------------------ case 2

    private void fireAll() {
        List<Map<String, Object>> rows = list("fireAll");
        for (TimerImpl impl : TimerImpl.MAIN) {
            rows.add(measured("fire-all " + impl.label, () -> fireAllRow(impl)));
        }
    }

    private Map<String, Object> fireAllRow(TimerImpl impl) {
        RunResult run = runJmh(jmhOptions(FireAllBenchmark.class.getName() + ".fireAll")
                .param("impl", impl.label)
                .warmupIterations(settings.fireAllWarmup())
                .measurementIterations(settings.fireAllMeasure()));
        List<Double> shots = new ArrayList<>();
        for (BenchmarkResult fork : run.getBenchmarkResults()) {
            for (IterationResult iteration : fork.getIterationResults()) {
                shots.add(iteration.getPrimaryResult().getScore());
            }
        }
        shots.sort(null);
        Map<String, Object> row = row(impl);
        row.put("timers", 100_000);
        row.put("medianMs", median(shots));
        row.put("minMs", shots.get(0));
        row.put("maxMs", shots.get(shots.size() - 1));
        row.put("shotsMs", shots);
        return row;
    }

    // ------------------------------------------------------------------ cases 3, 4, 5

    private void memory() {
        List<Map<String, Object>> rows = list("memory");
        for (TimerImpl impl : TimerImpl.MAIN) {
            rows.add(measured("memory " + impl.label, () -> harness(impl.label, PendingMemoryHarness.class,
                    List.of("-XX:+UseSerialGC", "-Xms2g", "-Xmx2g"),
                    String.valueOf(BenchConfig.MANY_PENDING))));
        }
    }

    private void lateness() {
        List<Map<String, Object>> rows = list("lateness");
        List<TimerImpl> impls = new ArrayList<>(List.of(TimerImpl.MAIN));
        impls.add(TimerImpl.NETTY_EXECUTOR);
        impls.add(TimerImpl.JDK_STPE_2);
        for (TimerImpl impl : impls) {
            rows.add(measured("lateness " + impl.label, () -> harness(impl.label, LatenessHarness.class,
                    List.of("-Xms2g", "-Xmx2g"),
                    String.valueOf(settings.latenessWarmup()), String.valueOf(settings.latenessRounds()))));
        }
    }

    private void idleCpu() {
        List<Map<String, Object>> rows = list("idleCpu");
        for (TimerImpl impl : TimerImpl.MAIN) {
            rows.add(measured("idle CPU " + impl.label, () -> harness(impl.label, IdleTickCpuHarness.class,
                    List.of("-Xms2g", "-Xmx2g"),
                    String.valueOf(settings.idleWindowMillis()), String.valueOf(BenchConfig.MANY_PENDING))));
        }
        // the floor of any timer that wakes every 10 ms on this machine: a thread that only parks
        rows.add(measured("idle CPU control", () -> harness(IdleTickCpuHarness.CONTROL, IdleTickCpuHarness.class,
                List.of("-Xms2g", "-Xmx2g"), String.valueOf(settings.idleWindowMillis()))));
    }

    // ------------------------------------------------------------------ plumbing

    /** Runs {@code measurement} on a quiet machine, again if others disturbed it; keeps the least disturbed. */
    private Map<String, Object> measured(String what, Supplier<Map<String, Object>> measurement) {
        Map<String, Object> best = null;
        for (int attempt = 1; attempt <= settings.attempts(); attempt++) {
            double waited = monitor.awaitQuiet(QUIET_CORES, settings.quietSamples(), settings.quietWaitMillis());
            System.out.printf("%n=== %s (attempt %d, waited %.1f s for a quiet machine)%n", what, attempt, waited);
            ForeignLoadMonitor.Mark mark = monitor.mark();
            Map<String, Object> row = measurement.get();
            double foreign = monitor.coresSince(mark);
            row.put("foreignCores", foreign);
            row.put("attempt", attempt);
            System.out.printf("=== %s: foreign load %.3f cores%n", what, foreign);
            if (best == null || foreign < (double) best.get("foreignCores")) {
                best = row;
            }
            if (!(foreign > DISTURBED_CORES)) {
                break;
            }
        }
        return best;
    }

    /**
     * Every fork runs on this runner's own JVM ({@code run.sh --jdk} picks it) with {@link #JMH_HEAP} and
     * {@link BenchConfig#jvmFlags()}, whatever the benchmark's annotations say.
     */
    private ChainedOptionsBuilder jmhOptions(String benchmark) {
        List<String> args = new ArrayList<>(JMH_HEAP);
        args.addAll(BenchConfig.jvmFlags());
        return new OptionsBuilder()
                .include("^" + Pattern.quote(benchmark) + "$")
                .forks(settings.forks())
                .jvm(BenchConfig.javaBinary())
                .jvmArgsAppend(args.toArray(String[]::new))
                .shouldFailOnError(true);
    }

    private static RunResult runJmh(ChainedOptionsBuilder options) {
        try {
            Collection<RunResult> runs = new Runner(options.build()).run();
            if (runs.size() != 1) {
                throw new IllegalStateException("JMH runs: " + runs.size() + " (expected: 1)");
            }
            return runs.iterator().next();
        } catch (RunnerException e) {
            throw new IllegalStateException("JMH failed", e);
        }
    }

    /**
     * @return one result of every measured iteration, fork by fork in order, so that a rate that still climbs or
     *     falls during the measurement, or a fork slower than the others, shows in the JSON and the report
     */
    private static List<List<Double>> iterationScores(RunResult run, Function<IterationResult, Result> result) {
        List<List<Double>> forks = new ArrayList<>();
        for (BenchmarkResult fork : run.getBenchmarkResults()) {
            List<Double> scores = new ArrayList<>();
            for (IterationResult iteration : fork.getIterationResults()) {
                Result r = result.apply(iteration);
                scores.add(r == null ? Double.NaN : r.getScore());
            }
            forks.add(scores);
        }
        return forks;
    }

    private static double secondary(RunResult run, String suffix) {
        Result r = secondary(run.getSecondaryResults(), suffix);
        return r == null ? Double.NaN : r.getScore();
    }

    private static Result secondary(Map<String, Result> results, String suffix) {
        for (Map.Entry<String, Result> e : results.entrySet()) {
            if (e.getKey().endsWith(suffix)) {
                return e.getValue();
            }
        }
        return null;
    }

    /** Runs {@code main} in a fresh JVM and returns its {@code RESULT} line, numbers parsed. */
    private static Map<String, Object> harness(String label, Class<?> main, List<String> jvmArgs,
                                               String... args) {
        List<String> command = new ArrayList<>();
        command.add(BenchConfig.javaBinary());
        command.addAll(jvmArgs);
        command.addAll(BenchConfig.jvmFlags());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.add(label);
        command.addAll(List.of(args));
        try {
            Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            Map<String, String> values = null;
            try (BufferedReader out = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                    System.out.println(line);
                    Map<String, String> parsed = HarnessIo.parse(line);
                    values = parsed != null ? parsed : values;
                }
            }
            if (!process.waitFor(10, TimeUnit.MINUTES) || process.exitValue() != 0 || values == null) {
                process.destroyForcibly();
                throw new IllegalStateException(main.getSimpleName() + " " + label + " failed");
            }
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("impl", label);
            values.forEach((k, v) -> row.putIfAbsent(k, parseValue(v)));
            return row;
        } catch (IOException e) {
            throw new IllegalStateException(main.getSimpleName() + " " + label + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static Object parseValue(String v) {
        try {
            return v.matches("-?\\d+") ? (Object) Long.parseLong(v) : (Object) Double.parseDouble(v);
        } catch (NumberFormatException e) {
            return v;
        }
    }

    private static Map<String, Object> row(TimerImpl impl) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("impl", impl.label);
        return row;
    }

    @SuppressWarnings("unchecked")
    private List<Map<String, Object>> list(String key) {
        return (List<Map<String, Object>>) results.computeIfAbsent(key, k -> new ArrayList<Map<String, Object>>());
    }

    static double median(List<Double> sorted) {
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
