package io.rpctimer.retry;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * One run of {@link DeadLetters#replay}: finds the live reference of each matching service, has the store revive the
 * dead letters each of them can decode, at the pace asked for, and tells each reference that its calls are back.
 *
 * <p><b>Threading:</b> one replay, on the operator's thread; not shared.
 */
final class DeadLetterReplay {

    /** How long the pace outlasts the last replayed call's due time: time for late ones to drain at the pace. */
    static final long PACE_MARGIN_MILLIS = 30_000;

    private final DeadLetters deadLetters;
    private final DeadLetterFilter filter;
    private final double perSecond;
    private final String application;
    private final LongAdder unreadable = new LongAdder();
    private final LongAdder noRoom = new LongAdder();
    /** The first retry of the n-th replayed call is due at start + n × spacing. */
    private final long startMillis;
    private final double spacingMillis;
    private long n;
    private long lastDueMillis;

    DeadLetterReplay(DeadLetters deadLetters, DeadLetterFilter filter, double perSecond) {
        this.deadLetters = deadLetters;
        this.filter = filter;
        this.perSecond = perSecond;
        this.application = deadLetters.application();
        this.startMillis = deadLetters.nowMillis();
        this.spacingMillis = perSecond > 0 ? 1000.0 / perSecond : 0;
    }

    ReplayResult run() throws RetryJournalException {
        DeadLetterStore store = deadLetters.store();
        Map<String, Long> matched = store.count(application, filter);
        long total = matched.values().stream().mapToLong(Long::longValue).sum();
        if (total == 0 && filter.retryId() != null) {
            throw new NoSuchDeadLetterException(application, filter.retryId());
        }
        Map<String, RetryReference<?>> live = new HashMap<>();
        Map<String, Long> noReference = new HashMap<>();
        matched.forEach((service, count) -> {
            RetryReference<?> r = liveReference(service);
            if (r != null) {
                live.put(service, r);
            } else {
                noReference.put(service, count);
            }
        });
        if (live.isEmpty() && filter.retryId() != null) {
            throw new IllegalStateException(noReference(filter.retryId(), noReference.keySet().iterator().next()));
        }
        if (perSecond > 0) { // calls that reach the wheel late (a slow move or unpark) still go at the pace
            long lastDue = startMillis + (long) Math.ceil(total * spacingMillis);
            live.values().forEach(r -> r.pace(perSecond, lastDue + PACE_MARGIN_MILLIS));
        }
        DeadLetterStore.Revived revived = live.isEmpty() ? new DeadLetterStore.Revived(Map.of(), 0, 0, null)
                : store.revive(application, filter, live.keySet(), (letter, payload) -> take(live, letter, payload));
        return settle(revived, live, matched, total, noReference);
    }

    private ReplayResult settle(DeadLetterStore.Revived revived, Map<String, RetryReference<?>> live,
                                Map<String, Long> matched, long total, Map<String, Long> noReference)
            throws RetryJournalException {
        if (deadLetters.store().durable()) {
            revived.revived().keySet().forEach(service -> live.get(service).replayedIntoJournal());
        }
        deadLetters.replayed(revived.total());
        if (revived.failure() != null) {
            throw new RetryJournalException(revived.failure().getMessage() + "; " + revived.total() + " of "
                    + total + " matching dead letters were replayed before (pending calls now), the rest stay dead"
                    + " letters", revived.failure());
        }
        return new ReplayResult(total, revived.total(), revived.taken(), revived.conflicts(), unreadable.sum(),
                noRoom.sum(), noReference, perSecond, revived.total() == 0 ? 0 : lastDueMillis);
    }

    /** Whether a dead letter goes back, and when its first retry is due. */
    private long take(Map<String, RetryReference<?>> live, DeadLetter letter, Object payload) {
        RetryReference<?> reference = live.get(letter.serviceKey());
        if (deadLetters.store().durable()) { // a journal's: it moves if this reference can decode it
            if (!reference.readable((RetryJournalEntry) payload)) {
                unreadable.increment();
                return DeadLetterStore.NOT_TAKEN;
            }
            return next();
        }
        long due = due();
        if (!reference.readmit(letter, payload, due)) { // in memory: on the wheel now, if there is room
            noRoom.increment();
            return DeadLetterStore.NOT_TAKEN;
        }
        return next();
    }

    private long due() {
        return startMillis + (long) Math.floor(n * spacingMillis);
    }

    private long next() {
        lastDueMillis = due();
        n++;
        return lastDueMillis;
    }

    private RetryReference<?> liveReference(String serviceKey) {
        for (RetryReference<?> r : deadLetters.lifecycle().references()) {
            if (r.serviceKey().equals(serviceKey) && r.live()) {
                return r;
            }
        }
        return null;
    }

    private String noReference(String retryId, String serviceKey) {
        return "replay of retry.id=" + retryId + ": no live reference of " + serviceKey + " in application "
                + application + " on this instance (a replay decodes the call with its reference's serialization);"
                + " replay it on an instance that has one, or create the reference here first";
    }
}
