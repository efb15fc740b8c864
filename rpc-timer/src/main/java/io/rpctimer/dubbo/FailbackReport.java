package io.rpctimer.dubbo;

import io.rpctimer.retry.LifecycleState;
import io.rpctimer.retry.ReferenceState;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.retry.RetryStep;
import io.rpctimer.wheel.TimerStats;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The text of the QoS command {@code failback} ({@link FailbackCommand}): lifecycles, references and the wheel as
 * one line each, and one call's history as one line per step. Plain text, for a terminal and for a script's
 * {@code grep}: {@code key=value} pairs, durations in milliseconds.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
final class FailbackReport {

    private FailbackReport() {
    }

    /** @return every lifecycle's state, then the wheel's stats */
    static String overview(List<RetryLifecycle> lifecycles, Optional<TimerStats> wheel) {
        StringBuilder out = new StringBuilder();
        if (lifecycles.isEmpty()) {
            out.append("no application with a wheelfailback reference\n");
        }
        for (RetryLifecycle lifecycle : lifecycles) {
            LifecycleState s = lifecycle.state();
            out.append("application ").append(s.application()).append(": ").append(counts(s.stats()))
                    .append(" resumed=").append(s.resumed()).append(" journalFailures=").append(s.journalFailures())
                    .append(" unpersistable=").append(s.unpersistable()).append(" unreadable=")
                    .append(s.unreadable()).append(" dead=").append(lifecycle.deadLetters().stats().dead())
                    .append(" journal=").append(s.journal()).append('\n');
            for (ReferenceState r : s.references()) {
                out.append("  reference ").append(r.serviceKey()).append(": pending=").append(r.pending())
                        .append(" oldestPendingAgeMillis=").append(r.oldestPendingAgeMillis())
                        .append(" waitingForBudget=").append(r.waitingForBudget()).append(" parked=")
                        .append(r.parked()).append(" budgetWaits=").append(r.budgetWaits()).append(" budget=[")
                        .append(r.budget()).append("] ").append(counts(r.stats())).append('\n');
            }
        }
        out.append(wheel.map(FailbackReport::wheel).orElse("wheel: not running"));
        return out.toString();
    }

    /** @return the recorded steps of {@code retryId}, oldest first, from every lifecycle that has some */
    static String history(String retryId, List<RetryLifecycle> lifecycles) {
        StringBuilder out = new StringBuilder();
        for (RetryLifecycle lifecycle : lifecycles) {
            for (RetryStep step : lifecycle.history(retryId)) {
                out.append(Instant.ofEpochMilli(step.epochMillis())).append(' ').append(step.type())
                        .append(" application=").append(lifecycle.application()).append(" reference=")
                        .append(step.serviceKey()).append(" method=").append(step.method()).append(" attempt=")
                        .append(step.attempt());
                append(out, " provider=", step.provider());
                if (step.delayMillis() > 0) {
                    out.append(" delayMillis=").append(step.delayMillis());
                }
                append(out, " failure=", step.failure());
                out.append('\n');
            }
        }
        if (out.length() == 0) {
            return "retry.id=" + retryId + ": no recorded step (unknown, or older than the history each application"
                    + " keeps)";
        }
        return "retry.id=" + retryId + ":\n" + out.toString().stripTrailing();
    }

    private static void append(StringBuilder out, String key, String value) {
        if (value != null) {
            out.append(key).append(value);
        }
    }

    private static String counts(RetryStats s) {
        return "failedCalls=" + s.failedCalls() + " pending=" + s.pending() + " delivered=" + s.delivered()
                + " abandoned=" + s.abandoned() + " rejected=" + s.rejected() + " handedOver=" + s.handedOver()
                + " retriesSent=" + s.retriesSent() + " retriesFailed=" + s.retriesFailed();
    }

    private static String wheel(TimerStats w) {
        return "wheel: pending=" + w.pendingTimeouts() + " scheduled=" + w.scheduledTimeouts() + " expired="
                + w.expiredTimeouts() + " cancelled=" + w.cancelledTimeouts() + " rejected=" + w.rejectedTimeouts()
                + " deferredHandOffs=" + w.deferredHandOffs() + " failedTasks=" + w.failedTasks() + " ticks="
                + w.ticks() + " lastTickLagMillis=" + millis(w.lastTickLagNanos()) + " maxTickLagMillis="
                + millis(w.maxTickLagNanos());
    }

    private static String millis(long nanos) {
        return String.format(Locale.ROOT, "%.3f", nanos / 1e6);
    }
}
