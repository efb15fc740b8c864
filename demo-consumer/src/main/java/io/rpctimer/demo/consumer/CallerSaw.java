package io.rpctimer.demo.consumer;

/**
 * What the code that made a call got back.
 *
 * <p><b>Threading:</b> immutable.
 */
public enum CallerSaw {
    /** A reply from a provider: delivered on the first try. */
    REPLY,
    /** The failback empty result ({@code null}): a retry is on its way, or the call was rejected with overflow=log. */
    FAILED_BACK,
    /** An {@code RpcException} saying the pending-retry cap was reached: rejected, and the caller was told. */
    REJECTED,
    /** Any other exception, e.g. a provider's business exception passed through: failed, and the caller was told. */
    ERROR
}
