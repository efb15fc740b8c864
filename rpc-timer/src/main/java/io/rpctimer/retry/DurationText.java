package io.rpctimer.retry;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a duration an operator typed: a whole number with a unit ({@code 500ms}, {@code 30s}, {@code 10m},
 * {@code 2h}, {@code 7d}), a bare whole number of milliseconds (as every other {@code failback.*} key), or ISO-8601
 * ({@code PT10M}, {@code P7D}).
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
public final class DurationText {

    private static final Pattern SHORT = Pattern.compile("(\\d{1,15})\\s*(ms|s|m|h|d)?");

    private DurationText() {
    }

    /**
     * @param name the argument's name, for the error
     * @param raw  what was typed
     * @return the duration, {@code > 0}
     * @throws IllegalArgumentException naming {@code name} and {@code raw} if it is not a positive duration
     */
    public static Duration parse(String name, String raw) {
        Duration d = raw == null ? null : read(raw.trim().toLowerCase(Locale.ROOT));
        if (d == null || d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException(name + ": " + (raw == null ? "null" : "'" + raw + "'")
                    + " (expected: a duration > 0 such as 500ms, 30s, 10m, 2h, 7d, PT10M, or milliseconds)");
        }
        return d;
    }

    /** @return {@code d} as the shortest text {@link #parse} reads back: {@code 7d}, {@code 90s}, {@code 250ms} */
    public static String format(Duration d) {
        long ms = d.toMillis();
        long[] units = {86_400_000L, 3_600_000L, 60_000L, 1_000L};
        String[] names = {"d", "h", "m", "s"};
        for (int i = 0; i < units.length; i++) {
            if (ms >= units[i] && ms % units[i] == 0) {
                return ms / units[i] + names[i];
            }
        }
        return ms + "ms";
    }

    private static Duration read(String s) {
        try {
            return readOrThrow(s);
        } catch (DateTimeParseException | ArithmeticException e) {
            return null;
        }
    }

    private static Duration readOrThrow(String s) {
        Matcher m = SHORT.matcher(s);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            String unit = m.group(2) == null ? "ms" : m.group(2);
            return switch (unit) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            };
        }
        return Duration.parse(s.toUpperCase(Locale.ROOT));
    }
}
