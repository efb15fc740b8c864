package io.rpctimer.demo.consumer;

import io.rpctimer.testkit.DubboNode;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * The standalone demo consumer: sends calls on {@code cluster=wheelfailback} to the demo providers registered in an
 * external ZooKeeper, prints every retry as it happens and a progress line, then the report. Run it in its own
 * terminal, next to providers started with {@code demo-provider}'s jar:
 * {@code java -jar demo-consumer-<version>-all.jar consumer --registry zookeeper://127.0.0.1:2181}.
 *
 * <p>Duplicates come from the providers' ledgers, read through their {@code ProviderControl} service before and after
 * the run ({@code --providers}, or every one found in the registry); "n/a" when none can be read.
 *
 * <p>Exit codes: 0 when no call was lost and the report adds up; 1 when a call was lost; 2 for a bad flag; 3 if it
 * cannot start (e.g. the registry is unreachable); 130 after Ctrl-C (a shutdown hook stops the consumer and prints
 * the report first).
 *
 * <p><b>Threading:</b> not thread-safe: one instance runs once. {@link #interrupt()} may come from any thread.
 */
@Command(name = "consumer", sortOptions = false, usageHelpAutoWidth = true,
        description = {"A consumer of the demo's NotificationService on cluster=wheelfailback, against a running "
                + "registry and providers: prints every retry as it happens, a progress line each second, and a "
                + "report of what became of every call. Exit code 0 when no call was lost.",
            "With --store embedded, a consumer restarted under the same --name resumes the retries its journal "
                    + "kept; --calls 0 sends nothing and only delivers those."})
public final class ConsumerApp implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Option(names = "--registry", paramLabel = "zookeeper://HOST:PORT", required = true,
            description = "The ZooKeeper registry the providers registered with.")
    private String registry;

    @Option(names = "--providers", paramLabel = "NAME[,NAME]", split = ",",
            description = "Names of the demo providers (their ProviderControl groups) whose ledgers count "
                    + "duplicates (default: every one registered).")
    private List<String> providers = new ArrayList<>();

    @Option(names = "--name", paramLabel = "NAME", defaultValue = "consumer",
            description = "Dubbo application name of this consumer (default: ${DEFAULT-VALUE}).")
    private String name;

    @Mixin
    private ConsumerFlags flags = new ConsumerFlags();

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    private boolean help;

    private final PrintStream out;
    private final boolean shutdownHook;
    private PrintStream err = System.err; // set by execute()
    private volatile ConsumerRun run;
    private volatile ConsumerRun.Result result;

    /**
     * @param out          where the consumer prints
     * @param shutdownHook whether Ctrl-C (a JVM shutdown hook) stops the run and prints the report
     */
    public ConsumerApp(PrintStream out, boolean shutdownHook) {
        this.out = out;
        this.shutdownHook = shutdownHook;
    }

    /**
     * Runs the consumer and exits with its code.
     *
     * @param args see {@code --help}
     */
    public static void main(String[] args) {
        Logging.quiet();
        System.exit(new ConsumerApp(System.out, true).execute(System.err, args));
    }

    /**
     * Parses the arguments and runs the consumer; returns when it is over.
     *
     * @param err  where errors go
     * @param args see {@code --help}
     * @return the exit code (see the class comment)
     */
    public int execute(PrintStream err, String... args) {
        this.err = err;
        return DemoLauncher.commandLine(new CommandLine(this), out, err).execute(args);
    }

    @Override
    public Integer call() {
        RunSettings settings;
        try {
            if (!registry.matches("zookeeper://[^:/\\s]+:\\d{1,5}")) {
                throw new IllegalArgumentException("--registry: \"" + registry
                        + "\" (expected: zookeeper://HOST:PORT)");
            }
            for (String p : providers) {
                DubboNode.checkName("--providers", p);
            }
            DubboNode.checkName("--name", name);
            settings = flags.resolve(RunSettings.DEFAULTS, 0);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        Console console = new Console(out);
        console.line("rpc-timer demo consumer -- " + settings.describeLoad());
        console.line("  consumer   " + name + ", cluster=wheelfailback, " + settings.describeRetries());
        console.line("");
        DubboNode.disableDubboShutdownHooks(); // ours stops the consumer and prints the report; Dubbo's would race it
        run = new ConsumerRun(console, err, settings, new RemoteStage(registry, providers), name);
        result = DemoLauncher.runWithHook(run, shutdownHook);
        return result.exitCode();
    }

    /** @param err where errors go when this runs as a subcommand */
    void err(PrintStream err) {
        this.err = err;
    }

    /** Stops a run in progress as Ctrl-C does, and prints the report. No effect before it started. */
    public void interrupt() {
        ConsumerRun r = run;
        if (r != null) {
            r.interrupt();
        }
    }

    /** @return the result, once the run has ended */
    public Optional<ConsumerRun.Result> result() {
        return Optional.ofNullable(result);
    }
}
