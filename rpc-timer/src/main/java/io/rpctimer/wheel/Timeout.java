package io.rpctimer.wheel;

/**
 * The handle of a {@link TimerTask} scheduled on a {@link Timer}.
 *
 * <p><b>Threading:</b> thread-safe; every method may be called from any thread at any time. A timeout ends in exactly
 * one of two states: expired (its task was handed to the executor to run, once) or cancelled (its task never runs).
 */
public interface Timeout {

    /** @return the timer that created this handle */
    Timer timer();

    /** @return the task this handle runs */
    TimerTask task();

    /**
     * @return {@code true} once the timeout fell due and the executor took its task; {@code false} while it is
     *     pending (also while the executor refuses it), and forever if it was cancelled
     */
    boolean isExpired();

    /** @return {@code true} if {@link #cancel()} succeeded on this handle */
    boolean isCancelled();

    /**
     * Cancels the task, in O(1). The wheel unlinks the timeout and drops its reference within about one tick.
     *
     * @return {@code true} if this call cancelled the timeout (its task will not run); {@code false} if it had
     *     already expired or been cancelled (then the call has no effect)
     */
    boolean cancel();
}
