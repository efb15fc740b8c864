package io.rpctimer.dubbo;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Predicate;
import org.apache.dubbo.remoting.RemotingException;
import org.apache.dubbo.remoting.transport.ExceedPayloadLimitException;
import org.apache.dubbo.rpc.RpcException;

/**
 * Tells RPC failures (the call did not complete: network, timeout, no provider) from business exceptions (the
 * provider ran the method and it threw). Dubbo's failback only retries what {@code invoke()} throws; here the same
 * rule is applied to async results too. Failures no retry can fix — a payload over Dubbo's limit, a serialization
 * error, a reply the provider could not encode — are not RPC failures here, even when Dubbo reports them as network
 * errors.
 *
 * <p>Cause chains are walked once per distinct throwable, so a chain with a cycle ({@code a -> b -> a}) ends.
 *
 * <p><b>Threading:</b> stateless, thread-safe.
 */
final class Failures {

    /**
     * How Dubbo's exchange codec words a {@code BAD_RESPONSE}: the provider ran the method, but encoding its reply
     * threw. The consumer gets only a {@link RemotingException} with this text, no status code.
     */
    private static final String BAD_RESPONSE_PREFIX = "Failed to send response: ";

    private Failures() {
    }

    /**
     * A failure thrown by {@code invoke()}: everything the framework throws is an RPC failure, except a business
     * {@link RpcException} and what no retry can fix.
     *
     * @return whether {@code t} says the call did not complete, rather than that the provider's method threw
     */
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
     * A failure carried inside a result ({@code Result.getException()}): what the provider's method threw comes back
     * this way, whatever its type (an {@code IOException} or a {@code TimeoutException} of the method's own), so only
     * a framework {@link RpcException} (a filter's, e.g. a timeout countdown) is an RPC failure.
     */
    static boolean isRpcFailureInResult(Throwable t) {
        Throwable f = unwrap(t);
        return f instanceof RpcException e && !e.isBiz() && !cannotSucceed(f);
    }

    /**
     * An exceptional completion of a reply future: an RPC failure (business exceptions come inside the reply),
     * unless no retry can fix it.
     */
    static boolean isRpcFailureOfFuture(Throwable t) {
        return !cannotSucceed(unwrap(t));
    }

    /** @return whether sending the same request again cannot succeed: too large, not serializable, or not encodable */
    private static boolean cannotSucceed(Throwable t) {
        return anyCause(t, c -> c instanceof ExceedPayloadLimitException || DubboCompat.isSerializationException(c)
                || (c instanceof RpcException e && e.isSerialization()) || isBadResponse(c));
    }

    private static boolean isBadResponse(Throwable t) {
        return t.getClass() == RemotingException.class && t.getMessage() != null
                && t.getMessage().startsWith(BAD_RESPONSE_PREFIX);
    }

    /** @return whether {@code t} or a cause of it matches, visiting each distinct throwable once */
    static boolean anyCause(Throwable t, Predicate<Throwable> test) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable c = t; c != null && seen.add(c); c = c.getCause()) {
            if (test.test(c)) {
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
        // bounded: wrappers whose causes form a cycle must not loop forever
        for (int depth = 0; depth < 16 && (f instanceof CompletionException || f instanceof ExecutionException)
                && f.getCause() != null; depth++) {
            f = f.getCause();
        }
        return f;
    }
}
