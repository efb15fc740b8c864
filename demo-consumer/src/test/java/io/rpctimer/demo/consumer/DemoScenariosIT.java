package io.rpctimer.demo.consumer;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.testkit.Ports;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every scenario of the one-command demo, ten times faster (200 calls at 100/s, 600 at 300/s in recovery; retry delays from 100 ms), through the
 * launcher's own entry point: nothing may be lost, the report must add up, and each scenario must show what it is
 * for. Then Ctrl-C, as the shutdown hook does it.
 */
@Timeout(60)
class DemoScenariosIT {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @AfterEach
    void everyPortIsClosed() {
        List<Integer> ports = new ArrayList<>();
        Matcher m = Pattern.compile("(?:p[12]@|zookeeper://)127\\.0\\.0\\.1:(\\d+)").matcher(out());
        while (m.find()) {
            ports.add(Integer.parseInt(m.group(1)));
        }
        for (int port : ports) {
            await("port " + port + " closed").atMost(Duration.ofSeconds(5)).until(() -> !Ports.isListening(port));
        }
    }

    private ConsumerRun.Result play(Scenario scenario, String speed) {
        DemoLauncher launcher = new DemoLauncher(new PrintStream(out, true, StandardCharsets.UTF_8), false);
        int code = launcher.execute(new PrintStream(err, true, StandardCharsets.UTF_8),
                "--scenario", scenario.id(), "--speed", speed);
        assertEquals(0, code, out() + err());
        return launcher.result().orElseThrow();
    }

    /** Every scenario but dead-letters, whose retry horizon and replay pace want a slower clock (below). */
    @ParameterizedTest
    @EnumSource(value = Scenario.class, names = "DEAD_LETTERS", mode = EnumSource.Mode.EXCLUDE)
    void scenario_losesNothing_andTheReportAddsUp(Scenario scenario) {
        ConsumerRun.Result result = play(scenario, "10");
        FinalReport fr = result.report().orElseThrow();
        Report r = fr.report();
        String table = String.join("\n", fr.lines());
        int calls = scenario.defaults().calls();
        assertEquals(calls, r.sent(), table);
        assertEquals(0, r.lost(), table);
        assertEquals(0, r.pending(), table);
        assertEquals(0, r.handedOver(), "every retry settled before the consumer stopped\n" + table);
        assertTrue(r.addsUp(), table);
        assertTrue(fr.ok(), table);
        assertTrue(fr.wheel().isPresent(), table);
        assertEquals(0, fr.wheel().get().pendingTimeouts(), table);
        assertTrue(out().contains("OK: " + calls + " sent = "), out());
        assertFalse(result.interrupted());
        assertEquals(0, fr.brokenAnswers(), "a caller got no readable answer\n" + table);

        switch (scenario) {
            case PROVIDER_DOWN -> assertTrue(r.deliveredOnAnyRetry() > 0, "no call waited for a provider\n" + table);
            case PROVIDER_HANG -> {
                // every retry avoided p1, the hanging provider it timed out on; p1 then completed what it held
                String p2 = result.providerLabels().values().stream().filter(p -> p.startsWith("p2@")).findFirst()
                        .orElseThrow();
                assertTrue(r.deliveredOnAnyRetry() > 0, table);
                assertEquals(List.of(p2), List.copyOf(result.retriesDeliveredBy().keySet()), out());
                assertTrue(r.duplicates() > 0, "p1 completed no call after its timeout\n" + table);
            }
            case FLAKY -> assertTrue(r.deliveredOnRetry().keySet().stream().anyMatch(k -> k >= 2),
                    "no call needed a second retry\n" + table);
            case OVERFLOW -> {
                assertTrue(r.rejected() > 0, table);
                assertEquals(r.rejected(), r.rejectedCallerTold(), "every rejected caller got an exception\n" + table);
                assertTrue(r.deliveredOnAnyRetry() > 0, "the retries that got a place were delivered\n" + table);
            }
            case BUSINESS -> {
                assertTrue(r.callerErrors() > 0, table);
                assertEquals(0, r.deliveredOnAnyRetry(), "a business exception was retried\n" + table);
            }
            case RECOVERY -> assertTrue(fr.budget().waits() > 0, "no retry waited for the budget\n" + table);
        }
    }

    /**
     * Dead letters at twice the pace (80 calls at 20/s, retries after 150 ms and 300 ms, no provider for 2 s; the
     * replay at 10/s, a rate at the providers): calls end ABANDONED and stay in the journal, the replay puts every one
     * back and the providers complete each, once (retrydedup, shared store), and the report's line says so. The pace
     * the providers saw is never far above the one asked (a late tick sends at most one extra call at once).
     */
    @Test
    @Timeout(120)
    void deadLetters_areReplayedAtThePaceAsked_andTheLineReadsNoneLost() {
        ConsumerRun.Result result = play(Scenario.DEAD_LETTERS, "2");
        FinalReport fr = result.report().orElseThrow();
        String o = out();
        Report r = fr.report();
        assertEquals(80, r.sent(), o);
        assertEquals(0, r.lost(), o);
        assertTrue(r.addsUp(), o);
        assertTrue(fr.ok(), o);
        assertTrue(r.abandoned() > 0, "no call was abandoned during the outage\n" + o);

        DeadLetterSummary d = fr.deadLetters().orElseThrow();
        assertEquals(r.abandoned(), d.abandoned(), o);
        assertEquals(d.abandoned(), d.replayed(), "every dead letter replayed\n" + o);
        assertEquals(d.replayed(), d.delivered(), "every replayed call delivered\n" + o);
        assertEquals(0, d.stillDead(), o);
        assertEquals(List.of(), d.lostIds(), o);
        assertEquals(List.of(), d.ranTwice(), o);
        Matcher line = Pattern.compile("(?m)^  (\\d+) abandoned, (\\d+) replayed, (\\d+) delivered, (\\d+) lost$")
                .matcher(o);
        assertTrue(line.find(), "the report's line\n" + o);
        long n = d.abandoned();
        assertEquals(List.of(n, n, n, 0L), List.of(Long.parseLong(line.group(1)), Long.parseLong(line.group(2)),
                Long.parseLong(line.group(3)), Long.parseLong(line.group(4))), o);
        assertTrue(o.contains("DELIVERED    replayed from the dead letters"), o);
        if (d.arrivals() >= 5) {
            assertTrue(d.seenPerSecond() <= 1.5 * d.askedPerSecond() + 2, "the providers saw " + d.seenPerSecond()
                    + "/s; asked " + d.askedPerSecond() + "/s\n" + o);
        }
        assertTrue(fr.wheel().isPresent(), o);
        // the journal's periodic claim and dead-letter trim stay on the wheel while the consumer runs
        assertTrue(fr.wheel().get().pendingTimeouts() <= 2, o);
    }

    /**
     * The budget at recovery: hundreds of retries wait while no provider is up; when the providers come back they
     * receive them at the budget's rate, not as a wall (with no budget, --budget-minrate 100000, the busiest second
     * brings them about 180 retries where the budget allows about 40). And --metrics prints the meters, whose
     * outcome counters are the report's.
     */
    @Test
    void recovery_providersGetTheBacklogAtTheBudgetsRate_andMetricsMatchTheReport() {
        DemoLauncher launcher = new DemoLauncher(new PrintStream(out, true, StandardCharsets.UTF_8), false);
        int code = launcher.execute(new PrintStream(err, true, StandardCharsets.UTF_8),
                "--scenario", "recovery", "--speed", "5", "--metrics");
        String o = out();
        assertEquals(0, code, o + err());
        FinalReport fr = launcher.result().orElseThrow().report().orElseThrow();
        Report r = fr.report();
        assertEquals(600, r.sent(), o);
        assertEquals(600, r.delivered(), "every call delivered, none abandoned\n" + o);
        assertTrue(fr.ok(), o);
        assertTrue(r.deliveredOnAnyRetry() >= 100, "a backlog of retries\n" + o);

        FinalReport.Budget budget = fr.budget();
        assertTrue(budget.waits() >= 50, "retries waited for the budget\n" + o);
        assertTrue(o.contains(" retries wait for a token | "), "the live budget line\n" + o);
        RetryArrivals.Peak peak = budget.peak().orElseThrow();
        // the margin: tokens left over from before the peak second, and a busy machine's bunching
        assertTrue(peak.retries() <= 1.5 * budget.allowedAtPeak() + 5, "providers got " + peak.retries()
                + " retries in 1 s; the budget allowed " + budget.allowedAtPeak() + "\n" + o);

        String meters = o.substring(o.indexOf("\nMeters ("));
        assertEquals(r.deliveredOnAnyRetry(), meterSum(meters, "outcomes.total", "outcome=delivered"), meters);
        assertEquals(0, meterSum(meters, "outcomes.total", "outcome=abandoned"), meters);
        assertEquals((long) budget.waits(), meterSum(meters, "budget.waits.total", ""), meters);
        assertTrue(meters.contains("\n  dubbo.consumer.failback.pending{interface="), meters);
        assertEquals(0, meterSum(meters, "pending", "interface="), "nothing pending at the end\n" + meters);
    }

    /**
     * @return the sum of the values of the meter lines {@code dubbo.consumer.failback.<name>{...<tag>...}  x=N}; 0 if
     *         there is none
     */
    private static long meterSum(String meters, String name, String tag) {
        Matcher m = Pattern.compile("(?m)^  dubbo\\.consumer\\.failback\\." + Pattern.quote(name)
                + "\\{([^}]*)\\}  (?:count|value)=(\\d+)$").matcher(meters);
        long sum = 0;
        while (m.find()) {
            if (m.group(1).contains(tag)) {
                sum += Long.parseLong(m.group(2));
            }
        }
        return sum;
    }

    @Test
    void interrupt_stopsEverythingInOrder_handsPendingRetriesOver_andStillReports() throws Exception {
        DemoLauncher launcher = new DemoLauncher(new PrintStream(out, true, StandardCharsets.UTF_8), false);
        CompletableFuture<Integer> code = CompletableFuture.supplyAsync(() -> launcher.execute(
                new PrintStream(err, true, StandardCharsets.UTF_8), "--scenario", "overflow", "--speed", "5"));
        // the first rejection: the 10 places for retries are taken, and stay so while both providers fail
        await("a rejection").atMost(Duration.ofSeconds(30)).until(() -> out().contains("REJECTED     no retry"));
        launcher.interrupt();

        assertEquals(0, code.get(30, TimeUnit.SECONDS), out() + err());
        ConsumerRun.Result result = launcher.result().orElseThrow();
        assertTrue(result.interrupted());
        Report r = result.report().orElseThrow().report();
        String o = out();
        assertTrue(r.sent() < 200, o);
        assertTrue(r.handedOver() > 0, o);
        assertEquals(0, r.lost(), o);
        assertTrue(r.addsUp(), o);
        assertTrue(o.contains("HANDED_OVER"), o);
        int consumer = o.indexOf("  consumer   " + r.handedOver() + " retries handed over");
        int provider = o.indexOf("  provider   p", consumer);
        int zookeeper = o.indexOf("  zookeeper  zookeeper://", provider);
        int report = o.indexOf("Report", zookeeper);
        assertTrue(consumer > 0 && provider > consumer && zookeeper > provider && report > zookeeper,
                "consumer, providers, ZooKeeper, then the report:\n" + o);
    }
}
