package io.rpctimer.dubbo;

import io.rpctimer.wheel.Timeout;
import org.apache.dubbo.rpc.Invocation;

/**
 * Hands the {@code timeoutcheck} filter's wheel timeout of a first attempt to the {@code wheelfailback} invoker that
 * sends it. The invoker already has a completion stage on every async reply (the one that fails back a failure), so
 * it cancels the timeout there, and the filter registers no stage of its own
 * ({@link io.rpctimer.timeout.FutureTimeoutChecker#arm}): that saves the stage's two objects on the caller's thread,
 * and their completion on the thread that completes the reply, which reads what the caller's thread wrote.
 *
 * <p>The filter runs inside the invoker's call, on its thread: the invoker {@link #open}s the hand-off for its
 * invocation (when the reference's URL names the filter's key, which is what puts the filter in the chain), the
 * filter {@link #take}s it if it is open for the invocation it sees, else registers its own stage, and the invoker
 * {@link #close}s it when the filter chain returns, with the timeout or null. A call sent from inside another's
 * filter chain on the same thread gets a hand-off of its own and gives the outer one back when it closes.
 *
 * <p><b>Threading:</b> one hand-off per thread (a thread local); each instance is used by its thread only.
 */
final class TimeoutHandOff {

    private static final ThreadLocal<TimeoutHandOff> CURRENT = ThreadLocal.withInitial(TimeoutHandOff::new);

    /** The invocation whose first attempt this thread is sending, or null. */
    private Invocation invocation;
    private Timeout timeout;
    /** The hand-off of the call this one is sent from, or null. */
    private TimeoutHandOff outer;

    private TimeoutHandOff() {
    }

    /** Opens this thread's hand-off for {@code invocation}; {@link #close()} it in a {@code finally}. */
    static TimeoutHandOff open(Invocation invocation) {
        TimeoutHandOff h = CURRENT.get();
        if (h.invocation != null) { // sent from inside another call's filter chain: keep that one's
            TimeoutHandOff nested = new TimeoutHandOff();
            nested.outer = h;
            CURRENT.set(nested);
            h = nested;
        }
        h.invocation = invocation;
        return h;
    }

    /** @return this thread's hand-off if it is open for {@code invocation} and still empty, else null */
    static TimeoutHandOff take(Invocation invocation) {
        TimeoutHandOff h = CURRENT.get();
        return h.invocation == invocation && h.timeout == null ? h : null;
    }

    /** The filter's part: the timeout the invoker must cancel when the reply completes. */
    void put(Timeout t) {
        timeout = t;
    }

    /** @return the filter's timeout, or null if it armed none; the hand-off is closed */
    Timeout close() {
        Timeout t = timeout;
        timeout = null;
        invocation = null;
        if (outer != null) {
            CURRENT.set(outer);
            outer = null;
        }
        return t;
    }
}
