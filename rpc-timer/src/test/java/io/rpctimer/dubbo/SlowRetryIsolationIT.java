package io.rpctimer.dubbo;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.testkit.DubboNode;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.dubbo.config.ReferenceConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A retry can block the shared executor. Reference A has {@code actives=1} and providers that hang, so its retries
 * beyond one per provider wait in Dubbo's {@code ActiveLimitFilter} for up to A's timeout, on whatever thread sends
 * them. An unrelated reference B, in the same application, has a retry due meanwhile: it must be sent on time, not
 * after A's waits end. Over real Dubbo RPC on 127.0.0.1.
 */
@Timeout(120)
class SlowRetryIsolationIT {

    /** A's timeout: how long each of its blocked retries holds its thread in ActiveLimitFilter. */
    private static final int A_TIMEOUT_MS = 4_000;
    private static final int A_RETRY_DELAY_MS = 1_000;
    /** B's retry falls due while A's retries are blocked. */
    private static final int B_RETRY_DELAY_MS = 1_400;
    /**
     * How late B's retry may be sent: room for a 2-core box at a load average of 10 and more (a thread may wait
     * hundreds of ms for a core), yet well below the {@code A_TIMEOUT_MS - (B_RETRY_DELAY_MS - A_RETRY_DELAY_MS)}
     * = 3,600 ms it waits when A's retries hold the threads that send it.
     */
    private static final long MAX_LATENESS_MS = 1_500;
    /** More of A's retries than the shared executor has threads, and than A's two providers take at once. */
    private static final int A_CALLS = Math.max(2, Runtime.getRuntime().availableProcessors()) + 4;

    private final ScriptedGreetingService a1 = new ScriptedGreetingService("a1");
    private final ScriptedGreetingService a2 = new ScriptedGreetingService("a2");
    private final ScriptedGreetingService b1 = new ScriptedGreetingService("b1");
    private final ScriptedGreetingService b2 = new ScriptedGreetingService("b2");
    private final List<RetryEvent> events = new CopyOnWriteArrayList<>();
    /** How many of A's retries hung at A's providers when B's retry was sent; -1 until then. */
    private final AtomicInteger aHangingWhenBSent = new AtomicInteger(-1);
    private final RetryListener listener = e -> {
        if (e.type() == RetryEvent.Type.SENT && e.method().equals("notify") && e.attempt() == 1) {
            aHangingWhenBSent.compareAndSet(-1, hanging(a1) + hanging(a2));
        }
        events.add(e);
    };
    private final List<DubboNode> nodes = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        WheelFailback.removeListener(listener);
        for (ScriptedGreetingService s : List.of(a1, a2, b1, b2)) {
            s.releaseHung();
        }
        for (int i = nodes.size() - 1; i >= 0; i--) { // the consumer first, then its providers
            nodes.get(i).close();
        }
    }

    @Test
    void referenceBlockedInActiveLimitFilter_doesNotDelayAnotherReferencesRetry() {
        DubboNode pa1 = start(DubboNode.provider("pa1", GreetingService.class, a1));
        DubboNode pa2 = start(DubboNode.provider("pa2", GreetingService.class, a2));
        DubboNode pb1 = start(DubboNode.provider("pb1", GreetingExport.config(b1, "b", Map.of())));
        DubboNode pb2 = start(DubboNode.provider("pb2", GreetingExport.config(b2, "b", Map.of())));
        ReferenceConfig<GreetingService> refA = reference(A_TIMEOUT_MS, A_RETRY_DELAY_MS);
        refA.setActives(1);
        DubboNode.aim(refA, pa1, pa2);
        ReferenceConfig<GreetingService> refB = reference(3_000, B_RETRY_DELAY_MS);
        refB.setVersion("b");
        DubboNode.aim(refB, pb1, pb2);
        start(DubboNode.consumer("consumer", List.of(refA, refB)));
        WheelFailback.addListener(listener);

        for (ScriptedGreetingService s : List.of(a1, a2, b1, b2)) {
            s.mode = ScriptedGreetingService.Mode.FAIL; // first attempts fail at once; retryon=all retries them
        }
        GreetingService a = refA.get();
        for (int i = 0; i < A_CALLS; i++) {
            assertNull(a.sayHello("a-" + i));
        }
        assertNull(refB.get().notify("b"));
        for (ScriptedGreetingService s : List.of(a1, a2)) {
            s.hangMillis = 30_000;
            s.mode = ScriptedGreetingService.Mode.HANG; // A's retries: two get through and hang, the rest wait
        }
        b1.mode = ScriptedGreetingService.Mode.OK;
        b2.mode = ScriptedGreetingService.Mode.OK;

        RetryEvent sent = await().atMost(Duration.ofSeconds(30)).until(() -> first(RetryEvent.Type.SENT, "notify"),
                Optional::isPresent).orElseThrow();
        RetryEvent scheduled = first(RetryEvent.Type.SCHEDULED, "notify").orElseThrow();
        long latenessMs = sent.epochMillis() - (scheduled.epochMillis() + scheduled.delayMillis());
        int aHanging = aHangingWhenBSent.get();
        System.out.printf("SlowRetryIsolationIT: B's retry sent %d ms after its due time; %d of A's %d retries hung"
                + " at its providers then, the others were waiting in ActiveLimitFilter%n", latenessMs, aHanging,
                A_CALLS);
        assertTrue(latenessMs <= MAX_LATENESS_MS, "B's retry was sent " + latenessMs + " ms late (bound "
                + MAX_LATENESS_MS + " ms): it waited for threads A's blocked retries held");
        assertTrue(aHanging <= 2, "the scenario: actives=1 lets one retry per provider through, the others"
                + " block, yet " + aHanging + " hung at A's providers at once");
    }

    /**
     * @return the calls {@code s} holds now: counted when they arrive, recorded as served when they return (a call
     *     that hangs is counted only). Read at the moment B's retry is sent, not later: on a loaded machine A's
     *     first retries may have timed out by the time the test thread reads, letting others through.
     */
    private static int hanging(ScriptedGreetingService s) {
        return s.calls.get() - s.served.size();
    }

    private Optional<RetryEvent> first(RetryEvent.Type type, String method) {
        return events.stream().filter(e -> e.type() == type && e.method().equals(method) && e.attempt() == 1)
                .findFirst();
    }

    private static ReferenceConfig<GreetingService> reference(int timeoutMs, int retryDelayMs) {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setInterface(GreetingService.class);
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(timeoutMs);
        ref.setParameters(new HashMap<>(Map.of("failback.delay", String.valueOf(retryDelayMs),
                "failback.jitter", "0", "failback.retryon", "all")));
        ref.setRetries(5);
        return ref;
    }

    private DubboNode start(DubboNode node) {
        nodes.add(node);
        return node;
    }
}
