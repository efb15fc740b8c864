package io.rpctimer.bench.failback;

import io.rpctimer.bench.ChartGrid;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.style.CategoryStyler;

/**
 * Draws the comparison into one PNG: four grouped bar charts (one bar per cluster per scenario) in a 2 × 2 grid:
 * worst tick lag (log scale, with the 50 ms target), calls lost silently, calls not delivered whose caller was told,
 * and the drain time. Dubbo's failback in orange, wheelfailback in red, as in the timer benchmarks' chart.
 *
 * <p><b>Threading:</b> stateless; call from one thread (AWT rendering, headless).
 */
final class FailbackChart {

    private static final int WIDTH = 760;
    private static final int HEIGHT = 460;
    private static final Color DUBBO = new Color(0xFF, 0x7F, 0x0E);
    private static final Color WHEEL = new Color(0xD6, 0x27, 0x28);
    /** Where a zero is drawn on the log-scale chart (a log axis has no 0). */
    private static final double LOG_FLOOR_MS = 0.1;

    private FailbackChart() {
    }

    static void write(List<RunResult> runs, Path png) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<CategoryChart> charts = List.of(
                chart(runs, "Worst tick lag of the failback timer (log scale; 0 drawn at 0.1)", "ms",
                        r -> Math.max(LOG_FLOOR_MS, nanToZero(r.worstTickLagMillis())), true,
                        ComparisonReport.TICK_LAG_TARGET_MS),
                chart(runs, "Calls lost silently (caller got null, nothing delivered)", "calls",
                        r -> r.lostSilently(), false, Double.NaN),
                chart(runs, "Calls not delivered, caller told (rejected or failed to caller)", "calls",
                        r -> r.report.rejectedCallerTold() + r.report.callerErrors(), false, Double.NaN),
                chart(runs, "Drain: last send to last retry completed", "s",
                        r -> r.times.drainMillis() / 1000, false, Double.NaN));
        ChartGrid.write(charts, WIDTH, HEIGHT, png);
    }

    private static CategoryChart chart(List<RunResult> runs, String title, String unit, ToDoubleFunction<RunResult> y,
                                       boolean log, double target) {
        CategoryChart chart = ChartGrid.newChart(title, unit, WIDTH, HEIGHT);
        CategoryStyler st = chart.getStyler();
        st.setPlotBackgroundColor(Color.WHITE);
        st.setYAxisLogarithmic(log);
        st.setLabelsFontColorAutomaticEnabled(false);
        st.setLabelsFontColor(Color.DARK_GRAY);
        st.setYAxisMin(log ? LOG_FLOOR_MS : 0.0);
        for (String cluster : List.of(ScenarioRun.DUBBO, ScenarioRun.WHEEL)) {
            List<String> x = new ArrayList<>();
            List<Double> v = new ArrayList<>();
            for (Scenario s : Scenario.values()) {
                runs.stream().filter(r -> r.scenario == s && r.cluster.equals(cluster)).findFirst().ifPresent(r -> {
                    x.add("(" + s.id + ") " + s.label);
                    v.add(Math.round(y.applyAsDouble(r) * 100) / 100.0); // bar labels with 2 decimals at most
                });
            }
            if (x.isEmpty()) {
                continue;
            }
            CategorySeries series = chart.addSeries(cluster.equals(ScenarioRun.DUBBO) ? "Dubbo failback"
                    : "wheelfailback", x, v);
            series.setFillColor(cluster.equals(ScenarioRun.DUBBO) ? DUBBO : WHEEL);
        }
        if (!Double.isNaN(target)) {
            chart.addAnnotation(new AnnotationLine(target, false, false));
        }
        return chart;
    }

    private static double nanToZero(double d) {
        return Double.isNaN(d) ? 0 : d;
    }
}
