package io.rpctimer.retry;

import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.Timer;
import io.rpctimer.wheel.TimerTask;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The door between a reference's due retries and its {@link RetryBudget} (and, while a replay of dead letters runs,
 * its {@link Pacer}): a due retry passes at once when no retry is waiting and a token is there; otherwise it waits
 * in a FIFO queue, and one timeout on the wheel (never one per waiting retry, so 10,000 waiting retries cost the
 * wheel nothing) releases the queue's head in order as tokens come.
 *
 * <p><b>Threading:</b> thread-safe. The queue is guarded by {@code this}; the calls that pass are handed to
 * {@code pass} outside the lock. Calls ended while waiting (handed over) stay in the queue and are skipped without
 * taking a token.
 */
final class BudgetGate implements TimerTask {

    /** How often a queue that only successful calls can drain looks at the budget again. */
    static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long MIN_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final RetryBudget budget;
    /** A replay's pace on top of the budget, or null; replaced by the next replay's. */
    private volatile Pacer pacer;
    private final Timer timer;
    private final Consumer<RetryCall<?>> pass;
    private final ArrayDeque<RetryCall<?>> waiting = new ArrayDeque<>();
    private Timeout release;
    private long waits;

    BudgetGate(RetryBudget budget, Timer timer, Consumer<RetryCall<?>> pass) {
        this.budget = budget;
        this.timer = timer;
        this.pass = pass;
    }

    /** A retry fell due: pass it now, or queue it behind those already waiting. */
    void offer(RetryCall<?> call) {
        synchronized (this) {
            if (!waiting.isEmpty() || !acquire()) {
                waiting.add(call);
                waits++;
                armRelease();
                return;
            }
        }
        pass.accept(call);
    }

    /** Runs on the wheel's executor: releases the head of the queue while tokens last. */
    @Override
    public void run(Timeout t) {
        List<RetryCall<?>> released = new ArrayList<>();
        synchronized (this) {
            release = null;
            RetryCall<?> head;
            while ((head = waiting.peek()) != null) {
                if (head.state() != RetryCall.WAITING) {
                    waiting.poll();
                } else if (acquire()) {
                    released.add(waiting.poll());
                } else {
                    break;
                }
            }
            if (!waiting.isEmpty()) {
                armRelease();
            }
        }
        released.forEach(pass);
    }

    private void armRelease() {
        if (release != null) {
            return;
        }
        Pacer p = pacer;
        long untilToken = budget.nanosUntilToken();
        if (p != null) {
            untilToken = Math.max(untilToken, p.nanosUntilSlot());
        }
        long waitNanos = Math.max(MIN_WAIT_NANOS, Math.min(POLL_NANOS, untilToken));
        try {
            release = timer.newTimeout(this, waitNanos, TimeUnit.NANOSECONDS);
        } catch (IllegalStateException | RejectedExecutionException e) {
            // the wheel stopped: the application is closing, and closing hands every waiting call over
            release = null;
        }
    }

    /** @return true if the pace (if any) and the budget let one retry go now; takes a token of each */
    private boolean acquire() {
        Pacer p = pacer;
        if (p != null && !p.tryAcquire()) {
            return false;
        }
        if (budget.tryAcquire()) {
            return true;
        }
        if (p != null) {
            p.refund();
        }
        return false;
    }

    /**
     * Paces every retry that passes from now on, on top of the budget, until the pace ends: a replay's. A pace still
     * in force is kept if it is slower.
     */
    void pace(Pacer next) {
        Pacer p = pacer;
        if (p == null || !p.active() || next.perSecond() <= p.perSecond()) {
            pacer = next;
        }
    }

    /** Forgets the queue: its calls have been handed over. */
    synchronized void clear() {
        waiting.clear();
        if (release != null) {
            release.cancel();
            release = null;
        }
    }

    /** @return retries waiting for a token now */
    synchronized int waiting() {
        int n = 0;
        for (RetryCall<?> c : waiting) {
            n += c.state() == RetryCall.WAITING ? 1 : 0;
        }
        return n;
    }

    /** @return how many due retries had to wait, since the start */
    synchronized long waits() {
        return waits;
    }

    String describe() {
        return budget.describe();
    }

    RetryBudget budget() {
        return budget;
    }
}
