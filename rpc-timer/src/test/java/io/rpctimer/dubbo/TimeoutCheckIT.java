package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.testkit.DubboLine;
import io.rpctimer.testkit.DubboNode;
import io.rpctimer.wheel.SharedWheelTimer;
import io.rpctimer.wheel.TimerStats;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.dubbo.common.threadpool.ThreadlessExecutor;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.rpc.RpcContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The {@code timeoutcheck} filter over real Dubbo RPC on 127.0.0.1: a timed-out async call completes where Dubbo
 * completes it, and a sync caller sees exactly what it sees without the filter.
 */
@org.junit.jupiter.api.Timeout(120)
class TimeoutCheckIT {

    private final Deque<DubboNode> nodes = new ArrayDeque<>();

    @AfterEach
    void stop() {
        while (!nodes.isEmpty()) {
            nodes.pop().close();
        }
    }

    /**
     * Dubbo completes a reply, and its own timeout, on the call's callback executor (the consumer executor); so
     * does the filter, whichever timer fires first, and the caller's callbacks never run on the pool every other
     * timeout and retry needs.
     */
    @Test
    void timedOutAsyncCallCompletesOnDubbosConsumerExecutor() throws Exception {
        DubboNode c = provider("c", new Greeter() {
            @Override
            public CompletableFuture<String> sayHelloAsync(String who) {
                return new CompletableFuture<>(); // never answers
            }
        });
        GreetingService toC = reference("client",
                Map.of(TimeoutCheckFilter.KEY, "true", "sayHelloAsync.timeout", "300"), c);
        assertEquals("hello warm-up", toC.sayHello("warm-up")); // connected, so the calls below time out in flight

        // the wheel and Dubbo's own timer race to time each call out: with five calls the wheel wins some
        List<CompletableFuture<String>> completedOn = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            completedOn.add(toC.sayHelloAsync("x").handle((r, e) -> (e == null ? "a reply" : "a failure") + " on "
                    + Thread.currentThread().getName()));
        }
        for (CompletableFuture<String> f : completedOn) {
            String seen = f.get(10, TimeUnit.SECONDS);
            assertTrue(seen.startsWith("a failure on ") && !seen.contains("rpc-timer-"), seen);
        }
    }

    /**
     * B's sync call to C stays sync under the filter: switched to async, Dubbo's AsyncRpcResult would clear B's
     * RpcContext, and the response attachment B set before calling C would never reach A.
     */
    @ParameterizedTest(name = "timeoutcheck={0}")
    @ValueSource(booleans = {false, true})
    void responseAttachmentsReachASyncCallerAsWithoutTheFilter(boolean timeoutcheck) {
        // Dubbo 3.1 keeps one context for both sides' response attachments: a nested call overwrites what B set
        // before it, with or without the filter. Dubbo 3.2 split it in two
        Assumptions.assumeTrue(DubboLine.hasMethod(RpcContext.class, "getServerResponseContext"),
                "Dubbo 3.2 and later keep a provider's response attachments apart from its calls' replies");
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
     * A sync call's reply is handled by Dubbo's ThreadlessExecutor on the caller's thread, not on the consumer's
     * shared pool, and the filter puts no second timeout on the wheel next to Dubbo's own.
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
        DubboNode n = DubboNode.provider(name, GreetingService.class, impl);
        nodes.push(n);
        return n;
    }

    private GreetingService reference(String name, Map<String, String> params, DubboNode provider) {
        ReferenceConfig<GreetingService> ref = new ReferenceConfig<>();
        ref.setInterface(GreetingService.class);
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
