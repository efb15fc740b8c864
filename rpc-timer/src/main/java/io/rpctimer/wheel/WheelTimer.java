package io.rpctimer.wheel;

import java.lang.System.Logger.Level;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.locks.LockSupport;

/**
 * A hashed timing wheel timer, of the Netty {@code HashedWheelTimer} design, whose worker thread only moves time:
 * it files new timeouts, unlinks cancelled ones and hands due tasks to an {@link Executor}. It never runs a
 * {@link TimerTask} and never waits on anything but the clock, so a slow or blocking task delays no other timeout.
 *
 * <pre>{@code
 * WheelTimer timer = WheelTimer.builder().tickDuration(10, TimeUnit.MILLISECONDS).build();
 * Timeout t = timer.newTimeout(timeout -> System.out.println("late!"), 200, TimeUnit.MILLISECONDS);
 * t.cancel();      // O(1), from any thread
 * timer.stop();    // returns the timeouts that never ran
 * }</pre>
 *
 * <p><b>Threading:</b> thread-safe. {@link #newTimeout} and {@link Timeout#cancel()} are O(1) and lock-free: new
 * timeouts reach the worker through multi-producer queues striped by producer thread, cancellations by a CAS on the
 * timeout.
 *
 * <h3>Tick duration</h3>
 * Time advances in ticks ({@link Builder#tickDuration}, default 10 ms, at least 1 ms). A timeout runs at the first
 * tick at or after its deadline: never early, up to one tick late, plus the worker's wake-up lag. Timeouts due in
 * the same tick run in no particular order.
 *
 * <p>The worker does not tick through ticks with nothing due. Idle (nothing arrived or fell due for a few ticks), it
 * sleeps until the next tick that has work (at most 1 s), and a new timeout due sooner or a cancellation wakes it.
 * While timeouts keep arriving it sleeps at most 100 ms (less when more than about 4,096 would arrive meanwhile), and
 * only a new timeout due sooner wakes it: a cancel waits for the wake. No sleep makes a timeout late. It never parks
 * longer than 1 s, even if the {@link Ticker} steps back. After a long pause (a suspended process) it catches up in
 * steps of the ticks that have work, not tick by tick.
 *
 * <h3>Wheel size and far-future timeouts</h3>
 * Each level of the wheel has {@link Builder#ticksPerWheel} buckets (default 512, rounded up to a power of two).
 * Timeouts beyond one level's span sit in coarser levels and move down as time approaches, so the cost of a tick
 * depends on what falls due, not on how many timeouts are pending far ahead.
 *
 * <h3>Executor</h3>
 * By default due tasks run on a small pool of daemon threads owned by the timer ({@code max(2, cores)} threads,
 * named {@code rpc-timer-executor-N}), shut down by {@link #stop()}. A caller-supplied executor is not shut down.
 * <i>Saturation policy:</i> a timeout is expired only once the executor took its task. If the executor throws
 * {@link RejectedExecutionException}, the worker neither blocks nor drops the task: the timeout stays pending (it can
 * still be cancelled, and it counts against {@link Builder#maxPendingTimeouts}), and the worker offers it and every
 * task due after it again at the next tick, in order; each refusal is counted in
 * {@link TimerStats#deferredHandOffs()}. Tasks still refused at {@link #stop()} are returned by it as never run. Any
 * other throwable from {@code execute} may come after the executor queued the task, so the timeout counts as expired
 * and is never offered twice; the failure is counted in {@link TimerStats#failedTasks()}. Both are logged: the first
 * with its stack trace, then at most one line per 10 s.
 *
 * <h3>Do not create many instances</h3>
 * Each timer has its own thread. Share one: {@link SharedWheelTimer} is the JVM-wide instance. A warning is logged
 * when more than {@value #INSTANCE_COUNT_WARNING} timers are alive at once.
 */
public final class WheelTimer implements Timer {

    /** Alive timers above which a warning is logged once. */
    public static final int INSTANCE_COUNT_WARNING = 64;

    private static final System.Logger LOG = System.getLogger(WheelTimer.class.getName());
    private static final long MIN_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The longest an idle worker sleeps when nothing is due sooner (1 s). */
    private static final long MAX_NAP_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int MAX_TICKS_PER_WHEEL = 1 << 30;
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    private static final AtomicBoolean WARNED_TOO_MANY = new AtomicBoolean();
    private static final AtomicInteger TIMER_IDS = new AtomicInteger();

    private static final int ST_INIT = 0;
    private static final int ST_STARTED = 1;
    private static final int ST_STOPPED = 2;
    private static final AtomicIntegerFieldUpdater<WheelTimer> STATE =
            AtomicIntegerFieldUpdater.newUpdater(WheelTimer.class, "state");

    private final TimingWheel wheel;
    private final Ticker ticker;
    private final Thread worker;
    private final ExecutorService ownedExecutor;
    private final CountDownLatch workerDone = new CountDownLatch(1);
    /** The {@link SharedWheelTimer} instance: stopped by its last lease, never by a holder's {@code stop()}. */
    private final boolean shared;
    private volatile int state = ST_INIT;
    /** Written by the worker before it counts down {@link #workerDone}. */
    private volatile Set<Timeout> unprocessed = Set.of();

    private WheelTimer(Builder b) {
        int id = TIMER_IDS.incrementAndGet();
        this.ticker = b.ticker;
        this.shared = b.shared;
        this.ownedExecutor = b.executor == null ? newDefaultExecutor(id) : null;
        Executor executor = b.executor == null ? ownedExecutor : b.executor;
        this.wheel = new TimingWheel(this, b.ticker, b.tickNanos(), b.normalizedTicksPerWheel(),
                b.maxPendingTimeouts, executor, TimingWheel.LOG);
        this.worker = new Thread(this::runWorker, b.threadName != null ? b.threadName : "rpc-timer-wheel-" + id);
        this.worker.setDaemon(true);
        if (INSTANCES.incrementAndGet() > INSTANCE_COUNT_WARNING && WARNED_TOO_MANY.compareAndSet(false, true)) {
            LOG.log(Level.WARNING, "more than " + INSTANCE_COUNT_WARNING + " WheelTimer instances are alive; each "
                    + "has a thread: share one, e.g. SharedWheelTimer");
        }
    }

    /** @return a builder with the defaults: 10 ms tick, 512 ticks per wheel, no pending limit, default executor */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Starts the worker thread on the first call.
     */
    @Override
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        ensureStarted();
        WheelTimeout timeout = wheel.schedule(task, delay, unit);
        // stop() may have drained the queue before our offer landed: take the timeout back, unless the worker's
        // final drain claimed it (then stop() returns it).
        if (state == ST_STOPPED && timeout.compareAndSetState(WheelTimeout.ST_NEW, WheelTimeout.ST_CANCELLED)) {
            throw stoppedException();
        }
        return timeout;
    }

    private void ensureStarted() {
        for (;;) {
            switch (state) {
                case ST_STARTED:
                    return;
                case ST_INIT:
                    if (STATE.compareAndSet(this, ST_INIT, ST_STARTED)) {
                        startWorker();
                        return;
                    }
                    break;
                default:
                    throw stoppedException();
            }
        }
    }

    private void startWorker() {
        try {
            if (ownedExecutor instanceof ThreadPoolExecutor pool) {
                pool.prestartAllCoreThreads(); // so the first due tasks do not wait for thread creation
            }
            worker.start();
        } catch (Throwable t) {
            state = ST_STOPPED;
            workerDone.countDown();
            throw t;
        }
    }

    private static IllegalStateException stoppedException() {
        return new IllegalStateException("timer stopped: newTimeout is not allowed after stop()");
    }

    /**
     * {@inheritDoc}
     *
     * <p>Waits for the worker to finish its current tick and exit. Tasks already handed to the executor still run;
     * the default executor is shut down after them. A task of this timer may stop it.
     *
     * @throws IllegalStateException if called on the worker thread (a task run by an executor that runs tasks on
     *                               the calling thread), or if this is the {@link SharedWheelTimer}: release the
     *                               lease instead
     */
    @Override
    public Set<Timeout> stop() {
        if (shared) {
            throw new IllegalStateException("the shared timer is stopped by releasing the last lease, not by stop()");
        }
        return stopNow();
    }

    /** Stops the timer, shared or not: waits for the worker, which never waits for a task, so any other thread may. */
    Set<Timeout> stopNow() {
        if (Thread.currentThread() == worker) {
            throw new IllegalStateException("stop() called on the timer's worker thread (its executor runs tasks on"
                    + " the calling thread): stop it from another thread");
        }
        int previous = STATE.getAndSet(this, ST_STOPPED);
        if (previous == ST_STOPPED) {
            return Set.of();
        }
        INSTANCES.decrementAndGet();
        Set<Timeout> left = Set.of();
        if (previous == ST_STARTED) {
            LockSupport.unpark(worker);
            boolean interrupted = false;
            while (true) {
                try {
                    workerDone.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            left = unprocessed;
        }
        if (ownedExecutor != null) {
            ownedExecutor.shutdown();
        }
        return left;
    }

    @Override
    public TimerStats stats() {
        return wheel.stats();
    }

    /** @return the tick duration in nanoseconds, after the 1 ms floor */
    public long tickDurationNanos() {
        return wheel.tickNanos;
    }

    /** @return whether the worker is napping past the next tick because the wheel is idle (tests) */
    boolean isNapping() {
        return wheel.isIdleNapping();
    }

    /** @return how many naps producers ended by waking the worker (tests) */
    long producerWakes() {
        return wheel.producerWakes();
    }

    /** @return how many timers are alive (created and not stopped) in this JVM */
    static int aliveInstances() {
        return INSTANCES.get();
    }

    /** @return the buckets per level, after rounding up to a power of two */
    public int ticksPerWheel() {
        return wheel.wheelSize();
    }

    private void runWorker() {
        try {
            wheel.start(ticker.nanoTime());
            while (state == ST_STARTED) {
                long sleepNanos;
                try {
                    wheel.advance(ticker.nanoTime());
                    // measure again: a tick that handed over many timeouts took time, and the next is due on time
                    sleepNanos = wheel.sleepNanos(ticker.nanoTime(), MAX_NAP_NANOS);
                } catch (Throwable t) {
                    LOG.log(Level.ERROR, "wheel worker caught an unexpected error; it goes on", t);
                    sleepNanos = wheel.tickNanos;
                }
                if (state != ST_STARTED) {
                    break;
                }
                LockSupport.parkNanos(this, sleepNanos);
                wheel.awake();
                Thread.interrupted(); // an interrupt must not turn parkNanos into a busy loop
            }
        } finally {
            unprocessed = wheel.drainUnprocessed();
            workerDone.countDown();
        }
    }

    private static ExecutorService newDefaultExecutor(int timerId) {
        int threads = Math.max(2, Runtime.getRuntime().availableProcessors());
        AtomicInteger n = new AtomicInteger();
        return new ThreadPoolExecutor(threads, threads, 0L, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "rpc-timer-executor-" + timerId + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public String toString() {
        return "WheelTimer(" + worker.getName() + ", " + wheel + ')';
    }

    /**
     * Builds a {@link WheelTimer}. Every setter checks its argument.
     *
     * <p><b>Threading:</b> not thread-safe; use from one thread.
     */
    public static final class Builder {
        private long tickDuration = 10;
        private TimeUnit tickUnit = TimeUnit.MILLISECONDS;
        private int ticksPerWheel = 512;
        private long maxPendingTimeouts = -1;
        private Executor executor;
        private Ticker ticker = Ticker.system();
        private String threadName;
        private boolean shared;

        private Builder() {
        }

        /**
         * @param duration the time between ticks in {@code unit}; below 1 ms it is raised to 1 ms with a warning
         * @param unit     the unit of {@code duration}
         * @throws IllegalArgumentException if {@code duration <= 0}
         * @throws NullPointerException     if {@code unit} is null
         */
        public Builder tickDuration(long duration, TimeUnit unit) {
            if (duration <= 0) {
                throw new IllegalArgumentException("tickDuration: " + duration + " (expected: > 0)");
            }
            if (unit == null) {
                throw new NullPointerException("unit: null (expected: a TimeUnit)");
            }
            this.tickDuration = duration;
            this.tickUnit = unit;
            return this;
        }

        /**
         * @param ticksPerWheel buckets per level; rounded up to a power of two (at least 2)
         * @throws IllegalArgumentException if {@code ticksPerWheel <= 0} or {@code > 2^30}
         */
        public Builder ticksPerWheel(int ticksPerWheel) {
            if (ticksPerWheel <= 0) {
                throw new IllegalArgumentException("ticksPerWheel: " + ticksPerWheel + " (expected: > 0)");
            }
            if (ticksPerWheel > MAX_TICKS_PER_WHEEL) {
                throw new IllegalArgumentException("ticksPerWheel: " + ticksPerWheel + " (expected: <= "
                        + MAX_TICKS_PER_WHEEL + ")");
            }
            this.ticksPerWheel = ticksPerWheel;
            return this;
        }

        /**
         * @param maxPendingTimeouts the number of pending timeouts past which {@code newTimeout} throws
         *                           {@link RejectedExecutionException}; {@code <= 0} means no limit (the default)
         */
        public Builder maxPendingTimeouts(long maxPendingTimeouts) {
            this.maxPendingTimeouts = maxPendingTimeouts;
            return this;
        }

        /**
         * @param executor runs due tasks; the timer does not shut it down. A direct executor ({@code Runnable::run})
         *                 would make the worker run tasks and defeat the design: use one only in tests.
         * @throws NullPointerException if {@code executor} is null
         */
        public Builder executor(Executor executor) {
            if (executor == null) {
                throw new NullPointerException("executor: null (expected: an Executor)");
            }
            this.executor = executor;
            return this;
        }

        /**
         * @param ticker the clock, in nanoseconds
         * @throws NullPointerException if {@code ticker} is null
         */
        public Builder ticker(Ticker ticker) {
            if (ticker == null) {
                throw new NullPointerException("ticker: null (expected: a Ticker)");
            }
            this.ticker = ticker;
            return this;
        }

        /**
         * @param threadName the worker thread's name
         * @throws NullPointerException if {@code threadName} is null
         */
        public Builder threadName(String threadName) {
            if (threadName == null) {
                throw new NullPointerException("threadName: null (expected: a name)");
            }
            this.threadName = threadName;
            return this;
        }

        Builder shared() {
            this.shared = true;
            return this;
        }

        long tickNanos() {
            long nanos = tickUnit.toNanos(tickDuration);
            if (nanos < MIN_TICK_NANOS) {
                LOG.log(Level.WARNING, "tickDuration: " + tickDuration + " " + tickUnit + " is below 1 ms; using 1 ms");
                return MIN_TICK_NANOS;
            }
            return nanos;
        }

        int normalizedTicksPerWheel() {
            int n = Math.max(2, ticksPerWheel);
            return Integer.bitCount(n) == 1 ? n : Integer.highestOneBit(n) << 1;
        }

        /** @return a new timer; its worker thread starts on the first {@code newTimeout} */
        public WheelTimer build() {
            return new WheelTimer(this);
        }
    }
}
