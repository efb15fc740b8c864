package io.rpctimer.dubbo;

import io.rpctimer.console.FailbackConsole;
import io.rpctimer.retry.RetryBudget;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryReference;
import io.rpctimer.retry.SlowLaneExecutor;
import io.rpctimer.timeout.FutureTimeoutChecker;
import io.rpctimer.wheel.SharedWheelTimer;
import io.rpctimer.wheel.Ticker;
import io.rpctimer.wheel.Timeout;
import io.rpctimer.wheel.Timer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.apache.dubbo.common.URL;

/**
 * What the {@code wheelfailback} invokers of one Dubbo application share: a lease on the JVM-wide wheel, a
 * future-timeout checker on it, the lanes retries are sent on (a reference whose sends are slow gets the slow lane),
 * and the application's {@link RetryLifecycle}, which owns every failed call's life and hands the pending ones over
 * when {@link #close()} runs (the application is destroyed). The lifecycle is built when the first reference of the
 * application is created, with the store that reference's consumer URL names ({@link FailbackStore}).
 *
 * <p>A reference can also be destroyed while the application runs ({@code ReferenceConfig.destroy()}, a migration
 * rule replacing it). Dubbo then destroys its directory but never calls the cluster invoker, so while any retry is
 * pending a sweep on the wheel asks every {@value #SWEEP_MILLIS} ms each {@link RetryReference} whether its Dubbo
 * reference is gone ({@link RetryReference#endIfGone()}, which alone decides and hands the retries over); a
 * reference's retries are handed over within about a second of its destruction, not when each comes due. With a journal, every {@code failback.store.claimperiod} ms each live reference claims its service's calls
 * again, so that the calls of an instance that died or stopped after this one started are adopted once its lease
 * expired.
 *
 * <p><b>Threading:</b> thread-safe.
 */
final class FailbackRuntime {

    /** How often the sweep looks for destroyed references, in milliseconds. */
    static final long SWEEP_MILLIS = 1_000;

    private final SharedWheelTimer.Lease lease;
    private final Timer timer;
    private final FutureTimeoutChecker checker;
    private final SlowLaneExecutor lanes;
    /** Makes each reference's retry budget from its configuration. */
    private final Function<FailbackConfig, RetryBudget> budgets;
    /** The live references of the application, for the sweep and the claims. */
    private final Set<RetryReference<?>> references = ConcurrentHashMap.newKeySet();
    /** Guarded by this; built with the first reference. */
    private RetryLifecycle lifecycle;
    private FailbackStore store;
    /** Guarded by this: the application's page, or null when {@code failback.console.port} is not set. */
    private FailbackConsole console;
    private volatile boolean closed;
    /** Whether the sweep runs on the wheel by itself (tests may call {@link #sweep()} themselves instead). */
    private final boolean sweeps;
    /** Whether a sweep is on the wheel. */
    private final AtomicBoolean sweeping = new AtomicBoolean();
    /** The sweep's timeout, cancelled when the last pending call ends so that an idle wheel holds nothing of ours. */
    private volatile Timeout sweep;
    /** The next periodic claim of the application's references: cancelled at close, so the shared wheel keeps none. */
    private volatile Timeout adoption;

    /**
     * Tasks each lane may queue. A pending call has at most one step (its send, or its reply's handling) queued at a
     * time, so what the lanes queue is bounded by the calls pending (failbacktasks per reference), and a burst of due
     * retries must queue rather than be refused: a refused step runs on the thread that offered it (the wheel's
     * executor, a reply's thread), which a journal write there would block.
     */
    static final int LANE_QUEUE = 1_000_000;

    /** Borrows the shared wheel. */
    FailbackRuntime() {
        this(SharedWheelTimer.acquire());
    }

    private FailbackRuntime(SharedWheelTimer.Lease lease) {
        this.lease = lease;
        this.timer = lease.timer();
        this.checker = new FutureTimeoutChecker(timer);
        this.lanes = SlowLaneExecutor.builder().threadNamePrefix("rpc-timer-retry").queueCapacity(LANE_QUEUE).build();
        this.budgets = config -> config.budget(Ticker.system());
        this.sweeps = true;
    }

    /**
     * Runs on {@code timer}, sending retries on the thread that fires them, with unlimited retry budgets (tests);
     * {@link #close()} leaves it.
     */
    FailbackRuntime(Timer timer) {
        this(timer, SlowLaneExecutor.builder().lanes(Runnable::run, Runnable::run).build());
    }

    /** Runs on {@code timer}, sending retries from {@code lanes} (tests); {@link #close()} leaves the timer. */
    FailbackRuntime(Timer timer, SlowLaneExecutor lanes) {
        this(timer, lanes, false);
    }

    /** As {@link #FailbackRuntime(Timer, SlowLaneExecutor)}, sweeping on {@code timer} by itself if {@code sweeps}. */
    FailbackRuntime(Timer timer, SlowLaneExecutor lanes, boolean sweeps) {
        this(timer, lanes, sweeps, config -> RetryBudget.unlimited());
    }

    /** As above, with the budgets made by {@code budgets} (tests). */
    FailbackRuntime(Timer timer, SlowLaneExecutor lanes, boolean sweeps,
                    Function<FailbackConfig, RetryBudget> budgets) {
        this.lease = null;
        this.timer = timer;
        this.checker = new FutureTimeoutChecker(timer);
        this.lanes = lanes;
        this.sweeps = sweeps;
        this.budgets = budgets;
    }

    /** @return a new retry budget for a reference configured by {@code config} */
    RetryBudget budget(FailbackConfig config) {
        return budgets.apply(config);
    }

    Timer timer() {
        return timer;
    }

    FutureTimeoutChecker checker() {
        return checker;
    }

    /** Where retries are sent from, keyed by their reference. */
    SlowLaneExecutor lanes() {
        return lanes;
    }

    /**
     * @param consumerUrl the consumer URL of the reference asking; the first one's names the application's store
     * @return the application's lifecycle, built now if this is its first reference
     * @throws IllegalArgumentException naming key and value, if the first reference's store keys are invalid
     * @throws IllegalStateException    if the application is closed
     */
    synchronized RetryLifecycle lifecycle(URL consumerUrl) {
        if (closed) {
            throw new IllegalStateException("wheelfailback: the application of " + consumerUrl.getServiceKey()
                    + " is destroyed");
        }
        if (lifecycle == null) {
            String application = application(consumerUrl);
            ConsoleConfig consoleConfig = ConsoleConfig.of(consumerUrl);
            FailbackStore opened = FailbackStore.open(consumerUrl);
            RetryJournal journal = opened.journal();
            lifecycle = RetryLifecycle.builder(application).timer(timer)
                    .executor(task -> lanes.execute(this, task)).journal(journal)
                    .deadLetters(opened.deadLetterPolicy())
                    .listener(event -> onEvent(event, opened)).build();
            store = opened;
            WheelFailback.register(lifecycle);
            console = consoleConfig.start(lifecycle);
            if (journal != null && sweeps) {
                scheduleAdoption();
            }
        }
        return lifecycle;
    }

    /** @return the store of the application, or null before its first reference */
    synchronized FailbackStore store() {
        return store;
    }

    static String application(URL url) {
        String name = url.getApplication();
        if (name == null || name.isEmpty()) {
            name = url.getOrDefaultApplicationModel().tryGetApplicationName();
        }
        return name == null || name.isEmpty() ? "unnamed" : name;
    }

    private void onEvent(RetryEvent event, FailbackStore opened) {
        WheelFailback.emit(event, opened);
        if (event.type() == RetryEvent.Type.SCHEDULED) {
            startSweep();
        } else if (event.isOutcome()) {
            stopSweepIfIdle();
        }
    }

    private void scheduleAdoption() {
        try {
            adoption = timer.newTimeout(t -> {
                try {
                    lanes.execute(this, this::adopt);
                } catch (RejectedExecutionException full) {
                    if (!closed) {
                        scheduleAdoption(); // both lanes full: at the next period
                    }
                }
            }, store.claimPeriodMillis(), TimeUnit.MILLISECONDS);
        } catch (IllegalStateException | RejectedExecutionException e) {
            // the wheel or the lanes stopped: the application is closing
        }
    }

    /** Runs on the lanes (a claim waits for the database): every live reference claims what it may adopt. */
    private void adopt() {
        for (RetryReference<?> reference : references) {
            if (!closed && reference.live()) {
                reference.resume();
            }
        }
        if (!closed) {
            scheduleAdoption();
        }
    }

    /** A reference of this application was created: the sweep watches it. */
    void track(RetryReference<?> reference) {
        references.add(reference);
    }

    /**
     * The reference ends now if its Dubbo reference is gone ({@link RetryReference#endIfGone()} decides), and is no
     * longer watched then.
     */
    void check(RetryReference<?> reference) {
        if (!reference.endIfGone()) {
            references.remove(reference);
        }
    }

    private void startSweep() {
        if (sweeps && !closed && sweeping.compareAndSet(false, true)) {
            scheduleSweep();
        }
    }

    private void scheduleSweep() {
        try {
            sweep = timer.newTimeout(t -> sweep(), SWEEP_MILLIS, TimeUnit.MILLISECONDS);
        } catch (IllegalStateException | RejectedExecutionException e) {
            sweeping.set(false); // the wheel stopped: the application is closing, and close() hands everything over
        }
    }

    /**
     * Has the references whose Dubbo reference was destroyed hand their pending calls over. While calls are pending and the runtime is
     * open, the sweep puts itself back on the wheel.
     */
    void sweep() {
        references.forEach(this::check);
        if (!sweeps || closed) {
            return;
        }
        if (pending() > 0) {
            scheduleSweep();
            return;
        }
        sweeping.set(false);
        if (pending() > 0) {
            startSweep(); // a call came in between the check and the reset
        }
    }

    private void stopSweepIfIdle() {
        Timeout t = sweep;
        // a sweep already running (cancel fails) finds nothing pending and stops by itself
        if (pending() == 0 && t != null && t.cancel()) {
            sweeping.set(false);
            if (pending() > 0) {
                startSweep(); // a call came in meanwhile
            }
        }
    }

    private int pending() {
        int n = 0;
        for (RetryReference<?> reference : references) {
            n += reference.pending();
        }
        return n;
    }

    /** Hands every pending retry over (to the journal, or the store), then gives the wheel back. */
    void close() {
        RetryLifecycle l;
        FailbackStore s;
        FailbackConsole c;
        synchronized (this) {
            closed = true;
            l = lifecycle;
            s = store;
            c = console;
        }
        if (c != null) {
            c.close();
        }
        if (l != null) {
            l.close();
            WheelFailback.unregister(l);
        }
        if (s != null) {
            s.close();
        }
        for (Timeout t : new Timeout[]{sweep, adoption}) {
            if (t != null) {
                t.cancel();
            }
        }
        lanes.shutdown();
        if (lease != null) {
            lease.release();
        }
    }
}
