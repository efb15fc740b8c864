package io.rpctimer.demo.provider;

import io.rpctimer.demo.provider.ProbeCluster.Kind;
import io.rpctimer.demo.provider.ProbeCluster.Seen;
import io.rpctimer.demo.provider.api.NotificationRejectedException;
import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.demo.provider.api.ProviderControl;
import io.rpctimer.demo.provider.ledger.LedgerSnapshot;
import io.rpctimer.testkit.DubboNode;
import io.rpctimer.testkit.EmbeddedZooKeeper;
import io.rpctimer.testkit.Ports;

import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.remoting.RemotingException;
import org.apache.dubbo.remoting.TimeoutException;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.RpcException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Embedded ZooKeeper + one {@link DemoProvider} + a plain Dubbo consumer (failover, retries=1, timeout 500 ms) on
 * 127.0.0.1: how each injected fault reaches the consumer's cluster layer (through {@link ProbeCluster}) and the caller,
 * and what the provider's ledger records. Each finding is also printed with a {@code FINDING} prefix to the surefire
 * output file.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DemoProviderIntegrationTest {
    private static final int TIMEOUT_MILLIS = 500;

    private EmbeddedZooKeeper zk;
    private DemoProvider provider;
    private DubboNode thrower; // exports a NotificationService whose implementation throws RpcException
    private final ThrowingService throwingService = new ThrowingService();
    private DubboNode consumer;
    private NotificationService svc;
    private NotificationService throwingSvc;
    private ProviderControl control;
    private final List<String> endedCallIds = new CopyOnWriteArrayList<>(); // callId of every call p1 ended

    @BeforeAll
    void startAll() {
        zk = EmbeddedZooKeeper.start();
        provider = DemoProvider.start("p1", zk.registryAddress(), 0);
        provider.ledger().addListener((call, outcome, elapsed, detail) -> {
            System.out.println("CALL " + call + " " + outcome + " " + elapsed.toMillis() + " ms");
            endedCallIds.add(call.callId());
        });

        ServiceConfig<NotificationService> throwing = new ServiceConfig<>();
        throwing.setInterface(NotificationService.class);
        throwing.setRef(throwingService);
        throwing.setGroup("thrower");
        thrower = DubboNode.create("thrower", zk.registryAddress()).protocolPort(Ports.free()).service(throwing).start();

        ReferenceConfig<NotificationService> svcRef = notificationReference(null);
        ReferenceConfig<NotificationService> throwingRef = notificationReference("thrower");
        ReferenceConfig<ProviderControl> controlRef = new ReferenceConfig<>();
        controlRef.setInterface(ProviderControl.class);
        controlRef.setGroup("p1");
        controlRef.setTimeout(5_000);
        controlRef.setRetries(0);
        consumer = DubboNode.create("consumer", zk.registryAddress())
                .reference(svcRef).reference(throwingRef).reference(controlRef).start();
        svc = svcRef.get();
        throwingSvc = throwingRef.get();
        control = controlRef.get();
    }

    private static ReferenceConfig<NotificationService> notificationReference(String group) {
        ReferenceConfig<NotificationService> ref = new ReferenceConfig<>();
        ref.setInterface(NotificationService.class);
        ref.setGroup(group);
        ref.setCluster("probefailover"); // Dubbo's failover, recording what each attempt gave the cluster
        ref.setRetries(1); // one retry: an RPC-level failure is tried twice, a business failure once
        ref.setTimeout(TIMEOUT_MILLIS);
        ref.setCheck(false);
        return ref;
    }

    @AfterAll
    void stopAll() {
        int[] ports = {provider == null ? -1 : provider.port(), thrower == null ? -1 : thrower.protocolPort(),
            zk == null ? -1 : zk.port()};
        if (consumer != null) {
            consumer.close();
        }
        if (thrower != null) {
            thrower.close();
        }
        if (provider != null) {
            provider.stop();
        }
        if (zk != null) {
            zk.close();
        }
        for (int port : ports) {
            if (port > 0) {
                await("port " + port + " closed").atMost(Duration.ofSeconds(5))
                        .until(() -> !Ports.isListening(port));
            }
        }
    }

    @BeforeEach
    void resetProvider() {
        provider.faults().clear();
        provider.up();
        // a test may have taken it down and up again: wait until the consumer's directory has it
        await("consumer sees the provider").atMost(Duration.ofSeconds(10)).ignoreExceptions()
                .until(() -> provider.identity().equals(svc.send("reset", "m")));
        provider.ledger().reset();
        ProbeCluster.clear();
        endedCallIds.clear();
    }

    private long ended(String callId) {
        return endedCallIds.stream().filter(callId::equals).count();
    }

    @Test
    void noFault_answersWithProviderIdentity() throws Exception {
        assertEquals(provider.identity(), svc.send("ok-1", "hello"));
        assertEquals(provider.identity(), svc.sendAsync("ok-2", "hello").get(5, TimeUnit.SECONDS));
        assertEquals("p1@127.0.0.1:" + provider.port(), provider.identity());
        LedgerSnapshot s = provider.ledger().snapshot();
        assertEquals(2, s.served());
        assertEquals(2, s.completed());
    }

    @Test
    void fail_businessExceptionArrivesInsideResult_andIsNotRetried() throws Exception {
        provider.faults().failRate(1.0);

        NotificationRejectedException sync =
                assertThrows(NotificationRejectedException.class, () -> svc.send("fail-sync", "m"));
        assertEquals(provider.identity() + " rejected fail-sync (fail 100%)", sync.getMessage());
        List<Seen> seen = ProbeCluster.seen("fail-sync");
        finding("fail, sync", seen, sync);
        assertEquals(1, seen.size(), "not retried: " + seen);
        assertEquals(Kind.RESULT_EXCEPTION, seen.get(0).kind());
        assertInstanceOf(NotificationRejectedException.class, seen.get(0).error());

        ExecutionException async = assertThrows(ExecutionException.class,
                () -> svc.sendAsync("fail-async", "m").get(5, TimeUnit.SECONDS));
        assertInstanceOf(NotificationRejectedException.class, async.getCause());
        await().until(() -> ProbeCluster.seen("fail-async").size() == 1);
        Seen asyncSeen = ProbeCluster.seen("fail-async").get(0);
        finding("fail, async", List.of(asyncSeen), async.getCause());
        assertEquals(Kind.FUTURE_RESULT_EXCEPTION, asyncSeen.kind());

        assertEquals(1, ended("fail-sync"), "failover does not retry a business exception: " + endedCallIds);
        assertEquals(1, ended("fail-async"));
        LedgerSnapshot s = provider.ledger().snapshot();
        assertEquals(2, s.rejected());
        assertEquals(2, s.failedByInjection());
    }

    @Test
    void error_rpcLevelFailureIsThrownAsNetworkException_andIsRetried() {
        provider.faults().errorRate(1.0);

        RpcException sync = assertThrows(RpcException.class, () -> svc.send("error-sync", "m"));
        List<Seen> seen = ProbeCluster.seen("error-sync");
        finding("error, sync", seen, sync);
        assertEquals(RpcException.NETWORK_EXCEPTION, sync.getCode());
        assertTrue(sync.isNetwork());
        assertEquals(2, seen.size(), "failover retried it: " + seen);
        for (Seen attempt : seen) {
            assertEquals(Kind.THROWN, attempt.kind());
            assertEquals(RpcException.NETWORK_EXCEPTION, attempt.code());
            Throwable root = rootCause(attempt.error());
            assertInstanceOf(RemotingException.class, root);
            assertTrue(root.getMessage().contains(provider.identity() + ": injected RPC error (error 100%)"),
                    root.getMessage());
        }
        assertEquals(2, provider.ledger().snapshot().rpcErrors());
    }

    @Test
    void error_async_futureFailsWithRemotingException_andIsNotRetriedByFailover() {
        provider.faults().errorRate(1.0);

        CompletableFuture<String> f = svc.sendAsync("error-async", "m");
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        await().until(() -> ProbeCluster.seen("error-async").size() == 1);
        Seen seen = ProbeCluster.seen("error-async").get(0);
        finding("error, async", List.of(seen), e.getCause());
        assertEquals(Kind.FUTURE_FAILED, seen.kind());
        assertInstanceOf(CompletionException.class, seen.error());
        assertInstanceOf(RemotingException.class, seen.unwrapped());
        assertInstanceOf(RemotingException.class, e.getCause());
        assertEquals(1, ended("error-async"), "not retried: " + endedCallIds);
    }

    @Test
    void rpcExceptionThrownByImplementation_reachesTheClusterAsAFailedResult_andIsNotRetried() throws Exception {
        RpcException sync = assertThrows(RpcException.class, () -> throwingSvc.send("impl-sync", "m"));
        List<Seen> seen = ProbeCluster.seen("impl-sync");
        finding("RpcException(NETWORK) thrown by the service implementation, sync", seen, sync);

        ExecutionException async = assertThrows(ExecutionException.class,
                () -> throwingSvc.sendAsync("impl-async", "m").get(5, TimeUnit.SECONDS));
        await().until(() -> ProbeCluster.seen("impl-async").size() == 1);
        Seen asyncSeen = ProbeCluster.seen("impl-async").get(0);
        finding("RpcException(NETWORK) from the implementation's future, async", List.of(asyncSeen),
                async.getCause());

        // The provider sends it inside a normal response; the consumer's RpcExceptionFilter (active by default)
        // rethrows it from its onResponse, which turns the done result's future into a failed one. invoke() did not
        // throw, so failover does not retry it although isNetwork(); the caller gets it wrapped, code 0.
        assertEquals(1, seen.size(), "not retried: " + seen);
        assertEquals(Kind.RESULT_FAILED, seen.get(0).kind());
        assertInstanceOf(CompletionException.class, seen.get(0).error());
        assertEquals(RpcException.NETWORK_EXCEPTION, seen.get(0).code(), "code survives hessian2");
        assertEquals(RpcException.UNKNOWN_EXCEPTION, sync.getCode());
        assertInstanceOf(ExecutionException.class, sync.getCause());
        // a failed future either way; whether the reply was already there when the cluster looked is timing
        assertTrue(asyncSeen.kind() == Kind.FUTURE_FAILED || asyncSeen.kind() == Kind.RESULT_FAILED,
                "a failed future: " + asyncSeen);
        assertEquals(RpcException.NETWORK_EXCEPTION, asyncSeen.code());
        assertInstanceOf(RpcException.class, async.getCause());
        assertEquals(2, throwingService.calls.get(), "each call reached the implementation once");
    }

    @Test
    void hang_timesOutAtTheConsumer_andClearReleasesTheHangingCalls() {
        provider.faults().hang(Duration.ofSeconds(30));

        long t0 = System.nanoTime();
        RpcException sync = assertThrows(RpcException.class, () -> svc.send("hang-sync", "m"));
        long elapsedMillis = (System.nanoTime() - t0) / 1_000_000;
        List<Seen> seen = ProbeCluster.seen("hang-sync");
        finding("hang, sync (" + elapsedMillis + " ms)", seen, sync);
        assertTrue(sync.isTimeout(), "code " + sync.getCode());
        assertEquals(2, seen.size());
        for (Seen attempt : seen) {
            assertEquals(Kind.THROWN, attempt.kind());
            assertEquals(RpcException.TIMEOUT_EXCEPTION, attempt.code());
        }
        assertTrue(elapsedMillis >= 2L * TIMEOUT_MILLIS - 50, "two attempts of 500 ms: " + elapsedMillis + " ms");

        ExecutionException async = assertThrows(ExecutionException.class,
                () -> svc.sendAsync("hang-async", "m").get(5, TimeUnit.SECONDS));
        await().until(() -> ProbeCluster.seen("hang-async").size() == 1);
        Seen asyncSeen = ProbeCluster.seen("hang-async").get(0);
        finding("hang, async", List.of(asyncSeen), async.getCause());
        assertEquals(Kind.FUTURE_FAILED, asyncSeen.kind());
        assertInstanceOf(TimeoutException.class, asyncSeen.unwrapped());
        assertInstanceOf(TimeoutException.class, async.getCause());

        assertEquals(0, ended("hang-sync") + ended("hang-async"), "still hanging on the provider");
        assertEquals(3, provider.faults().waitingCalls());
        provider.faults().clear();
        await().atMost(Duration.ofSeconds(5)).until(() -> ended("hang-sync") == 2 && ended("hang-async") == 1);
        assertEquals(0, provider.faults().waitingCalls());
    }

    @Test
    void latency_delaysTheAnswer() {
        provider.faults().latency(Duration.ofMillis(200));
        long t0 = System.nanoTime();
        assertEquals(provider.identity(), svc.send("latency-1", "m"));
        long elapsedMillis = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(elapsedMillis >= 200, elapsedMillis + " ms");
    }

    @Test
    void down_consumerSeesNoProvider_untilItIsUpAgain() throws Exception {
        CompletableFuture<Void> back = provider.goDown(Duration.ofHours(1));
        assertTrue(provider.isDown());
        assertThrows(IllegalStateException.class, () -> provider.goDown(Duration.ofSeconds(1)));

        Set<String> seenWhileDown = ConcurrentHashMap.newKeySet();
        AtomicInteger n = new AtomicInteger();
        await("consumer sees no provider").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    try {
                        svc.send("down-" + n.incrementAndGet(), "m");
                        seenWhileDown.add("answered");
                        return false;
                    } catch (RpcException e) {
                        seenWhileDown.add("RpcException code " + e.getCode());
                        return e.isForbidden();
                    }
                });
        System.out.println("FINDING down, sync: while going down the consumer saw " + seenWhileDown);
        CompletableFuture<String> asyncWhileDown = null;
        RpcException asyncThrown = null;
        try {
            asyncWhileDown = svc.sendAsync("down-async", "m");
        } catch (RpcException e) {
            asyncThrown = e;
        }
        System.out.println("FINDING down, async: " + (asyncThrown != null
                ? "thrown by sendAsync itself: RpcException code " + asyncThrown.getCode()
                : "returned future " + asyncWhileDown));
        assertTrue(asyncThrown != null && asyncThrown.isForbidden(), "sendAsync threw code 4");
        assertTrue(ProbeCluster.seen("down-async").isEmpty(), "failed above the provider invokers");
        assertEquals("p1@127.0.0.1:" + provider.port(), control.provider(), "control stays up");

        assertTrue(provider.up());
        back.get(5, TimeUnit.SECONDS);
        assertFalse(provider.isDown());
        await("consumer sees the provider again").atMost(Duration.ofSeconds(10))
                .ignoreExceptions().until(() -> provider.identity().equals(svc.send("up-1", "m")));
    }

    @Test
    void goDown_comesBackByItself() throws Exception {
        CompletableFuture<Void> back = provider.goDown(Duration.ofMillis(300));
        back.get(5, TimeUnit.SECONDS);
        assertFalse(provider.isDown());
        await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                .until(() -> provider.identity().equals(svc.send("back-1", "m")));
    }

    @Test
    void ledger_recordsRetryAttachments_andCountsDuplicates() {
        for (String attempt : new String[] {"1", "2"}) {
            RpcContext.getClientAttachment().setAttachment("retry.id", "r-1");
            RpcContext.getClientAttachment().setAttachment("retry.attempt", attempt);
            assertEquals(provider.identity(), svc.send("c-1", "m"));
        }
        assertEquals(provider.identity(), svc.send("c-2", "m")); // an original call: no attachments

        LedgerSnapshot s = provider.ledger().snapshot();
        assertEquals(3, s.served());
        assertEquals(Set.of("r-1"), s.duplicateRetryIds());
        assertEquals(1, s.duplicates());
        assertEquals(1, s.duplicateCallIds());
        assertEquals(1L, s.attempts().get(0));
        assertEquals(1L, s.attempts().get(1));
        assertEquals(1L, s.attempts().get(2));
        assertEquals(2, provider.ledger().completions("r-1"));
    }

    @Test
    void ledger_countsTheDuplicateLeftByATimeoutAndItsRetry() {
        provider.faults().latency(Duration.ofMillis(TIMEOUT_MILLIS + 300)); // completes after the consumer gave up
        RpcContext.getClientAttachment().setAttachment("retry.id", "r-late");
        RpcException e = assertThrows(RpcException.class, () -> svc.send("c-late", "m"));
        assertTrue(e.isTimeout());
        await().atMost(Duration.ofSeconds(5)).until(() -> provider.ledger().completions("r-late") == 2);
        assertEquals(Set.of("r-late"), provider.ledger().snapshot().duplicateRetryIds());
    }

    @Test
    void control_drivesTheProviderRemotely() {
        assertEquals("faults: fail 100%", control.execute("fail 100%"));
        assertThrows(NotificationRejectedException.class, () -> svc.send("ctl-1", "m"));
        assertEquals(1L, control.stats().get("rejected"));
        assertEquals("fail 100%", control.faults());

        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> control.failRate(2.0));
        assertEquals("failRate: 2.0 (expected: 0..1)", bad.getMessage());
        IllegalArgumentException badCommand =
                assertThrows(IllegalArgumentException.class, () -> control.execute("hang 5x"));
        assertTrue(badCommand.getMessage().startsWith("hang: \"5x\" (expected:"), badCommand.getMessage());

        control.clear();
        assertEquals("none", control.faults());
        control.errorNext(1);
        assertEquals(provider.identity(), svc.send("ctl-2", "m"), "the failover retry hides one RPC error");
        assertEquals(1L, control.stats().get("errors"));
        assertEquals(1L, control.stats().get("completed"));
        control.resetStats();
        assertEquals(0L, control.stats().get("served"));

        control.downMillis(60_000);
        assertTrue(provider.isDown());
        assertThrows(IllegalStateException.class, () -> control.downMillis(1_000));
        control.up();
        assertFalse(provider.isDown());
    }

    @Test
    void goDown_rejectsDurationsOutOfRange() {
        assertEquals("downFor: 0 ms (expected: 1 ms..1 h)",
                assertThrows(IllegalArgumentException.class, () -> provider.goDown(Duration.ZERO)).getMessage());
        assertEquals("downFor: 7200000 ms (expected: 1 ms..1 h)",
                assertThrows(IllegalArgumentException.class, () -> provider.goDown(Duration.ofHours(2)))
                        .getMessage());
        assertFalse(provider.isDown());
    }

    private static Throwable rootCause(Throwable t) {
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
    }

    private static void finding(String what, List<Seen> seen, Throwable caller) {
        System.out.println("FINDING " + what + ": cluster saw " + seen + "; caller got " + caller.getClass().getName()
                + (caller instanceof RpcException e ? "(code " + e.getCode() + ")" : "") + ": "
                + caller.getMessage().lines().findFirst().orElse(""));
    }

    /** A NotificationService whose implementation throws RpcException(NETWORK_EXCEPTION). */
    static final class ThrowingService implements NotificationService {
        final AtomicInteger calls = new AtomicInteger();

        @Override
        public String send(String callId, String message) {
            calls.incrementAndGet();
            throw new RpcException(RpcException.NETWORK_EXCEPTION, "thrown by the implementation");
        }

        @Override
        public CompletableFuture<String> sendAsync(String callId, String message) {
            calls.incrementAndGet();
            return CompletableFuture.failedFuture(
                    new RpcException(RpcException.NETWORK_EXCEPTION, "failed future from the implementation"));
        }
    }
}
