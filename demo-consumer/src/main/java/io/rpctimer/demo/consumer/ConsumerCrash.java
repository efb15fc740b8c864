package io.rpctimer.demo.consumer;

import io.rpctimer.demo.provider.DemoProvider;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

/**
 * The {@code consumer-crash} scenario: ZooKeeper and the providers p1 and p2 run in this JVM ({@link DemoStage}), the
 * consumer in a child JVM ({@link ChildConsumer}: the standalone consumer on the embedded journal, in a temporary
 * directory deleted at the end). The providers fail every call from the middle of the sending on, so failed calls
 * wait for their retries; once every call is sent, the child is killed with SIGKILL and a second child of the same
 * application on the same journal starts, sends nothing and resumes the retries; the providers recover and it
 * delivers them. The report adds up across both processes ({@link CrashAccount}).
 *
 * <p><b>Threading:</b> {@link #run()} once, from one thread; {@link #interrupt()} from any thread (Ctrl-C).
 */
final class ConsumerCrash {

    /** The scenario's name on the command line. */
    static final String ID = "consumer-crash";
    /** Calls the first consumer process sends. */
    static final int CALLS = 40;

    private static final String APPLICATION = "crash-demo";
    private static final Pattern SENDING = Pattern.compile("^  \\d\\d:\\d\\d\\.\\d  sending ");
    private static final Pattern ALL_SENT = Pattern.compile("all \\d+ calls sent and answered");
    private static final Pattern RUNNING = Pattern.compile("^Running");
    private static final Pattern RESUMED = Pattern.compile("^  journal\\s+resumed (\\d+) retries");
    private static final int INTERRUPTED = 130;
    private static final Duration START_BOUND = Duration.ofSeconds(60);

    private final Console console;
    private final PrintStream err;
    private final double speed;
    private final Resources resources = new Resources();
    private final CrashAccount account = new CrashAccount();
    private final List<ChildConsumer> children = new ArrayList<>(); // guarded by itself
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile Thread runner;
    private volatile boolean interrupted;
    private Path dir; // set by run() before anything else
    private DemoStage stage; // set by run() before the first child starts

    /**
     * @param console where everything is printed
     * @param err     where an error that stops the run is printed
     * @param speed   how many times faster than at human pace (call rate, scenario clock, retry delays)
     */
    ConsumerCrash(Console console, PrintStream err, double speed) {
        this.console = console;
        this.err = err;
        this.speed = speed;
    }

    /**
     * @return the exit code: 0 when nothing was lost and the report adds up, 1 otherwise, 3 if it could not start,
     *     130 after {@link #interrupt()}
     */
    int run() {
        runner = Thread.currentThread();
        header();
        Optional<CrashAccount.Result> result = Optional.empty();
        try {
            dir = Files.createTempDirectory("rpc-timer-demo-crash-");
            console.line("Starting");
            stage = new DemoStage(null, RunSettings.DEFAULTS, Duration.ZERO, null);
            stage.start(console, resources);
            stage.providers().forEach(p -> p.ledger().addListener(account));
            result = play(stage.providers());
        } catch (IOException | RuntimeException e) {
            if (!interrupted) {
                err.println("error: " + FailureText.of(e));
            }
        } catch (InterruptedException e) {
            console.timed("interrupted: stopping the consumer processes, the providers and ZooKeeper");
        } finally {
            stop();
        }
        result.ifPresent(r -> {
            console.line("");
            CrashAccount.lines(r).forEach(console::line);
        });
        done.countDown();
        if (interrupted) {
            return INTERRUPTED;
        }
        return result.map(r -> r.ok() ? FinalReport.OK : FinalReport.LOST).orElse(ConsumerRun.CANNOT_START);
    }

    private void header() {
        console.line("rpc-timer demo -- scenario " + ID + ": the consumer process is killed (kill -9) while retries "
                + "are pending, and restarted");
        console.line("  watch for  The consumer runs as a separate JVM on the embedded journal: every failed call is "
                + "persisted before its caller gets null. It is killed while the providers fail every call, and a "
                + "new process of the same application on the same journal resumes the retries; once the providers "
                + "recover, it delivers them. Lines marked [1] and [2] come from the first and the second process.");
        console.line("  load       " + CALLS + " calls at " + Human.rate(10 * speed) + ", sync and async alternately"
                + (speed == 1 ? "" : " (speed x" + Human.number(speed) + ")") + ", by the first process only");
        console.line("");
    }

    private Optional<CrashAccount.Result> play(List<DemoProvider> providers) throws InterruptedException {
        console.line("");
        console.line("Running (consumer process [1] sends the calls; [2] is the one restarted after the kill)");
        console.startClock();
        ChildConsumer first = child(1, CALLS);
        await(first, SENDING, "start sending");
        long t0 = System.nanoTime();
        Duration sending = scaled(Duration.ofMillis(CALLS * 100L));
        pauseUntil(t0 + sending.toNanos() / 2);
        console.timed(">> p1 and p2 fail every call (RPC errors): each call fails back and waits for its retries");
        providers.forEach(p -> p.faults().errorRate(1.0));
        await(first, ALL_SENT, "answer every caller");
        pauseUntil(t0 + sending.plus(scaled(Duration.ofMillis(2500))).toNanos());
        int pending = first.pending();
        account.killed();
        first.kill();
        console.timed(">> consumer killed (kill -9) with " + pending + " retries pending (process [1], pid "
                + first.pid() + ")");
        ChildConsumer second = child(2, 0);
        await(second, RUNNING, "start");
        String resumed = second.awaitLine(RESUMED, Duration.ZERO).map(m -> m.group(1)).orElse("0");
        console.timed(">> consumer restarted: resumed " + resumed + " retries from the journal (process [2], pid "
                + second.pid() + ")");
        pauseUntil(System.nanoTime() + scaled(Duration.ofMillis(1500)).toNanos());
        console.timed(">> p1 and p2 stop failing: the resumed retries go through");
        providers.forEach(p -> p.faults().clear());
        Optional<Integer> exit = second.awaitExit(drain().plus(START_BOUND));
        if (exit.isEmpty() || exit.get() != 0) {
            console.timed("consumer process [2] " + exit.map(c -> "ended with exit code " + c)
                    .orElse("still runs: stopping it"));
        }
        second.close();
        List<String> sent = IntStream.range(0, CALLS).mapToObj(i -> LoadDriver.callId(i, CALLS)).toList();
        return Optional.of(account.result(sent, first.seen(), second.seen()));
    }

    private ChildConsumer child(int number, int calls) {
        List<String> jvm = List.of("-Xmx256m", "-XX:+UseSerialGC", "-Drpctimer.failback.store.dir=" + dir);
        List<String> args = new ArrayList<>(List.of("--registry", registry(), "--name", APPLICATION,
                "--providers", "p1,p2", "--store", "embedded", "--calls", String.valueOf(calls),
                "--rate", Human.number(10 * speed), "--timeout", "500ms", "--retries", "12",
                "--delay", millis(Duration.ofSeconds(1)), "--max-delay", millis(Duration.ofSeconds(2))));
        if (calls == 0) {
            args.addAll(List.of("--drain", drain().toMillis() + "ms"));
        }
        synchronized (children) {
            if (interrupted) {
                throw new IllegalStateException("interrupted");
            }
            ChildConsumer c = ChildConsumer.start(number, console, jvm, args, dir.resolve("consumer-" + number
                    + ".err"));
            children.add(c);
            return c;
        }
    }

    private String registry() {
        return stage.registryAddress();
    }

    /** Waits for the child's line, or fails the run saying what the child did not do. */
    private Matcher await(ChildConsumer child, Pattern line, String what) throws InterruptedException {
        return child.awaitLine(line, START_BOUND).orElseThrow(() -> new IllegalStateException("consumer process ["
                + child.number() + "] did not " + what + " within " + Human.duration(START_BOUND) + ", or ended first"
                + tail(child)));
    }

    private String tail(ChildConsumer child) {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("consumer-" + child.number() + ".err"),
                    StandardCharsets.UTF_8);
            return lines.isEmpty() ? "" : "; its stderr ends: " + lines.get(lines.size() - 1);
        } catch (IOException e) {
            return "";
        }
    }

    /** Waits for the scenario's clock: a script's pause, not synchronisation. */
    private static void pauseUntil(long nanoTime) throws InterruptedException {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    private Duration scaled(Duration d) {
        return Duration.ofMillis(Math.max(1, Math.round(d.toMillis() / speed)));
    }

    private String millis(Duration humanPace) {
        return scaled(humanPace).toMillis() + "ms";
    }

    /** @return how long the second process waits for the resumed retries before it stops */
    private Duration drain() {
        return scaled(Duration.ofSeconds(30));
    }

    /** Stops the children still running, then the providers and ZooKeeper, and deletes the journal. */
    private void stop() {
        List<ChildConsumer> all;
        synchronized (children) {
            all = List.copyOf(children);
        }
        console.line("");
        console.line("Stopping");
        all.forEach(ChildConsumer::close);
        resources.beginStopping();
        resources.stopAll(console);
        deleteJournal();
    }

    private void deleteJournal() {
        if (dir == null) {
            return;
        }
        try {
            Resources.deleteTree(dir);
        } catch (IOException e) {
            err.println("warning: cannot delete the demo's journal " + dir + ": " + e.getMessage());
        }
    }

    /**
     * Stops the run from any thread, as Ctrl-C does: the consumer processes (SIGTERM), the providers, ZooKeeper, then
     * the report of what happened so far. Waits up to 60 s for the run to end.
     */
    void interrupt() {
        synchronized (children) {
            interrupted = true;
        }
        Thread t = runner;
        if (t != null) {
            t.interrupt();
        }
        try {
            done.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
