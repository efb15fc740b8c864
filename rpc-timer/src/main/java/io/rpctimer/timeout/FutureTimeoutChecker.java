package io.rpctimer.timeout;

import io.rpctimer.wheel.Ticker;
import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.Timer;
import io.rpctimer.wheel.TimerTask;
import io.rpctimer.wheel.WheelTimer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import java.util.function.LongFunction;

/**
 * Times out in-flight {@link CompletableFuture}s on a timer. Futures whose deadlines fall in the same tick of the
 * timer share one wheel timeout, which checks them once, when the tick is over: a <i>batch</i> of up to
 * {@value #BATCH_SIZE} watched futures, followed by further batches of the same tick when it fills. A future that
 * completes in time clears its slot with a plain write; nothing else of it is held.
 *
 * <p>When a watched future is not done by its deadline it is completed exceptionally on the executor given to
 * {@link #watch(CompletableFuture, long, TimeUnit, LongFunction, Executor)}, or, without one, on the timer's executor
 * (never on the wheel worker). The future's dependent callbacks run on that thread, so pass the executor they belong
 * on (for an RPC, the call's own callback executor): the timer's executor is shared by every timeout of the timer,
 * and a callback that blocks there delays them all.
 *
 * <p><b>Timing:</b> never early; up to two ticks of the timer late (one for the batch, one for the wheel), plus the
 * wheel's wake-up lag: 20 ms on the shared wheel's 10 ms tick. Dubbo's own call timeout checks on a 30 ms tick.
 *
 * <p><b>Cost</b> per watched future that completes in time: one {@link Watch} (the future, its timeout and where to
 * complete it) and one CAS on a line the watching thread already holds (the watch lands in its slot), one plain store
 * on the thread that completes it (it disarms), and nothing on the wheel's worker. Per tick, per timeout and stripe
 * of watching threads: one wheel timeout, one task on the timer's executor, and an array of {@value #BATCH_SIZE}
 * references per {@value #BATCH_SIZE} futures, held until the tick is checked, so a future whose timeout is {@code T}
 * holds at most a 4-byte slot for {@code T}. The timer's {@link Timer#stats()} count those timeouts, not futures; the
 * checker counts the futures it timed out. On a timer that is not a {@link WheelTimer} (whose tick and clock the
 * batches follow) each future gets a batch, and a wheel timeout, of its own.
 *
 * <pre>{@code
 * FutureTimeoutChecker checker = new FutureTimeoutChecker(SharedWheelTimer.acquire().timer());
 * checker.watch(client.sendAsync(request), 500, TimeUnit.MILLISECONDS)
 *        .whenComplete((reply, failure) -> ...);   // failure is a TimeoutException after 500 ms
 * }</pre>
 *
 * <p><b>Threading:</b> thread-safe; {@code watch} and {@code arm} may be called from any thread, and
 * {@link Watch#disarm()} from any thread.
 */
public final class FutureTimeoutChecker {

    /** Watched futures a batch holds. */
    static final int BATCH_SIZE = 64;
    /** Lanes of open batches, by timeout: {@code 2^LANE_BITS}, times the stripes. */
    private static final int LANE_BITS = 4;
    /** Stripes of open batches, by watching thread, so that two threads seldom add to the same batch. */
    private static final int STRIPES =
            Math.min(8, Math.max(2, Integer.highestOneBit(Runtime.getRuntime().availableProcessors() * 2 - 1)));
    /** Timeouts past this many nanoseconds (about 73 years) get a batch of their own: deadlines would overflow. */
    private static final long MAX_BATCHED_NANOS = Long.MAX_VALUE / 4;
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(Watch[].class);
    private static final VarHandle NEXT;
    private static final VarHandle FOLLOWING;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            NEXT = lookup.findVarHandle(Batch.class, "next", int.class);
            FOLLOWING = lookup.findVarHandle(Batch.class, "following", Batch.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Timer timer;
    /** The timer's clock, or null for a timer that is not a {@link WheelTimer}: then no two watches share a batch. */
    private final Ticker ticker;
    /** The batches' width: the timer's tick, in nanoseconds. */
    private final long tickNanos;
    /** The batch each lane and stripe adds to, if its deadline tick is the caller's. */
    private final AtomicReferenceArray<Batch> open = new AtomicReferenceArray<>((1 << LANE_BITS) * STRIPES);
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
        this.ticker = timer instanceof WheelTimer wheel ? wheel.ticker() : null;
        this.tickNanos = timer instanceof WheelTimer wheel ? wheel.tickDurationNanos() : 1;
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
     * Completes {@code future} exceptionally if it is not done within {@code timeout}; a completion stage on the
     * future disarms the watch when it completes.
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
        Watch watch = arm(future, timeout, unit, onTimeout, completeOn);
        if (watch != null) {
            future.whenComplete(watch);
        }
        return future;
    }

    /**
     * As {@link #watch(CompletableFuture, long, TimeUnit, LongFunction, Executor)}, for a caller that already has a
     * completion callback on {@code future}: registers nothing on the future and returns the watch, which the caller
     * {@linkplain Watch#disarm() disarms} from its own callback. That saves the completion stage {@code watch} adds
     * (two objects, and their completion on the thread that completes the future). A watch the caller never disarms
     * does no harm: its batch finds the future done and leaves it alone; until then it holds the future.
     *
     * @return the watch to disarm when {@code future} completes; null if {@code future} is already done
     * @throws NullPointerException       if {@code future}, {@code unit} or {@code onTimeout} is null
     * @throws IllegalArgumentException   if {@code timeout <= 0}
     * @throws IllegalStateException      if the timer is stopped
     * @throws RejectedExecutionException if the timer refuses more timeouts
     */
    public Watch arm(CompletableFuture<?> future, long timeout, TimeUnit unit,
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
        long timeoutNanos = unit.toNanos(timeout);
        if (ticker == null || timeoutNanos > MAX_BATCHED_NANOS) {
            new Batch(Long.MIN_VALUE, watch).schedule(timer, timeoutNanos);
            return watch;
        }
        long now = ticker.nanoTime();
        // the batch of the tick the deadline falls in is checked when that tick is over
        long tick = Math.floorDiv(now + timeoutNanos, tickNanos) + 1;
        int lane = ((Long.hashCode(timeoutNanos) * 0x9E3779B9) >>> (32 - LANE_BITS)) * STRIPES + stripe();
        long delayNanos = tick * tickNanos - now;
        Batch b = open.get(lane);
        if (b != null && b.tick == tick) {
            int added = b.add(watch);
            if (added == Batch.ADDED) {
                return watch;
            }
            if (added == Batch.FULL) {
                // the tick's next batch follows this one and is checked with it, by the same wheel timeout
                Batch following = new Batch(tick, watch);
                if (open.compareAndSet(lane, b, following) && b.follow(following)) {
                    return watch;
                }
                following.schedule(timer, delayNanos); // b was replaced or checked first: on its own
                return watch;
            }
            // CHECKED: the batch ran before this watch landed in it (the thread stalled past the deadline)
        }
        Batch fresh = new Batch(tick, watch);
        fresh.schedule(timer, delayNanos); // throws before anyone else can add to it
        open.compareAndSet(lane, b, fresh); // lost to another thread's batch: this one checks only this watch
        return watch;
    }

    /** @return the calling thread's stripe: consecutive thread ids get different stripes */
    private static int stripe() {
        long id = Thread.currentThread().getId();
        return (int) (id ^ (id >>> 32)) & (STRIPES - 1);
    }

    /** @return watched futures this checker timed out */
    public long timedOut() {
        return timedOut.sum();
    }

    private static TimeoutException timeoutException(long timeoutMillis) {
        return new TimeoutException("timed out after " + timeoutMillis + " ms");
    }

    /**
     * The watched futures whose deadlines fall in one tick, and the wheel task that checks them when the tick is over,
     * with the batches that {@linkplain #follow follow} it in the same tick. A watch lands in the first free slot by a
     * CAS from null; it disarms by a plain store of {@link Watch#DISARMED}. The check marks every slot still empty,
     * and the link to a following batch if there is none yet, as checked, by CAS: a watch or batch that arrives after
     * that (its thread stalled past the deadline) finds it so and is scheduled on its own, so none is left unchecked.
     */
    static final class Batch implements TimerTask {
        static final int ADDED = 0;
        static final int FULL = 1;
        static final int CHECKED = 2;
        /** The value of {@link #following} once the batch has been checked with none following. */
        private static final Batch END = new Batch();

        /** The tick (of the timer's width, on its ticker) the deadlines fall in. */
        final long tick;
        final Watch[] slots = new Watch[BATCH_SIZE];
        /** Where the free slots start, or before: every slot below it is taken; {@link #BATCH_SIZE} once full. */
        @SuppressWarnings("unused") // through NEXT
        private int next;
        /** The batch of the same tick made when this one was full, checked with it; {@link #END} once checked. */
        @SuppressWarnings("unused") // through FOLLOWING
        private volatile Batch following;

        private Batch() {
            this.tick = Long.MIN_VALUE;
        }

        /** A batch holding {@code first}, not yet published. */
        Batch(long tick, Watch first) {
            this.tick = tick;
            first.place(this, 0);
            slots[0] = first;
            next = 1;
        }

        void schedule(Timer timer, long delayNanos) {
            timer.newTimeout(this, delayNanos, TimeUnit.NANOSECONDS);
        }

        /** @return {@link #ADDED}, {@link #FULL}, or {@link #CHECKED}: checked before the watch landed */
        int add(Watch watch) {
            // one CAS a watch: the slot's; next only hints where the free slots start, and may lag behind
            for (int i = (int) NEXT.getOpaque(this); i < BATCH_SIZE; i++) {
                watch.place(this, i);
                Watch was = (Watch) SLOTS.compareAndExchange(slots, i, null, watch);
                if (was == null) {
                    NEXT.setOpaque(this, i + 1);
                    return ADDED;
                }
                if (was == Watch.CHECKED) {
                    return CHECKED;
                }
            }
            return FULL;
        }

        /** @return whether {@code b} will be checked with this batch; false if this one was checked already */
        boolean follow(Batch b) {
            return FOLLOWING.compareAndSet(this, null, b);
        }

        @Override
        public void run(Timeout t) {
            for (Batch b = this; b != null; b = b.checkOwn()) {
                // each batch of the chain in turn
            }
        }

        /** Checks this batch's watches; @return the batch that follows it, or null */
        private Batch checkOwn() {
            for (int i = 0; i < BATCH_SIZE; i++) {
                Watch w = (Watch) SLOTS.getAcquire(slots, i);
                if (w == null && SLOTS.compareAndSet(slots, i, null, Watch.CHECKED)) {
                    continue;
                }
                w = (Watch) SLOTS.getAndSet(slots, i, Watch.CHECKED); // the lane may keep this batch: hold nothing
                if (w != Watch.DISARMED && w != Watch.CHECKED) {
                    w.expire();
                }
            }
            Batch f = (Batch) FOLLOWING.compareAndExchange(this, null, END);
            return f == null || f == END ? null : f;
        }
    }

    /**
     * One watched future: its timeout, what to complete it with and where, and its slot in a batch. Returned by
     * {@link #arm}; also the completion stage {@link #watch} registers.
     *
     * <p><b>Threading:</b> {@link #disarm()} may be called from any thread, once or more.
     */
    public static final class Watch implements BiConsumer<Object, Throwable> {
        private final FutureTimeoutChecker checker;
        private final CompletableFuture<?> future;
        private final long timeoutMillis;
        private final LongFunction<? extends Throwable> onTimeout;
        private final Executor completeOn;
        /** In a slot of a watch that completed in time: nothing of it is held. */
        static final Watch DISARMED = new Watch(null, null, 0, null, null);
        /** In a slot the batch's check has passed. */
        static final Watch CHECKED = new Watch(null, null, 0, null, null);

        /** Set before the watch is published in its slot, and read by the thread it is handed to. */
        private Batch batch;
        private int slot;

        Watch(FutureTimeoutChecker checker, CompletableFuture<?> future, long timeoutMillis,
              LongFunction<? extends Throwable> onTimeout, Executor completeOn) {
            this.checker = checker;
            this.future = future;
            this.timeoutMillis = timeoutMillis;
            this.onTimeout = onTimeout;
            this.completeOn = completeOn;
        }

        /** Before the watch lands in slot {@code i} of {@code b}. */
        void place(Batch b, int i) {
            batch = b;
            slot = i;
        }

        /**
         * Stops watching: the batch no longer holds the future. Call it once the future is done; a plain write, so
         * it never waits. A batch that reads the slot before the write lands finds the future done and leaves it.
         */
        public void disarm() {
            batch.slots[slot] = DISARMED;
        }

        /** On the timer's executor, when the batch is checked. */
        void expire() {
            if (future.isDone()) {
                return;
            }
            if (completeOn == null) {
                complete();
            } else {
                try {
                    completeOn.execute(this::complete);
                } catch (RuntimeException e) {
                    complete(); // the caller's executor is gone: complete here rather than never
                }
            }
        }

        private void complete() {
            if (future.isDone()) {
                return;
            }
            Throwable failure;
            try {
                failure = onTimeout.apply(timeoutMillis);
            } catch (RuntimeException | Error e) {
                failure = e; // the factory failed: the future still ends, with what it threw
            }
            if (future.completeExceptionally(failure != null ? failure : timeoutException(timeoutMillis))) {
                checker.timedOut.increment();
            }
        }

        @Override
        public void accept(Object result, Throwable failure) {
            disarm();
        }
    }
}
