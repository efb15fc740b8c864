package io.rpctimer.dubbo;

import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.profiler.Profiler;
import org.apache.dubbo.common.profiler.ProfilerEntry;
import org.apache.dubbo.common.profiler.ProfilerSwitch;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcServiceContext;
import org.apache.dubbo.rpc.support.RpcUtils;

/**
 * Sends a call's first attempt with the context Dubbo 3.3's {@code AbstractClusterInvoker.invokeWithContext} gives
 * it: the provider invoker and consumer URL in the service context for the call, the provider's socket address and
 * remote application there too (for filters, and for the caller after a sync call), the invoker in the invocation's
 * invoked list (tracing) and, when Dubbo's simple profiler is on, a profiler entry naming the target address. That
 * entry is left out for a method that returns a {@code CompletableFuture}: Dubbo's profiler times such a call only
 * until it is sent, so its slow-call warning cannot tell the target's share, and Dubbo's own failback adds no entry to
 * any call. Dubbo resolves the socket address, builds the message and looks the application up in the provider's URL
 * anew on every call; here all three are kept per provider: the address and the message once per provider address
 * whose host is an IP literal (the only kind that always resolves to the same address), the application with the URL
 * it was read from. Other hosts are resolved on every call, as Dubbo does. Dubbo 3.1 keeps no invoked list
 * ({@link DubboCompat}).
 *
 * <p><b>Threading:</b> thread-safe; one instance per cluster invoker. At most {@value #MAX_PROVIDERS} addresses are
 * kept; past that the cache starts over.
 */
final class FirstAttemptContext {

    static final int MAX_PROVIDERS = 1024;

    /**
     * What calls to one provider have in common: its URL (by identity), address, socket address, remote application
     * and profiler message.
     */
    record Remote(URL url, String address, InetSocketAddress socket, String application, String profilerMessage) {

        /** @return this remote for {@code other}, a URL of the same address; itself when {@code other} is its URL */
        Remote with(URL other) {
            return other == url ? this
                    : new Remote(other, address, socket, other.getRemoteApplication(), profilerMessage);
        }
    }

    private final ConcurrentHashMap<String, Remote> remotes = new ConcurrentHashMap<>();

    /**
     * @param context the caller's service context ({@code RpcContext.getServiceContext()})
     * @return {@code invoker}'s result for {@code invocation}, sent with the context described above
     */
    <T> Result invoke(Invoker<T> invoker, Remote remote, Invocation invocation, URL consumerUrl,
                      RpcServiceContext context) {
        Invoker<?> origin = context.getInvoker();
        context.setInvoker(invoker).setConsumerUrl(consumerUrl);
        ProfilerEntry entry = ProfilerSwitch.isEnableSimpleProfiler() && !RpcUtils.isReturnTypeFuture(invocation)
                ? enterProfiler(invocation, remote.profilerMessage()) : null;
        try {
            DubboCompat.addInvokedInvoker(invocation, invoker);
            context.setRemoteAddress(remote.socket());
            context.setRemoteApplicationName(remote.application());
            return invoker.invoke(invocation);
        } finally {
            context.setInvoker(origin);
            if (entry != null) {
                invocation.put(Profiler.PROFILER_KEY, Profiler.release(entry));
            }
        }
    }

    /**
     * Dubbo's {@code InvocationProfilerUtils.enterProfiler}, returning the entry it opened (null when the call has no
     * profiler) so that the release need not look it up again.
     */
    private static ProfilerEntry enterProfiler(Invocation invocation, String message) {
        if (invocation.get(Profiler.PROFILER_KEY) instanceof ProfilerEntry parent) {
            ProfilerEntry entry = Profiler.enter(parent, message);
            invocation.put(Profiler.PROFILER_KEY, entry);
            return entry;
        }
        return null;
    }

    /** @return what a call to {@code invoker} needs of its provider */
    Remote remote(Invoker<?> invoker) {
        URL url = invoker.getUrl();
        String address = url.getAddress();
        Remote r = remotes.get(address);
        if (r != null) {
            if (r.url() == url) {
                return r;
            }
            Remote next = r.with(url);
            remotes.replace(address, r, next); // a newer URL of the address: keep the one calls use now
            return next;
        }
        InetSocketAddress socket = url.toInetSocketAddress();
        r = new Remote(url, address, socket, url.getRemoteApplication(), "Invoker invoke. Target Address: " + address);
        if (!socket.isUnresolved() && socket.getAddress().getHostAddress().equals(url.getHost())) {
            if (remotes.size() >= MAX_PROVIDERS) {
                remotes.clear();
            }
            remotes.put(address, r);
        }
        return r;
    }
}
