package io.rpctimer.wheel;

/**
 * A task to run after the delay given to {@link Timer#newTimeout}.
 *
 * <p><b>Threading:</b> a {@link WheelTimer} runs the task on its executor, never on the wheel's worker thread, so a
 * task may block without delaying other timeouts (it only occupies one executor thread). Tasks due in the same tick
 * may run concurrently and in any order.
 */
@FunctionalInterface
public interface TimerTask {

    /**
     * Runs once, after the delay, unless the timeout was cancelled first.
     *
     * @param timeout the handle returned by {@link Timer#newTimeout} for this task
     * @throws Exception anything; it is logged and counted in {@link TimerStats#failedTasks()}, and the timer goes on
     */
    void run(Timeout timeout) throws Exception;
}
