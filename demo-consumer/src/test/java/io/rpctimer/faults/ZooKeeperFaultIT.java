package io.rpctimer.faults;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.CallerSaw;
import io.rpctimer.demo.consumer.DemoConsumer;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.retry.RetryEvent;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Scenario 4: the registry fails while retries are pending. Every provider fails at the RPC level, so every call of
 * the first batch fails back and keeps retrying (delay 300 ms, x1.5, cap 1 s, 15 retries) while ZooKeeper fails a
 * third of the way through the batch:
 * <ul>
 *   <li>a single ZooKeeper is stopped for 2 s and restarted on the same port (its data and sessions kept);</li>
 *   <li>or one node of a three-node ensemble is killed for good.</li>
 * </ul>
 * Then a fourth provider, p4, starts and registers through the recovered registry. The pending retries can only be
 * delivered once the consumer has discovered p4 through its ZooKeeper subscription, since p1..p3 still fail; after
 * that p1..p3 recover and a second batch goes out. Every call of both batches must be delivered, none lost.
 */
class ZooKeeperFaultIT {

    private static final int FIRST_BATCH = 60;
    private static final int SECOND_BATCH = 30;
    private static final Duration ZK_DOWN = Duration.ofSeconds(2);

    private static final UnaryOperator<DemoConsumer.Options> OPTIONS = o -> o.parameter("failback.delay", "300")
            .parameter("failback.multiplier", "1.5").parameter("failback.maxdelay", "1000")
            .parameter("retries", "15").parameter("failbacktasks", "1000");

    @Test
    @Timeout(60)
    void zooKeeperRestartedWhileRetriesArePending() throws Throwable {
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 3, OPTIONS)) {
            run(rig, 1, "4-zookeeper-restarted", "single ZooKeeper restarted",
                    "ZooKeeper stopped " + ZK_DOWN.toMillis() + " ms and restarted on its port, every provider"
                            + " failing", () -> {
                        long t0 = System.nanoTime();
                        rig.zk().stop();
                        FaultRig.hold(ZK_DOWN);
                        return t0;
                    }, pending -> rig.zk().restart());
        }
    }

    @Test
    @Timeout(60)
    void ensembleLosesANodeWhileRetriesArePending() throws Throwable {
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.ensemble(3), 3, OPTIONS)) {
            run(rig, 2, "4-ensemble-node-lost", "3-node ensemble loses a node",
                    "one of 3 ZooKeeper nodes killed for good, every provider failing", () -> {
                        long t0 = System.nanoTime();
                        rig.zk().killOne(0);
                        return t0;
                    }, pending -> { });
        }
    }

    private interface Fault {
        long begin() throws Exception;
    }

    private interface Recovery {
        void run(long pendingRetries) throws Exception;
    }

    private static void run(FaultRig rig, int order, String id, String variant, String fault, Fault registryFault,
                            Recovery registryRecovery) throws Throwable {
        rig.providers().forEach(p -> p.faults().errorRate(1.0));
        Sender first = Sender.start(rig.consumer(), Sender.Mode.SYNC, FIRST_BATCH, 30, 6, "zk1");
        await().atMost(Duration.ofSeconds(20)).until(() -> first.started() >= FIRST_BATCH / 3);
        long faultNanos = registryFault.begin();
        Map<CallerSaw, Long> firstSaw = first.await(Duration.ofSeconds(30));
        long pendingAtRecovery = rig.consumer().book().unsettled();
        registryRecovery.run(pendingAtRecovery);

        DemoProvider p4 = rig.addProvider("p4");
        await().atMost(Duration.ofSeconds(20)).until(() -> p4.ledger().snapshot().completed() > 0);
        long discoveredMillis = Duration.ofNanos(System.nanoTime() - faultNanos).toMillis();
        rig.providers().forEach(p -> p.faults().errorRate(0));
        Sender second = Sender.start(rig.consumer(), Sender.Mode.SYNC, SECOND_BATCH, 30, 6, "zk2");
        Map<CallerSaw, Long> secondSaw = second.await(Duration.ofSeconds(30));
        FaultRig.Outcome out = rig.finish(Duration.ofSeconds(20));

        long byP4 = out.events().of(RetryEvent.Type.DELIVERED).stream()
                .filter(e -> p4.address().equals(e.provider())).count();
        String notes = "first batch: callers saw " + firstSaw + ", " + pendingAtRecovery + " retries pending when the"
                + " registry recovered; p4 registered and served its first retry " + discoveredMillis + " ms after"
                + " the fault began, and delivered " + byP4 + " retries in all; second batch (providers healthy):"
                + " callers saw " + secondSaw + first.failureNote() + second.failureNote() + ".";
        Figures.of(4, order, id, variant, fault)
                .put("pendingAtRecovery", pendingAtRecovery)
                .put("p4DiscoveredMillis", discoveredMillis)
                .check(out, notes, () -> {
                    Accounting.assertSound(out, FIRST_BATCH + SECOND_BATCH);
                    Accounting.assertCallersAnswered(first, second);
                    assertTrue(out.settled(), "every call settled before the consumer closed");
                    assertEquals(Map.of(CallerSaw.FAILED_BACK, (long) FIRST_BATCH), firstSaw,
                            "every call of the first batch failed back");
                    assertTrue(pendingAtRecovery > 0, "no retry was pending when the registry recovered");
                    assertEquals(FIRST_BATCH + SECOND_BATCH, out.report().delivered(), "every call delivered\n"
                            + out.report().toTable());
                    assertTrue(byP4 > 0, "no retry was delivered by p4, registered after the fault");
                });
    }
}
