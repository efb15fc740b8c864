package io.rpctimer.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How the comparisons format and judge their figures: three significant digits or so in tables, medians, and one
 * JSON shape for a target's verdict.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
public final class Figures {

    private Figures() {
    }

    /** @return {@code v} with 0 to 3 decimals by magnitude ({@code 210}, {@code 31.1}, {@code 5.37}, {@code 0.014}) */
    public static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "n/a";
        }
        double a = Math.abs(v);
        String f = a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 0.1 ? "%.2f" : "%.3f";
        return String.format(Locale.ROOT, f, v);
    }

    /** @return the median of {@code values} (any order), NaN if there are none */
    public static double median(List<Double> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> v = new ArrayList<>(values);
        v.sort(null);
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    /**
     * @return the line that opens a report: mode, date, duration, CPU, cores, JVM, rpc-timer's commit and the
     *     settings, from a results map with {@code mode}, {@code machine} ({@link MachineInfo}), {@code
     *     durationMinutes} and {@code settings}
     */
    @SuppressWarnings("unchecked")
    public static String runLine(Map<String, Object> results) {
        Map<String, Object> m = (Map<String, Object>) results.get("machine");
        return "Run `" + results.get("mode") + "` of " + m.get("date") + ", " + results.get("durationMinutes")
                + " min. " + m.get("cpu") + ", " + m.get("cores") + " cores; " + m.get("jvm")
                + "; rpc-timer at commit `" + m.get("gitCommit") + "`. Settings: " + results.get("settings") + ".";
    }

    /** @return one target's verdict, for JSON: {@code target}, {@code measured}, {@code threshold}, {@code met} */
    public static Map<String, Object> target(String what, double measured, String threshold, boolean met) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("target", what);
        m.put("measured", measured);
        m.put("threshold", threshold);
        m.put("met", met);
        return m;
    }
}
