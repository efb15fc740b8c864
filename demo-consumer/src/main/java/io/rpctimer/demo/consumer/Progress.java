package io.rpctimer.demo.consumer;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Prints a progress line at a fixed interval while a run goes on:
 * <pre>
 *   00:05.0  ... sent 50/200 | delivered 45 (42 first try, 3 on retry) | open 5 | rejected 0 | abandoned 0
 * </pre>
 * {@code open}: calls not answered yet or waiting for a retry. While the retry budget holds retries back, a second
 * line says how many wait for a token and how many retries went out since the line before:
 * <pre>
 *   00:12.0  ... budget: 143 retries wait for a token | 16 sent to a provider in the last 1 s | 206 waited so far
 * </pre>
 *
 * <p><b>Threading:</b> thread-safe; lines come from one daemon thread of its own.
 */
public final class Progress implements AutoCloseable {

    private final Console console;
    private final DemoConsumer consumer;
    private final LoadDriver load;
    private final ScheduledExecutorService timer;
    private long retriesSentBefore; // touched by the timer's thread only
    private boolean waitingBefore; // touched by the timer's thread only

    /**
     * @param console  where the lines go
     * @param consumer whose account is printed
     * @param load     what is being sent
     */
    public Progress(Console console, DemoConsumer consumer, LoadDriver load) {
        this.console = console;
        this.consumer = consumer;
        this.load = load;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "progress");
            t.setDaemon(true);
            return t;
        });
    }

    /** @param every the interval between lines; the first comes after one interval */
    public void start(Duration every) {
        long ms = every.toMillis();
        timer.scheduleAtFixedRate(() -> {
            console.timed(line());
            budgetLine(every).ifPresent(console::timed);
        }, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** @return the budget line, if retries wait for a token now or did at the line before (the end of a wait) */
    private Optional<String> budgetLine(Duration every) {
        return consumer.referenceState().flatMap(r -> {
            long sent = r.stats().retriesSent() - retriesSentBefore;
            retriesSentBefore = r.stats().retriesSent();
            boolean show = r.waitingForBudget() > 0 || waitingBefore;
            waitingBefore = r.waitingForBudget() > 0;
            if (!show) {
                return Optional.empty();
            }
            return Optional.of("... budget: " + r.waitingForBudget() + " retries wait for a token | " + sent
                    + " sent to a provider in the last " + Human.duration(every) + " | " + r.budgetWaits() + " waited so far");
        });
    }

    /** @return the progress line now, without the time */
    public String line() {
        Report r = consumer.report();
        return "... sent " + load.sent() + "/" + load.calls() + " | delivered " + r.delivered() + " ("
                + r.deliveredFirstTry() + " first try, " + r.deliveredOnAnyRetry() + " on retry) | open " + r.pending()
                + " | rejected " + r.rejected() + " | abandoned " + r.abandoned()
                + (r.callerErrors() > 0 ? " | failed to the caller " + r.callerErrors() : "");
    }

    /** Stops the lines. Idempotent. */
    @Override
    public void close() {
        timer.shutdownNow();
    }
}
