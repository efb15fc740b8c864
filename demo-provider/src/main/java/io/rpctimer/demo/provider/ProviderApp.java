package io.rpctimer.demo.provider;

import io.rpctimer.demo.provider.ledger.CallOutcome;
import io.rpctimer.demo.provider.ledger.CallRecord;
import io.rpctimer.demo.provider.support.Durations;
import io.rpctimer.testkit.DubboNode;
import io.rpctimer.testkit.EmbeddedZooKeeper;
import io.rpctimer.testkit.Ports;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * Runs one demo provider from a terminal: {@code java -jar demo-provider-<version>-all.jar --embedded-zk --name p1}.
 * Prints a line per call, reads commands from stdin ({@link ProviderCommands}), stops on {@code quit} or Ctrl-C:
 * Dubbo first, then the embedded ZooKeeper, from a single JVM shutdown hook (Dubbo's own hooks are disabled so the two
 * do not race).
 *
 * <p>Exit codes: 0 after {@code quit}, 1 if the provider cannot start, 2 for bad arguments, 130 after Ctrl-C (the
 * JVM's code for SIGINT; the shutdown hook has stopped everything by then).
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "demo-provider", sortOptions = false, usageHelpAutoWidth = true,
        description = {"A Dubbo provider of NotificationService with faults you can change while it runs.",
            "Commands on stdin once started: fail, error, latency, hang, down, up, clear, stats, status, help, quit."})
public final class ProviderApp implements Callable<Integer> {
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

    @Spec
    private CommandSpec spec;

    @Option(names = "--registry", paramLabel = "zookeeper://HOST:PORT",
            description = "Registry to register with. Required unless --embedded-zk.")
    private String registry;

    @Option(names = "--embedded-zk",
            description = "Start a ZooKeeper in this JVM on 127.0.0.1 and a free port, and register there.")
    private boolean embeddedZk;

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "0",
            description = "Dubbo port, registered as 127.0.0.1:PORT; 0 = a free port (default: ${DEFAULT-VALUE}).")
    private int port;

    @Option(names = "--name", paramLabel = "NAME", defaultValue = "p1",
            description = "Provider name: Dubbo application name and ProviderControl group (default: ${DEFAULT-VALUE}).")
    private String name;

    @Option(names = "--fail-rate", paramLabel = "RATE",
            description = "Fraction of calls refused with NotificationRejectedException (business failure): 0..1 or 30%%.")
    private String failRate;

    @Option(names = "--fail-next", paramLabel = "N", description = "Refuse the first N calls (business failure).")
    private String failNext;

    @Option(names = "--error-rate", paramLabel = "RATE",
            description = "Fraction of calls failed at the RPC level (consumer sees RpcException code 1): 0..1 or 30%%.")
    private String errorRate;

    @Option(names = "--error-next", paramLabel = "N", description = "Fail the first N calls at the RPC level.")
    private String errorNext;

    @Option(names = "--latency", paramLabel = "DURATION", description = "Delay added to every call, e.g. 200ms, 1s.")
    private String latency;

    @Option(names = "--hang", paramLabel = "DURATION",
            description = "Every call hangs this long (or until 'clear'), e.g. 10s; set it above the consumer timeout.")
    private String hang;

    @Option(names = "--no-console", description = "Do not read commands from stdin; run until Ctrl-C.")
    private boolean noConsole;

    @Option(names = "--quiet", description = "Do not print a line per call.")
    private boolean quiet;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    private boolean help;

    private final InputStream in;
    private final PrintStream out;
    private final PrintStream err;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private EmbeddedZooKeeper zk; // guarded by this
    private DemoProvider provider; // guarded by this

    /**
     * @param in where commands come from
     * @param out where output goes
     * @param err where errors go
     */
    public ProviderApp(InputStream in, PrintStream out, PrintStream err) {
        this.in = in;
        this.out = out;
        this.err = err;
    }

    /**
     * Runs the provider until {@code quit}, end of input with {@code --no-console}... or Ctrl-C, then exits.
     *
     * @param args see {@code --help}
     */
    public static void main(String[] args) {
        if (System.getProperty("dubbo.application.logger") == null) {
            System.setProperty("dubbo.application.logger", "slf4j"); // else Dubbo probes log4j first
        }
        System.exit(run(System.in, System.out, System.err, args));
    }

    /**
     * Parses the arguments and runs the provider; returns when it has stopped.
     *
     * @return the exit code: 0 after {@code quit}, 1 if it could not start, 2 for bad arguments
     */
    static int run(InputStream in, PrintStream out, PrintStream err, String... args) {
        CommandLine cmd = new CommandLine(new ProviderApp(in, out, err));
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        cmd.setParameterExceptionHandler((e, a) -> {
            err.println("error: " + e.getMessage());
            err.println("Try 'demo-provider --help'.");
            return 2;
        });
        cmd.setExecutionExceptionHandler((e, c, parsed) -> {
            err.println("error: " + e);
            return 1;
        });
        return cmd.execute(args);
    }

    @Override
    public Integer call() {
        FaultPlan plan = validate();
        DubboNode.disableDubboShutdownHooks(); // ours stops Dubbo before ZooKeeper; Dubbo's would race it
        Thread hook = new Thread(this::shutdown, "demo-provider-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            if (!startAll(plan)) {
                shutdown();
                return 1;
            }
            if (noConsole) {
                out.println("Ctrl-C stops.");
            } else {
                out.println("Type a command ('help' lists them), 'quit' or Ctrl-C to stop.");
                if (!readCommands()) {
                    out.println("stdin closed; still serving. Ctrl-C stops.");
                } else {
                    shutdown();
                    return 0;
                }
            }
            stopped.await(); // until the shutdown hook runs
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            shutdown();
            return 1;
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or has run
            }
        }
    }

    /** Fault settings from the command line, already checked. */
    private static final class FaultPlan {
        Double failRate;
        Integer failNext;
        Double errorRate;
        Integer errorNext;
        Duration latency;
        Duration hang;
    }

    private FaultPlan validate() {
        if (registry == null && !embeddedZk) {
            throw new ParameterException(spec.commandLine(),
                    "--registry: missing (expected: zookeeper://HOST:PORT, or --embedded-zk)");
        }
        if (registry != null && embeddedZk) {
            throw new ParameterException(spec.commandLine(),
                    "--registry " + registry + " and --embedded-zk: choose one");
        }
        FaultPlan plan = new FaultPlan();
        try {
            DubboNode.checkName("--name", name);
            if (port != 0) {
                Ports.checkPort("--port", port);
            }
            if (registry != null && !registry.matches("zookeeper://[^:/\\s]+:\\d{1,5}")) {
                throw new IllegalArgumentException(
                        "--registry: \"" + registry + "\" (expected: zookeeper://HOST:PORT)");
            }
            plan.failRate = failRate == null ? null : ProviderCommands.parseRate("--fail-rate", failRate);
            plan.failNext = failNext == null ? null : ProviderCommands.parseCount("--fail-next", failNext);
            plan.errorRate = errorRate == null ? null : ProviderCommands.parseRate("--error-rate", errorRate);
            plan.errorNext = errorNext == null ? null : ProviderCommands.parseCount("--error-next", errorNext);
            plan.latency = latency == null ? null : Durations.parse("--latency", latency);
            plan.hang = hang == null ? null : Durations.parse("--hang", hang);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        return plan;
    }

    private synchronized boolean startAll(FaultPlan plan) {
        long t0 = System.nanoTime();
        String address = registry;
        try {
            if (registry != null) {
                checkReachable(registry);
            }
            if (embeddedZk) {
                zk = EmbeddedZooKeeper.start();
                address = zk.registryAddress();
                line("zookeeper", address, "embedded, started in " + since(t0));
            }
            long t1 = System.nanoTime();
            provider = DemoProvider.start(name, address, port);
            line("provider", provider.identity(), "started in " + since(t1));
            applyFaults(plan);
        } catch (RuntimeException e) {
            err.println("error: " + e.getMessage());
            return false;
        }
        line("service", "NotificationService", "dubbo://" + provider.address() + ", registered at " + address);
        line("control", "ProviderControl", "group " + provider.name() + ", same port");
        line("faults", provider.faults().settings().toString(), "");
        if (!quiet) {
            provider.ledger().addListener(this::printCall);
        }
        return true;
    }

    /**
     * Fails fast, in one line, when nothing listens at the registry address; Dubbo would retry for 30 s and log stack
     * traces.
     */
    private static void checkReachable(String registry) {
        String hostPort = registry.substring("zookeeper://".length());
        int colon = hostPort.lastIndexOf(':');
        String host = hostPort.substring(0, colon);
        int port = Integer.parseInt(hostPort.substring(colon + 1));
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), 2_000);
        } catch (IOException e) {
            throw new IllegalStateException("--registry " + registry + ": cannot connect (" + e.getMessage() + ")");
        }
    }

    private void applyFaults(FaultPlan plan) {
        var f = provider.faults();
        if (plan.failRate != null) {
            f.failRate(plan.failRate);
        }
        if (plan.failNext != null) {
            f.failNext(plan.failNext);
        }
        if (plan.errorRate != null) {
            f.errorRate(plan.errorRate);
        }
        if (plan.errorNext != null) {
            f.errorNext(plan.errorNext);
        }
        if (plan.latency != null) {
            f.latency(plan.latency);
        }
        if (plan.hang != null) {
            f.hang(plan.hang);
        }
    }

    /** @return true after {@code quit}, false at end of input */
    private boolean readCommands() {
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        try {
            for (String line; (line = reader.readLine()) != null; ) {
                String command = line.trim();
                if (command.isEmpty()) {
                    continue;
                }
                if (command.equalsIgnoreCase("quit") || command.equalsIgnoreCase("exit")) {
                    return true;
                }
                try {
                    out.println(provider.execute(command));
                } catch (IllegalArgumentException | IllegalStateException e) {
                    out.println("error: " + e.getMessage());
                }
            }
        } catch (IOException e) {
            err.println("error: reading stdin: " + e.getMessage());
        }
        return false;
    }

    private void printCall(CallRecord call, CallOutcome outcome, Duration elapsed, String detail) {
        String retry = call.retryId() == null ? "-" : call.retryId() + " #" + call.attempt();
        out.println(String.format(Locale.ROOT, "%s  %-6s %-9s  %-10s %-14s %-9s %8s%s",
                LocalTime.now().format(CLOCK), "#" + call.sequence(), call.method(),
                call.callId() == null ? "-" : call.callId(), retry, outcome,
                Durations.format(elapsed), detail == null ? "" : "  " + detail).stripTrailing());
    }

    /** Stops Dubbo, then ZooKeeper. Idempotent; runs on {@code quit} or from the shutdown hook. */
    private synchronized void shutdown() {
        if (stopped.getCount() == 0) {
            return;
        }
        if (provider != null || zk != null) {
            out.println("stopping...");
        }
        if (provider != null) {
            long t0 = System.nanoTime();
            provider.stop();
            line("provider", provider.identity(), "stopped in " + since(t0));
        }
        if (zk != null) {
            long t0 = System.nanoTime();
            zk.close();
            line("zookeeper", zk.registryAddress(), "stopped in " + since(t0));
        }
        out.flush();
        stopped.countDown();
    }

    private void line(String what, String value, String note) {
        out.println(String.format(Locale.ROOT, "  %-10s %-32s %s", what, value, note).stripTrailing());
    }

    private static String since(long startNanos) {
        return Durations.format(Duration.ofNanos(System.nanoTime() - startNanos));
    }
}
