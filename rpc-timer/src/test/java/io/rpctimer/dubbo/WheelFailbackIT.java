package io.rpctimer.dubbo;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.InMemoryRetryStore;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.retry.RetryStore;
import io.rpctimer.testkit.DubboNode;
import io.rpctimer.wheel.TimerStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.dubbo.config.ReferenceConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The plugin over real Dubbo RPC on 127.0.0.1: two providers reached by direct URLs, one consumer on
 * {@code cluster="wheelfailback"}.
 *
 * <p>A hung provider holds a call for {@value #HANG_MS} ms; the consumer's timeout, {@value #TIMEOUT_MS} ms, is far
 * shorter, yet long enough for a loaded machine to answer a call (a retry, or a JVM's first call, which pays class
 * loading and connection setup). Tests whose calls only ever hang use {@value #HUNG_CALL_TIMEOUT_MS} ms.
 */
@org.junit.jupiter.api.Timeout(120)
class WheelFailbackIT {

    private static final int TIMEOUT_MS = 2_000;
    private static final int HUNG_CALL_TIMEOUT_MS = 200;
    private static final int HANG_MS = 30_000;

    private final ScriptedGreetingService s1 = new ScriptedGreetingService("p1");
    private final ScriptedGreetingService s2 = new ScriptedGreetingService("p2");
    private final List<RetryEvent> events = new CopyOnWriteArrayList<>();
    private final RetryListener listener = events::add;
    private final InMemoryRetryStore store = new InMemoryRetryStore();
    private RetryStore previousStore;
    private DubboNode p1;
    private DubboNode p2;
    private DubboNode consumer;
    private ReferenceConfig<GreetingService> reference;

    @BeforeEach
    void start() {
        s1.hangMillis = HANG_MS;
        s2.hangMillis = HANG_MS;
        p1 = DubboNode.provider("p1", GreetingService.class, s1);
        p2 = DubboNode.provider("p2", GreetingService.class, s2);
        WheelFailback.addListener(listener);
        previousStore = WheelFailback.retryStore();
        WheelFailback.setRetryStore(store);
    }

    @AfterEach
    void stop() {
        s1.releaseHung();
        s2.releaseHung();
        if (consumer != null) {
            consumer.close();
        }
        p1.close();
        p2.close();
        WheelFailback.removeListener(listener);
        WheelFailback.setRetryStore(previousStore);
    }

    private GreetingService connect(Map<String, String> params) {
        return connect(params, TIMEOUT_MS);
    }

    private GreetingService connect(Map<String, String> params, int timeoutMs) {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setInterface(GreetingService.class);
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(timeoutMs);
        ref.setParameters(new HashMap<>(params));
        consumer = DubboNode.consumer("consumer", ref, p1, p2);
        reference = ref;
        return ref.get();
    }

    private List<RetryEvent> of(RetryEvent.Type type) {
        return events.stream().filter(e -> e.type() == type).toList();
    }

    @Test
    void syncCallerGetsTheEmptyResultAndTheRetryIsDelivered() {
        s1.mode = ScriptedGreetingService.Mode.HANG;
        s2.mode = ScriptedGreetingService.Mode.HANG;
        GreetingService svc = connect(Map.of("failback.delay", "300", "failback.jitter", "0"));

        long t0 = System.nanoTime();
        assertNull(svc.notify("order-1"), "failback: the caller gets the empty result");
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(tookMs >= TIMEOUT_MS && tookMs < HANG_MS / 2, "returned after " + tookMs + " ms: at the timeout,"
                + " not when the provider stopped hanging");

        s1.releaseHung();
        s2.releaseHung();
        await().atMost(Duration.ofSeconds(30)).until(() -> !of(RetryEvent.Type.DELIVERED).isEmpty());
        RetryEvent delivered = of(RetryEvent.Type.DELIVERED).get(0);
        assertEquals(1, delivered.attempt());
        List<ScriptedGreetingService.Served> served = new ArrayList<>(s1.served);
        served.addAll(s2.served);
        assertTrue(served.stream().anyMatch(s -> s.answered() && "1".equals(s.attempt())
                && delivered.retryId().equals(s.retryId())), "provider saw retry.id + retry.attempt: " + served);
    }

    @Test
    void callerSuppliedRetryIdReachesTheListenerAndTheProvider() {
        s1.mode = ScriptedGreetingService.Mode.HANG;
        s2.mode = ScriptedGreetingService.Mode.HANG;
        GreetingService svc = connect(Map.of("failback.delay", "300"));
        org.apache.dubbo.rpc.RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, "order-42");
        assertNull(svc.notify("order-42"));
        s1.releaseHung();
        s2.releaseHung();
        await().atMost(Duration.ofSeconds(30)).until(() -> !of(RetryEvent.Type.DELIVERED).isEmpty());
        assertEquals("order-42", of(RetryEvent.Type.DELIVERED).get(0).retryId());
        List<ScriptedGreetingService.Served> served = new ArrayList<>(s1.served);
        served.addAll(s2.served);
        assertTrue(served.stream().allMatch(s -> "order-42".equals(s.retryId())), served.toString());
    }

    @Test
    void asyncCallerGetsFailbackToo() throws Exception {
        s1.mode = ScriptedGreetingService.Mode.HANG;
        s2.mode = ScriptedGreetingService.Mode.HANG;
        GreetingService svc = connect(Map.of("failback.delay", "300", "failback.jitter", "0"));

        CompletableFuture<String> reply = svc.sayHelloAsync("async");
        assertNull(reply.get(15, TimeUnit.SECONDS), "the future completes with the empty result, not the failure");
        s1.releaseHung();
        s2.releaseHung();
        await().atMost(Duration.ofSeconds(30)).until(() -> !of(RetryEvent.Type.DELIVERED).isEmpty());
    }

    @Test
    void asyncCallerGetsAFutureEvenWithNoProviderUp() throws Exception {
        GreetingService svc = connect(Map.of("failback.delay", "60000"));
        assertTrue(svc.sayHello("warm-up").endsWith("hello warm-up"));
        p1.close();
        p2.close();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            CompletableFuture<String> reply = svc.sayHelloAsync("nobody home");
            assertTrue(reply != null, "the caller got null instead of a future");
            assertNull(reply.get(15, TimeUnit.SECONDS));
            return !of(RetryEvent.Type.SCHEDULED).isEmpty();
        });
        p1 = DubboNode.provider("p1", GreetingService.class, s1); // so that stop() has something to close
        p2 = DubboNode.provider("p2", GreetingService.class, s2);
    }

    /**
     * One provider hangs far longer than the timeout on every call. Calls that land on it fail back, and their
     * retries go to the other provider and are delivered while the hung calls still hang: no retry waits behind
     * another, and the wheel's worker stays on time.
     */
    @Test
    void hangingProviderStallsNoOtherRetryAndTheWheelStaysOnTime() throws Exception {
        s1.mode = ScriptedGreetingService.Mode.HANG;
        GreetingService svc = connect(Map.of("failback.delay", "100", "retries", "3"));
        int calls = 40;
        AtomicInteger failedBack = new AtomicInteger();
        ExecutorService callers = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                int n = i;
                done.add(callers.submit(() -> {
                    if (svc.notify("event-" + n) == null) {
                        failedBack.incrementAndGet();
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            callers.shutdownNow();
        }
        assertTrue(failedBack.get() > 0, "random load balancing never picked the hanging provider");
        // well before the hung calls return: no retry waited behind them
        await().atMost(Duration.ofMillis(HANG_MS / 2)).until(() -> of(RetryEvent.Type.DELIVERED).size()
                == failedBack.get());
        assertTrue(of(RetryEvent.Type.DELIVERED).stream().allMatch(e -> e.provider().endsWith(":" + p2.protocolPort())),
                "every retry avoided the hanging provider");
        TimerStats wheel = WheelFailback.wheelStats().orElseThrow();
        // a worker that waited on a send would lag by a timeout or a hang; a loaded machine delays a wake-up less
        assertTrue(wheel.maxTickLagNanos() < TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS / 4),
                "worst tick lag " + TimeUnit.NANOSECONDS.toMillis(wheel.maxTickLagNanos()) + " ms");
    }

    /** Both providers hang: three calls fail back, their retries a minute away. */
    private void threeRetriesPending() {
        s1.mode = ScriptedGreetingService.Mode.HANG;
        s2.mode = ScriptedGreetingService.Mode.HANG;
        GreetingService svc = connect(Map.of("failback.delay", "60000"), HUNG_CALL_TIMEOUT_MS);
        for (int i = 0; i < 3; i++) {
            assertNull(svc.notify("pending-" + i));
        }
        assertEquals(3, of(RetryEvent.Type.SCHEDULED).size());
    }

    @Test
    void shutdownHandsPendingRetriesToTheStore() {
        threeRetriesPending();

        consumer.close();
        consumer = null;
        assertEquals(3, store.size());
        assertEquals(3, of(RetryEvent.Type.HANDED_OVER).size());
        assertEquals(List.of("pending-0", "pending-1", "pending-2"),
                store.retries().stream().map(r -> (String) r.arguments()[0]).sorted().toList());
    }

    /**
     * A reference destroyed while the application runs (ReferenceConfig.destroy(), as a migration rule
     * does) hands its pending retries over at once, not when each comes due a minute later.
     */
    @Test
    void destroyedReferenceHandsItsRetriesOverPromptly() {
        threeRetriesPending();

        reference.destroy();
        await().atMost(Duration.ofSeconds(30)).until(() -> of(RetryEvent.Type.HANDED_OVER).size() == 3);
        assertEquals(3, store.size());
    }

    /** One wheel timeout per call, each cancelled by the reply: 100,000 calls leave nothing on the wheel. */
    @Test
    @org.junit.jupiter.api.Timeout(300) // 100,000 round trips: well over the class's 120 s at a load average of 50
    void timeoutCheckLeavesNothingPendingAfter100000Calls() throws Exception {
        GreetingService svc = connect(Map.of(TimeoutCheckFilter.KEY, "true"), 30_000);
        svc.sayHello("warm-up");
        // stats are published once per tick: let the warm-up's cancel land before taking the baseline
        await().atMost(Duration.ofSeconds(30)).until(() -> WheelFailback.wheelStats().orElseThrow()
                .pendingTimeouts() == 0);
        TimerStats before = WheelFailback.wheelStats().orElseThrow();
        int calls = 100_000;
        // fewer in flight than a provider's 200 handler threads: more would exhaust its pool (Dubbo answers those
        // calls with an error that fails them back) and the test would measure the provider, not the wheel
        Semaphore inFlight = new Semaphore(128);
        AtomicInteger ok = new AtomicInteger();
        for (int i = 0; i < calls; i++) {
            if (!inFlight.tryAcquire(10, TimeUnit.SECONDS)) {
                throw new AssertionError("calls stopped completing at " + i);
            }
            svc.sayHelloAsync("n").whenComplete((r, e) -> {
                if (e == null) {
                    ok.incrementAndGet();
                }
                inFlight.release();
            });
        }
        assertTrue(inFlight.tryAcquire(128, 30, TimeUnit.SECONDS));
        assertEquals(calls, ok.get());
        // a reply already there when the filter looks needs no timeout; every other call got one, now cancelled
        await().atMost(Duration.ofSeconds(30)).until(() -> WheelFailback.wheelStats().orElseThrow()
                .pendingTimeouts() == 0);
        TimerStats after = WheelFailback.wheelStats().orElseThrow();
        long scheduled = after.scheduledTimeouts() - before.scheduledTimeouts();
        long cancelled = after.cancelledTimeouts() - before.cancelledTimeouts();
        long expired = after.expiredTimeouts() - before.expiredTimeouts();
        assertTrue(scheduled > calls * 9L / 10, "only " + scheduled + " of " + calls + " calls were watched");
        assertEquals(scheduled, cancelled + expired, "every timeout ended, cancelled or run");
        // on a loaded machine a call may fail back, and its retry's timeout runs: rare, never most
        assertTrue(expired < calls / 100, expired + " timeouts ran instead of being cancelled by the reply");
    }

    @Test
    void invalidConfigFailsReferenceCreationNamingKeyAndValue() {
        Throwable e = assertThrows(Throwable.class, () -> connect(Map.of("failback.delay", "soon")));
        StringBuilder messages = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        assertTrue(messages.toString().contains("invalid failback.delay=soon"), messages.toString());
    }
}
