package io.rpctimer.demo.consumer;

import java.time.Duration;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Sends a run's calls through a {@link DemoConsumer} at a steady rate: call ids {@code c-001 .. c-200}, sync, async
 * or alternately. A pacing thread starts one call every {@code 1/rate} seconds on a pool of caller threads, so a
 * sync call that waits out a timeout never slows the pace.
 *
 * <pre>{@code
 * LoadDriver load = new LoadDriver(consumer, 200, 10.0, LoadDriver.Mode.MIXED);
 * load.start();
 * load.awaitReturned(Duration.ofMinutes(1));   // each caller has its answer: a reply, null, or an exception
 * load.close();
 * }</pre>
 *
 * <p><b>Threading:</b> thread-safe; {@link #start()} once. {@link #stop()} and {@link #close()} may come from any
 * thread (e.g. a shutdown hook).
 */
public final class LoadDriver implements AutoCloseable {

    /** How calls are made. */
    public enum Mode {
        /** Every call is {@code send(...)}: the caller's thread waits for the answer. */
        SYNC("sync calls"),
        /** Every call is {@code sendAsync(...)}: the caller gets a CompletableFuture. */
        ASYNC("async calls (CompletableFuture)"),
        /** Odd calls sync, even calls async. */
        MIXED("sync and async alternately");

        private final String description;

        Mode(String description) {
            this.description = description;
        }

        /** @return e.g. {@code "sync and async alternately"} */
        public String description() {
            return description;
        }

        /** @param index 0-based call index */
        boolean isSync(int index) {
            return this == SYNC || this == MIXED && index % 2 == 0;
        }
    }

    private final DemoConsumer consumer;
    private final int calls;
    private final long periodNanos;
    private final Mode mode;
    private final ScheduledExecutorService pacer;
    private final ExecutorService callers;
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicInteger sent = new AtomicInteger();
    private final Queue<CompletableFuture<CallerSaw>> answers = new ConcurrentLinkedQueue<>();
    private final CompletableFuture<Integer> allSent = new CompletableFuture<>();
    private final AtomicInteger broken = new AtomicInteger();
    private volatile String firstBroken;
    private volatile boolean stopped;

    /**
     * @param consumer      sends the calls and keeps their account
     * @param calls         how many, at least 0 (0: a run that only delivers retries resumed from the journal)
     * @param ratePerSecond calls started per second, more than 0 and at most 1,000,000
     * @param mode          sync, async, or alternately
     * @throws IllegalArgumentException naming the parameter and the value
     */
    public LoadDriver(DemoConsumer consumer, int calls, double ratePerSecond, Mode mode) {
        if (calls < 0) {
            throw new IllegalArgumentException("calls: " + calls + " (expected: >= 0)");
        }
        if (!(ratePerSecond > 0 && ratePerSecond <= 1_000_000)) {
            throw new IllegalArgumentException("ratePerSecond: " + ratePerSecond + " (expected: > 0 and <= 1000000)");
        }
        this.consumer = consumer;
        this.calls = calls;
        this.periodNanos = Math.max(1, Math.round(1e9 / ratePerSecond));
        this.mode = mode;
        this.pacer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "load-pacer"));
        AtomicInteger n = new AtomicInteger();
        this.callers = Executors.newCachedThreadPool(r -> daemon(r, "caller-" + n.incrementAndGet()));
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /**
     * @param index 0-based call index
     * @param calls calls in the run, for the width of the number
     * @return e.g. {@code c-007} for index 6 of 200
     */
    public static String callId(int index, int calls) {
        int width = String.valueOf(calls).length();
        return String.format(Locale.ROOT, "c-%0" + width + "d", index + 1);
    }

    /** Starts sending now: the first call at once, then one every {@code 1/rate} seconds. */
    public void start() {
        pacer.scheduleAtFixedRate(this::tick, 0, periodNanos, TimeUnit.NANOSECONDS);
    }

    private void tick() {
        int i = next.getAndIncrement();
        if (stopped || i >= calls) {
            allSent.complete(sent.get());
            throw new CancellationSignal(); // ends the periodic task
        }
        String id = callId(i, calls);
        String message = "notification " + id;
        CompletableFuture<CallerSaw> answer = mode.isSync(i)
                ? CompletableFuture.supplyAsync(() -> consumer.send(id, message), callers)
                : CompletableFuture.supplyAsync(() -> consumer.sendAsync(id, message), callers)
                        .thenCompose(Function.identity());
        boolean async = !mode.isSync(i);
        answer.whenComplete((saw, failure) -> {
            if (failure != null && broken.getAndIncrement() == 0) {
                firstBroken = id + ": " + describeBroken(failure, async);
            }
        });
        answers.add(answer);
        if (sent.incrementAndGet() == calls) {
            allSent.complete(calls);
        }
    }

    /** Says why a call threw in the caller itself: DemoConsumer classifies every failure the call can report. */
    private static String describeBroken(Throwable failure, boolean async) {
        Throwable t = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause()
                : failure;
        if (async && t instanceof NullPointerException
                && String.valueOf(t.getMessage()).contains("CompletableFuture")) {
            return "sendAsync() returned null instead of a CompletableFuture";
        }
        return FailureText.of(t);
    }

    /** Thrown to end {@code scheduleAtFixedRate}; never escapes the pacer. */
    private static final class CancellationSignal extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CancellationSignal() {
            super(null, null, false, false);
        }
    }

    /** @return calls started so far */
    public int sent() {
        return sent.get();
    }

    /**
     * @return calls whose caller got no answer at all because the call threw in the caller itself, outside what
     *         {@link DemoConsumer} classifies (e.g. a {@code CompletableFuture} method that returned null)
     */
    public int brokenAnswers() {
        return broken.get();
    }

    /** @return the first broken answer, e.g. {@code c-062: NullPointerException: ...}; null if none */
    public String firstBrokenAnswer() {
        return firstBroken;
    }

    /** @return calls this run sends, if not stopped */
    public int calls() {
        return calls;
    }

    /**
     * Waits until every call has been sent and every caller has its answer (sync: the method returned; async: the
     * future completed).
     *
     * @param max the longest wait
     * @return whether everything returned in time
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitReturned(Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        try {
            allSent.get(max.toNanos(), TimeUnit.NANOSECONDS);
            CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
                    .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            return true; // a broken answer (see brokenAnswers()); allOf waited for every other one
        }
    }

    /** @return completes with the number of calls sent when sending is over (all sent, or stopped) */
    public CompletableFuture<Integer> sendingDone() {
        return allSent.copy();
    }

    /** Sends no more calls; calls already started go on. Idempotent. */
    public void stop() {
        stopped = true;
        allSent.complete(sent.get());
    }

    /** Stops sending and releases the threads; calls still running finish on their own. Idempotent. */
    @Override
    public void close() {
        stopped = true;
        pacer.shutdownNow();
        allSent.complete(sent.get());
        callers.shutdown();
    }
}
