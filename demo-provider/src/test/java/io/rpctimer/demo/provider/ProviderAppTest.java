package io.rpctimer.demo.provider;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.testkit.Ports;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

@Timeout(60)
class ProviderAppTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String stdin, String... args) {
        return ProviderApp.run(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                args);
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void help_listsEveryFlag() {
        assertEquals(0, run("", "--help"));
        for (String flag : new String[] {"--registry", "--embedded-zk", "--port", "--name", "--fail-rate",
            "--fail-next", "--error-rate", "--error-next", "--latency", "--hang", "--no-console", "--quiet",
            "--help"}) {
            assertTrue(out().contains(flag), flag + " in\n" + out());
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--name p1                              | --registry: missing (expected: zookeeper://HOST:PORT, or --embedded-zk)",
        "--registry zookeeper://h:1 --embedded-zk | --registry zookeeper://h:1 and --embedded-zk: choose one",
        "--registry http://h:1                  | --registry: \"http://h:1\" (expected: zookeeper://HOST:PORT)",
        "--embedded-zk --fail-rate 2            | --fail-rate: \"2\" (expected: 0..1 or a percentage, e.g. 0.3 or 30%)",
        "--embedded-zk --error-next -1          | --error-next: \"-1\" (expected: a whole number >= 0)",
        "--embedded-zk --latency 5x             | --latency: \"5x\" (expected: a number and a unit ms, s, m or h, e.g. 500ms, 5s, 1.5s, 1m; or 0)",
        "--embedded-zk --port 70000             | --port: 70000 (expected: 1..65535)",
        "--embedded-zk --name a/b               | --name: \"a/b\" (expected: 1..64 letters, digits, '.', '_' or '-')",
        "--embedded-zk --port x                 | Invalid value for option '--port': 'x' is not an int"})
    void badArguments_exitWith2_namingTheFlagAndTheValue(String args, String message) {
        assertEquals(2, run("", args.trim().split("\\s+")));
        assertEquals("error: " + message + "\nTry 'demo-provider --help'.\n", err());
        assertEquals("", out());
    }

    @Test
    void unreachableRegistry_exitsWith1_inOneLine() {
        int port = Ports.free(); // nothing listens there
        assertEquals(1, run("", "--registry", "zookeeper://127.0.0.1:" + port, "--no-console"));
        assertEquals("error: --registry zookeeper://127.0.0.1:" + port + ": cannot connect (Connection refused)\n",
                err());
        assertEquals("", out());
    }

    @Test
    void runsCommandsFromStdin_andStopsEverythingOnQuit() {
        int code = run("status\nfail 30%\n\nbogus\nstats\nquit\nstatus\n",
                "--embedded-zk", "--name", "app-1", "--latency", "20ms", "--quiet");
        String out = out();
        assertEquals(0, code, out + err());
        assertEquals("", err());
        assertTrue(out.contains("faults     latency 20 ms"), out);
        assertTrue(out.contains(" up, faults: latency 20 ms"), out);
        assertTrue(out.contains("faults: fail 30%, latency 20 ms"), out);
        assertTrue(out.contains("error: command: \"bogus\""), out);
        assertTrue(out.contains("served            0"), out);
        assertTrue(out.contains("stopping..."), out);
        assertEquals(1, out.split(" up, faults:", -1).length - 1, "nothing read after quit");

        List<Integer> ports = new ArrayList<>();
        Matcher m = Pattern.compile("(?:app-1@|zookeeper://)127\\.0\\.0\\.1:(\\d+)").matcher(out);
        while (m.find()) {
            ports.add(Integer.parseInt(m.group(1)));
        }
        assertTrue(ports.size() >= 2, out);
        for (int port : ports) {
            await("port " + port + " closed").atMost(Duration.ofSeconds(5)).until(() -> !Ports.isListening(port));
        }
    }
}
