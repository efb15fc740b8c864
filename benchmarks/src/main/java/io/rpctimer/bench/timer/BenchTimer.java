package io.rpctimer.bench.timer;

/**
 * One timer implementation behind the few operations the benchmarks need, so that every case runs the same code
 * around each implementation. Each subclass builds its timer with the shared settings of {@link BenchConfig} and
 * one <i>shared task</i>, made once from the {@code onFire} callback given to {@link TimerImpl#create}, so that
 * scheduling it allocates nothing but what the timer itself allocates.
 *
 * <p>Delays are in nanoseconds; an implementation that takes milliseconds (Kafka) rounds them up.
 *
 * <p><b>Threading:</b> the thread-safe timers may be scheduled on from any thread. Agrona's wheel is
 * single-threaded: schedule on it only from inside {@link #load(Runnable)}, which every caller uses.
 */
abstract class BenchTimer implements AutoCloseable {

    /**
     * The per-call timeout pattern: schedules the shared task {@code delayNanos} ahead, then cancels it.
     *
     * @return what the cancel returned (true)
     */
    abstract boolean scheduleAndCancel(long delayNanos);

    /** Schedules the shared task {@code delayNanos} ahead and drops the handle. */
    abstract void scheduleShared(long delayNanos);

    /** Schedules {@code task} {@code delayNanos} ahead, wrapped once in the timer's own task type. */
    abstract void schedule(Runnable task, long delayNanos);

    /**
     * Runs {@code scheduling} on the thread allowed to schedule on this timer and returns when it is done: the
     * calling thread, except for Agrona (its driver thread).
     */
    void load(Runnable scheduling) {
        scheduling.run();
    }

    /** Starts the worker thread now, for timers that would start it lazily. */
    abstract void start();

    /** @return the name of the thread that moves this timer's time (its worker, reaper or driver) */
    abstract String workerThreadName();

    /** Stops the timer and its threads; pending tasks are dropped. */
    @Override
    public abstract void close();
}
