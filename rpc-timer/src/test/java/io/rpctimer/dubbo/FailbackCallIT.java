package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rpctimer.retry.CallOutcome;
import io.rpctimer.retry.RetryOutcome;
import io.rpctimer.testkit.DubboNode;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.rpc.RpcException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The caller's handle to its own call's outcome, over real Dubbo RPC on 127.0.0.1.
 *
 * <p>Timeouts are generous, so that a loaded machine does not turn an answer into a failure: a call that must be
 * answered gets {@value #ANSWER_TIMEOUT_MS} ms (the first call of a JVM pays class loading and connection setup);
 * a hung provider holds a call far longer than {@value #HANG_TIMEOUT_MS} ms, the timeout of the hang tests, whose
 * consumers make one answered call before the providers hang.
 */
@org.junit.jupiter.api.Timeout(120)
class FailbackCallIT {

    private static final int ANSWER_TIMEOUT_MS = 10_000;
    private static final int HANG_TIMEOUT_MS = 3_000;

    private final ScriptedGreetingService s1 = new ScriptedGreetingService("p1");
    private final ScriptedGreetingService s2 = new ScriptedGreetingService("p2");
    private DubboNode p1;
    private DubboNode p2;
    private DubboNode consumer;

    @BeforeEach
    void start() {
        s1.hangMillis = 60_000;
        s2.hangMillis = 60_000;
        p1 = DubboNode.provider("p1", GreetingService.class, s1);
        p2 = DubboNode.provider("p2", GreetingService.class, s2);
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
    }

    private GreetingService connect(Map<String, String> extra, int timeoutMs) {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setInterface(GreetingService.class);
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(timeoutMs);
        Map<String, String> params = new HashMap<>(Map.of("failback.delay", "300", "failback.jitter", "0"));
        params.putAll(extra);
        ref.setParameters(params);
        consumer = DubboNode.consumer("outcome-app", ref, p1, p2);
        return ref.get();
    }

    private static CallOutcome outcome(FailbackCall<?> call) throws Exception {
        return call.outcome().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void firstTrySuccessIsDeliveredAtAttemptZero() throws Exception {
        GreetingService svc = connect(Map.of(), ANSWER_TIMEOUT_MS);
        FailbackCall<String> call = FailbackCall.of(() -> svc.sayHello("world"));
        assertEquals("hello world", call.result().substring(4));
        CallOutcome o = outcome(call);
        assertEquals(RetryOutcome.DELIVERED, o.outcome());
        assertEquals(0, o.attempt());
    }

    @Test
    void syncCallThatFailsBackIsDeliveredByItsRetry() throws Exception {
        GreetingService svc = hangingProviders();
        FailbackCall<String> call = FailbackCall.of(() -> svc.notify("order-1"));
        assertNull(call.result(), "failback: the empty result");
        assertDeliveredByRetryOne(call);
    }

    @Test
    void asyncCallThatFailsBackIsDeliveredByItsRetry() throws Exception {
        GreetingService svc = hangingProviders();
        FailbackCall<CompletableFuture<String>> call = FailbackCall.of(() -> svc.sayHelloAsync("world"));
        assertNull(call.result().get(10, TimeUnit.SECONDS), "failback: the future of the empty result");
        assertDeliveredByRetryOne(call);
    }

    private GreetingService hangingProviders() {
        return hangingProviders(Map.of());
    }

    /**
     * @return a consumer whose first call was answered (so that the calls of the test are not the JVM's first),
     *     on providers that hang from now on
     */
    private GreetingService hangingProviders(Map<String, String> extra) {
        GreetingService svc = connect(extra, HANG_TIMEOUT_MS);
        assertEquals("hello warm-up", svc.sayHello("warm-up").substring(4));
        s1.mode = ScriptedGreetingService.Mode.HANG;
        s2.mode = ScriptedGreetingService.Mode.HANG;
        return svc;
    }

    /** Lets the providers answer, and expects the call's first retry to deliver it. */
    private void assertDeliveredByRetryOne(FailbackCall<?> call) throws Exception {
        s1.releaseHung();
        s2.releaseHung();
        CallOutcome o = outcome(call);
        assertEquals(RetryOutcome.DELIVERED, o.outcome());
        assertEquals(1, o.attempt());
    }

    @Test
    void callOverTheCapIsRejectedAndTheCallerGetsTheException() throws Exception {
        GreetingService svc = hangingProviders(Map.of("failbacktasks", "1", "failback.delay", "60000",
                "failback.maxdelay", "60000"));
        FailbackCall<String> first = FailbackCall.of(() -> svc.notify("a"));
        FailbackCall<String> second = FailbackCall.of(() -> svc.notify("b"));
        assertNull(first.result());
        assertThrows(RpcException.class, second::result);
        assertEquals(RetryOutcome.REJECTED, outcome(second).outcome());
        consumer.close(); // a graceful stop: the pending one is handed over
        consumer = null;
        assertEquals(RetryOutcome.HANDED_OVER, outcome(first).outcome());
    }

    @Test
    void businessExceptionCompletesTheHandleExceptionally() {
        s1.mode = ScriptedGreetingService.Mode.FAIL;
        s2.mode = ScriptedGreetingService.Mode.FAIL;
        GreetingService svc = connect(Map.of(), ANSWER_TIMEOUT_MS);
        FailbackCall<String> call = FailbackCall.of(() -> svc.notify("x"));
        IllegalStateException thrown = assertThrows(IllegalStateException.class, call::result);
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> call.outcome().toCompletableFuture().get(10, TimeUnit.SECONDS));
        assertEquals(thrown.getMessage(), e.getCause().getMessage());
    }

    @Test
    void callNotMadeThroughWheelfailbackCompletesExceptionally() {
        FailbackCall<String> call = FailbackCall.of(() -> "local");
        assertEquals("local", call.result());
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> call.outcome().toCompletableFuture().get(1, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause());
    }
}
