package io.rpctimer.demo.consumer;

import io.rpctimer.demo.provider.ledger.CallListener;
import io.rpctimer.demo.provider.ledger.CallOutcome;
import io.rpctimer.demo.provider.ledger.CallRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The account of the {@code consumer-crash} scenario, across the two consumer processes: what became of each call the
 * first process sent. It listens to the providers' ledgers (in the launcher's JVM) for completions per
 * {@code retry.id} and attempt, takes a snapshot of them at the kill, and joins them with the outcome lines each
 * child printed ({@link ChildConsumer#outcomes()}). Each call lands in exactly one row: delivered on the first try
 * (a provider completed attempt 0), delivered on a retry by the first process, delivered after the restart by the
 * second, completed at the kill with no outcome line, abandoned, rejected, or lost. A duplicate (a call completed more
 * than once) is explained only if the call was in flight at the kill (completed by a provider before it, with no
 * first-try reply and no DELIVERED line from the first process), or if one of its attempts timed out: the consumer
 * gave up on it and retried, and the provider completed it all the same (at-least-once delivery).
 *
 * <p><b>Threading:</b> thread-safe: provider threads report completions while the launcher reads.
 */
final class CrashAccount implements CallListener {

    private static final String ROW = "  %-30s %10s   %s";

    private final Map<String, AtomicInteger> completions = new ConcurrentHashMap<>();
    private final Set<String> firstTry = ConcurrentHashMap.newKeySet();
    private volatile Map<String, Integer> atKill = Map.of();

    @Override
    public void onCallEnded(CallRecord call, CallOutcome outcome, Duration elapsed, String detail) {
        if (outcome == CallOutcome.COMPLETED && call.callId() != null) {
            completions.computeIfAbsent(call.callId(), k -> new AtomicInteger()).incrementAndGet();
            if (call.attempt() == CallRecord.NO_ATTEMPT) {
                firstTry.add(call.callId());
            }
        }
    }

    /** Notes what the providers had completed when the first consumer process was killed. */
    void killed() {
        Map<String, Integer> m = new TreeMap<>();
        completions.forEach((id, n) -> m.put(id, n.get()));
        atKill = m;
    }

    /** One call's fate, in report order. */
    enum Fate { FIRST_TRY, BEFORE_KILL, AFTER_RESTART, AT_KILL, ABANDONED, REJECTED, LOST }

    /**
     * The report.
     *
     * @param sent           the calls the first process sent
     * @param lostIds        the first of the lost calls, at most 20
     * @param duplicates     completions beyond the first, summed over the calls
     * @param inFlightAtKill calls completed by a provider before the kill that the first process had not yet seen
     *                       delivered: the only ones a duplicate is allowed for
     * @param unexplained    calls completed more than once that were not in flight at the kill
     */
    record Result(int sent, Map<Fate, Long> fates, List<String> lostIds, long duplicates, Set<String> inFlightAtKill,
                  Set<String> unexplained) {

        long count(Fate f) {
            return fates.getOrDefault(f, 0L);
        }

        /** @return whether every call is in exactly one row */
        boolean addsUp() {
            return fates.values().stream().mapToLong(Long::longValue).sum() == sent;
        }

        /** @return nothing lost, the rows add up, and every duplicate was in flight at the kill */
        boolean ok() {
            return count(Fate.LOST) == 0 && addsUp() && unexplained.isEmpty();
        }
    }

    /**
     * @param sent   the ids of the calls the first process sent
     * @param first  what the first process printed
     * @param second what the second process printed
     * @return the account
     */
    Result result(List<String> sent, ChildConsumer.Seen first, ChildConsumer.Seen second) {
        Map<Fate, Long> fates = new TreeMap<>();
        List<String> lost = new ArrayList<>();
        Set<String> inFlight = new TreeSet<>();
        Set<String> unexplained = new TreeSet<>();
        long duplicates = 0;
        for (String id : sent) {
            Fate f = fate(id, first, second);
            fates.merge(f, 1L, Long::sum);
            if (f == Fate.LOST && lost.size() < 20) {
                lost.add(id);
            }
            if (atKill.getOrDefault(id, 0) > 0 && f != Fate.FIRST_TRY && f != Fate.BEFORE_KILL) {
                inFlight.add(id);
            }
            int n = completions.getOrDefault(id, new AtomicInteger()).get();
            duplicates += Math.max(0, n - 1);
            if (n > 1 && !inFlight.contains(id) && !first.timedOut().contains(id)
                    && !second.timedOut().contains(id)) {
                unexplained.add(id);
            }
        }
        return new Result(sent.size(), fates, lost, duplicates, inFlight, unexplained);
    }

    private Fate fate(String id, ChildConsumer.Seen first, ChildConsumer.Seen second) {
        if (firstTry.contains(id) && !first.failedBack().contains(id)) {
            return Fate.FIRST_TRY; // a provider completed the caller's own call, and the caller got the reply
        }
        if ("DELIVERED".equals(first.outcomes().get(id))) {
            return Fate.BEFORE_KILL;
        }
        if ("DELIVERED".equals(second.outcomes().get(id))) {
            return Fate.AFTER_RESTART;
        }
        String outcome = first.outcomes().getOrDefault(id, second.outcomes().get(id));
        if ("ABANDONED".equals(outcome)) {
            return Fate.ABANDONED;
        }
        if ("REJECTED".equals(outcome)) {
            return Fate.REJECTED;
        }
        return completions.containsKey(id) ? Fate.AT_KILL : Fate.LOST;
    }

    /** @return the report's lines, ending with the verdict */
    static List<String> lines(Result r) {
        List<String> l = new ArrayList<>();
        l.add("Report (both consumer processes: the providers' ledgers and each process's outcome lines)");
        row(l, "sent", r.sent(), "calls the first process made before it was killed");
        row(l, "delivered on the first try", r.count(Fate.FIRST_TRY), "the caller got the provider's reply");
        row(l, "delivered before the kill", r.count(Fate.BEFORE_KILL), "on a retry, by the first process");
        row(l, "delivered after the restart", r.count(Fate.AFTER_RESTART),
                "resumed from the journal and delivered by the second process");
        if (r.count(Fate.AT_KILL) > 0) {
            row(l, "completed at the kill", r.count(Fate.AT_KILL), "a provider completed it; no process saw it");
        }
        row(l, "abandoned", r.count(Fate.ABANDONED), "retries used up");
        row(l, "rejected", r.count(Fate.REJECTED), "over failbacktasks pending retries");
        row(l, "lost", r.count(Fate.LOST), r.count(Fate.LOST) == 0
                ? "sent, never completed and no outcome: must be 0" : "LOST: " + String.join(", ", r.lostIds()));
        row(l, "duplicates", r.duplicates(), r.unexplained().isEmpty()
                ? "completed more than once: allowed only for the " + r.inFlightAtKill().size()
                        + " calls in flight at the kill, or an attempt that timed out"
                : "NOT in flight at the kill, nor timed out: " + String.join(", ", r.unexplained()));
        String sum = r.sent() + " sent = " + r.count(Fate.FIRST_TRY) + " first try + " + r.count(Fate.BEFORE_KILL)
                + " before the kill + " + r.count(Fate.AFTER_RESTART) + " after the restart + "
                + (r.count(Fate.AT_KILL) > 0 ? r.count(Fate.AT_KILL) + " at the kill + " : "")
                + r.count(Fate.ABANDONED) + " abandoned + " + r.count(Fate.REJECTED) + " rejected + "
                + r.count(Fate.LOST) + " lost";
        l.add(r.ok() ? "OK: " + sum + ". Nothing lost." : "NOT OK: " + sum
                + (r.addsUp() ? "" : " -- the rows do not add up") + ".");
        return l;
    }

    private static void row(List<String> l, String name, long value, String note) {
        l.add(String.format(Locale.ROOT, ROW, name, value, note));
    }
}
