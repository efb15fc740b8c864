package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.willAnswer;
import static org.mockito.Mockito.mock;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.rpc.AppResponse;
import org.apache.dubbo.rpc.AsyncRpcResult;
import org.apache.dubbo.rpc.InvokeMode;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.apache.dubbo.rpc.model.ModuleModel;
import org.apache.dubbo.rpc.model.ServiceModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The filter with a provider invoker that never answers: only the wheel can end the call, so these tests show the
 * wheel did.
 */
@org.junit.jupiter.api.Timeout(30)
class TimeoutCheckFilterTest {

    private FrameworkModel framework;
    private ModuleModel module;
    private final TimeoutCheckFilter filter = new TimeoutCheckFilter();
    private Invoker<GreetingService> invoker;
    private final AtomicReference<InvokeMode> modeSeenBelow = new AtomicReference<>();
    private final CompletableFuture<AppResponse> reply = new CompletableFuture<>();

    @BeforeEach
    @SuppressWarnings("unchecked")
    void setUp() {
        framework = new FrameworkModel();
        module = framework.defaultApplication().getDefaultModule();
        invoker = mock(Invoker.class);
        given(invoker.getUrl()).willReturn(URL.valueOf("dubbo://127.0.0.1:20881/" + GreetingService.class.getName()
                + "?timeout=5000&sayHello.timeout=80&timeoutcheck=true").setScopeModel(module));
        given(invoker.getInterface()).willReturn(GreetingService.class);
        given(invoker.invoke(any())).willAnswer(i -> {
            RpcInvocation inv = i.getArgument(0);
            modeSeenBelow.set(inv.getInvokeMode());
            return new AsyncRpcResult(reply, inv);
        });
    }

    @AfterEach
    void tearDown() {
        filter.destroy();
        framework.destroy();
    }

    private RpcInvocation call(String method, InvokeMode mode) {
        ServiceModel serviceModel = mock(ServiceModel.class);
        given(serviceModel.getModuleModel()).willReturn(module);
        RpcInvocation inv = new RpcInvocation(serviceModel, method, GreetingService.class.getName(), "",
                new Class<?>[] {String.class}, new Object[] {"x"});
        inv.setInvokeMode(mode);
        return inv;
    }

    @Test
    void asyncCallerIsTimedOutByTheWheelWithTheMethodTimeout() {
        long t0 = System.nanoTime();
        AsyncRpcResult r = (AsyncRpcResult) filter.invoke(invoker, call("sayHello", InvokeMode.FUTURE));
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> r.getResponseFuture().get(5, TimeUnit.SECONDS));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        RpcException timeout = (RpcException) e.getCause();
        assertTrue(timeout.isTimeout());
        assertTrue(timeout.getMessage().startsWith("timeoutcheck: "), timeout.getMessage());
        assertTrue(timeout.getMessage().endsWith("timed out after 80 ms"), timeout.getMessage());
        assertTrue(tookMs >= 80 && tookMs < 2_000, "took " + tookMs + " ms");
    }

    @Test
    void syncCallerWaitsOnTheWheelNotOnDubbo() {
        RpcInvocation inv = call("sayHello", InvokeMode.SYNC);
        RpcException e = assertThrows(RpcException.class, () -> filter.invoke(invoker, inv));
        assertTrue(e.isTimeout());
        assertEquals(InvokeMode.ASYNC, modeSeenBelow.get(), "sent asynchronously below the filter");
        assertEquals(InvokeMode.SYNC, inv.getInvokeMode(), "and the caller's mode restored");
    }

    @Test
    void syncReplyInTimeIsReturned() {
        willAnswer(i -> {
            CompletableFuture.delayedExecutor(20, TimeUnit.MILLISECONDS).execute(
                    () -> reply.complete(new AppResponse("hi")));
            return new AsyncRpcResult(reply, i.getArgument(0));
        }).given(invoker).invoke(any());
        Result r = filter.invoke(invoker, call("notify", InvokeMode.SYNC));
        assertEquals("hi", r.getValue());
    }

    @Test
    void businessExceptionInTheReplyReachesTheSyncCaller() {
        reply.complete(new AppResponse(new IllegalStateException("out of stock")));
        Result r = filter.invoke(invoker, call("notify", InvokeMode.SYNC));
        assertTrue(r.hasException());
        assertEquals("out of stock", r.getException().getMessage());
    }
}
