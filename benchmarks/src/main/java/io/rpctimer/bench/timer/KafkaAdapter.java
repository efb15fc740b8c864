package io.rpctimer.bench.timer;

import org.apache.kafka.server.util.timer.SystemTimer;
import org.apache.kafka.server.util.timer.SystemTimerReaper;
import org.apache.kafka.server.util.timer.TimerTask;

/**
 * Kafka's {@link SystemTimer} (4.1.1) with its defaults (1 ms tick, 20 buckets per level, a hierarchy of
 * overflow wheels), driven the way Kafka's purgatories drive it: wrapped in a {@link SystemTimerReaper}, whose
 * thread loops on {@code advanceClock(200)} (it waits on a {@code DelayQueue} of buckets, up to 200 ms). Due tasks
 * run on the timer's own single-thread executor ({@code executor-<name>}).
 *
 * <p>Kafka's API makes the task its own handle ({@code TimerTask(delayMs)}, {@code cancel()}), and one task cannot
 * be scheduled twice, so a new minimal {@link TimerTask} (24 bytes) is allocated per timer: that is part of Kafka's
 * cost here. Delays are whole milliseconds, rounded up.
 *
 * <p><b>Threading:</b> thread-safe, as the timer.
 */
final class KafkaAdapter extends BenchTimer {

    static final String WORKER = "bench-kafka-reaper";

    private final SystemTimerReaper timer;
    private final Runnable onFire;

    KafkaAdapter(Runnable onFire) {
        this.timer = new SystemTimerReaper(WORKER, new SystemTimer("bench-kafka")); // starts the reaper thread
        this.onFire = onFire;
    }

    private static long toMillisRoundedUp(long nanos) {
        return (nanos + 999_999) / 1_000_000;
    }

    private TimerTask sharedTask(long delayNanos) {
        long delayMs = toMillisRoundedUp(delayNanos);
        return onFire == TimerImpl.NOOP ? new NoopTask(delayMs) : new RunTask(delayMs, onFire);
    }

    @Override
    boolean scheduleAndCancel(long delayNanos) {
        TimerTask task = sharedTask(delayNanos);
        timer.add(task);
        task.cancel();
        return true;
    }

    @Override
    void scheduleShared(long delayNanos) {
        timer.add(sharedTask(delayNanos));
    }

    @Override
    void schedule(Runnable task, long delayNanos) {
        timer.add(new RunTask(toMillisRoundedUp(delayNanos), task));
    }

    @Override
    void start() {
        // the reaper thread starts in SystemTimerReaper's constructor
    }

    @Override
    String workerThreadName() {
        return WORKER;
    }

    @Override
    public void close() {
        try {
            timer.close();
        } catch (Exception e) {
            throw new IllegalStateException("closing Kafka's timer", e);
        }
    }

    /** The smallest Kafka task: only TimerTask's own fields. */
    private static final class NoopTask extends TimerTask {
        NoopTask(long delayMs) {
            super(delayMs);
        }

        @Override
        public void run() {
        }
    }

    private static final class RunTask extends TimerTask {
        private final Runnable action;

        RunTask(long delayMs, Runnable action) {
            super(delayMs);
            this.action = action;
        }

        @Override
        public void run() {
            action.run();
        }
    }
}
