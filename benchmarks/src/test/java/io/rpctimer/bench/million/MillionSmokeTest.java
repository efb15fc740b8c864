package io.rpctimer.bench.million;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checks that the spilled-calls harness's accounting adds up, tiny: 600 calls spill past a cap of 20 on the embedded
 * journal and on a real embedded PostgreSQL, the instance is killed, a restarted one claims them all, and another
 * delivers every one once, counted at the provider; the report has the rows and the targets. Measures nothing.
 */
class MillionSmokeTest {

    @TempDir
    Path dir;

    @Test
    @Timeout(600)
    @SuppressWarnings("unchecked")
    void everySpilledCallIsClaimedAndDeliveredOnce_onBothStores() throws Exception {
        MillionSpill.Settings s = new MillionSpill.Settings(600, List.of("embedded", "postgres"), 20, 1_000, 1_000);

        Map<String, Object> results = MillionSpill.run("quick", s, dir);

        List<Map<String, Object>> runs = (List<Map<String, Object>>) results.get("runs");
        assertEquals(2, runs.size());
        for (Map<String, Object> run : runs) {
            Map<String, Object> spill = (Map<String, Object>) run.get("spill");
            Map<String, Object> claim = (Map<String, Object>) run.get("claimAll");
            Map<String, Object> tally = (Map<String, Object>) run.get("tally");
            assertEquals(580.0, spill.get("parked"), run.toString());
            assertEquals(20.0, spill.get("pending"), run.toString());
            assertEquals(600.0, claim.get("claimed"), run.toString());
            assertEquals(0L, ((Number) tally.get("lost")).longValue(), run.toString());
            assertEquals(0L, ((Number) tally.get("ranTwice")).longValue(), run.toString());
            assertEquals(600L, ((Number) tally.get("executions")).longValue(), run.toString());
            assertEquals(0.0, ((Map<String, Object>) run.get("drain")).get("rowsLeft"), run.toString());
        }
        String md = MillionReport.markdown(List.of(results));
        assertTrue(md.contains("| embedded | 600 |") && md.contains("| postgres | 600 |"), md);
        assertTrue(md.contains("| postgres | nothing lost or run twice (at the provider) | 0 | 0 | yes |"), md);
    }
}
