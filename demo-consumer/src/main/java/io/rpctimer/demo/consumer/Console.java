package io.rpctimer.demo.consumer;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;

/**
 * Where the demo's live output goes: whole lines, never interleaved, stamped with the time since the run's clock
 * started ({@code mm:ss.s}, e.g. {@code 00:06.1}).
 *
 * <p><b>Threading:</b> thread-safe: listeners, the scenario script, the progress timer and the main thread print at
 * once; each line is printed whole.
 */
public final class Console {

    private final PrintStream out;
    private volatile long startNanos = System.nanoTime();

    /** @param out where lines go */
    public Console(PrintStream out) {
        this.out = out;
    }

    /** Starts (or restarts) the clock that stamps {@link #timed} lines: now is {@code 00:00.0}. */
    public void startClock() {
        startNanos = System.nanoTime();
    }

    /** @return time since {@link #startClock()} */
    public Duration elapsed() {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    /** @return {@code epochMillis} as time since the clock started, e.g. {@code 00:06.1}; {@code 00:00.0} if before */
    public String stampOf(long epochMillis) {
        long ago = System.currentTimeMillis() - epochMillis;
        return stamp(Math.max(0, elapsed().toMillis() - Math.max(0, ago)));
    }

    /** @return {@code millis} as {@code mm:ss.s} */
    public static String stamp(long millis) {
        long tenths = (millis % 60_000) / 100;
        return String.format(Locale.ROOT, "%02d:%02d.%d", millis / 60_000, tenths / 10, tenths % 10);
    }

    /** Prints a line as it is. */
    public synchronized void line(String text) {
        out.println(text.stripTrailing());
        out.flush();
    }

    /** Prints {@code "  <time>  <text>"}, the time since the clock started. */
    public void timed(String text) {
        line("  " + stamp(elapsed().toMillis()) + "  " + text);
    }

    /** Prints {@code "  <time>  <text>"} for something that happened at {@code epochMillis}. */
    public void timedAt(long epochMillis, String text) {
        line("  " + stampOf(epochMillis) + "  " + text);
    }
}
