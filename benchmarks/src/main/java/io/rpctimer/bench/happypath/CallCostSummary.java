package io.rpctimer.bench.happypath;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The verdicts of one or more {@link CallCost} runs: per mode, each configuration's thread CPU per call against a
 * reference configuration's, as the median of the per-round ratios (both measured in the same round of the same run),
 * with a 95% bootstrap interval (1,000 resamples, fixed seed), and the same for allocated bytes. Rounds before
 * {@code firstRound} are left out: the first rounds run while the JIT still compiles.
 *
 * <p>The interval resamples the runs, then the rounds within each run drawn: the rounds of one run are not assumed
 * independent, since what makes one consumer cheaper than another in a JVM (its connections, its objects' places in
 * memory) may last the JVM's life. With one run it resamples that run's rounds only, and so may understate what
 * another JVM would find.
 *
 * <p><b>Threading:</b> not thread-safe; one per run or pool of runs, fed and read by {@code main}.
 */
final class CallCostSummary {

    static final int RESAMPLES = 1_000;
    static final long SEED = 20261128L;

    /**
     * One phase of a run.
     *
     * @param run        the run (JVM) it belongs to, 0..
     * @param round      1..
     * @param mode       {@code sync} or {@code async}
     * @param config     the configuration's label
     * @param cpuMicros  thread CPU per call, every thread summed, in microseconds
     * @param bytes      heap bytes allocated per call
     */
    record Phase(int run, int round, String mode, String config, double cpuMicros, double bytes) {
    }

    /**
     * One comparison's outcome.
     *
     * @param mode       {@code sync} or {@code async}
     * @param config     the configuration measured
     * @param reference  the configuration it is compared with
     * @param runs       runs that had rounds with both
     * @param rounds     rounds that held both
     * @param cpuMicros  the configuration's median thread CPU per call, microseconds
     * @param cpuRatio   median over rounds of (config / reference) thread CPU per call
     * @param cpuLow     the 95% interval's low end of {@code cpuRatio}
     * @param cpuHigh    its high end
     * @param bytesRatio the same for allocated bytes per call
     * @param runRatios  each run's own {@code cpuRatio}, in the order the runs were added
     */
    record Verdict(String mode, String config, String reference, int runs, int rounds, double cpuMicros,
                   double cpuRatio, double cpuLow, double cpuHigh, double bytesRatio, List<Double> runRatios) {
    }

    private final List<Phase> phases = new ArrayList<>();
    private final int firstRound;

    /** @param firstRound the first round that counts, {@code >= 1} */
    CallCostSummary(int firstRound) {
        if (firstRound < 1) {
            throw new IllegalArgumentException("firstRound: " + firstRound + " (expected: >= 1)");
        }
        this.firstRound = firstRound;
    }

    void add(Phase phase) {
        phases.add(phase);
    }

    /**
     * @param pairs each {configuration's label, the label of the configuration it is compared with}
     * @return a verdict per mode (in the order first seen) and pair (in the list's order) that has rounds with both
     */
    List<Verdict> verdicts(List<String[]> pairs) {
        Set<String> modes = new LinkedHashSet<>();
        phases.forEach(p -> modes.add(p.mode()));
        List<Verdict> out = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(SEED);
        for (String mode : modes) {
            Map<List<Integer>, Map<String, Phase>> byRound = new LinkedHashMap<>(); // {run, round} -> config -> phase
            for (Phase p : phases) {
                if (p.mode().equals(mode) && p.round() >= firstRound) {
                    byRound.computeIfAbsent(List.of(p.run(), p.round()), r -> new LinkedHashMap<>())
                            .put(p.config(), p);
                }
            }
            for (String[] pair : pairs) {
                String config = pair[0];
                String reference = pair[1];
                List<double[]> rows = new ArrayList<>(); // {config cpu, cpu ratio, bytes ratio}
                Map<Integer, List<double[]>> byRun = new LinkedHashMap<>(); // run -> its rows
                for (Map.Entry<List<Integer>, Map<String, Phase>> round : byRound.entrySet()) {
                    Phase c = round.getValue().get(config);
                    Phase r = round.getValue().get(reference);
                    if (c != null && r != null && r.cpuMicros() > 0 && r.bytes() > 0) {
                        double[] row = {c.cpuMicros(), c.cpuMicros() / r.cpuMicros(), c.bytes() / r.bytes()};
                        rows.add(row);
                        byRun.computeIfAbsent(round.getKey().get(0), k -> new ArrayList<>()).add(row);
                    }
                }
                if (rows.isEmpty()) {
                    continue;
                }
                List<double[]> runs = new ArrayList<>();
                List<Double> runRatios = new ArrayList<>();
                for (List<double[]> run : byRun.values()) {
                    double[] ratios = column(run, 1);
                    runs.add(ratios);
                    runRatios.add(median(ratios));
                }
                double[] interval = interval(runs, random);
                out.add(new Verdict(mode, config, reference, runs.size(), rows.size(), median(column(rows, 0)),
                        median(column(rows, 1)), interval[0], interval[1], median(column(rows, 2)),
                        List.copyOf(runRatios)));
            }
        }
        return out;
    }

    /**
     * @param verdicts  from {@link #verdicts}
     * @param threshold the most CPU a configuration may cost over its reference, as a ratio (1.03: 3%)
     * @return a Markdown table: one row per verdict, with "met"/"missed" and whether the interval is clear of the
     *     threshold
     */
    static String markdown(List<Verdict> verdicts, double threshold) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
                "| mode | configuration | against | rounds | thread CPU µs/call (median) | CPU ratio (median of rounds)"
                        + " | 95%% interval | ≤ %.2f | bytes ratio |%n|---|---|---|---:|---:|---:|---|---|---:|%n",
                threshold));
        for (Verdict v : verdicts) {
            boolean met = v.cpuRatio() <= threshold;
            boolean clear = met ? v.cpuHigh() <= threshold : v.cpuLow() > threshold;
            sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %.2f | %.3f× | %.3f–%.3f× | %s, %s | %.3f× |%n",
                    v.mode(), v.config(), v.reference(), v.rounds(), v.cpuMicros(), v.cpuRatio(), v.cpuLow(),
                    v.cpuHigh(), met ? "met" : "missed", clear ? "clear" : "inside the noise", v.bytesRatio()));
        }
        return sb.toString();
    }

    /**
     * @param verdicts from {@link #verdicts}
     * @return a Markdown table: per verdict, its runs' own CPU ratios in the order the runs were added, and their
     *     range
     */
    static String runRatios(List<Verdict> verdicts) {
        StringBuilder sb = new StringBuilder("| mode | configuration | against | runs | lowest | highest | each run's "
                + "CPU ratio |\n|---|---|---|---:|---:|---:|---|\n");
        for (Verdict v : verdicts) {
            StringBuilder each = new StringBuilder();
            for (double r : v.runRatios()) {
                each.append(each.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.3f", r));
            }
            sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %.3f× | %.3f× | %s |%n", v.mode(), v.config(),
                    v.reference(), v.runs(), v.runRatios().stream().mapToDouble(Double::doubleValue).min().orElse(0),
                    v.runRatios().stream().mapToDouble(Double::doubleValue).max().orElse(0), each));
        }
        return sb.toString();
    }

    /**
     * @param runs   each run's values (one per round)
     * @param random the resampling's source
     * @return the 95% bootstrap interval {low, high} of the median of {@code runs}' values: {@value #RESAMPLES}
     *     samples ({@link #resample}), their medians' 2.5th and 97.5th percentiles
     */
    static double[] interval(List<double[]> runs, SplittableRandom random) {
        double[] draws = new double[RESAMPLES];
        for (int b = 0; b < RESAMPLES; b++) {
            draws[b] = median(resample(runs, random));
        }
        Arrays.sort(draws);
        return new double[] {draws[(int) (RESAMPLES * 0.025)], draws[(int) (RESAMPLES * 0.975) - 1]};
    }

    /**
     * @return one bootstrap sample: as many runs as there are, drawn with replacement (with one run, that one), and
     *     from each run drawn as many of its ratios as it has, drawn with replacement
     */
    private static double[] resample(List<double[]> runs, SplittableRandom random) {
        List<double[]> drawn = new ArrayList<>(runs.size());
        int size = 0;
        for (int i = 0; i < runs.size(); i++) {
            double[] run = runs.size() == 1 ? runs.get(0) : runs.get(random.nextInt(runs.size()));
            double[] d = new double[run.length];
            for (int j = 0; j < d.length; j++) {
                d[j] = run[random.nextInt(run.length)];
            }
            drawn.add(d);
            size += d.length;
        }
        double[] sample = new double[size];
        int at = 0;
        for (double[] d : drawn) {
            System.arraycopy(d, 0, sample, at, d.length);
            at += d.length;
        }
        return sample;
    }

    private static double[] column(List<double[]> rows, int i) {
        return rows.stream().mapToDouble(r -> r[i]).toArray();
    }

    /** @return the median of {@code values} (the mean of the middle two for an even count); sorts a copy */
    static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
}
