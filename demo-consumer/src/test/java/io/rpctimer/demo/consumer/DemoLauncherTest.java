package io.rpctimer.demo.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The command lines of the demo and of its consumer subcommand: help, and bad flags. Nothing starts. */
@Timeout(30)
class DemoLauncherTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        return new DemoLauncher(o, false).execute(new PrintStream(err, true, StandardCharsets.UTF_8), args);
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    private static final String[] CONSUMER_FLAGS = {"--calls", "--rate", "--mode", "--timeout", "--retries",
        "--delay", "--multiplier", "--max-delay", "--jitter", "--failbacktasks", "--overflow", "--retry-on",
        "--budget-ratio", "--budget-minrate", "--metrics", "--events", "--drain", "--help"};

    @Test
    void help_listsEveryFlag_theScenarios_andTheConsumerCommand() {
        assertEquals(0, run("--help"));
        String help = out();
        for (String flag : CONSUMER_FLAGS) {
            assertTrue(help.contains(flag), flag + " in\n" + help);
        }
        for (String s : new String[] {"--scenario", "--speed", "consumer", "provider-down (default)",
            "provider-hang", "flaky", "overflow", "business", "recovery", "dead-letters", "most instructive"}) {
            assertTrue(help.contains(s), s + " in\n" + help);
        }
        assertEquals("", err());
    }

    @Test
    void consumerHelp_listsEveryFlag() {
        assertEquals(0, run("consumer", "--help"));
        String help = out();
        for (String flag : CONSUMER_FLAGS) {
            assertTrue(help.contains(flag), flag + " in\n" + help);
        }
        for (String flag : new String[] {"--registry", "--providers", "--name"}) {
            assertTrue(help.contains(flag), flag + " in\n" + help);
        }
    }

    private static final String DURATION = "(expected: a number and a unit ms, s, m or h, e.g. 500ms, 5s, 1.5s, 1m; "
            + "or 0)";

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--scenario nope   | --scenario: \"nope\" (expected: one of provider-down, provider-hang, flaky, overflow, "
            + "business, recovery, dead-letters, consumer-crash)",
        "--speed 0         | --speed: \"0\" (expected: a number, 0.1..50)",
        "--calls 0         | --calls: \"0\" (expected: a whole number, 1..1000000)",
        "--rate fast       | --rate: \"fast\" (expected: a number, 0.01..10000)",
        "--mode both       | --mode: \"both\" (expected: one of sync, async, mixed)",
        "--timeout soon    | --timeout: \"soon\" DURATION",
        "--timeout 0       | --timeout: \"0\" (expected: at least 1ms)",
        "--retries -1      | --retries: \"-1\" (expected: a whole number, 0..1000)",
        "--multiplier 0.5  | --multiplier: \"0.5\" (expected: a number, 1..1000000)",
        "--max-delay 100ms | --max-delay: \"100ms\" (expected: >= --delay, 1 s)",
        "--jitter 2        | --jitter: \"2\" (expected: a number, 0..1)",
        "--failbacktasks 0 | --failbacktasks: \"0\" (expected: a whole number, 1..1000000)",
        "--overflow drop   | --overflow: \"drop\" (expected: one of reject, log)",
        "--retry-on ,      | --retry-on: \",\" (expected: rpc, all, or comma-separated exception class names)",
        "--events some     | --events: \"some\" (expected: one of all, retries, outcomes, none)",
        "--drain 5x        | --drain: \"5x\" DURATION",
        "--budget-ratio -1 | --budget-ratio: \"-1\" (expected: a number, 0..1000000)",
        "--budget-ratio x  | --budget-ratio: \"x\" (expected: a number, 0..1000000)",
        "--budget-minrate 1e7 | --budget-minrate: \"1e7\" (expected: a number, 0..1000000)",
        "--budget-ratio 0 --budget-minrate 0 | --budget-minrate: \"0\" (expected: > 0 when --budget-ratio is 0)",
        "--budget-minrate 0 --budget-ratio 0.0 | --budget-minrate: \"0\" (expected: > 0 when --budget-ratio is 0)",
        "--calls           | Missing required parameter for option '--calls' (N)",
        "--bogus           | Unknown option: '--bogus'",
        "--scenario consumer-crash --calls 5 | --calls: not with --scenario consumer-crash (expected: --speed only)",
        "--scenario consumer-crash --speed 99 | --speed: \"99\" (expected: a number, 0.1..50)"})
    void badFlag_exitsWith2_namingTheFlagAndTheValue(String args, String message) {
        assertEquals(2, run(args.trim().split("\\s+")));
        assertEquals("error: " + message.replace("DURATION", DURATION) + "\nTry 'demo --help'.\n", err());
        assertEquals("", out());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--calls 5                                     | Missing required option: '--registry=zookeeper://HOST:PORT'",
        "--registry http://h:1                         | --registry: \"http://h:1\" (expected: zookeeper://HOST:PORT)",
        "--registry zookeeper://h:1 --providers p1,a/b | --providers: \"a/b\" (expected: 1..64 letters, digits, "
            + "'.', '_' or '-')",
        "--registry zookeeper://h:1 --mode x           | --mode: \"x\" (expected: one of sync, async, mixed)"})
    void consumerBadFlag_exitsWith2_namingTheFlagAndTheValue(String args, String message) {
        String[] a = ("consumer " + args.trim()).split("\\s+");
        assertEquals(2, run(a));
        assertEquals("error: " + message + "\nTry 'demo consumer --help'.\n", err());
        assertEquals("", out());
    }
}
