package io.rpctimer.bench.failback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.bench.Json;
import io.rpctimer.bench.MachineInfo;
import io.rpctimer.testkit.DubboNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the comparison's machinery once, tiny and on wheelfailback only, so that a broken harness shows in
 * {@code mvn verify} and not minutes into a run: 20 sync calls at 20/s, p1 failing every call at the RPC level,
 * retries after 200 ms. Checks that the account adds up, that the probe measured the shared wheel, and that the
 * result files are written. Measures nothing.
 */
class FailbackSmokeTest {

    @Test
    @Timeout(60)
    void oneTinyRunAddsUpAndIsReported(@TempDir Path out) throws Exception {
        DubboNode.disableDubboShutdownHooks();
        Scenario.Plan plan = new Scenario.Plan(LoadSender.Callers.SYNC, 20, 20, List.of(
                new Scenario.Step(0, "p1 fails every call", ps -> ps.get(0).faults().errorRate(1.0))),
                "p1 fails every call (smoke test)");
        ScenarioRun.Settings settings = new ScenarioRun.Settings(Duration.ofSeconds(1), 200, Duration.ofSeconds(15));

        RunResult r = ScenarioRun.run(Scenario.D, plan, ScenarioRun.WHEEL, settings, null, null);

        assertTrue(r.report.addsUp(), r.report.toTable());
        assertEquals(20, r.report.sent());
        assertEquals(0, r.report.lost(), r.report.toTable());
        assertEquals(20, r.report.delivered(), r.report.toTable());
        assertTrue(r.report.deliveredOnAnyRetry() > 0, "p1 failed no call: " + r.report.toTable());
        assertEquals(r.report.deliveredOnAnyRetry(), r.times.deliveredByRetry(), "retries completed at providers");
        assertTrue(r.settled(), "not settled");
        assertEquals(0, r.lostSilently());
        assertTrue(r.probesCounted() > 0, "the probe never ran on the shared wheel");
        assertFalse(Double.isNaN(r.worstProbeLatenessMillis()));
        assertFalse(Double.isNaN(r.workerTickLagMillis()));
        assertFalse(Double.isNaN(r.times.scheduleAllowsMillis()));
        assertTrue(r.senderFailures().isEmpty(), r.senderFailures().toString());

        Map<String, Object> results = new LinkedHashMap<>();
        results.put("mode", "smoke");
        results.put("machine", MachineInfo.collect());
        ComparisonReport.analyse(results, List.of(r));
        String md = ComparisonReport.markdown(results, List.of(r), "smoke.png");
        assertTrue(md.contains("| calls sent | — | 20 |"), md);
        Files.writeString(out.resolve("smoke.json"), Json.write(results));
        FailbackChart.write(List.of(r), out.resolve("smoke.png"));
        assertTrue(Files.size(out.resolve("smoke.png")) > 1000);
    }

    @Test
    void badArgumentsNameTheParameterAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Scenario.parse("a,x"));
        assertTrue(e.getMessage().startsWith("scenarios: 'a,x'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new ScenarioRun.Settings(Duration.ofSeconds(1), 0, Duration.ofSeconds(1)));
        assertEquals("firstDelayMillis: 0 (expected: >= 1)", e.getMessage());
        assertEquals(List.of(Scenario.C, Scenario.A), Scenario.parse("c,a"));
    }
}
