package io.rpctimer.dubbo;

import io.rpctimer.timeout.FutureTimeoutChecker;
import io.rpctimer.wheel.SharedWheelTimer;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.constants.CommonConstants;
import org.apache.dubbo.common.extension.Activate;
import org.apache.dubbo.rpc.AsyncRpcResult;
import org.apache.dubbo.rpc.Constants;
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
 * The consumer filter {@code timeoutcheck}: times out async calls on the shared wheel, one wheel timeout per
 * in-flight call, cancelled when the reply arrives. Off by default. {@code timeoutcheck=true} switches it on for
 * every method of a reference, {@code m.timeoutcheck=true} for method {@code m} only, and {@code m.timeoutcheck=false}
 * off for {@code m}. The timeout is the call's own (method, then reference, then consumer {@code timeout}, or an
 * RpcContext attachment), in milliseconds.
 *
 * <p>Async callers: the reply future fails with an {@link RpcException} ({@code isTimeout()}) when the time is up.
 * The future is completed on the call's own callback executor, where Dubbo completes its replies and its own
 * timeouts (Dubbo's consumer executor), so callbacks that block never hold the wheel's executor, which every other
 * timeout and retry needs.
 *
 * <p>Sync calls pass through untouched: Dubbo's own wait already bounds them, and only an untouched call keeps
 * what a sync caller relies on (its RpcContext, the reply handled on its own thread by Dubbo's ThreadlessExecutor,
 * one timer per call).
 *
 * <p>On a Dubbo line rpc-timer does not support, activating the filter fails with {@link DubboSupport}'s message.
 *
 * <p><b>Threading:</b> thread-safe. Dubbo keeps one instance per module; it borrows the shared wheel on first use
 * and gives it back when the module is destroyed ({@link ScopeCleanUp}). Calls after that go out unwatched.
 */
@Activate(group = CommonConstants.CONSUMER, value = TimeoutCheckFilter.KEY)
public class TimeoutCheckFilter implements Filter {

    /** The URL parameter that switches the filter on, per reference or per method. */
    public static final String KEY = "timeoutcheck";
    private static final int SETTINGS_BITS = 7;
    /** Slots of {@link #settings}. */
    private static final int SETTINGS_SLOTS = 1 << SETTINGS_BITS;

    /**
     * What the filter does for one method of one provider URL. Immutable, so a slot may be read and written without
     * a lock.
     *
     * @param async         whether the URL makes the method async ({@code async}, per method or reference)
     * @param timeoutMillis the method's timeout from the URL, in milliseconds; unused when off
     * @param onTimeout     makes the method's timeout exception; null when the filter is off for the method
     */
    private record Setting(URL url, String method, boolean async, long timeoutMillis,
                           LongFunction<RpcException> onTimeout) {

        boolean on() {
            return onTimeout != null;
        }
    }

    /**
     * {@link #setting}'s answers, by URL identity (URLs are immutable) and method. Each key may sit in either of two
     * slots, so two keys never push each other out; a key whose two slots are both taken by others replaces the
     * first. It keeps at most {@value #SETTINGS_SLOTS} URLs reachable.
     */
    private final Setting[] settings = new Setting[SETTINGS_SLOTS];
    private SharedWheelTimer.Lease lease; // guarded by this
    private boolean destroyed; // guarded by this
    private volatile FutureTimeoutChecker checker; // written under this

    /** @throws IllegalStateException on a Dubbo line rpc-timer does not support */
    public TimeoutCheckFilter() {
        DubboSupport.require("filter " + KEY);
    }

    @Override
    public Result invoke(Invoker<?> invoker, Invocation invocation) throws RpcException {
        URL url = invoker.getUrl();
        String method = RpcUtils.getMethodName(invocation);
        Setting setting = setting(invoker, url, method);
        if (!setting.on() || sync(invocation, setting)) {
            return invoker.invoke(invocation);
        }
        // read before invoking: an async AsyncRpcResult clears the caller's RpcContext. A call's own timeout
        // attachment wins over the URL's, as in RpcUtils.getTimeout, which reads them in this order
        long timeoutMillis = CallTimeout.millis(url, method, invocation, setting.timeoutMillis());
        Result result = invoker.invoke(invocation);
        if (timeoutMillis > 0 && result instanceof AsyncRpcResult async && !async.getResponseFuture().isDone()) {
            watch(async, url, invocation, setting.onTimeout(), timeoutMillis);
        }
        return result;
    }

    /**
     * @return whether the call is sync, as {@code RpcUtils.getInvokeMode} answers it, with the URL's {@code async}
     *     read from {@code setting}: below the cluster Dubbo has not yet set the invocation's mode on a first attempt
     */
    private static boolean sync(Invocation invocation, Setting setting) {
        InvokeMode mode = invocation instanceof RpcInvocation rpc ? rpc.getInvokeMode() : null;
        if (mode != null) {
            return mode == InvokeMode.SYNC;
        }
        return !RpcUtils.isReturnTypeFuture(invocation)
                && !setting.async()
                && !Boolean.TRUE.toString().equals(invocation.getAttachment(Constants.ASYNC_KEY));
    }

    /**
     * A call's own timeout attachment, else the URL's. Apart from the filter so that verifying the filter's class never
     * loads Dubbo 3's {@code RpcContextAttachment}: Dubbo 2.7 must be able to load the filter for it to report that
     * the line is unsupported.
     */
    private static final class CallTimeout {

        static long millis(URL url, String method, Invocation invocation, long fromUrl) {
            RpcContext context = RpcContext.getClientAttachment();
            return context.getObjectAttachment(CommonConstants.TIMEOUT_KEY) != null
                    || invocation.getObjectAttachment(CommonConstants.TIMEOUT_KEY) != null
                    ? RpcUtils.getTimeout(url, method, context, invocation, CommonConstants.DEFAULT_TIMEOUT)
                    : fromUrl;
        }
    }

    /**
     * @return what the filter does for {@code method} of {@code url}: off, or on with whether the URL makes the method
     *     async and the method's timeout from the URL (method, then reference, then consumer, else Dubbo's default).
     *     Looked up in the URL once per URL and method: Dubbo's provider URLs resolve a method parameter through
     *     several maps, and this runs on every call.
     */
    private Setting setting(Invoker<?> invoker, URL url, String method) {
        int hash = (System.identityHashCode(url) * 31 + method.hashCode()) * 0x9E3779B9;
        int first = hash >>> (32 - SETTINGS_BITS);
        Setting s = settings[first];
        if (s != null && s.url() == url && s.method().equals(method)) {
            return s;
        }
        // an odd step of 1 to 127 slots from the first: never the first itself
        int second = (first + 1 + ((hash >>> 8) & (SETTINGS_SLOTS - 2))) & (SETTINGS_SLOTS - 1);
        Setting t = settings[second];
        if (t != null && t.url() == url && t.method().equals(method)) {
            return t;
        }
        Setting made = lookUp(invoker, url, method);
        settings[s == null || t != null ? first : second] = made;
        return made;
    }

    private static Setting lookUp(Invoker<?> invoker, URL url, String method) {
        if (!url.getMethodParameter(method, KEY, false)) {
            return new Setting(url, method, false, 0, null);
        }
        String prefix = "timeoutcheck: " + invoker.getInterface().getName() + "." + method + "() to "
                + url.getAddress() + " timed out after ";
        return new Setting(url, method, url.getMethodParameter(method, Constants.ASYNC_KEY, false),
                url.getMethodPositiveParameter(method, CommonConstants.TIMEOUT_KEY, CommonConstants.DEFAULT_TIMEOUT),
                ms -> new RpcException(RpcException.TIMEOUT_EXCEPTION, prefix + ms + " ms"));
    }

    /**
     * Watches the reply. Under {@code wheelfailback}, whose invoker already has a stage on every async first attempt's
     * reply, the invoker takes the timeout and cancels it from that stage ({@link TimeoutHandOff}); otherwise the
     * checker adds a stage of its own.
     */
    private void watch(AsyncRpcResult async, URL url, Invocation invocation, LongFunction<RpcException> onTimeout,
                       long timeoutMillis) {
        FutureTimeoutChecker c = checker(url);
        if (c == null) {
            return; // destroyed: Dubbo's own timeout still ends the call
        }
        Executor completeOn = callbackExecutor(async, url);
        try {
            TimeoutHandOff handOff = TimeoutHandOff.take(invocation);
            if (handOff != null) {
                handOff.put(c.arm(async.getResponseFuture(), timeoutMillis, TimeUnit.MILLISECONDS, onTimeout,
                        completeOn));
            } else {
                c.watch(async.getResponseFuture(), timeoutMillis, TimeUnit.MILLISECONDS, onTimeout, completeOn);
            }
        } catch (IllegalStateException stopped) {
            // destroyed while this call was going out: the call is sent, Dubbo's own timeout ends it
        }
    }

    /**
     * Where Dubbo completes this call's reply: the executor its invoker gave the result (dubbo, tri and injvm all
     * set one, the consumer executor), else Dubbo's shared executor, where it handles replies that have none (Dubbo
     * 3.1 when the application has no consumer executor). Never the wheel's executor: a caller's callback that
     * blocks would hold every other timeout and retry.
     */
    private static Executor callbackExecutor(AsyncRpcResult async, URL url) {
        Executor executor = async.getExecutor();
        return executor != null ? executor : DubboCompat.sharedExecutor(url);
    }

    /** @param url the first call's URL: the module it belongs to gives the wheel back when it is destroyed */
    private FutureTimeoutChecker checker(URL url) {
        FutureTimeoutChecker c = checker;
        if (c != null) {
            return c;
        }
        synchronized (this) {
            if (checker == null && !destroyed) {
                try {
                    ScopeCleanUp.withModule(url, this::destroy);
                } catch (IllegalStateException moduleDestroyed) {
                    destroyed = true;
                    return null;
                }
                lease = SharedWheelTimer.acquire();
                checker = new FutureTimeoutChecker(lease.timer());
            }
            return checker;
        }
    }

    /** Gives the wheel back; calls from now on go out unwatched. Idempotent. */
    public synchronized void destroy() {
        destroyed = true;
        checker = null;
        if (lease != null) {
            lease.release();
            lease = null;
        }
    }
}
