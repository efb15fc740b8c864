package io.rpctimer.demo.provider.fault;

import org.apache.dubbo.rpc.RpcException;

/**
 * Thrown on the provider by {@link FaultFilter} to fail a call at the RPC level. It never reaches the consumer as
 * itself: Dubbo turns it into an error response whose message is this exception's text (see {@link FaultFilter}).
 *
 * <p>Code {@link RpcException#LIMIT_EXCEEDED_EXCEPTION}, as Dubbo's own provider-side {@code TpsLimitFilter} and
 * {@code ExecuteLimitFilter} use when they refuse a call: the same path, the same result at the consumer. No stack
 * trace is filled in, so the consumer's message stays one line.
 *
 * <p>Immutable, so thread-safe.
 */
public final class InjectedRpcException extends RpcException {
    private static final long serialVersionUID = 1L;

    /** @param message e.g. {@code "p1@127.0.0.1:20881: injected RPC error (error 50%)"} */
    public InjectedRpcException(String message) {
        super(LIMIT_EXCEEDED_EXCEPTION, message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this; // an expected, injected failure: the stack says nothing
    }
}
