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
 * Drives one {@link Workload} against one consumer's proxy, or against several in turns call by call, for a warm-up
 * and then a measurement, and returns what the measurement saw per proxy: every answered call's latency
 * (HdrHistogram, nanoseconds, 3 significant digits), the calls answered and the calls that failed, and the process's
 * CPU time and GC time over the measured window (the whole JVM: consumer, both providers and ZooKeeper). The warm-up's
 * latencies are recorded and thrown away at the switch, so the callers never pause between the two.
 *
 * <p>In turns ({@link #runInTurns}), call {@code i} of the phase goes to proxy {@code i mod n} (at a fixed rate: the
 * call of slot {@code i}), so whatever the machine does meanwhile falls on every proxy alike. The process's CPU time
 * cannot be told apart then: each proxy is given the same share per answered call.
 *
 * <p>Every call sends the same call id and message, so that every configuration sends the providers the same bytes.
 *
 * <p><b>Threading:</b> {@link #run} and {@link #runInTurns} are called from one thread; each starts its caller
 * threads and joins them before returning. Async answers are recorded on Dubbo's threads.
 */
final class LoadPhase {

    static final String CALL_ID = "happy-path";
    static final String MESSAGE = "hello";
    private static final long JOIN_MILLIS = 10_000;

    private final List<NotificationService> services;
    private final Workload workload;
    private final Recorder[] recorders;
    private final LongAdder[] answered;
    private final LongAdder[] failed;
    private final AtomicLong nextSlot = new AtomicLong();
    private final AtomicLong nextCall = new AtomicLong();
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
     *                 system counts it in clock ticks (10 ms on Linux), so a short phase may read 0; in turns,
     *                 this service's share: the same for every answered call of every service
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

    private LoadPhase(List<NotificationService> services, Workload workload) {
        this.services = List.copyOf(services);
        this.workload = workload;
        int n = services.size();
        recorders = new Recorder[n];
        answered = new LongAdder[n];
        failed = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            recorders[i] = new Recorder(3);
            answered[i] = new LongAdder();
            failed[i] = new LongAdder();
        }
    }

    /** Runs {@code workload} on {@code service}: {@code warmup}, then {@code measure}. */
    static Result run(NotificationService service, Workload workload, Duration warmup, Duration measure)
            throws InterruptedException {
        return new LoadPhase(List.of(service), workload).run(warmup, measure).get(0);
    }

    /**
     * Runs {@code workload} on {@code services} in turns, call by call: {@code warmup}, then {@code measure}.
     *
     * @return what the measurement saw of each service, in the order of {@code services}
     */
    static List<Result> runInTurns(List<NotificationService> services, Workload workload, Duration warmup,
                                   Duration measure) throws InterruptedException {
        if (services.isEmpty()) {
            throw new IllegalArgumentException("services: none (expected: at least one)");
        }
        return new LoadPhase(services, workload).run(warmup, measure);
    }

    private List<Result> run(Duration warmup, Duration measure) throws InterruptedException {
        startNanos = System.nanoTime();
        periodNanos = workload.closedLoop() ? 0 : 1e9 / workload.perSecond();
        List<Thread> callers = startCallers();
        LockSupport.parkNanos(warmup.toNanos());
        for (int i = 0; i < services.size(); i++) {
            recorders[i].getIntervalHistogram(); // drops the warm-up
            answered[i].reset();
            failed[i].reset();
        }
        long cpuFrom = ThreadCost.processCpuNow();
        long gcFrom = ThreadCost.gcMillisNow();
        measuring = true;
        long from = System.nanoTime();
        LockSupport.parkNanos(measure.toNanos());
        measuring = false;
        Histogram[] h = new Histogram[services.size()];
        for (int i = 0; i < h.length; i++) {
            h[i] = recorders[i].getIntervalHistogram();
        }
        long end = System.nanoTime();
        long cpu = ThreadCost.processCpuNow() - cpuFrom;
        long gc = ThreadCost.gcMillisNow() - gcFrom;
        double seconds = (end - from) / 1e9;
        long due = workload.closedLoop() ? 0 : (long) ((end - startNanos) / periodNanos);
        long sent = workload.closedLoop() ? 0 : Math.min(due, nextSlot.get());
        long[] ok = new long[h.length];
        long okAll = 0;
        for (int i = 0; i < h.length; i++) {
            ok[i] = answered[i].sum();
            okAll += ok[i];
        }
        stopped = true;
        for (Thread t : callers) {
            t.join(JOIN_MILLIS);
            if (t.isAlive()) {
                throw new IllegalStateException(t.getName() + " did not stop within " + JOIN_MILLIS + " ms");
            }
        }
        List<Result> results = new ArrayList<>(h.length);
        for (int i = 0; i < h.length; i++) {
            long behind = slotsOf(i, due) - slotsOf(i, sent);
            long cpuShare = okAll == 0 ? cpu / h.length : Math.round((double) cpu * ok[i] / okAll);
            results.add(new Result(h[i], ok[i], failed[i].sum(), seconds, behind, cpuShare, gc));
        }
        return results;
    }

    /** @return how many of the slots {@code 0..slots-1} go to service {@code i} */
    private long slotsOf(int i, long slots) {
        int n = services.size();
        return slots <= i ? 0 : (slots - i + n - 1) / n;
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
            syncCall(nextService(), sent);
        }
    }

    /** @return the service whose turn it is, closed loop */
    private int nextService() {
        return services.size() == 1 ? 0 : (int) (nextCall.getAndIncrement() % services.size());
    }

    /** Claims slots in order; a slot claimed late is still measured from its intended time. */
    private void syncOpen() {
        while (!stopped) {
            long slot = nextSlot.getAndIncrement();
            long due = awaitSlot(slot);
            if (due != Long.MIN_VALUE) {
                syncCall((int) (slot % services.size()), due);
            }
        }
    }

    private void syncCall(int service, long fromNanos) {
        String reply;
        try {
            reply = services.get(service).send(CALL_ID, MESSAGE);
        } catch (RuntimeException e) {
            reply = null;
        }
        done(service, fromNanos, reply != null); // a failback cluster answers a failed call with null
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
            asyncCall(nextService(), System.nanoTime()).whenComplete((r, e) -> inFlight.release());
        }
        inFlight.acquireUninterruptibly(workload.concurrency()); // every call answered before the phase ends
    }

    private void asyncOpen() {
        List<CompletableFuture<?>> tail = new ArrayList<>();
        while (!stopped) {
            long slot = nextSlot.getAndIncrement();
            long due = awaitSlot(slot);
            if (due != Long.MIN_VALUE) {
                CompletableFuture<?> f = asyncCall((int) (slot % services.size()), due);
                tail.add(f);
                tail.removeIf(CompletableFuture::isDone);
            }
        }
        tail.forEach(CompletableFuture::join);
    }

    private CompletableFuture<?> asyncCall(int service, long fromNanos) {
        try {
            return services.get(service).sendAsync(CALL_ID, MESSAGE).handle((r, e) -> {
                done(service, fromNanos, e == null && r != null);
                return null;
            });
        } catch (RuntimeException e) {
            done(service, fromNanos, false);
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

    private void done(int service, long fromNanos, boolean ok) {
        long latency = System.nanoTime() - fromNanos;
        if (!ok) {
            if (measuring) {
                failed[service].increment();
            }
            return;
        }
        recorders[service].recordValue(Math.max(0, latency));
        if (measuring) {
            answered[service].increment();
        }
    }
}
