package io.rpctimer.dubbo;

import io.rpctimer.retry.CallOutcome;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * One call through a {@code wheelfailback} reference, with a handle to what finally became of it:
 * <pre>{@code
 * FailbackCall<String> c = FailbackCall.of(() -> notifier.send(message));
 * c.result();                        // what the call returned: null when it failed back
 * c.outcome().thenAccept(o -> ...);  // DELIVERED (attempt 0: the first try; k: retry k), ABANDONED,
 *                                    // REJECTED, or HANDED_OVER (with a journal: persisted, resumes at the next start)
 * }</pre>
 * It works for sync and async methods: the handle is taken on the caller's thread when the call enters the
 * {@code wheelfailback} cluster, and filled when the first reply arrives (a success: {@code DELIVERED} attempt 0) or,
 * for a call that failed back, when its retries end. No listener and no {@code retry.id} bookkeeping.
 *
 * <p>{@link #outcome()} completes exceptionally when the call was not made through a {@code wheelfailback} reference
 * ({@link IllegalStateException}), or when it failed to the caller with an exception that is not retried (a
 * business exception, a failure no retry can fix): that exception. When the supplier makes several calls, the first
 * {@code wheelfailback} call is the one followed.
 *
 * <p><b>Threading:</b> {@link #of} runs the call on the calling thread; the handle completes on the thread that ends
 * the call (a Dubbo I/O thread, a retry lane, or the thread that closes the application). The object is safe to
 * share once {@link #of} returned.
 *
 * @param <R> what the call returns
 */
public final class FailbackCall<R> {

    private static final ThreadLocal<FailbackCall<?>> OPEN = new ThreadLocal<>();
    /**
     * How many {@link #of} calls run now, on any thread: while none does, {@link #claim} answers without looking up
     * the thread local (a lookup of a thread local the thread does not have walks its whole probe sequence).
     */
    private static final AtomicInteger RUNNING = new AtomicInteger();

    private final CompletableFuture<CallOutcome> outcome = new CompletableFuture<>();
    /** Whether a wheelfailback invoker took the handle; written and read on the calling thread only. */
    private boolean claimed;
    private R result;
    private RuntimeException failure;

    private FailbackCall() {
    }

    /**
     * Makes the call now, on this thread, and follows it.
     *
     * @param call the call, e.g. {@code () -> service.send(message)}; not null
     * @return the call, with its result and its outcome handle; never throws what the call threw (see {@link #result()})
     */
    public static <R> FailbackCall<R> of(Supplier<R> call) {
        if (call == null) {
            throw new NullPointerException("call: null (expected: a call to a wheelfailback reference)");
        }
        FailbackCall<R> c = new FailbackCall<>();
        FailbackCall<?> outer = OPEN.get();
        OPEN.set(c);
        RUNNING.incrementAndGet();
        try {
            c.result = call.get();
        } catch (RuntimeException e) {
            c.failure = e;
            c.outcome.completeExceptionally(e); // no effect when the call already has its outcome (REJECTED)
        } finally {
            RUNNING.decrementAndGet();
            if (outer == null) {
                OPEN.remove();
            } else {
                OPEN.set(outer);
            }
        }
        if (!c.claimed) {
            c.outcome.completeExceptionally(new IllegalStateException("the call was not made through a "
                    + WheelFailbackCluster.NAME + " reference"));
        }
        return c;
    }

    /**
     * @return what the call returned (for a failed-back call: the empty result, null, or a future of null)
     * @throws RuntimeException what the call threw to the caller
     */
    public R result() {
        if (failure != null) {
            throw failure;
        }
        return result;
    }

    /** @return the call's eventual outcome; see the class javadoc */
    public CompletionStage<CallOutcome> outcome() {
        return outcome;
    }

    /**
     * Called by the invoker on the caller's thread as a call enters the cluster.
     *
     * @return the handle of the call being followed on this thread, or null if none (or it is already taken)
     */
    static CompletableFuture<CallOutcome> claim() {
        if (RUNNING.get() == 0) {
            return null;
        }
        FailbackCall<?> c = OPEN.get();
        if (c == null || c.claimed) {
            return null;
        }
        c.claimed = true;
        return c.outcome;
    }
}
