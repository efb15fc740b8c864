package io.rpctimer.dubbo;

import io.rpctimer.retry.AttemptResult;
import io.rpctimer.retry.AttemptSender;
import io.rpctimer.retry.FailedCall;
import io.rpctimer.timeout.FutureTimeoutChecker;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.constants.CommonConstants;
import org.apache.dubbo.rpc.AppResponse;
import org.apache.dubbo.rpc.AsyncRpcResult;
import org.apache.dubbo.rpc.InvokeMode;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.support.RpcUtils;

/**
 * Sends one retry of a {@code wheelfailback} call for the {@link io.rpctimer.retry.RetryLifecycle}: a fresh
 * invocation of the {@link PendingInvocation}, async, with the {@code retry.id} and {@code retry.attempt} attachments,
 * to a provider its cluster selects from a fresh list (avoiding the one tried last when there is another), timed out
 * by the future-timeout checker after the method's {@code timeout}. Nothing here waits for the reply.
 *
 * <p><b>Threading:</b> thread-safe; {@link #send} runs on the reference's dispatch executor and returns a stage that
 * the provider's reply or the attempt's timeout completes.
 *
 * @param <T> the service interface
 */
final class DubboAttemptSender<T> implements AttemptSender<PendingInvocation> {

    /**
     * What a retry needs of its cluster invoker: Dubbo's selection and invocation, which
     * {@link org.apache.dubbo.rpc.cluster.support.AbstractClusterInvoker} keeps protected.
     *
     * @param <T> the service interface
     */
    interface Cluster<T> {

        /**
         * @param lastProvider the provider tried last, to avoid when there is another; or null
         * @return the provider to send {@code invocation} to, from the providers listed now
         * @throws RpcException if there is none
         */
        Invoker<T> select(RpcInvocation invocation, String lastProvider);

        /** @return the result of {@code invocation} sent to {@code target} with the call's consumer URL */
        Result invoke(Invoker<T> target, RpcInvocation invocation, URL consumerUrl);

        /** @return the reference's consumer URL now (the method's {@code timeout}) */
        URL url();
    }

    private final Cluster<T> cluster;
    private final FutureTimeoutChecker checker;

    DubboAttemptSender(Cluster<T> cluster, FutureTimeoutChecker checker) {
        this.cluster = cluster;
        this.checker = checker;
    }

    /**
     * Sends retry {@code attempt} of {@code call} asynchronously, on the calling (lane) thread, and returns its reply:
     * it completes when the provider answers or the per-attempt timeout fires.
     */
    @Override
    public CompletionStage<AttemptResult> send(FailedCall<PendingInvocation> call, int attempt) {
        PendingInvocation pending = call.payload();
        RpcInvocation inv = attempt(pending, call.retryId(), attempt);
        String provider = null;
        try {
            Invoker<T> target = cluster.select(inv, call.lastProvider());
            provider = address(target);
            call.sent(provider);
            Result result = cluster.invoke(target, inv, pending.consumerUrl());
            String sentTo = provider;
            if (!(result instanceof AsyncRpcResult async)) {
                return CompletableFuture.completedFuture(reply(sentTo, result, null));
            }
            CompletableFuture<AppResponse> reply = async.getResponseFuture();
            long timeoutMillis = RpcUtils.getTimeout(cluster.url(), inv.getMethodName(),
                    RpcContext.getClientAttachment(), inv, CommonConstants.DEFAULT_TIMEOUT);
            Executor completeOn = async.getExecutor();
            checker.watch(reply, timeoutMillis, TimeUnit.MILLISECONDS, ms -> new RpcException(
                    RpcException.TIMEOUT_EXCEPTION, "wheelfailback retry " + attempt + " of retry.id="
                    + call.retryId() + " to " + sentTo + " timed out after " + ms + " ms"), completeOn);
            return reply.handle((response, failure) -> reply(sentTo, response, failure));
        } catch (Throwable t) {
            return CompletableFuture.completedFuture(AttemptResult.failed(provider, t, Failures.isRpcFailure(t)));
        }
    }

    /** A fresh invocation for one retry: async, with the retry attachments. */
    private static RpcInvocation attempt(PendingInvocation pending, String retryId, int attempt) {
        RpcInvocation inv = pending.toInvocation();
        inv.setInvokeMode(InvokeMode.ASYNC);
        inv.setAttachment(WheelFailback.RETRY_ID, retryId);
        inv.setAttachment(WheelFailback.RETRY_ATTEMPT, String.valueOf(attempt));
        return inv;
    }

    private static AttemptResult reply(String provider, Result response, Throwable failure) {
        if (failure != null) {
            return AttemptResult.failed(provider, Failures.unwrap(failure), Failures.isRpcFailureOfFuture(failure));
        }
        if (response.hasException()) {
            Throwable e = response.getException();
            return AttemptResult.failed(provider, e, Failures.isRpcFailureInResult(e));
        }
        return AttemptResult.delivered(provider);
    }

    /** @return the provider's address, as events and {@code lastProvider} name it; null for none */
    static String address(Invoker<?> invoker) {
        return invoker == null ? null : invoker.getUrl().getAddress();
    }
}
