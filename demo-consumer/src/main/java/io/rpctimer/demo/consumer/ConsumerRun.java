package io.rpctimer.demo.consumer;

import io.rpctimer.demo.provider.api.NotificationService;
import io.rpctimer.dubbo.WheelFailback;
import io.rpctimer.retry.ReferenceState;
import io.rpctimer.wheel.TimerStats;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One run of a demo consumer, start to report: the {@link Stage} starts (registry, providers), then a
 * {@link DemoConsumer} on {@code cluster=wheelfailback}; the calls go out ({@link LoadDriver}) while the stage's fault
 * script plays; every retry event ({@link EventLines}) and a progress line ({@link Progress}) are printed as they
 * happen; once every call is answered, the run waits for the retries still pending (bounded), reads the wheel's stats,
 * stops the consumer (pending retries are handed over: to the RetryStore, or kept in the journal), then the stage, newest first, and prints
 * the {@link FinalReport}, and with {@code --metrics} the consumer's failback meters ({@link FailbackMeters}).
 *
 * <p>{@link #interrupt()} — what Ctrl-C calls, from a shutdown hook — stops everything in the same order from any
 * point and still prints the report once the consumer had started.
 *
 * <p><b>Threading:</b> {@link #run()} once, from one thread; {@link #interrupt()} from any thread, at any time. Both
 * return the same result; whoever comes second waits for the first to finish.
 */
public final class ConsumerRun {

    /** Exit code when the run could not start (e.g. the registry is unreachable). */
    public static final int CANNOT_START = 3;

    /**
     * How a run ended.
     *
     * @param name               the scenario, or {@code consumer}
     * @param report             the final report; empty if the consumer never started
     * @param retriesDeliveredBy retries delivered, by provider label
     * @param providerLabels     provider address to label, as printed
     * @param interrupted        whether {@link #interrupt()} ended the run
     * @param exitCode           0 when nothing was lost and the report adds up, 1 otherwise, 3 if it could not start
     */
    public record Result(String name, Optional<FinalReport> report, Map<String, Long> retriesDeliveredBy,
                         Map<String, String> providerLabels, boolean interrupted, int exitCode) {
    }

    private static final String SERVICE = NotificationService.class.getName();

    private final Console console;
    private final PrintStream err;
    private final RunSettings settings;
    private final Stage stage;
    private final String consumerName;
    private final Resources resources = new Resources();
    private final Object finishLock = new Object();
    private volatile DemoConsumer consumer; // set once by run()
    private volatile LoadDriver load; // set once by run()
    private volatile EventLines events; // set once by run()
    private volatile Progress progress; // set once by run()
    private volatile ScheduledExecutorService script; // set once by run()
    private volatile FailbackMeters meters; // set once by run(), with --metrics
    private volatile boolean interrupted;
    private Result result; // guarded by finishLock

    /**
     * @param console  where everything is printed
     * @param err      where an error that stops the run is printed, in one line
     * @param settings the load and the consumer's settings
     * @param stage    what surrounds the consumer
     * @param consumerName the consumer's Dubbo application name
     */
    ConsumerRun(Console console, PrintStream err, RunSettings settings, Stage stage, String consumerName) {
        this.console = console;
        this.err = err;
        this.settings = settings;
        this.stage = stage;
        this.consumerName = consumerName;
    }

    /**
     * Runs to the end: start, calls, drain, stop, report.
     *
     * @return how it ended
     */
    public Result run() {
        try {
            start();
            play();
        } catch (Resources.Stopping e) {
            // interrupt() is stopping everything and printing the report
        } catch (RuntimeException e) {
            if (!interrupted) {
                err.println("error: " + (e.getMessage() == null ? FailureText.of(e) : e.getMessage().lines()
                        .findFirst().orElse("")));
                err.flush();
            }
        }
        return finish();
    }

    /**
     * Stops the run now, from any thread (Ctrl-C): no more calls, then the consumer (pending retries are handed
     * over), then the stage, newest first; then prints the report.
     *
     * @return how it ended
     */
    public Result interrupt() {
        if (!interrupted) {
            interrupted = true;
            console.line("");
            console.timed("interrupted: stopping the consumer, then the rest, then the report");
        }
        resources.beginStopping();
        return finish();
    }

    // ---------------------------------------------------------------- start

    private void start() {
        console.line("Starting");
        stage.start(console, resources);
        long t0 = System.nanoTime();
        DemoConsumer.Options options = stage.consumerOptions(settings.applyTo(
                DemoConsumer.options(stage.registryAddress()))).name(consumerName);
        if (settings.metrics()) {
            FailbackMeters m = new FailbackMeters(consumerName);
            meters = m;
            options.beforeStart(m::attach); // before the application registers a meter
        }
        // finish() closes the consumer before anything else; closing it here too is for a start interrupted
        DemoConsumer c = resources.start(null, () -> DemoConsumer.start(options), x -> "consumer", x -> x::close);
        consumer = c;
        stage.consumerStarted(c);
        console.line(String.format(Locale.ROOT, "  %-10s %-36s started in %s", "consumer",
                consumerName + ", cluster=" + c.cluster(), Human.duration(Duration.ofNanos(System.nanoTime() - t0))));
        long resumed = WheelFailback.lifecycles().stream().mapToLong(l -> l.state().resumed()).sum();
        if (resumed > 0) {
            console.line(String.format(Locale.ROOT, "  %-10s %-36s %s", "journal", "resumed " + resumed
                    + " retries", "an earlier run's failed calls, retried by this one"));
        }
        EventLines lines = new EventLines(console, SERVICE, settings.events(), stage.providerLabels(),
                LoadDriver.callId(0, settings.calls()).length());
        events = lines;
        WheelFailback.addListener(lines);
        load = new LoadDriver(c, settings.calls(), settings.ratePerSecond(), settings.mode());
        progress = new Progress(console, c, load);
        script = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "scenario");
            t.setDaemon(true);
            return t;
        });
        resources.checkNotStopping();
    }

    // ---------------------------------------------------------------- play

    private void play() {
        console.line("");
        console.line("Running (Ctrl-C stops everything and still prints the report)");
        console.line(events.header());
        console.startClock();
        for (Scenario.Step step : stage.script()) {
            script.schedule(() -> {
                console.timed(">> " + step.what());
                step.action().run();
            }, step.at().toMillis(), TimeUnit.MILLISECONDS);
        }
        console.timed("sending " + settings.describeLoad());
        load.start();
        progress.start(Duration.ofSeconds(1));
        awaitAnswers();
        resources.checkNotStopping();
        progress.close();
        script.shutdownNow();
        stage.endFaults(console);
        drain();
        resources.checkNotStopping();
        stage.afterOutcomes(consumer, events);
    }

    private void awaitAnswers() {
        Duration max = settings.sendingTime().multipliedBy(2).plus(settings.timeout().multipliedBy(4))
                .plusSeconds(10);
        try {
            if (!load.awaitReturned(max)) {
                console.timed("not every caller has its answer after " + Human.duration(max) + "; stopping");
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Resources.Stopping();
        }
        resources.checkNotStopping();
        console.timed("all " + load.sent() + " calls sent and answered (a reply, null = failed back, or an exception)");
        if (load.brokenAnswers() > 0) {
            console.timed("WARNING: " + load.brokenAnswers() + " calls broke in the caller itself, e.g. "
                    + load.firstBrokenAnswer());
        }
    }

    private void drain() {
        long open = consumer.openWithResumed();
        if (open == 0) {
            console.timed("no retry pending: every call has its outcome");
            return;
        }
        Duration max = settings.drainBound(open);
        console.timed(open + " calls wait for a retry; waiting at most " + Human.duration(max));
        boolean settled = consumer.awaitSettledWithResumed(max);
        resources.checkNotStopping();
        console.timed(settled ? "every call has its outcome"
                : consumer.openWithResumed() + " calls still wait for a retry: the consumer hands them over as it "
                        + "stops");
    }

    // ---------------------------------------------------------------- stop

    private Result finish() {
        synchronized (finishLock) {
            if (result != null) {
                return result;
            }
            resources.beginStopping();
            stage.stopping();
            DemoConsumer c = consumer;
            if (c == null) {
                if (meters != null) {
                    meters.close();
                }
                resources.stopAll(console);
                result = new Result(stage.name(), Optional.empty(), Map.of(), Map.of(), interrupted,
                        interrupted ? FinalReport.LOST : CANNOT_START);
                return result;
            }
            stopCalls();
            Optional<ReferenceState> state = c.referenceState(); // before the consumer destroys the reference
            // before the consumer releases the wheel; with no retry pending, every timeout left is a leak
            Optional<TimerStats> wheel = state.map(ReferenceState::pending).orElse(0) == 0 ? settledWheelStats()
                    : WheelFailback.wheelStats();
            FailbackMeters m = meters;
            if (m != null) {
                m.readBeforeStop();
            }
            console.line("");
            console.line("Stopping");
            long t0 = System.nanoTime();
            c.close();
            awaitCallers();
            Report report = c.report();
            EventLines lines = events;
            // the events count the retries resumed from the journal too, which the report's book never saw
            long handedOver = Math.max(report.handedOver(), lines == null ? 0 : lines.handedOver());
            console.line(String.format(Locale.ROOT, "  %-10s %-36s stopped in %s", "consumer",
                    handedOver + " retries handed over", Human.duration(Duration.ofNanos(System.nanoTime() - t0))));
            if (lines != null) {
                WheelFailback.removeListener(lines);
            }
            FinalReport.Duplicates duplicates = stage.duplicates(report);
            resources.stopAll(console);
            LoadDriver l = load;
            FinalReport fr = new FinalReport(report, wheel, duplicates, budget(c, state), settings.failbackTasks(),
                    l == null ? 0 : l.brokenAnswers(), l == null ? null : l.firstBrokenAnswer(), stage.deadLetters());
            console.line("");
            fr.lines().forEach(console::line);
            printMeters();
            result = new Result(stage.name(), Optional.of(fr), lines == null ? Map.of() : lines.deliveredByProvider(),
                    stage.providerLabels(), interrupted, fr.exitCode());
            return result;
        }
    }

    private FinalReport.Budget budget(DemoConsumer c, Optional<ReferenceState> state) {
        Optional<RetryArrivals.Peak> peak = c.arrivals().peak();
        long nowMillis = console.elapsed().toMillis();
        String at = peak.map(p -> Console.stamp(Math.max(0, nowMillis
                - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - p.startNanos())))).orElse(null);
        return new FinalReport.Budget(settings.budgetRatio(), settings.budgetMinRate(),
                state.map(ReferenceState::budgetWaits).orElse(null), peak, at);
    }

    /** With --metrics: the failback meters, once the consumer has stopped (its counters are final then). */
    private void printMeters() {
        FailbackMeters m = meters;
        if (m == null) {
            return;
        }
        console.line("");
        console.line("Meters (" + FailbackMeters.PREFIX + "* of application " + consumerName
                + ", from Dubbo's Micrometer registry; gauges read before the consumer stopped)");
        List<String> lines = m.lines();
        if (lines.isEmpty()) {
            console.line("  none: no call failed");
        }
        lines.forEach(console::line);
        m.close();
    }

    /**
     * The wheel's stats once its worker has seen the last cancellations. The worker publishes its counts at a tick,
     * and an idle worker naps until its next event (at most 1 s), so a retry timeout cancelled by the last reply a
     * moment ago still counts as pending for up to that long. Waits at most 2 s for the count to reach 0; a timeout
     * really left behind still shows. Called only when no retry is pending.
     */
    private static Optional<TimerStats> settledWheelStats() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        Optional<TimerStats> stats = WheelFailback.wheelStats();
        while (stats.isPresent() && stats.get().pendingTimeouts() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            stats = WheelFailback.wheelStats();
        }
        return stats;
    }

    private void stopCalls() {
        if (progress != null) {
            progress.close();
        }
        if (script != null) {
            script.shutdownNow();
        }
        if (load != null) {
            load.stop();
        }
    }

    /** Once the consumer stopped, sync callers still waiting get their exception: wait a little for them. */
    private void awaitCallers() {
        LoadDriver l = load;
        if (l == null) {
            return;
        }
        try {
            l.awaitReturned(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        l.close();
    }
}
