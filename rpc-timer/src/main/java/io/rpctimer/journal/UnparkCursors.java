package io.rpctimer.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * What the unparks of each service learnt about the journal's entries, so that the next unpark does not read again
 * what the last one read: the entries it handed out stay in the claim index until the database cleans them up (on
 * PostgreSQL, until VACUUM), and an unpark that started each source's range from its beginning would read more of
 * them with each call a drain delivers. Hints only: every entry is still taken with its conditional UPDATE, and a claim
 * reads every range from its beginning, so a hint that is wrong delays an entry until the next unpark that reaches
 * it or the next claim, and never hands it out twice.
 *
 * <ul>
 *   <li><b>This instance's own parked entries:</b> once an unpark read them all, the next unpark skips them until
 *       this instance parks another ({@link #parked}, counted after the entry is committed).
 *   <li><b>A dead instance's (or released) entries:</b> the next unpark resumes after the last entry the previous
 *       one read, and starts again from the beginning once it reaches the end (entries another survivor gave back,
 *       or released later, may lie before it).
 *   <li><b>Which instances are dead:</b> an unpark adopts from the owners looked up less than
 *       {@value #DEAD_OWNERS_MILLIS} ms before, less those whose entries an unpark read to the end, and looks them up
 *       afresh only if these did not fill it: an unpark hands out fewer entries than asked only after a fresh
 *       look-up, as a claim does.
 * </ul>
 *
 * <p><b>Threading:</b> thread-safe; two unparks of one service at once may overwrite each other's hints, which costs
 * only a read.
 */
final class UnparkCursors {

    static final long DEAD_OWNERS_MILLIS = 1_000;

    private record Owners(List<String> owners, long untilNanos) {
    }

    private final LongSupplier nanoTime;
    private final AtomicLong parks = new AtomicLong();
    /** Service to the count of parks when an unpark read the last of its own parked entries. */
    private final Map<String, Long> ownReadAt = new ConcurrentHashMap<>();
    /** Service and owner to the last entry an unpark read among that owner's. */
    private final Map<List<String>, ParkedPage.Key> resumeAfter = new ConcurrentHashMap<>();
    private final Map<String, Owners> deadOwners = new ConcurrentHashMap<>();

    UnparkCursors(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    /** This instance committed a parked entry of its own (any service): its own entries must be read again. */
    void parked() {
        parks.incrementAndGet();
    }

    /** @return the count of parks, read before an unpark reads this instance's own entries */
    long parks() {
        return parks.get();
    }

    /** @return true if an unpark read every own parked entry of {@code service} and none was parked since */
    boolean ownAllRead(String service) {
        Long at = ownReadAt.get(service);
        return at != null && at == parks.get();
    }

    /**
     * @param parksBefore {@link #parks()} before the unpark read them: a park committed while it read counts as
     *                    unread
     */
    void ownAllRead(String service, long parksBefore, boolean allRead) {
        if (allRead) {
            ownReadAt.put(service, parksBefore);
        } else {
            ownReadAt.remove(service);
        }
    }

    /** @return where to resume among {@code owner}'s entries of {@code service}: after this key */
    ParkedPage.Key resumeAfter(String service, String owner) {
        return resumeAfter.getOrDefault(List.of(service, owner), ParkedPage.Key.FIRST);
    }

    /** @param last the last entry read, or null if the unpark read to the end of them: the owner is dropped */
    void stoppedAt(String service, String owner, ParkedPage.Key last) {
        List<String> key = List.of(service, owner);
        if (last != null) {
            resumeAfter.put(key, last);
            return;
        }
        resumeAfter.remove(key);
        deadOwners.computeIfPresent(service, (s, o) -> {
            List<String> rest = new ArrayList<>(o.owners());
            rest.remove(owner);
            return new Owners(List.copyOf(rest), o.untilNanos());
        });
    }

    /** @return the owners looked up less than {@value #DEAD_OWNERS_MILLIS} ms ago, less the exhausted; or null */
    List<String> deadOwners(String service) {
        Owners o = deadOwners.get(service);
        return o == null || nanoTime.getAsLong() - o.untilNanos() >= 0 ? null : o.owners();
    }

    void deadOwners(String service, List<String> owners) {
        deadOwners.put(service, new Owners(List.copyOf(owners),
                nanoTime.getAsLong() + TimeUnit.MILLISECONDS.toNanos(DEAD_OWNERS_MILLIS)));
    }
}
