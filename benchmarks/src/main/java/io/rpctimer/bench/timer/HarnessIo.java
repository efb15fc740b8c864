package io.rpctimer.bench.timer;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The one-line protocol between a harness JVM and {@link TimerBenchRunner}: the harness prints
 * {@code RESULT key=value key=value ...} (values without spaces) on standard output; the runner parses it.
 *
 * <p><b>Threading:</b> stateless; thread-safe.
 */
final class HarnessIo {

    static final String PREFIX = "RESULT ";

    private HarnessIo() {
    }

    static String format(Map<String, ?> values) {
        StringBuilder line = new StringBuilder(PREFIX);
        values.forEach((k, v) -> line.append(k).append('=').append(valueText(v)).append(' '));
        return line.toString().trim();
    }

    private static String valueText(Object v) {
        if (v instanceof Double d) {
            return String.format(Locale.ROOT, "%.4f", d);
        }
        return String.valueOf(v).replace(' ', '_');
    }

    /** @return the key/value pairs of a {@code RESULT} line, or {@code null} if {@code line} is not one */
    static Map<String, String> parse(String line) {
        if (!line.startsWith(PREFIX)) {
            return null;
        }
        Map<String, String> values = new LinkedHashMap<>();
        for (String pair : line.substring(PREFIX.length()).trim().split(" +")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                values.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        return values;
    }

    /** Prints the result line and ends the JVM (timer threads of some peers are not daemons). */
    static void printAndExit(Map<String, ?> values) {
        System.out.println(format(values));
        System.out.flush();
        System.exit(0);
    }
}
