package io.rpctimer.bench.failback;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How busy the rest of the machine was. The CPU the other processes used over a span is the busy
 * time of all CPUs ({@code /proc/stat}) less this JVM's own CPU time ({@code /proc/self/stat}); the load averages come
 * from {@code /proc/loadavg}. Linux only; elsewhere the figures read NaN.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
final class HostLoad {

    /** Kernel clock ticks per second of {@code /proc} CPU times (USER_HZ, 100 on Linux). */
    private static final double TICKS_PER_SECOND = 100;

    private HostLoad() {
    }

    /** A point in time with the machine's and this JVM's CPU ticks until then ({@code -1} if unreadable). */
    record Mark(long nanos, long machineBusyTicks, long selfTicks) {
    }

    static Mark mark() {
        return new Mark(System.nanoTime(), machineBusyTicks(), selfTicks());
    }

    /** @return the average CPU other processes used since {@code m}, in cores (1.0 = one core busy), or NaN */
    static double foreignCoresSince(Mark m) {
        Mark now = mark();
        if (m.machineBusyTicks < 0 || m.selfTicks < 0 || now.machineBusyTicks < 0 || now.selfTicks < 0) {
            return Double.NaN;
        }
        double seconds = (now.nanos - m.nanos) / 1e9;
        double foreign = (now.machineBusyTicks - m.machineBusyTicks) - (now.selfTicks - m.selfTicks);
        return seconds <= 0 ? 0 : Math.max(0, foreign / TICKS_PER_SECOND / seconds);
    }

    /** @return this JVM's CPU time since {@code m}, in cores on average, or NaN */
    static double selfCoresSince(Mark m) {
        long self = selfTicks();
        double seconds = (System.nanoTime() - m.nanos) / 1e9;
        return self < 0 || m.selfTicks < 0 || seconds <= 0 ? Double.NaN
                : (self - m.selfTicks) / TICKS_PER_SECOND / seconds;
    }

    /** @return "1.18 0.85 2.19", the 1, 5 and 15 minute load averages, or "unknown" */
    static String loadAverages() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static long machineBusyTicks() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/stat"))) {
                if (line.startsWith("cpu ")) {
                    String[] f = line.trim().split("\\s+");
                    // user nice system idle iowait irq softirq steal
                    long busy = 0;
                    for (int i : new int[] {1, 2, 3, 6, 7, 8}) {
                        busy += Long.parseLong(f[i]);
                    }
                    return busy;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    private static long selfTicks() {
        try {
            String line = Files.readString(Path.of("/proc/self/stat"));
            String[] f = line.substring(line.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime + stime, all threads
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
