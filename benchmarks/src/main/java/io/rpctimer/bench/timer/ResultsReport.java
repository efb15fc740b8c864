package io.rpctimer.bench.timer;

import io.rpctimer.bench.Figures;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns the raw rows of a run into ratios, target verdicts and markdown tables.
 *
 * <p>Ratios always read "how many times better rpc-timer is": peer time / rpc-timer time, rpc-timer throughput /
 * peer throughput, peer bytes / rpc-timer bytes. Above 1 rpc-timer is better.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
final class ResultsReport {

    static final String RPC = TimerImpl.RPC_TIMER.label;
    /** Case 4 target: two ticks plus 1 ms. */
    static final double LATENESS_TARGET_MS = 2 * BenchConfig.TICK_MILLIS + 1;
    /** Case 5 target, "near zero": at most 1 ms of worker CPU per second (0.1% of a core) with 1M pending. */
    static final double IDLE_CPU_TARGET_MS_PER_S = 1.0;
    static final int[] THREADS = {1, 2};
    static final int[] PENDING = {0, BenchConfig.MANY_PENDING};

    private ResultsReport() {
    }

    // ------------------------------------------------------------------ analysis

    /** Adds {@code ratios} and {@code targets} to {@code results}. */
    static void analyse(Map<String, Object> results) {
        Map<String, Object> ratios = new LinkedHashMap<>();
        List<Map<String, Object>> sc = new ArrayList<>();
        for (int threads : THREADS) {
            for (int pending : PENDING) {
                double rpc = num(find(results, "scheduleCancel", RPC, threads, pending), "opsPerUs");
                for (Map<String, Object> row : rows(results, "scheduleCancel")) {
                    if (!row.get("impl").equals(RPC) && matches(row, threads, pending)) {
                        sc.add(ratioRow(row.get("impl"), threads, pending, rpc / num(row, "opsPerUs")));
                    }
                }
            }
        }
        ratios.put("scheduleCancelRpcOverPeer", sc);
        ratios.put("fireAllPeerOverRpc", peerOverRpc(results, "fireAll", "medianMs"));
        ratios.put("memoryPeerOverRpc", peerOverRpc(results, "memory", "bytesPerTimer"));
        ratios.put("latenessP99PeerOverRpc", peerOverRpc(results, "lateness", "p99Ms"));
        results.put("ratios", ratios);
        results.put("targets", targets(results));
    }

    private static List<Map<String, Object>> peerOverRpc(Map<String, Object> results, String list, String key) {
        List<Map<String, Object>> out = new ArrayList<>();
        Map<String, Object> rpc = find(results, list, RPC, null, null);
        for (Map<String, Object> row : rows(results, list)) {
            if (!row.get("impl").equals(RPC)) {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("peer", row.get("impl"));
                r.put("ratio", num(row, key) / num(rpc, key));
                out.add(r);
            }
        }
        return out;
    }

    private static Map<String, Object> ratioRow(Object peer, int threads, int pending, double ratio) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("peer", peer);
        r.put("threads", threads);
        r.put("pending", pending);
        r.put("ratio", ratio);
        return r;
    }

    private static List<Map<String, Object>> targets(Map<String, Object> results) {
        List<Map<String, Object>> t = new ArrayList<>();
        for (int threads : THREADS) {
            for (int pending : PENDING) {
                double rpc = sc(results, RPC, threads, pending);
                String cell = cell(threads, pending);
                double nettyEveryFork = ForkSpread.worstRatio(find(results, "scheduleCancel", RPC, threads, pending),
                        find(results, "scheduleCancel", "netty", threads, pending));
                t.add(target("schedule+cancel >= 1.5x Netty in every fork (slowest rpc-timer fork / fastest Netty"
                        + " fork)", cell, nettyEveryFork, "x", ">= 1.5", nettyEveryFork >= 1.5));
                t.add(target("schedule+cancel >= 4x Dubbo (means)", cell, rpc / sc(results, "dubbo", threads, pending),
                        "x", ">= 4", rpc / sc(results, "dubbo", threads, pending) >= 4));
            }
            double slowdown = 1 / ForkSpread.worstRatio(find(results, "scheduleCancel", RPC, threads,
                    BenchConfig.MANY_PENDING), find(results, "scheduleCancel", RPC, threads, 0));
            t.add(target("rpc-timer with 1M pending at most 20% slower than empty in every fork (fastest empty fork"
                    + " / slowest 1M fork)", threads + (threads == 1 ? " thread" : " threads"), slowdown, "x",
                    "<= 1.2", slowdown <= 1.2));
        }
        for (int pending : PENDING) {
            double agronaOverRpc = sc(results, "agrona", 1, pending) / sc(results, RPC, 1, pending);
            t.add(target("within 2x of Agrona, 1 thread (Agrona / rpc-timer throughput)", cell(1, pending),
                    agronaOverRpc, "x", "<= 2", agronaOverRpc <= 2));
        }
        double bytes = num(find(results, "memory", RPC, null, null), "bytesPerTimer");
        t.add(target("bytes per pending timer", "1M pending", bytes, " B", "<= 48", bytes <= 48));
        double p99 = num(find(results, "lateness", RPC, null, null), "p99Ms");
        t.add(target("p99 lateness behind a 1 s blocking task", "1,000 timers", p99, " ms",
                "<= " + fmt(LATENESS_TARGET_MS) + " (2 ticks + 1 ms)", p99 <= LATENESS_TARGET_MS));
        double fire = num(find(results, "fireAll", RPC, null, null), "medianMs");
        double fireNetty = num(find(results, "fireAll", "netty", null, null), "medianMs");
        t.add(target("100k timers over 0-200 ms: no slower than Netty", "median",
                fire, " ms", "<= Netty's " + fmt(fireNetty) + " ms", fire <= fireNetty));
        double idle = num(find(results, "idleCpu", RPC, null, null), "pendingCpuMsPerSec");
        t.add(target("idle worker CPU with 1M far-future timers, near zero", "1M pending", idle, " ms/s",
                "<= " + fmt(IDLE_CPU_TARGET_MS_PER_S), idle <= IDLE_CPU_TARGET_MS_PER_S));
        return t;
    }

    private static Map<String, Object> target(String name, String cell, double value, String unit, String threshold,
                                              boolean met) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("target", name);
        m.put("cell", cell);
        m.put("measured", fmt(value) + unit);
        m.put("threshold", threshold);
        m.put("met", met);
        return m;
    }

    // ------------------------------------------------------------------ markdown

    /** @param pngName the chart beside the report, or null for none */
    static String markdown(Map<String, Object> r, String pngName) {
        StringBuilder md = new StringBuilder();
        md.append("<!-- generated by TimerBenchRunner; do not edit -->\n");
        machine(r, md);
        if (pngName != null) {
            md.append("\n![main comparisons](").append(pngName).append(")\n");
        }
        scheduleCancelTables(r, md);
        fireAllTable(r, md);
        memoryTable(r, md);
        latenessTable(r, md);
        idleTable(r, md);
        targetsTable(r, md);
        return md.toString();
    }

    @SuppressWarnings("unchecked")
    private static void machine(Map<String, Object> r, StringBuilder md) {
        Map<String, Object> m = (Map<String, Object>) r.get("machine");
        md.append("\nRun `").append(r.get("mode")).append("` of ").append(m.get("date")).append(", ")
                .append(fmt(num(r, "durationMinutes"))).append(" min. ")
                .append(m.get("cpu")).append(", ").append(m.get("cores")).append(" cores, ").append(m.get("memory"))
                .append("; ").append(m.get("os")).append("; ").append(m.get("jvm")).append(".\n")
                .append("Versions: ").append(m.get("versions")).append("; rpc-timer at commit `")
                .append(m.get("gitCommit")).append("` (uncommitted changes under rpc-timer/: ")
                .append(m.get("rpcTimerUncommittedChanges")).append("). Settings: ").append(r.get("settings"))
                .append(".\n");
    }

    private static void scheduleCancelTables(Map<String, Object> r, StringBuilder md) {
        md.append("\n### Case 1: schedule + cancel (ops/µs, all producer threads together; higher is better)\n\n")
                .append("| impl | 1 thread, empty | 1 thread, 1M pending | 2 threads, empty | 2 threads, 1M pending"
                        + " | alloc B/op (1 t, empty) |\n|---|---|---|---|---|---|\n");
        for (TimerImpl impl : TimerImpl.MAIN) {
            md.append("| ").append(impl.label);
            for (int threads : THREADS) {
                for (int pending : PENDING) {
                    Map<String, Object> row = find(r, "scheduleCancel", impl.label, threads, pending);
                    md.append(" | ").append(row == null ? "n/a" : fmt(num(row, "opsPerUs")) + " ± "
                            + fmt(num(row, "opsPerUsError")) + " (forks " + ForkSpread.range(row) + ")");
                }
            }
            md.append(" | ").append(fmt(num(find(r, "scheduleCancel", impl.label, 1, 0), "allocBytesPerOp")))
                    .append(" |\n");
        }
        md.append("\nRatios rpc-timer / peer (throughput):\n\n"
                + "| peer | 1 thread, empty | 1 thread, 1M pending | 2 threads, empty | 2 threads, 1M pending |\n"
                + "|---|---|---|---|---|\n");
        for (TimerImpl impl : TimerImpl.MAIN) {
            if (impl == TimerImpl.RPC_TIMER) {
                continue;
            }
            md.append("| ").append(impl.label);
            for (int threads : THREADS) {
                for (int pending : PENDING) {
                    Map<String, Object> row = find(r, "scheduleCancel", impl.label, threads, pending);
                    md.append(" | ").append(row == null ? "n/a"
                            : fmt(sc(r, RPC, threads, pending) / num(row, "opsPerUs")) + "×");
                }
            }
            md.append(" |\n");
        }
        gcShareTable(r, md);
        md.append("\nrpc-timer empty / 1M pending (means): 1 thread ")
                .append(fmt(sc(r, RPC, 1, 0) / sc(r, RPC, 1, BenchConfig.MANY_PENDING))).append("×, 2 threads ")
                .append(fmt(sc(r, RPC, 2, 0) / sc(r, RPC, 2, BenchConfig.MANY_PENDING))).append("×.\n");
        forkTable(r, md);
    }

    /**
     * Every fork of every case-1 cell: a slow mode shows as forks far apart, or as one fork changing speed part-way,
     * which a mean and its error hide.
     */
    private static void forkTable(Map<String, Object> r, StringBuilder md) {
        md.append("\nFork by fork (ops/µs): each fork's mean over its measured iterations, the slowest–fastest fork,"
                + " and every measured iteration (forks separated by /):\n\n"
                + "| impl | cell | fork means | slowest–fastest | iterations |\n|---|---|---|---|---|\n");
        for (TimerImpl impl : TimerImpl.MAIN) {
            for (int threads : THREADS) {
                for (int pending : PENDING) {
                    Map<String, Object> row = find(r, "scheduleCancel", impl.label, threads, pending);
                    if (row != null) {
                        md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s |%n", impl.label,
                                cell(threads, pending), ForkSpread.means(row), ForkSpread.range(row),
                                ForkSpread.allIterations(row)));
                    }
                }
            }
        }
    }

    /**
     * The share of the measured time each cell spent in GC pauses: a peer that hands timeouts to its worker faster
     * than the worker takes them (Netty and Dubbo move at most 100,000 per tick) grows a backlog that survives young
     * collections, and its rate then depends on how long the fork has run and on the heap.
     */
    private static void gcShareTable(Map<String, Object> r, StringBuilder md) {
        md.append("\nGC pauses, % of the measured time (high: the rate is held by the timer's own garbage, and"
                + " depends on the run's length and heap):\n\n"
                + "| impl | 1 thread, empty | 1 thread, 1M pending | 2 threads, empty | 2 threads, 1M pending |\n"
                + "|---|---|---|---|---|\n");
        for (TimerImpl impl : TimerImpl.MAIN) {
            md.append("| ").append(impl.label);
            for (int threads : THREADS) {
                for (int pending : PENDING) {
                    Map<String, Object> row = find(r, "scheduleCancel", impl.label, threads, pending);
                    md.append(" | ").append(row == null || row.get("gcTimePercent") == null ? "n/a"
                            : fmt(num(row, "gcTimePercent")) + "%");
                }
            }
            md.append(" |\n");
        }
    }

    private static void fireAllTable(Map<String, Object> r, StringBuilder md) {
        md.append("\n### Case 2: 100,000 timers due over 0–200 ms, time until all have run (ms; lower is better)\n\n"
                + "| impl | median | min | max | over 200 ms (median) | peer / rpc-timer |\n|---|---|---|---|---|---|\n");
        double rpc = num(find(r, "fireAll", RPC, null, null), "medianMs");
        for (Map<String, Object> row : rows(r, "fireAll")) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s× |%n", row.get("impl"),
                    fmt(num(row, "medianMs")), fmt(num(row, "minMs")), fmt(num(row, "maxMs")),
                    fmt(num(row, "medianMs") - 200), fmt(num(row, "medianMs") / rpc)));
        }
    }

    private static void memoryTable(Map<String, Object> r, StringBuilder md) {
        md.append("\n### Case 3: heap bytes per pending timer, 1,000,000 pending (lower is better)\n\n"
                + "| impl | bytes / timer | peer / rpc-timer |\n|---|---|---|\n");
        double rpc = num(find(r, "memory", RPC, null, null), "bytesPerTimer");
        for (Map<String, Object> row : rows(r, "memory")) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s× |%n", row.get("impl"),
                    fmt(num(row, "bytesPerTimer")), fmt(num(row, "bytesPerTimer") / rpc)));
        }
    }

    private static void latenessTable(Map<String, Object> r, StringBuilder md) {
        md.append("\n### Case 4: lateness of 1,000 timers due 50–150 ms behind a task blocking 1 s (ms; lower is"
                + " better)\n\n| impl | p50 | p99 | max | p99 peer / rpc-timer |\n|---|---|---|---|---|\n");
        double rpc = num(find(r, "lateness", RPC, null, null), "p99Ms");
        for (Map<String, Object> row : rows(r, "lateness")) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s× |%n", row.get("impl"),
                    fmt(num(row, "p50Ms")), fmt(num(row, "p99Ms")), fmt(num(row, "maxMs")),
                    fmt(num(row, "p99Ms") / rpc)));
        }
    }

    private static void idleTable(Map<String, Object> r, StringBuilder md) {
        md.append("\n### Case 5: CPU of the idle timer's worker thread (ms of CPU per second; lower is better)\n\n"
                + "| impl | thread | empty | 1M far-future timers pending |\n|---|---|---|---|\n");
        for (Map<String, Object> row : rows(r, "idleCpu")) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s |%n", row.get("impl"), row.get("thread"),
                    fmt(num(row, "emptyCpuMsPerSec")), fmt(num(row, "pendingCpuMsPerSec"))));
        }
    }

    @SuppressWarnings("unchecked")
    private static void targetsTable(Map<String, Object> r, StringBuilder md) {
        md.append("\n### Targets\n\n| target | cell | measured | threshold | met |\n|---|---|---|---|---|\n");
        for (Map<String, Object> t : (List<Map<String, Object>>) r.get("targets")) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s |%n", t.get("target"), t.get("cell"),
                    t.get("measured"), t.get("threshold"), (boolean) t.get("met") ? "yes" : "**no**"));
        }
        double worst = 0;
        for (String list : List.of("scheduleCancel", "fireAll", "memory", "lateness", "idleCpu")) {
            for (Map<String, Object> row : rows(r, list)) {
                worst = Math.max(worst, num(row, "foreignCores"));
            }
        }
        md.append("\nHighest average load of other processes during any one measurement: ").append(fmt(worst))
                .append(" cores.\n");
    }

    // ------------------------------------------------------------------ lookups

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> rows(Map<String, Object> results, String list) {
        Object rows = results.get(list);
        return rows == null ? List.of() : (List<Map<String, Object>>) rows;
    }

    /** @return the row of {@code impl} (and threads/pending when given), or null */
    static Map<String, Object> find(Map<String, Object> results, String list, String impl, Integer threads,
                                    Integer pending) {
        for (Map<String, Object> row : rows(results, list)) {
            if (row.get("impl").equals(impl) && (threads == null || matches(row, threads, pending))) {
                return row;
            }
        }
        return null;
    }

    private static boolean matches(Map<String, Object> row, int threads, int pending) {
        return num(row, "threads") == threads && num(row, "pending") == pending;
    }

    static double sc(Map<String, Object> results, String impl, int threads, int pending) {
        return num(find(results, "scheduleCancel", impl, threads, pending), "opsPerUs");
    }

    static double num(Map<String, Object> row, String key) {
        if (row == null) {
            return Double.NaN;
        }
        Object v = row.get(key);
        return v instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    private static String cell(int threads, int pending) {
        return threads + (threads == 1 ? " thread, " : " threads, ") + (pending == 0 ? "empty" : "1M pending");
    }

    static String fmt(double v) {
        return Figures.fmt(v);
    }
}
