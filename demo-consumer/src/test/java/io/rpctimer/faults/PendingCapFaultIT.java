package io.rpctimer.faults;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.CallerSaw;
import io.rpctimer.retry.RetryEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Scenario 5: the pending-retry cap. {@code failbacktasks=5}, every provider failing at the RPC level, retries 1 s
 * apart: 20 sync and 20 async calls sent at once fill the cap with 5 calls, and every other call is REJECTED: its
 * caller gets the {@code RpcException} (code LIMIT_EXCEEDED, sync: thrown; async: the future fails), and a REJECTED
 * event and counter, never a silent drop. Once the providers recover the 5 admitted calls are delivered, which frees
 * the cap: 5 more failing calls are admitted again, and delivered.
 */
class PendingCapFaultIT {

    private static final int CAP = 5;
    private static final int EACH = 20;

    @Test
    @Timeout(60)
    void everyCallPastTheCapIsRejectedToItsCaller() throws Throwable {
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 3, o -> o.parameter("failbacktasks",
                String.valueOf(CAP)).parameter("failback.delay", "1000").parameter("failback.multiplier", "1")
                .parameter("retries", "10"))) {
            rig.providers().forEach(p -> p.faults().errorRate(1.0));
            Sender sync = Sender.start(rig.consumer(), Sender.Mode.SYNC, EACH, 100, 4, "cap-sync");
            Sender async = Sender.start(rig.consumer(), Sender.Mode.ASYNC, EACH, 100, 1, "cap-async");
            Map<CallerSaw, Long> syncSaw = sync.await(Duration.ofSeconds(20));
            Map<CallerSaw, Long> asyncSaw = async.await(Duration.ofSeconds(20));
            List<RetryEvent> rejectedEarly = rig.events().of(RetryEvent.Type.REJECTED);
            long pendingAtCap = rig.consumer().book().unsettled();

            rig.providers().forEach(p -> p.faults().errorRate(0));
            await().atMost(Duration.ofSeconds(20)).until(() -> rig.consumer().book().unsettled() == 0);
            rig.providers().forEach(p -> p.faults().errorRate(1.0));
            Sender again = Sender.start(rig.consumer(), Sender.Mode.SYNC, CAP, 100, 1, "cap-again");
            Map<CallerSaw, Long> againSaw = again.await(Duration.ofSeconds(20));
            rig.providers().forEach(p -> p.faults().errorRate(0));
            FaultRig.Outcome out = rig.finish(Duration.ofSeconds(20));

            Set<String> rejectedIds = new HashSet<>();
            rejectedEarly.forEach(e -> rejectedIds.add(e.retryId()));
            List<String> toldButNoEvent = new ArrayList<>();
            for (Sender s : List.of(sync, async)) {
                for (int i = 0; i < EACH; i++) {
                    if (s.saw(i) == CallerSaw.REJECTED && !rejectedIds.contains(s.id(i))) {
                        toldButNoEvent.add(s.id(i));
                    }
                }
            }
            String message = rejectedEarly.isEmpty() ? "" : String.valueOf(rejectedEarly.get(0).failure().getMessage())
                    .lines().findFirst().orElse("");
            String notes = "sync callers saw " + syncSaw + ", async callers saw " + asyncSaw + "; " + pendingAtCap
                    + " calls were pending at the cap; every rejected caller got the RpcException (\""
                    + message + "\"); after the providers recovered, "
                    + CAP + " more failing calls were admitted again (" + againSaw + ") and delivered"
                    + sync.failureNote() + async.failureNote() + again.failureNote() + ".";
            Figures.of(5, 1, "5-pending-cap", "failbacktasks=5, 20 sync + 20 async callers at once",
                            "every provider failing at the RPC level, retries 1 s apart")
                    .put("pendingAtCap", pendingAtCap)
                    .check(out, notes, () -> {
                        Accounting.assertSound(out, 2 * EACH + CAP);
                        Accounting.assertCallersAnswered(sync, async, again);
                        assertEquals(CAP, pendingAtCap, "calls admitted under the cap");
                        assertEquals(2 * EACH - CAP, out.report().rejected(), "calls rejected\n"
                                + out.report().toTable());
                        assertEquals(out.report().rejected(), out.report().rejectedCallerTold(),
                                "a rejected call's caller was not told");
                        assertEquals(out.report().rejected(), rejectedEarly.size(), "REJECTED events");
                        assertEquals(List.of(), toldButNoEvent, "callers told of a rejection without an event");
                        assertTrue(rejectedEarly.stream().allMatch(e -> e.failure().getMessage()
                                .contains("(failbacktasks=" + CAP + ")")), "rejection message: " + message);
                        assertEquals(Map.of(CallerSaw.FAILED_BACK, (long) CAP), againSaw,
                                "the cap was not freed by the deliveries");
                        assertEquals(2 * CAP, out.report().deliveredOnAnyRetry(), "admitted calls delivered");
                    });
        }
    }
}
