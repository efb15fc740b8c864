package io.rpctimer.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.CallerSaw;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.retry.RetryEvent;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Scenario 3 (sync callers) and 7c (async callers): p1 hangs 20 s on every call, far past the 300 ms timeout, for
 * the whole test. Calls that land on p1 time out and fail back; their retries avoid p1 (the provider tried last) and
 * are delivered by p2 or p3 while p1's calls still hang. Every retry avoids the provider its call's previous attempt
 * failed on: a retry goes to p1 only after an attempt on p2 or p3 timed out (300 ms is short on a loaded machine),
 * never after one on p1. The shared wheel's worker never waits for any of it: its
 * worst tick lag, from the wheel's creation (when the consumer started) until the consumer closed, stays under
 * 50 ms (five 10 ms ticks) beyond what the machine does to any thread: the worst oversleep of a thread that only
 * sleeps, measured over the same run ({@link io.rpctimer.demo.consumer.SleeperLag}; a millisecond or two on a quiet machine, tens of ms when
 * other builds share two cores). A worker held up by the hang or the timeouts would lag by 300 ms or more.
 */
class HangingProviderFaultIT {

    private static final int CALLS = 150;
    private static final int PER_SECOND = 50;
    private static final Duration HANG = Duration.ofSeconds(20);
    private static final double MAX_TICK_LAG_MILLIS = 50;

    @ParameterizedTest(name = "{0} callers")
    @EnumSource(Sender.Mode.class)
    @Timeout(60)
    void retriesAvoidTheHangingProviderAndTheWheelStaysOnTime(Sender.Mode mode) throws Throwable {
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 3, o -> o.timeout(Duration.ofMillis(300))
                .parameter("failback.delay", "100").parameter("retries", "3"))) {
            DemoProvider p1 = rig.provider(1);
            p1.faults().hang(HANG);
            Sender sender = Sender.start(rig.consumer(), mode, CALLS, PER_SECOND, 10, "hang-" + mode.label());

            Map<CallerSaw, Long> saw = sender.await(Duration.ofSeconds(30));
            int hanging = p1.faults().waitingCalls();
            FaultRig.Outcome out = rig.finish(Duration.ofSeconds(20));

            List<RetryEvent> sent = out.events().of(RetryEvent.Type.SENT);
            TreeSet<String> retryTargets = new TreeSet<>(sent.stream().map(e -> rig.providerName(e.provider()))
                    .toList());
            Map<String, String> failedOn = failedOn(out.events());
            List<String> sameAgain = sent.stream().filter(e -> e.provider().equals(failedOn.get(key(e))))
                    .map(e -> e.retryId() + " retry " + e.attempt() + " to " + rig.providerName(e.provider())).toList();
            long afterP1 = sent.stream().filter(e -> p1.address().equals(failedOn.get(key(e)))).count();
            List<String> toP1 = sent.stream().filter(e -> p1.address().equals(e.provider()))
                    .map(e -> e.retryId() + " retry " + e.attempt() + " after "
                            + rig.providerName(failedOn.get(key(e)))).toList();
            String notes = out.report().deliveredOnAnyRetry() + " calls timed out and were delivered on retry "
                    + out.report().deliveredOnRetry() + " (retry number: calls); the " + sent.size()
                    + " retries went to " + retryTargets + ", " + afterP1 + " of them after an attempt on p1, none of"
                    + " those to p1; " + toP1.size() + " went to p1, each after its previous attempt failed on another"
                    + " provider " + toP1 + "; " + hanging
                    + " calls were still hanging on p1 when the callers were done; the wheel ran "
                    + out.wheel().ticks() + " ticks, worst lag " + String.format("%.1f", out.maxTickLagMillis())
                    + " ms (a thread that only sleeps: " + String.format("%.1f", out.sleeperLagMillis())
                    + " ms); callers saw " + saw + sender.failureNote() + ".";
            Figures.of(mode == Sender.Mode.SYNC ? 3 : 7, mode == Sender.Mode.SYNC ? 1 : 4,
                            (mode == Sender.Mode.SYNC ? "3" : "7c") + "-hanging-provider-" + mode.label(),
                            (mode == Sender.Mode.SYNC ? "" : "3 again, ") + mode.label() + " callers",
                            "p1 hangs " + HANG.toSeconds() + " s on every call (timeout 300 ms)")
                    .put("hangingAtEnd", hanging)
                    .check(out, notes, () -> {
                        Accounting.assertEveryCallDelivered(out, CALLS, sender);
                        assertTrue(out.report().deliveredOnAnyRetry() > 0, "no call landed on the hanging p1");
                        assertEquals(sent.size(), sent.stream().filter(e -> failedOn.containsKey(key(e))).count(),
                                "retries sent without a failed attempt before them");
                        assertTrue(afterP1 > 0, "no retry followed an attempt on the hanging p1");
                        assertEquals(List.of(), sameAgain, "retries sent to the provider the previous attempt"
                                + " failed on");
                        assertTrue(out.wheel().ticks() > 0, "the wheel never ticked");
                        double allowed = MAX_TICK_LAG_MILLIS + out.sleeperLagMillis();
                        assertTrue(out.maxTickLagMillis() < allowed, "worst tick lag " + out.maxTickLagMillis()
                                + " ms (expected: < " + MAX_TICK_LAG_MILLIS + " ms + the worst oversleep of a thread"
                                + " that only sleeps, " + out.sleeperLagMillis() + " ms)");
                    });
        }
    }

    /** @return the provider each retry's previous attempt failed on, by {@link #key} (its SCHEDULED event) */
    private static Map<String, String> failedOn(EventRecorder events) {
        Map<String, String> m = new HashMap<>();
        events.of(RetryEvent.Type.SCHEDULED).stream().filter(e -> e.provider() != null)
                .forEach(e -> m.put(key(e), e.provider()));
        return m;
    }

    private static String key(RetryEvent e) {
        return e.retryId() + "#" + e.attempt();
    }
}
