package io.rpctimer.retry;

import io.rpctimer.wheel.Ticker;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An executor with a fast and a slow lane, after XXL-JOB's fast and slow trigger pools: every task names its
 * <em>kind</em> (the {@code wheelfailback} cluster uses the reference), the executor measures how long each run of
 * each kind occupies its thread, and a kind that is repeatedly slow runs on the slow lane, so that it never holds up
 * the tasks of other kinds on the fast lane.
 *
 * <p><b>Threading:</b> thread-safe. {@link #execute} may be called from any thread and only queues the task; the
 * per-kind records are guarded by one lock, held for bookkeeping only, never while a task runs.
 *
 * <h3>The routing rule</h3>
 * A run is <em>slow</em> when it occupies its thread for {@code slowRun} or longer (default 100 ms; sending a retry
 * asynchronously takes well under a millisecond). A task goes to the slow lane when its kind
 * <ol>
 *   <li>is <em>isolated</em>: it had {@code slowRunsToIsolate} slow runs (default 2) within one {@code window}
 *       (default 60 s; fixed windows, as XXL-JOB counts slow runs per minute). It stays isolated, wherever it runs,
 *       until it has {@code fastRunsToRestore} fast runs in a row (default 10), and then goes back to the fast lane;
 *   <li>or has a run on the fast lane that has already lasted {@code slowRun}: a hanging run counts before it ends;
 *   <li>or already has {@code maxFastPerKind} tasks queued or running on the fast lane (default half the fast
 *       threads, at least 1, at most all but one).
 * </ol>
 * Otherwise it goes to the fast lane. Rule 3 is what protects the others before a kind is known to be slow: its
 * first hanging runs can hold at most {@code maxFastPerKind} fast threads, so at least one fast thread stays free
 * for every other kind; rules 1 and 2 then keep the kind's later tasks off the fast lane altogether.
 *
 * <h3>Caveats</h3>
 * A burst of one kind larger than {@code maxFastPerKind} spills into the slow lane; that costs nothing while no kind
 * is slow, but there the burst queues behind slow kinds once every slow thread is busy. Several kinds that turn slow
 * at the same moment can together hold every fast thread until their runs end. A kind with nothing queued or
 * running for a whole {@code window} is forgotten (and starts again on the fast lane, under rules 2 and 3); at most
 * {@code maxKinds} kinds are remembered (default 1024), the least recently used is forgotten first.
 *
 * <h3>Rejection and failures</h3>
 * A task the fast lane cannot queue goes to the slow lane. One the slow lane cannot queue either, or one offered
 * after {@link #shutdown()}, is refused: {@link #execute} throws {@link RejectedExecutionException} and the task was
 * not taken, so the caller still holds it. A task that throws a {@link RuntimeException} is logged at WARNING with
 * its kind, and its thread goes on.
 */
public final class SlowLaneExecutor {

    private static final System.Logger LOG = System.getLogger(SlowLaneExecutor.class.getName());

    private final long slowRunNanos;
    private final int slowRunsToIsolate;
    private final long windowNanos;
    private final int fastRunsToRestore;
    private final int maxFastPerKind;
    private final int maxKinds;
    private final Ticker ticker;
    private final Executor fast;
    private final Executor slow;
    /** The pools this executor created and stops; empty when the builder was given lanes. */
    private final List<ThreadPoolExecutor> owned = new ArrayList<>(2);

    /** Guarded by itself; in access order, so the least recently used kind comes first. */
    private final LinkedHashMap<Object, Kind> kinds;
    /** Guarded by {@link #kinds}. */
    private boolean shutdown;

    private SlowLaneExecutor(Builder b) {
        this.slowRunNanos = b.slowRunNanos;
        this.slowRunsToIsolate = b.slowRunsToIsolate;
        this.windowNanos = b.windowNanos;
        this.fastRunsToRestore = b.fastRunsToRestore;
        this.maxFastPerKind = b.maxFastPerKind > 0 ? b.maxFastPerKind : Math.max(1, b.fastThreads / 2);
        this.maxKinds = b.maxKinds;
        this.ticker = b.ticker;
        this.kinds = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Object, Kind> eldest) {
                return size() > maxKinds;
            }
        };
        if (b.fastLane != null) {
            this.fast = b.fastLane;
            this.slow = b.slowLane;
        } else {
            this.fast = pool(b.threadNamePrefix + "-fast-", b.fastThreads, b.queueCapacity);
            this.slow = pool(b.threadNamePrefix + "-slow-", b.slowThreads, b.queueCapacity);
        }
    }

    /** @return a builder with the defaults named in the class javadoc */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Queues {@code task} on the lane its kind's record chooses (see the class javadoc), and returns.
     *
     * @param kind what the task is measured and routed as; compared with {@code equals}
     * @throws RejectedExecutionException if neither lane could queue the task, or after {@link #shutdown()}; the
     *                                    task was not taken
     */
    public void execute(Object kind, Runnable task) {
        if (kind == null || task == null) {
            throw new NullPointerException((kind == null ? "kind" : "task") + ": null (expected: not null)");
        }
        Run run;
        synchronized (kinds) {
            if (shutdown) {
                throw new RejectedExecutionException("SlowLaneExecutor is shut down; refused a task of " + kind);
            }
            long now = ticker.nanoTime();
            Kind k = record(kind, now);
            run = new Run(k, task, routesSlow(k, now));
            k.admitted(run);
        }
        if (!run.slow) {
            try {
                fast.execute(run);
                return;
            } catch (RejectedExecutionException fastFull) {
                synchronized (kinds) {
                    run.kind.moveToSlowLane(run);
                }
            }
        }
        try {
            slow.execute(run);
        } catch (RejectedExecutionException bothFull) {
            synchronized (kinds) {
                run.kind.refused();
            }
            throw bothFull;
        }
    }

    /** @return whether {@code kind} is isolated on the slow lane now (rule 1) */
    public boolean isIsolated(Object kind) {
        synchronized (kinds) {
            Kind k = kinds.get(kind);
            return k != null && k.isolated;
        }
    }

    /** @return how many kinds have a record now; at most {@code maxKinds} */
    public int trackedKinds() {
        synchronized (kinds) {
            return kinds.size();
        }
    }

    /**
     * Refuses new tasks from now on; queued and running tasks still run. Lanes given to the builder are left
     * running (their owner stops them).
     */
    public void shutdown() {
        synchronized (kinds) {
            shutdown = true;
        }
        owned.forEach(ThreadPoolExecutor::shutdown);
    }

    /**
     * Waits until the tasks queued before {@link #shutdown()} have run, on the lanes this executor created.
     *
     * @return whether they all ended within the timeout
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        long deadlineNanos = System.nanoTime() + unit.toNanos(timeout);
        for (ThreadPoolExecutor pool : owned) {
            if (!pool.awaitTermination(deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                return false;
            }
        }
        return true;
    }

    private ThreadPoolExecutor pool(String namePrefix, int threads, int queueCapacity) {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(queueCapacity), r -> { // linked: a large bound costs nothing until used
                    Thread t = new Thread(r, namePrefix + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                }, new ThreadPoolExecutor.AbortPolicy());
        pool.allowCoreThreadTimeOut(true); // idle lanes hold no threads
        owned.add(pool);
        return pool;
    }

    /** The kind's record, created if new; forgets kinds idle for a whole window first. Holds the lock. */
    private Kind record(Object kind, long now) {
        Iterator<Kind> lru = kinds.values().iterator();
        while (lru.hasNext()) {
            Kind eldest = lru.next();
            if (eldest.queuedOrRunning > 0 || now - eldest.lastActiveNanos < windowNanos) {
                break;
            }
            lru.remove();
        }
        Kind k = kinds.get(kind);
        if (k == null) {
            k = new Kind(kind, now);
            kinds.put(kind, k);
        }
        k.lastActiveNanos = now;
        return k;
    }

    /** The routing rule of the class javadoc. Holds the lock. */
    private boolean routesSlow(Kind k, long now) {
        return k.isolated
                || (!k.runningFast.isEmpty() && now - k.runningFast.get(0).startNanos >= slowRunNanos)
                || k.fastAdmitted >= maxFastPerKind;
    }

    /** What the executor knows of one kind. Every field is guarded by {@link #kinds}. */
    private final class Kind {
        final Object key;
        /** Tasks of this kind queued or running on the fast lane. */
        int fastAdmitted;
        /** Tasks of this kind queued or running on either lane. */
        int queuedOrRunning;
        /** Runs of this kind running on the fast lane, oldest first. */
        final List<Run> runningFast = new ArrayList<>(2);
        long windowStartNanos;
        int slowRunsInWindow;
        int fastRunsInARow;
        boolean isolated;
        long lastActiveNanos;

        Kind(Object key, long now) {
            this.key = key;
            windowStartNanos = now;
            lastActiveNanos = now;
        }

        void admitted(Run run) {
            queuedOrRunning++;
            if (!run.slow) {
                fastAdmitted++;
            }
        }

        void moveToSlowLane(Run run) {
            fastAdmitted--;
            run.slow = true;
        }

        void refused() {
            queuedOrRunning--;
        }

        void started(Run run, long now) {
            run.startNanos = now;
            if (!run.slow) {
                runningFast.add(run);
            }
        }

        void ended(Run run, long now) {
            queuedOrRunning--;
            lastActiveNanos = now;
            if (!run.slow) {
                fastAdmitted--;
                runningFast.remove(run);
            }
            if (now - run.startNanos >= slowRunNanos) {
                countSlowRun(now);
            } else {
                fastRunsInARow = Math.min(fastRunsInARow + 1, fastRunsToRestore); // a count that cannot overflow
                if (isolated && fastRunsInARow == fastRunsToRestore) {
                    isolated = false;
                    slowRunsInWindow = 0;
                }
            }
        }

        private void countSlowRun(long now) {
            fastRunsInARow = 0;
            if (now - windowStartNanos >= windowNanos) {
                windowStartNanos = now;
                slowRunsInWindow = 0;
            }
            if (++slowRunsInWindow >= slowRunsToIsolate) {
                isolated = true;
            }
        }
    }

    /** One task on its way through a lane. {@link #slow} and {@link #startNanos} are guarded by {@link #kinds}. */
    private final class Run implements Runnable {
        final Kind kind;
        final Runnable task;
        boolean slow;
        long startNanos;

        Run(Kind kind, Runnable task, boolean slow) {
            this.kind = kind;
            this.task = task;
            this.slow = slow;
        }

        @Override
        public void run() {
            synchronized (kinds) {
                kind.started(this, ticker.nanoTime());
            }
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "a task of kind " + kind.key + " threw; its lane goes on", e);
            } finally {
                synchronized (kinds) {
                    kind.ended(this, ticker.nanoTime());
                }
            }
        }
    }

    /**
     * Builds a {@link SlowLaneExecutor}; each setter checks its value, {@link #build()} the rules between them.
     *
     * <p><b>Threading:</b> not thread-safe; build on one thread.
     */
    public static final class Builder {
        private int fastThreads = Math.max(2, Runtime.getRuntime().availableProcessors());
        private int slowThreads = 8;
        private int queueCapacity = 10_000;
        private long slowRunNanos = TimeUnit.MILLISECONDS.toNanos(100);
        private int slowRunsToIsolate = 2;
        private long windowNanos = TimeUnit.SECONDS.toNanos(60);
        private int fastRunsToRestore = 10;
        /** 0: half the fast threads, at least 1. */
        private int maxFastPerKind;
        private int maxKinds = 1024;
        private String threadNamePrefix = "rpc-timer-lane";
        private Ticker ticker = Ticker.system();
        private Executor fastLane;
        private Executor slowLane;

        private Builder() {
        }

        /** @param threads threads of the fast lane, at least 2 (default: the processors, at least 2) */
        public Builder fastThreads(int threads) {
            this.fastThreads = atLeast("fastThreads", threads, 2);
            return this;
        }

        /** @param threads threads of the slow lane, at least 1 (default 8); idle ones end after 60 s */
        public Builder slowThreads(int threads) {
            this.slowThreads = atLeast("slowThreads", threads, 1);
            return this;
        }

        /** @param tasks how many tasks each lane queues beyond its running ones, at least 1 (default 10,000) */
        public Builder queueCapacity(int tasks) {
            this.queueCapacity = atLeast("queueCapacity", tasks, 1);
            return this;
        }

        /** @param duration a run that occupies its thread this long or longer is slow, &gt; 0 (default 100 ms) */
        public Builder slowRun(long duration, TimeUnit unit) {
            this.slowRunNanos = positiveNanos("slowRun", duration, unit);
            return this;
        }

        /** @param runs slow runs within one window that isolate a kind, at least 1 (default 2) */
        public Builder slowRunsToIsolate(int runs) {
            this.slowRunsToIsolate = atLeast("slowRunsToIsolate", runs, 1);
            return this;
        }

        /**
         * @param duration the window slow runs are counted in, and the idle time after which a kind is forgotten,
         *                 &gt; 0 (default 60 s)
         */
        public Builder window(long duration, TimeUnit unit) {
            this.windowNanos = positiveNanos("window", duration, unit);
            return this;
        }

        /** @param runs fast runs in a row that bring an isolated kind back to the fast lane, at least 1 (default 10) */
        public Builder fastRunsToRestore(int runs) {
            this.fastRunsToRestore = atLeast("fastRunsToRestore", runs, 1);
            return this;
        }

        /**
         * @param tasks a kind's tasks queued or running on the fast lane beyond which the next go to the slow lane,
         *              from 1 to {@code fastThreads - 1} (default half the fast threads, at least 1)
         */
        public Builder maxFastPerKind(int tasks) {
            this.maxFastPerKind = atLeast("maxFastPerKind", tasks, 1);
            return this;
        }

        /** @param kinds how many kinds' records are kept, at least 1 (default 1024) */
        public Builder maxKinds(int kinds) {
            this.maxKinds = atLeast("maxKinds", kinds, 1);
            return this;
        }

        /** @param prefix names the lanes' threads: {@code prefix-fast-1}, {@code prefix-slow-1}, ... */
        public Builder threadNamePrefix(String prefix) {
            if (prefix == null || prefix.isBlank()) {
                throw new IllegalArgumentException("threadNamePrefix: '" + prefix + "' (expected: not blank)");
            }
            this.threadNamePrefix = prefix;
            return this;
        }

        /** @param source the clock runs are timed with (default {@link Ticker#system()}); tests pass a fake */
        public Builder ticker(Ticker source) {
            if (source == null) {
                throw new NullPointerException("ticker: null (expected: a Ticker)");
            }
            this.ticker = source;
            return this;
        }

        /**
         * Runs the lanes on these executors instead of pools of its own; their owner stops them, and
         * {@link #fastThreads} should say how many threads {@code fast} has. A direct executor
         * ({@code Runnable::run}) runs every task on the caller's thread.
         */
        public Builder lanes(Executor fast, Executor slow) {
            if (fast == null || slow == null) {
                throw new NullPointerException((fast == null ? "fast" : "slow") + ": null (expected: an Executor)");
            }
            this.fastLane = fast;
            this.slowLane = slow;
            return this;
        }

        /**
         * @throws IllegalArgumentException if {@code maxFastPerKind} is not below {@code fastThreads}
         */
        public SlowLaneExecutor build() {
            if (maxFastPerKind >= fastThreads) {
                throw new IllegalArgumentException("maxFastPerKind: " + maxFastPerKind + " (expected: < fastThreads "
                        + fastThreads + ", so that one kind never holds every fast thread)");
            }
            return new SlowLaneExecutor(this);
        }

        private static int atLeast(String name, int value, int min) {
            if (value < min) {
                throw new IllegalArgumentException(name + ": " + value + " (expected: >= " + min + ")");
            }
            return value;
        }

        private static long positiveNanos(String name, long duration, TimeUnit unit) {
            if (unit == null) {
                throw new NullPointerException("unit: null (expected: a TimeUnit)");
            }
            if (duration <= 0) {
                throw new IllegalArgumentException(name + ": " + duration + " " + unit + " (expected: > 0)");
            }
            return unit.toNanos(duration);
        }
    }
}
