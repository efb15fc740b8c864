package io.rpctimer.demo.provider;

import io.rpctimer.demo.provider.fault.FaultInjector;
import io.rpctimer.demo.provider.ledger.CallLedger;
import io.rpctimer.demo.provider.ledger.LedgerSnapshot;
import io.rpctimer.demo.provider.support.Durations;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The provider's command language, typed at its terminal or sent through {@code ProviderControl.execute}:
 * <pre>
 * fail 0.3 | fail 30% | fail next 3 | fail off     business exception on a fraction of calls / the next n calls
 * error 0.5 | error next 2 | error off             RPC-level error, likewise
 * latency 200ms | latency off                     delay added to every call
 * hang 10s | hang off                             every call hangs this long, or until clear
 * down 5s | up                                    unexport for a while / export again now
 * clear                                           all faults off, hanging calls released, service up
 * stats | reset                                   the call ledger / forget it
 * status | help
 * </pre>
 * Words are case-insensitive. Durations as {@link Durations#parse}; rates 0..1 or a percentage.
 *
 * <p>Thread-safe: holds no state of its own; the objects it drives are thread-safe.
 */
public final class ProviderCommands {
    private static final String HELP = String.join("\n",
            "  fail <rate>          business exception on this fraction of calls (0..1 or 30%); 'fail off'",
            "  fail next <n>        business exception on the next n calls",
            "  error <rate>         RPC-level error on this fraction of calls; 'error off'",
            "  error next <n>       RPC-level error on the next n calls",
            "  latency <duration>   add this delay to every call (500ms, 2s); 'latency off'",
            "  hang <duration>      every call hangs this long or until 'clear' (set it above the consumer timeout)",
            "  down <duration>      unregister + unexport the service, export it again after this long",
            "  up                   export it again now",
            "  clear                all faults off, hanging calls released, service up",
            "  stats                calls served, outcomes, duplicates, attempts",
            "  reset                forget the recorded calls",
            "  status               identity, faults, up/down",
            "  quit                 stop this provider (terminal only)");

    private final String identity;
    private final FaultInjector faults;
    private final CallLedger ledger;
    private final Downtime downtime;

    /**
     * @param identity the provider, {@code "<name>@<host>:<port>"}, for replies
     * @param faults its injector
     * @param ledger its ledger
     * @param downtime its service's up/down switch
     */
    public ProviderCommands(String identity, FaultInjector faults, CallLedger ledger, Downtime downtime) {
        this.identity = identity;
        this.faults = faults;
        this.ledger = ledger;
        this.downtime = downtime;
    }

    /** @return the command list, one command per line, indented by two spaces */
    public static String help() {
        return HELP;
    }

    /**
     * Runs one command.
     *
     * @param line e.g. {@code "fail 0.3"}
     * @return the reply, one or more lines without a trailing newline
     * @throws IllegalArgumentException if the command or its argument is malformed, naming it and the value
     * @throws IllegalStateException if {@code down} is asked while already down, or the provider has stopped
     */
    public String execute(String line) {
        String[] w = line == null ? new String[0] : line.trim().split("\\s+");
        String command = w.length == 0 ? "" : w[0].toLowerCase(Locale.ROOT);
        switch (command) {
            case "fail":
                return fail(w);
            case "error":
                return error(w);
            case "latency":
                faults.latency(durationOrOff("latency", arg(w, 1, "latency", "a duration or off")));
                return now();
            case "hang":
                faults.hang(durationOrOff("hang", arg(w, 1, "hang", "a duration or off")));
                return now();
            case "down":
                return down(w);
            case "up":
                return downtime.up() ? identity + " is up again" : identity + " was not down";
            case "clear":
                faults.clear();
                downtime.up();
                return now();
            case "stats":
                return stats(ledger.snapshot());
            case "reset":
                ledger.reset();
                return "ledger reset";
            case "status":
                return identity + (downtime.isDown() ? " DOWN" : " up") + ", faults: " + faults.settings();
            case "help":
                return HELP;
            default:
                throw new IllegalArgumentException("command: \"" + (line == null ? "" : line.trim())
                        + "\" (expected: fail, error, latency, hang, down, up, clear, stats, reset, status, help)");
        }
    }

    private String fail(String[] w) {
        String what = arg(w, 1, "fail", "a rate, 'next <n>' or off");
        if (what.equalsIgnoreCase("next")) {
            faults.failNext(parseCount("fail next", arg(w, 2, "fail next", "a number of calls")));
        } else if (what.equalsIgnoreCase("off")) {
            faults.failRate(0);
            faults.failNext(0);
        } else {
            faults.failRate(parseRate("fail", what));
        }
        return now();
    }

    private String error(String[] w) {
        String what = arg(w, 1, "error", "a rate, 'next <n>' or off");
        if (what.equalsIgnoreCase("next")) {
            faults.errorNext(parseCount("error next", arg(w, 2, "error next", "a number of calls")));
        } else if (what.equalsIgnoreCase("off")) {
            faults.errorRate(0);
            faults.errorNext(0);
        } else {
            faults.errorRate(parseRate("error", what));
        }
        return now();
    }

    private String down(String[] w) {
        Duration d = Durations.parse("down", arg(w, 1, "down", "a duration"));
        downtime.goDown(d);
        return identity + " is down for " + Durations.format(d) + " (unregistered and unexported)";
    }

    private String now() {
        return "faults: " + faults.settings();
    }

    /**
     * Formats ledger counters as aligned lines.
     *
     * @param s the snapshot
     * @return e.g. {@code "served        12\ncompleted      9\n..."}
     */
    public static String stats(LedgerSnapshot s) {
        StringJoiner attempts = new StringJoiner("  ");
        for (Map.Entry<Integer, Long> e : s.attempts().entrySet()) {
            attempts.add((e.getKey() == 0 ? "original" : e.getKey() < 0 ? "unparsable" : "#" + e.getKey()) + ": "
                    + e.getValue());
        }
        return String.join("\n",
                row("served", s.served(), ""),
                row("completed", s.completed(), ""),
                row("rejected", s.rejected(), "injected 'fail'"),
                row("errors", s.rpcErrors(), "injected 'error'"),
                row("failed", s.failed(), "other failures"),
                row("in flight", s.inFlight(), ""),
                row("duplicates", s.duplicates(),
                        s.duplicates() == 0 ? "retry ids completed more than once" : s.duplicateRetryIds().toString()),
                row("dup call ids", s.duplicateCallIds(), "call ids completed more than once"),
                String.format(Locale.ROOT, "%-12s  %s", "attempts", attempts.length() == 0 ? "-" : attempts));
    }

    private static String row(String name, long value, String note) {
        return String.format(Locale.ROOT, "%-12s %6d  %s", name, value, note).stripTrailing();
    }

    private static String arg(String[] w, int i, String name, String expected) {
        if (w.length <= i) {
            throw new IllegalArgumentException(name + ": missing (expected: " + expected + ")");
        }
        return w[i];
    }

    private static Duration durationOrOff(String name, String text) {
        return text.equalsIgnoreCase("off") ? Duration.ZERO : Durations.parse(name, text);
    }

    /**
     * Parses a rate: {@code 0.3}, {@code .3}, {@code 30%}.
     *
     * @param name the parameter's name, for the error message
     * @param text the text
     * @return the rate, 0..1
     * @throws IllegalArgumentException {@code fail: "abc" (expected: 0..1 or a percentage, e.g. 0.3 or 30%)}
     */
    public static double parseRate(String name, String text) {
        String t = text == null ? "" : text.trim();
        try {
            double rate = t.endsWith("%")
                    ? Double.parseDouble(t.substring(0, t.length() - 1).trim()) / 100
                    : Double.parseDouble(t);
            if (rate >= 0 && rate <= 1) {
                return rate;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(
                name + ": \"" + text + "\" (expected: 0..1 or a percentage, e.g. 0.3 or 30%)");
    }

    /**
     * Parses a number of calls.
     *
     * @param name the parameter's name, for the error message
     * @param text the text
     * @return the number, at least 0
     * @throws IllegalArgumentException {@code fail next: "x" (expected: a whole number >= 0)}
     */
    public static int parseCount(String name, String text) {
        try {
            int n = Integer.parseInt(text == null ? "" : text.trim());
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(name + ": \"" + text + "\" (expected: a whole number >= 0)");
    }
}
