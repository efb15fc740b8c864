package io.rpctimer.bench.durable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The machine's busy CPU time from {@code /proc/stat} (user, nice, system, irq, softirq and steal of all cores), so
 * that a run can tell how much of it went to processes other than its own.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
final class MachineCpu {

    private static final long TICK_NANOS = 10_000_000L;

    private MachineCpu() {
    }

    /** @return busy CPU time of every core so far, in nanoseconds, or 0 without {@code /proc/stat} */
    static long busyNanos() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            // cpu user nice system idle iowait irq softirq steal ...
            long busy = Long.parseLong(f[1]) + Long.parseLong(f[2]) + Long.parseLong(f[3]) + Long.parseLong(f[6])
                    + Long.parseLong(f[7]) + Long.parseLong(f[8]);
            return busy * TICK_NANOS;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
