package io.rpctimer.retry;

import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.Timer;
import io.rpctimer.wheel.TimerStats;
import io.rpctimer.wheel.TimerTask;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A timer on virtual time that the test moves by hand: {@link #advance} runs every timeout that falls due, in due
 * order, on the test thread (the tasks scheduled meanwhile included). Can be stopped, after which
 * {@code newTimeout} throws as a stopped wheel does. Every timeout is recorded, with its delay, in
 * {@link #scheduled}. Single-threaded use.
 */
public class VirtualTimer implements Timer {

    public final List<Scheduled> scheduled = new ArrayList<>();
    /** Live ones by due time, then by the order they were scheduled. */
    private final PriorityQueue<Scheduled> queue = new PriorityQueue<>(
            Comparator.comparingLong((Scheduled s) -> s.dueNanos).thenComparingLong(s -> s.seq));
    long nowNanos;
    boolean stopped;

    @Override
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        if (stopped) {
            throw new IllegalStateException("stopped (test)");
        }
        Scheduled s = new Scheduled(task, unit.toNanos(delay), nowNanos + Math.max(0, unit.toNanos(delay)),
                scheduled.size());
        scheduled.add(s);
        queue.add(s);
        return s;
    }

    /** Moves time by {@code amount} and runs what fell due. @return how many ran */
    public int advance(long amount, TimeUnit unit) {
        long until = nowNanos + unit.toNanos(amount);
        int ran = 0;
        Scheduled next;
        while ((next = nextDue(until)) != null) {
            nowNanos = Math.max(nowNanos, next.dueNanos);
            next.fire();
            ran++;
        }
        nowNanos = until;
        return ran;
    }

    private Scheduled nextDue(long until) {
        Scheduled head;
        while ((head = queue.peek()) != null && !head.isLive()) {
            queue.poll();
        }
        return head != null && head.dueNanos <= until ? queue.poll() : null;
    }

    /** @return the live timeouts whose task is of {@code type} */
    public List<Scheduled> live(Class<?> type) {
        return scheduled.stream().filter(s -> s.isLive() && type.isInstance(s.task)).toList();
    }

    @Override
    public Set<Timeout> stop() {
        stopped = true;
        return Set.of();
    }

    @Override
    public TimerStats stats() {
        return new TimerStats(scheduled.stream().filter(Scheduled::isLive).count(), scheduled.size(), 0, 0, 0, 0, 0,
                0, 0, 0);
    }

    /** One timeout: its task, its delay and its state. */
    public final class Scheduled implements Timeout {
        final TimerTask task;
        final long delayNanos;
        final long dueNanos;
        final long seq;
        boolean cancelled;
        boolean expired;

        Scheduled(TimerTask task, long delayNanos, long dueNanos, long seq) {
            this.task = task;
            this.seq = seq;
            this.delayNanos = delayNanos;
            this.dueNanos = dueNanos;
        }

        public long delayMillis() {
            return TimeUnit.NANOSECONDS.toMillis(delayNanos);
        }

        public boolean isLive() {
            return !cancelled && !expired;
        }

        /** Runs the task now, on the calling thread. */
        public void fire() {
            expired = true;
            try {
                task.run(this);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public Timer timer() {
            return VirtualTimer.this;
        }

        @Override
        public TimerTask task() {
            return task;
        }

        @Override
        public boolean isExpired() {
            return expired;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean cancel() {
            if (!isLive()) {
                return false;
            }
            cancelled = true;
            return true;
        }
    }
}
