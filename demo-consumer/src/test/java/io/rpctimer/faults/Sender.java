package io.rpctimer.faults;

import io.rpctimer.demo.consumer.CallerSaw;
import io.rpctimer.demo.consumer.DemoConsumer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends a fixed number of calls through a {@link DemoConsumer} at a fixed rate, from sync caller threads or as async
 * ({@code CompletableFuture}) calls, with call ids {@code <prefix>-0 .. <prefix>-(n-1)}. Bounded in count and time:
 * it sends exactly {@code calls} calls, each at its slot {@code start + i / rate}, and {@link #await} gives up after
 * its limit.
 *
 * <p><b>Threading:</b> the sender's own threads send; the accessors are thread-safe.
 */
final class Sender {

    /** How callers call. */
    enum Mode {
        /** Caller threads block in {@code send} (several at once). */
        SYNC,
        /** One thread issues {@code sendAsync} calls; their futures complete on Dubbo's threads. */
        ASYNC;

        String label() {
            return this == SYNC ? "sync" : "async";
        }
    }

    private final DemoConsumer consumer;
    private final Mode mode;
    private final int calls;
    private final long periodNanos;
    private final String prefix;
    private final AtomicInteger started = new AtomicInteger();
    private final AtomicInteger nextSlot = new AtomicInteger();
    private final List<CompletableFuture<CallerSaw>> results = new ArrayList<>();
    private final Map<String, Throwable> failures = new ConcurrentSkipListMap<>();
    private final ExecutorService threads;
    private final long startNanos = System.nanoTime();

    private Sender(DemoConsumer consumer, Mode mode, int calls, int perSecond, int syncThreads, String prefix) {
        this.consumer = consumer;
        this.mode = mode;
        this.calls = calls;
        this.periodNanos = TimeUnit.SECONDS.toNanos(1) / perSecond;
        this.prefix = prefix;
        int n = mode == Mode.SYNC ? syncThreads : 1;
        this.threads = Executors.newFixedThreadPool(n, r -> {
            Thread t = new Thread(r, "fault-sender-" + prefix);
            t.setDaemon(true);
            return t;
        });
        for (int i = 0; i < calls; i++) {
            results.add(new CompletableFuture<>());
        }
        for (int i = 0; i < n; i++) {
            threads.execute(mode == Mode.SYNC ? this::syncCaller : this::asyncIssuer);
        }
        threads.shutdown();
    }

    /**
     * Starts sending.
     *
     * @param calls       how many calls, ids {@code prefix-0 ..}
     * @param perSecond   the send rate
     * @param syncThreads caller threads in {@link Mode#SYNC} mode
     */
    static Sender start(DemoConsumer consumer, Mode mode, int calls, int perSecond, int syncThreads, String prefix) {
        return new Sender(consumer, mode, calls, perSecond, syncThreads, prefix);
    }

    private void syncCaller() {
        int i;
        while ((i = nextSlot.getAndIncrement()) < calls) {
            waitForSlot(i);
            started.incrementAndGet();
            try {
                results.get(i).complete(consumer.send(id(i), "message " + i));
            } catch (Throwable t) { // DemoConsumer catches RuntimeExceptions: anything else is a test failure
                failed(i, t);
            }
        }
    }

    private void asyncIssuer() {
        int i;
        while ((i = nextSlot.getAndIncrement()) < calls) {
            waitForSlot(i);
            started.incrementAndGet();
            CompletableFuture<CallerSaw> target = results.get(i);
            int call = i;
            try {
                consumer.sendAsync(id(i), "message " + i).whenComplete((saw, t) -> {
                    if (t != null) {
                        failed(call, t);
                    } else {
                        target.complete(saw);
                    }
                });
            } catch (Throwable t) { // e.g. the proxy returned no future, and sendAsync chained on null
                failed(call, t);
            }
        }
    }

    /** The caller of call {@code i} failed in a way {@link DemoConsumer} does not expect: kept for the test. */
    private void failed(int i, Throwable t) {
        failures.put(id(i), t);
        results.get(i).complete(null);
    }

    /** Paces the sender: waits on the clock until call {@code i}'s slot (bounded: one slot per call). */
    private void waitForSlot(int i) {
        long due = startNanos + i * periodNanos;
        long wait;
        while ((wait = due - System.nanoTime()) > 0) {
            LockSupport.parkNanos(wait);
        }
    }

    /** @return the call id of call {@code i} */
    String id(int i) {
        return prefix + "-" + i;
    }

    /** @return calls started so far (sent, or being sent) */
    int started() {
        return started.get();
    }

    /** @return the number of calls this sender sends */
    int calls() {
        return calls;
    }

    /** @return the mode */
    Mode mode() {
        return mode;
    }

    /**
     * Waits until every caller got its answer.
     *
     * @return how many callers saw what
     * @throws TimeoutException if some caller still waits after {@code max}
     */
    Map<CallerSaw, Long> await(Duration max) throws Exception {
        try {
            CompletableFuture.allOf(results.toArray(CompletableFuture[]::new))
                    .get(max.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            List<String> waiting = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                if (!results.get(i).isDone()) {
                    waiting.add(id(i));
                }
            }
            throw new AssertionError(waiting.size() + " of " + calls + " " + mode.label() + " callers got no answer"
                    + " within " + max + " (" + started.get() + " calls started): " + waiting.subList(0,
                    Math.min(20, waiting.size())), e);
        }
        if (!threads.awaitTermination(max.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new TimeoutException("sender threads still running after " + max);
        }
        Map<CallerSaw, Long> saw = new EnumMap<>(CallerSaw.class);
        for (CompletableFuture<CallerSaw> r : results) {
            if (r.join() != null) {
                saw.merge(r.join(), 1L, Long::sum);
            }
        }
        return saw;
    }

    /**
     * @return call id to what its caller's code threw instead of reporting what it saw: {@link DemoConsumer} turns
     *     every RPC outcome into a {@link CallerSaw}, so anything here is a failure (e.g. a null future from the
     *     proxy)
     */
    Map<String, Throwable> failures() {
        return Map.copyOf(failures);
    }

    /** @return for notes: {@code ""}, or how many callers failed and the first failure */
    String failureNote() {
        Map<String, Throwable> f = failures();
        return f.isEmpty() ? "" : "; " + f.size() + " callers FAILED, e.g. " + f.keySet().iterator().next() + " got "
                + f.values().iterator().next();
    }

    /** @return what caller {@code i} saw, or null if it failed (see {@link #failures()}); only after {@link #await} */
    CallerSaw saw(int i) {
        return results.get(i).join();
    }

    /** Stops the sender's threads (for clean-up after a failure). */
    void abort() {
        nextSlot.set(calls);
        threads.shutdownNow();
    }
}
