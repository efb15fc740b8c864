package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * completes it (defect 4 of issue 11), and a sync caller sees exactly what it sees without the filter (defect 5).
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
     * Defect 4: the wheel completed a timed-out async call on its own executor, so the caller's callbacks ran on
     * the pool every other timeout and retry needs. Dubbo completes a reply, and its own timeout, on the call's
     * callback executor (the consumer executor): so does the filter now, whichever timer fires first.
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
     * Defect 5: the filter switched B's sync call to C to async, and Dubbo's AsyncRpcResult then cleared B's
     * RpcContext, so the response attachment B had set before calling C never reached A.
     */
    @ParameterizedTest(name = "timeoutcheck={0}")
    @ValueSource(booleans = {false, true})
    void responseAttachmentsReachASyncCallerAsWithoutTheFilter(boolean timeoutcheck) {
        // Dubbo 3.1 keeps one context for both sides' response attachments: a nested call overwrites what B set
        // before it, with or without the filter. Dubbo 3.2 split it in two
        Assumptions.assumeTrue(DubboNode.hasMethod(RpcContext.class, "getServerResponseContext"),
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
