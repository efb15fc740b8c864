package io.rpctimer.dubbo;

import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.dubbo.common.constants.CommonConstants;
import org.apache.dubbo.common.extension.Activate;
import org.apache.dubbo.rpc.AsyncRpcResult;
import org.apache.dubbo.rpc.Filter;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcException;

/**
 * A test consumer filter, on with {@code replythreadprobe=true}, that sits below every other filter and records
 * which executor Dubbo gave the call for its reply and which thread completed the reply. Dubbo calls filter
 * listeners once at the top of the chain, so the probe looks at the reply future itself.
 *
 * <p><b>Threading:</b> thread-safe; the last call's observations win.
 */
@Activate(group = CommonConstants.CONSUMER, value = ReplyThreadProbe.KEY, order = 1_000_000)
public class ReplyThreadProbe implements Filter {

    static final String KEY = "replythreadprobe";
    static final AtomicReference<Thread> REPLY_THREAD = new AtomicReference<>();
    static final AtomicReference<Executor> CALLBACK_EXECUTOR = new AtomicReference<>();

    @Override
    public Result invoke(Invoker<?> invoker, Invocation invocation) throws RpcException {
        Result result = invoker.invoke(invocation);
        if (result instanceof AsyncRpcResult async) {
            CALLBACK_EXECUTOR.set(async.getExecutor());
            async.getResponseFuture().whenComplete((r, e) -> REPLY_THREAD.set(Thread.currentThread()));
        }
        return result;
    }
}
