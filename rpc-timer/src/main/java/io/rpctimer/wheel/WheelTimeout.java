package io.rpctimer.wheel;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;

/**
 * One scheduled task: the {@link Timeout} handed to the caller, the node linked into a wheel bucket, and the
 * {@link Runnable} handed to the executor when it falls due — one object, 40 bytes with compressed oops.
 *
 * <p>Concurrency: {@link #state} is the only field other threads write, always by CAS:
 * <pre>
 *   NEW ──worker transfers──▶ SCHEDULED ──worker, when due──▶ HANDING ──executor took it──▶ EXPIRED
 *    │                         │    ▲                           │  └──executor refused──▶ SCHEDULED (offered again)
 *    └──────── cancel() ───────┴────┴──────── cancel() ─────────┴──────────────────────▶ CANCELLED
 * </pre>
 * {@code HANDING} lasts while the worker is inside {@code Executor.execute}: the worker moves it to {@code EXPIRED}
 * when {@code execute} returns, or {@link #run()} does if the executor runs the task first. A cancel that wins
 * during {@code HANDING} means the task never runs, even if the executor accepted it: {@link #run()} checks. So the
 * task runs at most once, and only if its timeout ended {@code EXPIRED}. A cancel from {@code SCHEDULED} or
 * {@code HANDING} puts the node on the wheel's cancel queue so the worker unlinks and counts it; a cancel from
 * {@code NEW} needs nothing more, since the worker drops cancelled nodes as it takes them off the hand-off queue.
 * {@link #prev} and {@link #next} belong to the worker thread alone.
 */
final class WheelTimeout implements Timeout, Runnable {

    static final int ST_NEW = 0;
    static final int ST_SCHEDULED = 1;
    static final int ST_HANDING = 2;
    static final int ST_EXPIRED = 3;
    static final int ST_CANCELLED = 4;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WheelTimeout.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final TimingWheel wheel;
    final TimerTask task;
    /** Deadline in nanoseconds after the wheel's origin; {@code Long.MAX_VALUE} when the delay overflowed. */
    final long deadlineNanos;

    /** Written by CAS from any thread. */
    private volatile int state;

    /** Bucket links; worker thread only. */
    WheelTimeout prev;
    WheelTimeout next;

    WheelTimeout(TimingWheel wheel, TimerTask task, long deadlineNanos) {
        this.wheel = wheel;
        this.task = task;
        this.deadlineNanos = deadlineNanos;
    }

    int state() {
        return state;
    }

    boolean compareAndSetState(int expected, int newState) {
        return STATE.compareAndSet(this, expected, newState);
    }

    @Override
    public Timer timer() {
        return wheel.owner;
    }

    @Override
    public TimerTask task() {
        return task;
    }

    @Override
    public boolean isExpired() {
        return state == ST_EXPIRED;
    }

    @Override
    public boolean isCancelled() {
        return state == ST_CANCELLED;
    }

    @Override
    public boolean cancel() {
        for (;;) {
            int s = state;
            if (s == ST_NEW) {
                if (compareAndSetState(ST_NEW, ST_CANCELLED)) {
                    return true;
                }
            } else if (s == ST_SCHEDULED || s == ST_HANDING) {
                if (compareAndSetState(s, ST_CANCELLED)) {
                    wheel.unlinkLater(this);
                    return true;
                }
            } else {
                return false;
            }
        }
    }

    /**
     * Runs the task, unless a cancel won while the worker was handing it over; called by the executor. The worker
     * may move {@code HANDING} to {@code EXPIRED} between this method's read and its CAS, so a failed CAS reads
     * again: only {@code CANCELLED} skips the task.
     */
    @Override
    public void run() {
        for (;;) {
            int s = state;
            if (s == ST_EXPIRED || (s == ST_HANDING && compareAndSetState(ST_HANDING, ST_EXPIRED))) {
                wheel.runTask(this);
                return;
            }
            if (s != ST_HANDING) {
                return; // cancelled
            }
        }
    }

    @Override
    public String toString() {
        long remainingMillis = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - wheel.elapsedNanos());
        String when = switch (state) {
            case ST_EXPIRED -> "expired";
            case ST_CANCELLED -> "cancelled";
            default -> remainingMillis >= 0 ? "due in " + remainingMillis + " ms" : "due " + -remainingMillis + " ms ago";
        };
        return "WheelTimeout(" + when + ", task: " + task + ')';
    }
}
