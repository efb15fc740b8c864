package io.rpctimer.bench.timer;

import io.rpctimer.bench.Figures;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The fork-by-fork view of a case-1 row: each JMH fork's mean over its measured iterations, the slowest and the
 * fastest fork, and every iteration in order. A timer with a slow mode shows it here and not in the mean: some forks
 * settle several times slower than others, or one fork changes speed part-way.
 *
 * <p>The every-fork targets pair the worst fork of one cell with the best fork of the other, so they hold only if
 * they hold whichever state each JVM fell into: "rpc-timer at least 1.5× Netty in every fork" is the slowest
 * rpc-timer fork against the fastest Netty fork.
 *
 * <p>A row keeps its iterations under {@code iterationOpsPerUs}: one list of ops/µs per fork, in order. A row without
 * them (an old results file) has no forks: its figures are NaN and its targets unmet.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
final class ForkSpread {

    private ForkSpread() {
    }

    /** @return every fork's measured iterations, in ops/µs; empty if the row has none */
    @SuppressWarnings("unchecked")
    static List<List<Double>> iterations(Map<String, Object> row) {
        Object forks = row == null ? null : row.get("iterationOpsPerUs");
        if (!(forks instanceof List<?> list)) {
            return List.of();
        }
        List<List<Double>> out = new ArrayList<>();
        for (Object fork : list) {
            List<Double> scores = new ArrayList<>();
            for (Object score : (List<Object>) fork) {
                scores.add(((Number) score).doubleValue());
            }
            out.add(scores);
        }
        return out;
    }

    /** @return each fork's mean over its measured iterations, in ops/µs, fork by fork */
    static List<Double> forkMeans(Map<String, Object> row) {
        List<Double> means = new ArrayList<>();
        for (List<Double> fork : iterations(row)) {
            means.add(fork.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN));
        }
        return means;
    }

    /** @return the slowest fork's mean, NaN without forks */
    static double slowestFork(Map<String, Object> row) {
        return forkMeans(row).stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    /** @return the fastest fork's mean, NaN without forks */
    static double fastestFork(Map<String, Object> row) {
        return forkMeans(row).stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    /** @return the slowest fork of {@code subject} over the fastest fork of {@code reference}: the worst pairing */
    static double worstRatio(Map<String, Object> subject, Map<String, Object> reference) {
        return slowestFork(subject) / fastestFork(reference);
    }

    /** @return {@code "a–b"}, the slowest and the fastest fork's means, or {@code n/a} */
    static String range(Map<String, Object> row) {
        return Figures.fmt(slowestFork(row)) + "–" + Figures.fmt(fastestFork(row));
    }

    /** @return each fork's mean, comma-separated, or {@code n/a} */
    static String means(Map<String, Object> row) {
        List<Double> means = forkMeans(row);
        if (means.isEmpty()) {
            return "n/a";
        }
        StringJoiner out = new StringJoiner(", ");
        means.forEach(m -> out.add(Figures.fmt(m)));
        return out.toString();
    }

    /** @return every iteration, forks separated by {@code " / "}: {@code "27.1 28.0 / 5.20 5.31"} */
    static String allIterations(Map<String, Object> row) {
        List<List<Double>> forks = iterations(row);
        if (forks.isEmpty()) {
            return "n/a";
        }
        StringJoiner out = new StringJoiner(" / ");
        for (List<Double> fork : forks) {
            StringJoiner scores = new StringJoiner(" ");
            fork.forEach(s -> scores.add(Figures.fmt(s)));
            out.add(scores.toString());
        }
        return out.toString();
    }
}
