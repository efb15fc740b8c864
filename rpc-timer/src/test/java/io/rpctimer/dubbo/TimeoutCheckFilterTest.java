package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;

import io.rpctimer.timeout.FutureTimeoutChecker;
import io.rpctimer.wheel.SharedWheelTimer;
import io.rpctimer.wheel.Timeout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.rpc.AppResponse;
import org.apache.dubbo.rpc.AsyncRpcResult;
import org.apache.dubbo.rpc.Invocation;
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
 * The filter with a provider invoker that never answers: only the wheel can end an async call, so these tests show
 * the wheel did. Like Dubbo's invokers, the fake gives every reply a callback executor (here a pool named
 * {@code dubbo-callback-N}).
 */
@org.junit.jupiter.api.Timeout(60)
class TimeoutCheckFilterTest {

    private static final String SERVICE_URL = "dubbo://127.0.0.1:20881/" + GreetingService.class.getName()
            + "?timeout=5000&sayHello.timeout=80&notify.timeout=80";

    private FrameworkModel framework;
    private ModuleModel module;
    private final TimeoutCheckFilter filter = new TimeoutCheckFilter();
    private final AtomicInteger callbackThreads = new AtomicInteger();
    private final ExecutorService callbackExecutor = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "dubbo-callback-" + callbackThreads.incrementAndGet());
        t.setDaemon(true);
        return t;
    });
    private Invoker<GreetingService> invoker;
    private final AtomicReference<InvokeMode> modeSeenBelow = new AtomicReference<>();
    private final List<AsyncRpcResult> returnedBelow = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() {
        framework = new FrameworkModel();
        module = framework.defaultApplication().getDefaultModule();
        invoker = invokerWith("timeoutcheck=true");
    }

    @AfterEach
    void tearDown() {
        filter.destroy();
        callbackExecutor.shutdownNow();
        framework.destroy();
    }

    @SuppressWarnings("unchecked")
    private Invoker<GreetingService> invokerWith(String params) {
        Invoker<GreetingService> inv = mock(Invoker.class);
        given(inv.getUrl()).willReturn(URL.valueOf(SERVICE_URL + "&" + params).setScopeModel(module));
        given(inv.getInterface()).willReturn(GreetingService.class);
        given(inv.invoke(any())).willAnswer(i -> {
            RpcInvocation call = i.getArgument(0);
            modeSeenBelow.set(call.getInvokeMode());
            AsyncRpcResult result = new AsyncRpcResult(new CompletableFuture<>(), call);
            result.setExecutor(callbackExecutor);
            returnedBelow.add(result);
            return result;
        });
        return inv;
    }

    private RpcInvocation call(String method, InvokeMode mode) {
        ServiceModel serviceModel = mock(ServiceModel.class);
        given(serviceModel.getModuleModel()).willReturn(module);
        RpcInvocation inv = new RpcInvocation(serviceModel, method, GreetingService.class.getName(), "",
                new Class<?>[] {String.class}, new Object[] {"x"});
        inv.setInvokeMode(mode);
        return inv;
    }

    private static boolean watched(AsyncRpcResult result) {
        return result.getResponseFuture().getNumberOfDependents() > 0;
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

    /**
     * A timed-out async call completes on the call's own callback executor, as Dubbo's DefaultFuture does, never
     * on the wheel's executor: that pool runs every other timeout and retry, and callbacks that block would hold
     * it.
     */
    @Test
    void blockingCallbacksOfTimedOutAsyncCallsDelayNoOtherWheelWork() throws Exception {
        int blockers = Runtime.getRuntime().availableProcessors() + 2; // more than the wheel executor's threads
        CountDownLatch started = new CountDownLatch(blockers);
        CountDownLatch release = new CountDownLatch(1);
        Set<String> callbackThreadNames = ConcurrentHashMap.newKeySet();
        SharedWheelTimer.Lease lease = SharedWheelTimer.acquire();
        try {
            for (int i = 0; i < blockers; i++) {
                AsyncRpcResult r = (AsyncRpcResult) filter.invoke(invoker, call("sayHello", InvokeMode.FUTURE));
                r.getResponseFuture().whenComplete((v, e) -> {
                    callbackThreadNames.add(Thread.currentThread().getName());
                    started.countDown();
                    awaitQuietly(release);
                });
            }
            // other wheel work due while the callbacks block: it must run on time
            CompletableFuture<String> other = new FutureTimeoutChecker(lease.timer())
                    .watch(new CompletableFuture<>(), 300, TimeUnit.MILLISECONDS);
            ExecutionException e = assertThrows(ExecutionException.class, () -> other.get(5, TimeUnit.SECONDS),
                    "a timeout due in 300 ms waited for blocked callbacks");
            assertTrue(e.getCause() instanceof TimeoutException, e.toString());
            assertTrue(started.await(10, TimeUnit.SECONDS), "callbacks started: " + callbackThreadNames);
            assertTrue(callbackThreadNames.stream().allMatch(n -> n.startsWith("dubbo-callback-")),
                    "completed on " + callbackThreadNames);
        } finally {
            release.countDown();
            lease.release();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Dubbo's own wait bounds a sync call, so the filter leaves it alone: switching it to async below the filter
     * would change what the caller sees (its RpcContext, Dubbo's ThreadlessExecutor, a second timer).
     */
    @Test
    void syncCallPassesThroughUntouched() {
        int holders = SharedWheelTimer.holders();
        RpcInvocation inv = call("sayHello", InvokeMode.SYNC);
        Result r = filter.invoke(invoker, inv);
        assertSame(returnedBelow.get(0), r);
        assertEquals(InvokeMode.SYNC, modeSeenBelow.get(), "the mode below the filter");
        assertFalse(watched(returnedBelow.get(0)), "a sync call got a wheel timeout");
        assertEquals(holders, SharedWheelTimer.holders(), "a sync call borrowed the wheel");
    }

    /**
     * Below the cluster Dubbo has not set a first attempt's invoke mode yet: the filter tells a sync call as Dubbo
     * will, from the call's return type, its {@code async} attachment and the URL's {@code async}, and leaves only
     * sync calls alone.
     */
    @Test
    void callWithoutAnInvokeModeIsReadAsDubboWillSetIt() {
        filter.invoke(invoker, call("sayHello", null));
        RpcInvocation attached = call("sayHello", null);
        attached.setAttachment("async", "true");
        filter.invoke(invoker, attached);
        RpcInvocation future = call("sayHello", null);
        future.setReturnType(CompletableFuture.class);
        filter.invoke(invoker, future);
        filter.invoke(invokerWith("timeoutcheck=true&sayHello.async=true"), call("sayHello", null));
        filter.invoke(invokerWith("timeoutcheck=true&async=true"), call("notify", null));

        assertFalse(watched(returnedBelow.get(0)), "a sync call got a wheel timeout");
        assertTrue(watched(returnedBelow.get(1)), "async by attachment");
        assertTrue(watched(returnedBelow.get(2)), "a CompletableFuture method");
        assertTrue(watched(returnedBelow.get(3)), "async by the method's URL parameter");
        assertTrue(watched(returnedBelow.get(4)), "async by the reference's URL parameter");
    }

    /** Sync calls, the most common kind, read the URL once per URL and method too. */
    @Test
    void syncCallsReadTheUrlOncePerMethod() {
        CountingUrl url = new CountingUrl(20000);
        Invoker<GreetingService> to = answeringAt(url);
        for (int i = 0; i < 3; i++) {
            filter.invoke(to, call("sayHello", null));
            filter.invoke(to, call("notify", InvokeMode.SYNC));
        }
        assertEquals(Map.of("sayHello.timeoutcheck", 1, "sayHello.async", 1, "notify.timeoutcheck", 1,
                "notify.async", 1), url.reads());
    }

    /** The URL's timeout is looked up once per URL and method; a call's own timeout attachment still wins, per call. */
    @Test
    void callsOwnTimeoutWinsOverTheUrlsForThatCallOnly() {
        RpcInvocation own = call("sayHello", InvokeMode.FUTURE);
        own.setAttachment("timeout", "30");
        AsyncRpcResult first = (AsyncRpcResult) filter.invoke(invoker, own);
        AsyncRpcResult second = (AsyncRpcResult) filter.invoke(invoker, call("sayHello", InvokeMode.FUTURE));
        assertTrue(timeoutOf(first).getMessage().endsWith("timed out after 30 ms"), timeoutOf(first).getMessage());
        assertTrue(timeoutOf(second).getMessage().endsWith("timed out after 80 ms"), timeoutOf(second).getMessage());
    }

    private static RpcException timeoutOf(AsyncRpcResult result) {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> result.getResponseFuture().get(5, TimeUnit.SECONDS));
        return (RpcException) e.getCause();
    }

    /**
     * Every provider URL and method is read from the URL once, whatever their identity hashes. The filter's cache
     * held one key per slot, chosen by identity hash: two URLs that shared a slot (1 pair in 64) pushed each other out
     * on every call, and every call read the URL again.
     */
    @Test
    void twoProvidersAreEachReadFromTheUrlOnce() {
        RpcInvocation inv = call("sayHello", InvokeMode.FUTURE);
        for (int pair = 0; pair < 500; pair++) {
            TimeoutCheckFilter fresh = new TimeoutCheckFilter();
            CountingUrl a = new CountingUrl(20000 + 2 * pair);
            CountingUrl b = new CountingUrl(20001 + 2 * pair);
            Invoker<GreetingService> toA = answeringAt(a);
            Invoker<GreetingService> toB = answeringAt(b);
            for (int i = 0; i < 3; i++) {
                fresh.invoke(toA, inv);
                fresh.invoke(toB, inv);
            }
            fresh.destroy();
            assertEquals(Map.of("sayHello.timeoutcheck", 1, "sayHello.async", 1), a.reads(),
                    "reads of " + a.getAddress() + " (pair " + pair + ")");
            assertEquals(Map.of("sayHello.timeoutcheck", 1, "sayHello.async", 1), b.reads(),
                    "reads of " + b.getAddress() + " (pair " + pair + ")");
        }
    }

    /**
     * Callers racing on the cache, over three times more URLs than it holds (so keys keep replacing each other in
     * slots other threads are reading), each get their own URL's setting: every call to a URL that has the filter on
     * is watched, and no call to one that has it off.
     */
    @Test
    void racingCallersEachGetTheirOwnUrlsSetting() throws Exception {
        int urls = 384;
        List<Invoker<GreetingService>> invokers = new ArrayList<>();
        for (int i = 0; i < urls; i++) {
            invokers.add(pendingAt(URL.valueOf("dubbo://127.0.0.1:" + (30000 + i) + "/" + GreetingService.class.getName()
                    + "?timeout=5000&timeoutcheck=" + (i % 2 == 0))));
        }
        int threads = 4;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService callers = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> mistakes = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                RpcInvocation inv = call("sayHello", InvokeMode.FUTURE);
                long seed = t;
                mistakes.add(callers.submit(() -> {
                    Random random = new Random(seed);
                    int wrong = 0;
                    start.await();
                    for (int i = 0; i < 20_000; i++) {
                        int k = random.nextInt(urls);
                        AsyncRpcResult r = (AsyncRpcResult) filter.invoke(invokers.get(k), inv);
                        if (watched(r) != (k % 2 == 0)) {
                            wrong++;
                        }
                        r.getResponseFuture().complete(new AppResponse("hi")); // cancels the wheel timeout
                    }
                    return wrong;
                }));
            }
            start.countDown();
            for (Future<Integer> m : mistakes) {
                assertEquals(0, m.get(30, TimeUnit.SECONDS), "calls that got another URL's setting");
            }
        } finally {
            callers.shutdownNow();
        }
    }

    /** @return an invoker to {@code url} whose replies never come, on the test's callback executor */
    private Invoker<GreetingService> pendingAt(URL url) {
        return new Invoker<>() {
            @Override
            public Class<GreetingService> getInterface() {
                return GreetingService.class;
            }

            @Override
            public Result invoke(Invocation invocation) {
                AsyncRpcResult result = new AsyncRpcResult(new CompletableFuture<>(), invocation);
                result.setExecutor(callbackExecutor);
                return result;
            }

            @Override
            public URL getUrl() {
                return url;
            }

            @Override
            public boolean isAvailable() {
                return true;
            }

            @Override
            public void destroy() {
            }
        };
    }

    /** A provider URL that counts the filter's reads of its boolean method parameters, by method and key. */
    private static final class CountingUrl extends URL {
        private final Map<String, Integer> reads = new ConcurrentHashMap<>();

        CountingUrl(int port) {
            super("dubbo", "127.0.0.1", port, GreetingService.class.getName(), Map.of("timeoutcheck", "true"));
        }

        @Override
        public boolean getMethodParameter(String method, String key, boolean defaultValue) {
            reads.merge(method + "." + key, 1, Integer::sum);
            return super.getMethodParameter(method, key, defaultValue);
        }

        Map<String, Integer> reads() {
            return Map.copyOf(reads);
        }
    }

    /** @return an invoker to {@code url} whose replies are there at once, so the filter watches nothing */
    @SuppressWarnings("unchecked")
    private static Invoker<GreetingService> answeringAt(URL url) {
        Invoker<GreetingService> inv = mock(Invoker.class);
        given(inv.getUrl()).willReturn(url);
        given(inv.getInterface()).willReturn(GreetingService.class);
        given(inv.invoke(any())).willAnswer(i -> AsyncRpcResult.newDefaultAsyncResult("hi", i.getArgument(0)));
        return inv;
    }

    /** {@code m.timeoutcheck=true} activates the filter in Dubbo for every method; the filter watches {@code m} only. */
    @Test
    void methodLevelKeySwitchesTheFilterOnForThatMethodOnly() {
        Invoker<GreetingService> sayHelloOnly = invokerWith("sayHello.timeoutcheck=true");
        filter.invoke(sayHelloOnly, call("sayHello", InvokeMode.FUTURE));
        filter.invoke(sayHelloOnly, call("notify", InvokeMode.FUTURE));
        assertTrue(watched(returnedBelow.get(0)), "sayHello watched");
        assertFalse(watched(returnedBelow.get(1)), "notify watched although only sayHello.timeoutcheck=true");
    }

    @Test
    void methodLevelFalseSwitchesTheFilterOffForThatMethodOnly() {
        Invoker<GreetingService> allButNotify = invokerWith("timeoutcheck=true&notify.timeoutcheck=false");
        filter.invoke(allButNotify, call("sayHello", InvokeMode.FUTURE));
        filter.invoke(allButNotify, call("notify", InvokeMode.FUTURE));
        assertTrue(watched(returnedBelow.get(0)), "sayHello watched");
        assertFalse(watched(returnedBelow.get(1)), "notify watched although notify.timeoutcheck=false");
    }

    /**
     * Under {@code wheelfailback} the invoker sending the call opens a {@link TimeoutHandOff} for it: the filter adds
     * no stage to the reply and hands its timeout over instead, and that timeout still ends a call that never
     * answers. A hand-off open for another invocation (a call sent from inside this one's chain) is not taken.
     */
    @Test
    void underAnOpenHandOffTheTimeoutIsHandedOverInsteadOfAStage() {
        RpcInvocation inv = call("sayHello", InvokeMode.FUTURE);
        TimeoutHandOff handOff = TimeoutHandOff.open(inv);
        AsyncRpcResult r;
        Timeout armed;
        try {
            r = (AsyncRpcResult) filter.invoke(invoker, inv);
        } finally {
            armed = handOff.close();
        }
        assertFalse(watched(r), "the filter added a stage although the invoker took its timeout");
        assertTrue(armed != null && !armed.isCancelled(), "no timeout handed over");
        assertTrue(timeoutOf(r).getMessage().endsWith("timed out after 80 ms"));

        TimeoutHandOff other = TimeoutHandOff.open(call("sayHello", InvokeMode.FUTURE));
        try {
            AsyncRpcResult own = (AsyncRpcResult) filter.invoke(invoker, call("notify", InvokeMode.FUTURE));
            assertTrue(watched(own), "a call the hand-off is not open for must get a stage of its own");
        } finally {
            assertEquals(null, other.close());
        }
    }

    /** A call sent from inside another's filter chain on the same thread gets its own hand-off, then gives it back. */
    @Test
    void nestedHandOffsKeepTheOuterOnesTimeout() {
        RpcInvocation outer = call("sayHello", InvokeMode.FUTURE);
        RpcInvocation inner = call("notify", InvokeMode.FUTURE);
        TimeoutHandOff outerHandOff = TimeoutHandOff.open(outer);
        try {
            filter.invoke(invoker, outer);
            TimeoutHandOff innerHandOff = TimeoutHandOff.open(inner);
            Timeout innerTimeout;
            try {
                filter.invoke(invoker, inner);
            } finally {
                innerTimeout = innerHandOff.close();
            }
            assertTrue(innerTimeout != null);
            assertEquals(null, TimeoutHandOff.take(outer), "the outer hand-off holds its timeout again");
        } finally {
            Timeout outerTimeout = outerHandOff.close();
            assertTrue(outerTimeout != null, "the outer call's timeout was lost to the nested call");
        }
        TimeoutHandOff after = TimeoutHandOff.open(outer);
        assertSame(after, TimeoutHandOff.take(outer), "the thread's hand-off is open again after both closed");
        after.close();
    }

    /** After destroy() calls pass through and borrow no wheel, since nobody would release that lease. */
    @Test
    void destroyedFilterPassesCallsThroughWithoutBorrowingTheWheel() {
        filter.invoke(invoker, call("sayHello", InvokeMode.FUTURE));
        int heldWhileInUse = SharedWheelTimer.holders();
        filter.destroy();
        assertEquals(heldWhileInUse - 1, SharedWheelTimer.holders(), "destroy() gave the lease back");

        Result r = filter.invoke(invoker, call("sayHello", InvokeMode.FUTURE));
        assertSame(returnedBelow.get(1), r, "the call still goes out");
        assertFalse(watched(returnedBelow.get(1)), "a destroyed filter scheduled a timeout");
        assertEquals(heldWhileInUse - 1, SharedWheelTimer.holders(), "a destroyed filter borrowed the wheel");
    }
}
