package io.rpctimer.demo.consumer;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Prints a progress line at a fixed interval while a run goes on:
 * <pre>
 *   00:05.0  ... sent 50/200 | delivered 45 (42 first try, 3 on retry) | open 5 | rejected 0 | abandoned 0
 * </pre>
 * {@code open}: calls not answered yet or waiting for a retry.
 *
 * <p><b>Threading:</b> thread-safe; lines come from one daemon thread of its own.
 */
public final class Progress implements AutoCloseable {

    private final Console console;
    private final DemoConsumer consumer;
    private final LoadDriver load;
    private final ScheduledExecutorService timer;

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
        timer.scheduleAtFixedRate(() -> console.timed(line()), ms, ms, TimeUnit.MILLISECONDS);
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
