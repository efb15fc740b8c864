package io.rpctimer.faults;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.CallerSaw;
import io.rpctimer.retry.PendingRetry;
import io.rpctimer.retry.RetryEvent;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Scenario 6: the consumer shuts down with retries pending. Every provider fails at the RPC level. 20 sync calls
 * ({@code send}: first retry after 100 ms, the second 30 s later) have each failed their first retry too, so their
 * second is pending; 20 async calls ({@code sendAsync}, per-method {@code sendAsync.failback.delay=30000}) have their
 * first retry pending. Then the consumer closes: every pending call is HANDED_OVER to the RetryStore (an
 * {@code InMemoryRetryStore} for the test) with the retry that was due, and the store holds exactly those call ids,
 * with their arguments, ready to be sent again.
 */
class ShutdownHandOverFaultIT {

    private static final int EACH = 20;

    @Test
    @Timeout(60)
    void pendingRetriesAreHandedToTheStoreAtShutdown() throws Throwable {
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 3, o -> o.parameter("failback.delay", "100")
                .parameter("failback.multiplier", "300").parameter("failback.maxdelay", "60000")
                .parameter("failback.jitter", "0").parameter("retries", "3").parameter("failbacktasks", "1000")
                .parameter("sendAsync.failback.delay", "30000"))) {
            rig.providers().forEach(p -> p.faults().errorRate(1.0));
            Sender sync = Sender.start(rig.consumer(), Sender.Mode.SYNC, EACH, 50, 4, "shut-sync");
            Map<CallerSaw, Long> syncSaw = sync.await(Duration.ofSeconds(20));
            await().atMost(Duration.ofSeconds(20)).until(() -> rig.events().of(RetryEvent.Type.SCHEDULED).stream()
                    .filter(e -> e.attempt() == 2).count() == EACH);
            Sender async = Sender.start(rig.consumer(), Sender.Mode.ASYNC, EACH, 50, 1, "shut-async");
            Map<CallerSaw, Long> asyncSaw = async.await(Duration.ofSeconds(20));
            long pendingAtClose = rig.consumer().book().unsettled();

            FaultRig.Outcome out = rig.finish(Duration.ZERO);

            List<PendingRetry> held = out.store().retries();
            Set<String> expectedIds = Stream.concat(IntStream.range(0, EACH).mapToObj(sync::id),
                    IntStream.range(0, EACH).mapToObj(async::id)).collect(Collectors.toCollection(TreeSet::new));
            Map<String, Integer> nextAttempt = new TreeMap<>();
            held.forEach(r -> nextAttempt.put(r.retryId(), r.nextAttempt()));
            List<RetryEvent> handedOver = out.events().of(RetryEvent.Type.HANDED_OVER);
            String notes = pendingAtClose + " calls pending when the consumer closed (sync callers saw " + syncSaw
                    + ", async " + asyncSaw + "); " + handedOver.size() + " HANDED_OVER events; the store holds "
                    + held.size() + " retries: " + held.stream().filter(r -> r.nextAttempt() == 2).count()
                    + " sync calls with retry 2 due, " + held.stream().filter(r -> r.nextAttempt() == 1).count()
                    + " async calls with retry 1 due, each with its call id as retry.id and its arguments"
                    + sync.failureNote() + async.failureNote() + ".";
            Figures.of(6, 1, "6-shutdown-hand-over", "20 sync + 20 async calls pending at shutdown",
                            "every provider failing; consumer closed with retries pending")
                    .put("pendingAtClose", pendingAtClose)
                    .put("storeHeld", held.size())
                    .check(out, notes, () -> {
                        Accounting.assertSound(out, 2 * EACH);
                        Accounting.assertCallersAnswered(sync, async);
                        assertEquals(2 * EACH, pendingAtClose, "calls pending at close");
                        assertEquals(2 * EACH, out.report().handedOver(), "handed over\n" + out.report().toTable());
                        assertEquals(expectedIds, new TreeSet<>(nextAttempt.keySet()), "retry ids in the store");
                        assertEquals(2 * EACH, held.size(), "one store entry per call");
                        assertTrue(held.stream().allMatch(r -> r.arguments()[0].equals(r.retryId())
                                && r.nextAttempt() == (r.method().equals("send") ? 2 : 1)), "store entries: "
                                + nextAttempt);
                        assertTrue(handedOver.stream().allMatch(e -> e.failure() == null),
                                "a hand-over reported a failure");
                    });
        }
    }
}
