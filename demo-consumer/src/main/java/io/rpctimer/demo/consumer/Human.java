package io.rpctimer.demo.consumer;

import java.time.Duration;
import java.util.Locale;

/**
 * Durations and rates as a person reads them in a terminal: {@code 250 ms}, {@code 1.1 s}, {@code 2 min 5 s},
 * {@code 10/s}.
 *
 * <p><b>Threading:</b> stateless, thread-safe.
 */
public final class Human {

    private Human() {
    }

    /**
     * @param millis a duration in milliseconds, not negative
     * @return {@code 0 ms .. 999 ms}, then seconds with one decimal ({@code 1.1 s}, {@code 20 s}), then
     *         {@code 2 min 5 s}
     */
    public static String duration(long millis) {
        if (millis < 1_000) {
            return Math.max(0, millis) + " ms";
        }
        if (millis < 60_000) {
            long tenths = Math.round(millis / 100.0);
            return tenths % 10 == 0 ? tenths / 10 + " s" : tenths / 10 + "." + tenths % 10 + " s";
        }
        long seconds = Math.round(millis / 1000.0);
        return seconds / 60 + " min" + (seconds % 60 == 0 ? "" : " " + seconds % 60 + " s");
    }

    /** @return {@link #duration(long)} of {@code d} */
    public static String duration(Duration d) {
        return duration(d.toMillis());
    }

    /** @return a rate in calls per second: {@code 10/s}, {@code 2.5/s} */
    public static String rate(double perSecond) {
        return number(perSecond) + "/s";
    }

    /** @return {@code 2}, {@code 2.5}, {@code 0.25}: no trailing zeros */
    public static String number(double value) {
        String s = String.format(Locale.ROOT, "%.2f", value);
        return s.contains(".") ? s.replaceAll("0+$", "").replaceAll("\\.$", "") : s;
    }

    /** @return {@code 0.2} as {@code 20%} */
    public static String percent(double fraction) {
        return number(fraction * 100) + "%";
    }
}
