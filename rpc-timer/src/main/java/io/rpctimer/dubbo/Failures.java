package io.rpctimer.dubbo;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.dubbo.common.serialize.SerializationException;
import org.apache.dubbo.remoting.RemotingException;
import org.apache.dubbo.remoting.transport.ExceedPayloadLimitException;
import org.apache.dubbo.rpc.RpcException;

/**
 * Tells RPC failures (the call did not complete: network, timeout, no provider) from business exceptions (the
 * provider ran the method and it threw). Dubbo's failback only retries what {@code invoke()} throws; here the same
 * rule is applied to async results too. Failures no retry can fix — a payload over Dubbo's limit, a serialization
 * error — are not RPC failures here, even when Dubbo reports them as network errors.
 *
 * <p><b>Threading:</b> stateless, thread-safe.
 */
final class Failures {

    private Failures() {
    }

    /** @return whether {@code t} says the call did not complete, rather than that the provider's method threw */
    static boolean isRpcFailure(Throwable t) {
        Throwable f = unwrap(t);
        if (cannotSucceed(f)) {
            return false;
        }
        if (f instanceof RpcException e) {
            return !e.isBiz();
        }
        return f instanceof RemotingException || f instanceof java.util.concurrent.TimeoutException
                || f instanceof java.io.IOException;
    }

    /**
     * An exceptional completion of a reply future: an RPC failure (business exceptions come inside the reply),
     * unless no retry can fix it.
     */
    static boolean isRpcFailureOfFuture(Throwable t) {
        return !cannotSucceed(unwrap(t));
    }

    /** @return whether sending the same request again cannot succeed: too large, or not serializable */
    private static boolean cannotSucceed(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof ExceedPayloadLimitException || c instanceof SerializationException
                    || (c instanceof RpcException e && e.isSerialization())) {
                return true;
            }
        }
        return false;
    }

    /** @return whether {@code e} says that no provider could be selected (from the registry or after routing) */
    static boolean isNoProvider(RpcException e) {
        return e.isForbidden() || e.isNoInvokerAvailableAfterFilter();
    }

    /** @return {@code t} without the {@link CompletionException}/{@link ExecutionException} wrappers of futures */
    static Throwable unwrap(Throwable t) {
        Throwable f = t;
        while ((f instanceof CompletionException || f instanceof ExecutionException) && f.getCause() != null) {
            f = f.getCause();
        }
        return f;
    }
}
