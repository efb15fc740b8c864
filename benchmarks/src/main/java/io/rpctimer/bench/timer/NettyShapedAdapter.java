package io.rpctimer.bench.timer;

import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A timer with Netty's shape: {@code newTimeout(task, delay, unit)} returns a handle whose {@code cancel()} says
 * whether it cancelled. Netty's, Dubbo's and rpc-timer's wheels have it, each with its own types, which a subclass
 * names with method references; the operations the benchmarks run are written once, here.
 *
 * <p><b>Threading:</b> thread-safe, as the timers.
 *
 * @param <W> the timer
 * @param <T> the timer's task type
 * @param <O> the timer's timeout handle
 */
abstract class NettyShapedAdapter<W, T, O> extends BenchTimer {

    /** A timer's {@code newTimeout}, e.g. {@code HashedWheelTimer::newTimeout}. */
    @FunctionalInterface
    interface NewTimeout<W, T, O> {
        O newTimeout(W timer, T task, long delay, TimeUnit unit);
    }

    private final String worker;
    private final W timer;
    private final NewTimeout<W, T, O> newTimeout;
    private final Predicate<O> cancel;
    private final Function<Runnable, T> tasks;
    private final T shared;

    /**
     * @param worker     the name of the timer's worker thread
     * @param timer      the timer, built with {@link BenchConfig}'s settings
     * @param newTimeout the timer's {@code newTimeout}
     * @param cancel     the handle's {@code cancel()}
     * @param tasks      wraps an action in the timer's task type
     * @param onFire     the shared task's action
     */
    NettyShapedAdapter(String worker, W timer, NewTimeout<W, T, O> newTimeout, Predicate<O> cancel,
                       Function<Runnable, T> tasks, Runnable onFire) {
        this.worker = worker;
        this.timer = timer;
        this.newTimeout = newTimeout;
        this.cancel = cancel;
        this.tasks = tasks;
        this.shared = tasks.apply(onFire);
    }

    W timer() {
        return timer;
    }

    @Override
    final boolean scheduleAndCancel(long delayNanos) {
        return cancel.test(newTimeout.newTimeout(timer, shared, delayNanos, TimeUnit.NANOSECONDS));
    }

    @Override
    final void scheduleShared(long delayNanos) {
        newTimeout.newTimeout(timer, shared, delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    final void schedule(Runnable task, long delayNanos) {
        newTimeout.newTimeout(timer, tasks.apply(task), delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    final String workerThreadName() {
        return worker;
    }
}
