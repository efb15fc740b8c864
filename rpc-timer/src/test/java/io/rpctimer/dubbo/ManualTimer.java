package io.rpctimer.dubbo;

import io.rpctimer.retry.FailedCall;
import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.Timer;
import io.rpctimer.wheel.TimerStats;
import io.rpctimer.wheel.TimerTask;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A timer the test drives by hand: it records every timeout with its delay, and runs one when told, on the test
 * thread. Single-threaded use.
 */
final class ManualTimer implements Timer {

    final List<Scheduled> scheduled = new ArrayList<>();

    @Override
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        Scheduled s = new Scheduled(task, unit.toNanos(delay));
        scheduled.add(s);
        return s;
    }

    /** @return the live timeouts whose task is a failed call's retry */
    List<Scheduled> retries() {
        return scheduled.stream().filter(s -> s.task instanceof FailedCall && s.isLive()).toList();
    }

    /** @return the live timeouts of the future-timeout checker */
    List<Scheduled> attemptTimeouts() {
        return scheduled.stream().filter(s -> !(s.task instanceof FailedCall) && s.isLive()).toList();
    }

    /** Runs the only live retry timeout. */
    Scheduled fireRetry() {
        List<Scheduled> live = retries();
        if (live.size() != 1) {
            throw new AssertionError("expected one pending retry, found " + live.size());
        }
        live.get(0).fire();
        return live.get(0);
    }

    @Override
    public Set<Timeout> stop() {
        return Set.of();
    }

    @Override
    public TimerStats stats() {
        return new TimerStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    }

    final class Scheduled implements Timeout {
        final TimerTask task;
        final long delayNanos;
        boolean cancelled;
        boolean expired;

        Scheduled(TimerTask task, long delayNanos) {
            this.task = task;
            this.delayNanos = delayNanos;
        }

        long delayMillis() {
            return TimeUnit.NANOSECONDS.toMillis(delayNanos);
        }

        boolean isLive() {
            return !cancelled && !expired;
        }

        void fire() {
            expired = true;
            try {
                task.run(this);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public Timer timer() {
            return ManualTimer.this;
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
