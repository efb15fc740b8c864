package io.rpctimer.bench.failback;

import io.rpctimer.demo.consumer.CallerSaw;
import io.rpctimer.demo.consumer.DemoConsumer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends a fixed number of calls through a {@link DemoConsumer} at a fixed rate: call {@code i} (id
 * {@code <prefix>-i}) goes out at {@code start + i / rate}. Sync callers are a pool of threads large enough that a
 * call blocked for the whole timeout does not delay the next slot; async calls are issued by one thread and complete
 * on Dubbo's threads. Every send and every answer is recorded in a {@link CallTimeline}.
 *
 * <p><b>Threading:</b> its own daemon threads send; {@link #awaitAnswered} and the accessors may be called from any
 * thread.
 */
final class LoadSender {

    /** How the callers call. */
    enum Callers {
        /** Caller threads block in {@code send}. */
        SYNC,
        /** One thread issues {@code sendAsync}; futures complete on Dubbo's threads. */
        ASYNC
    }

    private final DemoConsumer consumer;
    private final CallTimeline timeline;
    private final int calls;
    private final long startNanos;
    private final double periodNanos;
    private final String prefix;
    private final AtomicInteger nextSlot = new AtomicInteger();
    private final CountDownLatch answered;
    private final Map<CallerSaw, AtomicInteger> saw = new ConcurrentHashMap<>();
    private final Map<String, Throwable> failures = new ConcurrentHashMap<>();
    private final ExecutorService threads;

    private LoadSender(DemoConsumer consumer, CallTimeline timeline, Callers callers, int calls, double perSecond,
                       Duration timeout, String prefix, long startNanos) {
        this.consumer = consumer;
        this.timeline = timeline;
        this.calls = calls;
        this.periodNanos = 1e9 / perSecond;
        this.prefix = prefix;
        this.startNanos = startNanos;
        this.answered = new CountDownLatch(calls);
        // a sync caller may block for the timeout: enough threads for two timeouts' worth of slots
        int n = callers == Callers.ASYNC ? 1
                : (int) Math.min(256, Math.ceil(perSecond * 2 * Math.max(0.5, timeout.toMillis() / 1000.0)) + 4);
        this.threads = Executors.newFixedThreadPool(n, r -> {
            Thread t = new Thread(r, "failback-bench-caller-" + prefix);
            t.setDaemon(true);
            return t;
        });
        for (int i = 0; i < n; i++) {
            threads.execute(callers == Callers.SYNC ? this::syncCaller : this::asyncIssuer);
        }
        threads.shutdown();
    }

    /**
     * Starts sending.
     *
     * @param calls      how many calls, at least 1
     * @param perSecond  the rate, calls per second, {@code > 0}
     * @param timeout    the consumer's call timeout (sizes the sync caller pool)
     * @param startNanos {@code System.nanoTime()} of the first slot
     * @throws IllegalArgumentException naming the parameter and the value
     */
    static LoadSender start(DemoConsumer consumer, CallTimeline timeline, Callers callers, int calls, double perSecond,
                            Duration timeout, String prefix, long startNanos) {
        if (calls < 1) {
            throw new IllegalArgumentException("calls: " + calls + " (expected: >= 1)");
        }
        if (!(perSecond > 0) || Double.isInfinite(perSecond)) {
            throw new IllegalArgumentException("perSecond: " + perSecond + " (expected: > 0)");
        }
        return new LoadSender(consumer, timeline, callers, calls, perSecond, timeout, prefix, startNanos);
    }

    private void syncCaller() {
        int i;
        while ((i = nextSlot.getAndIncrement()) < calls) {
            waitForSlot(i);
            String id = id(i);
            timeline.sent(id);
            try {
                answer(id, consumer.send(id, "message " + i));
            } catch (Throwable t) { // DemoConsumer turns every RPC outcome into a CallerSaw: anything else is a bug
                failed(id, t);
            }
        }
    }

    private void asyncIssuer() {
        int i;
        while ((i = nextSlot.getAndIncrement()) < calls) {
            waitForSlot(i);
            String id = id(i);
            timeline.sent(id);
            try {
                consumer.sendAsync(id, "message " + i).whenComplete((s, t) -> {
                    if (t != null) {
                        failed(id, t);
                    } else {
                        answer(id, s);
                    }
                });
            } catch (Throwable t) {
                failed(id, t);
            }
        }
    }

    private void answer(String id, CallerSaw s) {
        timeline.callerGot(id, s);
        saw.computeIfAbsent(s, k -> new AtomicInteger()).incrementAndGet();
        answered.countDown();
    }

    private void failed(String id, Throwable t) {
        failures.put(id, t);
        answered.countDown();
    }

    /** Paces the sender: parks until call {@code i}'s slot. */
    private void waitForSlot(int i) {
        long due = startNanos + (long) (i * periodNanos);
        long wait;
        while ((wait = due - System.nanoTime()) > 0) {
            LockSupport.parkNanos(wait);
        }
    }

    String id(int i) {
        return prefix + "-" + i;
    }

    /**
     * Waits until every caller got its answer.
     *
     * @return whether all did within {@code max}
     */
    boolean awaitAnswered(Duration max) throws InterruptedException {
        return answered.await(max.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** @return how many callers saw what so far */
    Map<String, Integer> saw() {
        Map<String, Integer> m = new java.util.TreeMap<>();
        saw.forEach((k, v) -> m.put(k.name(), v.get()));
        return m;
    }

    /** @return callers whose code failed unexpectedly (not an RPC outcome): call id to the throwable */
    Map<String, Throwable> failures() {
        return Map.copyOf(failures);
    }

    /** Stops sending (after a failure). */
    void abort() {
        nextSlot.set(calls);
        threads.shutdownNow();
    }
}
