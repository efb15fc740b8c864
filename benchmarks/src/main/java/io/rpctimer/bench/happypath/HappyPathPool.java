package io.rpctimer.bench.happypath;

import static io.rpctimer.bench.happypath.HappyPathReport.num;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.rpctimer.bench.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Pools the rounds of several {@link HappyPathComparison} runs of the same library code and judges the targets on
 * all of them with the single run's own estimators ({@link HappyPathReport#analyse}: throughput ratio = median of
 * the per-round ratios, p99 ratio = the ratio of the merged histograms' p99). One run of 8 or 16 rounds on this
 * 2-core VM cannot tell a 3% difference from its noise (its rounds' throughput ratios spread over ±20%), so next to
 * each pooled figure stands its 95% bootstrap interval: the rounds of a workload (each round holds every
 * configuration, so the pairs stay paired) are drawn again with replacement {@value #RESAMPLES} times with a fixed
 * seed, and each draw is analysed the same way. A target is met or missed by the pooled figure, as in one run; the
 * interval says whether the machine resolved the verdict ("clear": the whole interval on the verdict's side of the
 * threshold) or not.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.happypath.HappyPathPool &lt;out base&gt; run1.json run2.json ...
 * </pre>
 * Writes {@code <out base>.json} and {@code .md}. The runs must have the same phase lengths and turns (phases or
 * calls); that they ran the same rpc-timer code is the caller's to check (their commits are listed in the report).
 *
 * <p><b>Threading:</b> single-threaded {@code main}; the static methods are stateless and thread-safe.
 */
public final class HappyPathPool {

    static final int RESAMPLES = 1000;
    private static final long SEED = 15;
    private static final Pattern SATURATION = Pattern.compile("(sync|async), saturation, (\\d+) (threads|in flight)");
    private static final Pattern FIXED_RATE = Pattern.compile("(sync|async), (\\d+)/s");

    private HappyPathPool() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: HappyPathPool <out base> <happypath json> [<happypath json> ...]");
            System.exit(2);
            return;
        }
        List<Map<String, Object>> runs = new ArrayList<>();
        ObjectMapper mapper = new ObjectMapper();
        for (int i = 1; i < args.length; i++) {
            @SuppressWarnings("unchecked")
            Map<String, Object> run = mapper.readValue(Path.of(args[i]).toFile(), Map.class);
            run.put("file", Path.of(args[i]).getFileName().toString());
            runs.add(run);
        }
        Map<String, Object> pooled;
        try {
            pooled = pool(runs);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(2);
            return;
        }
        Files.writeString(Path.of(args[0] + ".json"), Json.write(pooled), StandardCharsets.UTF_8);
        String md = markdown(pooled);
        Files.writeString(Path.of(args[0] + ".md"), md, StandardCharsets.UTF_8);
        System.out.println(md);
        System.out.println("written: " + args[0] + ".json, .md");
    }

    /**
     * @param runs the parsed {@code happypath-*.json} files, each with a {@code file} entry naming it
     * @return {@code runs} (one line each), {@code summary}, {@code ratios} and {@code targets} of the pooled rounds,
     *     each target with its {@code ciLow}, {@code ciHigh} and {@code clear}
     * @throws IllegalArgumentException if a run has other phase lengths or turns than the first, or a workload this
     *                                  class cannot read
     */
    @SuppressWarnings("unchecked")
    static Map<String, Object> pool(List<Map<String, Object>> runs) {
        Map<String, Object> first = (Map<String, Object>) runs.get(0).get("settings");
        List<Map<String, Object>> runLines = new ArrayList<>();
        // per workload, its rounds in run order; each round the rows of every configuration
        Map<String, List<List<Map<String, Object>>>> roundsByWorkload = new LinkedHashMap<>();
        for (Map<String, Object> run : runs) {
            Map<String, Object> s = (Map<String, Object>) run.get("settings");
            for (String key : List.of("warmupSecondsPerPhase", "measureSecondsPerPhase", "timeoutMillis")) {
                if (!s.get(key).equals(first.get(key))) {
                    throw new IllegalArgumentException(run.get("file") + ": " + key + " " + s.get(key)
                            + " (expected: " + first.get(key) + ", as in " + runs.get(0).get("file") + ")");
                }
            }
            if (!turns(s).equals(turns(first))) {
                throw new IllegalArgumentException(run.get("file") + ": turns " + turns(s) + " (expected: "
                        + turns(first) + ", as in " + runs.get(0).get("file") + ")");
            }
            Map<String, Object> machine = (Map<String, Object>) run.get("machine");
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("file", run.get("file"));
            line.put("date", machine.get("date"));
            line.put("commit", machine.get("gitCommit"));
            line.put("uncommittedChanges", machine.get("rpcTimerUncommittedChanges"));
            line.put("rounds", s.get("rounds"));
            line.put("workloads", s.get("workloads"));
            line.put("foreignCoresWholeRun", run.get("foreignCoresWholeRun"));
            runLines.add(line);
            Map<String, Map<Integer, List<Map<String, Object>>>> byRound = new LinkedHashMap<>();
            for (Map<String, Object> row : (List<Map<String, Object>>) run.get("rounds")) {
                byRound.computeIfAbsent((String) row.get("workload"), w -> new LinkedHashMap<>())
                        .computeIfAbsent(((Number) row.get("round")).intValue(), r -> new ArrayList<>()).add(row);
            }
            byRound.forEach((w, rounds) -> roundsByWorkload.computeIfAbsent(w, k -> new ArrayList<>())
                    .addAll(rounds.values()));
        }
        List<Map<String, Object>> summary = new ArrayList<>();
        List<Map<String, Object>> ratios = new ArrayList<>();
        List<Map<String, Object>> targets = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(SEED);
        roundsByWorkload.forEach((label, rounds) -> {
            HappyPathComparison.Settings settings = settings(label, rounds.size(), first);
            Map<String, Object> a = HappyPathReport.analyse(settings, renumber(rounds));
            List<Map<String, Object>> t = (List<Map<String, Object>>) a.get("targets");
            double[][] draws = new double[t.size()][RESAMPLES];
            for (int b = 0; b < RESAMPLES; b++) {
                List<List<Map<String, Object>>> draw = new ArrayList<>(rounds.size());
                for (int i = 0; i < rounds.size(); i++) {
                    draw.add(rounds.get(random.nextInt(rounds.size())));
                }
                List<Map<String, Object>> dt = (List<Map<String, Object>>) HappyPathReport.analyse(settings,
                        renumber(draw)).get("targets");
                for (int k = 0; k < t.size(); k++) {
                    draws[k][b] = num(dt.get(k), "measured");
                }
            }
            for (int k = 0; k < t.size(); k++) {
                Map<String, Object> target = new LinkedHashMap<>(t.get(k));
                Arrays.sort(draws[k]);
                double low = draws[k][(int) (RESAMPLES * 0.025)];
                double high = draws[k][(int) (RESAMPLES * 0.975) - 1];
                target.put("rounds", rounds.size());
                target.put("ciLow", low);
                target.put("ciHigh", high);
                target.put("clear", clear((String) target.get("threshold"), (Boolean) target.get("met"), low, high));
                targets.add(target);
            }
            summary.addAll((List<Map<String, Object>>) a.get("summary"));
            ratios.addAll((List<Map<String, Object>>) a.get("ratios"));
        });
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("runs", runLines);
        m.put("resamples", RESAMPLES);
        m.put("seed", SEED);
        m.put("summary", summary);
        m.put("ratios", ratios);
        m.put("targets", targets);
        return m;
    }

    /** @return whether the whole interval lies on the verdict's side of the threshold ({@code ">= x"} or {@code "<= x"}) */
    static boolean clear(String threshold, boolean met, double low, double high) {
        double x = Double.parseDouble(threshold.substring(3));
        boolean atLeast = threshold.startsWith(">=");
        boolean allMeet = atLeast ? low >= x : high <= x;
        boolean allMiss = atLeast ? high < x : low > x;
        return met ? allMeet : allMiss;
    }

    /** @return the rows of {@code rounds}, numbered 1.. in that order */
    private static List<Map<String, Object>> renumber(List<List<Map<String, Object>>> rounds) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < rounds.size(); i++) {
            for (Map<String, Object> row : rounds.get(i)) {
                Map<String, Object> copy = new LinkedHashMap<>(row);
                copy.put("round", i + 1);
                rows.add(copy);
            }
        }
        return rows;
    }

    private static HappyPathComparison.Settings settings(String label, int rounds, Map<String, Object> first) {
        return new HappyPathComparison.Settings("pooled", rounds,
                Duration.ofMillis(Math.round(num(first, "warmupSecondsPerPhase") * 1000)),
                Duration.ofMillis(Math.round(num(first, "measureSecondsPerPhase") * 1000)), true,
                List.of(workload(label)), turns(first).equals("calls"));
    }

    /** @return how a run's configurations took turns: {@code phases} (also runs without it) or {@code calls} */
    private static String turns(Map<String, Object> settings) {
        return (String) settings.getOrDefault("turns", "phases");
    }

    /** @return the workload whose {@link Workload#label()} is {@code label} */
    static Workload workload(String label) {
        Matcher sat = SATURATION.matcher(label);
        Matcher rate = FIXED_RATE.matcher(label);
        Workload w;
        if (sat.matches()) {
            w = new Workload(sat.group(1).equals("sync"), Integer.parseInt(sat.group(2)), 0);
        } else if (rate.matches()) {
            boolean sync = rate.group(1).equals("sync");
            w = new Workload(sync, sync ? Workload.OPEN_LOOP_SYNC_THREADS : 1, Integer.parseInt(rate.group(2)));
        } else {
            w = null;
        }
        if (w == null || !w.label().equals(label)) {
            throw new IllegalArgumentException("workload: '" + label + "' (expected: a label HappyPathComparison "
                    + "writes, e.g. 'async, saturation, 64 in flight' or 'sync, 3000/s')");
        }
        return w;
    }

    @SuppressWarnings("unchecked")
    static String markdown(Map<String, Object> pooled) {
        StringBuilder md = new StringBuilder("## Happy path, runs pooled\n\nThe runs:\n\n"
                + "| file | date | commit | rounds | workloads | other processes (cores) |\n|---|---|---|---|---|---|\n");
        for (Map<String, Object> r : (List<Map<String, Object>>) pooled.get("runs")) {
            md.append(String.format(Locale.ROOT, "| %s | %s | `%s`%s | %s | %s | %s |%n", r.get("file"),
                    r.get("date"), r.get("commit"), "no".equals(r.get("uncommittedChanges")) ? "" : " (uncommitted)",
                    r.get("rounds"), String.join("; ", (List<String>) r.get("workloads")),
                    r.get("foreignCoresWholeRun")));
        }
        md.append("\nPer configuration, all rounds pooled:\n");
        HappyPathReport.configurationTables(md, (List<Map<String, Object>>) pooled.get("summary"),
                (List<Map<String, Object>>) pooled.get("ratios"));
        md.append("\n### Targets, on the pooled rounds, with 95% bootstrap intervals (")
                .append(pooled.get("resamples")).append(" resamples of the rounds)\n\n"
                        + "| workload | target | rounds | measured | 95% interval | threshold | met | resolved |\n"
                        + "|---|---|---|---|---|---|---|---|\n");
        for (Map<String, Object> t : (List<Map<String, Object>>) pooled.get("targets")) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s× | %s–%s× | %s | %s | %s |%n",
                    t.get("workload"), t.get("target"), t.get("rounds"), three(num(t, "measured")),
                    three(num(t, "ciLow")), three(num(t, "ciHigh")), t.get("threshold"),
                    (Boolean) t.get("met") ? "yes" : "**no**",
                    (Boolean) t.get("clear") ? "clear" : "inside the noise"));
        }
        return md.toString();
    }

    /** Three decimals: a 3% target at 0.97 is judged on the third. */
    private static String three(double v) {
        return String.format(Locale.ROOT, "%.3f", v);
    }
}
