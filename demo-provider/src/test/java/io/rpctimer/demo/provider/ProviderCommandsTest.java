package io.rpctimer.demo.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.provider.fault.FaultInjector;
import io.rpctimer.demo.provider.ledger.CallLedger;
import io.rpctimer.demo.provider.ledger.CallOutcome;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

class ProviderCommandsTest {
    private final FaultInjector faults = new FaultInjector(() -> 0.5);
    private final CallLedger ledger = new CallLedger();
    private final FakeDowntime downtime = new FakeDowntime();
    private final ProviderCommands commands = new ProviderCommands("p1@127.0.0.1:20881", faults, ledger, downtime);

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "fail 0.3          | fail 30%",
        "FAIL 30%          | fail 30%",
        "fail .5           | fail 50%",
        "fail next 3       | fail next 3",
        "error 1           | error 100%",
        "error next 2      | error next 2",
        "latency 200ms     | latency 200 ms",
        "  hang   10s      | hang 10 s",
        "hang 1.5s         | hang 1.5 s"})
    void faultCommands_setTheFault(String command, String expectedFaults) {
        assertEquals("faults: " + expectedFaults, commands.execute(command));
        assertEquals(expectedFaults, faults.settings().toString());
    }

    @Test
    void off_andClear_removeFaults() {
        commands.execute("fail 0.3");
        commands.execute("fail next 2");
        commands.execute("latency 1s");
        assertEquals("faults: latency 1 s", commands.execute("fail off"));
        assertEquals("faults: none", commands.execute("latency off"));
        commands.execute("error next 1");
        commands.execute("hang 1m");
        downtime.down = true;
        assertEquals("faults: none", commands.execute("clear"));
        assertFalse(downtime.down, "clear brings the service up");
    }

    @Test
    void downAndUp_driveTheDowntime() {
        assertEquals("p1@127.0.0.1:20881 is down for 5 s (unregistered and unexported)", commands.execute("down 5s"));
        assertEquals(List.of(Duration.ofSeconds(5)), downtime.downs);
        assertTrue(commands.execute("status").startsWith("p1@127.0.0.1:20881 DOWN"));
        assertEquals("p1@127.0.0.1:20881 is up again", commands.execute("up"));
        assertEquals("p1@127.0.0.1:20881 was not down", commands.execute("up"));
        assertEquals("p1@127.0.0.1:20881 up, faults: none", commands.execute("status"));
    }

    @Test
    void stats_printAlignedCounters_andResetForgetsThem() {
        ledger.ended(ledger.received("send", "c-1", "r-1", 1), CallOutcome.COMPLETED, null);
        ledger.ended(ledger.received("send", "c-1", "r-1", 2), CallOutcome.COMPLETED, null);
        ledger.ended(ledger.received("send", "c-2", null, 0), CallOutcome.REJECTED, "no");
        String stats = commands.execute("stats");
        assertTrue(stats.startsWith("served            3\ncompleted         2\nrejected          1  injected 'fail'\n"),
                stats);
        assertTrue(stats.contains("\nduplicates        1  [r-1]\n"), stats);
        assertTrue(stats.endsWith("\nattempts      original: 1  #1: 1  #2: 1"), stats);
        assertEquals("ledger reset", commands.execute("reset"));
        assertTrue(commands.execute("stats").startsWith("served            0\n"));
    }

    @Test
    void help_listsEveryCommand() {
        String help = commands.execute("help");
        for (String c : new String[] {"fail", "error", "latency", "hang", "down", "up", "clear", "stats", "reset",
            "status", "quit"}) {
            assertTrue(help.contains("\n  " + c + " ") || help.startsWith("  " + c + " "), c);
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "fail abc       | fail: \"abc\" (expected: 0..1 or a percentage, e.g. 0.3 or 30%)",
        "fail 1.5       | fail: \"1.5\" (expected: 0..1 or a percentage, e.g. 0.3 or 30%)",
        "error 120%     | error: \"120%\" (expected: 0..1 or a percentage, e.g. 0.3 or 30%)",
        "fail           | fail: missing (expected: a rate, 'next <n>' or off)",
        "fail next      | fail next: missing (expected: a number of calls)",
        "fail next -1   | fail next: \"-1\" (expected: a whole number >= 0)",
        "error next x   | error next: \"x\" (expected: a whole number >= 0)",
        "latency 5x     | latency: \"5x\" (expected: a number and a unit ms, s, m or h, e.g. 500ms, 5s, 1.5s, 1m; or 0)",
        "hang 11m       | hang: 660000 ms (expected: 0..10 min)",
        "down           | down: missing (expected: a duration)",
        "bogus 1        | command: \"bogus 1\" (expected: fail, error, latency, hang, down, up, clear, stats, reset, status, help)"})
    void badCommands_nameTheParameterAndTheValue(String command, String message) {
        assertEquals(message, assertThrows(IllegalArgumentException.class, () -> commands.execute(command))
                .getMessage());
        assertTrue(faults.settings().isNone(), "nothing changed");
    }

    @Test
    void emptyCommand_isRejected() {
        assertThrows(IllegalArgumentException.class, () -> commands.execute("  "));
        assertThrows(IllegalArgumentException.class, () -> commands.execute(null));
    }

    /** Records what the commands asked for. */
    private static final class FakeDowntime implements Downtime {
        final List<Duration> downs = new ArrayList<>();
        boolean down;

        @Override
        public CompletableFuture<Void> goDown(Duration downFor) {
            downs.add(downFor);
            down = true;
            return new CompletableFuture<>();
        }

        @Override
        public boolean up() {
            boolean was = down;
            down = false;
            return was;
        }

        @Override
        public boolean isDown() {
            return down;
        }
    }
}
