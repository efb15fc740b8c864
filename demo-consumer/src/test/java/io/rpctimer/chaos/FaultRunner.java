package io.rpctimer.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Injects a {@link FaultSchedule} into the running fleet, providers and database: each fault at its time, on a thread
 * of its own, holding its target's lock from its beginning to its end (a fault whose target is still busy waits).
 *
 * <p><b>Threading:</b> {@link #start} and {@link #await} from the test thread; faults run on the runner's pool.
 */
final class FaultRunner {

    /** A fault as it was injected: when it began and ended (ms from the start of the fault phase), or why it failed. */
    record Injected(Fault fault, long beganMillis, long endedMillis, String failure) {
    }

    private static final Duration HANG = Duration.ofSeconds(3);
    /** A fault that cannot begin within this of its time is skipped (and reported): the run stays bounded. */
    private static final long MAX_LATE_MILLIS = 60_000;

    private final ChaosFleet fleet;
    private final ChaosProviders providers;
    private final ChaosPostgres postgres;
    private final Map<String, ReentrantLock> targets = new ConcurrentHashMap<>();
    private final List<Injected> injected = new CopyOnWriteArrayList<>();
    private final List<ScheduledFuture<?>> pending = new ArrayList<>();
    private final ScheduledExecutorService pool = Executors.newScheduledThreadPool(8, r -> {
        Thread t = new Thread(r, "chaos-fault");
        t.setDaemon(true);
        return t;
    });
    private long startNanos;

    FaultRunner(ChaosFleet fleet, ChaosProviders providers, ChaosPostgres postgres) {
        this.fleet = fleet;
        this.providers = providers;
        this.postgres = postgres;
    }

    /** Schedules every fault of {@code schedule} from now on. */
    void start(FaultSchedule schedule) {
        startNanos = System.nanoTime();
        for (Fault f : schedule.faults()) {
            pending.add(pool.schedule(() -> run(f), f.at().toMillis(), TimeUnit.MILLISECONDS));
        }
    }

    /** Waits until every fault has ended (at most {@code max}), then stops the pool. */
    void await(Duration max) throws Exception {
        long deadline = System.nanoTime() + max.toNanos();
        for (ScheduledFuture<?> f : pending) {
            f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        pool.shutdown();
    }

    /** @return the faults injected so far */
    List<Injected> injected() {
        return List.copyOf(injected);
    }

    private void run(Fault f) {
        ReentrantLock lock = targets.computeIfAbsent(f.target(), t -> new ReentrantLock());
        lock.lock();
        long began = sinceStartMillis();
        if (began - f.at().toMillis() > MAX_LATE_MILLIS) { // its target's last fault ran long (slow restarts)
            lock.unlock();
            injected.add(new Injected(f, began, began, "skipped: its target was busy until "
                    + (began - f.at().toMillis()) + " ms past its time"));
            return;
        }
        String failure = null;
        try {
            inject(f);
        } catch (Exception | AssertionError e) {
            failure = e.toString();
            System.err.println("chaos: fault " + f + " failed: " + e);
        } finally {
            try {
                failure = revive(f, failure);
            } finally {
                lock.unlock();
                injected.add(new Injected(f, began, sinceStartMillis(), failure));
            }
        }
    }

    /** A consumer fault that failed half-way may leave its slot without a process: start one, as the fault would. */
    private String revive(Fault f, String failure) {
        if (!f.kind().onConsumer() || fleet.slot(f.target()).running()) {
            return failure;
        }
        try {
            fleet.slot(f.target()).end(false);
            fleet.slot(f.target()).start(0);
            return failure;
        } catch (Exception | AssertionError e) {
            return (failure == null ? "" : failure + "; ") + "restart failed: " + e;
        }
    }

    private void inject(Fault f) throws Exception {
        switch (f.kind()) {
            case PAUSE -> {
                ChaosFleet.Slot s = fleet.slot(f.target());
                s.process().signal("STOP");
                try {
                    hold(f.holds());
                } finally {
                    s.process().signal("CONT");
                }
            }
            case KILL -> {
                fleet.slot(f.target()).end(false);
                hold(f.holds());
                fleet.slot(f.target()).start(0);
            }
            case DEPLOY -> {
                fleet.slot(f.target()).end(true);
                fleet.slot(f.target()).start(0);
            }
            case SKEW -> {
                ChaosFleet.Slot s = fleet.slot(f.target());
                s.end(true);
                s.start(f.skewMillis());
                hold(f.holds());
                s.end(true);
                s.start(0);
            }
            case DB_RESTART -> {
                postgres.stop();
                try {
                    hold(f.holds());
                } finally {
                    postgres.startAgain();
                }
            }
            case PROVIDER_ERRORS -> window(f, () -> providers.errors(f.target()));
            case PROVIDER_HANG -> window(f, () -> providers.hang(f.target(), HANG));
        }
    }

    private void window(Fault f, Runnable begin) {
        begin.run();
        try {
            hold(f.holds());
        } finally {
            providers.restore(f.target());
        }
    }

    /** Keeps a fault in place for {@code d}: waits on the clock, nothing else. */
    static void hold(Duration d) {
        long end = System.nanoTime() + d.toNanos();
        long left;
        while ((left = end - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
        }
    }

    private long sinceStartMillis() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }
}
