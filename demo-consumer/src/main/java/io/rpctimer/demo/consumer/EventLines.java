package io.rpctimer.demo.consumer;

import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Prints the {@code wheelfailback} events of one service as aligned lines, as they happen. By default one line per
 * attempt that failed, and one per outcome:
 * <pre>
 *   time     call   try  provider            event        detail
 *   00:06.1  c-061  #0   -                   failed       no provider available; retry 1 in 1.1 s
 *   00:07.2  c-061  #1   -                   failed       no provider available; retry 2 in 2.3 s
 *   00:09.5  c-061  #2   p2@127.0.0.1:40002  DELIVERED    3.4 s after the first try
 * </pre>
 * {@code try} is the attempt: {@code #0} the caller's own call, {@code #k} retry k. With {@link Level#ALL} every raw
 * event gets its own line ({@code scheduled}, {@code sent}, {@code failed}, outcomes). Also counts, per provider, the
 * retries that delivered.
 *
 * <p><b>Threading:</b> thread-safe: events arrive from callers, the wheel's executor and Dubbo's I/O threads at once.
 * The events of one call come one after the other.
 */
public final class EventLines implements RetryListener {

    /** Which events get a line. */
    public enum Level {
        /** Every event on its own line, including {@code scheduled} and {@code sent}. */
        ALL,
        /** One line per failed attempt (with the delay until the next retry) and one per outcome. */
        RETRIES,
        /** Outcomes only: DELIVERED, ABANDONED, REJECTED, HANDED_OVER. */
        OUTCOMES,
        /** No line; counting goes on. */
        NONE
    }

    /** A failed retry, waiting for the event that says what comes next. */
    private record Failed(int attempt, String provider, String reason) {
    }

    private final Console console;
    private final String service;
    private final Level level;
    private final Map<String, String> providerNames;
    private final String format;
    private final Map<String, LongAdder> deliveredBy = new ConcurrentHashMap<>();
    private final LongAdder handedOver = new LongAdder();
    private final Map<String, Long> firstFailed = new ConcurrentHashMap<>();
    private final Map<String, Failed> lastFailed = new ConcurrentHashMap<>();
    private final Set<String> replayed = ConcurrentHashMap.newKeySet();

    /**
     * @param console       where lines go
     * @param service       the service interface name whose events count; others are ignored
     * @param level         which events get a line
     * @param providerNames provider address ({@code host:port}) to the label to print, e.g. {@code p1@127.0.0.1:4001};
     *                      an address not in it is printed as it is
     * @param callIdWidth   the width of the call id column, in characters
     */
    public EventLines(Console console, String service, Level level, Map<String, String> providerNames,
                      int callIdWidth) {
        this.console = console;
        this.service = service;
        this.level = level;
        this.providerNames = Map.copyOf(providerNames);
        int providerWidth = Math.max(21, this.providerNames.values().stream().mapToInt(String::length).max().orElse(0));
        this.format = "%-" + Math.max(4, callIdWidth) + "s  %-3s  %-" + providerWidth + "s  %-11s  %s";
    }

    /** @return the column header line, aligned with the event lines */
    public String header() {
        return "  time     " + String.format(Locale.ROOT, format, "call", "try", "provider", "event", "detail");
    }

    @Override
    public void onEvent(RetryEvent e) {
        if (!service.equals(e.service())) {
            return;
        }
        String provider = label(e.provider());
        if (e.type() == RetryEvent.Type.DELIVERED) {
            deliveredBy.computeIfAbsent(provider, p -> new LongAdder()).increment();
        } else if (e.type() == RetryEvent.Type.HANDED_OVER) {
            handedOver.increment();
        }
        if (e.type() == RetryEvent.Type.SCHEDULED && e.attempt() == 1) {
            firstFailed.putIfAbsent(e.retryId(), e.epochMillis());
        }
        switch (level) {
            case ALL -> print(e, e.attempt(), provider, name(e.type()), rawDetail(e));
            case RETRIES -> perAttempt(e, provider);
            case OUTCOMES -> {
                if (e.isOutcome()) {
                    print(e, e.attempt(), provider, name(e.type()), rawDetail(e));
                }
            }
            case NONE -> { }
        }
        if (e.isOutcome()) {
            firstFailed.remove(e.retryId());
            lastFailed.remove(e.retryId());
        }
    }

    private void perAttempt(RetryEvent e, String provider) {
        switch (e.type()) {
            case SENT -> { }
            case FAILED -> lastFailed.put(e.retryId(), new Failed(e.attempt(), provider, FailureText.of(e.failure())));
            case SCHEDULED -> {
                Failed f = e.attempt() == 1 ? null : lastFailed.remove(e.retryId());
                String next = "retry " + e.attempt() + " in " + Human.duration(e.delayMillis());
                if (f == null) { // retry 1: the event carries the first try's provider and failure
                    String why = e.failure() != null ? FailureText.of(e.failure())
                            : e.attempt() == 1 ? "first try" : "retry " + (e.attempt() - 1);
                    print(e, e.attempt() - 1, provider, "failed", why + "; " + next);
                } else {
                    print(e, f.attempt(), f.provider(), "failed", f.reason() + "; " + next);
                }
            }
            default -> print(e, e.attempt(), provider, name(e.type()), rawDetail(e));
        }
    }

    private void print(RetryEvent e, int attempt, String provider, String event, String detail) {
        console.timedAt(e.epochMillis(), String.format(Locale.ROOT, format, e.retryId(), "#" + attempt, provider,
                event, detail));
    }

    private static String name(RetryEvent.Type type) {
        return type.outcome() != null ? type.name() : type.name().toLowerCase(Locale.ROOT);
    }

    private String rawDetail(RetryEvent e) {
        return switch (e.type()) {
            case SCHEDULED -> "retry " + e.attempt() + " in " + Human.duration(e.delayMillis());
            case SENT -> "";
            case FAILED -> FailureText.of(e.failure());
            case DELIVERED -> since(e);
            case ABANDONED -> (e.attempt() == 0 ? "not retried: " : "after " + e.attempt() + " retries: ")
                    + FailureText.of(e.failure());
            case REJECTED -> "no retry: " + FailureText.of(e.failure());
            case HANDED_OVER -> "retry " + e.attempt() + " was pending at shutdown: " + DemoConsumer.handedOverTo();
        };
    }

    private String since(RetryEvent e) {
        if (replayed.contains(e.retryId())) {
            return "replayed from the dead letters";
        }
        Long first = firstFailed.get(e.retryId());
        // no first failure seen here: the call was resumed from the journal, failed back by an earlier process
        return first == null ? "resumed from the journal" : Human.duration(Math.max(0, e.epochMillis() - first)) + " after the first try";
    }

    private String label(String address) {
        if (address == null) {
            return "-";
        }
        return providerNames.getOrDefault(address, address);
    }

    /** Marks {@code retryIds} as dead letters being replayed: their deliveries say so. */
    public void replayed(Collection<String> retryIds) {
        replayed.addAll(retryIds);
    }

    /** @return HANDED_OVER outcomes seen, of this consumer's calls and of those resumed from its journal */
    public long handedOver() {
        return handedOver.sum();
    }

    /** @return retries delivered so far, by provider label; sorted */
    public Map<String, Long> deliveredByProvider() {
        Map<String, Long> m = new TreeMap<>();
        deliveredBy.forEach((p, n) -> m.put(p, n.sum()));
        return m;
    }
}
