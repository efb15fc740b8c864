package io.rpctimer.bench.failback;

import io.rpctimer.wheel.SharedWheelTimer;
import io.rpctimer.wheel.WheelTimer;
import java.lang.reflect.Field;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.dubbo.common.timer.HashedWheelTimer;

/**
 * Measures how late a failback timer runs what falls due on it: every {@value #PROBE_PERIOD_MILLIS} ms, if no probe is
 * outstanding, it schedules a zero-delay timeout on the timer and records, when it runs, how long after the tick
 * boundary it was due at it ran (the <em>probe lateness</em>). The boundary comes from the timer's own origin and
 * tick, read by reflection, so the figure is exact (to the clock), not rounded to a tick: on Dubbo's 1 s tick a probe
 * that runs on time waits up to a second and is 0 ms late. A probe scheduled across a tick boundary, where the timer's
 * own clock reading may have fallen on either side, is not counted.
 *
 * <p>At most one probe is outstanding, so it takes at most one of a bounded timer's pending slots: on Dubbo's failback
 * timer ({@code maxPendingTimeouts} = {@code failbacktasks} = 100) the probe leaves 99 for retries while it waits.
 *
 * <p>Subclasses also sample the timer's worker every {@value #SAMPLE_PERIOD_MILLIS} ms where they can ({@link #sample}).
 *
 * <p><b>Threading:</b> one daemon thread ({@code failback-bench-probe}) schedules and samples; the probe task runs on
 * the timer's thread (Dubbo: its worker; rpc-timer: its executor); the figures are read from any thread. All times
 * are {@code System.nanoTime()} nanoseconds; figures are reported in milliseconds.
 */
public abstract class TimerProbe implements AutoCloseable {

    static final long PROBE_PERIOD_MILLIS = 100;
    static final long SAMPLE_PERIOD_MILLIS = 5;

    private final Thread thread;
    private final AtomicReference<Probe> outstanding = new AtomicReference<>();
    private volatile boolean stopped;
    private volatile long maxLatenessNanos;
    private volatile long maxWorkerLagNanos = Long.MIN_VALUE;
    private volatile boolean sampled;
    private volatile long sumLatenessNanos;
    private volatile int fired;
    private volatile int ambiguous;
    private volatile int refused;

    TimerProbe(String name) {
        thread = new Thread(this::loop, "failback-bench-probe-" + name);
        thread.setDaemon(true);
    }

    final void startThread() {
        thread.start();
    }

    /** Probes Dubbo's failback timer of the reference behind {@code proxy} (from its creation at the first failure). */
    public static Dubbo dubbo(DubboFailbackTimer access) {
        Dubbo p = new Dubbo(access);
        p.startThread();
        return p;
    }

    /** Probes rpc-timer's shared wheel through a lease of its own (released by {@link #close()}). */
    public static Wheel wheel() {
        Wheel p = new Wheel(SharedWheelTimer.acquire());
        p.startThread();
        return p;
    }

    /** What scheduling a probe did. */
    enum Scheduled { OK, NO_TIMER, REFUSED }

    /** Schedules {@code task} with zero delay on the timer. */
    abstract Scheduled schedule(Runnable task);

    /**
     * @param before {@code nanoTime()} just before the schedule call
     * @param after  just after it
     * @return the tick boundary the timeout is due at, or -1 if {@code before} and {@code after} fall in different
     *     ticks (ambiguous) or the timer's origin is unknown
     */
    abstract long dueNanos(long before, long after);

    /** Samples the timer's worker (every {@value #SAMPLE_PERIOD_MILLIS} ms); nothing by default. */
    void sample(long nowNanos) {
    }

    final void workerLag(long lagNanos) {
        sampled = true;
        if (lagNanos > maxWorkerLagNanos) {
            maxWorkerLagNanos = lagNanos;
        }
    }

    private void loop() {
        long nextProbe = System.nanoTime();
        while (!stopped) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(SAMPLE_PERIOD_MILLIS));
            long now = System.nanoTime();
            try {
                sample(now);
                if (now - nextProbe >= 0 && outstanding.get() == null) {
                    probe();
                    nextProbe = now + TimeUnit.MILLISECONDS.toNanos(PROBE_PERIOD_MILLIS);
                }
            } catch (RuntimeException e) {
                System.err.println("failback-bench probe: " + e); // goes to the run's log; the probe goes on
            }
        }
    }

    private void probe() {
        Probe p = new Probe();
        outstanding.set(p);
        long before = System.nanoTime();
        Scheduled s = schedule(() -> fire(p));
        long after = System.nanoTime();
        if (s != Scheduled.OK) {
            outstanding.compareAndSet(p, null);
            if (s == Scheduled.REFUSED) {
                refused++;
            }
            return;
        }
        p.due(dueNanos(before, after));
    }

    private void fire(Probe p) {
        p.fired(System.nanoTime());
    }

    private synchronized void finished(Probe p, long due, long firedAt) {
        if (due < 0) {
            ambiguous++;
        } else {
            long lateness = Math.max(0, firedAt - due);
            maxLatenessNanos = Math.max(maxLatenessNanos, lateness);
            sumLatenessNanos += lateness;
            fired++;
        }
        outstanding.compareAndSet(p, null);
    }

    /**
     * @return the worst probe lateness so far, in ms, counting an outstanding probe already past its due time as late
     *     by now; NaN if no probe was counted
     */
    public synchronized double worstLatenessMillis() {
        long worst = maxLatenessNanos;
        Probe p = outstanding.get();
        boolean any = fired > 0;
        if (p != null && p.due >= 0 && p.firedAt == 0) {
            worst = Math.max(worst, System.nanoTime() - p.due);
            any = true;
        }
        return any ? worst / 1e6 : Double.NaN;
    }

    /** @return the mean lateness of the probes that ran, in ms, or NaN */
    synchronized double meanLatenessMillis() {
        return fired == 0 ? Double.NaN : sumLatenessNanos / 1e6 / fired;
    }

    /** @return probes that ran and were counted */
    public int probesCounted() {
        return fired;
    }

    /** @return probes not counted because they straddled a tick boundary */
    int probesAmbiguous() {
        return ambiguous;
    }

    /** @return probes the timer refused (its pending cap was full) */
    int probesRefused() {
        return refused;
    }

    /** @return whether a probe is waiting on the timer now (it holds one pending slot) */
    boolean probeOutstanding() {
        return outstanding.get() != null;
    }

    /** @return the worst lag of the worker's tick found by {@link #sample}, in ms (0 if on time), or NaN if none */
    public double worstWorkerLagMillis() {
        return sampled ? Math.max(0, maxWorkerLagNanos) / 1e6 : Double.NaN;
    }

    /** Stops scheduling and sampling (an outstanding probe may still run; it is ignored). */
    @Override
    public void close() {
        stopped = true;
        LockSupport.unpark(thread);
    }

    /** One probe: its due boundary and fire time arrive in either order. */
    private final class Probe {
        private long due = Long.MIN_VALUE; // guarded by this
        private long firedAt;              // guarded by this

        synchronized void due(long d) {
            due = d;
            if (firedAt != 0) {
                finished(this, due, firedAt);
            }
        }

        synchronized void fired(long at) {
            firedAt = at;
            if (due != Long.MIN_VALUE) {
                finished(this, due, firedAt);
            }
        }
    }

    /**
     * Dubbo's failback timer ({@code HashedWheelTimer}, 1 s tick): the probe runs on its worker thread, behind whatever
     * else is due in the same tick. Also samples the worker's tick counter every {@value #SAMPLE_PERIOD_MILLIS} ms:
     * while the worker has not finished tick {@code k}, tick {@code k + 1} (due at {@code start + (k + 2) * tick}) is
     * late by at least {@code now - due}: a lower bound of the worker's tick lag, to within the sampling period,
     * that costs no pending slot.
     */
    public static final class Dubbo extends TimerProbe {
        private final DubboFailbackTimer access;

        Dubbo(DubboFailbackTimer access) {
            super("dubbo");
            this.access = access;
        }

        @Override
        Scheduled schedule(Runnable task) {
            Optional<HashedWheelTimer> t = access.timer();
            if (t.isEmpty()) {
                return Scheduled.NO_TIMER;
            }
            try {
                t.get().newTimeout(timeout -> task.run(), 0, TimeUnit.MILLISECONDS);
                return Scheduled.OK;
            } catch (RejectedExecutionException e) {
                return Scheduled.REFUSED;
            } catch (IllegalStateException e) {
                return Scheduled.NO_TIMER; // stopped
            }
        }

        @Override
        long dueNanos(long before, long after) {
            HashedWheelTimer t = access.timer().orElseThrow();
            long start = DubboFailbackTimer.startTime(t);
            long tick = DubboFailbackTimer.tickNanos(t);
            if (start == 0) {
                return -1;
            }
            // Dubbo files a timeout of deadline d (from start) under tick floor(d / tick), which it processes at
            // start + (floor(d / tick) + 1) * tick
            long k1 = (before - start) / tick;
            long k2 = (after - start) / tick;
            return k1 == k2 ? start + (k1 + 1) * tick : -1;
        }

        @Override
        void sample(long now) {
            Optional<HashedWheelTimer> t = access.timer();
            if (t.isEmpty()) {
                return;
            }
            long start = DubboFailbackTimer.startTime(t.get());
            if (start == 0) {
                return;
            }
            long k = DubboFailbackTimer.workerTick(t.get());
            workerLag(now - (start + (k + 2) * DubboFailbackTimer.tickNanos(t.get())));
        }

        /** @return timeouts pending on Dubbo's failback timer, less the probe's: retries waiting their turn */
        public long retriesPending() {
            return access.timer().map(t -> t.pendingTimeouts() - (probeOutstanding() ? 1 : 0)).orElse(0L);
        }
    }

    /**
     * rpc-timer's shared wheel (10 ms tick): the probe runs on the wheel's executor, so its lateness includes the
     * hand-off from the worker to the executor. The worker's own tick lag is the wheel's {@code maxTickLagNanos} stat.
     */
    public static final class Wheel extends TimerProbe {
        private final SharedWheelTimer.Lease lease;
        private final long origin;
        private final long tick;

        Wheel(SharedWheelTimer.Lease lease) {
            super("rpc-timer");
            this.lease = lease;
            try {
                Field wheelField = WheelTimer.class.getDeclaredField("wheel");
                wheelField.setAccessible(true);
                Object wheel = wheelField.get(lease.timer());
                Field originField = wheel.getClass().getDeclaredField("originNanos");
                Field tickField = wheel.getClass().getDeclaredField("tickNanos");
                originField.setAccessible(true);
                tickField.setAccessible(true);
                this.origin = originField.getLong(wheel);
                this.tick = tickField.getLong(wheel);
            } catch (ReflectiveOperationException e) {
                lease.release();
                throw new IllegalStateException("cannot read the shared wheel's origin and tick: " + e, e);
            }
        }

        @Override
        Scheduled schedule(Runnable task) {
            try {
                lease.timer().newTimeout(timeout -> task.run(), 0, TimeUnit.MILLISECONDS);
                return Scheduled.OK;
            } catch (RejectedExecutionException e) {
                return Scheduled.REFUSED;
            } catch (IllegalStateException e) {
                return Scheduled.NO_TIMER;
            }
        }

        @Override
        long dueNanos(long before, long after) {
            // rpc-timer runs a timeout of deadline d (from its origin) at tick ceil(d / tick), at origin + that * tick
            long k1 = ceilDiv(before - origin, tick);
            long k2 = ceilDiv(after - origin, tick);
            return k1 == k2 ? origin + k1 * tick : -1;
        }

        private static long ceilDiv(long a, long b) {
            return -Math.floorDiv(-a, b);
        }

        /** Stops probing and gives the lease back. */
        @Override
        public void close() {
            super.close();
            lease.release();
        }
    }
}
