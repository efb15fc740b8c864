package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rpctimer.retry.CallOutcome;
import io.rpctimer.retry.RetryOutcome;
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

/** The caller's handle to its own call's outcome, over real Dubbo RPC on 127.0.0.1. */
@org.junit.jupiter.api.Timeout(120)
class FailbackCallIT {

    private final ScriptedGreetingService s1 = new ScriptedGreetingService("p1");
    private final ScriptedGreetingService s2 = new ScriptedGreetingService("p2");
    private DubboNode p1;
    private DubboNode p2;
    private DubboNode consumer;

    @BeforeEach
    void start() {
        p1 = DubboNode.provider("p1", s1);
        p2 = DubboNode.provider("p2", s2);
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

    private GreetingService connect(Map<String, String> extra) {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setCluster(WheelFailbackCluster.NAME);
        ref.setTimeout(200);
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
        GreetingService svc = connect(Map.of());
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
        s1.mode = ScriptedGreetingService.Mode.HANG;
        s2.mode = ScriptedGreetingService.Mode.HANG;
        return connect(Map.of());
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
        s1.mode = ScriptedGreetingService.Mode.HANG;
        s2.mode = ScriptedGreetingService.Mode.HANG;
        GreetingService svc = connect(Map.of("failbacktasks", "1", "failback.delay", "60000",
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
        GreetingService svc = connect(Map.of());
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
