package io.rpctimer.journal;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The dead owners whose lease this run took over ({@link JournalSql#takesOver}) and whose calls it has not all handed
 * out yet, per service (a takeover covers the owner's calls of every service this run claims), each with how far
 * this run has handed them out. A taken-over owner's calls are handed out
 * without a write: a hand-out reads them in claim order ({@code due_at, retry_id, method}) past the owner's mark and
 * moves the mark to the last one it read; a call this run fenced carries its {@code run_id} and is not read again.
 *
 * <p>The mark holds because no call of a taken-over owner appears or moves once its lease row is this run's: the
 * owner's own writes and hand-outs are refused ({@link JournalSql#writeGuard}), the takeover waited for those under
 * way, adopters leave the calls alone while the lease lasts, and only this run's fence moves a call, which makes it
 * this run's. A run takes an owner over once at most: calls it fenced under an earlier hold carry its run id. Once
 * a hand-out has read an owner's calls to the end, the owner is forgotten here: nothing of it is left to hand out.
 *
 * <p><b>Threading:</b> thread-safe. The hand-outs of one service take turns ({@link #lock}); a mark moves forward
 * only, after the page that handed its calls out committed.
 */
final class TakenLeases {

    private final Map<String, Map<String, ParkedPage.Key>> marks = new ConcurrentHashMap<>();
    private final Map<String, Object> locks = new ConcurrentHashMap<>();
    /** Every owner whose lease this run took over, whether or not it still holds it. */
    private final Set<String> ever = ConcurrentHashMap.newKeySet();
    /** The services this run has claimed: a reference of this process hands their calls out. */
    private final Set<String> served = ConcurrentHashMap.newKeySet();

    /** A reference of this process claimed {@code service}: it hands out the service's calls from now on. */
    void serve(String service) {
        served.add(service);
    }

    /** @return whether a reference of this process claimed {@code service} */
    boolean serves(String service) {
        return served.contains(service);
    }

    /** @return what a hand-out of {@code service} holds while it reads and moves the marks */
    Object lock(String service) {
        return locks.computeIfAbsent(service, s -> new Object());
    }

    /** {@code owner}'s lease is this run's now, none of its calls of {@code service} handed out yet. */
    void took(String service, String owner) {
        ever.add(owner);
        marks.computeIfAbsent(service, s -> new ConcurrentHashMap<>()).put(owner, ParkedPage.Key.FIRST);
    }

    /**
     * @return whether this run took {@code owner}'s lease over before: calls of it it fenced then carry its run id, as
     *     if they were on its wheel, so it adopts them row by row instead
     */
    boolean tookBefore(String owner) {
        return ever.contains(owner);
    }

    /** @return the owners of {@code service} whose calls are not all handed out, in no particular order */
    List<String> owners(String service) {
        Map<String, ParkedPage.Key> of = marks.get(service);
        return of == null ? List.of() : List.copyOf(of.keySet());
    }

    /** @return where the next hand-out of {@code owner}'s calls of {@code service} starts, or null if none is left */
    ParkedPage.Key mark(String service, String owner) {
        Map<String, ParkedPage.Key> of = marks.get(service);
        return of == null ? null : of.get(owner);
    }

    /** Moves {@code owner}'s mark to {@code last}, the last call a committed page read; the caller holds the lock. */
    void advance(String service, String owner, ParkedPage.Key last) {
        marks.get(service).put(owner, last);
    }

    /** Forgets {@code owner} for {@code service}: its calls were read to the end, or its lease is no longer ours. */
    void done(String service, String owner) {
        Map<String, ParkedPage.Key> of = marks.get(service);
        if (of != null) {
            of.remove(owner);
        }
    }
}
