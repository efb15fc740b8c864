package io.rpctimer.wheel;

import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Schedules {@link TimerTask}s to run once after a delay.
 *
 * <p><b>Threading:</b> implementations are thread-safe: {@link #newTimeout} and {@link Timeout#cancel()} may be
 * called from any thread, concurrently.
 */
public interface Timer {

    /**
     * Schedules {@code task} to run once after {@code delay}.
     *
     * @param task  the task to run; not null
     * @param delay the delay in {@code unit}; zero or negative means "at the next tick"
     * @param unit  the unit of {@code delay}; not null
     * @return the handle of the scheduled task
     * @throws NullPointerException       if {@code task} or {@code unit} is null
     * @throws IllegalStateException      if the timer has been stopped
     * @throws RejectedExecutionException if the timer's limit of pending timeouts is reached
     */
    Timeout newTimeout(TimerTask task, long delay, TimeUnit unit);

    /**
     * Stops the timer. Idempotent: a second call returns an empty set.
     *
     * @return the timeouts that were scheduled and never ran (their tasks were neither run nor cancelled)
     * @throws IllegalStateException if called on the timer's own thread, where it would wait for itself
     */
    Set<Timeout> stop();

    /** @return a snapshot of the timer's counters, read without locks */
    TimerStats stats();
}
