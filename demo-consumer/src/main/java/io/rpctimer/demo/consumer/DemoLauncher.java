package io.rpctimer.demo.consumer;

import io.rpctimer.testkit.DubboNode;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * The one-command demo: {@code java -jar demo-consumer-<version>-all.jar [--scenario NAME]}. Starts an embedded
 * ZooKeeper, two providers and a {@code wheelfailback} consumer in this JVM, plays a fault {@link Scenario} while the
 * calls go out, prints every retry as it happens, stops everything and prints the report ({@link ConsumerRun},
 * {@link DemoStage}). Its {@code consumer} subcommand is the standalone consumer ({@link ConsumerApp}).
 *
 * <p>Exit codes: 0 when no call was lost and the report adds up; 1 when a call was lost; 2 for a bad flag (the message
 * names the flag and the value); 3 if the demo could not start; 130 after Ctrl-C (the JVM's code for SIGINT: a
 * shutdown hook stops the consumer, the providers and ZooKeeper in that order and prints the report first).
 *
 * <p><b>Threading:</b> not thread-safe: one instance runs once. {@link #interrupt()} may come from any thread.
 */
@Command(name = "demo", sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Watch failback retries happen: an embedded ZooKeeper, two providers (p1, p2) and a consumer on "
                    + "cluster=wheelfailback, all in this JVM on 127.0.0.1. A scenario injects faults while the calls "
                    + "go out; every retry is printed as it happens, then a report of what became of every call. "
                    + "Exit code 0 when no call was lost.",
            "",
            "The default scenario, provider-down, is the most instructive: one run shows ZooKeeper taking a provider "
                    + "away and calls going to the other one, retries waiting out a moment with no provider at all "
                    + "(each delay longer than the last), and delivery once a provider is back.",
            ""})
public final class DemoLauncher implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Option(names = "--scenario", paramLabel = "NAME",
            description = {"provider-down (default): p1 restarts, and p2 too while p1 is down: for a moment no "
                    + "provider is up.",
                "provider-hang: p1 hangs longer than the timeout; retries go to p2; p1 completes late (duplicates).",
                "flaky: p1 and p2 fail 30%% of calls at the RPC level; some calls need several retries.",
                "overflow: both fail every call while only 10 retries may wait (failbacktasks=10): rejections.",
                "business: p1 refuses half its calls with a business exception, which is not retried.",
                "recovery: no provider is up while 600 calls go out at 30/s, then both come back to a backlog of "
                        + "retries: the retry budget releases it at its rate (--budget-ratio, --budget-minrate).",
                "dead-letters: no provider is up for longer than the retries last: calls end ABANDONED and stay in "
                        + "the journal as dead letters; the providers return and the demo replays them at 10/s.",
                "consumer-crash: the consumer, a separate JVM on the embedded journal, is killed (kill -9) with "
                        + "retries pending and restarted; the restarted one delivers them. Takes --speed only."})
    private String scenario;

    @Option(names = "--dedup", paramLabel = "memory|shared",
            description = {"Providers run each retry.id once (the retrydedup filter), e.g. with provider-hang: "
                    + "memory = each provider its own in-memory store; shared = one JDBC store (in-memory H2 here) "
                    + "for both. The report adds the duplicates suppressed (default: off; shared with dead-letters)."})
    private String dedup;

    @Option(names = "--speed", paramLabel = "X",
            description = "Play X times faster, 0.1..50: call rate, scenario clock and retry delays, not the "
                    + "timeout (default: 1, about 30 s a run).")
    private String speed;

    @Mixin
    private ConsumerFlags flags = new ConsumerFlags();

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    private boolean help;

    private final PrintStream out;
    private final boolean shutdownHook;
    private PrintStream err = System.err; // set by execute()
    private volatile ConsumerRun run;
    private volatile ConsumerCrash crash;
    private volatile ConsumerRun.Result result;

    /**
     * @param out          where the demo prints
     * @param shutdownHook whether Ctrl-C (a JVM shutdown hook) stops the run and prints the report; {@link #main}
     *                     says yes, tests say no and call {@link #interrupt()}
     */
    public DemoLauncher(PrintStream out, boolean shutdownHook) {
        this.out = out;
        this.shutdownHook = shutdownHook;
    }

    /**
     * Runs the demo, or {@code consumer ...}, and exits with its code.
     *
     * @param args see {@code --help}
     */
    public static void main(String[] args) {
        Logging.quiet();
        System.exit(new DemoLauncher(System.out, true).execute(System.err, args));
    }

    /**
     * Parses the arguments and runs the demo, or the {@code consumer} subcommand; returns when it is over.
     *
     * @param err  where errors go
     * @param args see {@code --help}
     * @return the exit code (see the class comment)
     */
    public int execute(PrintStream err, String... args) {
        this.err = err;
        ConsumerApp consumer = new ConsumerApp(out, shutdownHook);
        consumer.err(err);
        CommandLine cmd = new CommandLine(this);
        cmd.addSubcommand("consumer", consumer);
        return commandLine(cmd, out, err).execute(args);
    }

    /** Sets the streams and the error handling shared by the demo's commands: exit 2 for a bad flag, 3 for a crash. */
    static CommandLine commandLine(CommandLine cmd, PrintStream out, PrintStream err) {
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        cmd.setParameterExceptionHandler((e, a) -> {
            err.println("error: " + e.getMessage());
            err.println("Try '" + e.getCommandLine().getCommandSpec().qualifiedName() + " --help'.");
            return 2;
        });
        cmd.setExecutionExceptionHandler((e, c, parsed) -> {
            err.println("error: " + FailureText.of(e));
            return ConsumerRun.CANNOT_START;
        });
        return cmd;
    }

    /** Runs {@code run}, with a JVM shutdown hook that interrupts it on Ctrl-C if {@code hook}. */
    static ConsumerRun.Result runWithHook(ConsumerRun run, boolean hook) {
        return runWithHook(run::run, run::interrupt, hook);
    }

    /** Runs {@code run}, with a JVM shutdown hook that runs {@code interrupt} on Ctrl-C if {@code hook}. */
    static <T> T runWithHook(Supplier<T> run, Runnable interrupt, boolean hook) {
        Thread thread = new Thread(interrupt, "demo-shutdown");
        if (hook) {
            Runtime.getRuntime().addShutdownHook(thread);
        }
        try {
            return run.get();
        } finally {
            if (hook) {
                try {
                    Runtime.getRuntime().removeShutdownHook(thread);
                } catch (IllegalStateException shuttingDown) {
                    // the hook is running: it prints the report
                }
            }
        }
    }

    @Override
    public Integer call() {
        if (scenario != null && scenario.trim().equalsIgnoreCase(ConsumerCrash.ID)) {
            return consumerCrash();
        }
        Scenario s;
        RunSettings settings;
        String stageDedup;
        double x;
        try {
            s = scenario == null ? Scenario.DEFAULT : Scenario.of(scenario);
            x = speed == null ? 1 : ConsumerFlags.parseDouble("--speed", speed, 0.1, 50);
            settings = flags.resolve(s.defaults().faster(x));
            checkDedup(dedup);
            // a replay keeps each call's retry.id so that retrydedup runs it once, also a first try that timed out
            stageDedup = dedup == null && s.replaysDeadLetters() ? DemoStage.SHARED : dedup;
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        // a hanging provider holds each call well past the timeout: 3 s at human pace
        Duration hang = Duration.ofMillis(Math.max(Math.round(3000 / x), 2 * settings.timeout().toMillis()));
        Console console = new Console(out);
        console.line("rpc-timer demo -- scenario " + s.id() + ": " + s.summary());
        console.line("  watch for  " + s.watchFor());
        console.line("  load       " + settings.describeLoad()
                + (x == 1 ? "" : " (speed x" + Human.number(x) + ")"));
        console.line("  consumer   cluster=wheelfailback, " + settings.describeRetries());
        if (stageDedup != null) {
            console.line("  providers  retrydedup=true, retrydedup.store=" + stageDedup);
        }
        console.line("");
        DubboNode.disableDubboShutdownHooks(); // ours stops Dubbo before ZooKeeper; Dubbo's would race it
        run = new ConsumerRun(console, err, settings, new DemoStage(s, settings, hang, stageDedup), "consumer");
        result = runWithHook(run, shutdownHook);
        return result.exitCode();
    }

    /** The scenario whose consumer is a child JVM: no in-process consumer, so only {@code --speed} applies. */
    private int consumerCrash() {
        double x;
        try {
            for (OptionSpec o : spec.commandLine().getParseResult().matchedOptions()) {
                if (!o.longestName().equals("--scenario") && !o.longestName().equals("--speed")) {
                    throw new IllegalArgumentException(o.longestName() + ": not with --scenario " + ConsumerCrash.ID
                            + " (expected: --speed only)");
                }
            }
            x = speed == null ? 1 : ConsumerFlags.parseDouble("--speed", speed, 0.1, 50);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        DubboNode.disableDubboShutdownHooks(); // ours stops the providers before ZooKeeper; Dubbo's would race it
        ConsumerCrash c = new ConsumerCrash(new Console(out), err, x);
        crash = c;
        return runWithHook(c::run, c::interrupt, shutdownHook);
    }

    private static void checkDedup(String value) {
        if (value != null && !value.equals(DemoStage.MEMORY) && !value.equals(DemoStage.SHARED)) {
            throw new IllegalArgumentException("--dedup: " + value + " (expected: " + DemoStage.MEMORY + " or "
                    + DemoStage.SHARED + ")");
        }
    }

    /**
     * Stops a run in progress as Ctrl-C does: the consumer, the providers, ZooKeeper, then the report. No effect
     * before the run has started.
     */
    public void interrupt() {
        ConsumerRun r = run;
        if (r != null) {
            r.interrupt();
        }
        ConsumerCrash c = crash;
        if (c != null) {
            c.interrupt();
        }
    }

    /** @return the result, once the run has ended (empty before, or after --help or a bad flag) */
    public Optional<ConsumerRun.Result> result() {
        return Optional.ofNullable(result);
    }
}
