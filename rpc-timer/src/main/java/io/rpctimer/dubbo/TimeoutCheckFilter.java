package io.rpctimer.dubbo;

import io.rpctimer.timeout.FutureTimeoutChecker;
import io.rpctimer.wheel.SharedWheelTimer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.dubbo.common.constants.CommonConstants;
import org.apache.dubbo.common.extension.Activate;
import org.apache.dubbo.common.resource.Disposable;
import org.apache.dubbo.remoting.RemotingException;
import org.apache.dubbo.rpc.AppResponse;
import org.apache.dubbo.rpc.AsyncRpcResult;
import org.apache.dubbo.rpc.Filter;
import org.apache.dubbo.rpc.InvokeMode;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.support.RpcUtils;

/**
 * The consumer filter {@code timeoutcheck}: times out every call on the shared wheel, one wheel timeout per
 * in-flight call, cancelled when the reply arrives. Off by default; on for a reference with the parameter
 * {@code timeoutcheck=true}. The timeout is the call's own (method, then reference, then consumer {@code timeout},
 * or an RpcContext attachment), in milliseconds.
 *
 * <p>Async callers: the reply future fails with an {@link RpcException} ({@code isTimeout()}) when the time is up.
 * Sync callers: the call goes out asynchronously below this filter and the caller waits here for the future the
 * wheel times out, then gets the reply or a thrown {@code RpcException} as from Dubbo's own wait. The reply is then
 * handled on Dubbo's shared consumer executor rather than the caller's thread.
 *
 * <p><b>Threading:</b> thread-safe. Dubbo keeps one instance per module; it borrows the shared wheel on first use
 * and gives it back when the module is destroyed.
 */
@Activate(group = CommonConstants.CONSUMER, value = TimeoutCheckFilter.KEY)
public class TimeoutCheckFilter implements Filter, Disposable {

    /** The URL parameter that switches the filter on. */
    public static final String KEY = "timeoutcheck";

    /** How long past its timeout a sync caller waits if the wheel has stopped, in milliseconds. */
    private static final long SAFETY_MARGIN_MILLIS = 1_000;

    private SharedWheelTimer.Lease lease; // guarded by this
    private volatile FutureTimeoutChecker checker; // written under this

    @Override
    public Result invoke(Invoker<?> invoker, Invocation invocation) throws RpcException {
        long timeoutMillis = RpcUtils.getTimeout(invoker.getUrl(), RpcUtils.getMethodName(invocation),
                RpcContext.getClientAttachment(), invocation, CommonConstants.DEFAULT_TIMEOUT);
        if (timeoutMillis <= 0) {
            return invoker.invoke(invocation);
        }
        boolean sync = RpcUtils.getInvokeMode(invoker.getUrl(), invocation) == InvokeMode.SYNC;
        if (!sync) {
            Result result = invoker.invoke(invocation);
            watch(result, invoker, invocation, timeoutMillis);
            return result;
        }
        if (!(invocation instanceof RpcInvocation rpcInvocation)) {
            return invoker.invoke(invocation); // cannot switch it to async: Dubbo's own wait applies
        }
        rpcInvocation.setInvokeMode(InvokeMode.ASYNC);
        Result result;
        try {
            result = invoker.invoke(invocation);
        } finally {
            rpcInvocation.setInvokeMode(InvokeMode.SYNC);
        }
        CompletableFuture<AppResponse> reply = watch(result, invoker, invocation, timeoutMillis);
        return reply == null ? result : awaitReply(reply, invoker, invocation, timeoutMillis);
    }

    private CompletableFuture<AppResponse> watch(Result result, Invoker<?> invoker, Invocation invocation,
                                                 long timeoutMillis) {
        if (!(result instanceof AsyncRpcResult async) || async.getResponseFuture().isDone()) {
            return null;
        }
        CompletableFuture<AppResponse> reply = async.getResponseFuture();
        checker().watch(reply, timeoutMillis, TimeUnit.MILLISECONDS, ms -> new RpcException(
                RpcException.TIMEOUT_EXCEPTION, "timeoutcheck: " + invoker.getInterface().getName() + "."
                + RpcUtils.getMethodName(invocation) + "() to " + invoker.getUrl().getAddress()
                + " timed out after " + ms + " ms"), null);
        return reply;
    }

    private static Result awaitReply(CompletableFuture<AppResponse> reply, Invoker<?> invoker, Invocation invocation,
                                     long timeoutMillis) {
        try {
            return AsyncRpcResult.newDefaultAsyncResult(
                    reply.get(timeoutMillis + SAFETY_MARGIN_MILLIS, TimeUnit.MILLISECONDS), invocation);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException("interrupted while waiting for " + RpcUtils.getMethodName(invocation) + "()", e);
        } catch (TimeoutException e) {
            throw new RpcException(RpcException.TIMEOUT_EXCEPTION, "timeoutcheck: no reply from "
                    + invoker.getUrl().getAddress() + " within " + timeoutMillis + " ms", e);
        } catch (ExecutionException e) {
            Throwable cause = Failures.unwrap(e);
            if (cause instanceof RpcException rpc) {
                throw rpc;
            }
            int code = cause instanceof org.apache.dubbo.remoting.TimeoutException ? RpcException.TIMEOUT_EXCEPTION
                    : cause instanceof RemotingException ? RpcException.NETWORK_EXCEPTION
                    : RpcException.UNKNOWN_EXCEPTION;
            throw new RpcException(code, "failed to invoke " + RpcUtils.getMethodName(invocation) + "() on "
                    + invoker.getUrl().getAddress() + ": " + cause, cause);
        }
    }

    private FutureTimeoutChecker checker() {
        FutureTimeoutChecker c = checker;
        if (c != null) {
            return c;
        }
        synchronized (this) {
            if (checker == null) {
                lease = SharedWheelTimer.acquire();
                checker = new FutureTimeoutChecker(lease.timer());
            }
            return checker;
        }
    }

    @Override
    public synchronized void destroy() {
        if (lease != null) {
            lease.release();
            lease = null;
            checker = null;
        }
    }
}
