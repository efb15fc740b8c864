package io.rpctimer.dubbo;

import static io.rpctimer.dubbo.DubboAttemptSender.address;

import io.rpctimer.retry.Admission;
import io.rpctimer.retry.CallOutcome;
import io.rpctimer.retry.OverflowPolicy;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryPolicy;
import io.rpctimer.retry.RetryOutcome;
import io.rpctimer.retry.RetryReference;
import io.rpctimer.wheel.Timeout;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
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
import org.apache.dubbo.rpc.RpcServiceContext;
import org.apache.dubbo.rpc.cluster.Directory;
import org.apache.dubbo.rpc.cluster.LoadBalance;
import org.apache.dubbo.rpc.cluster.support.AbstractClusterInvoker;
import org.apache.dubbo.rpc.model.MethodDescriptor;
import org.apache.dubbo.rpc.model.ServiceDescriptor;
import org.apache.dubbo.rpc.model.ServiceModel;
import org.apache.dubbo.rpc.protocol.dubbo.FutureAdapter;
import org.apache.dubbo.rpc.support.RpcUtils;

/**
 * The {@code wheelfailback} cluster invoker: Dubbo's failback, without its faults.
 *
 * <p>The first attempt goes out as the caller made it (sync or async). If it fails with a failure the policy retries
 * — a synchronous throw, an async result that completes exceptionally, "no provider available", or a business
 * exception named by {@code failback.retryon} — the call goes to this reference's {@link RetryReference}, part of the
 * application's {@link RetryLifecycle}, which owns the call's life from then on (journal, wheel, budget, outcome),
 * and the caller gets the empty result. This invoker only sends the first attempt and classifies its outcome; each
 * retry the lifecycle asks for is sent by a {@link DubboAttemptSender} through this invoker's selection, with the
 * configuration of the reference's URL now ({@link LiveConfig}). The first attempt carries the {@code retry.id} only
 * (no {@code retry.attempt}: 0). The {@code retry.id} is generated, unless the caller
 * set one as a client attachment of this call ({@code RpcContext.getClientAttachment().setAttachment("retry.id",
 * key)}), e.g. a business idempotency key; an id that arrived with the provider's own incoming call (Dubbo copies
 * those into outgoing calls) is replaced, so that two calls never share one. Past the pending cap
 * ({@code failbacktasks}) the call is {@code REJECTED}: the caller gets an {@link RpcException} unless
 * {@code failback.overflow=log}. First-attempt successes feed the reference's retry budget, and complete a
 * {@link FailbackCall} handle taken on the caller's thread.
 *
 * <p>Stream methods (Triple's client, server and bidirectional streams) never fail back: a stream cannot be replayed
 * later, so they behave as in Dubbo and the failure reaches the caller. A generic call ({@code $invoke}) is
 * configured and reported by the method it names.
 *
 * <p>A pending call keeps only what its next attempt needs ({@link PendingInvocation}), and the class and a short
 * message of its last failure. With a journal it is also serialized ({@link CallCodec}) and persisted before the
 * caller gets the empty result; when the reference is created, its service's entries in the journal are resumed. When the reference is destroyed
 * while the application runs, its pending retries are handed over within about a second ({@link FailbackRuntime}),
 * not when each comes due.
 *
 * <p><b>Threading:</b> thread-safe, as every Dubbo invoker.
 */
public class WheelFailbackClusterInvoker<T> extends AbstractClusterInvoker<T> {

    /** What every {@code retry.id} this JVM generates starts with: 48 random bits in hex, and a dash. */
    private static final String RETRY_ID_PREFIX =
            Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16) + "-";
    private static final AtomicLong CALL_IDS = new AtomicLong();

    /** The configuration of the directory's consumer URL now: a configurator may change it. */
    private final LiveConfig config;
    private final FailbackRuntime runtime;
    /** This reference's part of the application's retry lifecycle, which owns every failed call's life. */
    private final RetryReference<PendingInvocation> retries;
    /** Serializes failed calls for the journal; null when the application keeps them in memory only. */
    private final CallCodec codec;
    /** Sends first attempts as Dubbo's {@code invokeWithContext} would, without its per-call allocations. */
    private final FirstAttemptContext firstAttemptContext = new FirstAttemptContext();
    /** Makes what each failed call keeps, sharing what calls of one method have in common. */
    private final PendingInvocations pendingInvocations = new PendingInvocations();
    /** The service descriptor last asked whether it has stream methods, with its answer; see {@link #isStream}. */
    private volatile StreamMethods streamMethods = new StreamMethods(null, false);
    /**
     * The service interface, kept from creation: Dubbo 3.1's {@code StaticDirectory} reads it from its first provider
     * invoker, so it throws once the directory is destroyed, which is when the pending calls are handed over.
     */
    private final Class<T> serviceInterface;

    /**
     * @throws IllegalArgumentException naming the URL key and value, if the reference's configuration is invalid
     */
    WheelFailbackClusterInvoker(Directory<T> directory, FailbackRuntime runtime) {
        super(directory);
        this.serviceInterface = directory.getInterface();
        URL url = getUrl();
        FailbackStore.refuseSecrets(url);
        FailbackConfig initial = FailbackConfig.from(url, directory.getInterface());
        this.config = new LiveConfig(url, initial, this::getUrl, serviceInterface, this::limitsChanged);
        this.runtime = runtime;
        RetryLifecycle lifecycle = runtime.lifecycle(url);
        boolean durable = runtime.store().journal() != null;
        initial.checkStore(url, durable);
        this.codec = durable ? new CallCodec(url) : null;
        this.retries = retries(lifecycle, url, initial);
        runtime.track(retries);
        // claims the journal's entries of this service: an earlier run's, and those of instances whose lease expired
        // (then again periodically, from FailbackRuntime)
        retries.resume();
    }

    /**
     * This reference's part of the lifecycle: its retries go out through a {@link DubboAttemptSender}; a call handed
     * over without a journal goes to {@link WheelFailback#retryStore()}; it is alive while this invoker and its
     * directory are not destroyed.
     */
    private RetryReference<PendingInvocation> retries(RetryLifecycle lifecycle, URL url, FailbackConfig initial) {
        RetryReference.Builder<PendingInvocation> b = lifecycle.reference(url.getServiceKey(),
                        new DubboAttemptSender<>(new Routing(), runtime.checker()))
                .service(getInterface().getName()).policies(config::policy)
                .limits(initial.maxPending(), initial.overflow()).budget(runtime.budget(initial))
                .executor(task -> runtime.lanes().execute(this, task))
                .handOverSink(call -> WheelFailback.retryStore().handOver(
                        PendingInvocation.toPendingRetry(call, getInterface().getName(), getUrl())))
                .alive(() -> !isGone());
        if (codec != null) {
            b.decoder(entry -> {
                RpcInvocation inv = codec.decode(entry, url.getServiceModel(), url.getProtocolServiceKey());
                return pendingInvocations.of(inv, url);
            });
        }
        return b.build();
    }

    /** A configurator changed the reference's URL: new failures get the new cap and overflow policy. */
    private void limitsChanged(FailbackConfig next) {
        retries.limits(next.maxPending(), next.overflow());
    }

    /**
     * As {@link AbstractClusterInvoker#invoke}, except that "no provider available" fails back instead of reaching
     * the caller: a notification sent while every provider restarts is retried within its budget.
     */
    @Override
    public Result invoke(Invocation invocation) throws RpcException {
        checkWhetherDestroyed();
        CompletableFuture<CallOutcome> handle = FailbackCall.claim();
        // only the caller's own client attachment counts (e.g. a business key): Dubbo's ConsumerContextFilter also
        // copies a provider's incoming attachments into its outgoing calls, and with them the upstream retry.id
        Object own = RpcContext.getClientAttachment().getObjectAttachment(WheelFailback.RETRY_ID);
        Map<String, Object> attachments = invocation.getObjectAttachments(); // RpcInvocation's own map
        attachments.put(WheelFailback.RETRY_ID, own != null ? String.valueOf(own) : newRetryId());
        // the original carries no retry.attempt (absent means 0): each attachment costs every call about 250 bytes
        // of decoding and copying on the provider; an upstream one copied in by Dubbo must not pass for this call's
        attachments.remove(WheelFailback.RETRY_ATTEMPT);
        List<Invoker<T>> invokers;
        try {
            invokers = list(invocation);
            checkInvokers(invokers, invocation);
        } catch (RpcException e) {
            if (!Failures.isNoProvider(e) || isStream(invocation)) {
                throw e;
            }
            return failBack(invocation, RpcContext.getServiceContext().getConsumerUrl(), null, e, handle);
        }
        LoadBalance loadbalance = initLoadBalance(invokers, invocation);
        RpcUtils.attachInvocationIdIfAsync(getUrl(), invocation);
        return firstAttempt(invocation, invokers, loadbalance, handle);
    }

    /** @return a {@code retry.id} no other call of any JVM has: this JVM's random prefix and a count */
    private static String newRetryId() {
        return RETRY_ID_PREFIX + CALL_IDS.incrementAndGet();
    }

    @Override
    protected Result doInvoke(Invocation invocation, List<Invoker<T>> invokers, LoadBalance loadbalance)
            throws RpcException {
        return firstAttempt(invocation, invokers, loadbalance, null);
    }

    /** @param handle the caller's {@link FailbackCall} outcome handle, or null */
    private Result firstAttempt(Invocation invocation, List<Invoker<T>> invokers, LoadBalance loadbalance,
                                CompletableFuture<CallOutcome> handle) throws RpcException {
        RpcServiceContext context = RpcContext.getServiceContext();
        URL consumerUrl = context.getConsumerUrl();
        Invoker<T> invoker = null;
        Result result;
        // the timeoutcheck filter's timeout of this attempt, if it armed one: cancelled by the reply's stage below;
        // without the filter's key in the URL the filter is not in the chain, so no hand-off is opened
        Timeout armed;
        TimeoutHandOff handOff = config.get().timeoutCheckNamed() ? TimeoutHandOff.open(invocation) : null;
        FirstAttemptContext.Remote remote;
        try {
            invoker = select(loadbalance, invocation, invokers, null);
            remote = firstAttemptContext.remote(invoker);
            result = firstAttemptContext.invoke(invoker, remote, invocation, consumerUrl, context);
        } catch (RuntimeException e) {
            cancel(close(handOff)); // a filter threw after timeoutcheck armed: no reply will cancel it
            if (isStream(invocation) || !policy(invocation).retries(e, Failures.isRpcFailure(e))) {
                throw e;
            }
            return failBack(invocation, consumerUrl, address(invoker), e, handle);
        } finally {
            armed = close(handOff);
        }
        if (result instanceof AsyncRpcResult async && !async.getResponseFuture().isDone() && !isStream(invocation)) {
            // async caller: a failure shows when the future completes; swap in a future that fails back
            String provider = remote.address();
            async.setResponseFuture(async.getResponseFuture().handle((response, failure) ->
                    onFirstReply(invocation, consumerUrl, provider, armed, response, failure, handle)));
            return result;
        }
        cancel(armed); // the reply is already here
        return onReplyHere(invocation, consumerUrl, remote.address(), result, handle);
    }

    /** The first attempt's reply came with the result (a sync call, or an async one already done): classify it. */
    private Result onReplyHere(Invocation invocation, URL consumerUrl, String provider, Result result,
                               CompletableFuture<CallOutcome> handle) {
        if (isStream(invocation)) {
            if (handle != null) {
                handle.completeExceptionally(new IllegalStateException("a stream call never fails back"));
            }
            return result;
        }
        if (result instanceof AsyncRpcResult async) {
            CompletableFuture<AppResponse> reply = async.getResponseFuture();
            if (reply.isCompletedExceptionally()) {
                // e.g. an RpcException thrown by the provider's method, rethrown by Dubbo's RpcExceptionFilter:
                // here result.hasException() would itself throw
                Throwable failure = Failures.unwrap(reply.handle((r, t) -> t).join());
                if (!policy(invocation).retries(failure, Failures.isRpcFailureOfFuture(failure))) {
                    firstAttemptEnded(invocation, provider, failure, handle);
                    return result;
                }
                return failBack(invocation, consumerUrl, provider, failure, handle);
            }
        }
        Throwable failure = result.hasException() ? result.getException() : null;
        if (failure != null && policy(invocation).retries(failure, Failures.isRpcFailureInResult(failure))) {
            return failBack(invocation, consumerUrl, provider, failure, handle);
        }
        firstAttemptEnded(invocation, provider, failure, handle);
        return result;
    }

    /**
     * The first attempt is the call's end: a success (a deposit in the retry budget, {@code DELIVERED} attempt 0 for
     * the caller's handle) or a failure the policy does not retry, which the caller sees. Cheap on the success path.
     */
    private void firstAttemptEnded(Invocation invocation, String provider, Throwable failure,
                                   CompletableFuture<CallOutcome> handle) {
        if (failure == null) {
            retries.onSuccess();
        }
        if (handle == null) {
            return;
        }
        if (failure == null) {
            handle.complete(new CallOutcome(RetryOutcome.DELIVERED, invocation.getAttachment(WheelFailback.RETRY_ID),
                    0, provider, null, System.currentTimeMillis()));
        } else {
            handle.completeExceptionally(failure);
        }
    }

    private AppResponse onFirstReply(Invocation invocation, URL consumerUrl, String provider, Timeout armed,
                                     AppResponse response, Throwable failure, CompletableFuture<CallOutcome> handle) {
        cancel(armed);
        Throwable f = failure != null ? Failures.unwrap(failure) : response.hasException() ? response.getException()
                : null;
        if (f == null) {
            firstAttemptEnded(invocation, provider, null, handle);
            return response;
        }
        // an exceptional completion is an RPC failure: business exceptions come inside the response
        boolean rpcFailure = failure != null ? Failures.isRpcFailureOfFuture(f) : Failures.isRpcFailureInResult(f);
        if (!policy(invocation).retries(f, rpcFailure)) {
            firstAttemptEnded(invocation, provider, f, handle);
            if (failure != null) {
                throw failure instanceof CompletionException ce ? ce : new CompletionException(failure);
            }
            return response;
        }
        RpcException rejected = startRetrying(invocation, consumerUrl, provider, f, handle);
        if (rejected != null) {
            throw new CompletionException(rejected);
        }
        return new AppResponse(invocation);
    }

    /** @param provider the address of the provider tried, or null if none was */
    private Result failBack(Invocation invocation, URL consumerUrl, String provider, Throwable failure,
                            CompletableFuture<CallOutcome> handle) {
        RpcException rejected = startRetrying(invocation, consumerUrl, provider, failure, handle);
        if (rejected != null) {
            throw rejected;
        }
        AsyncRpcResult empty = AsyncRpcResult.newDefaultAsyncResult(invocation);
        publishFuture(invocation, empty);
        return empty;
    }

    /**
     * No provider invoker answered this call (there was none, or it threw), so do what Dubbo's protocol invoker does
     * for async callers: set the invoke mode and publish the result's future, which the proxy hands to a caller of
     * a {@code CompletableFuture} method (else that caller would get {@code null} instead of a future).
     */
    private void publishFuture(Invocation invocation, AsyncRpcResult result) {
        InvokeMode mode = RpcUtils.getInvokeMode(getUrl(), invocation);
        if (invocation instanceof RpcInvocation rpcInvocation && rpcInvocation.getInvokeMode() == null) {
            rpcInvocation.setInvokeMode(mode);
        }
        if (mode != InvokeMode.SYNC) {
            RpcContext.getServiceContext().setFuture(new FutureAdapter<>(result.getResponseFuture()));
        }
    }

    /**
     * Counts the failed call and hands it to the lifecycle, which schedules its first retry, or rejects it at the
     * pending cap.
     *
     * @return the exception the caller must get, or null if the caller gets the empty result
     */
    private RpcException startRetrying(Invocation invocation, URL consumerUrl, String provider, Throwable failure,
                                       CompletableFuture<CallOutcome> handle) {
        PendingInvocation snapshot = pendingInvocations.of(invocation, consumerUrl);
        String retryId = invocation.getAttachment(WheelFailback.RETRY_ID);
        byte[] payload = codec == null ? null : codec.encode(snapshot);
        Admission admission = retries.admit(snapshot.method(), retryId, snapshot, payload, provider, failure,
                handle != null);
        if (handle != null) {
            admission.outcome().whenComplete((outcome, t) -> {
                if (t != null) {
                    handle.completeExceptionally(t);
                } else {
                    handle.complete(outcome);
                }
            });
        }
        if (admission.kind() != Admission.Kind.REJECTED
                || config.policy(snapshot.method()).overflow() == OverflowPolicy.LOG) {
            return null;
        }
        return new RpcException(RpcException.LIMIT_EXCEEDED_EXCEPTION, "wheelfailback rejected "
                + getInterface().getName() + "." + snapshot.method() + "() retry.id=" + retryId + ": "
                + admission.reason() + "; the call failed with " + WheelFailback.describe(failure), failure);
    }

    /**
     * Has the {@link RetryReference}, which owns the hand-over, find this reference gone now, so that its pending
     * retries are handed over at once. Dubbo's own chain does not call this when a {@code ReferenceConfig} is
     * destroyed (its cluster filter invoker destroys only the directory): that case is found by
     * {@link FailbackRuntime}'s sweep.
     */
    @Override
    public void destroy() {
        super.destroy();
        runtime.check(retries);
    }

    /** Dubbo's selection and invocation, for the retries' {@link DubboAttemptSender}. */
    private final class Routing implements DubboAttemptSender.Cluster<T> {

        @Override
        public Invoker<T> select(RpcInvocation invocation, String lastProvider) {
            List<Invoker<T>> invokers = list(invocation);
            checkInvokers(invokers, invocation);
            return WheelFailbackClusterInvoker.this.select(initLoadBalance(invokers, invocation), invocation,
                    invokers, tried(invokers, lastProvider));
        }

        @Override
        public Result invoke(Invoker<T> target, RpcInvocation invocation, URL consumerUrl) {
            return invokeWithContextAsync(target, invocation, consumerUrl);
        }

        @Override
        public URL url() {
            return getUrl();
        }
    }

    /**
     * The provider tried last, to pass to {@code select()} as already selected, as Dubbo's failback does: the load
     * balancer still sees the full list (a consistent-hash ring is not rebuilt for a sub-list), and
     * {@code select()} re-selects when it picks that one and there is another.
     */
    private List<Invoker<T>> tried(List<Invoker<T>> invokers, String lastProvider) {
        if (lastProvider != null) {
            for (Invoker<T> i : invokers) {
                if (lastProvider.equals(address(i))) {
                    return Collections.singletonList(i);
                }
            }
        }
        return null;
    }

    /**
     * Dubbo's Triple tells a stream method by its descriptor's {@code RpcType}: anything but {@code UNARY} is a
     * stream (its stub returns a {@code StreamObserver} that only the first attempt could have connected). A service
     * without any stream method, the usual case, is answered without looking the method up.
     */
    private boolean isStream(Invocation invocation) {
        ServiceModel service = invocation.getServiceModel();
        ServiceDescriptor descriptor = service == null ? null : service.getServiceModel();
        if (descriptor == null) {
            return false;
        }
        StreamMethods known = streamMethods;
        if (known.descriptor() != descriptor) {
            known = new StreamMethods(descriptor, hasStreamMethod(descriptor));
            streamMethods = known;
        }
        if (!known.any()) {
            return false;
        }
        MethodDescriptor method = descriptor.getMethod(invocation.getMethodName(), invocation.getParameterTypes());
        return method != null && method.getRpcType() != MethodDescriptor.RpcType.UNARY;
    }

    private static boolean hasStreamMethod(ServiceDescriptor descriptor) {
        for (MethodDescriptor m : descriptor.getAllMethods()) {
            if (m.getRpcType() != MethodDescriptor.RpcType.UNARY) {
                return true;
            }
        }
        return false;
    }

    /** A service descriptor, and whether any of its methods is a stream. */
    private record StreamMethods(ServiceDescriptor descriptor, boolean any) {
    }

    /** @return the timeout {@code handOff} holds, or null if it is null or holds none; it is closed */
    private static Timeout close(TimeoutHandOff handOff) {
        return handOff == null ? null : handOff.close();
    }

    private RetryPolicy policy(Invocation invocation) {
        return config.policy(RpcUtils.getMethodName(invocation));
    }

    private static void cancel(Timeout t) {
        if (t != null) {
            t.cancel();
        }
    }

    @Override
    public Class<T> getInterface() {
        return serviceInterface;
    }

    /** @return whether the reference was destroyed: the {@link RetryReference}'s answer to whether it is alive */
    private boolean isGone() {
        return isDestroyed() || getDirectory().isDestroyed();
    }

    /** @return retries of this reference pending now */
    int pendingRetries() {
        return retries.pending();
    }
}
