package io.rpctimer.wheel;

/**
 * An immutable snapshot of a {@link WheelTimer}'s counters. The counters are kept by the wheel's worker thread and
 * published once per tick, so a snapshot is as of the worker's last tick: a timeout scheduled or cancelled since then
 * shows at the next tick.
 *
 * <p><b>Threading:</b> immutable, thread-safe.
 *
 * @param pendingTimeouts   timeouts scheduled and neither expired nor cancelled yet
 * @param scheduledTimeouts timeouts accepted by {@code newTimeout} since the timer was created
 * @param expiredTimeouts   timeouts that fell due and whose task the executor took
 * @param cancelledTimeouts timeouts cancelled before the executor took their task
 * @param rejectedTimeouts  {@code newTimeout} calls refused because {@code maxPendingTimeouts} was reached
 * @param deferredHandOffs  times the executor refused a due task, which stayed pending and was offered again at the
 *                          next tick
 * @param failedTasks       tasks that threw, and hand-offs to the executor that threw something other than
 *                          {@link java.util.concurrent.RejectedExecutionException}
 * @param ticks             ticks the wheel has moved through, including those it slept through with nothing due
 * @param lastTickLagNanos  how late, in nanoseconds, the worker's last round ran: the later of its first tick and
 *                          the earliest deadline it handed over
 * @param maxTickLagNanos   the worst tick lag seen since the timer was created, in nanoseconds
 */
public record TimerStats(
        long pendingTimeouts,
        long scheduledTimeouts,
        long expiredTimeouts,
        long cancelledTimeouts,
        long rejectedTimeouts,
        long deferredHandOffs,
        long failedTasks,
        long ticks,
        long lastTickLagNanos,
        long maxTickLagNanos) {
}
