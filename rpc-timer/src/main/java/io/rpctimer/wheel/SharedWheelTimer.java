package io.rpctimer.wheel;

import java.lang.System.Logger.Level;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The JVM-wide shared {@link WheelTimer}, with a reference-counted lifecycle: the first {@link #acquire()} creates
 * it, the last {@link Lease#release()} stops it, and a later acquire creates a fresh one. The Dubbo plugin and the
 * future-timeout checker borrow it this way, so a JVM has one wheel thread however many references it holds.
 *
 * <p>The shared timer ticks every 10 ms with 512 buckets per level and runs tasks on its default executor.
 *
 * <p><b>Threading:</b> thread-safe. Acquire and release take a lock (they are rare); the leased timer is used
 * without locks.
 */
public final class SharedWheelTimer {

    private static final System.Logger LOG = System.getLogger(SharedWheelTimer.class.getName());
    private static final Object LOCK = new Object();

    /** Guarded by {@link #LOCK}. */
    private static WheelTimer instance;
    /** Guarded by {@link #LOCK}. */
    private static int holders;

    private SharedWheelTimer() {
    }

    /**
     * Borrows the shared timer, creating it if no one holds it.
     *
     * @return a lease; release it exactly when done (releasing twice has no effect)
     */
    public static Lease acquire() {
        synchronized (LOCK) {
            if (instance == null) {
                instance = WheelTimer.builder()
                        .tickDuration(10, TimeUnit.MILLISECONDS)
                        .ticksPerWheel(512)
                        .threadName("rpc-timer-shared-wheel")
                        .shared()
                        .build();
            }
            holders++;
            return new Lease(instance);
        }
    }

    /** @return the shared timer's stats, or empty when no one holds it */
    public static Optional<TimerStats> stats() {
        synchronized (LOCK) {
            return instance == null ? Optional.empty() : Optional.of(instance.stats());
        }
    }

    /** @return the number of unreleased leases */
    public static int holders() {
        synchronized (LOCK) {
            return holders;
        }
    }

    /** Stops the timer at the last release; any thread may, since the shared timer's tasks run on its executor. */
    private static Set<Timeout> release() {
        WheelTimer toStop;
        synchronized (LOCK) {
            if (--holders > 0) {
                return Set.of();
            }
            toStop = instance;
            instance = null;
        }
        Set<Timeout> left = toStop.stopNow();
        if (!left.isEmpty()) {
            LOG.log(Level.WARNING, "shared wheel stopped with " + left.size() + " timeouts that never ran; they are"
                    + " returned to the last holder");
        }
        return left;
    }

    /**
     * One holder's claim on the shared timer.
     *
     * <p><b>Threading:</b> thread-safe.
     */
    public static final class Lease {
        private final WheelTimer timer;
        private final AtomicBoolean released = new AtomicBoolean();

        private Lease(WheelTimer timer) {
            this.timer = timer;
        }

        /**
         * @return the shared timer; its {@link Timer#stop()} throws {@link IllegalStateException}: release the lease
         *     instead
         */
        public WheelTimer timer() {
            return timer;
        }

        /**
         * Gives the timer back. The last release stops it. Any thread may release, including a task of the shared
         * timer or a callback on its executor.
         *
         * @return if this release stopped the shared timer, the timeouts that never ran; otherwise an empty set
         */
        public Set<Timeout> release() {
            return released.compareAndSet(false, true) ? SharedWheelTimer.release() : Set.of();
        }

        /** @return whether {@link #release()} was called */
        public boolean isReleased() {
            return released.get();
        }
    }
}
