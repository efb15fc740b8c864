package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.rpctimer.wheel.SharedWheelTimer;
import io.rpctimer.wheel.TimerStats;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.dubbo.common.threadpool.ThreadlessExecutor;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.rpc.RpcContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A sync caller sees with {@code timeoutcheck=true} exactly what it sees without the filter (defect 5 of issue 11):
 * real Dubbo RPC on 127.0.0.1, A calls B, and B's provider method calls C.
 */
@org.junit.jupiter.api.Timeout(120)
class TimeoutCheckSyncIT {

    private final Deque<DubboNode> nodes = new ArrayDeque<>();

    @AfterEach
    void stop() {
        while (!nodes.isEmpty()) {
            nodes.pop().close();
        }
    }

    /**
     * Defect 5: the filter switched B's sync call to C to async, and Dubbo's AsyncRpcResult then cleared B's
     * RpcContext, so the response attachment B had set before calling C never reached A.
     */
    @ParameterizedTest(name = "timeoutcheck={0}")
    @ValueSource(booleans = {false, true})
    void responseAttachmentsReachASyncCallerAsWithoutTheFilter(boolean timeoutcheck) {
        DubboNode c = provider("c", new Greeter() {
            @Override
            public String sayHello(String who) {
                RpcContext.getServerResponseContext().setAttachment("from.c", "c-was-here");
                return "c: " + who;
            }
        });
        GreetingService toC = reference("b-client", Map.of(TimeoutCheckFilter.KEY, String.valueOf(timeoutcheck)), c);
        DubboNode b = provider("b", new Greeter() {
            @Override
            public String sayHello(String who) {
                RpcContext.getServerResponseContext().setAttachment("from.b", "set-before-calling-c");
                return "b+" + toC.sayHello(who);
            }
        });
        GreetingService toB = reference("a", Map.of(), b);

        assertEquals("b+c: x", toB.sayHello("x"));
        assertEquals("set-before-calling-c", RpcContext.getClientResponseContext().getAttachment("from.b"));
        assertEquals("c-was-here", RpcContext.getClientResponseContext().getAttachment("from.c"),
                "C's response attachment relayed by B");
    }

    /**
     * Defect 5: the filter's switch to async skipped Dubbo's ThreadlessExecutor, so a sync call's reply was handled
     * on the consumer's shared pool, and it put a second timeout on the wheel next to Dubbo's own.
     */
    @Test
    void syncReplyIsHandledOnTheCallerThreadAndPutsNothingOnTheWheel() {
        DubboNode c = provider("c", new Greeter());
        GreetingService toC = reference("client",
                Map.of(TimeoutCheckFilter.KEY, "true", ReplyThreadProbe.KEY, "true"), c);
        long scheduledBefore = SharedWheelTimer.stats().map(TimerStats::scheduledTimeouts).orElse(0L);

        assertEquals("hello x", toC.sayHello("x"));
        assertInstanceOf(ThreadlessExecutor.class, ReplyThreadProbe.CALLBACK_EXECUTOR.get());
        assertSame(Thread.currentThread(), ReplyThreadProbe.REPLY_THREAD.get(), "reply handled on "
                + ReplyThreadProbe.REPLY_THREAD.get().getName());
        assertEquals(scheduledBefore, SharedWheelTimer.stats().map(TimerStats::scheduledTimeouts).orElse(0L),
                "timeouts scheduled on the shared wheel for a sync call");
    }

    private DubboNode provider(String name, GreetingService impl) {
        DubboNode n = DubboNode.provider(name, impl);
        nodes.push(n);
        return n;
    }

    private GreetingService reference(String name, Map<String, String> params, DubboNode provider) {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setTimeout(10_000);
        ref.setParameters(new HashMap<>(params));
        nodes.push(DubboNode.consumer(name, ref, provider));
        return ref.get();
    }

    /** A provider that answers every method at once. */
    private static class Greeter implements GreetingService {
        @Override
        public String sayHello(String who) {
            return "hello " + who;
        }

        @Override
        public CompletableFuture<String> sayHelloAsync(String who) {
            return CompletableFuture.completedFuture(sayHello(who));
        }

        @Override
        public String notify(String event) {
            return "notified " + event;
        }
    }
}
