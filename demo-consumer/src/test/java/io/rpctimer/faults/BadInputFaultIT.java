package io.rpctimer.faults;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.CallerSaw;
import io.rpctimer.demo.consumer.DemoConsumer;
import io.rpctimer.demo.consumer.Report;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.dubbo.WheelFailbackCluster;
import io.rpctimer.retry.PendingRetry;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.testkit.DubboNode;
import io.rpctimer.wheel.SharedWheelTimer;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.dubbo.config.ReferenceConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Scenario 8: bad input. Invalid URL values, null and huge arguments, a listener that throws, a store that throws:
 * each gives a clear error, the wheel keeps running, and nothing is lost.
 */
class BadInputFaultIT {

    /** A URL value that must fail reference creation, and the message it must give. */
    private record Bad(String key, String value, String expected) {
    }

    private static final List<Bad> BAD_VALUES = List.of(
            // retries=-1 is valid: Dubbo's failback maps a negative value to its default
            new Bad("retries", "2147483648", "a whole number"),
            new Bad("failbacktasks", "0", "a whole number > 0"),
            new Bad("failback.delay", "soon", "milliseconds > 0"),
            new Bad("failback.delay", "9223372036854775807", "milliseconds <= failback.maxdelay (60000)"),
            new Bad("failback.multiplier", "NaN", "a number in [1, 1000000]"),
            new Bad("failback.maxdelay", "100", "milliseconds >= failback.delay (5000)"),
            new Bad("failback.jitter", "1.5", "a number in [0, 1]"),
            new Bad("failback.retryon", " , ", "rpc, all, or comma-separated exception class names"),
            new Bad("failback.overflow", "drop", "reject, log or spill"),
            new Bad("send.failback.delay", "-5", "milliseconds > 0"));

    /**
     * Each invalid value fails reference creation with {@code invalid <key>=<value> for <service> (expected: ...)};
     * the failed references leave no lease on the shared wheel and no count behind, and a valid consumer in the same
     * JVM then delivers every call through failing providers.
     */
    @Test
    @Timeout(60)
    void invalidUrlValuesFailReferenceCreationNamingKeyAndValue() throws Throwable {
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 2, o -> o.parameter("failback.delay", "100"))) {
            int holders = SharedWheelTimer.holders();
            RetryStats before = WheelFailback.stats();
            List<String> messages = new ArrayList<>();
            for (Bad bad : BAD_VALUES) {
                messages.add(assertReferenceFails(rig.zk().registryAddress(), bad));
            }
            int holdersAfter = SharedWheelTimer.holders();
            RetryStats after = WheelFailback.stats();

            rig.provider(1).faults().errorRate(1.0);
            Sender sender = Sender.start(rig.consumer(), Sender.Mode.SYNC, 30, 50, 4, "valid");
            Map<CallerSaw, Long> saw = sender.await(Duration.ofSeconds(20));
            FaultRig.Outcome out = rig.finish(Duration.ofSeconds(20));

            String notes = BAD_VALUES.size() + " invalid values each failed reference creation naming key and value,"
                    + " e.g. `" + messages.get(3) + "` and `" + messages.get(4) + "`; no wheel lease or count was"
                    + " left behind; then a valid consumer delivered every call through p1 failing every call"
                    + " (callers saw " + saw + sender.failureNote() + ").";
            Figures.of(8, 1, "8a-invalid-url-values", "invalid URL values", BAD_VALUES.size() + " invalid values ("
                            + BAD_VALUES.stream().map(Bad::key).distinct().count() + " keys); then p1 failing every"
                            + " call")
                    .check(out, notes, () -> {
                        assertEquals(holders, holdersAfter, "wheel leases left by failed references");
                        assertEquals(before, after, "counts left by failed references");
                        Accounting.assertSound(out, 30);
                        Accounting.assertCallersAnswered(sender);
                        assertEquals(30, out.report().delivered(), out.report().toTable());
                        assertTrue(out.report().deliveredOnAnyRetry() > 0, "p1 never failed a call");
                    });
        }
    }

    /** @return the message naming key and value */
    private static String assertReferenceFails(String registry, Bad bad) {
        ReferenceConfig<NotificationService> ref = new ReferenceConfig<>();
        ref.setInterface(NotificationService.class);
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setCheck(false);
        ref.setParameters(new HashMap<>(Map.of(bad.key(), bad.value())));
        DubboNode node = DubboNode.create("bad-consumer", registry).reference(ref);
        try {
            Throwable t = assertThrows(Throwable.class, () -> {
                node.start();
                ref.get();
            }, bad.key() + "=" + bad.value() + " was accepted");
            String expected = "wheelfailback: invalid " + bad.key() + "=" + bad.value() + " for "
                    + NotificationService.class.getName() + " (expected: " + bad.expected() + ")";
            for (Throwable c = t; c != null; c = c.getCause()) {
                if (expected.equals(c.getMessage())) {
                    assertTrue(c instanceof IllegalArgumentException, "not an IllegalArgumentException: " + c);
                    return expected;
                }
            }
            throw new AssertionError("no cause says \"" + expected + "\"", t);
        } finally {
            node.close();
        }
    }

    /**
     * Null and huge arguments: null messages and 1 MB messages are delivered like any other (p1 fails every call, so
     * about half go through a retry); a 9 MB message exceeds Dubbo's 8 MB payload limit, which Dubbo reports as a
     * network failure, but no retry can fix it: wheelfailback passes the failure to the caller at once, as a
     * business failure: reported, not lost.
     */
    @Test
    @Timeout(60)
    void nullAndHugeArgumentsAreDeliveredOrFailedToTheCallerNeverLost() throws Throwable {
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 2, o -> o.timeout(Duration.ofMillis(2000))
                .parameter("failback.delay", "100").parameter("retries", "2"))) {
            rig.provider(1).faults().errorRate(1.0);
            DemoConsumer c = rig.consumer();
            String oneMb = "x".repeat(1 << 20);
            String nineMb = "y".repeat(9 << 20);
            List<CallerSaw> saw = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                saw.add(c.send("null-sync-" + i, null));
                saw.add(c.sendAsync("null-async-" + i, null).join());
            }
            for (int i = 0; i < 3; i++) {
                saw.add(c.send("1mb-sync-" + i, oneMb));
                saw.add(c.sendAsync("1mb-async-" + i, oneMb).join());
            }
            saw.add(c.send("9mb-sync", nineMb));
            saw.add(c.sendAsync("9mb-async", nineMb).join());
            FaultRig.Outcome out = rig.finish(Duration.ofSeconds(20));

            String notes = "20 calls with a null message and 6 with a 1 MB message were delivered ("
                    + out.report().deliveredOnAnyRetry() + " of all calls on retry, p1 failing every call); the 2"
                    + " calls with a 9 MB message failed to their callers at once: Dubbo reports a request over its"
                    + " payload limit as a network failure (RpcException code 1), but no retry can fix it, so"
                    + " wheelfailback does not retry it (nor schedule anything for it).";
            Figures.of(8, 2, "8b-null-and-huge-arguments", "null and huge arguments",
                            "20 null, 6 x 1 MB, 2 x 9 MB messages (limit 8 MB); p1 failing every call")
                    .check(out, notes, () -> {
                        Accounting.assertSound(out, 28);
                        assertEquals(26, out.report().delivered(), out.report().toTable());
                        assertEquals(2, out.report().callerErrors(), out.report().toTable());
                        assertEquals(0, out.report().abandoned(), out.report().toTable());
                        assertEquals(List.of(CallerSaw.ERROR, CallerSaw.ERROR), saw.subList(26, 28),
                                "the 9 MB callers got the failure");
                        assertTrue(saw.subList(0, 26).stream()
                                .allMatch(s -> s == CallerSaw.REPLY || s == CallerSaw.FAILED_BACK), "callers saw " + saw);
                        assertTrue(out.events().all().stream().noneMatch(e -> e.retryId().startsWith("9mb")),
                                "a 9 MB call was scheduled for a retry");
                    });
        }
    }

    /**
     * A huge {@code failback.delay}: 9223372036854775807 ms alone fails reference creation (see the invalid values:
     * it exceeds the default {@code failback.maxdelay}); with {@code failback.maxdelay} as huge it is accepted and
     * capped where nanoseconds saturate, about 292 years (less up to 20% jitter). The retries sit on the wheel, which still runs a new
     * near-term timeout on time; at shutdown they are handed over.
     */
    @Test
    @Timeout(60)
    void hugeDelayIsAcceptedAndTheRetriesAreHandedOver() throws Throwable {
        String max = String.valueOf(Long.MAX_VALUE);
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 2, o -> o.parameter("failback.delay", max)
                .parameter("failback.maxdelay", max).parameter("retries", String.valueOf(Integer.MAX_VALUE))
                .parameter("failbacktasks", String.valueOf(Integer.MAX_VALUE)))) {
            rig.providers().forEach(p -> p.faults().errorRate(1.0));
            Sender sender = Sender.start(rig.consumer(), Sender.Mode.SYNC, 10, 50, 2, "huge-delay");
            Map<CallerSaw, Long> saw = sender.await(Duration.ofSeconds(20));
            long probeLateMillis = probeTheSharedWheel();
            // the 10 retries, and the sweep that looks for destroyed references while retries are pending
            await().atMost(Duration.ofSeconds(10)).until(() -> WheelFailback.wheelStats().orElseThrow()
                    .pendingTimeouts() == 11);
            FaultRig.Outcome out = rig.finish(Duration.ZERO);

            List<RetryEvent> scheduled = out.events().of(RetryEvent.Type.SCHEDULED);
            long delayMillis = scheduled.stream().mapToLong(RetryEvent::delayMillis).min().orElse(0);
            List<PendingRetry> held = out.store().retries();
            String notes = "accepted; every call failed back (" + saw + sender.failureNote() + ") with its first retry"
                    + " scheduled at least " + delayMillis + " ms ahead (" + delayMillis / 31_557_600_000L
                    + " years: Long.MAX_VALUE ns, less the jitter); with"
                    + " those 10 on it, the wheel still ran a new 50 ms timeout " + probeLateMillis + " ms late; at"
                    + " shutdown all " + held.size() + " were handed over to the store.";
            Figures.of(8, 3, "8c-huge-delay", "failback.delay=9223372036854775807",
                            "failback.delay and failback.maxdelay = Long.MAX_VALUE ms, retries and failbacktasks ="
                                    + " Integer.MAX_VALUE; every provider failing")
                    .check(out, notes, () -> {
                        Accounting.assertSound(out, 10);
                        Accounting.assertCallersAnswered(sender);
                        assertEquals(10, out.report().handedOver(), out.report().toTable());
                        assertEquals(10, held.size(), "store entries");
                        long capMillis = Long.MAX_VALUE / 1_000_000; // Long.MAX_VALUE ns; jitter 0.2 spreads below
                        assertTrue(scheduled.stream().allMatch(e -> e.delayMillis() <= capMillis
                                && e.delayMillis() >= capMillis * 0.8), "delays " + scheduled.stream()
                                .map(RetryEvent::delayMillis).toList() + " (expected: in [0.8, 1] x " + capMillis
                                + " ms)");
                        assertTrue(probeLateMillis < 50, "a 50 ms timeout ran " + probeLateMillis + " ms late");
                    });
        }
    }

    /**
     * Schedules a 50 ms timeout on the shared wheel (through a lease of its own, released after) and waits for it.
     *
     * @return how late it ran, in milliseconds
     */
    private static long probeTheSharedWheel() throws Exception {
        SharedWheelTimer.Lease lease = SharedWheelTimer.acquire();
        try {
            CompletableFuture<Long> ran = new CompletableFuture<>();
            long t0 = System.nanoTime();
            lease.timer().newTimeout(t -> ran.complete(System.nanoTime()), 50, TimeUnit.MILLISECONDS);
            return TimeUnit.NANOSECONDS.toMillis(ran.get(5, TimeUnit.SECONDS) - t0) - 50;
        } finally {
            lease.release();
        }
    }

    /**
     * Listeners that throw, RuntimeExceptions and Errors alternately, on every event, registered before the
     * consumer's own: outcomes are unaffected (every other listener still sees every event, every call is
     * delivered), and {@code stats().listenerErrors()} counts each throw.
     */
    @Test
    @Timeout(60)
    void aListenerThatThrowsChangesNoOutcome() throws Throwable {
        AtomicLong thrown = new AtomicLong();
        RetryListener thrower = e -> {
            if (thrown.incrementAndGet() % 2 == 0) {
                throw new AssertionError("listener bug (injected) on " + e.type());
            }
            throw new IllegalStateException("listener bug (injected) on " + e.type());
        };
        WheelFailback.addListener(thrower);
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 3, o -> o.parameter("failback.delay", "100"))) {
            rig.provider(1).faults().errorRate(1.0);
            Sender sender = Sender.start(rig.consumer(), Sender.Mode.SYNC, 60, 50, 4, "listener");
            Map<CallerSaw, Long> saw = sender.await(Duration.ofSeconds(20));
            FaultRig.Outcome out = rig.finish(Duration.ofSeconds(20));
            long throws_ = thrown.get();

            String notes = "the listener threw on all " + throws_ + " events (IllegalStateException and AssertionError"
                    + " alternately); stats().listenerErrors() counted " + out.stats().listenerErrors() + "; every"
                    + " call was delivered (callers saw " + saw + sender.failureNote() + "), the wheel ran "
                    + out.wheel().ticks() + " ticks.";
            Figures.of(8, 4, "8d-throwing-listener", "a RetryListener that throws",
                            "a listener throwing on every event; p1 failing every call")
                    .check(out, notes, () -> {
                        Accounting.assertSound(out, 60);
                        Accounting.assertCallersAnswered(sender);
                        assertEquals(60, out.report().delivered(), out.report().toTable());
                        assertTrue(out.report().deliveredOnAnyRetry() > 0, "p1 never failed a call");
                        assertTrue(throws_ > 0, "the listener never ran");
                        assertEquals(throws_, out.stats().listenerErrors(), "listener errors counted");
                        assertTrue(out.wheel().ticks() > 0, "the wheel never ticked");
                    });
        } finally {
            WheelFailback.removeListener(thrower);
        }
    }

    /**
     * A RetryStore that throws on every hand-over. The consumer closes with 20 retries pending: each is still
     * HANDED_OVER, with the store's exception attached (event, counter, log), none silently dropped. A second
     * consumer holds the shared wheel meanwhile: it keeps ticking, and the second consumer's calls still fail back
     * and are delivered on it.
     */
    @Test
    @Timeout(60)
    void aStoreThatThrowsStillReportsEveryHandOver() throws Throwable {
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 3, o -> o.parameter("failback.delay", "30000"))) {
            rig.providers().forEach(p -> p.faults().errorRate(1.0));
            WheelFailback.setRetryStore(r -> {
                throw new IOException("disk full (injected) for " + r.retryId());
            });
            DemoConsumer second = DemoConsumer.start(DemoConsumer.options(rig.zk().registryAddress())
                    .name("consumer2").timeout(Duration.ofMillis(500)).parameter("failback.delay", "100"));
            try {
                second.watch(rig.providers().toArray(DemoProvider[]::new));
                Sender sender = Sender.start(rig.consumer(), Sender.Mode.SYNC, 20, 50, 4, "store");
                Map<CallerSaw, Long> saw = sender.await(Duration.ofSeconds(20));
                FaultRig.Outcome out = rig.finish(Duration.ZERO);

                long ticks = WheelFailback.wheelStats().orElseThrow().ticks();
                rig.providers().forEach(p -> p.faults().errorRate(0));
                rig.provider(1).faults().errorRate(1.0);
                Sender afterwards = Sender.start(second, Sender.Mode.SYNC, 30, 50, 4, "second");
                afterwards.await(Duration.ofSeconds(20));
                boolean settled = second.awaitSettled(Duration.ofSeconds(20));
                long ticksLater = WheelFailback.wheelStats().orElseThrow().ticks();
                second.close();
                Report secondReport = second.report();

                List<RetryEvent> handedOver = out.events().of(RetryEvent.Type.HANDED_OVER);
                String notes = "the store threw for each of the " + handedOver.size() + " pending retries; each was"
                        + " still reported HANDED_OVER with the store's exception attached (`"
                        + (handedOver.isEmpty() ? "none" : handedOver.get(0).failure()) + "`); callers had seen "
                        + saw + sender.failureNote() + ". A second consumer kept the shared wheel: it ticked on ("
                        + (ticksLater - ticks) + " ticks) and delivered all " + secondReport.delivered() + " of its"
                        + " calls, " + secondReport.deliveredOnAnyRetry() + " on retry, lost "
                        + secondReport.lost() + afterwards.failureNote() + ".";
                Figures.of(8, 5, "8e-throwing-store", "a RetryStore that throws",
                                "the store throws IOException on every hand-over; 20 retries pending at shutdown")
                        .put("secondConsumerDelivered", secondReport.delivered())
                        .check(out, notes, () -> {
                            Accounting.assertSound(out, 20);
                            Accounting.assertCallersAnswered(sender, afterwards);
                            assertEquals(20, out.report().handedOver(), out.report().toTable());
                            assertEquals(20, handedOver.size(), "HANDED_OVER events");
                            assertTrue(handedOver.stream().allMatch(e -> e.failure() instanceof IOException
                                    && e.failure().getMessage().equals("disk full (injected) for " + e.retryId())),
                                    "hand-overs without the store's failure: " + handedOver);
                            assertTrue(ticksLater > ticks, "the wheel stopped ticking");
                            assertTrue(settled, "the second consumer's calls did not settle");
                            assertEquals(0, secondReport.lost(), secondReport.toTable());
                            assertTrue(secondReport.addsUp(), secondReport.toTable());
                            assertEquals(30, secondReport.delivered(), secondReport.toTable());
                            assertTrue(secondReport.deliveredOnAnyRetry() > 0, "p1 never failed a call");
                        });
            } finally {
                second.close();
            }
        }
    }
}
