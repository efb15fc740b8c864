package io.rpctimer.bench.happypath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.bench.BenchArgs;
import io.rpctimer.bench.Json;
import io.rpctimer.bench.MachineInfo;
import io.rpctimer.testkit.DubboNode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs the happy path's machinery once, tiny: every configuration, every workload (2 sync threads, 4 async calls in
 * flight, 100 calls/s), a JIT warm-up of 0.1 s each and one round of 0.1 s warm-up and 0.3 s measurement, over real
 * Dubbo RPC and ZooKeeper. Checks that every configuration answered calls and no phase failed one, that the
 * percentiles are read back from the stored histograms, and that the report names every target. Measures nothing.
 */
class HappyPathSmokeTest {

    @Test
    @Timeout(60)
    @SuppressWarnings("unchecked")
    void oneTinyRoundOfEveryConfigurationAndWorkload() throws Exception {
        Map<String, Object> r = oneTinyRound(Duration.ofMillis(300), false);

        List<Map<String, Object>> rounds = (List<Map<String, Object>>) r.get("rounds");
        // a phase of 0.3 s may see no answer on a busy machine; every configuration must see some, and none fail
        Map<Object, Long> answeredByConfig = new LinkedHashMap<>();
        double cpuMicrosInAll = 0;
        for (Map<String, Object> row : rounds) {
            assertEquals(0L, row.get("failed"), row.toString());
            assertTrue((double) row.get("p99Ms") < HappyPathComparison.TIMEOUT.toMillis(), row.toString());
            answeredByConfig.merge(row.get("config"), ((Number) row.get("answered")).longValue(), Long::sum);
            int position = ((Number) row.get("position")).intValue();
            assertTrue(position >= 1 && position <= Config.values().length, row.toString());
            // the process's CPU time is read in clock ticks (10 ms on Linux): a phase of 0.3 s may read 0
            long answered = ((Number) row.get("answered")).longValue();
            double cpuMicros = (double) row.get("cpuMicrosPerCall");
            assertTrue(answered == 0 || cpuMicros >= 0, row.toString());
            cpuMicrosInAll += answered == 0 ? 0 : cpuMicros * answered;
        }
        assertTrue(cpuMicrosInAll > 0, "no CPU time read in " + rounds.size() + " phases: " + rounds);
        assertEquals(Config.values().length, answeredByConfig.size(), answeredByConfig.toString());
        answeredByConfig.values().forEach(n -> assertTrue(n > 0, answeredByConfig.toString()));
        List<Map<String, Object>> summary = (List<Map<String, Object>>) r.get("summary");
        assertEquals(rounds.get(0).get("p99Ms"), summary.get(0).get("p99Ms"), "merged one round = that round");
        List<Map<String, Object>> targets = (List<Map<String, Object>>) r.get("targets");
        assertEquals(2 * (2 + 2 + 1 + 1), targets.size(), targets.toString()); // throughput only at saturation

        Map<String, Object> results = new LinkedHashMap<>(r);
        results.put("mode", "smoke");
        results.put("machine", MachineInfo.collect());
        String md = HappyPathReport.markdown(results);
        assertTrue(md.contains("| wheelfailback+timeoutcheck against wheelfailback: p99 added <= 5% |")
                || md.contains("wheelfailback+timeoutcheck against wheelfailback: p99 added <= 5%"), md);
        assertTrue(md.contains("### sync, saturation, 2 threads"), md);
        assertTrue(md.contains("| calls/s min–max |") && md.contains("| CPU µs/call (median) |"), md);
        assertTrue(md.contains("### Order effect") && md.contains("| async, 100/s, p99 |"), md);
        assertTrue(Json.write(results).contains("\"histogramBase64\""));
    }

    @Test
    @Timeout(60)
    @SuppressWarnings("unchecked")
    void inTurnsOfCallsEveryConfigurationIsCalledInOnePhase_andOnlyP99IsJudged() throws Exception {
        Map<String, Object> r = oneTinyRound(Duration.ofMillis(500), true);

        List<Map<String, Object>> rounds = (List<Map<String, Object>>) r.get("rounds");
        for (String workload : List.of("sync, saturation, 2 threads", "async, saturation, 4 in flight")) {
            // closed loop, the callers hand out the calls in turns: the configurations' counts differ by at most
            // the calls in flight when the measurement starts and when it ends (at most 4 each)
            List<Long> answered = rounds.stream().filter(row -> row.get("workload").equals(workload))
                    .map(row -> ((Number) row.get("answered")).longValue()).toList();
            assertEquals(Config.values().length, answered.size());
            long min = answered.stream().mapToLong(Long::longValue).min().orElseThrow();
            long max = answered.stream().mapToLong(Long::longValue).max().orElseThrow();
            assertTrue(min > 0 && max - min <= 8, workload + ": " + answered);
        }
        for (Map<String, Object> row : rounds) {
            assertEquals(0L, row.get("failed"), row.toString());
        }
        List<Map<String, Object>> targets = (List<Map<String, Object>>) r.get("targets");
        assertEquals(2 * 4, targets.size(), targets.toString()); // p99 only, every workload
        targets.forEach(t -> assertTrue(((String) t.get("target")).endsWith("p99 added <= 5%"), t.toString()));
        assertEquals("calls", ((Map<String, Object>) r.get("settings")).get("turns"));
    }

    /** @return one round of every workload (2 sync threads, 4 async calls in flight, 100 calls/s), after 0.1 s */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> oneTinyRound(Duration measure, boolean callTurns) throws Exception {
        DubboNode.disableDubboShutdownHooks();
        HappyPathComparison.Settings settings = new HappyPathComparison.Settings("smoke", 1,
                Duration.ofMillis(100), measure, true, Workload.standard(2, 4, 100), callTurns);
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        Map<String, Object> r = HappyPathComparison.run(settings, new PrintStream(log, true, StandardCharsets.UTF_8));
        List<Map<String, Object>> rounds = (List<Map<String, Object>>) r.get("rounds");
        assertEquals(4 * Config.values().length, rounds.size(), log.toString(StandardCharsets.UTF_8));
        return r;
    }

    @Test
    void roundsAreAMultipleOfTheConfigurations_andOneWorkloadCanBeChosen() {
        assertEquals(Config.values().length, HappyPathComparison.Settings.of("quick",
                BenchArgs.parse(new String[0], List.of())).rounds());
        assertEquals(2 * Config.values().length, HappyPathComparison.Settings.of("full",
                BenchArgs.parse(new String[0], List.of())).rounds());
        HappyPathComparison.Settings one = HappyPathComparison.Settings.of("quick",
                BenchArgs.parse(new String[] {"--workload", "2", "--rounds", "8"}, List.of("workload", "rounds")));
        assertEquals(List.of("async, saturation, 64 in flight"),
                one.workloads().stream().map(Workload::label).toList());
        assertEquals(8, one.rounds());
        assertEquals(false, one.callTurns());
        assertEquals(true, HappyPathComparison.Settings.of("quick",
                BenchArgs.parse(new String[] {"--turns", "calls"}, List.of("turns"))).callTurns());
    }

    @Test
    void badArgumentsNameTheOptionAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HappyPathComparison.Settings.of("quick", BenchArgs.parse(new String[] {"--rate", "0"},
                        List.of("rate"))));
        assertEquals("--rate: '0' (expected: a whole number >= 1)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> BenchArgs.parse(new String[] {"quick", "--param", "novalue"}, List.of()));
        assertEquals("--param: 'novalue' (expected: key=value)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> BenchArgs.mode("slow"));
        assertEquals("mode: 'slow' (expected: quick or full)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> HappyPathComparison.Settings.of("quick",
                BenchArgs.parse(new String[] {"--rounds", "3"}, List.of("rounds"))));
        assertEquals("rounds: 3 (expected: a multiple of 4, so that every configuration runs in every position "
                + "equally often)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> HappyPathComparison.Settings.of("quick",
                BenchArgs.parse(new String[] {"--workload", "5"}, List.of("workload"))));
        assertEquals("workload: 5 (expected: 0 for all, or 1..4)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> HappyPathComparison.Settings.of("quick",
                BenchArgs.parse(new String[] {"--turns", "call"}, List.of("turns"))));
        assertEquals("--turns: 'call' (expected: phases or calls)", e.getMessage());
        assertEquals(Map.of("failback.store", "h2"), BenchArgs.parse(new String[] {"--param", "failback.store=h2"},
                List.of()).params());
    }
}
