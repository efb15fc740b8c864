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
import org.jctools.queues.MpscUnboundedXaddArrayQueue;

/**
 * The hashed timing wheel as a plain structure driven by {@code now}: producers call {@link #schedule} and
 * {@link WheelTimeout#cancel()} from any thread; one thread (the worker, or a test) calls {@link #advance} with the
 * current time. Due timeouts go to the executor; the wheel never runs a task itself.
 *
 * <p>Layout: a hierarchy of levels of {@code wheelSize} buckets each, as in Kafka's {@code TimingWheel}. A bucket of
 * level 0 spans one tick; a bucket of level {@code i} spans {@code wheelSize^i} ticks. A timeout goes into the lowest
 * level whose window (starting at the current slot) reaches its deadline. When time reaches a bucket of a higher
 * level, its timeouts move down ("cascade"); each timeout moves at most once per level, so a tick costs what falls
 * due in it, never what is pending far ahead (Netty and Dubbo walk every timeout of the bucket and decrement its
 * remaining rounds instead). Levels are allocated when first used.
 *
 * <p>Caveats: the wheel is as precise as its tick: a timeout runs at the first tick at or after its deadline, never
 * before. Timeouts due in the same tick are handed to the executor in no particular order.
 *
 * <p>Concurrency: producers only touch the two striped MPSC hand-offs and the timeout's CAS'd state; every other
 * field is owned by the thread calling {@link #advance} (the "worker"). Counters the worker keeps are published as a
 * {@link TimerStats} snapshot once per advance.
 */
final class TimingWheel {

    private static final System.Logger LOG = System.getLogger(WheelTimer.class.getName());

    /** Upper bound of hand-off queue entries taken per advance, so one advance stays bounded. */
    static final int MAX_TRANSFERS_PER_ADVANCE = 1 << 20;

    private static final int QUEUE_CHUNK_SIZE = 4096;
    private static final int QUEUE_POOLED_CHUNKS = 8;
    /**
     * Hand-off stripes: a power of two, twice the cores, from 2 to 8. Each producer thread offers to the stripe its
     * thread id picks, so two producers seldom write the same cache lines (a queue's producer index and its adjacent
     * slots): on one shared queue, 2 producers on 2 cores ran at 6-8 ops/us for seconds at a time instead of 23.
     */
    static final int STRIPES =
            Math.min(8, Math.max(2, Integer.highestOneBit(Runtime.getRuntime().availableProcessors() * 4 - 1)));

    /** The task-running wheel of the current thread, to refuse {@code stop()} from inside a task. */
    private static final ThreadLocal<TimingWheel> RUNNING = new ThreadLocal<>();

    final Timer owner;
    private final Ticker ticker;
    private final long originNanos;
    final long tickNanos;
    private final int bits;
    private final int mask;
    private final int maxLevel;
    private final Executor executor;
    private final long maxPendingTimeouts;
    /** Pending count kept only when {@code maxPendingTimeouts > 0}: producers add, the worker subtracts. */
    private final AtomicLong pendingLimitCount;

    /** Worker naps after this many idle advances in a row. */
    static final int IDLE_ADVANCES_BEFORE_NAP = 4;

    private static final VarHandle NAPPING;

    static {
        try {
            NAPPING = MethodHandles.lookup().findVarHandle(TimingWheel.class, "napping", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // Producer → worker hand-offs: many producers, one consumer (the worker); striped by producer thread.
    private final MpscUnboundedXaddArrayQueue<WheelTimeout>[] newTimeouts = stripes();
    private final MpscUnboundedXaddArrayQueue<WheelTimeout>[] cancelledTimeouts = stripes();

    // Written by any thread (rare paths only).
    private final LongAdder rejected = new LongAdder();
    private final LongAdder failedTasks = new LongAdder();

    // Worker-owned.
    private final WheelTimeout[][] levels;
    private long currentTick;
    private long linked;
    private final ArrayDeque<WheelTimeout> deferred = new ArrayDeque<>();
    private long scheduled;
    private long expired;
    private long cancelled;
    private long deferredHandOffs;
    private long ticks;
    private long lastTickLagNanos;
    private long maxTickLagNanos;
    private long pendingToRelease;
    /** Nodes touched by ticks (expired or moved down a level): what the "a tick costs what expires" tests count. */
    private long nodesVisited;
    /** One bit per non-empty bucket, per level: where the next work is, without walking buckets. */
    private final long[][] occupied;
    /** Set when the worker naps: no tick up to this one has anything to do, so a nap is not lag. */
    private long quietUntilTick;
    /** Consecutive advances in which nothing arrived, was cancelled or fell due. */
    private int idleAdvances;
    private boolean active;

    /** The worker thread while it naps past the next tick; producers with new work unpark it. */
    private volatile Thread napping;

    /** Written by the worker once per advance, read by anyone. */
    private volatile TimerStats published = new TimerStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /**
     * @param owner              the timer that {@link Timeout#timer()} reports
     * @param ticker             the clock
     * @param tickNanos          tick duration in nanoseconds, {@code > 0}
     * @param wheelSize          buckets per level, a power of two {@code >= 2}
     * @param maxPendingTimeouts the limit of pending timeouts, or {@code <= 0} for none
     * @param executor           runs due tasks
     */
    TimingWheel(Timer owner, Ticker ticker, long tickNanos, int wheelSize, long maxPendingTimeouts,
                Executor executor) {
        if (wheelSize < 2 || Integer.bitCount(wheelSize) != 1) {
            throw new IllegalArgumentException("wheelSize: " + wheelSize + " (expected: a power of two >= 2)");
        }
        this.owner = owner;
        this.ticker = ticker;
        this.originNanos = ticker.nanoTime();
        this.tickNanos = tickNanos;
        this.bits = Integer.numberOfTrailingZeros(wheelSize);
        this.mask = wheelSize - 1;
        // The top level's window, wheelSize^(maxLevel + 1) ticks, spans every representable deadline.
        this.maxLevel = (63 + bits - 1) / bits - 1;
        this.levels = new WheelTimeout[maxLevel + 1][];
        this.occupied = new long[maxLevel + 1][];
        this.executor = executor;
        this.maxPendingTimeouts = maxPendingTimeouts;
        this.pendingLimitCount = maxPendingTimeouts > 0 ? new AtomicLong() : null;
    }

    // ---------------------------------------------------------------- any thread

    int wheelSize() {
        return mask + 1;
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
        wakeIfNapping();
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
     * After a producer's offer: the worker may be napping past the next tick, so wake it. Together with the worker
     * re-checking the queues after it publishes {@link #napping}, no offer is left unseen for more than a tick.
     */
    private void wakeIfNapping() {
        Thread worker = napping;
        if (worker != null && NAPPING.compareAndSet(this, worker, null)) {
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

    /** Called by {@link WheelTimeout#cancel()} after a successful CAS from {@code SCHEDULED}. */
    void unlinkLater(WheelTimeout timeout) {
        cancelledTimeouts[stripe()].offer(timeout);
        wakeIfNapping();
    }

    /** Runs on an executor thread. */
    void runTask(WheelTimeout timeout) {
        TimingWheel outer = RUNNING.get();
        RUNNING.set(this);
        try {
            timeout.task.run(timeout);
        } catch (Throwable t) {
            failedTasks.increment();
            LOG.log(Level.WARNING, "TimerTask " + timeout.task + " threw; the timer goes on", t);
        } finally {
            if (outer == null) {
                RUNNING.remove();
            } else {
                RUNNING.set(outer);
            }
        }
    }

    /** @return whether the calling thread is running a task of this wheel */
    boolean isRunningTaskOnCurrentThread() {
        return RUNNING.get() == this;
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
        long elapsed = nowNanos - originNanos;
        if (linked == 0 && elapsed > 0) {
            currentTick = Math.max(currentTick, elapsed / tickNanos);
        }
    }

    /**
     * Processes every tick due at {@code nowNanos}: unlinks cancelled timeouts, files new ones, moves higher levels
     * down at their boundaries and hands due timeouts to the executor.
     *
     * @param nowNanos a reading of the wheel's ticker
     * @return the nanoseconds from {@code nowNanos} until the next tick is due ({@code > 0})
     */
    long advance(long nowNanos) {
        long elapsed = nowNanos - originNanos;
        long lastTick = elapsed / tickNanos;
        // woken before the end of a nap (a producer's offer): the ticks up to now had nothing to do at their time
        boolean wokenEarly = quietUntilTick > currentTick && lastTick <= quietUntilTick;
        if (quietUntilTick > currentTick) { // after a nap: the ticks up to quietUntilTick had nothing to do
            currentTick = Math.max(currentTick, Math.min(quietUntilTick, lastTick - 1));
        }
        quietUntilTick = 0;
        long nextTickAt = (currentTick + 1) * tickNanos;
        if (elapsed < nextTickAt) {
            return nextTickAt - elapsed;
        }
        lastTickLagNanos = wokenEarly ? 0 : elapsed - nextTickAt;
        maxTickLagNanos = Math.max(maxTickLagNanos, lastTickLagNanos);

        active = !deferred.isEmpty();
        retryDeferred();
        unlinkCancelled();
        if (linked == 0) {
            currentTick = lastTick - 1; // nothing is filed: skip the empty ticks in between
        }
        transferNew();
        while (currentTick < lastTick) {
            currentTick++;
            ticks++;
            processTick(currentTick);
        }
        idleAdvances = active ? 0 : idleAdvances + 1;
        publish();
        return (currentTick + 1) * tickNanos - elapsed;
    }

    /**
     * How long the worker may sleep after an {@link #advance}: until the next tick, or — once the wheel has been
     * idle for a few ticks and no work is queued — until the next tick that has something to do, at most
     * {@code maxNapNanos}. A worker that naps is registered in {@link #napping}, so that a producer's offer wakes
     * it; call {@link #awake()} when it wakes.
     *
     * @param nowNanos    the reading passed to the last advance
     * @param maxNapNanos the longest nap, in nanoseconds
     * @return the nanoseconds to park
     */
    long sleepNanos(long nowNanos, long maxNapNanos) {
        long elapsed = nowNanos - originNanos;
        long untilNextTick = (currentTick + 1) * tickNanos - elapsed;
        if (idleAdvances < IDLE_ADVANCES_BEFORE_NAP || !deferred.isEmpty()) {
            return untilNextTick;
        }
        long wakeTick = Math.min(nextEventTick(), currentTick + Math.max(1, maxNapNanos / tickNanos));
        if (wakeTick <= currentTick + 1) {
            return untilNextTick;
        }
        napping = Thread.currentThread();
        if (!allEmpty(newTimeouts) || !allEmpty(cancelledTimeouts)) { // an offer raced the flag: no nap
            napping = null;
            return untilNextTick;
        }
        quietUntilTick = wakeTick - 1;
        return wakeTick * tickNanos - elapsed;
    }

    /** The worker woke up. */
    void awake() {
        napping = null;
    }

    /**
     * The first tick after the current one at which something is filed to happen: a level-0 bucket to expire or a
     * higher-level bucket to move down; {@code Long.MAX_VALUE} if none.
     */
    long nextEventTick() {
        long best = Long.MAX_VALUE;
        long[] level0 = occupied[0];
        if (level0 != null) {
            int offset = firstSetBit(level0, (int) ((currentTick + 1) & mask));
            if (offset >= 0) {
                best = currentTick + 1 + offset;
            }
        }
        for (int level = 1; level <= maxLevel; level++) {
            if (occupied[level] == null) {
                continue;
            }
            int shift = level * bits;
            long boundary = ((currentTick >>> shift) + 1) << shift;
            int offset = firstSetBit(occupied[level], (int) ((boundary >>> shift) & mask));
            if (offset >= 0) {
                best = Math.min(best, boundary + ((long) offset << shift));
            }
        }
        return best;
    }

    /** @return how many buckets after {@code from} (circularly) the first set bit is, or -1 if none is set */
    private int firstSetBit(long[] bitmap, int from) {
        int size = mask + 1;
        for (int scanned = 0; scanned < size; ) {
            int index = (from + scanned) & mask;
            int inWord = index & 63;
            int span = Math.min(64 - inWord, size - index); // up to the word's end or the wheel's end, then wrap
            long word = bitmap[index >>> 6] >>> inWord;
            if (span < 64) {
                word &= (1L << span) - 1;
            }
            if (word != 0) {
                return scanned + Long.numberOfTrailingZeros(word);
            }
            scanned += span;
        }
        return -1;
    }

    private void processTick(long tick) {
        for (int level = maxLevel; level >= 1; level--) {
            int shift = level * bits;
            if (levels[level] != null && (tick & ((1L << shift) - 1)) == 0) {
                int index = (int) ((tick >>> shift) & mask);
                WheelTimeout head = detach(level, index);
                while (head != null) {
                    WheelTimeout next = head.next;
                    head.next = null;
                    nodesVisited++;
                    if (head.state() == WheelTimeout.ST_SCHEDULED) {
                        file(head);
                    }
                    head = next;
                }
            }
        }
        if (levels[0] != null) {
            WheelTimeout head = detach(0, (int) (tick & mask));
            while (head != null) {
                WheelTimeout next = head.next;
                head.next = null;
                nodesVisited++;
                expire(head);
                head = next;
            }
        }
    }

    /** Takes a whole bucket off the wheel; its nodes keep only their {@code next} links. */
    private WheelTimeout detach(int level, int index) {
        WheelTimeout head = levels[level][index];
        if (head != null) {
            levels[level][index] = null;
            occupied[level][index >>> 6] &= ~(1L << index);
            for (WheelTimeout t = head; t != null; t = t.next) {
                t.prev = null;
                linked--;
            }
        }
        return head;
    }

    /**
     * Takes the new timeouts off the hand-off queues, at most those queued when the tick began: the worker does not
     * chase producers, and most timeouts queued meanwhile (per-call timeouts, cancelled at once) are cancelled by the
     * next tick, when they cost a read instead of a CAS race with the cancelling thread.
     *
     * <p>Both drains count in locals and write the wheel's counters once at the end: the counters share cache lines
     * with fields every producer reads ({@code originNanos}, {@code tickNanos}, the queues), and a write per drained
     * timeout would make the producers miss on those lines while the worker drains.
     */
    private void transferNew() {
        long seen = 0;
        long cancelledBeforeSeen = 0;
        for (MpscUnboundedXaddArrayQueue<WheelTimeout> queue : newTimeouts) {
            // at most what was queued when the drain began: the worker does not chase the producers
            long limit = seen + Math.min(queue.size(), MAX_TRANSFERS_PER_ADVANCE - seen);
            for (; seen < limit; seen++) {
                WheelTimeout t = queue.relaxedPoll();
                if (t == null) {
                    break;
                }
                if (t.state() == WheelTimeout.ST_NEW
                        && t.compareAndSetState(WheelTimeout.ST_NEW, WheelTimeout.ST_SCHEDULED)) {
                    file(t);
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
                unlink(t);
            }
        }
        if (unlinked > 0) {
            cancelled += unlinked;
            pendingToRelease += unlinked;
            active = true;
        }
    }

    /** Files a {@code SCHEDULED} timeout into its bucket, or expires it when its tick has come. */
    private void file(WheelTimeout t) {
        long deadlineTick = deadlineTick(t.deadlineNanos);
        if (deadlineTick <= currentTick) {
            expire(t);
            return;
        }
        int level = levelFor(deadlineTick);
        WheelTimeout[] buckets = levels[level];
        if (buckets == null) {
            buckets = levels[level] = new WheelTimeout[mask + 1];
            occupied[level] = new long[Math.max(1, (mask + 1) >>> 6)];
        }
        int index = (int) ((deadlineTick >>> (level * bits)) & mask);
        WheelTimeout head = buckets[index];
        t.next = head;
        if (head != null) {
            head.prev = t;
        } else {
            occupied[level][index >>> 6] |= 1L << index;
        }
        buckets[index] = t;
        linked++;
    }

    /**
     * The lowest level whose window, starting at the slot holding the current tick, reaches {@code deadlineTick}.
     * Level {@code i}'s window is {@code wheelSize^(i+1)} ticks.
     */
    private int levelFor(long deadlineTick) {
        for (int level = 0; level < maxLevel; level++) {
            int shift = level * bits;
            long windowStart = (currentTick >>> shift) << shift;
            if (((deadlineTick - windowStart) >>> (shift + bits)) == 0) {
                return level;
            }
        }
        return maxLevel;
    }

    /** The first tick at or after {@code deadlineNanos}. */
    private long deadlineTick(long deadlineNanos) {
        long tick = deadlineNanos / tickNanos;
        return tick * tickNanos < deadlineNanos ? tick + 1 : tick;
    }

    private void unlink(WheelTimeout t) {
        WheelTimeout prev = t.prev;
        WheelTimeout next = t.next;
        if (prev != null) {
            prev.next = next;
        } else if (!unlinkHead(t)) {
            return; // already taken off the wheel by an expiry or a cascade
        }
        if (next != null) {
            next.prev = prev;
        }
        t.prev = null;
        t.next = null;
        linked--;
    }

    private boolean unlinkHead(WheelTimeout t) {
        long deadlineTick = deadlineTick(t.deadlineNanos);
        for (int level = 0; level <= maxLevel; level++) {
            WheelTimeout[] buckets = levels[level];
            if (buckets != null) {
                int index = (int) ((deadlineTick >>> (level * bits)) & mask);
                if (buckets[index] == t) {
                    buckets[index] = t.next;
                    if (t.next == null) {
                        occupied[level][index >>> 6] &= ~(1L << index);
                    }
                    return true;
                }
            }
        }
        return false;
    }

    private void expire(WheelTimeout t) {
        if (t.compareAndSetState(WheelTimeout.ST_SCHEDULED, WheelTimeout.ST_EXPIRED)) {
            expired++;
            active = true;
            pendingToRelease++;
            handOff(t);
        }
        // else cancelled meanwhile: the cancel queue holds it and counts it
    }

    private void handOff(WheelTimeout t) {
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
     * Hands a due task to the executor. Policy when the executor refuses (saturated or shut down): the worker
     * neither blocks nor drops the task; it keeps it, in order, and offers it again at the next tick.
     */
    private boolean tryExecute(WheelTimeout t) {
        try {
            executor.execute(t);
            return true;
        } catch (RejectedExecutionException e) {
            if (deferredHandOffs++ == 0 || deferred.isEmpty()) {
                LOG.log(Level.WARNING, "executor refused a due TimerTask (" + e + "); it and the tasks due after it"
                        + " are offered again at the next tick");
            }
            return false;
        } catch (RuntimeException | Error e) {
            deferredHandOffs++;
            LOG.log(Level.ERROR, "executor threw while accepting a due TimerTask; offered again at the next tick", e);
            return false;
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
        left.addAll(deferred);
        deferred.clear();
        for (int level = 0; level <= maxLevel; level++) {
            WheelTimeout[] buckets = levels[level];
            if (buckets == null) {
                continue;
            }
            for (int index = 0; index < buckets.length; index++) {
                for (WheelTimeout t = detach(level, index); t != null; ) {
                    WheelTimeout next = t.next;
                    t.next = null;
                    if (t.state() == WheelTimeout.ST_SCHEDULED) {
                        left.add(t);
                    }
                    t = next;
                }
            }
        }
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

    /** Worker thread only (tests). */
    long nodesVisited() {
        return nodesVisited;
    }

    /** @return whether the worker is napping past the next tick (tests) */
    boolean isNapping() {
        return napping != null;
    }

    /** Worker thread only (tests): timeouts linked in buckets. */
    long linkedCount() {
        return linked;
    }

    /** Worker thread only (tests). */
    long currentTick() {
        return currentTick;
    }

    @Override
    public String toString() {
        return "TimingWheel(tick: " + tickNanos + " ns, wheelSize: " + (mask + 1) + ", currentTick: " + currentTick
                + ')';
    }
}
