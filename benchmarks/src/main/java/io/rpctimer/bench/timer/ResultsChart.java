package io.rpctimer.bench.timer;

import io.rpctimer.bench.ChartGrid;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategorySeries;

/**
 * Draws the main comparisons of a run into one PNG: six bar charts in a 2 × 3 grid, one colour per implementation
 * throughout.
 *
 * <p><b>Threading:</b> stateless; call from one thread (AWT rendering, headless).
 */
final class ResultsChart {

    private static final int WIDTH = 820;
    private static final int HEIGHT = 480;
    private static final List<String> CELLS = List.of("1 thread, empty", "1 thread, 1M pending", "2 threads, empty",
            "2 threads, 1M pending");
    private static final Map<String, Color> COLORS = Map.of(
            "rpc-timer", new Color(0xD6, 0x27, 0x28),
            "netty", new Color(0x1F, 0x77, 0xB4),
            "dubbo", new Color(0xFF, 0x7F, 0x0E),
            "kafka", new Color(0x2C, 0xA0, 0x2C),
            "jdk-stpe", new Color(0x94, 0x67, 0xBD),
            "agrona", new Color(0x8C, 0x56, 0x4B),
            "netty+executor", new Color(0x17, 0xBE, 0xCF),
            "jdk-stpe-2", new Color(0xBC, 0xBD, 0x22));

    private ResultsChart() {
    }

    static void write(Map<String, Object> results, Path png) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<CategoryChart> charts = List.of(
                throughput(results),
                throughputRatios(results),
                perImpl(results, "fireAll", "Case 2: 100k timers over 0-200 ms, time to fire all (median)", "ms",
                        row -> ResultsReport.num(row, "medianMs"), false, 200),
                perImpl(results, "memory", "Case 3: heap bytes per pending timer (1M pending)", "bytes",
                        row -> ResultsReport.num(row, "bytesPerTimer"), false, 48),
                perImpl(results, "lateness", "Case 4: p99 lateness behind a 1 s blocking task (log scale)", "ms",
                        row -> ResultsReport.num(row, "p99Ms"), true, ResultsReport.LATENESS_TARGET_MS),
                idleCpu(results));
        ChartGrid.write(charts, WIDTH, HEIGHT, png);
    }

    private static CategoryChart throughput(Map<String, Object> results) {
        CategoryChart chart = chart("Case 1: schedule 30 s + cancel, throughput (higher is better)", "ops / µs");
        for (TimerImpl impl : TimerImpl.MAIN) {
            List<Double> y = new ArrayList<>();
            for (int threads : ResultsReport.THREADS) {
                for (int pending : ResultsReport.PENDING) {
                    double v = ResultsReport.sc(results, impl.label, threads, pending);
                    y.add(Double.isNaN(v) ? 0 : v);
                }
            }
            color(chart.addSeries(impl.label, CELLS, y), impl.label);
        }
        return chart;
    }

    private static CategoryChart throughputRatios(Map<String, Object> results) {
        CategoryChart chart = chart("Case 1: rpc-timer / peer throughput (targets: 1.5x Netty, 4x Dubbo)", "x");
        for (TimerImpl impl : TimerImpl.MAIN) {
            if (impl == TimerImpl.RPC_TIMER) {
                continue;
            }
            List<Double> y = new ArrayList<>();
            for (int threads : ResultsReport.THREADS) {
                for (int pending : ResultsReport.PENDING) {
                    double v = ResultsReport.sc(results, ResultsReport.RPC, threads, pending)
                            / ResultsReport.sc(results, impl.label, threads, pending);
                    y.add(Double.isNaN(v) ? 0 : v);
                }
            }
            color(chart.addSeries(impl.label, CELLS, y), impl.label);
        }
        chart.addAnnotation(new AnnotationLine(1, false, false));
        chart.addAnnotation(new AnnotationLine(1.5, false, false));
        chart.addAnnotation(new AnnotationLine(4, false, false));
        return chart;
    }

    private static CategoryChart idleCpu(Map<String, Object> results) {
        CategoryChart chart = chart("Case 5: CPU of the idle worker thread (control: a bare 10 ms parker)",
                "ms CPU / s");
        for (Map<String, Object> row : ResultsReport.rows(results, "idleCpu")) {
            String impl = (String) row.get("impl");
            color(chart.addSeries(impl, List.of("empty", "1M far-future timers pending"), List.of(
                    ResultsReport.num(row, "emptyCpuMsPerSec"), ResultsReport.num(row, "pendingCpuMsPerSec"))), impl);
        }
        return chart;
    }

    private static CategoryChart perImpl(Map<String, Object> results, String list, String title, String unit,
                                         ToDoubleFunction<Map<String, Object>> value, boolean log, double line) {
        CategoryChart chart = chart(title, unit);
        for (Map<String, Object> row : ResultsReport.rows(results, list)) {
            String impl = (String) row.get("impl");
            color(chart.addSeries(impl, List.of(" "), List.of(Math.max(value.applyAsDouble(row), log ? 0.1 : 0))),
                    impl);
        }
        if (log) {
            chart.getStyler().setYAxisLogarithmic(true);
            chart.getStyler().setYAxisMin(0.1);
            chart.getStyler().setYAxisMax(10_000.0);
        }
        if (!Double.isNaN(line)) {
            chart.addAnnotation(new AnnotationLine(line, false, false));
        }
        return chart;
    }

    private static CategoryChart chart(String title, String yTitle) {
        CategoryChart chart = ChartGrid.newChart(title, yTitle, WIDTH, HEIGHT);
        chart.getStyler().setDecimalPattern("#,##0.##");
        chart.getStyler().setPlotGridVerticalLinesVisible(false);
        return chart;
    }

    private static void color(CategorySeries series, String impl) {
        series.setFillColor(COLORS.getOrDefault(impl, Color.GRAY));
    }
}
