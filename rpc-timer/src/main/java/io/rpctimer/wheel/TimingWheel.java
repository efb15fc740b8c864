package io.rpctimer.wheel;

import java.lang.System.Logger.Level;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;

/**
 * The driver of a hashed timing wheel, without a thread: producers call {@link #schedule} and
 * {@link WheelTimeout#cancel()} from any thread; one thread (the worker, or a test) calls {@link #advance} with the
 * current time. It takes new and cancelled timeouts off the hand-off queues into the {@link WheelLevels}, turns the
 * time into ticks, hands due timeouts to the executor (it never runs a task itself), and decides how long the worker
 * may sleep. {@link WheelTimer} is the thread around it.
 *
 * <p>Hand-off policy: a due timeout is expired only once the executor took it. If the executor refuses it
 * ({@link RejectedExecutionException}), the timeout stays {@code SCHEDULED} (cancellable, counted against the
 * pending limit) and is offered again at the next tick, before anything due later, in order. If {@code execute}
 * throws anything else, the executor may have queued it already, so it counts as handed over and is never offered
 * twice; the failure is counted in {@link TimerStats#failedTasks()} and logged. Both failures are logged at a
 * bounded rate ({@link FailureLog}).
 *
 * <p>Caveats: a timeout runs at the first tick at or after its deadline, never before. Timeouts due in the same tick
 * are handed to the executor in no particular order.
 *
 * <p>Sleeping: the worker parks past the next tick whenever no tick before a later one has work it knows of. Idle
 * (nothing arrived, was cancelled or fell due for a few ticks) it parks until the next tick with work, at most the
 * caller's maximum nap; busy (timeouts keep arriving, as per-call timeouts do) it parks at most
 * {@link #MAX_BUSY_NAP_NANOS}, less at high arrival rates, so the hand-off queues hold about
 * {@link #BUSY_NAP_BACKLOG} timeouts when it wakes. Either way a producer whose timeout falls due before the worker
 * means to wake unparks it, so a nap never makes a timeout late; an idle nap is also ended by a cancel, so that a
 * cancelled timeout frees its memory and its pending slot at once. During a busy nap cancels wait for the wake.
 *
 * <p>Concurrency: producers only touch the striped MPSC hand-off queues, {@link #napping}, {@link #wakeAtNanos},
 * {@link #cancelsWake} and the timeout's CAS'd state; every other field, and the levels, belong to the thread calling
 * {@link #advance} (the "worker"). Counters the worker keeps are published as a {@link TimerStats} snapshot once per
 * advance.
 */
final class TimingWheel {

    static final System.Logger LOG = System.getLogger(WheelTimer.class.getName());

    /** Upper bound of hand-off queue entries taken per advance, so one advance stays bounded. */
    static final int MAX_TRANSFERS_PER_ADVANCE = 1 << 20;

    private static final int QUEUE_CHUNK_SIZE = 4096;
    private static final int QUEUE_POOLED_CHUNKS = 8;
    /**
     * Hand-off stripes: a power of two, twice the cores, from 2 to 8. Each producer thread offers to the stripe its
     * thread id picks, so that two producers seldom write the same cache lines (a queue's producer index and the
     * slots next to it), which would make each producer's offer miss in its cache.
     */
    static final int STRIPES =
            Math.min(8, Math.max(2, Integer.highestOneBit(Runtime.getRuntime().availableProcessors() * 4 - 1)));

    /** Worker naps after this many idle advances in a row. */
    static final int IDLE_ADVANCES_BEFORE_NAP = 4;

    /** The longest park while timeouts keep arriving, in nanoseconds. */
    static final long MAX_BUSY_NAP_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /**
     * Timeouts a busy nap may leave in the hand-off queues, at the last advance's arrival rate: one queue chunk, so
     * that a high rate shortens the nap to a tick (the worker then ticks as an un-napping wheel does) rather than
     * growing the queues.
     */
    static final long BUSY_NAP_BACKLOG = QUEUE_CHUNK_SIZE;

    private static final VarHandle NAPPING;

    static {
        try {
            NAPPING = MethodHandles.lookup().findVarHandle(TimingWheel.class, "napping", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Timer owner;
    private final Ticker ticker;
    private final long originNanos;
    final long tickNanos;
    private final Executor executor;
    private final long maxPendingTimeouts;
    /** Pending count kept only when {@code maxPendingTimeouts > 0}: producers add, the worker subtracts. */
    private final AtomicLong pendingLimitCount;

    // Producer → worker hand-offs: many producers, one consumer (the worker); striped by producer thread.
    private final MpscUnboundedXaddArrayQueue<WheelTimeout>[] newTimeouts = stripes();
    private final MpscUnboundedXaddArrayQueue<WheelTimeout>[] cancelledTimeouts = stripes();

    // Written by any thread (rare paths only).
    private final LongAdder rejected = new LongAdder();
    private final LongAdder failedTasks = new LongAdder();
    /** Naps a producer ended (tests). */
    private final LongAdder wakes = new LongAdder();

    // Worker-owned.
    private final WheelLevels levels;
    private final Consumer<WheelTimeout> handOver = this::handOver;
    /** Due timeouts the executor refused, in the order they fell due. */
    private final ArrayDeque<WheelTimeout> deferred = new ArrayDeque<>();
    private final FailureLog refusals;
    private final FailureLog handOffFailures;
    private long scheduled;
    private long expired;
    private long cancelled;
    private long deferredHandOffs;
    private long ticks;
    private long lastTickLagNanos;
    private long maxTickLagNanos;
    private long pendingToRelease;
    /** The current advance's time, in nanoseconds since the origin. */
    private long elapsedNanos;
    /** The smallest deadline handed over in the current advance; {@code Long.MAX_VALUE} if none. */
    private long earliestDeadlineHandedOver;
    /** Set when the worker naps: no tick up to this one has anything to do, so a nap is not lag. */
    private long quietUntilTick;
    /** Consecutive advances in which nothing arrived, was cancelled or fell due. */
    private int idleAdvances;
    /** How many ticks the worker may park while timeouts keep arriving, from the last advance's arrival rate. */
    private long busyNapTicks = 1;
    private boolean active;

    /** The worker thread while it parks past the next tick; a producer that must wake it unparks it. */
    private volatile Thread napping;
    /**
     * While the worker parks past the next tick: when it wakes, in nanoseconds since the origin; a producer whose
     * timeout is due before that wakes it. {@code Long.MIN_VALUE} while it ticks.
     */
    private volatile long wakeAtNanos = Long.MIN_VALUE;
    /** Whether a cancel wakes the napping worker: during an idle nap only. */
    private volatile boolean cancelsWake;

    /** Written by the worker once per advance, read by anyone. */
    private volatile TimerStats published = new TimerStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /**
     * @param owner              the timer that {@link Timeout#timer()} reports
     * @param ticker             the clock
     * @param tickNanos          tick duration in nanoseconds, {@code > 0}
     * @param wheelSize          buckets per level, a power of two {@code >= 2}
     * @param maxPendingTimeouts the limit of pending timeouts, or {@code <= 0} for none
     * @param executor           runs due tasks
     * @param log                where hand-off failures are logged
     */
    TimingWheel(Timer owner, Ticker ticker, long tickNanos, int wheelSize, long maxPendingTimeouts,
                Executor executor, System.Logger log) {
        this.levels = new WheelLevels(tickNanos, wheelSize);
        this.owner = owner;
        this.ticker = ticker;
        this.originNanos = ticker.nanoTime();
        this.tickNanos = tickNanos;
        this.executor = executor;
        this.maxPendingTimeouts = maxPendingTimeouts;
        this.pendingLimitCount = maxPendingTimeouts > 0 ? new AtomicLong() : null;
        this.refusals = new FailureLog(log, Level.WARNING, "executor refused a due TimerTask; it stays pending and is"
                + " offered again at the next tick, with the tasks due after it");
        this.handOffFailures = new FailureLog(log, Level.ERROR, "executor threw while accepting a due TimerTask; it"
                + " counts as handed over (the executor may have queued it) and is not offered again");
    }

    // ---------------------------------------------------------------- any thread

    int wheelSize() {
        return levels.wheelSize();
    }

    /** Nanoseconds since this wheel's origin. */
    long elapsedNanos() {
        return ticker.nanoTime() - originNanos;
    }

    WheelTimeout schedule(TimerTask task, long delay, TimeUnit unit) {
        if (task == null) {
            throw new NullPointerException("task: null (expected: a TimerTask)");
        }
        if (unit == null) {
            throw new NullPointerException("unit: null (expected: a TimeUnit)");
        }
        if (pendingLimitCount != null) {
            reservePending();
        }
        long elapsed = elapsedNanos();
        long delayNanos = Math.max(0, unit.toNanos(delay)); // toNanos saturates at Long.MAX_VALUE
        long deadline = elapsed + delayNanos;
        if (deadline < elapsed) {
            deadline = Long.MAX_VALUE; // overflow: the deadline is beyond any time the wheel will reach
        }
        WheelTimeout timeout = new WheelTimeout(this, task, deadline);
        newTimeouts[stripe()].offer(timeout);
        if (deadline < wakeAtNanos) {
            wakeIfNapping();
        }
        return timeout;
    }

    @SuppressWarnings("unchecked")
    private static MpscUnboundedXaddArrayQueue<WheelTimeout>[] stripes() {
        MpscUnboundedXaddArrayQueue<WheelTimeout>[] queues = new MpscUnboundedXaddArrayQueue[STRIPES];
        for (int i = 0; i < queues.length; i++) {
            queues[i] = new MpscUnboundedXaddArrayQueue<>(QUEUE_CHUNK_SIZE, QUEUE_POOLED_CHUNKS);
        }
        return queues;
    }

    /** @return the calling thread's hand-off stripe: consecutive thread ids get different stripes */
    private static int stripe() {
        long id = Thread.currentThread().getId();
        return (int) (id ^ (id >>> 32)) & (STRIPES - 1);
    }

    private static boolean allEmpty(MpscUnboundedXaddArrayQueue<WheelTimeout>[] queues) {
        for (MpscUnboundedXaddArrayQueue<WheelTimeout> q : queues) {
            if (!q.isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /**
     * After a producer's offer that the worker must see before it means to wake. Together with the worker taking
     * the queues again after it publishes {@link #wakeAtNanos} and {@link #napping} (and not napping if an offer is
     * still half-made), no timeout is filed later than its tick.
     */
    private void wakeIfNapping() {
        Thread worker = napping;
        if (worker != null && NAPPING.compareAndSet(this, worker, null)) {
            wakes.increment();
            LockSupport.unpark(worker);
        }
    }

    private void reservePending() {
        long count = pendingLimitCount.incrementAndGet();
        if (count > maxPendingTimeouts) {
            pendingLimitCount.decrementAndGet();
            rejected.increment();
            throw new RejectedExecutionException("pendingTimeouts: " + (count - 1)
                    + " (expected: < maxPendingTimeouts: " + maxPendingTimeouts + ")");
        }
    }

    /** Called by {@link WheelTimeout#cancel()} after a successful CAS from {@code SCHEDULED} or {@code HANDING}. */
    void unlinkLater(WheelTimeout timeout) {
        cancelledTimeouts[stripe()].offer(timeout);
        if (cancelsWake) {
            wakeIfNapping();
        }
    }

    /** Runs on an executor thread. */
    void runTask(WheelTimeout timeout) {
        try {
            timeout.task.run(timeout);
        } catch (Throwable t) {
            failedTasks.increment();
            LOG.log(Level.WARNING, "TimerTask " + timeout.task + " threw; the timer goes on", t);
        }
    }

    TimerStats stats() {
        TimerStats s = published;
        return new TimerStats(s.pendingTimeouts(), s.scheduledTimeouts(), s.expiredTimeouts(),
                s.cancelledTimeouts(), rejected.sum(), s.deferredHandOffs(), failedTasks.sum(), s.ticks(),
                s.lastTickLagNanos(), s.maxTickLagNanos());
    }

    // ---------------------------------------------------------------- worker thread

    /**
     * Aligns the wheel with {@code nowNanos} when the worker starts, which may be long after the wheel was created:
     * the ticks in between had nothing filed and were never late.
     */
    void start(long nowNanos) {
        levels.skipTo((nowNanos - originNanos) / tickNanos);
    }

    /**
     * Processes every tick due at {@code nowNanos}: unlinks cancelled timeouts, files new ones, offers refused ones
     * again, and hands due timeouts to the executor.
     *
     * <p>Lag: how late this advance ran its first tick (none if a producer woke the worker before the end of a nap:
     * the ticks up to now had nothing to do at their time), or how late it handed over the earliest deadline it
     * handed over, whichever is later.
     *
     * @param nowNanos a reading of the wheel's ticker
     * @return the nanoseconds from {@code nowNanos} until the next tick is due ({@code > 0})
     */
    long advance(long nowNanos) {
        long elapsed = nowNanos - originNanos;
        long firstOpenTick = levels.currentTick() + 1;
        long nextTickAt = firstOpenTick * tickNanos;
        if (elapsed < nextTickAt) {
            return nextTickAt - elapsed;
        }
        long lastTick = elapsed / tickNanos;
        long tickLag = quietUntilTick < firstOpenTick ? elapsed - nextTickAt
                : lastTick <= quietUntilTick ? 0 : elapsed - (quietUntilTick + 1) * tickNanos;
        quietUntilTick = 0;
        elapsedNanos = elapsed;
        earliestDeadlineHandedOver = Long.MAX_VALUE;
        active = !deferred.isEmpty();

        retryDeferred();
        unlinkCancelled();
        long arrived = transferNew();
        levels.advance(lastTick, handOver);

        long ticked = lastTick - firstOpenTick + 1;
        busyNapTicks = busyNapTicks(arrived, ticked);
        ticks += ticked;
        recordLag(elapsed, tickLag, firstOpenTick);
        idleAdvances = active ? 0 : idleAdvances + 1;
        publish();
        return (lastTick + 1) * tickNanos - elapsed;
    }

    private void recordLag(long elapsed, long tickLag, long firstOpenTick) {
        long lag = tickLag;
        if (earliestDeadlineHandedOver != Long.MAX_VALUE) {
            // a timeout cannot be handed over before the first tick this advance processed
            long dueTick = Math.max(levels.deadlineTick(earliestDeadlineHandedOver), firstOpenTick);
            lag = Math.max(lag, elapsed - dueTick * tickNanos);
        }
        lastTickLagNanos = lag;
        maxTickLagNanos = Math.max(maxTickLagNanos, lag);
    }

    /**
     * @param arrived timeouts taken off the hand-off queues in the advance
     * @param ticked  ticks the advance processed ({@code >= 1})
     * @return the ticks a busy nap may last: {@link #BUSY_NAP_BACKLOG} timeouts at the rate they arrived, at least
     *     one tick and at most {@link #MAX_BUSY_NAP_NANOS}
     */
    private long busyNapTicks(long arrived, long ticked) {
        long most = Math.max(1, MAX_BUSY_NAP_NANOS / tickNanos);
        return arrived == 0 ? most : Math.max(1, Math.min(most, BUSY_NAP_BACKLOG * ticked / arrived));
    }

    /**
     * How long the worker may park after an {@link #advance}: until the next tick, or until the next tick that has
     * something to do, never later than {@code maxNapNanos} once the wheel has been idle for a few ticks, and never
     * later than the busy nap while timeouts keep arriving (see the class comment). A park past the next tick is
     * registered ({@link #napping}, {@link #wakeAtNanos}), so that a producer whose timeout is due earlier wakes it;
     * the worker then takes what producers offered before they could see it, and does not nap if an offer is
     * half-made. Call {@link #awake()} when the worker wakes. A ticker that stepped back never parks it longer than
     * {@code maxNapNanos}.
     *
     * @param nowNanos    a reading of the wheel's ticker
     * @param maxNapNanos the longest park, in nanoseconds
     * @return the nanoseconds to park
     */
    long sleepNanos(long nowNanos, long maxNapNanos) {
        long elapsed = nowNanos - originNanos;
        long current = levels.currentTick();
        long untilNextTick = Math.min((current + 1) * tickNanos - elapsed, maxNapNanos);
        if (!deferred.isEmpty()) {
            return untilNextTick;
        }
        boolean idle = idleAdvances >= IDLE_ADVANCES_BEFORE_NAP;
        long napTicks = idle ? Math.max(1, maxNapNanos / tickNanos) : busyNapTicks;
        long wakeTick = wakeTick(current, napTicks);
        if (wakeTick * tickNanos - elapsed <= tickNanos) {
            return untilNextTick;
        }
        cancelsWake = idle;
        wakeAtNanos = wakeTick * tickNanos;
        napping = Thread.currentThread();
        unlinkCancelled();
        transferNew();
        if (!allEmpty(newTimeouts) || (idle && !allEmpty(cancelledTimeouts))) { // an offer raced the flags: no nap
            awake();
            return untilNextTick;
        }
        wakeTick = Math.min(wakeTick, wakeTick(current, napTicks)); // what was just filed may be due sooner
        long sleep = Math.min(wakeTick * tickNanos - elapsed, maxNapNanos);
        if (sleep <= tickNanos) {
            awake();
            return sleep;
        }
        wakeAtNanos = wakeTick * tickNanos;
        quietUntilTick = wakeTick - 1;
        return sleep;
    }

    /** @return the tick to wake at: the next with work, at most {@code napTicks} ahead, and after the current one */
    private long wakeTick(long current, long napTicks) {
        return Math.max(current + 1, Math.min(levels.nextEventTick(), current + napTicks));
    }

    /** The worker woke up, or gave up a nap. */
    void awake() {
        napping = null;
        wakeAtNanos = Long.MIN_VALUE;
        cancelsWake = false;
    }

    /**
     * Takes the new timeouts off the hand-off queues, at most those queued when the tick began: the worker does not
     * chase producers, and most timeouts queued meanwhile (per-call timeouts, cancelled at once) are cancelled by the
     * next tick, when they cost a read instead of a CAS race with the cancelling thread.
     *
     * <p>Both drains count in locals and write the wheel's counters once at the end: the counters share cache lines
     * with fields every producer reads ({@code originNanos}, {@code tickNanos}, the queues), and a write per drained
     * timeout would make the producers miss on those lines while the worker drains.
     *
     * @return the timeouts taken off, cancelled or not
     */
    private long transferNew() {
        long seen = 0;
        long cancelledBeforeSeen = 0;
        for (MpscUnboundedXaddArrayQueue<WheelTimeout> queue : newTimeouts) {
            long limit = seen + Math.min(queue.size(), MAX_TRANSFERS_PER_ADVANCE - seen);
            for (; seen < limit; seen++) {
                WheelTimeout t = queue.relaxedPoll();
                if (t == null) {
                    break;
                }
                if (t.state() == WheelTimeout.ST_NEW
                        && t.compareAndSetState(WheelTimeout.ST_NEW, WheelTimeout.ST_SCHEDULED)) {
                    levels.file(t);
                } else {
                    cancelledBeforeSeen++; // cancelled before the worker saw it: nothing was linked
                }
            }
        }
        if (seen > 0) {
            scheduled += seen;
            cancelled += cancelledBeforeSeen;
            pendingToRelease += cancelledBeforeSeen;
            active = true;
        }
        return seen;
    }

    private void unlinkCancelled() {
        long unlinked = 0;
        for (MpscUnboundedXaddArrayQueue<WheelTimeout> queue : cancelledTimeouts) {
            long limit = unlinked + Math.min(queue.size(), MAX_TRANSFERS_PER_ADVANCE - unlinked);
            for (; unlinked < limit; unlinked++) {
                WheelTimeout t = queue.relaxedPoll();
                if (t == null) {
                    break;
                }
                levels.unlink(t); // no effect on a deferred timeout: it is dropped when offered again
            }
        }
        if (unlinked > 0) {
            cancelled += unlinked;
            pendingToRelease += unlinked;
            active = true;
        }
    }

    /** Takes a due timeout from the levels; behind refused ones it waits its turn, to keep the order. */
    private void handOver(WheelTimeout t) {
        if (!deferred.isEmpty() || !tryExecute(t)) {
            deferred.add(t);
        }
    }

    private void retryDeferred() {
        WheelTimeout t;
        while ((t = deferred.peek()) != null && tryExecute(t)) {
            deferred.poll();
        }
    }

    /**
     * Offers a due timeout to the executor. Every state change is made before anything is logged, so that a logger
     * that throws leaves the timeout either handed over or {@code SCHEDULED}.
     *
     * @return {@code false} if the executor refused it (it is {@code SCHEDULED} again); {@code true} if it took it,
     *     or the timeout was cancelled first
     */
    private boolean tryExecute(WheelTimeout t) {
        if (!t.compareAndSetState(WheelTimeout.ST_SCHEDULED, WheelTimeout.ST_HANDING)) {
            return true; // cancelled: the cancel queue counts it
        }
        try {
            executor.execute(t);
        } catch (RejectedExecutionException e) {
            if (!t.compareAndSetState(WheelTimeout.ST_HANDING, WheelTimeout.ST_SCHEDULED)) {
                return true; // cancelled while offered
            }
            deferredHandOffs++;
            refusals.report(elapsedNanos, e);
            return false;
        } catch (Throwable e) {
            handedOver(t);
            failedTasks.increment();
            handOffFailures.report(elapsedNanos, e);
            return true;
        }
        handedOver(t);
        return true;
    }

    /** The executor has the timeout: it is expired unless a cancel won the race first. */
    private void handedOver(WheelTimeout t) {
        if (t.compareAndSetState(WheelTimeout.ST_HANDING, WheelTimeout.ST_EXPIRED)
                || t.state() == WheelTimeout.ST_EXPIRED) { // or its run() came first
            expired++;
            pendingToRelease++;
            active = true;
            earliestDeadlineHandedOver = Math.min(earliestDeadlineHandedOver, t.deadlineNanos);
        }
    }

    private void publish() {
        if (pendingLimitCount != null && pendingToRelease > 0) {
            pendingLimitCount.addAndGet(-pendingToRelease);
        }
        pendingToRelease = 0;
        published = new TimerStats(scheduled - expired - cancelled, scheduled, expired, cancelled, 0,
                deferredHandOffs, 0, ticks, lastTickLagNanos, maxTickLagNanos);
    }

    /**
     * Empties the wheel when the worker stops. Call only after producers are fenced off (the timer's state says
     * stopped), so that the strict poll sees every producer that claimed a queue slot.
     *
     * @return timeouts that never ran: filed, still in the hand-off queue, or due but refused by the executor
     */
    Set<Timeout> drainUnprocessed() {
        Set<Timeout> left = Collections.newSetFromMap(new IdentityHashMap<>());
        for (WheelTimeout t : deferred) {
            if (t.state() == WheelTimeout.ST_SCHEDULED) {
                left.add(t);
            }
        }
        deferred.clear();
        levels.drainTo(left::add);
        for (MpscUnboundedXaddArrayQueue<WheelTimeout> queue : newTimeouts) {
            WheelTimeout t;
            while ((t = queue.poll()) != null) {
                if (t.compareAndSetState(WheelTimeout.ST_NEW, WheelTimeout.ST_SCHEDULED)) {
                    left.add(t);
                }
            }
        }
        for (MpscUnboundedXaddArrayQueue<WheelTimeout> queue : cancelledTimeouts) {
            queue.clear();
        }
        if (pendingLimitCount != null) {
            pendingLimitCount.set(0);
        }
        return Collections.unmodifiableSet(left);
    }

    /** Worker thread only (tests): the levels this driver moves. */
    WheelLevels levels() {
        return levels;
    }

    /** @return whether the worker is parked past the next tick and registered to be woken (tests) */
    boolean isNapping() {
        return napping != null;
    }

    /** @return whether the worker is napping because the wheel is idle, so that a cancel wakes it too (tests) */
    boolean isIdleNapping() {
        return napping != null && cancelsWake;
    }

    /** @return how many naps producers ended by waking the worker (tests) */
    long producerWakes() {
        return wakes.sum();
    }

    @Override
    public String toString() {
        return "TimingWheel(" + levels + ')';
    }
}
