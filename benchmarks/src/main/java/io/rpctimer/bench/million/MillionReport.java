package io.rpctimer.bench.million;

import io.rpctimer.bench.Figures;
import io.rpctimer.bench.ResultsPage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Turns the JSON files of {@link MillionSpill} into the tables of {@code docs/benchmarks/million-spilled.md}: per
 * store, the spill (time, heap, size), the claims at restart and the delivery, and the targets met or missed.
 *
 * <p>Run: {@code java -cp benchmarks/target/benchmarks.jar io.rpctimer.bench.million.MillionReport
 * benchmarks/results/million/million-full.json [--doc docs/benchmarks/million-spilled.md]}: prints the tables, and
 * with {@code --doc} puts them in the page between its {@value #BEGIN} and {@value #END} lines.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
public final class MillionReport {

    static final String BEGIN = "<!-- million-results:begin -->";
    static final String END = "<!-- million-results:end -->";
    /** A parked call may cost the heap at most this, in bytes: a call on the wheel costs hundreds. */
    static final double BYTES_PER_PARKED_CALL = 16;
    static final double CLAIM_SECONDS = 10;
    /** The delivery must reach this share of the budget's rate. */
    static final double RATE_SHARE = 0.9;

    private static final double MIB = 1024.0 * 1024.0;

    private MillionReport() {
    }

    public static void main(String[] args) throws Exception {
        ResultsPage.run(args, BEGIN, END, MillionReport::markdown);
    }

    @SuppressWarnings("unchecked")
    static String markdown(List<Map<String, Object>> results) {
        StringBuilder md = new StringBuilder();
        for (Map<String, Object> r : results) {
            md.append(Figures.runLine(r)).append(" Load average at start ").append(r.get("loadAverageAtStart"))
                    .append(", at end ").append(r.get("loadAverageAtEnd")).append(".\n\n");
            md.append("| store | calls | spill: time (s), calls/s | heap peak (MiB, of max) | live heap after GC,"
                    + " first → last window (MiB) | heap per parked call (bytes) | store after spill (MiB) | claim"
                    + " of every call at restart (s) | resume at start (s) | delivery (s) | delivered/s, median"
                    + " (budget) | store after delivery (MiB) | lost | ran twice |\n"
                    + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
            for (Map<String, Object> run : (List<Map<String, Object>>) r.get("runs")) {
                md.append(row(run));
            }
            md.append("\n| store | target | measured | threshold | met |\n|---|---|---|---|---|\n");
            for (Map<String, Object> run : (List<Map<String, Object>>) r.get("runs")) {
                md.append(targets(run));
            }
            md.append('\n');
        }
        return md.toString();
    }

    @SuppressWarnings("unchecked")
    private static String row(Map<String, Object> run) {
        Map<String, Object> spill = (Map<String, Object>) run.get("spill");
        Map<String, Object> claim = (Map<String, Object>) run.get("claimAll");
        Map<String, Object> drain = (Map<String, Object>) run.get("drain");
        Map<String, Object> tally = (Map<String, Object>) run.get("tally");
        double calls = num(tally, "calls");
        List<Double> live = list(spill, "liveHeapBytes");
        List<Double> sizes = list(spill, "storeBytes");
        return "| " + run.get("store") + " | " + (long) calls + " | " + Figures.fmt(num(spill, "spillSeconds"))
                + ", " + Figures.fmt(calls / num(spill, "spillSeconds")) + " | "
                + Figures.fmt(num(spill, "heapPeakBytes") / MIB) + " of " + Figures.fmt(num(spill, "heapMaxBytes") / MIB)
                + " | " + Figures.fmt(live.get(0) / MIB) + " → " + Figures.fmt(live.get(live.size() - 1) / MIB)
                + " | " + Figures.fmt(perParkedCall(run)) + " | " + Figures.fmt(sizes.get(sizes.size() - 1) / MIB)
                + " | " + Figures.fmt(num(claim, "claimAllSeconds")) + " | " + Figures.fmt(num(drain, "resumeSeconds"))
                + " | " + Figures.fmt(num(drain, "deliverySeconds")) + " | "
                + Figures.fmt(Figures.median(list(drain, "deliveredPerSecond"))) + " (" + Figures.fmt(num(drain,
                "budgetRate")) + ") | " + Figures.fmt(num(drain, "storeBytes") / MIB) + " | "
                + (long) num(tally, "lost") + " | " + (long) num(tally, "ranTwice") + " |\n";
    }

    /** @return the live heap's growth between the first and the last window, per call spilled meanwhile */
    @SuppressWarnings("unchecked")
    static double perParkedCall(Map<String, Object> run) {
        Map<String, Object> spill = (Map<String, Object>) run.get("spill");
        List<Double> live = list(spill, "liveHeapBytes");
        double calls = num((Map<String, Object>) run.get("tally"), "calls");
        return (live.get(live.size() - 1) - live.get(0)) / (calls * (live.size() - 1) / live.size());
    }

    @SuppressWarnings("unchecked")
    private static String targets(Map<String, Object> run) {
        Map<String, Object> claim = (Map<String, Object>) run.get("claimAll");
        Map<String, Object> drain = (Map<String, Object>) run.get("drain");
        Map<String, Object> tally = (Map<String, Object>) run.get("tally");
        String store = (String) run.get("store");
        double perCall = perParkedCall(run);
        double claimAll = num(claim, "claimAllSeconds");
        double resume = num(drain, "resumeSeconds");
        double rate = num(tally, "calls") / num(drain, "deliverySeconds");
        double budget = num(drain, "budgetRate");
        long lost = (long) num(tally, "lost") + (long) num(tally, "ranTwice");
        return line(store, "heap bounded: live heap per parked call", Figures.fmt(perCall) + " bytes",
                "≤ " + Figures.fmt(BYTES_PER_PARKED_CALL) + " bytes", perCall <= BYTES_PER_PARKED_CALL)
                + line(store, "claim of every call at restart", Figures.fmt(claimAll) + " s",
                "≤ " + Figures.fmt(CLAIM_SECONDS) + " s", claimAll <= CLAIM_SECONDS)
                + line(store, "resume at start (failbacktasks)", Figures.fmt(resume) + " s",
                "≤ " + Figures.fmt(CLAIM_SECONDS) + " s", resume <= CLAIM_SECONDS)
                + line(store, "delivered at the budget's rate (calls / delivery time)", Figures.fmt(rate) + "/s",
                "≥ " + Figures.fmt(RATE_SHARE * budget) + "/s", rate >= RATE_SHARE * budget)
                + line(store, "nothing lost or run twice (at the provider)", String.valueOf(lost), "0", lost == 0);
    }

    private static String line(String store, String target, String measured, String threshold, boolean met) {
        return "| " + store + " | " + target + " | " + measured + " | " + threshold + " | " + (met ? "yes" : "no")
                + " |\n";
    }

    private static double num(Map<String, Object> m, String key) {
        Object v = m == null ? null : m.get(key);
        return v instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    /** @return a list value of a result (a one-element list is written as a plain number) */
    @SuppressWarnings("unchecked")
    private static List<Double> list(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (v instanceof Number n) {
            return List.of(n.doubleValue());
        }
        List<Double> out = new ArrayList<>();
        for (Object o : (List<Object>) v) {
            out.add(((Number) o).doubleValue());
        }
        return out;
    }
}
