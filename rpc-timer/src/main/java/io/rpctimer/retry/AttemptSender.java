package io.rpctimer.retry;

import java.util.concurrent.CompletionStage;

/**
 * The glue's one job in a retry: send one attempt of a failed call asynchronously and report its reply. Everything
 * else (when, whether, how often, what happens after) is the {@link RetryLifecycle}'s.
 *
 * <p><b>Threading:</b> {@link #send} is called on the reference's dispatch executor, one attempt of a call at a time.
 * It must not wait for the reply: return a stage that completes when the reply (or the attempt's timeout) arrives,
 * on any thread. A stage that completes exceptionally, or a {@code send} that throws, counts as an RPC failure of
 * the attempt. Report a business failure as {@link AttemptResult#failed} with {@code rpcFailure == false}.
 *
 * @param <P> the glue's in-memory form of a call (e.g. a copy of its invocation)
 */
@FunctionalInterface
public interface AttemptSender<P> {

    /**
     * @param call    the call; {@link FailedCall#lastProvider()} is the provider to avoid when there is another
     * @param attempt the retry to send, 1-based (the value of the {@code retry.attempt} attachment)
     * @return the attempt's reply
     */
    CompletionStage<AttemptResult> send(FailedCall<P> call, int attempt);
}
