package io.rpctimer.faults;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.retry.RetryEvent;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.dubbo.rpc.RpcContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The smallest reproduction of what scenario 7b (every provider down, async callers) runs into: when no provider is
 * available, {@code wheelfailback} fails the call back from its {@code invoke()} (the caller gets the empty result
 * at once: null, or a future completed with null; see docs/semantics.md), but a caller of a {@code CompletableFuture}
 * method gets {@code null} instead of a future, so {@code sendAsync(...).thenApply(...)} throws a
 * NullPointerException in the caller. The retry itself is scheduled and delivered: only the caller's future is missing.
 *
 * <p>Cause (Dubbo 3.3.6): the invocation's invoke mode is still unset at cluster level
 * ({@code AbstractInvoker.prepareInvocation} sets it, below the cluster), so {@code AsyncRpcResult.recreate()} returns
 * the plain value (null) instead of the caller's future. Dubbo's own {@code MockClusterInvoker}, which also answers
 * without a provider, sets {@code RpcUtils.getInvokeMode(getUrl(), invocation)} on the invocation first.
 */
class AsyncNoProviderFaultIT {

    @Test
    @Timeout(60)
    void asyncCallerGetsAFutureWhenNoProviderIsAvailable() throws Exception {
        try (FaultRig rig = FaultRig.start(ZooKeeperRig.single(), 0, o -> o.parameter("failback.delay", "200")
                .parameter("retries", "10").parameter("failback.maxdelay", "500"))) {
            RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, "sync-1");
            assertNull(rig.consumer().service().send("sync-1", "m"), "sync caller: the empty failback result");

            RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, "async-1");
            CompletableFuture<String> reply = rig.consumer().service().sendAsync("async-1", "m");

            try (DemoProvider p1 = DemoProvider.start("p1", rig.zk().registryAddress(), 0)) {
                await().atMost(Duration.ofSeconds(20)).until(() -> rig.events().of(RetryEvent.Type.DELIVERED)
                        .size() == 2);
                assertEquals(2, rig.events().outcomes().size(), "both calls failed back and were delivered on retry");
                assertEquals(2, p1.ledger().snapshot().completed(), "p1 completed both retries");
                assertNotNull(reply, "the async caller got no future: wheelfailback's no-provider fail-back returned"
                        + " null for a CompletableFuture method (its retry was delivered: "
                        + rig.events().of(RetryEvent.Type.DELIVERED) + ")");
                assertNull(reply.get(5, TimeUnit.SECONDS), "the future completes with the empty result");
            }
        }
    }
}
