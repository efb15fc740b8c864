package io.rpctimer.dubbo;

import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.profiler.ProfilerSwitch;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.InvocationProfilerUtils;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.RpcServiceContext;

/**
 * Sends a call's first attempt with the context Dubbo 3.3's {@code AbstractClusterInvoker.invokeWithContext} gives
 * it: the provider invoker and consumer URL in the service context for the call, the provider's socket address and
 * remote application there too (for filters, and for the caller after a sync call), the invoker in the invocation's
 * invoked list (tracing) and, when Dubbo's simple profiler is on, a profiler entry naming the target address. Dubbo
 * resolves that socket address and builds that message anew on every call (two allocations a call that do not depend
 * on the call); here both are made once per provider address whose host is an IP literal, the only kind that always
 * resolves to the same address. Other hosts are resolved on every call, as Dubbo does. Dubbo 3.1 keeps no invoked
 * list ({@link DubboCompat}).
 *
 * <p><b>Threading:</b> thread-safe; one instance per cluster invoker. At most {@value #MAX_PROVIDERS} addresses are
 * kept; past that the cache starts over.
 */
final class FirstAttemptContext {

    static final int MAX_PROVIDERS = 1024;

    /** What a call to one provider address needs that is the same for every call. */
    private record Remote(InetSocketAddress socket, String profilerMessage) {
    }

    private final ConcurrentHashMap<String, Remote> remotes = new ConcurrentHashMap<>();

    /** @return {@code invoker}'s result for {@code invocation}, sent with the context described above */
    <T> Result invoke(Invoker<T> invoker, Invocation invocation, URL consumerUrl) {
        Remote remote = remote(invoker.getUrl());
        RpcServiceContext context = RpcContext.getServiceContext();
        Invoker<?> origin = context.getInvoker();
        context.setInvoker(invoker).setConsumerUrl(consumerUrl);
        try {
            if (ProfilerSwitch.isEnableSimpleProfiler()) {
                InvocationProfilerUtils.enterProfiler(invocation, remote.profilerMessage());
            }
            DubboCompat.addInvokedInvoker(invocation, invoker);
            context.setRemoteAddress(remote.socket());
            context.setRemoteApplicationName(invoker.getUrl().getRemoteApplication());
            return invoker.invoke(invocation);
        } finally {
            context.setInvoker(origin);
            InvocationProfilerUtils.releaseSimpleProfiler(invocation);
        }
    }

    private Remote remote(URL url) {
        String address = url.getAddress();
        Remote r = remotes.get(address);
        if (r != null) {
            return r;
        }
        InetSocketAddress socket = url.toInetSocketAddress();
        r = new Remote(socket, "Invoker invoke. Target Address: " + address);
        if (!socket.isUnresolved() && socket.getAddress().getHostAddress().equals(url.getHost())) {
            if (remotes.size() >= MAX_PROVIDERS) {
                remotes.clear();
            }
            remotes.put(address, r);
        }
        return r;
    }
}
