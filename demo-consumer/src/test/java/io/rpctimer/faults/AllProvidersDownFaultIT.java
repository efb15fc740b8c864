package io.rpctimer.faults;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.CallerSaw;
import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.retry.RetryEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Scenario 2 (sync callers) and 7b (async callers): every provider goes down (unregistered and unexported) together
 * for at least 2 s, ten times the first backoff delay, and until some call's second retry has failed, while calls
 * keep coming; then they come back. How soon a call gets that far depends on the machine: a loaded one hears of the
 * providers' departure late, and the retry budget ({@code failback.budget.*}) lets retries through at about 10 a
 * second plus a fifth of the calls that succeeded in the last 10 s, in the order they fell due, so a fixed 2 s
 * outage may end before any call's second retry ran. Calls that find no provider, or a provider on its way down,
 * fail back; their retries keep failing with "no provider" and back off (200 ms, 400 ms, 800 ms, then 1 s) until
 * the providers are back. Every call must be delivered: none abandoned, none lost.
 */
class AllProvidersDownFaultIT {

    private static final int CALLS = 150;
    private static final int PER_SECOND = 50;
    /** The shortest outage. */
    private static final Duration DOWN = Duration.ofSeconds(2);
    /**
     * The longest, a bound only: the providers come back as soon as a second retry failed, and a call gets to its
     * eighth (last) retry only through its second, so none is abandoned for the wait.
     */
    private static final Duration MAX_DOWN = Duration.ofSeconds(30);

    @ParameterizedTest(name = "{0} callers")
    @EnumSource(Sender.Mode.class)
    @Timeout(120)
    void everyCallIsDeliveredOnceTheProvidersAreBack(Sender.Mode mode) throws Throwable {
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 3, o -> o
                .parameter("failback.delay", "200").parameter("failback.multiplier", "2")
                .parameter("failback.maxdelay", "1000").parameter("retries", "8")
                .parameter("failbacktasks", "1000"))) {
            Sender sender = Sender.start(rig.consumer(), mode, CALLS, PER_SECOND, 8, "down-" + mode.label());
            await().atMost(Duration.ofSeconds(20)).until(() -> sender.started() >= CALLS / 4);
            int sentBefore = sender.started();

            List<CompletableFuture<CompletableFuture<Void>>> goingDown = new ArrayList<>();
            for (DemoProvider p : rig.providers()) {
                goingDown.add(CompletableFuture.supplyAsync(() -> p.goDown(MAX_DOWN)));
            }
            List<CompletableFuture<Void>> back = new ArrayList<>();
            for (CompletableFuture<CompletableFuture<Void>> f : goingDown) {
                back.add(f.get(10, TimeUnit.SECONDS));
            }
            long allDownNanos = System.nanoTime();
            int sentAtAllDown = sender.started();
            boolean secondRetryFailed = Waits.until(() -> System.nanoTime() - allDownNanos >= DOWN.toNanos()
                    && rig.events().of(RetryEvent.Type.FAILED).stream().anyMatch(e -> e.attempt() >= 2), MAX_DOWN);
            rig.providers().forEach(DemoProvider::up);
            long allDownMillis = Duration.ofNanos(System.nanoTime() - allDownNanos).toMillis();
            int sentAtFirstBack = sender.started();
            CompletableFuture.allOf(back.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

            Map<CallerSaw, Long> saw = sender.await(Duration.ofSeconds(30));
            FaultRig.Outcome out = rig.finish(Duration.ofSeconds(20));

            int lastRetry = out.report().deliveredOnRetry().isEmpty() ? 0 : out.report().deliveredOnRetry().lastKey();
            String notes = "all three providers were down together for " + allDownMillis + " ms (at least "
                    + DOWN.toMillis() + " ms, and until a second retry had failed: "
                    + (secondRetryFailed ? "it had" : "none had within " + MAX_DOWN.toSeconds() + " s") + "); "
                    + (sentAtFirstBack - sentAtAllDown) + " calls were sent in that window; "
                    + out.report().deliveredOnAnyRetry() + " calls failed back and were delivered"
                    + " on retry " + out.report().deliveredOnRetry() + " (retry number: calls), the latest on retry "
                    + lastRetry + "; " + out.stats().retriesFailed() + " retries failed on the way (no provider);"
                    + " callers saw " + saw + sender.failureNote() + (sender.failures().isEmpty() ? ""
                    : " (the proxy returned null instead of a future for the calls wheelfailback failed back with no"
                    + " provider available: an rpc-timer bug, reproduced alone by AsyncNoProviderFaultIT)") + ".";
            Figures.of(mode == Sender.Mode.SYNC ? 2 : 7, mode == Sender.Mode.SYNC ? 1 : 3,
                            (mode == Sender.Mode.SYNC ? "2" : "7b") + "-all-providers-down-" + mode.label(),
                            (mode == Sender.Mode.SYNC ? "" : "2 again, ") + mode.label() + " callers",
                            "p1, p2, p3 down together for at least " + DOWN.toMillis() + " ms and until a"
                                    + " second retry failed (delay 200 ms, x2, cap 1 s), after "
                                    + sentBefore + " of " + CALLS + " calls")
                    .put("allDownMillis", allDownMillis)
                    .put("latestRetry", lastRetry)
                    .check(out, notes, () -> {
                        Accounting.assertEveryCallDelivered(out, CALLS, sender);
                        assertTrue(allDownMillis >= 5 * 200, "providers were not down together for several"
                                + " backoff periods: " + allDownMillis + " ms");
                        assertTrue(secondRetryFailed, "no second retry failed within " + MAX_DOWN.toSeconds()
                                + " s of the providers going down");
                        assertTrue(lastRetry >= 3, "no call needed several retries: " + out.report()
                                .deliveredOnRetry());
                        assertTrue(out.stats().retriesFailed() > 0, "no retry failed while the providers were down");
                    });
        }
    }
}
