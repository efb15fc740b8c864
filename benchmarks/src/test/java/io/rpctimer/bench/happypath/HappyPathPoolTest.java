package io.rpctimer.bench.happypath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/**
 * Pools made-up runs whose ratios are known: the pooled figures must be the single run's estimators over all rounds,
 * the intervals must contain them, and a verdict must be called clear only when the whole interval agrees.
 */
class HappyPathPoolTest {

    private static final String WORKLOAD = "async, saturation, 64 in flight";

    @Test
    @SuppressWarnings("unchecked")
    void poolsTheRoundsOfEveryRun_andJudgesOnThemAll() {
        // run A: wheelfailback at 0.96x failback in every round; run B: at 0.99x. Pooled median of the 8 per-round
        // ratios: (0.96 + 0.99) / 2. timeoutcheck at 1.00x wheelfailback throughout
        Map<String, Object> a = run("a.json", 4, 0.96, 1.0);
        Map<String, Object> b = run("b.json", 4, 0.99, 1.0);

        Map<String, Object> pooled = HappyPathPool.pool(List.of(a, b));

        Map<String, Object> wheel = target(pooled, "wheelfailback against failback: throughput lost <= 3%");
        assertEquals(8, wheel.get("rounds"));
        assertEquals(0.975, (double) wheel.get("measured"), 1e-9);
        assertTrue((Boolean) wheel.get("met"));
        assertEquals(0.96, (double) wheel.get("ciLow"), 1e-9);
        assertEquals(0.99, (double) wheel.get("ciHigh"), 1e-9);
        assertFalse((Boolean) wheel.get("clear"), "the interval reaches below 0.97");
        Map<String, Object> check = target(pooled,
                "wheelfailback+timeoutcheck against wheelfailback: throughput lost <= 3%");
        assertEquals(1.0, (double) check.get("measured"), 1e-9);
        assertTrue((Boolean) check.get("clear"));
        Map<String, Object> p99 = target(pooled, "wheelfailback against failback: p99 added <= 5%");
        assertEquals(1.0, (double) p99.get("measured"), 0.01, "the same latencies: merged p99s equal");
        assertEquals(2, ((List<?>) pooled.get("runs")).size());
        String md = HappyPathPool.markdown(pooled);
        assertTrue(md.contains("| " + WORKLOAD + " | wheelfailback against failback: throughput lost <= 3% | 8 "
                + "| 0.975× | 0.960–0.990× | >= 0.97 | yes | inside the noise |"), md);
        assertTrue(md.contains("### " + WORKLOAD), md);
    }

    @Test
    @SuppressWarnings("unchecked")
    void refusesRunsWithOtherPhaseLengths() {
        Map<String, Object> a = run("a.json", 4, 0.96, 1.0);
        Map<String, Object> b = run("b.json", 4, 0.96, 1.0);
        ((Map<String, Object>) b.get("settings")).put("measureSecondsPerPhase", 3.0);

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HappyPathPool.pool(List.of(a, b)));

        assertEquals("b.json: measureSecondsPerPhase 3.0 (expected: 4.0, as in a.json)", e.getMessage());
    }

    @Test
    @SuppressWarnings("unchecked")
    void refusesRunsOfOtherTurns_andJudgesOnlyP99InTurnsOfCalls() {
        Map<String, Object> phases = run("phases.json", 4, 0.96, 1.0);
        Map<String, Object> calls = run("calls.json", 4, 0.96, 1.0);
        ((Map<String, Object>) calls.get("settings")).put("turns", "calls");

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HappyPathPool.pool(List.of(phases, calls)));
        assertEquals("calls.json: turns calls (expected: phases, as in phases.json)", e.getMessage());

        List<Map<String, Object>> targets = (List<Map<String, Object>>) HappyPathPool.pool(List.of(calls))
                .get("targets");
        assertEquals(List.of("wheelfailback against failback: p99 added <= 5%",
                "wheelfailback+timeoutcheck against wheelfailback: p99 added <= 5%"),
                targets.stream().map(t -> t.get("target")).toList());
    }

    @Test
    void readsTheWorkloadLabelsTheComparisonWrites() {
        for (Workload w : Workload.standard(8, 64, 3000)) {
            assertEquals(w, HappyPathPool.workload(w.label()));
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HappyPathPool.workload("async, 3000 a second"));
        assertTrue(e.getMessage().startsWith("workload: 'async, 3000 a second' (expected:"), e.getMessage());
    }

    @Test
    void aVerdictIsClearOnlyWhenTheWholeIntervalAgrees() {
        assertTrue(HappyPathPool.clear(">= 0.97", true, 0.971, 0.99));
        assertFalse(HappyPathPool.clear(">= 0.97", true, 0.969, 0.99));
        assertTrue(HappyPathPool.clear(">= 0.97", false, 0.94, 0.969));
        assertFalse(HappyPathPool.clear(">= 0.97", false, 0.94, 0.97));
        assertTrue(HappyPathPool.clear("<= 1.05", true, 0.9, 1.05));
        assertTrue(HappyPathPool.clear("<= 1.05", false, 1.051, 1.2));
        assertFalse(HappyPathPool.clear("<= 1.05", false, 1.04, 1.2));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> target(Map<String, Object> pooled, String what) {
        return ((List<Map<String, Object>>) pooled.get("targets")).stream()
                .filter(t -> t.get("target").equals(what)).findFirst().orElseThrow();
    }

    /** A run of {@code rounds} rounds of the async saturation workload; failback at 50,000 calls/s. */
    private static Map<String, Object> run(String file, int rounds, double wheelVsFailback, double checkVsWheel) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            double failback = 50_000 + 1_000 * round; // drift between rounds, which the per-round ratios cancel
            rows.add(row(round, "failover", failback));
            rows.add(row(round, "failback", failback));
            rows.add(row(round, "wheelfailback", failback * wheelVsFailback));
            rows.add(row(round, "wheelfailback+timeoutcheck", failback * wheelVsFailback * checkVsWheel));
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("rounds", rounds);
        settings.put("warmupSecondsPerPhase", 2.0);
        settings.put("measureSecondsPerPhase", 4.0);
        settings.put("timeoutMillis", 1000);
        settings.put("workloads", List.of(WORKLOAD));
        Map<String, Object> run = new LinkedHashMap<>();
        run.put("file", file);
        run.put("machine", Map.of("date", "2026-11-24T00:00:00Z", "gitCommit", "abc1234",
                "rpcTimerUncommittedChanges", "no"));
        run.put("settings", settings);
        run.put("rounds", rows);
        run.put("foreignCoresWholeRun", 0.01);
        return run;
    }

    private static Map<String, Object> row(int round, String config, double callsPerSecond) {
        Histogram h = new Histogram(3);
        for (int i = 1; i <= 1000; i++) {
            h.recordValue(i * 1_000L); // 1..1000 µs, in ns
        }
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("round", round);
        row.put("position", 1);
        row.put("workload", WORKLOAD);
        row.put("closedLoop", true);
        row.put("config", config);
        row.put("callsPerSecond", callsPerSecond);
        row.put("answered", 1000L);
        row.put("failed", 0L);
        row.put("behind", 0L);
        row.put("cpuMicrosPerCall", 40.0);
        row.put("gcMillis", 10);
        row.put("p99Ms", 0.99);
        row.put("histogramBase64", HappyPathReport.encode(h));
        return row;
    }
}
