package io.rpctimer.demo.consumer;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/**
 * The account of a run: what happened to every call sent. The buckets add up:
 * {@code sent == deliveredFirstTry + deliveredOnRetry + abandoned + rejected + handedOver + callerErrors + pending
 * + lost}. {@code lost} counts only after the consumer has shut down (before, an open call is {@code pending}).
 *
 * <p><b>Threading:</b> immutable, thread-safe.
 *
 * @param cluster            the Dubbo cluster the consumer ran on
 * @param accounting         how failed-back calls were accounted for
 * @param sent               calls sent
 * @param deliveredFirstTry  calls whose caller got a provider's reply
 * @param deliveredOnRetry   calls a retry delivered, by retry number
 * @param abandoned          calls given up after their retries
 * @param rejected           calls refused at the pending-retry cap
 * @param rejectedCallerTold of those, calls whose caller got the rejection as an exception
 * @param handedOver         calls pending at shutdown, handed over ({@link DemoConsumer#handedOverTo()})
 * @param callerErrors       calls whose caller got an exception (e.g. a business exception, not retried)
 * @param pending            calls still waiting for a retry
 * @param lost               calls failed back and never heard of again: no outcome, no delivery
 * @param duplicates         extra completions at providers (a call completed twice counts 1)
 * @param drainMillis        from the last send to the last outcome or delivery, in milliseconds
 * @param lostCallIds        up to 20 lost call ids
 */
public record Report(String cluster, CallBook.Accounting accounting, long sent, long deliveredFirstTry,
                     SortedMap<Integer, Long> deliveredOnRetry, long abandoned, long rejected,
                     long rejectedCallerTold, long handedOver, long callerErrors, long pending, long lost,
                     long duplicates, long drainMillis, List<String> lostCallIds) {

    public Report {
        deliveredOnRetry = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(deliveredOnRetry));
    }

    /** @return calls delivered by any retry */
    public long deliveredOnAnyRetry() {
        return deliveredOnRetry.values().stream().mapToLong(Long::longValue).sum();
    }

    /** @return calls delivered, first try or retry */
    public long delivered() {
        return deliveredFirstTry + deliveredOnAnyRetry();
    }

    /** @return whether the buckets add up to {@code sent} */
    public boolean addsUp() {
        return sent == delivered() + abandoned + rejected + handedOver + callerErrors + pending + lost;
    }

    /** @return the figures by name, in report order, for machine-readable output */
    public Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cluster", cluster);
        m.put("sent", sent);
        m.put("deliveredFirstTry", deliveredFirstTry);
        deliveredOnRetry.forEach((k, v) -> m.put("deliveredOnRetry" + k, v));
        m.put("deliveredOnRetry", deliveredOnAnyRetry());
        m.put("abandoned", abandoned);
        m.put("rejected", rejected);
        m.put("rejectedCallerTold", rejectedCallerTold);
        m.put("handedOver", handedOver);
        m.put("callerErrors", callerErrors);
        m.put("pending", pending);
        m.put("lost", lost);
        m.put("duplicates", duplicates);
        m.put("drainMillis", drainMillis);
        return m;
    }

    /** @return the report as an aligned two-column table for a terminal */
    public String toTable() {
        StringBuilder b = new StringBuilder();
        row(b, "sent", sent, null);
        row(b, "delivered on the first try", deliveredFirstTry, null);
        deliveredOnRetry.forEach((k, v) -> row(b, "delivered on retry " + k, v, null));
        row(b, "abandoned", abandoned, "retries exhausted, or a failure the policy does not retry");
        row(b, "rejected", rejected, rejectedCallerTold + " of them told to the caller");
        row(b, "handed over", handedOver, "pending at shutdown, " + DemoConsumer.handedOverTo());
        row(b, "failed to the caller", callerErrors, "the caller got the exception");
        if (pending > 0) {
            row(b, "pending", pending, "still waiting for a retry");
        }
        row(b, "lost", lost, lost == 0 ? "must be 0" : "LOST: " + lostCallIds);
        row(b, "duplicates at providers", duplicates, "same call completed more than once");
        row(b, "drain time", drainMillis, "ms from the last send to the last outcome");
        return b.toString();
    }

    private static void row(StringBuilder b, String name, long value, String note) {
        b.append(String.format("  %-28s %8d%s%n", name, value, note == null ? "" : "   " + note));
    }
}
