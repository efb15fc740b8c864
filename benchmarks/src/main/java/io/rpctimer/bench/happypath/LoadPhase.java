package io.rpctimer.bench.happypath;

import io.rpctimer.demo.provider.api.NotificationService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Drives one {@link Workload} against one consumer's proxy for a warm-up and then a measurement, and returns what
 * the measurement saw: every answered call's latency (HdrHistogram, nanoseconds, 3 significant digits), the calls
 * answered and the calls that failed, and the process's CPU time and GC time over the measured window (the whole
 * JVM: consumer, both providers and ZooKeeper). The warm-up's latencies are recorded and thrown away at the switch,
 * so the callers never pause between the two.
 *
 * <p>Every call sends the same call id and message, so that every configuration sends the providers the same bytes.
 *
 * <p><b>Threading:</b> {@link #run} is called from one thread; it starts its caller threads and joins them before
 * returning. Async answers are recorded on Dubbo's threads.
 */
final class LoadPhase {

    static final String CALL_ID = "happy-path";
    static final String MESSAGE = "hello";
    private static final long JOIN_MILLIS = 10_000;

    private final NotificationService service;
    private final Workload workload;
    private final Recorder recorder = new Recorder(3);
    private final LongAdder answered = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final AtomicLong nextSlot = new AtomicLong();
    private volatile boolean measuring;
    private volatile boolean stopped;
    private long startNanos;
    private double periodNanos;

    /**
     * What the measurement saw.
     *
     * @param behind open loop: slots due by the end of the measurement that no caller had sent yet (the callers fell
     *               behind the rate, and those calls' latencies are missing); 0 for closed loop
     * @param cpuNanos the process's CPU time over the measurement, every thread of the JVM included; the operating
     *                 system counts it in clock ticks (10 ms on Linux), so a short phase may read 0
     * @param gcMillis the collectors' time over the measurement
     */
    record Result(Histogram latencyNanos, long answered, long failed, double seconds, long behind, long cpuNanos,
                  long gcMillis) {
        double perSecond() {
            return answered / seconds;
        }

        /** @return the process's CPU time per answered call, in microseconds */
        double cpuMicrosPerCall() {
            return answered == 0 ? Double.NaN : cpuNanos / 1e3 / answered;
        }
    }

    private LoadPhase(NotificationService service, Workload workload) {
        this.service = service;
        this.workload = workload;
    }

    /** Runs {@code workload} on {@code service}: {@code warmup}, then {@code measure}. */
    static Result run(NotificationService service, Workload workload, Duration warmup, Duration measure)
            throws InterruptedException {
        return new LoadPhase(service, workload).run(warmup, measure);
    }

    private Result run(Duration warmup, Duration measure) throws InterruptedException {
        startNanos = System.nanoTime();
        periodNanos = workload.closedLoop() ? 0 : 1e9 / workload.perSecond();
        List<Thread> callers = startCallers();
        LockSupport.parkNanos(warmup.toNanos());
        recorder.getIntervalHistogram(); // drops the warm-up
        answered.reset();
        failed.reset();
        long cpuFrom = ThreadCost.processCpuNow();
        long gcFrom = ThreadCost.gcMillisNow();
        measuring = true;
        long from = System.nanoTime();
        LockSupport.parkNanos(measure.toNanos());
        measuring = false;
        Histogram h = recorder.getIntervalHistogram();
        long end = System.nanoTime();
        long cpu = ThreadCost.processCpuNow() - cpuFrom;
        long gc = ThreadCost.gcMillisNow() - gcFrom;
        double seconds = (end - from) / 1e9;
        long due = workload.closedLoop() ? 0 : (long) ((end - startNanos) / periodNanos);
        long behind = Math.max(0, due - (workload.closedLoop() ? 0 : nextSlot.get()));
        long ok = answered.sum();
        long bad = failed.sum();
        stopped = true;
        for (Thread t : callers) {
            t.join(JOIN_MILLIS);
            if (t.isAlive()) {
                throw new IllegalStateException(t.getName() + " did not stop within " + JOIN_MILLIS + " ms");
            }
        }
        return new Result(h, ok, bad, seconds, behind, cpu, gc);
    }

    private List<Thread> startCallers() {
        List<Thread> threads = new ArrayList<>();
        if (workload.sync()) {
            for (int i = 0; i < workload.concurrency(); i++) {
                threads.add(thread(workload.closedLoop() ? this::syncClosed : this::syncOpen, "sync-" + i));
            }
        } else {
            threads.add(thread(workload.closedLoop() ? this::asyncClosed : this::asyncOpen, "async"));
        }
        threads.forEach(Thread::start);
        return threads;
    }

    private static Thread thread(Runnable body, String name) {
        Thread t = new Thread(body, "happypath-caller-" + name);
        t.setDaemon(true);
        return t;
    }

    private void syncClosed() {
        while (!stopped) {
            long sent = System.nanoTime();
            syncCall(sent);
        }
    }

    /** Claims slots in order; a slot claimed late is still measured from its intended time. */
    private void syncOpen() {
        while (!stopped) {
            long due = awaitSlot(nextSlot.getAndIncrement());
            if (due != Long.MIN_VALUE) {
                syncCall(due);
            }
        }
    }

    private void syncCall(long fromNanos) {
        String reply;
        try {
            reply = service.send(CALL_ID, MESSAGE);
        } catch (RuntimeException e) {
            reply = null;
        }
        done(fromNanos, reply != null); // a failback cluster answers a failed call with null
    }

    private void asyncClosed() {
        Semaphore inFlight = new Semaphore(workload.concurrency());
        while (!stopped) {
            try {
                if (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    continue;
                }
            } catch (InterruptedException e) {
                return;
            }
            asyncCall(System.nanoTime()).whenComplete((r, e) -> inFlight.release());
        }
        inFlight.acquireUninterruptibly(workload.concurrency()); // every call answered before the phase ends
    }

    private void asyncOpen() {
        List<CompletableFuture<?>> tail = new ArrayList<>();
        while (!stopped) {
            long due = awaitSlot(nextSlot.getAndIncrement());
            if (due != Long.MIN_VALUE) {
                CompletableFuture<?> f = asyncCall(due);
                tail.add(f);
                tail.removeIf(CompletableFuture::isDone);
            }
        }
        tail.forEach(CompletableFuture::join);
    }

    private CompletableFuture<?> asyncCall(long fromNanos) {
        try {
            return service.sendAsync(CALL_ID, MESSAGE).handle((r, e) -> {
                done(fromNanos, e == null && r != null);
                return null;
            });
        } catch (RuntimeException e) {
            done(fromNanos, false);
            return CompletableFuture.completedFuture(null);
        }
    }

    /** @return slot {@code i}'s intended send time, after parking until then; MIN_VALUE if stopped meanwhile */
    private long awaitSlot(long i) {
        long due = startNanos + (long) (i * periodNanos);
        long wait;
        while ((wait = due - System.nanoTime()) > 0) {
            if (stopped) {
                return Long.MIN_VALUE;
            }
            LockSupport.parkNanos(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(100)));
        }
        return stopped ? Long.MIN_VALUE : due;
    }

    private void done(long fromNanos, boolean ok) {
        long latency = System.nanoTime() - fromNanos;
        if (!ok) {
            if (measuring) {
                failed.increment();
            }
            return;
        }
        recorder.recordValue(Math.max(0, latency));
        if (measuring) {
            answered.increment();
        }
    }
}
