package io.rpctimer.retry;

import java.util.function.LongSupplier;

/**
 * A replay's pace, enforced where every retry of a reference passes ({@link BudgetGate}): at most one send every
 * {@code 1/perSecond} seconds, until a deadline, after which it lets everything through. The due times a replay writes
 * already space its calls; this keeps the spacing when they reach the wheel late (a slow move, a slow unpark, a
 * loaded machine), so that a backlog of overdue calls drains at the pace instead of all at once.
 *
 * <p>A virtual schedule (GCRA, with a tolerance of one interval): a send is allowed when the clock has reached its
 * slot less one interval, and the next slot is one interval after the later of this slot and now; so the first send
 * goes at once, and a release that ran late sends at most two at once, never a backlog.
 *
 * <p><b>Threading:</b> thread-safe (synchronized; a few arithmetic operations per due retry).
 */
final class Pacer {

    private final long intervalNanos;
    private final long untilNanos;
    private final LongSupplier nanoTime;
    /** The slot of the next send; guarded by this. */
    private long slotNanos;

    /**
     * @param perSecond  sends per second, {@code > 0}
     * @param untilNanos when the pace ends, in {@code nanoTime}'s terms
     * @param nanoTime   the clock, nanoseconds
     */
    Pacer(double perSecond, long untilNanos, LongSupplier nanoTime) {
        this.intervalNanos = Math.max(1, (long) (1e9 / perSecond));
        this.untilNanos = untilNanos;
        this.nanoTime = nanoTime;
        this.slotNanos = nanoTime.getAsLong() + intervalNanos;
    }

    /** @return true if one send may go now (and takes its slot) */
    synchronized boolean tryAcquire() {
        long now = nanoTime.getAsLong();
        if (now - untilNanos >= 0) {
            return true;
        }
        if (now - (slotNanos - intervalNanos) < 0) {
            return false;
        }
        slotNanos = Math.max(slotNanos, now) + intervalNanos;
        return true;
    }

    /** Gives back the slot {@link #tryAcquire} took, when the send could not go after all (no budget token). */
    synchronized void refund() {
        slotNanos -= intervalNanos;
    }

    /** @return nanoseconds until {@link #tryAcquire} may allow a send, 0 if now */
    synchronized long nanosUntilSlot() {
        long now = nanoTime.getAsLong();
        return now - untilNanos >= 0 ? 0 : Math.max(0, slotNanos - intervalNanos - now);
    }

    /** @return the pace in sends per second */
    double perSecond() {
        return 1e9 / intervalNanos;
    }

    /** @return whether the pace still applies */
    boolean active() {
        return nanoTime.getAsLong() - untilNanos < 0;
    }
}
