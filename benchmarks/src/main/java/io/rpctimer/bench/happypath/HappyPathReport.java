package io.rpctimer.bench.happypath;

import static io.rpctimer.bench.Figures.fmt;
import static io.rpctimer.bench.Figures.median;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.DataFormatException;
import io.rpctimer.bench.Figures;
import org.HdrHistogram.Histogram;

/**
 * Turns the happy path's phases into per-configuration figures, ratios and target verdicts, and into markdown.
 * Percentiles come from HdrHistogram: each phase's histogram is kept (compressed, base64) in its row, and the rounds
 * of one configuration and workload are merged before the percentiles are read. Throughput is the median of the
 * rounds; a throughput ratio is the median of the per-round ratios (each against the same round's reference), so
 * that drift between rounds cancels.
 *
 * <p>Next to the medians: each configuration's spread of rounds (min–max) and the process CPU time per answered
 * call (the whole JVM: consumer, both providers and ZooKeeper; on 2 saturated cores its ratio is what decides the
 * throughput ratio, and it does not depend on how loaded the machine was), and the order effect: throughput by
 * position in the round.
 *
 * <p>Targets: {@code wheelfailback} against {@code failback}, and {@code wheelfailback+timeoutcheck} against
 * {@code wheelfailback}, lose at most {@value #MAX_THROUGHPUT_LOSS} of throughput (at saturation only: at a fixed rate
 * every configuration carries the same rate; and not in turns of calls, where the configurations share the callers)
 * and add at most {@value #MAX_P99_ADDED} to p99 (every workload).
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
final class HappyPathReport {

    static final double MAX_THROUGHPUT_LOSS = 0.03;
    static final double MAX_P99_ADDED = 0.05;

    private HappyPathReport() {
    }

    /** @return one phase's JSON row, its histogram included */
    static Map<String, Object> row(int round, int position, Workload w, Config c, LoadPhase.Result r) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("round", round);
        row.put("position", position);
        row.put("workload", w.label());
        row.put("closedLoop", w.closedLoop());
        row.put("config", c.label);
        row.put("callsPerSecond", r.perSecond());
        row.put("answered", r.answered());
        row.put("failed", r.failed());
        row.put("behind", r.behind());
        row.put("cpuMicrosPerCall", r.cpuMicrosPerCall());
        row.put("gcMillis", r.gcMillis());
        Histogram h = r.latencyNanos();
        row.put("p50Ms", h.getValueAtPercentile(50) / 1e6);
        row.put("p99Ms", h.getValueAtPercentile(99) / 1e6);
        row.put("p999Ms", h.getValueAtPercentile(99.9) / 1e6);
        row.put("maxMs", h.getMaxValue() / 1e6);
        row.put("histogramBase64", encode(h));
        return row;
    }

    /** @return {@code summary} (per workload and configuration), {@code ratios} and {@code targets} */
    static Map<String, Object> analyse(HappyPathComparison.Settings s, List<Map<String, Object>> rows) {
        List<Map<String, Object>> summary = new ArrayList<>();
        List<Map<String, Object>> ratios = new ArrayList<>();
        List<Map<String, Object>> targets = new ArrayList<>();
        for (Workload w : s.workloads()) {
            Map<Config, Map<String, Object>> byConfig = new LinkedHashMap<>();
            for (Config c : Config.values()) {
                Map<String, Object> sm = summarise(w, c, rows);
                byConfig.put(c, sm);
                summary.add(sm);
            }
            for (Config c : Config.values()) {
                if (c != Config.FAILBACK) {
                    ratios.add(ratio(w, c, Config.FAILBACK, rows, byConfig));
                }
            }
            Map<String, Object> wheel = find(ratios, w.label(), Config.WHEEL.label, Config.FAILBACK.label);
            Map<String, Object> check = ratio(w, Config.WHEEL_TIMEOUTCHECK, Config.WHEEL, rows, byConfig);
            ratios.add(check);
            targets.addAll(targets(w, wheel, s.callTurns()));
            targets.addAll(targets(w, check, s.callTurns()));
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("summary", summary);
        m.put("positions", positions(s, rows, summary));
        m.put("ratios", ratios);
        m.put("targets", targets);
        return m;
    }

    /**
     * The order effect: per workload and position in the round, the median over that position's phases of each
     * phase's throughput (saturation) or p99 (fixed rate, where every configuration carries the same throughput)
     * against its configuration's median throughput or merged p99. 1 everywhere means the position does not matter.
     */
    private static List<Map<String, Object>> positions(HappyPathComparison.Settings s, List<Map<String, Object>> rows,
                                                       List<Map<String, Object>> summary) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Workload w : s.workloads()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("workload", w.label());
            List<Double> byPosition = new ArrayList<>();
            List<Double> gcByPosition = new ArrayList<>();
            for (int p = 1; p <= Config.values().length; p++) {
                List<Double> rel = new ArrayList<>();
                List<Double> gc = new ArrayList<>();
                for (Map<String, Object> row : rows) {
                    if (row.get("workload").equals(w.label()) && num(row, "position") == p) {
                        Map<String, Object> sm = findSummary(summary, w.label(), (String) row.get("config"));
                        rel.add(w.closedLoop() ? num(row, "callsPerSecond") / num(sm, "callsPerSecondMedian")
                                : num(row, "p99Ms") / num(sm, "p99Ms"));
                        gc.add(num(row, "gcMillis"));
                    }
                }
                byPosition.add(rel.isEmpty() ? Double.NaN : median(rel));
                gcByPosition.add(gc.isEmpty() ? Double.NaN : median(gc));
            }
            m.put("measure", w.closedLoop() ? "throughput" : "p99");
            m.put("vsConfig", byPosition);
            m.put("gcMillisMedian", gcByPosition);
            out.add(m);
        }
        return out;
    }

    private static Map<String, Object> findSummary(List<Map<String, Object>> summary, String workload,
                                                   String config) {
        return summary.stream().filter(m -> m.get("workload").equals(workload) && m.get("config").equals(config))
                .findFirst().orElse(null);
    }

    private static Map<String, Object> summarise(Workload w, Config c, List<Map<String, Object>> rows) {
        Histogram merged = new Histogram(3);
        List<Double> perSecond = new ArrayList<>();
        List<Double> cpu = new ArrayList<>();
        long failed = 0;
        long behind = 0;
        for (Map<String, Object> row : phases(rows, w, c)) {
            merged.add(decode((String) row.get("histogramBase64")));
            perSecond.add(num(row, "callsPerSecond"));
            cpu.add(num(row, "cpuMicrosPerCall"));
            failed += ((Number) row.get("failed")).longValue();
            behind += ((Number) row.get("behind")).longValue();
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", w.label());
        m.put("config", c.label);
        m.put("rounds", perSecond.size());
        m.put("callsPerSecondMedian", median(perSecond));
        m.put("callsPerSecondMin", perSecond.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN));
        m.put("callsPerSecondMax", perSecond.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN));
        m.put("callsPerSecondRounds", perSecond);
        m.put("cpuMicrosPerCallMedian", median(cpu));
        m.put("cpuMicrosPerCallMin", cpu.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN));
        m.put("cpuMicrosPerCallMax", cpu.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN));
        m.put("p50Ms", merged.getValueAtPercentile(50) / 1e6);
        m.put("p99Ms", merged.getValueAtPercentile(99) / 1e6);
        m.put("p999Ms", merged.getValueAtPercentile(99.9) / 1e6);
        m.put("maxMs", merged.getMaxValue() / 1e6);
        m.put("latencySamples", merged.getTotalCount());
        m.put("failed", failed);
        m.put("behind", behind);
        return m;
    }

    /** {@code c} against {@code ref}: the median of the per-round throughput ratios, and the merged p99s' ratio. */
    private static Map<String, Object> ratio(Workload w, Config c, Config ref, List<Map<String, Object>> rows,
                                             Map<Config, Map<String, Object>> byConfig) {
        List<Map<String, Object>> mine = phases(rows, w, c);
        List<Map<String, Object>> theirs = phases(rows, w, ref);
        List<Double> perRound = new ArrayList<>();
        List<Double> cpuPerRound = new ArrayList<>();
        for (int i = 0; i < Math.min(mine.size(), theirs.size()); i++) {
            perRound.add(num(mine.get(i), "callsPerSecond") / num(theirs.get(i), "callsPerSecond"));
            cpuPerRound.add(num(mine.get(i), "cpuMicrosPerCall") / num(theirs.get(i), "cpuMicrosPerCall"));
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", w.label());
        m.put("config", c.label);
        m.put("against", ref.label);
        m.put("throughputRatio", median(perRound));
        m.put("throughputRatioRounds", perRound);
        m.put("cpuPerCallRatio", median(cpuPerRound));
        m.put("cpuPerCallRatioRounds", cpuPerRound);
        m.put("p99Ratio", num(byConfig.get(c), "p99Ms") / num(byConfig.get(ref), "p99Ms"));
        m.put("p999Ratio", num(byConfig.get(c), "p999Ms") / num(byConfig.get(ref), "p999Ms"));
        return m;
    }

    private static List<Map<String, Object>> targets(Workload w, Map<String, Object> ratio, boolean callTurns) {
        List<Map<String, Object>> t = new ArrayList<>();
        String what = ratio.get("config") + " against " + ratio.get("against");
        if (w.closedLoop() && !callTurns) {
            double tp = num(ratio, "throughputRatio");
            t.add(target(w, what + ": throughput lost <= 3%", tp, ">= " + (1 - MAX_THROUGHPUT_LOSS),
                    tp >= 1 - MAX_THROUGHPUT_LOSS));
        }
        double p99 = num(ratio, "p99Ratio");
        t.add(target(w, what + ": p99 added <= 5%", p99, "<= " + (1 + MAX_P99_ADDED), p99 <= 1 + MAX_P99_ADDED));
        return t;
    }

    private static Map<String, Object> target(Workload w, String what, double measured, String threshold,
                                              boolean met) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", w.label());
        m.putAll(Figures.target(what, measured, threshold, met));
        return m;
    }

    // ------------------------------------------------------------------ markdown

    @SuppressWarnings("unchecked")
    static String markdown(Map<String, Object> r) {
        StringBuilder md = new StringBuilder("## Happy path: what each configuration costs on calls that succeed\n");
        md.append('\n').append(Figures.runLine(r)).append(" Other processes used ")
                .append(r.get("foreignCoresWholeRun")).append(" cores on average.\n");
        configurationTables(md, (List<Map<String, Object>>) r.getOrDefault("summary", List.of()),
                (List<Map<String, Object>>) r.getOrDefault("ratios", List.of()));
        positionsMarkdown(md, (List<Map<String, Object>>) r.getOrDefault("positions", List.of()));
        md.append("\n### Targets\n\n| workload | target | measured | threshold | met |\n|---|---|---|---|---|\n");
        for (Map<String, Object> t : (List<Map<String, Object>>) r.getOrDefault("targets", List.of())) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s× | %s | %s |%n", t.get("workload"),
                    t.get("target"), fmt(num(t, "measured")), t.get("threshold"),
                    (Boolean) t.get("met") ? "yes" : "**no**"));
        }
        return md.toString();
    }

    /** Appends one table per workload: each configuration's figures and its ratios against {@code failback}. */
    static void configurationTables(StringBuilder md, List<Map<String, Object>> summary,
                                    List<Map<String, Object>> ratios) {
        String workload = null;
        for (Map<String, Object> s : summary) {
            if (!s.get("workload").equals(workload)) {
                workload = (String) s.get("workload");
                md.append("\n### ").append(workload).append("\n\n| configuration | calls/s (median of rounds) "
                        + "| calls/s min–max | p50 ms | p99 ms | p99.9 ms | max ms | failed | behind "
                        + "| CPU µs/call (median) | CPU µs/call min–max | throughput × failback | p99 × failback "
                        + "| CPU/call × failback |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
            }
            md.append(summaryLine(s, find(ratios, workload, (String) s.get("config"), Config.FAILBACK.label)));
        }
    }

    private static String summaryLine(Map<String, Object> s, Map<String, Object> ratio) {
        return String.format(Locale.ROOT, "| %s | %s | %s–%s | %s | %s | %s | %s | %s | %s | %s | %s–%s | %s | %s "
                        + "| %s |%n", s.get("config"), fmt(num(s, "callsPerSecondMedian")),
                fmt(num(s, "callsPerSecondMin")), fmt(num(s, "callsPerSecondMax")), fmt(num(s, "p50Ms")),
                fmt(num(s, "p99Ms")), fmt(num(s, "p999Ms")), fmt(num(s, "maxMs")), s.get("failed"), s.get("behind"),
                fmt(num(s, "cpuMicrosPerCallMedian")), fmt(num(s, "cpuMicrosPerCallMin")),
                fmt(num(s, "cpuMicrosPerCallMax")), ratioCell(ratio, "throughputRatio"), ratioCell(ratio, "p99Ratio"),
                ratioCell(ratio, "cpuPerCallRatio"));
    }

    private static String ratioCell(Map<String, Object> ratio, String key) {
        return ratio == null ? "1" : fmt(num(ratio, key)) + "×";
    }

    private static void positionsMarkdown(StringBuilder md, List<Map<String, Object>> positions) {
        if (positions.isEmpty()) {
            return;
        }
        md.append("\n### Order effect: by position in the round, each phase's throughput (saturation) or p99 (fixed "
                + "rate) against its configuration's median throughput or merged p99 (median of phases; GC ms of the "
                + "measured window in brackets)\n\n| workload, measure |");
        int n = Config.values().length;
        for (int p = 1; p <= n; p++) {
            md.append(" position ").append(p).append(" |");
        }
        md.append('\n').append("|---".repeat(n + 1)).append("|\n");
        for (Map<String, Object> m : positions) {
            md.append("| ").append(m.get("workload")).append(", ").append(m.get("measure")).append(" |");
            List<?> tp = (List<?>) m.get("vsConfig");
            List<?> gc = (List<?>) m.get("gcMillisMedian");
            for (int i = 0; i < tp.size(); i++) {
                md.append(' ').append(fmt(((Number) tp.get(i)).doubleValue())).append(" (")
                        .append(fmt(((Number) gc.get(i)).doubleValue())).append(") |");
            }
            md.append('\n');
        }
    }

    // ------------------------------------------------------------------ helpers

    private static List<Map<String, Object>> phases(List<Map<String, Object>> rows, Workload w, Config c) {
        return rows.stream().filter(r -> r.get("workload").equals(w.label()) && r.get("config").equals(c.label))
                .toList();
    }

    private static Map<String, Object> find(List<Map<String, Object>> ratios, String workload, String config,
                                            String against) {
        return ratios.stream().filter(r -> r.get("workload").equals(workload) && r.get("config").equals(config)
                && r.get("against").equals(against)).findFirst().orElse(null);
    }

    static String encode(Histogram h) {
        ByteBuffer buffer = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int n = h.encodeIntoCompressedByteBuffer(buffer);
        return Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buffer.array(), n));
    }

    static Histogram decode(String base64) {
        try {
            return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(base64)), 0);
        } catch (DataFormatException e) {
            throw new IllegalArgumentException("histogramBase64: not an HdrHistogram (" + e.getMessage() + ")", e);
        }
    }

    static double num(Map<String, Object> row, String key) {
        Object v = row == null ? null : row.get(key);
        return v instanceof Number n ? n.doubleValue() : Double.NaN;
    }
}
