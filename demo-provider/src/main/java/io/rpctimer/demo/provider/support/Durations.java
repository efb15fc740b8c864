package io.rpctimer.demo.provider.support;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses and prints durations the way a person types and reads them: {@code 500ms}, {@code 5s}, {@code 1.5s},
 * {@code 1m}, {@code 2h}; printed as {@code 500 ms}, {@code 1.5 s}, {@code 2 min 5 s}.
 *
 * <p>Granularity is one millisecond: parsing rejects fractions of a millisecond, printing drops them.
 *
 * <p>Thread-safe (stateless).
 */
public final class Durations {
    private static final String EXPECTED =
            "expected: a number and a unit ms, s, m or h, e.g. 500ms, 5s, 1.5s, 1m; or 0";
    private static final Pattern FORMAT =
            Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|sec|m|min|h)", Pattern.CASE_INSENSITIVE);

    private Durations() {}

    /**
     * Parses a duration such as {@code 500ms}, {@code 5s}, {@code 1.5s}, {@code 1m} ({@code = 1min}), {@code 2h}, or
     * {@code 0}. Case and a space before the unit are ignored.
     *
     * @param name the parameter's name, used in the error message
     * @param text the text to parse
     * @return the duration, at least zero, a whole number of milliseconds
     * @throws IllegalArgumentException naming the parameter and the value, e.g.
     *         {@code latency: "5x" (expected: a number and a unit ms, s, m or h, ...)}
     */
    public static Duration parse(String name, String text) {
        if (text == null) {
            throw new IllegalArgumentException(name + ": null (" + EXPECTED + ")");
        }
        String t = text.trim();
        if (t.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = FORMAT.matcher(t);
        if (!m.matches()) {
            throw new IllegalArgumentException(name + ": \"" + text + "\" (" + EXPECTED + ")");
        }
        BigDecimal millis = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unitMillis(m.group(2))));
        try {
            return Duration.ofMillis(millis.longValueExact());
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(
                    name + ": \"" + text + "\" (expected: a whole number of milliseconds, at most " + Long.MAX_VALUE
                            + " ms)");
        }
    }

    private static long unitMillis(String unit) {
        switch (unit.toLowerCase(Locale.ROOT)) {
            case "ms":
                return 1L;
            case "s":
            case "sec":
                return 1_000L;
            case "m":
            case "min":
                return 60_000L;
            default: // "h", the only other unit the pattern accepts
                return 3_600_000L;
        }
    }

    /**
     * Prints a duration in the largest units that keep it short: {@code 0 ms}, {@code 250 ms}, {@code 1.5 s},
     * {@code 59.999 s}, {@code 2 min}, {@code 2 min 5 s}, {@code 1 h 30 min}. Sub-millisecond parts are dropped.
     *
     * @param d the duration, not negative
     * @return the text
     * @throws IllegalArgumentException if {@code d} is null or negative
     */
    public static String format(Duration d) {
        if (d == null || d.isNegative()) {
            throw new IllegalArgumentException("duration: " + d + " (expected: >= 0)");
        }
        long ms = d.toMillis();
        if (ms < 1_000) {
            return ms + " ms";
        }
        if (ms < 60_000) {
            return seconds(ms) + " s";
        }
        if (ms < 3_600_000) {
            long minutes = ms / 60_000;
            long rest = ms % 60_000;
            return minutes + " min" + (rest == 0 ? "" : " " + seconds(rest) + " s");
        }
        long hours = ms / 3_600_000;
        long minutes = (ms % 3_600_000) / 60_000;
        return hours + " h" + (minutes == 0 ? "" : " " + minutes + " min");
    }

    /** {@code 1500 -> "1.5"}, {@code 5000 -> "5"}, {@code 250 -> "0.25"}. */
    private static String seconds(long millis) {
        return BigDecimal.valueOf(millis, 3).stripTrailingZeros().toPlainString();
    }
}
