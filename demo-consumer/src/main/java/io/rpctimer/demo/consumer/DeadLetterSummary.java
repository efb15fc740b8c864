package io.rpctimer.demo.consumer;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * What became of the calls of the {@code dead-letters} scenario: how many ended {@code ABANDONED} and became dead
 * letters, how many the replay put back, how many of those the providers then completed, and how many were lost. Read
 * from the providers' ledgers (what ran, and when it arrived) and the consumer's outcomes, never from the replay's own
 * account of itself.
 *
 * <p>A call is <em>lost</em> when its caller sent it and it was neither delivered (completed by a provider, at any
 * time), nor is still a dead letter, nor did its caller get an exception (rejected, or a failure not retried). The
 * summary fails the run ({@link #ok()}) when a call was lost or a provider ran a call twice.
 *
 * <p><b>Threading:</b> immutable, thread-safe.
 *
 * @param abandoned      calls that ended {@code ABANDONED} before the replay: the dead letters it found
 * @param replayed       dead letters the replay made pending calls again
 * @param delivered      of those, calls that ended {@code DELIVERED} after the replay and that a provider's ledger
 *                       shows completed: after the replay, or before it when the call had run and its reply was
 *                       lost ({@code retrydedup} then answers the replay without running the call again)
 * @param stillDead      calls still dead letters at the end
 * @param lostIds        calls lost (see above), sorted
 * @param ranTwice       calls the providers completed more than once, together, sorted
 * @param askedPerSecond the replay's pace, in replays per second
 * @param seenPerSecond  the pace the providers saw: replayed calls that arrived, less one, over the time from the first
 *                       arrival to the last, per second; 0 when fewer than two arrived
 * @param arrivals       replayed calls that arrived at a provider after the replay began (first arrival of each)
 * @param spanMillis     from the first of those arrivals to the last, in milliseconds
 * @param failure        why the replay could not be played to the end (the store failed), or null
 */
public record DeadLetterSummary(long abandoned, long replayed, long delivered, long stillDead, List<String> lostIds,
                                List<String> ranTwice, double askedPerSecond, double seenPerSecond, long arrivals,
                                long spanMillis, String failure) {

    public DeadLetterSummary {
        lostIds = List.copyOf(lostIds);
        ranTwice = List.copyOf(ranTwice);
    }

    /**
     * Joins the sources into the summary.
     *
     * @param sent           every call the caller sent
     * @param toldCaller     calls whose caller got an exception
     * @param completions    completions by call id, at both providers together
     * @param abandoned      calls that ended {@code ABANDONED} before the replay
     * @param replayed       calls the replay put back
     * @param deliveredAfter calls that ended {@code DELIVERED} after the replay began
     * @param stillDead      calls still dead letters at the end
     * @param firstArrivals  for each replayed call that arrived at a provider after the replay began, when it first
     *                       arrived ({@link System#nanoTime()})
     * @param askedPerSecond the replay's pace
     * @return the summary
     */
    static DeadLetterSummary of(Collection<String> sent, Set<String> toldCaller, Map<String, Integer> completions,
                                Set<String> abandoned, Set<String> replayed, Set<String> deliveredAfter,
                                Set<String> stillDead, Collection<Long> firstArrivals, double askedPerSecond) {
        TreeSet<String> lost = new TreeSet<>();
        for (String id : sent) {
            if (completions.getOrDefault(id, 0) == 0 && !stillDead.contains(id) && !toldCaller.contains(id)) {
                lost.add(id);
            }
        }
        TreeSet<String> twice = new TreeSet<>();
        completions.forEach((id, n) -> {
            if (n > 1) {
                twice.add(id);
            }
        });
        long delivered = replayed.stream()
                .filter(id -> deliveredAfter.contains(id) && completions.getOrDefault(id, 0) > 0).count();
        long first = firstArrivals.stream().mapToLong(Long::longValue).min().orElse(0);
        long last = firstArrivals.stream().mapToLong(Long::longValue).max().orElse(0);
        long spanNanos = last - first;
        double seen = firstArrivals.size() < 2 || spanNanos <= 0 ? 0
                : (firstArrivals.size() - 1) * 1e9 / spanNanos;
        return new DeadLetterSummary(abandoned.size(), replayed.size(), delivered, stillDead.size(),
                new ArrayList<>(lost), new ArrayList<>(twice), askedPerSecond, seen, firstArrivals.size(),
                TimeUnit.NANOSECONDS.toMillis(spanNanos), null);
    }

    /** @return the summary of a replay that could not be played to the end; it fails the run */
    static DeadLetterSummary failed(String why) {
        return new DeadLetterSummary(0, 0, 0, 0, List.of(), List.of(), 0, 0, 0, 0, why);
    }

    /** @return calls lost: sent, neither delivered nor still a dead letter, and no exception to their caller */
    public long lost() {
        return lostIds.size();
    }

    /** @return whether the replay was played to the end, no call was lost and none ran twice */
    public boolean ok() {
        return failure == null && lostIds.isEmpty() && ranTwice.isEmpty();
    }

    /** @return {@code 30 abandoned, 30 replayed, 30 delivered, 0 lost} */
    public String line() {
        return abandoned + " abandoned, " + replayed + " replayed, " + delivered + " delivered, " + lost() + " lost";
    }

    /** @return why the summary fails the run, or an empty string when it does not */
    public String problem() {
        List<String> p = new ArrayList<>();
        if (failure != null) {
            p.add("the replay failed: " + failure);
        }
        if (!lostIds.isEmpty()) {
            p.add(lost() + " lost (" + String.join(", ", head(lostIds)) + ")");
        }
        if (!ranTwice.isEmpty()) {
            p.add(ranTwice.size() + " ran twice (" + String.join(", ", head(ranTwice)) + ")");
        }
        return String.join(", ", p);
    }

    private static List<String> head(List<String> ids) {
        return ids.size() <= 20 ? ids : ids.subList(0, 20);
    }

    /** @return the report's section: a row per figure, then the line */
    public List<String> lines() {
        List<String> l = new ArrayList<>();
        l.add("Dead letters (the providers' ledgers and the consumer's outcomes)");
        if (failure != null) {
            l.add("  the replay failed: " + failure);
            return l;
        }
        row(l, "abandoned", abandoned, "retries used up while no provider was up: kept as dead letters in the "
                + "journal");
        row(l, "replayed", replayed, "put back by failback replay all rate=" + Human.number(askedPerSecond)
                + ", with their original retry.id");
        row(l, "delivered", delivered, "replayed calls DELIVERED, each completed by a provider");
        row(l, "still dead letters", stillDead, "kept, not lost: replay them again");
        row(l, "lost", lost(), lostIds.isEmpty() ? "sent, neither delivered nor a dead letter, caller not told: must "
                + "be 0" : "LOST: " + String.join(", ", head(lostIds)));
        row(l, "ran twice", ranTwice.size(), ranTwice.isEmpty() ? "calls p1 and p2 completed more than once: must "
                + "be 0" : "TWICE: " + String.join(", ", head(ranTwice)));
        long unseen = delivered - arrivals;
        row(l, "replay pace", Human.rate(seenPerSecond), "at the providers: " + arrivals + " replayed calls arrived "
                + "over " + Human.duration(spanMillis) + "; asked: " + Human.rate(askedPerSecond) + (unseen > 0 ? "; "
                + unseen + " more had run before, their reply late or lost: retrydedup answered them without running "
                + "them again" : ""));
        l.add("  " + line());
        return l;
    }

    private static void row(List<String> l, String name, Object value, String note) {
        l.add(String.format(Locale.ROOT, "  %-30s %10s   %s", name, value, note));
    }
}
