package io.rpctimer.demo.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.provider.ledger.CallLedger;
import io.rpctimer.demo.provider.ledger.CallOutcome;
import io.rpctimer.demo.provider.ledger.CallRecord;
import io.rpctimer.retry.RetryEvent;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.apache.dubbo.remoting.RemotingException;
import org.apache.dubbo.rpc.RpcException;
import org.junit.jupiter.api.Test;

/** What the demo prints, without starting anything: durations, failure texts, event lines, settings. */
class DemoOutputTest {

    @Test
    void durations_readAsAPersonWould() {
        assertEquals("0 ms", Human.duration(0));
        assertEquals("999 ms", Human.duration(999));
        assertEquals("1 s", Human.duration(1_000));
        assertEquals("1.1 s", Human.duration(1_123));
        assertEquals("20 s", Human.duration(20_000));
        assertEquals("2 min 5 s", Human.duration(125_000));
        assertEquals("00:06.1", Console.stamp(6_150));
        assertEquals("01:59.9", Console.stamp(119_999));
        assertEquals("10/s", Human.rate(10));
        assertEquals("2.5/s", Human.rate(2.5));
        assertEquals("20%", Human.percent(0.2));
    }

    @Test
    void failures_inAFewWords() {
        assertEquals("no provider available", FailureText.of(new RpcException(RpcException.FORBIDDEN_EXCEPTION,
                "Failed to invoke the method send... No provider available for the service ... Please check")));
        assertEquals("timed out after 500 ms", FailureText.of(new RpcException(RpcException.TIMEOUT_EXCEPTION,
                "wheelfailback retry 1 of retry.id=c-1 to 127.0.0.1:1 timed out after 500 ms")));
        assertEquals("injected RPC error (error 30%)", FailureText.of(new CompletionException(new RemotingException(
                (InetSocketAddress) null, null, "p2@127.0.0.1:1: injected RPC error (error 30%)"))));
        assertEquals("10 retries already pending (failbacktasks=10)", FailureText.of(new RpcException(
                RpcException.LIMIT_EXCEEDED_EXCEPTION, "wheelfailback rejected x.send() retry.id=c-9: 10 retries "
                + "already pending (failbacktasks=10); the call failed with ...")));
        assertEquals("IllegalStateException: boom", FailureText.of(new RuntimeException(new IllegalStateException(
                "boom\nsecond line"))));
        assertEquals("-", FailureText.of(null));
    }

    @Test
    void eventLines_oneLinePerFailedAttempt_andPerOutcome() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Console console = new Console(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        EventLines lines = new EventLines(console, "Svc", EventLines.Level.RETRIES,
                Map.of("127.0.0.1:2", "p2@127.0.0.1:2"), 5);
        long now = System.currentTimeMillis();
        lines.onEvent(new RetryEvent(RetryEvent.Type.SCHEDULED, "c-061", "Svc", "send", 1, null, 1100, null, now));
        lines.onEvent(new RetryEvent(RetryEvent.Type.SENT, "c-061", "Svc", "send", 1, "127.0.0.1:2", 0, null, now));
        lines.onEvent(new RetryEvent(RetryEvent.Type.FAILED, "c-061", "Svc", "send", 1, "127.0.0.1:2", 0,
                new RpcException(RpcException.FORBIDDEN_EXCEPTION, "No provider available"), now));
        lines.onEvent(new RetryEvent(RetryEvent.Type.SCHEDULED, "c-061", "Svc", "send", 2, null, 2300, null, now));
        lines.onEvent(new RetryEvent(RetryEvent.Type.SENT, "c-061", "Svc", "send", 2, "127.0.0.1:2", 0, null, now));
        lines.onEvent(new RetryEvent(RetryEvent.Type.DELIVERED, "c-061", "Svc", "send", 2, "127.0.0.1:2", 0, null,
                now + 3400));
        lines.onEvent(new RetryEvent(RetryEvent.Type.DELIVERED, "c-9", "Other", "send", 1, "127.0.0.1:2", 0, null,
                now)); // another service: ignored

        List<String> printed = bytes.toString(StandardCharsets.UTF_8).lines().map(l -> l.substring(11)).toList();
        assertEquals(List.of(
                "c-061  #0   -                      failed       first try; retry 1 in 1.1 s",
                "c-061  #1   p2@127.0.0.1:2         failed       no provider available; retry 2 in 2.3 s",
                "c-061  #2   p2@127.0.0.1:2         DELIVERED    3.4 s after the first try"), printed);
        assertTrue(lines.header().startsWith("  time     call   try  provider"), lines.header());
        assertEquals(Map.of("p2@127.0.0.1:2", 1L), lines.deliveredByProvider());
    }

    @Test
    void handedOver_saysWhereTheStoreKeepsTheCall() {
        String before = System.getProperty("rpctimer.failback.store");
        try {
            System.clearProperty("rpctimer.failback.store");
            assertTrue(handedOverLine().endsWith("HANDED_OVER  retry 1 was pending at shutdown: given to the"
                    + " RetryStore"), handedOverLine());
            System.setProperty("rpctimer.failback.store", "embedded");
            assertTrue(handedOverLine().endsWith("HANDED_OVER  retry 1 was pending at shutdown: kept in the"
                    + " embedded journal, resumed at the next start"), handedOverLine());
        } finally {
            if (before == null) {
                System.clearProperty("rpctimer.failback.store");
            } else {
                System.setProperty("rpctimer.failback.store", before);
            }
        }
    }

    private static String handedOverLine() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        EventLines lines = new EventLines(new Console(new PrintStream(bytes, true, StandardCharsets.UTF_8)), "Svc",
                EventLines.Level.RETRIES, Map.of(), 5);
        lines.onEvent(new RetryEvent(RetryEvent.Type.HANDED_OVER, "c-7", "Svc", "send", 1, null, 0, null,
                System.currentTimeMillis()));
        return bytes.toString(StandardCharsets.UTF_8).strip();
    }

    @Test
    void speed_scalesRateAndDelays_butNotTheTimeout() {
        RunSettings s = RunSettings.DEFAULTS.faster(10);
        assertEquals(100, s.ratePerSecond());
        assertEquals(Duration.ofMillis(100), s.delay());
        assertEquals(Duration.ofMillis(800), s.maxDelay());
        assertEquals(Duration.ofMillis(500), s.timeout());
        assertEquals(Duration.ofSeconds(2), s.sendingTime());
        assertEquals(List.of(1000L, 2000L, 4000L, 8000L), RunSettings.DEFAULTS.retryDelaysMillis());
        // every delay at its +20% maximum (1.2 + 2.4 + 4.8 + 8, capped), a 500 ms timeout per retry, 2 s spare
        assertEquals(Duration.ofMillis(20_400), RunSettings.DEFAULTS.drainBound());
        // 130 calls wait: the budget's 10/s minimum releases one retry of each in 13 s more
        assertEquals(Duration.ofMillis(33_400), RunSettings.DEFAULTS.drainBound(130));
        // the budget is a rate at the provider, whatever the demo's pace
        assertEquals(0.2, s.budgetRatio());
        assertEquals(10, s.budgetMinRate());
    }

    @Test
    void budgetFlags_becomeTheReferencesBudgetKeys() {
        ConsumerFlags flags = new ConsumerFlags();
        flags.budgetRatio = "0.5";
        flags.budgetMinRate = "2.5";
        RunSettings s = flags.resolve(RunSettings.DEFAULTS);
        assertEquals(0.5, s.budgetRatio());
        assertEquals(2.5, s.budgetMinRate());
        assertTrue(s.describeRetries().endsWith(", budget 50% of first-try successes + 2.5/s"), s.describeRetries());
    }

    @Test
    void retryArrivals_busiestSecond_withTheFirstTrySuccessesInIt() {
        CallLedger ledger = new CallLedger();
        RetryArrivals arrivals = new RetryArrivals();
        assertTrue(arrivals.peak().isEmpty());
        for (int attempt : new int[] {1, 2, 1, 0, 0}) {
            CallRecord call = ledger.received("send", "c-" + attempt, "c-" + attempt, attempt);
            arrivals.record(call, CallOutcome.COMPLETED);
        }
        arrivals.record(ledger.received("send", "c-9", "c-9", 0), CallOutcome.RPC_ERROR); // no deposit
        RetryArrivals.Peak peak = arrivals.peak().orElseThrow();
        assertEquals(3, peak.retries());
        assertEquals(2, peak.firstTrySuccesses());
        assertEquals(10.4, peak.allowed(0.2, 10), 1e-9);
    }

    @Test
    void report_setsThePeakAgainstTheBudget() {
        Report r = new Report("wheelfailback", CallBook.Accounting.EVENTS, 2, 1, new java.util.TreeMap<>(Map.of(1, 1L)),
                0, 0, 0, 0, 0, 0, 0, 0, 5, List.of());
        RetryArrivals.Peak peak = new RetryArrivals.Peak(0, 17, 35);
        FinalReport fr = new FinalReport(r, java.util.Optional.empty(), FinalReport.Duplicates.of(0, "none"),
                new FinalReport.Budget(0.2, 10, 214L, java.util.Optional.of(peak), "00:13.4"), 100, 0, null);
        String table = String.join("\n", fr.lines());
        assertTrue(table.contains("Retry budget (retries at most 20% of first-try successes + 10/s"), table);
        assertTrue(table.contains("  retries that waited                   214   "), table);
        assertTrue(table.contains("  most retries in 1 s                    17   received by p1 and p2 from 00:13.4; "
                + "the budget's rate then: 17/s = 10/s + 20% of 35 first-try successes, plus tokens saved before"), table);
        assertTrue(fr.ok(), table);
    }

    @Test
    void meterValues_fourSignificantDigits() {
        assertEquals("3", FailbackMeters.number(3.0));
        assertEquals("0.8", FailbackMeters.number(0.8));
        assertEquals("0.003025", FailbackMeters.number(0.0030251857));
        assertEquals("173.7", FailbackMeters.number(173.6612));
        assertEquals("NaN", FailbackMeters.number(Double.NaN));
    }
}
