package io.rpctimer.bench.massfailure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.bench.BenchArgs;
import io.rpctimer.bench.Json;
import io.rpctimer.bench.MachineInfo;
import io.rpctimer.testkit.DubboNode;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs the mass-failure machinery once per cluster (one test each), tiny, over real Dubbo RPC and ZooKeeper: 300 calls
 * (wheelfailback, first retry after 200 ms) and 50 calls (Dubbo's failback, which retries every 5 s) while both
 * providers fail every call, then recovery. Checks that every call is accounted for and delivered, that retries were
 * pending and measured, that the probe measured the timer, and that the report names the targets. Measures nothing.
 */
class MassFailureSmokeTest {

    @Test
    @Timeout(60)
    void wheelfailbackDeliversEveryCallAfterTheOutageAndIsReported() throws Exception {
        DubboNode.disableDubboShutdownHooks();
        Map<String, Object> wheel = MassFailureRun.run(MassFailureRun.WHEEL, new MassFailureRun.Settings(300, 4, 10,
                200, Duration.ofSeconds(20), Map.of()));

        assertAccountedAndDelivered(wheel);
        assertTrue(((Number) wheel.get("peakRetriesPerSecondAtProviders")).longValue() > 0, wheel.toString());
        Map<String, Object> results = new LinkedHashMap<>();
        results.put("mode", "smoke");
        results.put("machine", MachineInfo.collect());
        results.put("settings", Map.of());
        results.put("runs", List.of(wheel));
        results.put("targets", MassFailureComparison.targets(List.of(wheel)));
        results.put("durationMinutes", 0.5);
        String md = MassFailureComparison.markdown(results);
        assertTrue(md.contains("| calls sent | 300 |"), md);
        assertTrue(md.contains("| nothing lost | 0.00 | == 0 | yes |"), md);
        assertTrue(Json.write(results).contains("\"retriesPerSecondAtProviders\""));
    }

    @Test
    @Timeout(60)
    void dubboFailbackDeliversEveryCallAfterTheOutage() throws Exception {
        DubboNode.disableDubboShutdownHooks();
        // Dubbo's failback retries every 5 s whatever failback.delay says
        assertAccountedAndDelivered(MassFailureRun.run(MassFailureRun.DUBBO, new MassFailureRun.Settings(50, 4, 10,
                200, Duration.ofSeconds(20), Map.of())));
    }

    private static void assertAccountedAndDelivered(Map<String, Object> r) {
        assertEquals(true, r.get("allDelivered"), r.toString());
        assertEquals(0L, r.get("lost"), r.toString());
        assertEquals(r.get("calls"), ((Number) r.get("callerSawFailedBack")).intValue(), r.toString());
        assertTrue(((Number) r.get("pendingAtPeak")).longValue() > 0, r.toString());
        assertTrue(Double.isFinite(MassFailureRun.num(r, "heapPerPendingRetryBytes")), r.toString());
        assertTrue(Double.isFinite(MassFailureRun.num(r, "tickLagWorstMs")), r.toString());
        assertTrue(((Number) r.get("attemptsAtProviders")).longValue() > MassFailureRun.num(r, "calls"),
                "no retry reached a provider: " + r);
    }

    @Test
    void extraConsumerParametersPassThrough() {
        MassFailureRun.Settings s = MassFailureComparison.settings("full", BenchArgs.parse(new String[] {"--param",
                "failback.store=jdbc", "--calls", "7"}, List.of("calls", "threads", "clusters")));
        assertEquals(7, s.calls());
        assertEquals(Map.of("failback.store", "jdbc"), s.params());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new MassFailureRun.Settings(0, 1, 1, 1, Duration.ofSeconds(1), Map.of()));
        assertEquals("calls: 0 (expected: >= 1)", e.getMessage());
    }
}
