package io.rpctimer.bench.durable;

import io.rpctimer.bench.Figures;
import io.rpctimer.bench.ResultsPage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Turns the JSON files of {@link DurableComparison} into the tables of {@code docs/benchmarks/durable-path.md}:
 * per instance count and system, the median over rounds (and the range) of calls/s, transactions per call and CPU
 * per call, what was lost or ran twice, and the ratios of rpc-timer to db-scheduler.
 *
 * <p>Run: {@code java -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.durable.DurableReport
 * benchmarks/results/durable/durable-full.json [--doc docs/benchmarks/durable-path.md]}: prints the tables, and with
 * {@code --doc} puts them in the page between its {@value #BEGIN} and {@value #END} lines.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
public final class DurableReport {

    static final String BEGIN = "<!-- durable-results:begin -->";
    static final String END = "<!-- durable-results:end -->";

    private DurableReport() {
    }

    public static void main(String[] args) throws Exception {
        ResultsPage.run(args, BEGIN, END, DurableReport::markdown);
    }

    /** @return {@code page} with the text between its marker lines replaced by {@code tables} */
    static String splice(String page, String tables) {
        return ResultsPage.splice(page, BEGIN, END, tables);
    }

    /** @return the tables of every run given (trials of all of them pooled) */
    @SuppressWarnings("unchecked")
    static String markdown(List<Map<String, Object>> runs) {
        List<Map<String, Object>> trials = new ArrayList<>();
        StringBuilder md = new StringBuilder();
        for (Map<String, Object> r : runs) {
            trials.addAll((List<Map<String, Object>>) r.get("trials"));
            md.append(Figures.runLine(r)).append(" Load average at start ").append(r.get("loadAverageAtStart"))
                    .append(", at end ").append(r.get("loadAverageAtEnd")).append(". PostgreSQL: ")
                    .append(r.get("postgresql")).append(".\n\n");
        }
        TreeSet<Integer> counts = new TreeSet<>();
        trials.forEach(t -> counts.add(((Number) t.get("instances")).intValue()));
        md.append("| instances | system | calls/s median (range) | transactions/call | CPU µs/call: drain | PostgreSQL")
                .append(" | total | lost | ran twice | rounds | other load (cores) |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (int n : counts) {
            for (String system : List.of(DrainWorker.RPC_TIMER, DrainWorker.DB_SCHEDULER)) {
                List<Map<String, Object>> ts = select(trials, system, n);
                if (!ts.isEmpty()) {
                    md.append(row(n, system, ts));
                }
            }
        }
        md.append("\n| instances | throughput ratio rpc-timer / db-scheduler, median (range) | calls per CPU-second"
                + " ratio, median (range) | goal ≥ 2× met |\n|---|---|---|---|\n");
        for (int n : counts) {
            md.append(ratioRow(n, trials));
        }
        return md.toString();
    }

    private static List<Map<String, Object>> select(List<Map<String, Object>> trials, String system, int n) {
        return trials.stream().filter(t -> system.equals(t.get("system"))
                && ((Number) t.get("instances")).intValue() == n).toList();
    }

    private static String row(int n, String system, List<Map<String, Object>> ts) {
        long lost = 0;
        long twice = 0;
        for (Map<String, Object> t : ts) {
            Map<?, ?> tally = (Map<?, ?>) t.get("tally");
            lost += ((Number) tally.get("lost")).longValue();
            twice += ((Number) tally.get("ranTwice")).longValue();
        }
        return "| " + n + " | " + name(system) + " | " + medianRange(values(ts, "callsPerSecond")) + " | "
                + Figures.fmt(Figures.median(values(ts, "transactionsPerCall"))) + " | "
                + Figures.fmt(Figures.median(values(ts, "drainCpuUsPerCall"))) + " | "
                + Figures.fmt(Figures.median(values(ts, "pgCpuUsPerCall"))) + " | "
                + Figures.fmt(Figures.median(values(ts, "cpuUsPerCall"))) + " | " + lost + " | " + twice + " | "
                + ts.size() + " | " + Figures.fmt(Figures.median(values(ts, "foreignCores"))) + " |\n";
    }

    /** Ratios per round (the two systems of a round ran back to back), then their median and range. */
    private static String ratioRow(int n, List<Map<String, Object>> trials) {
        List<Map<String, Object>> ours = select(trials, DrainWorker.RPC_TIMER, n);
        List<Map<String, Object>> theirs = select(trials, DrainWorker.DB_SCHEDULER, n);
        Map<Object, Map<String, Object>> byRound = new LinkedHashMap<>();
        theirs.forEach(t -> byRound.put(t.get("round"), t));
        List<Double> speed = new ArrayList<>();
        List<Double> cpu = new ArrayList<>();
        for (Map<String, Object> o : ours) {
            Map<String, Object> t = byRound.get(o.get("round"));
            if (t != null) {
                speed.add(num(o, "callsPerSecond") / num(t, "callsPerSecond"));
                cpu.add(num(t, "cpuUsPerCall") / num(o, "cpuUsPerCall"));
            }
        }
        boolean met = !speed.isEmpty() && Figures.median(speed) >= 2 && Figures.median(cpu) >= 2;
        return "| " + n + " | " + medianRange(speed) + " | " + medianRange(cpu) + " | " + (met ? "yes" : "no")
                + " |\n";
    }

    private static String name(String system) {
        return system.equals(DrainWorker.RPC_TIMER) ? "rpc-timer" : "db-scheduler";
    }

    private static List<Double> values(List<Map<String, Object>> ts, String key) {
        return ts.stream().map(t -> num(t, key)).toList();
    }

    private static double num(Map<String, Object> t, String key) {
        Object v = t.get(key);
        return v instanceof Number x ? x.doubleValue() : Double.NaN;
    }

    private static String medianRange(List<Double> v) {
        if (v.isEmpty()) {
            return "n/a";
        }
        double min = v.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
        double max = v.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
        return Figures.fmt(Figures.median(v)) + (v.size() > 1 ? " (" + Figures.fmt(min) + "–" + Figures.fmt(max)
                + ")" : "");
    }
}
