package io.rpctimer.demo.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The demo's {@code --dedup} flag on the provider-hang scenario, through the launcher at {@code --speed 10}: with the
 * shared store no call runs twice and the report shows the suppressed duplicates next to the executed ones; with the
 * in-memory stores the cross-provider duplicates remain.
 */
@Timeout(90)
class DemoDedupIT {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return new DemoLauncher(new PrintStream(out, true, StandardCharsets.UTF_8), false)
                .execute(new PrintStream(err, true, StandardCharsets.UTF_8), args);
    }

    private long row(String name) {
        Matcher m = Pattern.compile("  " + name + " +(\\d+) ").matcher(out.toString(StandardCharsets.UTF_8));
        assertTrue(m.find(), "no row " + name + " in\n" + out);
        return Long.parseLong(m.group(1));
    }

    @Test
    void providerHang_sharedStore_noDuplicateExecuted_andTheSuppressedOnesReported() {
        assertEquals(0, run("--scenario", "provider-hang", "--speed", "10", "--dedup", "shared"), out + "\n" + err);
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("retrydedup=true, retrydedup.store=shared"), out
                .toString(StandardCharsets.UTF_8));
        assertEquals(0, row("duplicates executed"), out.toString(StandardCharsets.UTF_8));
        assertTrue(row("duplicates suppressed") > 0, out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void providerHang_memoryStores_crossProviderDuplicatesRemain() {
        assertEquals(0, run("--scenario", "provider-hang", "--speed", "10", "--dedup", "memory"), out + "\n" + err);
        assertTrue(row("duplicates executed") > 0, out.toString(StandardCharsets.UTF_8));
        row("duplicates suppressed");
    }

    @Test
    void badDedupValue_exits2NamingFlagAndValue() {
        assertEquals(2, run("--dedup", "disk"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--dedup: disk (expected: memory or shared)"),
                err.toString(StandardCharsets.UTF_8));
    }
}
