package io.rpctimer.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The command line of the end-to-end comparisons: positional arguments ({@code quick|full [outDir]}), options
 * {@code --name value}, and repeatable {@code --param key=value} pairs passed through to the consumer's reference.
 *
 * <p><b>Threading:</b> immutable once parsed; thread-safe.
 */
public final class BenchArgs {

    private final List<String> positional = new ArrayList<>();
    private final Map<String, String> options = new LinkedHashMap<>();
    private final Map<String, String> params = new LinkedHashMap<>();

    private BenchArgs() {
    }

    /**
     * @param args    the command line
     * @param allowed the option names accepted besides {@code param}, without the dashes
     * @return the parsed arguments
     * @throws IllegalArgumentException naming an unknown option, a missing value or a malformed {@code --param}
     */
    public static BenchArgs parse(String[] args, List<String> allowed) {
        BenchArgs a = new BenchArgs();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                a.positional.add(arg);
                continue;
            }
            String name = arg.substring(2);
            if (!name.equals("param") && !allowed.contains(name)) {
                throw new IllegalArgumentException("option: '" + arg + "' (expected one of: --param, --"
                        + String.join(", --", allowed) + ")");
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(arg + ": no value (expected: " + arg + " <value>)");
            }
            String value = args[++i];
            if (name.equals("param")) {
                int eq = value.indexOf('=');
                if (eq < 1) {
                    throw new IllegalArgumentException("--param: '" + value + "' (expected: key=value)");
                }
                a.params.put(value.substring(0, eq), value.substring(eq + 1));
            } else {
                a.options.put(name, value);
            }
        }
        return a;
    }

    /** @return positional argument {@code i}, or {@code fallback} if there are fewer */
    public String positional(int i, String fallback) {
        return i < positional.size() ? positional.get(i) : fallback;
    }

    /**
     * @return option {@code name} as a whole number, or {@code fallback} if absent
     * @throws IllegalArgumentException if it is not a whole number of at least {@code min}
     */
    public int intOption(String name, int fallback, int min) {
        String v = options.get(name);
        if (v == null) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= min) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--" + name + ": '" + v + "' (expected: a whole number >= " + min + ")");
    }

    /** @return option {@code name}, or {@code fallback} if absent */
    public String option(String name, String fallback) {
        return options.getOrDefault(name, fallback);
    }

    /** @return the {@code --param key=value} pairs, in order */
    public Map<String, String> params() {
        return Map.copyOf(params);
    }

    /**
     * @return {@code mode} if it is {@code quick} or {@code full}
     * @throws IllegalArgumentException otherwise
     */
    public static String mode(String mode) {
        if (!mode.equals("quick") && !mode.equals("full")) {
            throw new IllegalArgumentException("mode: '" + mode + "' (expected: quick or full)");
        }
        return mode;
    }
}
