package io.rpctimer.retry;

/**
 * The reply to one retry, as the glue that sent it reports it to the {@link RetryLifecycle}: delivered, or failed.
 * Whether a failed attempt is retried is the {@link RetryPolicy}'s decision (its budget, and
 * {@link RetryPolicy#retries(Throwable, boolean)} for the kind of failure), taken when the result arrives; the
 * failure itself is not kept past that moment (only its class and a short message, at most 120 characters).
 *
 * <p><b>Threading:</b> immutable.
 */
public final class AttemptResult {

    private final String provider;
    private final Throwable failure;
    private final boolean rpcFailure;

    private AttemptResult(String provider, Throwable failure, boolean rpcFailure) {
        this.provider = provider;
        this.failure = failure;
        this.rpcFailure = rpcFailure;
    }

    /** @param provider the provider ({@code host:port}) that took the retry, or null */
    public static AttemptResult delivered(String provider) {
        return new AttemptResult(provider, null, false);
    }

    /**
     * @param provider   the provider ({@code host:port}) the retry went to, or null if none was selected
     * @param failure    what the retry failed with; not null
     * @param rpcFailure whether the glue classified it as an RPC failure (network, timeout, no provider), which the
     *                   policy always retries; false for a business exception from the provider
     */
    public static AttemptResult failed(String provider, Throwable failure, boolean rpcFailure) {
        if (failure == null) {
            throw new NullPointerException("failure: null (expected: what the retry failed with)");
        }
        return new AttemptResult(provider, failure, rpcFailure);
    }

    public boolean isDelivered() {
        return failure == null;
    }

    /** @return the provider of the attempt, or null */
    public String provider() {
        return provider;
    }

    /** @return the failure, or null if delivered */
    public Throwable failure() {
        return failure;
    }

    public boolean rpcFailure() {
        return rpcFailure;
    }

    @Override
    public String toString() {
        return isDelivered() ? "delivered via " + provider
                : "failed via " + provider + ": " + FailureText.of(failure) + (rpcFailure ? " (rpc)" : "");
    }
}
