package io.rpctimer.demo.consumer;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.testkit.Ports;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@code consumer-crash} scenario through the launcher's entry point, four times faster: the consumer is a child
 * JVM, killed with SIGKILL while retries are pending and restarted on the same journal. Nothing may be lost, the
 * report must add up across the two processes, the restarted process must resume exactly the retries pending at the
 * kill and deliver them, and nothing may be left behind: no child process, no journal directory, no open port.
 */
class DemoConsumerCrashIT {

    private static final Pattern KILLED = Pattern.compile(
            ">> consumer killed \\(kill -9\\) with (\\d+) retries pending \\(process \\[1], pid (\\d+)\\)");
    private static final Pattern RESTARTED = Pattern.compile(
            ">> consumer restarted: resumed (\\d+) retries from the journal \\(process \\[2], pid (\\d+)\\)");
    private static final Pattern VERDICT = Pattern.compile("OK: (\\d+) sent = (\\d+) first try \\+ (\\d+) before the "
            + "kill \\+ (\\d+) after the restart \\+ (\\d+) abandoned \\+ (\\d+) rejected \\+ (\\d+) lost\\. Nothing "
            + "lost\\.");

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @Test
    @Timeout(180)
    void consumerKilledWithRetriesPending_restartedProcessDeliversThem_nothingLost() throws IOException {
        Set<Path> journalsBefore = journals();
        List<Long> pids = new ArrayList<>();
        String o = "";
        try {
            int code = new DemoLauncher(new PrintStream(out, true, StandardCharsets.UTF_8), false)
                    .execute(new PrintStream(err, true, StandardCharsets.UTF_8), "--scenario", "consumer-crash",
                            "--speed", "4");
            o = out.toString(StandardCharsets.UTF_8);
            Matcher killed = find(KILLED, o);
            Matcher restarted = find(RESTARTED, o);
            pids.add(Long.parseLong(killed.group(2)));
            pids.add(Long.parseLong(restarted.group(2)));
            assertEquals(0, code, o + err.toString(StandardCharsets.UTF_8));

            long pending = Long.parseLong(killed.group(1));
            assertTrue(pending > 0, "no retry pending at the kill\n" + o);
            assertEquals(pending, Long.parseLong(restarted.group(1)), "resumed = pending at the kill\n" + o);
            Matcher v = find(VERDICT, o);
            long[] n = new long[8];
            for (int i = 1; i <= 7; i++) {
                n[i] = Long.parseLong(v.group(i));
            }
            assertEquals(ConsumerCrash.CALLS, n[1], o);
            assertEquals(n[1], n[2] + n[3] + n[4] + n[5] + n[6] + n[7], "the rows add up\n" + o);
            assertEquals(0, n[7], "lost\n" + o);
            assertTrue(n[2] > 0, "calls delivered on the first try, before the providers failed\n" + o);
            assertEquals(pending, n[4], "every resumed retry delivered after the restart\n" + o);
            assertTrue(o.contains("[2] ") && o.contains("DELIVERED    resumed from the journal"), o);
            assertTrue(o.indexOf(killed.group()) < o.indexOf(restarted.group())
                    && o.indexOf(restarted.group()) < o.indexOf(">> p1 and p2 stop failing"), o);
        } finally {
            for (long pid : pids) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
        for (long pid : pids) {
            assertTrue(ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true), "consumer process " + pid
                    + " still runs");
        }
        assertEquals(journalsBefore, journals(), "the demo's journal directory is deleted");
        Matcher m = Pattern.compile("(?:p[12]@|zookeeper://)127\\.0\\.0\\.1:(\\d+)").matcher(o);
        while (m.find()) {
            int port = Integer.parseInt(m.group(1));
            await("port " + port + " closed").atMost(Duration.ofSeconds(5)).until(() -> !Ports.isListening(port));
        }
    }

    private static Matcher find(Pattern p, String text) {
        Matcher m = p.matcher(text);
        assertTrue(m.find(), "no line matching " + p + " in\n" + text);
        return m;
    }

    private static Set<Path> journals() throws IOException {
        try (Stream<Path> s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return s.filter(p -> p.getFileName().toString().startsWith("rpc-timer-demo-crash-"))
                    .collect(Collectors.toSet());
        }
    }
}
