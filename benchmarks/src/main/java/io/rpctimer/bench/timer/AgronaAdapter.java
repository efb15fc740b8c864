package io.rpctimer.bench.timer;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.agrona.DeadlineTimerWheel;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * Agrona's {@link DeadlineTimerWheel} (2.3.2) used as Agrona means it, single-threaded: one driver thread owns the
 * wheel, runs the scheduling jobs given to {@link #load}, polls the wheel, runs due tasks itself, and sleeps to the
 * next tick. Tick 2^23 ns (8.39 ms: Agrona needs a power of two), 512 spokes, deadlines from
 * {@link System#nanoTime()}.
 *
 * <p><b>Threading:</b> {@link #load}, {@link #start} and {@link #close} from any thread; the scheduling methods only
 * on the driver thread, that is inside {@link #load}.
 */
final class AgronaAdapter extends BenchTimer {

    static final String WORKER = "bench-agrona-driver";

    /** Driver thread only. */
    private final DeadlineTimerWheel wheel;
    /** Tasks of {@link #schedule(Runnable, long)} by timer id; driver thread only. */
    private final Long2ObjectHashMap<Runnable> tasks = new Long2ObjectHashMap<>();
    private final DeadlineTimerWheel.TimerHandler handler = this::onExpiry;
    private final Runnable onFire;
    private final ConcurrentLinkedQueue<Runnable> jobs = new ConcurrentLinkedQueue<>();
    private final Thread driver;
    private final AtomicBoolean started = new AtomicBoolean();
    private volatile boolean running = true;

    AgronaAdapter(Runnable onFire) {
        this.wheel = new DeadlineTimerWheel(TimeUnit.NANOSECONDS, System.nanoTime(), BenchConfig.AGRONA_TICK_NANOS,
                BenchConfig.TICKS_PER_WHEEL);
        this.onFire = onFire;
        this.driver = new Thread(this::drive, WORKER);
        this.driver.setDaemon(true);
    }

    @Override
    boolean scheduleAndCancel(long delayNanos) {
        checkDriver();
        return wheel.cancelTimer(wheel.scheduleTimer(System.nanoTime() + delayNanos));
    }

    @Override
    void scheduleShared(long delayNanos) {
        checkDriver();
        wheel.scheduleTimer(System.nanoTime() + delayNanos);
    }

    @Override
    void schedule(Runnable task, long delayNanos) {
        checkDriver();
        tasks.put(wheel.scheduleTimer(System.nanoTime() + delayNanos), task);
    }

    @Override
    void load(Runnable scheduling) {
        start();
        CompletableFuture<Void> done = new CompletableFuture<>();
        jobs.add(() -> {
            try {
                scheduling.run();
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        LockSupport.unpark(driver);
        done.join();
    }

    private void checkDriver() {
        if (Thread.currentThread() != driver) {
            throw new IllegalStateException("thread: " + Thread.currentThread().getName()
                    + " (expected: " + WORKER + "; schedule on Agrona's wheel inside load())");
        }
    }

    private void drive() {
        while (running) {
            Runnable job;
            while ((job = jobs.poll()) != null) {
                job.run();
            }
            long now = System.nanoTime();
            do {
                wheel.poll(now, handler, Integer.MAX_VALUE);
            } while (now >= wheel.currentTickTime());
            long sleepNanos = wheel.currentTickTime() - System.nanoTime();
            if (sleepNanos > 0 && jobs.isEmpty()) {
                LockSupport.parkNanos(this, sleepNanos);
            }
        }
    }

    private boolean onExpiry(TimeUnit unit, long now, long timerId) {
        Runnable task = tasks.isEmpty() ? null : tasks.remove(timerId);
        (task != null ? task : onFire).run();
        return true;
    }

    @Override
    void start() {
        if (started.compareAndSet(false, true)) {
            driver.start();
        }
    }

    @Override
    String workerThreadName() {
        return WORKER;
    }

    @Override
    public void close() {
        running = false;
        LockSupport.unpark(driver);
        try {
            driver.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
