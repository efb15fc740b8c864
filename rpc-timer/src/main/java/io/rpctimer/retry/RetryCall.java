package io.rpctimer.retry;

import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.TimerTask;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * One failed call in memory: the state the {@link RetryReference} drives it through, and the task the wheel runs
 * when its retry is due. Kept small (a pending call holds its payload, a few shared strings and this object):
 * failures as {@link FailureText}, no Throwable, no history.
 *
 * <pre>
 *   admit/resume/unpark ──▶ SCHEDULED ──(wheel: due)──▶ WAITING ──(budget token)──▶ IN_FLIGHT
 *                              ▲                         (budget queue, FIFO)            │
 *                              └──────────── failed, retries left: next backoff ◀────────┤
 *   any state but ENDED ──(close, destroy, adopted elsewhere, timer stopped)──▶ ENDED: HANDED_OVER
 *   IN_FLIGHT ──delivered──▶ ENDED: DELIVERED     IN_FLIGHT ──failed, stop──▶ ENDED: ABANDONED
 * </pre>
 *
 * <p>Concurrency: {@link #state} changes only by CAS, so exactly one thread moves the call out of a state, and
 * exactly one thread ends it. {@link #attempt}, {@link #lastProvider} and {@link #lastFailure} are written only by
 * the thread that holds the call IN_FLIGHT (the reply handler); they are volatile so that a concurrent hand-over
 * reads them fresh. {@link #timeout} is written by the thread that schedules the call.
 */
final class RetryCall<P> implements FailedCall<P>, TimerTask {

    static final int SCHEDULED = 0;
    static final int WAITING = 1;
    static final int IN_FLIGHT = 2;
    static final int ENDED = 3;

    /** Where the journal stands on the call: not in it, in it, or maybe in it (its append's outcome is unknown). */
    enum Journaled { NO, YES, MAYBE }

    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<RetryCall> STATE =
            AtomicIntegerFieldUpdater.newUpdater(RetryCall.class, "state");

    final RetryReference<P> reference;
    final RetryPolicy policy;
    final CompletableFuture<CallOutcome> handle;
    private final String retryId;
    private final String method;
    private final P payload;
    private final long createdEpochMillis;
    /**
     * Whether the journal holds the call: each send is fenced, and it is removed at its outcome. Written before the
     * call is published to another thread (the set of pending calls, the wheel), and later only by the thread that
     * holds the call IN_FLIGHT, when a fence or the resolution of a MAYBE settles it.
     */
    volatile Journaled journaled = Journaled.NO;
    /** With {@link Journaled#MAYBE}: the append's eventual outcome (true: written). */
    volatile java.util.concurrent.CompletionStage<Boolean> appendResolution;
    /**
     * The call serialized for the journal, kept only while the journal does not hold it because its append failed:
     * offered to the journal again once it works (at the next attempt, or at a hand-over). Null otherwise.
     */
    volatile byte[] unjournaled;

    private volatile int state;
    private volatile int attempt;
    private volatile String lastProvider;
    private volatile String lastFailure;
    /**
     * When the journal's hand-out that fenced this call's next retry was asked for ({@link System#nanoTime()}), one
     * object shared by the calls of that hand-out; null once that retry went (or if none was fenced).
     */
    private volatile Long fencedAt;
    volatile Timeout timeout;
    /** Links in the reference's {@link PendingCalls}; null when the call is not in it. Guarded by its stripe. */
    RetryCall<?> prevPending;
    RetryCall<?> nextPending;

    RetryCall(RetryReference<P> reference, RetryPolicy policy, String retryId, String method, P payload,
              long createdEpochMillis, CompletableFuture<CallOutcome> handle) {
        this.reference = reference;
        this.policy = policy;
        this.retryId = retryId;
        this.method = method;
        this.payload = payload;
        this.createdEpochMillis = createdEpochMillis;
        this.handle = handle;
    }

    /** @return a call that is none: the head of a {@link PendingCalls} stripe */
    static RetryCall<?> sentinel() {
        return new RetryCall<>(null, null, null, null, null, 0, null);
    }

    boolean move(int from, int to) {
        return STATE.compareAndSet(this, from, to);
    }

    /** @return true if this call moved the call to ENDED (exactly one caller ever does) */
    boolean end() {
        int s;
        while ((s = state) != ENDED) {
            if (STATE.compareAndSet(this, s, ENDED)) {
                return true;
            }
        }
        return false;
    }

    int state() {
        return state;
    }

    /** The wheel's worker handed the due retry to its executor: on to the budget. */
    @Override
    public void run(Timeout t) {
        if (move(SCHEDULED, WAITING)) {
            reference.due(this);
        }
    }

    void progress(int attempt, String provider, String failure) {
        this.attempt = attempt;
        this.lastProvider = provider;
        this.lastFailure = failure;
    }

    void attempt(int attempt) {
        this.attempt = attempt;
    }

    /**
     * @param askedNanos when the hand-out that scheduled this call and fenced its next retry was asked for ({@link
     *                   System#nanoTime()}); null once that retry has gone, or failed without going
     */
    void fencedAt(Long askedNanos) {
        this.fencedAt = askedNanos;
    }

    /** @return when the hand-out that fenced this call's next retry was asked for; null if none did */
    Long fencedAt() {
        return fencedAt;
    }

    @Override
    public String retryId() {
        return retryId;
    }

    /** @return the call's key in the journal */
    CallKey key() {
        return new CallKey(reference.application(), reference.serviceKey(), method, retryId);
    }

    @Override
    public String application() {
        return reference.application();
    }

    @Override
    public String serviceKey() {
        return reference.serviceKey();
    }

    @Override
    public String method() {
        return method;
    }

    @Override
    public P payload() {
        return payload;
    }

    @Override
    public int attempt() {
        return attempt;
    }

    @Override
    public String lastProvider() {
        return lastProvider;
    }

    @Override
    public String lastFailure() {
        return lastFailure;
    }

    @Override
    public long createdEpochMillis() {
        return createdEpochMillis;
    }

    @Override
    public void sent(String provider) {
        reference.sent(this, provider);
    }

    @Override
    public String toString() {
        return "RetryCall(" + reference.serviceKey() + "." + method + "(), retry.id=" + retryId + ", attempt "
                + attempt + ", state " + state + ')';
    }
}
