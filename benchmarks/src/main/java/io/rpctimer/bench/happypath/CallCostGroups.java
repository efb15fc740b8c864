package io.rpctimer.bench.happypath;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a configuration's extra CPU goes: from {@link CallCost} runs made with {@code --groups 1}, per pair
 * ({@link CallCost#PAIRS}) and thread group, the median over rounds of the group's CPU per call under the
 * configuration minus under its reference (both measured in the same round of the same run), in microseconds, with
 * the 95% bootstrap interval of {@link CallCostSummary} (runs, then rounds within each). Groups are the threads' names
 * with digits dropped ({@link ThreadCost}); a group a round does not list (under 8 B and 0.01 µs a call) counts 0.
 *
 * <p><b>Threading:</b> not thread-safe; one per pool of runs, fed and read by one thread.
 */
final class CallCostGroups {

    /** A thread group's line under its phase: name, bytes and CPU per call. */
    private static final Pattern GROUP = Pattern.compile("^ {8}(.+?)\\s+\\d+ B\\s+([\\d.]+) us$");

    /**
     * One thread group's delta for one pair.
     *
     * @param mode      {@code sync} or {@code async}
     * @param config    the configuration measured
     * @param reference the configuration it is compared with
     * @param group     the thread group
     * @param rounds    rounds that held both configurations
     * @param referenceMicros the group's median CPU per call under the reference, µs
     * @param delta     median over rounds of (configuration - reference), µs per call
     * @param low       the 95% interval's low end of {@code delta}
     * @param high      its high end
     */
    record Delta(String mode, String config, String reference, String group, int rounds, double referenceMicros,
                 double delta, double low, double high) {
    }

    /** {run, round, mode} -> configuration -> group -> CPU µs per call. */
    private final Map<List<Object>, Map<String, Map<String, Double>>> rounds = new LinkedHashMap<>();
    private final int firstRound;

    /** @param firstRound the first round that counts, {@code >= 1} */
    CallCostGroups(int firstRound) {
        if (firstRound < 1) {
            throw new IllegalArgumentException("firstRound: " + firstRound + " (expected: >= 1)");
        }
        this.firstRound = firstRound;
    }

    /**
     * Reads a run's group lines, each under the phase line before it; phases without groups add nothing.
     *
     * @param lines a {@link CallCost} run's output
     * @param run   the run's number, 0..
     */
    void add(List<String> lines, int run) {
        Map<String, Double> phase = null;
        for (String line : lines) {
            Matcher p = CallCostPool.PHASE.matcher(line);
            if (p.matches()) {
                int round = Integer.parseInt(p.group(1));
                phase = round < firstRound ? null : rounds
                        .computeIfAbsent(List.of(run, round, p.group(2)), k -> new LinkedHashMap<>())
                        .computeIfAbsent(p.group(3), k -> new LinkedHashMap<>());
                continue;
            }
            Matcher g = GROUP.matcher(line);
            if (g.matches() && phase != null) {
                phase.put(g.group(1), Double.parseDouble(g.group(2)));
            }
        }
    }

    /**
     * @param pairs each {configuration's label, the label of the configuration it is compared with}
     * @return per mode and pair, each group's delta, for every group either configuration lists, by decreasing
     *     |delta|
     */
    List<Delta> deltas(List<String[]> pairs) {
        List<Delta> out = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(CallCostSummary.SEED);
        for (String mode : List.of("sync", "async")) {
            for (String[] pair : pairs) {
                TreeSet<String> groups = new TreeSet<>();
                Map<Object, List<Map<String, Double>[]>> byRun = new LinkedHashMap<>(); // run -> {config, reference}
                rounds.forEach((key, configs) -> {
                    Map<String, Double> c = configs.get(pair[0]);
                    Map<String, Double> r = configs.get(pair[1]);
                    if (key.get(2).equals(mode) && c != null && r != null) {
                        groups.addAll(c.keySet());
                        groups.addAll(r.keySet());
                        @SuppressWarnings("unchecked")
                        Map<String, Double>[] both = new Map[] {c, r};
                        byRun.computeIfAbsent(key.get(0), k -> new ArrayList<>()).add(both);
                    }
                });
                List<Delta> pairDeltas = new ArrayList<>();
                for (String group : groups) {
                    List<double[]> runs = new ArrayList<>();
                    List<Double> all = new ArrayList<>();
                    List<Double> referenceAll = new ArrayList<>();
                    for (List<Map<String, Double>[]> run : byRun.values()) {
                        double[] d = new double[run.size()];
                        for (int i = 0; i < d.length; i++) {
                            double ref = run.get(i)[1].getOrDefault(group, 0.0);
                            d[i] = run.get(i)[0].getOrDefault(group, 0.0) - ref;
                            all.add(d[i]);
                            referenceAll.add(ref);
                        }
                        runs.add(d);
                    }
                    double[] interval = CallCostSummary.interval(runs, random);
                    pairDeltas.add(new Delta(mode, pair[0], pair[1], group, all.size(), median(referenceAll),
                            median(all), interval[0], interval[1]));
                }
                pairDeltas.sort((a, b) -> Double.compare(Math.abs(b.delta()), Math.abs(a.delta())));
                out.addAll(pairDeltas);
            }
        }
        return out;
    }

    /**
     * @param deltas  from {@link #deltas}
     * @param atLeast the smallest reference CPU or |delta| of a row shown, µs per call
     * @return a Markdown table: a row per delta, in the order given
     */
    static String markdown(List<Delta> deltas, double atLeast) {
        StringBuilder sb = new StringBuilder("| mode | configuration | against | thread group | rounds "
                + "| reference µs/call | delta µs/call (median) | 95% interval |\n"
                + "|---|---|---|---|---:|---:|---:|---|\n");
        for (Delta d : deltas) {
            if (d.referenceMicros() >= atLeast || Math.abs(d.delta()) >= atLeast) {
                sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %d | %.2f | %+.3f | %+.3f to %+.3f |%n",
                        d.mode(), d.config(), d.reference(), d.group(), d.rounds(), d.referenceMicros(), d.delta(),
                        d.low(), d.high()));
            }
        }
        return sb.toString();
    }

    private static double median(List<Double> values) {
        return CallCostSummary.median(values.stream().mapToDouble(Double::doubleValue).toArray());
    }
}
