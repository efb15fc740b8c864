package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.willReturn;
import static org.mockito.BDDMockito.willThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;

import io.rpctimer.retry.InMemoryRetryStore;
import io.rpctimer.retry.PendingRetry;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.retry.RetryStore;
import io.rpctimer.retry.SlowLaneExecutor;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.rpc.AppResponse;
import org.apache.dubbo.rpc.AsyncRpcResult;
import org.apache.dubbo.rpc.InvokeMode;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.cluster.Directory;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.apache.dubbo.rpc.model.ModuleModel;
import org.apache.dubbo.rpc.model.ServiceModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.mockito.ArgumentCaptor;

/**
 * The invoker's logic in the manner of Dubbo's {@code FailbackClusterInvokerTest}: mocked {@link Directory} and
 * {@link Invoker}s, config from {@link URL#valueOf}, and a {@link ManualTimer} so every retry runs on the test
 * thread when the test says so.
 */
class WheelFailbackClusterInvokerTest {

    private static final String SERVICE = GreetingService.class.getName();
    private static final RpcException TIMEOUT = new RpcException(RpcException.TIMEOUT_EXCEPTION, "timeout (test)");

    private FrameworkModel framework;
    private ModuleModel module;
    private final ManualTimer timer = new ManualTimer();
    private final FailbackRuntime runtime = new FailbackRuntime(timer);
    private final List<RetryEvent> events = new CopyOnWriteArrayList<>();
    private final RetryListener listener = events::add;
    private final InMemoryRetryStore store = new InMemoryRetryStore();
    private RetryStore previousStore;
    private Invoker<GreetingService> providerA;
    private Invoker<GreetingService> providerB;
    private Directory<GreetingService> directory;

    @BeforeEach
    void setUp() {
        framework = new FrameworkModel();
        module = framework.defaultApplication().getDefaultModule();
        providerA = provider(20881);
        providerB = provider(20882);
        WheelFailback.addListener(listener);
        previousStore = WheelFailback.retryStore();
        WheelFailback.setRetryStore(store);
    }

    @AfterEach
    void tearDown() {
        RpcContext.removeClientAttachment();
        WheelFailback.removeListener(listener);
        WheelFailback.setRetryStore(previousStore);
        framework.destroy();
    }

    @SuppressWarnings("unchecked")
    private Invoker<GreetingService> provider(int port) {
        Invoker<GreetingService> invoker = mock(Invoker.class);
        given(invoker.getUrl()).willReturn(URL.valueOf("dubbo://127.0.0.1:" + port + "/" + SERVICE)
                .setScopeModel(module));
        given(invoker.isAvailable()).willReturn(true);
        given(invoker.getInterface()).willReturn(GreetingService.class);
        return invoker;
    }

    @SafeVarargs
    @SuppressWarnings("unchecked")
    private WheelFailbackClusterInvoker<GreetingService> cluster(String params, Invoker<GreetingService>... providers) {
        URL url = URL.valueOf("consumer://127.0.0.1/" + SERVICE + "?interface=" + SERVICE + "&" + params)
                .setScopeModel(module);
        directory = mock(Directory.class);
        given(directory.getUrl()).willReturn(url);
        given(directory.getConsumerUrl()).willReturn(url);
        given(directory.getInterface()).willReturn(GreetingService.class);
        given(directory.list(any())).willReturn(List.of(providers));
        return new WheelFailbackClusterInvoker<>(directory, runtime);
    }

    private RpcInvocation call(String method) {
        ServiceModel serviceModel = mock(ServiceModel.class);
        given(serviceModel.getModuleModel()).willReturn(module);
        return new RpcInvocation(serviceModel, method, SERVICE, "", new Class<?>[] {String.class},
                new Object[] {"world"});
    }

    private static Result ok(Invocation inv) {
        return AsyncRpcResult.newDefaultAsyncResult("ok", inv);
    }

    private List<RetryEvent.Type> eventTypes() {
        return events.stream().map(RetryEvent::type).toList();
    }

    // ------------------------------------------------------------------ first attempt

    /**
     * The first attempt goes out with the context Dubbo's failover cluster gives a call (its
     * {@code invokeWithContext}): provider invoker, remote address and application in the service context, the
     * provider in the invocation's invoked list, a profiler entry naming the target address. Our invoker makes the
     * address and the message once per provider, so each is checked on a second call too, and for a host name.
     */
    @ParameterizedTest
    @CsvSource({"127.0.0.1", "localhost"})
    void firstAttemptHasTheContextDubbosFailoverGivesIt(String host) {
        Invoker<GreetingService> provider = provider(20883);
        given(provider.getUrl()).willReturn(URL.valueOf("dubbo://" + host + ":20883/" + SERVICE
                + "?remote.application=greeter").setScopeModel(module));
        List<String> seen = new CopyOnWriteArrayList<>();
        given(provider.invoke(any())).willAnswer(i -> {
            seen.add(InvokeContext.of(i.getArgument(0)).toString());
            return ok(i.getArgument(0));
        });
        Invoker<GreetingService> failover = new org.apache.dubbo.rpc.cluster.support.FailoverClusterInvoker<>(
                directoryOf(provider));
        WheelFailbackClusterInvoker<GreetingService> wheel = cluster("", provider);
        for (Invoker<GreetingService> cluster : List.of(failover, wheel, wheel)) {
            RpcContext.getServiceContext().setInvoker(null).setRemoteAddress(null);
            RpcInvocation call = profiledCall();
            Object callersEntry = call.get(org.apache.dubbo.common.profiler.Profiler.PROFILER_KEY);
            cluster.invoke(call);
            assertSame(callersEntry, call.get(org.apache.dubbo.common.profiler.Profiler.PROFILER_KEY),
                    "the caller's profiler entry is current again");
            var attempt = ((org.apache.dubbo.common.profiler.ProfilerEntry) callersEntry).getSub().get(0);
            assertTrue(attempt.getEndTime() != 0 && attempt.getEndTime() - attempt.getStartTime() >= 0,
                    "the attempt's profiler entry is ended");
            assertNull(RpcContext.getServiceContext().getInvoker(), "the caller's invoker is restored");
            assertEquals(new java.net.InetSocketAddress(host, 20883), RpcContext.getServiceContext().getRemoteAddress(),
                    "the caller sees the provider's address after the call");
        }
        assertEquals(3, seen.size());
        assertEquals(seen.get(0), seen.get(1), "wheelfailback's first attempt has failover's context");
        assertEquals(seen.get(0), seen.get(2), "and so has a second call to the same provider");
        assertTrue(seen.get(0).contains("/127.0.0.1:20883") && seen.get(0).contains("greeter")
                && seen.get(0).contains("Invoker invoke. Target Address: " + host + ":20883"), seen.get(0));
    }

    /**
     * A method returning a {@code CompletableFuture} gets the same context but no profiler entry of its own: Dubbo's
     * profiler times such a call only until it is sent. The caller's entry is the current one in the provider.
     */
    @Test
    void futureMethodGetsTheContextWithoutAProfilerEntry() {
        Invoker<GreetingService> provider = provider(20883);
        given(provider.getUrl()).willReturn(URL.valueOf("dubbo://127.0.0.1:20883/" + SERVICE
                + "?remote.application=greeter").setScopeModel(module));
        List<InvokeContext> seen = new CopyOnWriteArrayList<>();
        given(provider.invoke(any())).willAnswer(i -> {
            seen.add(InvokeContext.of(i.getArgument(0)));
            return ok(i.getArgument(0));
        });
        RpcInvocation future = profiledCall();
        future.setReturnType(java.util.concurrent.CompletableFuture.class);
        Object callersEntry = future.get(org.apache.dubbo.common.profiler.Profiler.PROFILER_KEY);
        cluster("", provider).invoke(future);
        InvokeContext c = seen.get(0);
        assertEquals(new java.net.InetSocketAddress("127.0.0.1", 20883), c.remoteAddress());
        assertEquals("greeter", c.remoteApplication());
        assertEquals(1, c.invoked());
        assertEquals("call (test)", c.profiled().get(0), "the caller's own entry is the current one");
        assertSame(callersEntry, future.get(org.apache.dubbo.common.profiler.Profiler.PROFILER_KEY));
    }

    /**
     * The provider's URL is read by identity: when a provider at the same address comes back with another URL (here
     * another application), the next call's context has the new one.
     */
    @Test
    void firstAttemptContextFollowsANewUrlOfTheSameAddress() {
        Invoker<GreetingService> provider = provider(20883);
        List<String> applications = new CopyOnWriteArrayList<>();
        given(provider.invoke(any())).willAnswer(i -> {
            applications.add(RpcContext.getServiceContext().getRemoteApplicationName());
            return ok(i.getArgument(0));
        });
        WheelFailbackClusterInvoker<GreetingService> wheel = cluster("", provider);
        for (String application : List.of("greeter", "greeter", "greeter-v2")) {
            given(provider.getUrl()).willReturn(URL.valueOf("dubbo://127.0.0.1:20883/" + SERVICE
                    + "?remote.application=" + application).setScopeModel(module));
            wheel.invoke(call("sayHello"));
        }
        assertEquals(List.of("greeter", "greeter", "greeter-v2"), applications);
    }

    /** What a provider invoker finds of its call's context. */
    private record InvokeContext(String invoker, Object remoteAddress, String remoteApplication, int invoked,
                                 List<String> profiled) {

        static InvokeContext of(Invocation inv) {
            var context = RpcContext.getServiceContext();
            var entry = (org.apache.dubbo.common.profiler.ProfilerEntry)
                    inv.get(org.apache.dubbo.common.profiler.Profiler.PROFILER_KEY);
            return new InvokeContext(String.valueOf(context.getInvoker().getUrl()), context.getRemoteAddress(),
                    context.getRemoteApplicationName(), inv.getInvokedInvokers().size(),
                    entry.getParent() == null ? List.of(entry.getMessage())
                            : List.of(entry.getMessage(), entry.getParent().getMessage()));
        }
    }

    @SuppressWarnings("unchecked")
    private Directory<GreetingService> directoryOf(Invoker<GreetingService> provider) {
        URL url = URL.valueOf("consumer://127.0.0.1/" + SERVICE + "?interface=" + SERVICE).setScopeModel(module);
        Directory<GreetingService> d = mock(Directory.class);
        given(d.getUrl()).willReturn(url);
        given(d.getConsumerUrl()).willReturn(url);
        given(d.getInterface()).willReturn(GreetingService.class);
        given(d.list(any())).willReturn(List.of(provider));
        return d;
    }

    private RpcInvocation profiledCall() {
        RpcInvocation inv = call("sayHello");
        inv.put(org.apache.dubbo.common.profiler.Profiler.PROFILER_KEY,
                org.apache.dubbo.common.profiler.Profiler.start("call (test)"));
        return inv;
    }

    @Test
    void successPassesThroughWithoutRetry() {
        given(providerA.invoke(any())).willAnswer(i -> ok(i.getArgument(0)));
        Result r = cluster("", providerA).invoke(call("sayHello"));
        assertEquals("ok", r.getValue());
        assertTrue(timer.scheduled.isEmpty());
        assertTrue(events.isEmpty());
    }

    @Test
    void syncFailureGivesTheEmptyResultAtOnceAndSchedulesARetry() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        Result r = cluster("", providerA).invoke(call("sayHello"));
        assertNull(r.getValue());
        assertFalse(r.hasException());
        assertEquals(1, timer.retries().size());
        long delay = timer.retries().get(0).delayMillis();
        assertTrue(delay >= 4_000 && delay <= 6_000, "first delay 5 s ± 20%: " + delay);
        assertEquals(List.of(RetryEvent.Type.SCHEDULED), eventTypes());
    }

    @Test
    void asyncFailureAlsoFailsBack() throws Exception {
        CompletableFuture<AppResponse> reply = new CompletableFuture<>();
        RpcInvocation inv = call("sayHelloAsync");
        inv.setInvokeMode(InvokeMode.FUTURE);
        given(providerA.invoke(any())).willReturn(new AsyncRpcResult(reply, inv));
        AsyncRpcResult r = (AsyncRpcResult) cluster("", providerA).invoke(inv);
        assertTrue(timer.retries().isEmpty(), "nothing failed yet");

        reply.completeExceptionally(new org.apache.dubbo.remoting.TimeoutException(false, null, "timeout (test)"));
        AppResponse seen = r.getResponseFuture().get();
        assertNull(seen.getValue());
        assertFalse(seen.hasException());
        assertEquals(1, timer.retries().size());
    }

    /** What Dubbo hands the cluster when a provider's method throws an RpcException: a done, failed future. */
    @Test
    void doneButFailedResultFailsBack() {
        RpcInvocation inv = call("notify");
        CompletableFuture<AppResponse> failed = new CompletableFuture<>();
        failed.completeExceptionally(new RpcException(RpcException.NETWORK_EXCEPTION, "from the provider (test)"));
        given(providerA.invoke(any())).willReturn(new AsyncRpcResult(failed, inv));
        Result r = cluster("", providerA).invoke(inv);
        assertNull(r.getValue());
        assertEquals(1, timer.retries().size());
    }

    @Test
    void doneButFailedRetryIsRescheduled() {
        given(providerA.invoke(any())).willThrow(TIMEOUT).willAnswer(i -> {
            CompletableFuture<AppResponse> failed = new CompletableFuture<>();
            failed.completeExceptionally(new RpcException(RpcException.NETWORK_EXCEPTION, "from the provider (test)"));
            return new AsyncRpcResult(failed, i.getArgument(0));
        });
        cluster("", providerA).invoke(call("notify"));
        timer.fireRetry();
        assertEquals(1, timer.retries().size());
        assertEquals(RetryEvent.Type.FAILED, events.get(events.size() - 2).type());
    }

    /** Retries are sent from the runtime's lanes; one they refuse is a failed attempt, not lost. */
    @Test
    void retryTheLanesRefuseIsAFailedAttemptAndRescheduled() {
        Executor full = task -> {
            throw new RejectedExecutionException("both lanes full (test)");
        };
        FailbackRuntime refusing = new FailbackRuntime(timer, SlowLaneExecutor.builder().lanes(full, full).build());
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        cluster("", providerA);
        new WheelFailbackClusterInvoker<>(directory, refusing).invoke(call("notify"));
        timer.fireRetry();
        verify(providerA, times(1)).invoke(any()); // the first attempt only
        RetryEvent failed = events.get(events.size() - 2);
        assertEquals(RetryEvent.Type.FAILED, failed.type());
        assertEquals(1, failed.attempt());
        assertInstanceOf(RejectedExecutionException.class, failed.failure());
        assertEquals(1, timer.retries().size(), "retry 2 is on the wheel");
    }

    @Test
    void noProviderAtFirstCallIsRetriedInsteadOfThrown() {
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("");
        Result r = cluster.invoke(call("notify"));
        assertNull(r.getValue());
        assertEquals(1, timer.retries().size());

        given(directory.list(any())).willReturn(List.of(providerA)); // the provider is back
        given(providerA.invoke(any())).willAnswer(i -> ok(i.getArgument(0)));
        timer.fireRetry();
        assertEquals(RetryEvent.Type.DELIVERED, events.get(events.size() - 1).type());
    }

    /** A CompletableFuture caller must get a future even when no provider invoker ran to publish one. */
    @Test
    void asyncCallerWithNoProviderGetsACompletedFuture() throws Exception {
        RpcInvocation inv = call("sayHelloAsync");
        org.apache.dubbo.rpc.RpcContext.getServiceContext().setFuture(null);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("");
        inv.setInvokeMode(InvokeMode.FUTURE);
        cluster.invoke(inv);
        java.util.concurrent.Future<Object> published = org.apache.dubbo.rpc.RpcContext.getServiceContext().getFuture();
        assertTrue(published != null, "no future for the caller");
        assertNull(published.get(1, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(1, timer.retries().size());
    }

    @Test
    void scheduledEventSaysWhichAttemptFailedAndWhy() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        cluster("", providerA).invoke(call("notify"));
        RetryEvent scheduled = events.get(0);
        assertEquals(RetryEvent.Type.SCHEDULED, scheduled.type());
        assertEquals("127.0.0.1:20881", scheduled.provider());
        assertSame(TIMEOUT, scheduled.failure());
    }

    @Test
    void noProviderAtRetryIsRetriedAgain() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("retries=2", providerA);
        cluster.invoke(call("notify"));
        given(directory.list(any())).willReturn(List.of()); // every provider gone
        timer.fireRetry();
        assertEquals(1, timer.retries().size(), "no provider is a retryable failure");
        RetryEvent failed = events.stream().filter(e -> e.type() == RetryEvent.Type.FAILED).findFirst().orElseThrow();
        assertTrue(Failures.isNoProvider((RpcException) failed.failure()));
    }

    // ------------------------------------------------------------------ retries

    @Test
    void retryCarriesRetryIdAndAttemptAndGoesOutAsync() {
        given(providerA.invoke(any())).willThrow(TIMEOUT).willAnswer(i -> ok(i.getArgument(0)));
        RpcInvocation original = call("notify");
        cluster("", providerA).invoke(original);
        String retryId = original.getAttachment(WheelFailback.RETRY_ID);
        assertNull(original.getAttachment(WheelFailback.RETRY_ATTEMPT), "the original carries no retry.attempt");

        timer.fireRetry();
        ArgumentCaptor<Invocation> sent = ArgumentCaptor.forClass(Invocation.class);
        verify(providerA, times(2)).invoke(sent.capture());
        RpcInvocation retry = (RpcInvocation) sent.getAllValues().get(1);
        assertNotEquals(original, retry, "each retry is a copy");
        assertEquals(retryId, retry.getAttachment(WheelFailback.RETRY_ID));
        assertEquals("1", retry.getAttachment(WheelFailback.RETRY_ATTEMPT));
        assertEquals(InvokeMode.ASYNC, retry.getInvokeMode(), "no thread waits for the reply");
        assertEquals(List.of(RetryEvent.Type.SCHEDULED, RetryEvent.Type.SENT, RetryEvent.Type.DELIVERED),
                eventTypes());
        assertEquals(1, events.get(2).attempt());
        assertEquals(retryId, events.get(2).retryId());
        assertEquals("127.0.0.1:20881", events.get(2).provider());
    }

    @Test
    void callerSuppliedRetryIdIsKept() {
        given(providerA.invoke(any())).willThrow(TIMEOUT).willAnswer(i -> ok(i.getArgument(0)));
        RpcInvocation original = call("notify");
        // what Dubbo's ConsumerContextFilter does with the caller's client attachment before the cluster runs
        RpcContext.getClientAttachment().setAttachment(WheelFailback.RETRY_ID, "order-42");
        original.setAttachment(WheelFailback.RETRY_ID, "order-42");
        cluster("", providerA).invoke(original);
        timer.fireRetry();
        assertEquals("order-42", events.get(events.size() - 1).retryId());
    }

    /**
     * A provider calling on copies its incoming attachments into its outgoing calls (Dubbo's
     * ConsumerContextFilter without a PenetrateAttachmentSelector); an id that came in that way is not the caller's.
     */
    @Test
    void inheritedRetryIdIsReplacedByAFreshOne() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("", providerA);
        RpcInvocation first = call("notify");
        RpcInvocation second = call("sayHello");
        first.setAttachment(WheelFailback.RETRY_ID, "from-upstream");
        second.setAttachment(WheelFailback.RETRY_ID, "from-upstream");
        cluster.invoke(first);
        cluster.invoke(second);
        List<String> ids = events.stream().map(RetryEvent::retryId).toList();
        assertEquals(2, ids.size());
        assertFalse(ids.contains("from-upstream"), ids.toString());
        assertNotEquals(ids.get(0), ids.get(1));
    }

    /** The same for retry.attempt: a provider retried upstream (attempt 3) makes an original call of its own. */
    @Test
    void inheritedRetryAttemptIsDropped() {
        given(providerA.invoke(any())).willAnswer(i -> ok(i.getArgument(0)));
        RpcInvocation call = call("notify");
        call.setAttachment(WheelFailback.RETRY_ATTEMPT, "3");
        cluster("", providerA).invoke(call);
        ArgumentCaptor<Invocation> sent = ArgumentCaptor.forClass(Invocation.class);
        verify(providerA).invoke(sent.capture());
        assertNull(sent.getValue().getAttachment(WheelFailback.RETRY_ATTEMPT), "an upstream retry.attempt passed on");
    }

    @Test
    void budgetIsSpentThenAbandoned() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("retries=2", providerA);
        cluster.invoke(call("notify"));
        timer.fireRetry();
        timer.fireRetry();
        assertTrue(timer.retries().isEmpty());
        verify(providerA, times(3)).invoke(any());
        RetryEvent last = events.get(events.size() - 1);
        assertEquals(RetryEvent.Type.ABANDONED, last.type());
        assertEquals(2, last.attempt());
        assertEquals(0, cluster.pendingRetries());
    }

    @Test
    void zeroRetriesMeansNoRetryButAVisibleOutcome() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        Result r = cluster("retries=0", providerA).invoke(call("notify"));
        assertNull(r.getValue());
        assertTrue(timer.scheduled.isEmpty());
        assertEquals(List.of(RetryEvent.Type.ABANDONED), eventTypes());
        assertEquals(0, events.get(0).attempt());
    }

    @Test
    void retryAvoidsTheProviderTriedLast() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        given(providerB.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("retries=3", providerA, providerB);
        cluster.invoke(call("notify"));
        for (int i = 0; i < 3; i++) {
            timer.fireRetry();
        }
        List<String> sentTo = events.stream().filter(e -> e.type() == RetryEvent.Type.SENT)
                .map(RetryEvent::provider).toList();
        assertEquals(3, sentTo.size());
        for (int i = 1; i < sentTo.size(); i++) {
            assertNotEquals(sentTo.get(i - 1), sentTo.get(i), "retry " + (i + 1) + " went to the same provider");
        }
    }

    @Test
    void backoffGrowsWithinJitterBoundsUpToTheCap() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        cluster("retries=6&failback.delay=100&failback.multiplier=3&failback.maxdelay=2000&failback.jitter=0.1",
                providerA).invoke(call("notify"));
        long[] base = {100, 300, 900, 2000, 2000, 2000};
        for (int retry = 0; retry < base.length; retry++) {
            long delay = timer.retries().get(0).delayMillis();
            long lo = (long) (base[retry] * 0.9);
            long hi = Math.min(2000, (long) (base[retry] * 1.1));
            assertTrue(delay >= lo && delay <= hi, "retry " + (retry + 1) + ": " + delay + " not in [" + lo + ", "
                    + hi + "]");
            timer.fireRetry();
        }
        assertEquals(RetryEvent.Type.ABANDONED, events.get(events.size() - 1).type());
    }

    @Test
    void retryThatTimesOutIsRescheduled() {
        given(providerA.invoke(any())).willThrow(TIMEOUT).willAnswer(i -> new AsyncRpcResult(
                new CompletableFuture<>(), i.getArgument(0))); // the retry never answers
        cluster("timeout=1500", providerA).invoke(call("notify"));
        timer.fireRetry();
        assertEquals(1, timer.attemptTimeouts().size(), "the retry is watched by the future-timeout checker");
        assertEquals(1500, timer.attemptTimeouts().get(0).delayMillis());
        assertTrue(timer.retries().isEmpty());

        timer.attemptTimeouts().get(0).fire();
        assertEquals(1, timer.retries().size(), "timed out retry rescheduled");
        RetryEvent failed = events.stream().filter(e -> e.type() == RetryEvent.Type.FAILED).findFirst().orElseThrow();
        assertTrue(((RpcException) failed.failure()).isTimeout());
    }

    @Test
    void retryReplyCancelsItsAttemptTimeout() {
        CompletableFuture<AppResponse> reply = new CompletableFuture<>();
        given(providerA.invoke(any())).willThrow(TIMEOUT)
                .willAnswer(i -> new AsyncRpcResult(reply, i.getArgument(0)));
        cluster("", providerA).invoke(call("notify"));
        timer.fireRetry();
        reply.complete(new AppResponse("late but fine"));
        assertTrue(timer.attemptTimeouts().isEmpty());
        assertEquals(RetryEvent.Type.DELIVERED, events.get(events.size() - 1).type());
    }

    // ------------------------------------------------------------------ cap and rejection

    @Test
    void pastThePendingCapTheCallerIsTold() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("failbacktasks=2", providerA);
        cluster.invoke(call("notify"));
        cluster.invoke(call("notify"));
        RpcException e = assertThrows(RpcException.class, () -> cluster.invoke(call("notify")));
        assertEquals(RpcException.LIMIT_EXCEEDED_EXCEPTION, e.getCode());
        assertTrue(e.getMessage().contains("2 retries already pending (failbacktasks=2)"), e.getMessage());
        assertSame(TIMEOUT, e.getCause());
        assertEquals(2, timer.retries().size());
        assertEquals(RetryEvent.Type.REJECTED, events.get(events.size() - 1).type());
    }

    @Test
    void overflowLogGivesTheEmptyResultButCountsTheRejection() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("failbacktasks=1&failback.overflow=log",
                providerA);
        long rejectedBefore = WheelFailback.stats().rejected();
        cluster.invoke(call("notify"));
        Result r = cluster.invoke(call("notify"));
        assertNull(r.getValue());
        assertEquals(rejectedBefore + 1, WheelFailback.stats().rejected());
    }

    @Test
    void asyncCallerPastTheCapGetsTheRejection() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("failbacktasks=1", providerA);
        cluster.invoke(call("notify"));
        CompletableFuture<AppResponse> reply = new CompletableFuture<>();
        RpcInvocation inv = call("sayHelloAsync");
        inv.setInvokeMode(InvokeMode.FUTURE);
        willReturn(new AsyncRpcResult(reply, inv)).given(providerA).invoke(any()); // the mock throws if called
        AsyncRpcResult r = (AsyncRpcResult) cluster.invoke(inv);
        reply.completeExceptionally(new org.apache.dubbo.remoting.TimeoutException(false, null, "timeout (test)"));
        ExecutionException e = assertThrows(ExecutionException.class, () -> r.getResponseFuture().get());
        assertEquals(RpcException.LIMIT_EXCEEDED_EXCEPTION, ((RpcException) Failures.unwrap(e)).getCode());
    }

    @Test
    void capFreesUpWhenRetriesEnd() {
        given(providerA.invoke(any())).willThrow(TIMEOUT).willAnswer(i -> ok(i.getArgument(0)))
                .willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("failbacktasks=1", providerA);
        cluster.invoke(call("notify"));
        timer.fireRetry(); // delivered
        assertEquals(0, cluster.pendingRetries());
        cluster.invoke(call("notify")); // fails and is admitted again
        assertEquals(1, cluster.pendingRetries());
    }

    // ------------------------------------------------------------------ which failures

    @Test
    void businessExceptionsAreNotRetriedByDefault() {
        RpcInvocation inv = call("notify");
        given(providerA.invoke(any())).willReturn(AsyncRpcResult.newDefaultAsyncResult(
                new IllegalStateException("out of stock"), inv));
        Result r = cluster("", providerA).invoke(inv);
        assertTrue(r.hasException(), "the caller sees the business exception, as with Dubbo's failback");
        assertTrue(timer.scheduled.isEmpty());
    }

    @ParameterizedTest
    @CsvSource({"all", "java.lang.IllegalStateException", "java.lang.RuntimeException"})
    void businessExceptionsAreRetriedWhenRetryOnSaysSo(String retryOn) {
        RpcInvocation inv = call("notify");
        given(providerA.invoke(any())).willReturn(AsyncRpcResult.newDefaultAsyncResult(
                new IllegalStateException("out of stock"), inv));
        Result r = cluster("failback.retryon=" + retryOn, providerA).invoke(inv);
        assertFalse(r.hasException());
        assertEquals(1, timer.retries().size());
    }

    @Test
    void businessExceptionOnARetryAbandonsUnlessRetryOnNamesIt() {
        RpcInvocation inv = call("notify");
        given(providerA.invoke(any())).willThrow(TIMEOUT).willAnswer(i -> AsyncRpcResult.newDefaultAsyncResult(
                new IllegalStateException("out of stock"), i.getArgument(0)));
        cluster("", providerA).invoke(inv);
        timer.fireRetry();
        assertEquals(RetryEvent.Type.ABANDONED, events.get(events.size() - 1).type());
        assertTrue(timer.retries().isEmpty());
    }

    @Test
    void failuresNoRetryCanFixAreNotRetried() {
        RpcException tooBig = new RpcException(RpcException.NETWORK_EXCEPTION, "payload too large (test)",
                new org.apache.dubbo.remoting.transport.ExceedPayloadLimitException("Data length too large: 9000000"));
        given(providerA.invoke(any())).willThrow(tooBig);
        assertSame(tooBig, assertThrows(RpcException.class, () -> cluster("", providerA).invoke(call("notify"))));
        RpcException serialization = new RpcException(RpcException.SERIALIZATION_EXCEPTION, "not serializable");
        willThrow(serialization).given(providerA).invoke(any()); // the mock throws if called to re-stub
        assertSame(serialization, assertThrows(RpcException.class,
                () -> cluster("", providerA).invoke(call("notify"))));
        assertTrue(timer.scheduled.isEmpty());
    }

    @Test
    void bizRpcExceptionIsNotRetried() {
        RpcException biz = new RpcException(RpcException.BIZ_EXCEPTION, "biz (test)");
        given(providerA.invoke(any())).willThrow(biz);
        assertSame(biz, assertThrows(RpcException.class, () -> cluster("", providerA).invoke(call("notify"))));
        verify(providerA, times(1)).invoke(any());
    }

    /** A provider's method declared to throw a checked I/O or timeout exception threw it. */
    @ParameterizedTest
    @CsvSource({"java.io.IOException", "java.io.FileNotFoundException", "java.util.concurrent.TimeoutException"})
    void businessIoAndTimeoutExceptionsInTheResponseReachTheCaller(String type) throws Exception {
        Throwable biz = (Throwable) Class.forName(type).getConstructor(String.class).newInstance("disk (test)");
        RpcInvocation inv = call("notify");
        given(providerA.invoke(any())).willReturn(AsyncRpcResult.newDefaultAsyncResult(biz, inv));
        Result r = cluster("", providerA).invoke(inv);
        assertSame(biz, r.getException());
        assertTrue(timer.scheduled.isEmpty());
        verify(providerA, times(1)).invoke(any());
    }

    /** The same on a retry's reply: the business exception ends the call, no further retry. */
    @Test
    void businessIoExceptionOnARetryIsNotRetriedAgain() {
        given(providerA.invoke(any())).willThrow(TIMEOUT).willAnswer(i -> AsyncRpcResult.newDefaultAsyncResult(
                new java.io.IOException("disk (test)"), i.getArgument(0)));
        cluster("", providerA).invoke(call("notify"));
        timer.fireRetry();
        assertTrue(timer.retries().isEmpty());
        assertEquals(RetryEvent.Type.ABANDONED, events.get(events.size() - 1).type());
    }

    /**
     * The provider ran the method but could not encode its reply; Dubbo sends BAD_RESPONSE, which the
     * consumer only sees as a RemotingException with the codec's text.
     */
    @Test
    void providerThatCannotEncodeItsReplyIsNotRetried() {
        org.apache.dubbo.remoting.RemotingException badResponse = new org.apache.dubbo.remoting.RemotingException(
                (java.net.InetSocketAddress) null, null, "Failed to send response: Response [id=7, status=20], cause: "
                + "java.lang.IllegalStateException: Serialized class Foo must implement java.io.Serializable");
        RpcException thrown = new RpcException(RpcException.NETWORK_EXCEPTION, "Failed to invoke remote method",
                new ExecutionException(badResponse));
        given(providerA.invoke(any())).willThrow(thrown);
        assertSame(thrown, assertThrows(RpcException.class, () -> cluster("", providerA).invoke(call("notify"))));
        CompletableFuture<AppResponse> reply = new CompletableFuture<>();
        RpcInvocation inv = call("sayHelloAsync");
        inv.setInvokeMode(InvokeMode.FUTURE);
        willReturn(new AsyncRpcResult(reply, inv)).given(providerA).invoke(any());
        AsyncRpcResult r = (AsyncRpcResult) cluster("", providerA).invoke(inv);
        reply.completeExceptionally(badResponse);
        ExecutionException e = assertThrows(ExecutionException.class, () -> r.getResponseFuture().get());
        assertSame(badResponse, Failures.unwrap(e));
        assertTrue(timer.scheduled.isEmpty());
    }

    /** A cause chain with a cycle (a -> b -> a) is walked once, not forever. */
    @Test
    @org.junit.jupiter.api.Timeout(value = 10, threadMode = org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD)
    void causeCycleEndsTheWalk() {
        IllegalStateException a = new IllegalStateException("a");
        IllegalArgumentException b = new IllegalArgumentException("b", a);
        a.initCause(b);
        RpcInvocation inv = call("notify");
        given(providerA.invoke(any())).willReturn(AsyncRpcResult.newDefaultAsyncResult(a, inv));
        Result r = cluster("failback.retryon=java.io.IOException", providerA).invoke(inv);
        assertSame(a, r.getException());
        assertFalse(Failures.isRpcFailureOfFuture(new RpcException(RpcException.NETWORK_EXCEPTION, "x",
                new RpcException(RpcException.SERIALIZATION_EXCEPTION, "s"))));
        assertTrue(Failures.isRpcFailureOfFuture(a));
    }

    // ------------------------------------------------------------------ streams, generic, load balancing

    /** A stream method with no provider: the caller gets the error, as in Dubbo; nothing fails back. */
    @ParameterizedTest
    @CsvSource({"BI_STREAM", "CLIENT_STREAM", "SERVER_STREAM"})
    void streamMethodsDoNotFailBack(org.apache.dubbo.rpc.model.MethodDescriptor.RpcType type) {
        RpcInvocation inv = streamCall(type);
        WheelFailbackClusterInvoker<GreetingService> noProvider = cluster("");
        RpcException e = assertThrows(RpcException.class, () -> noProvider.invoke(inv));
        assertTrue(Failures.isNoProvider(e));
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        assertSame(TIMEOUT, assertThrows(RpcException.class, () -> cluster("", providerA).invoke(streamCall(type))));
        assertTrue(timer.scheduled.isEmpty());
        assertTrue(events.isEmpty());
    }

    /**
     * A unary method of a service that also has stream methods fails back, in a service descriptor the invoker has
     * already asked about a stream method: only the stream methods are excluded.
     */
    @Test
    void unaryMethodOfAServiceWithStreamsFailsBack() {
        RpcInvocation stream = streamCall(org.apache.dubbo.rpc.model.MethodDescriptor.RpcType.BI_STREAM);
        org.apache.dubbo.rpc.model.MethodDescriptor unary = mock(org.apache.dubbo.rpc.model.MethodDescriptor.class);
        given(unary.getRpcType()).willReturn(org.apache.dubbo.rpc.model.MethodDescriptor.RpcType.UNARY);
        given(stream.getServiceModel().getServiceModel().getMethod(eq("notify"), any(Class[].class)))
                .willReturn(unary);
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("", providerA);
        assertSame(TIMEOUT, assertThrows(RpcException.class, () -> cluster.invoke(stream)));
        cluster.invoke(new RpcInvocation(stream.getServiceModel(), "notify", SERVICE, "",
                new Class<?>[] {String.class}, new Object[] {"x"}));
        assertEquals(1, timer.retries().size(), "the unary call failed back");
    }

    private RpcInvocation streamCall(org.apache.dubbo.rpc.model.MethodDescriptor.RpcType type) {
        org.apache.dubbo.rpc.model.MethodDescriptor method = mock(org.apache.dubbo.rpc.model.MethodDescriptor.class);
        given(method.getRpcType()).willReturn(type);
        org.apache.dubbo.rpc.model.ServiceDescriptor descriptor =
                mock(org.apache.dubbo.rpc.model.ServiceDescriptor.class);
        given(descriptor.getMethod(eq("chat"), any(Class[].class))).willReturn(method);
        given(descriptor.getAllMethods()).willReturn(java.util.Set.of(method));
        ServiceModel serviceModel = mock(ServiceModel.class);
        given(serviceModel.getModuleModel()).willReturn(module);
        given(serviceModel.getServiceModel()).willReturn(descriptor);
        return new RpcInvocation(serviceModel, "chat", SERVICE, "",
                new Class<?>[] {org.apache.dubbo.common.stream.StreamObserver.class}, new Object[] {null});
    }

    /** A generic call ($invoke) is configured and reported by the method it names. */
    @Test
    void genericCallUsesTheRealMethodForPolicyAndEvents() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = genericCluster(
                "failback.delay=1000&failback.jitter=0&notify.failback.delay=50", providerA);
        ServiceModel serviceModel = mock(ServiceModel.class);
        given(serviceModel.getModuleModel()).willReturn(module);
        RpcInvocation inv = new RpcInvocation(serviceModel, "$invoke", SERVICE, "",
                new Class<?>[] {String.class, String[].class, Object[].class},
                new Object[] {"notify", new String[] {"java.lang.String"}, new Object[] {"x"}});
        cluster.invoke(inv);
        assertEquals(50, timer.retries().get(0).delayMillis());
        assertEquals("notify", events.get(0).method());
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private WheelFailbackClusterInvoker<GreetingService> genericCluster(String params,
                                                                       Invoker<GreetingService> provider) {
        URL url = URL.valueOf("consumer://127.0.0.1/" + SERVICE + "?interface=" + SERVICE + "&generic=true&"
                + params).setScopeModel(module);
        directory = mock(Directory.class);
        given(directory.getUrl()).willReturn(url);
        given(directory.getConsumerUrl()).willReturn(url);
        given(directory.getInterface()).willReturn((Class) org.apache.dubbo.rpc.service.GenericService.class);
        given(directory.list(any())).willReturn(List.of(provider));
        return new WheelFailbackClusterInvoker<>(directory, runtime);
    }

    /**
     * A retry hands the load balancer the full list, as Dubbo's failback does, and avoids the provider
     * tried last through {@code selected}: a balancer that caches per list (consistent hash) keeps its ring.
     */
    @Test
    @SuppressWarnings("unchecked")
    void retryGivesTheLoadBalancerTheFullListAndStillAvoidsTheLastProvider() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        given(providerB.invoke(any())).willAnswer(i -> ok(i.getArgument(0)));
        org.apache.dubbo.rpc.cluster.LoadBalance lb = mock(org.apache.dubbo.rpc.cluster.LoadBalance.class);
        given(lb.select(any(), any(), any())).willAnswer(i -> ((List<Invoker<GreetingService>>) i.getArgument(0))
                .get(0));
        URL url = URL.valueOf("consumer://127.0.0.1/" + SERVICE + "?interface=" + SERVICE).setScopeModel(module);
        directory = mock(Directory.class);
        given(directory.getUrl()).willReturn(url);
        given(directory.getConsumerUrl()).willReturn(url);
        given(directory.getInterface()).willReturn(GreetingService.class);
        given(directory.list(any())).willReturn(List.of(providerA, providerB));
        WheelFailbackClusterInvoker<GreetingService> cluster = new WheelFailbackClusterInvoker<>(directory, runtime) {
            @Override
            protected org.apache.dubbo.rpc.cluster.LoadBalance initLoadBalance(List<Invoker<GreetingService>> i,
                                                                                Invocation inv) {
                return lb;
            }
        };
        cluster.invoke(call("notify")); // to A, fails
        timer.fireRetry();
        ArgumentCaptor<List<Invoker<GreetingService>>> lists = ArgumentCaptor.forClass(List.class);
        verify(lb, org.mockito.Mockito.atLeast(2)).select(lists.capture(), any(), any());
        assertEquals(List.of(providerA, providerB), lists.getAllValues().get(1), "the retry's first choice");
        assertEquals(RetryEvent.Type.DELIVERED, events.get(events.size() - 1).type());
        assertEquals("127.0.0.1:20882", events.get(events.size() - 1).provider());
    }

    // ------------------------------------------------------------------ what a pending call keeps

    /**
     * A pending call keeps no Throwable (stack trace, message with URLs), no provider invoker and no
     * profiler entry: only what the next attempt needs.
     */
    @Test
    void pendingCallRetainsNoThrowableNoInvokerNoProfiler() throws Exception {
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("", providerA);
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        RpcInvocation inv = call("notify");
        inv.put(org.apache.dubbo.common.profiler.Profiler.PROFILER_KEY,
                org.apache.dubbo.common.profiler.Profiler.start("call (test)"));
        inv.setInvoker(providerA);
        cluster.invoke(inv);
        given(directory.list(any())).willReturn(List.of()); // the retry finds no provider: pending again
        timer.fireRetry();
        assertEquals(1, cluster.pendingRetries());
        List<Object> calls = timer.retries().stream().map(t -> (Object) t.task()).toList();
        assertEquals(1, calls.size());
        for (Object call : calls) {
            Retained.assertNone(call, Throwable.class, Invoker.class,
                    org.apache.dubbo.common.profiler.ProfilerEntry.class);
        }
    }

    /**
     * Heap per pending retry: calls that fail with the same attachments and attributes (Dubbo's own, as in
     * a mass failure) share one copy of each; a call with other attachments keeps its own.
     */
    @Test
    void failedCallsWithEqualAttachmentsShareOneCopy() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("", providerA);
        for (String key : new String[] {"a", "a", "b"}) {
            RpcInvocation inv = call("notify");
            inv.setAttachment("interface", SERVICE);
            inv.setAttachment("business.key", key);
            inv.put("consumerModel", "model");
            cluster.invoke(inv);
        }
        List<PendingInvocation> pending = timer.retries().stream()
                .map(s -> ((io.rpctimer.retry.FailedCall<?>) s.task()).payload())
                .map(PendingInvocation.class::cast).toList();
        assertEquals(3, pending.size());
        assertSame(pending.get(0).attachments(), pending.get(1).attachments());
        assertEquals("b", pending.get(2).attachments().get("business.key"));
        assertSame(pending.get(0).attributes(), pending.get(2).attributes());
    }

    /** The pending call has its own argument array; the caller may reuse theirs. */
    @Test
    void callerReusingItsArgumentArrayDoesNotChangeTheRetry() {
        given(providerA.invoke(any())).willThrow(TIMEOUT).willAnswer(i -> ok(i.getArgument(0)));
        RpcInvocation inv = call("notify");
        cluster("", providerA).invoke(inv);
        inv.getArguments()[0] = "changed by the caller";
        timer.fireRetry();
        ArgumentCaptor<Invocation> sent = ArgumentCaptor.forClass(Invocation.class);
        verify(providerA, times(2)).invoke(sent.capture());
        assertEquals("world", sent.getAllValues().get(1).getArguments()[0]);
    }

    /** Destroying the reference hands its pending retries over at once, not when each comes due. */
    @Test
    void destroyedReferenceHandsItsRetriesOverAtOnce() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("", providerA);
        WheelFailbackClusterInvoker<GreetingService> other = cluster("", providerB);
        given(providerB.invoke(any())).willThrow(TIMEOUT);
        cluster.invoke(call("notify"));
        cluster.invoke(call("sayHello"));
        other.invoke(call("notify"));
        cluster.destroy();
        assertEquals(2, store.size());
        assertEquals(2, events.stream().filter(e -> e.type() == RetryEvent.Type.HANDED_OVER).count());
        assertEquals(0, cluster.pendingRetries());
        assertEquals(1, other.pendingRetries(), "another reference keeps its retry");
        assertEquals(1, timer.retries().size());
    }

    /**
     * What Dubbo does on ReferenceConfig.destroy(): it destroys the directory, never the cluster
     * invoker. The runtime's sweep finds the reference gone and hands its retries over.
     */
    @Test
    void sweepHandsOverTheRetriesOfAReferenceWhoseDirectoryWasDestroyed() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        given(providerB.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("", providerA);
        Directory<GreetingService> destroyed = directory;
        WheelFailbackClusterInvoker<GreetingService> other = cluster("", providerB);
        cluster.invoke(call("notify"));
        other.invoke(call("notify"));
        runtime.sweep();
        assertEquals(0, store.size(), "nothing is gone yet");
        given(destroyed.isDestroyed()).willReturn(true);
        runtime.sweep();
        assertEquals(1, store.size());
        assertEquals(0, cluster.pendingRetries());
        assertEquals(1, other.pendingRetries());
    }

    /**
     * The sweep is on the wheel only while a retry is pending, hands over a destroyed reference's
     * retries when it runs, and leaves nothing on an idle wheel.
     */
    @Test
    void sweepRunsOnTheWheelOnlyWhileRetriesArePending() {
        ManualTimer wheel = new ManualTimer();
        FailbackRuntime sweeping = new FailbackRuntime(wheel,
                io.rpctimer.retry.SlowLaneExecutor.builder().lanes(Runnable::run, Runnable::run).build(), true);
        given(providerA.invoke(any())).willThrow(TIMEOUT).willAnswer(i -> ok(i.getArgument(0)));
        WheelFailbackClusterInvoker<GreetingService> cluster = new WheelFailbackClusterInvoker<>(
                cluster("", providerA).getDirectory(), sweeping);
        cluster.invoke(call("notify"));
        assertEquals(1, wheel.attemptTimeouts().size(), "the sweep");
        wheel.attemptTimeouts().get(0).fire();
        assertEquals(1, wheel.attemptTimeouts().size(), "rescheduled while a retry is pending");
        wheel.fireRetry(); // delivered: nothing pending
        assertTrue(wheel.attemptTimeouts().isEmpty(), "an idle wheel holds no sweep");

        willThrow(TIMEOUT).given(providerA).invoke(any()); // the mock answers if called to re-stub
        cluster.invoke(call("notify"));
        given(directory.isDestroyed()).willReturn(true);
        wheel.attemptTimeouts().get(0).fire();
        assertEquals(1, store.size(), "handed over by the sweep");
        assertTrue(wheel.attemptTimeouts().isEmpty());
        assertTrue(wheel.retries().isEmpty());
    }

    // ------------------------------------------------------------------ budget and journal

    /** The budget keys make a token bucket: past its tokens, a due retry waits instead of going out. */
    @Test
    void budgetKeysHoldBackRetriesPastTheirTokens() {
        java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
        FailbackRuntime budgeted = new FailbackRuntime(timer,
                SlowLaneExecutor.builder().lanes(Runnable::run, Runnable::run).build(), false,
                config -> config.budget(nanos::get));
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        cluster("failback.budget.ratio=0&failback.budget.minrate=1", providerA);
        WheelFailbackClusterInvoker<GreetingService> cluster = new WheelFailbackClusterInvoker<>(directory, budgeted);
        cluster.invoke(call("notify"));
        cluster.invoke(call("sayHello"));
        List<io.rpctimer.retry.VirtualTimer.Scheduled> due = timer.retries();
        assertEquals(2, due.size());
        due.get(0).fire();
        due.get(1).fire();
        verify(providerA, times(3)).invoke(any()); // two first attempts and one retry: the bucket held one token
        nanos.addAndGet(java.util.concurrent.TimeUnit.SECONDS.toNanos(1));
        timer.attemptTimeouts().get(0).fire(); // the budget's release, one token later
        verify(providerA, times(4)).invoke(any());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "failback.budget.ratio=-0.1|invalid failback.budget.ratio=-0.1",
            "failback.budget.ratio=much|invalid failback.budget.ratio=much",
            "failback.budget.minrate=-1|invalid failback.budget.minrate=-1",
            "failback.budget.ratio=0&failback.budget.minrate=0|invalid failback.budget.minrate=0 for "
                    + "io.rpctimer.dubbo.GreetingService (expected: retries per second > 0 when failback.budget.ratio"
                    + " is 0)",
            "failback.overflow=spill|invalid failback.overflow=spill for io.rpctimer.dubbo.GreetingService "
                    + "(expected: reject or log; spill needs a journal",
            "notify.failback.overflow=spill|invalid notify.failback.overflow=spill",
            "failback.store=disk|invalid failback.store=disk for io.rpctimer.dubbo.GreetingService (expected: "
                    + "embedded, memory or jdbc)",
            "failback.store=jdbc|invalid failback.store.url=null",
            "failback.store=jdbc&failback.store.url=postgres://x|invalid failback.store.url=postgres://x",
    })
    void invalidBudgetOverflowAndStoreFailAtCreationNamingKeyAndValue(String params, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> cluster(params, providerA));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    /** Dubbo registers a consumer's URL parameters in the registry: a password there is refused, never echoed. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "failback.store=jdbc&failback.store.url=jdbc:h2:mem:x&failback.store.password=s3cret"
                    + "|failback.store.password is a URL parameter of io.rpctimer.dubbo.GreetingService",
            "failback.store=memory&failback.store.password=s3cret|failback.store.password is a URL parameter",
            "failback.store=jdbc&failback.store.url=jdbc:postgresql://db/app?password=s3cret"
                    + "|failback.store.url of io.rpctimer.dubbo.GreetingService carries a password"
                    + " (jdbc:postgresql://db/app?password=***)",
            "failback.store=jdbc&failback.store.url=jdbc:mysql://app:s3cret@db/app|carries a password"
                    + " (jdbc:mysql://app:***@db/app)",
            "failback.store=jdbc&failback.store.url=jdbc:h2:mem:x;PASSWORD=s3cret|PASSWORD is a URL parameter",
    })
    void aPasswordInTheReferenceUrlIsRefusedWithoutItsValue(String params, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> cluster(params, providerA));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        assertTrue(e.getMessage().contains("rpctimer.failback.store.password"), "names the way that is not public");
        assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
    }

    /**
     * A call whose argument the reference's serialization cannot write still fails back and is retried,
     * in memory only, counted as unpersistable; the caller never sees the journal.
     */
    @Test
    void unserializableArgumentIsRetriedInMemoryAndCounted(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        given(providerA.invoke(any())).willThrow(TIMEOUT).willAnswer(i -> ok(i.getArgument(0)));
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("failback.store=embedded&failback.store.dir="
                + dir, providerA);
        ServiceModel serviceModel = mock(ServiceModel.class);
        given(serviceModel.getModuleModel()).willReturn(module);
        Object notSerializable = new NotSerializable();
        Result r = cluster.invoke(new RpcInvocation(serviceModel, "notify", SERVICE, "",
                new Class<?>[] {String.class}, new Object[] {notSerializable}));
        assertNull(r.getValue());
        io.rpctimer.retry.RetryLifecycle lifecycle = runtime.lifecycle(directory.getConsumerUrl());
        try {
            assertEquals(1, lifecycle.state().unpersistable());
            timer.fireRetry();
            assertEquals(RetryEvent.Type.DELIVERED, events.get(events.size() - 1).type());
            ArgumentCaptor<Invocation> sent = ArgumentCaptor.forClass(Invocation.class);
            verify(providerA, times(2)).invoke(sent.capture());
            assertSame(notSerializable, sent.getAllValues().get(1).getArguments()[0]);
        } finally {
            runtime.close();
        }
    }

    /** An argument class Dubbo's serializations refuse: it does not implement {@link java.io.Serializable}. */
    private static final class NotSerializable {
        @SuppressWarnings("unused")
        private final int value = 1;
    }

    // ------------------------------------------------------------------ per-method config

    /** Dubbo's failback maps a negative retries to its default (3), service or method level. */
    @ParameterizedTest
    @CsvSource({"retries=-1", "notify.retries=-5"})
    void negativeRetriesMeansTheDefault(String params) {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        cluster(params, providerA).invoke(call("notify"));
        for (int i = 0; i < 3; i++) {
            timer.fireRetry();
        }
        verify(providerA, times(4)).invoke(any());
        assertEquals(RetryEvent.Type.ABANDONED, events.get(events.size() - 1).type());
    }


    @Test
    void methodLevelKeysOverrideTheService() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster(
                "failback.delay=1000&failback.jitter=0&notify.failback.delay=50&notify.retries=1", providerA);
        cluster.invoke(call("notify"));
        cluster.invoke(call("sayHello"));
        List<Long> delays = timer.retries().stream().map(io.rpctimer.retry.VirtualTimer.Scheduled::delayMillis).toList();
        assertEquals(List.of(50L, 1000L), delays);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "retries=two|invalid retries=two for io.rpctimer.dubbo.GreetingService (expected: a whole number)",
            "retries=two|invalid retries=two",
            "failbacktasks=0|invalid failbacktasks=0",
            "failback.delay=0|invalid failback.delay=0",
            "failback.delay=soon|invalid failback.delay=soon",
            "failback.multiplier=0.5|invalid failback.multiplier=0.5",
            "failback.maxdelay=10&failback.delay=100|invalid failback.maxdelay=10",
            "failback.delay=100000|invalid failback.delay=100000 for io.rpctimer.dubbo.GreetingService (expected: "
                    + "milliseconds <= failback.maxdelay (60000))",
            "failback.jitter=2|invalid failback.jitter=2",
            "failback.retryon=,|invalid failback.retryon=,",
            // a class name that does not resolve fails now, not by never matching
            "failback.retryon=com.example.NoSuchException|invalid failback.retryon=com.example.NoSuchException",
            "failback.overflow=drop|invalid failback.overflow=drop",
            "failback.store.down=wait|invalid failback.store.down=wait for io.rpctimer.dubbo.GreetingService"
                    + " (expected: reject or memory)",
            "sayHello.failback.store.down=|invalid sayHello.failback.store.down=",
            "sayHello.failback.delay=-5|invalid sayHello.failback.delay=-5",
    })
    void invalidConfigFailsAtCreationNamingKeyAndValue(String params, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> cluster(params, providerA));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    // ------------------------------------------------------------------ listeners, store, shutdown

    @Test
    void everyFailedCallIsCountedOnceAndEndsInOneOutcome() {
        RetryStats before = WheelFailback.stats();
        given(providerA.invoke(any())).willThrow(TIMEOUT).willThrow(TIMEOUT).willThrow(TIMEOUT)
                .willAnswer(i -> ok(i.getArgument(0)));
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("retries=1", providerA);
        cluster.invoke(call("notify")); // fails
        timer.fireRetry(); // fails: abandoned after 1 retry
        cluster.invoke(call("notify")); // fails
        timer.fireRetry(); // delivered
        RetryStats after = WheelFailback.stats();
        assertEquals(2, after.failedCalls() - before.failedCalls());
        assertEquals(1, after.delivered() - before.delivered());
        assertEquals(1, after.abandoned() - before.abandoned());
        assertEquals(after.failedCalls(), after.ended() + after.pending());
    }

    /**
     * The JVM's counts are the applications' counts added up: a listener error of an application's own listener
     * shows in both, and what a closed application counted stays in the JVM's.
     */
    @Test
    void jvmStatsAddUpTheApplicationsAndKeepAClosedOnesCounts() {
        RetryStats before = WheelFailback.stats();
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        cluster("", providerA).invoke(call("notify"));
        RetryLifecycle lifecycle = runtime.lifecycle(directory.getConsumerUrl());
        lifecycle.addListener(e -> {
            throw new IllegalStateException("listener bug (expected by the test)");
        });
        timer.fireRetry(); // SENT, FAILED, SCHEDULED: each throws in the application's listener
        assertEquals(3, lifecycle.stats().listenerErrors());
        assertEquals(3, WheelFailback.stats().listenerErrors() - before.listenerErrors());
        runtime.close(); // HANDED_OVER (throws once more in the listener)
        RetryStats after = WheelFailback.stats();
        assertFalse(WheelFailback.lifecycles().contains(lifecycle));
        assertEquals(1, after.failedCalls() - before.failedCalls());
        assertEquals(1, after.handedOver() - before.handedOver());
        assertEquals(1, after.retriesSent() - before.retriesSent());
        assertEquals(4, after.listenerErrors() - before.listenerErrors());
        assertEquals(before.pending(), after.pending());
    }

    @Test
    void listenersListedInMetaInfServicesAreLoaded() {
        int before = ServiceLoadedListener.EVENTS.get();
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        cluster("", providerA).invoke(call("notify"));
        assertEquals(1, ServiceLoadedListener.CREATED.get());
        assertEquals(before + 1, ServiceLoadedListener.EVENTS.get(), "it got the SCHEDULED event");
    }

    @Test
    void listenerThatThrowsDoesNotChangeTheOutcome() {
        RetryListener bad = e -> {
            throw new IllegalStateException("listener bug (expected by the test)");
        };
        WheelFailback.addListener(bad);
        try {
            long errorsBefore = WheelFailback.stats().listenerErrors();
            given(providerA.invoke(any())).willThrow(TIMEOUT).willAnswer(i -> ok(i.getArgument(0)));
            cluster("", providerA).invoke(call("notify"));
            timer.fireRetry();
            assertEquals(RetryEvent.Type.DELIVERED, events.get(events.size() - 1).type());
            assertTrue(WheelFailback.stats().listenerErrors() >= errorsBefore + 3);
        } finally {
            WheelFailback.removeListener(bad);
        }
    }

    @Test
    void shutdownHandsPendingRetriesToTheStore() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        WheelFailbackClusterInvoker<GreetingService> cluster = cluster("", providerA);
        RpcInvocation original = call("notify");
        cluster.invoke(original);
        cluster.invoke(call("sayHello"));

        runtime.close();
        assertEquals(2, store.size());
        PendingRetry first = store.retries().get(0);
        assertEquals(SERVICE, first.service());
        assertEquals(1, first.nextAttempt());
        assertEquals(List.of("java.lang.String"), List.of(first.parameterTypes()));
        assertEquals("world", first.arguments()[0]);
        assertTrue(timer.retries().isEmpty(), "their wheel timeouts are cancelled");
        assertEquals(2, events.stream().filter(e -> e.type() == RetryEvent.Type.HANDED_OVER).count());
        assertEquals(0, cluster.pendingRetries());
    }

    @Test
    void retryDueAfterTheReferenceIsDestroyedIsHandedOver() {
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        cluster("", providerA).invoke(call("notify"));
        given(directory.isDestroyed()).willReturn(true);
        timer.fireRetry();
        verify(providerA, times(1)).invoke(any());
        assertEquals(1, store.size());
    }

    @Test
    void storeThatThrowsStillEndsTheCallVisibly() {
        WheelFailback.setRetryStore(r -> {
            throw new IllegalStateException("disk full (expected by the test)");
        });
        given(providerA.invoke(any())).willThrow(TIMEOUT);
        cluster("", providerA).invoke(call("notify"));
        runtime.close();
        RetryEvent last = events.get(events.size() - 1);
        assertEquals(RetryEvent.Type.HANDED_OVER, last.type());
        assertEquals("disk full (expected by the test)", last.failure().getMessage());
    }
}
