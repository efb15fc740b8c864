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
 * The verdicts of a {@link CallCost} run: per mode, each configuration's thread CPU per call against a reference
 * configuration's, as the median of the per-round ratios (both measured in the same round), with a 95% bootstrap
 * interval over the rounds (1,000 resamples, fixed seed), and the same for allocated bytes. Rounds before
 * {@code firstRound} are left out: the first round runs while the JIT still compiles.
 *
 * <p><b>Threading:</b> not thread-safe; one per run, fed and read by {@code main}.
 */
final class CallCostSummary {

    static final int RESAMPLES = 1_000;
    static final long SEED = 20261128L;

    /**
     * One phase of a run.
     *
     * @param round      1..
     * @param mode       {@code sync} or {@code async}
     * @param config     the configuration's label
     * @param cpuMicros  thread CPU per call, every thread summed, in microseconds
     * @param bytes      heap bytes allocated per call
     */
    record Phase(int round, String mode, String config, double cpuMicros, double bytes) {
    }

    /**
     * One comparison's outcome.
     *
     * @param mode       {@code sync} or {@code async}
     * @param config     the configuration measured
     * @param reference  the configuration it is compared with
     * @param rounds     rounds that held both
     * @param cpuMicros  the configuration's median thread CPU per call, microseconds
     * @param cpuRatio   median over rounds of (config / reference) thread CPU per call
     * @param cpuLow     the 95% interval's low end of {@code cpuRatio}
     * @param cpuHigh    its high end
     * @param bytesRatio the same for allocated bytes per call
     */
    record Verdict(String mode, String config, String reference, int rounds, double cpuMicros, double cpuRatio,
                   double cpuLow, double cpuHigh, double bytesRatio) {
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
            Map<Integer, Map<String, Phase>> byRound = new LinkedHashMap<>();
            for (Phase p : phases) {
                if (p.mode().equals(mode) && p.round() >= firstRound) {
                    byRound.computeIfAbsent(p.round(), r -> new LinkedHashMap<>()).put(p.config(), p);
                }
            }
            for (String[] pair : pairs) {
                String config = pair[0];
                String reference = pair[1];
                List<double[]> rows = new ArrayList<>(); // {config cpu, cpu ratio, bytes ratio}
                for (Map<String, Phase> round : byRound.values()) {
                    Phase c = round.get(config);
                    Phase r = round.get(reference);
                    if (c != null && r != null && r.cpuMicros() > 0 && r.bytes() > 0) {
                        rows.add(new double[] {c.cpuMicros(), c.cpuMicros() / r.cpuMicros(), c.bytes() / r.bytes()});
                    }
                }
                if (rows.isEmpty()) {
                    continue;
                }
                double[] draws = new double[RESAMPLES];
                double[] sample = new double[rows.size()];
                for (int b = 0; b < RESAMPLES; b++) {
                    for (int i = 0; i < sample.length; i++) {
                        sample[i] = rows.get(random.nextInt(rows.size()))[1];
                    }
                    draws[b] = median(sample);
                }
                Arrays.sort(draws);
                out.add(new Verdict(mode, config, reference, rows.size(), median(column(rows, 0)),
                        median(column(rows, 1)), draws[(int) (RESAMPLES * 0.025)],
                        draws[(int) (RESAMPLES * 0.975) - 1], median(column(rows, 2))));
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
