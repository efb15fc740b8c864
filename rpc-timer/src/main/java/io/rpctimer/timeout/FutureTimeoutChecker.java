package io.rpctimer.timeout;

import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.Timer;
import io.rpctimer.wheel.TimerTask;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import java.util.function.LongFunction;

/**
 * Times out in-flight {@link CompletableFuture}s on a timer: one wheel timeout per watched future, cancelled as soon
 * as the future completes, so a million calls that complete in time leave nothing pending on the wheel.
 *
 * <p>On expiry the future is completed exceptionally on the executor given to
 * {@link #watch(CompletableFuture, long, TimeUnit, LongFunction, Executor)}, or, without one, on the timer's executor
 * (never on the wheel worker). The future's dependent callbacks run on that thread, so pass the executor they belong
 * on (for an RPC, the call's own callback executor): the timer's executor is shared by every timeout of the timer,
 * and a callback that blocks there delays them all. The wheel task holds the future and the timeout value, nothing
 * of the call.
 *
 * <p>Per watched future that completes in time, the checker costs one wheel timeout, its task and one completion
 * callback, and counts nothing: the futures watched and cancelled are the timer's {@link Timer#stats()}
 * ({@code scheduledTimeouts}, {@code cancelledTimeouts}); the checker counts only the futures it timed out.
 *
 * <pre>{@code
 * FutureTimeoutChecker checker = new FutureTimeoutChecker(SharedWheelTimer.acquire().timer());
 * checker.watch(client.sendAsync(request), 500, TimeUnit.MILLISECONDS)
 *        .whenComplete((reply, failure) -> ...);   // failure is a TimeoutException after 500 ms
 * }</pre>
 *
 * <p><b>Threading:</b> thread-safe; {@code watch} and {@code arm} may be called from any thread.
 */
public final class FutureTimeoutChecker {

    private final Timer timer;
    private final LongAdder timedOut = new LongAdder();

    /**
     * @param timer the timer to schedule timeouts on; the checker never stops it
     * @throws NullPointerException if {@code timer} is null
     */
    public FutureTimeoutChecker(Timer timer) {
        if (timer == null) {
            throw new NullPointerException("timer: null (expected: a Timer)");
        }
        this.timer = timer;
    }

    /**
     * Completes {@code future} with a {@link TimeoutException} if it is not done within {@code timeout}.
     *
     * @return {@code future}, for chaining
     * @see #watch(CompletableFuture, long, TimeUnit, LongFunction, Executor)
     */
    public <T> CompletableFuture<T> watch(CompletableFuture<T> future, long timeout, TimeUnit unit) {
        return watch(future, timeout, unit, FutureTimeoutChecker::timeoutException, null);
    }

    /**
     * Completes {@code future} exceptionally if it is not done within {@code timeout}.
     *
     * @param future     the future to watch; not null
     * @param timeout    the time allowed, in {@code unit}; {@code > 0}
     * @param unit       the unit of {@code timeout}; not null
     * @param onTimeout  makes the exception, given the timeout in milliseconds
     * @param completeOn where to complete the future on expiry, i.e. where its callbacks run; null for the timer's
     *                   executor. If it refuses the task, the future is completed on the timer's executor instead.
     * @return {@code future}, for chaining
     * @throws NullPointerException       if {@code future}, {@code unit} or {@code onTimeout} is null
     * @throws IllegalArgumentException   if {@code timeout <= 0}
     * @throws IllegalStateException      if the timer is stopped
     * @throws RejectedExecutionException if the timer refuses more timeouts
     */
    public <T> CompletableFuture<T> watch(CompletableFuture<T> future, long timeout, TimeUnit unit,
                                          LongFunction<? extends Throwable> onTimeout, Executor completeOn) {
        Watch watch = schedule(future, timeout, unit, onTimeout, completeOn);
        if (watch != null) {
            future.whenComplete(watch);
        }
        return future;
    }

    /**
     * As {@link #watch(CompletableFuture, long, TimeUnit, LongFunction, Executor)}, for a caller that already has a
     * completion callback on {@code future}: registers nothing on the future and returns the wheel timeout, which the
     * caller cancels from its own callback. That saves the completion stage {@code watch} adds (two objects, and
     * their completion on the thread that completes the future). A timeout the caller never cancels does no harm:
     * when it falls due it finds the future done and does nothing; until then it holds the future.
     *
     * @return the timeout to cancel when {@code future} completes; null if {@code future} is already done
     * @throws NullPointerException       if {@code future}, {@code unit} or {@code onTimeout} is null
     * @throws IllegalArgumentException   if {@code timeout <= 0}
     * @throws IllegalStateException      if the timer is stopped
     * @throws RejectedExecutionException if the timer refuses more timeouts
     */
    public Timeout arm(CompletableFuture<?> future, long timeout, TimeUnit unit,
                       LongFunction<? extends Throwable> onTimeout, Executor completeOn) {
        Watch watch = schedule(future, timeout, unit, onTimeout, completeOn);
        return watch == null ? null : watch.timeout;
    }

    /** @return the scheduled watch, or null if {@code future} is done */
    private Watch schedule(CompletableFuture<?> future, long timeout, TimeUnit unit,
                           LongFunction<? extends Throwable> onTimeout, Executor completeOn) {
        if (future == null) {
            throw new NullPointerException("future: null (expected: a CompletableFuture)");
        }
        if (timeout <= 0) {
            throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
        }
        if (unit == null) {
            throw new NullPointerException("unit: null (expected: a TimeUnit)");
        }
        if (onTimeout == null) {
            throw new NullPointerException("onTimeout: null (expected: an exception factory)");
        }
        if (future.isDone()) {
            return null;
        }
        Watch watch = new Watch(this, future, unit.toMillis(timeout), onTimeout, completeOn);
        watch.timeout = timer.newTimeout(watch, timeout, unit);
        return watch;
    }

    /** @return watched futures this checker timed out */
    public long timedOut() {
        return timedOut.sum();
    }

    private static TimeoutException timeoutException(long timeoutMillis) {
        return new TimeoutException("timed out after " + timeoutMillis + " ms");
    }

    /**
     * The wheel task of one watched future, and, for {@code watch}, the future's completion callback that cancels
     * it. It holds the future and the timeout value only.
     */
    private static final class Watch implements TimerTask, BiConsumer<Object, Throwable> {
        private final FutureTimeoutChecker checker;
        private final CompletableFuture<?> future;
        private final long timeoutMillis;
        private final LongFunction<? extends Throwable> onTimeout;
        private final Executor completeOn;
        /** Set before the completion callback is registered, which publishes it to the completing thread. */
        Timeout timeout;

        Watch(FutureTimeoutChecker checker, CompletableFuture<?> future, long timeoutMillis,
              LongFunction<? extends Throwable> onTimeout, Executor completeOn) {
            this.checker = checker;
            this.future = future;
            this.timeoutMillis = timeoutMillis;
            this.onTimeout = onTimeout;
            this.completeOn = completeOn;
        }

        @Override
        public void run(Timeout t) {
            if (future.isDone()) {
                return;
            }
            if (completeOn == null) {
                expire();
            } else {
                try {
                    completeOn.execute(this::expire);
                } catch (RejectedExecutionException e) {
                    expire(); // the caller's executor is gone: complete here rather than never
                }
            }
        }

        private void expire() {
            if (!future.isDone() && future.completeExceptionally(onTimeout.apply(timeoutMillis))) {
                checker.timedOut.increment();
            }
        }

        @Override
        public void accept(Object result, Throwable failure) {
            timeout.cancel();
        }
    }
}
