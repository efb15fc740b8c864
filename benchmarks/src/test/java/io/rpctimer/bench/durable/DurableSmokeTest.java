package io.rpctimer.bench.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.bench.ExecutionLedger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checks that the durable-path comparison's accounting adds up, tiny: both systems drain 200 calls with two worker
 * JVMs each on a real embedded PostgreSQL, every call is executed once, the transactions and the CPU are read, and
 * the report has the rows. The ledgers' tally finds a lost call and one run twice. Measures nothing.
 */
class DurableSmokeTest {

    @TempDir
    Path dir;

    @Test
    void ledgersAddUpToLostAndRunTwiceCalls() throws Exception {
        ExecutionLedger a = new ExecutionLedger(4);
        ExecutionLedger b = new ExecutionLedger(4);
        a.executed("c-0");
        a.executed("c-1");
        b.executed("c-1"); // run twice, by two instances
        b.executed("c-3");
        b.executed("x-9"); // not one of the run's calls
        a.write(dir.resolve("a"));
        b.write(dir.resolve("b"));

        Map<String, Long> t = ExecutionLedger.tally(4, List.of(dir.resolve("a"), dir.resolve("b")));

        assertEquals(1L, t.get("lost"), t.toString()); // c-2
        assertEquals(1L, t.get("ranTwice"), t.toString());
        assertEquals(1L, t.get("extraExecutions"), t.toString());
        assertEquals(1L, t.get("foreign"), t.toString());
        assertEquals(5L, t.get("executions"), t.toString());
    }

    @Test
    @Timeout(600)
    void bothSystemsDrainEveryCallOnce_andTheReportAddsUp() throws Exception {
        DurableSettings s = new DurableSettings(200, 0, 1, List.of(2),
                new RpcTimerInstance.Tuning(50, 2_000, 10_000), new DbSchedulerInstance.Tuning(4, 1.0, 4.0, 500),
                DurableSettings.jvmArgs(null), Map.of(), Duration.ofMinutes(5));

        Map<String, Object> results = DurableComparison.run("quick", s, dir);

        @SuppressWarnings("unchecked")
        List<Map<String, Object>> trials = (List<Map<String, Object>>) results.get("trials");
        assertEquals(2, trials.size());
        for (Map<String, Object> t : trials) {
            Map<?, ?> tally = (Map<?, ?>) t.get("tally");
            assertEquals(0L, ((Number) tally.get("lost")).longValue(), t.toString());
            assertEquals(0L, ((Number) tally.get("ranTwice")).longValue(), t.toString());
            assertEquals(200L, ((Number) tally.get("executions")).longValue(), t.toString());
            assertTrue(((Number) t.get("transactions")).longValue() > 0, t.toString());
            assertTrue(((Number) t.get("cpuUsPerCall")).doubleValue() > 0, t.toString());
            assertEquals(2, ((List<?>) t.get("workerCpuSeconds")).size(), t.toString());
        }
        String md = DurableReport.markdown(List.of(results));
        assertTrue(md.contains("| 2 | rpc-timer |") && md.contains("| 2 | db-scheduler |"), md);
        Path doc = Files.writeString(dir.resolve("page.md"), "# page\n" + DurableReport.BEGIN + "\nold\n"
                + DurableReport.END + "\nrest\n");
        String spliced = DurableReport.splice(Files.readString(doc), md);
        assertTrue(spliced.contains(md) && !spliced.contains("old") && spliced.endsWith(DurableReport.END + "\nrest\n"),
                spliced);
    }
}
