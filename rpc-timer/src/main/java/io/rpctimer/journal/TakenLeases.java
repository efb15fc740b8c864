package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournalEntry;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * A journal's takeovers of dead instances' leases ({@link JournalSql#takesOver}, PostgreSQL): when a claim may take
 * one over ({@link #takeOver}), the locks that order a takeover after the writes under way ({@link #ownLeaseTaken},
 * {@link #lockLease}), and the hand-out of a taken-over owner's calls without a write ({@link #handOut}).
 *
 * <p>It keeps the owners whose lease this run took over and whose calls it has not all handed out yet, per service (a
 * takeover covers the owner's calls of every service this run claims), each with how far this run has handed them
 * out: a hand-out reads them in claim order ({@code due_at, retry_id, method}) past the owner's mark and moves the
 * mark to the last one it read; a call this run fenced carries its {@code run_id} and is not read again.
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

    private static final System.Logger LOG = System.getLogger(TakenLeases.class.getName());

    /** Quarantines the corrupt rows of a page, as the journal does for every hand-out. */
    interface Quarantine {
        void quarantine(Connection c, String rowOwner, List<ParkedPage.Corrupt> corrupt) throws SQLException;
    }

    private final JournalSql sql;
    private final Transactions transactions;
    private final String runId;
    private final Supplier<String> owner;
    private final LeaseKeeper lease;
    private final long leaseMillis;
    private final String storeName;
    private final Quarantine quarantine;

    private final Map<String, Map<String, ParkedPage.Key>> marks = new ConcurrentHashMap<>();
    private final Map<String, Object> locks = new ConcurrentHashMap<>();
    /** Every owner whose lease this run took over, whether or not it still holds it. */
    private final Set<String> ever = ConcurrentHashMap.newKeySet();
    /** The services this run has claimed: a reference of this process hands their calls out. */
    private final Set<String> served = ConcurrentHashMap.newKeySet();

    /**
     * @param owner this instance's owner id now
     * @param lease this instance's lease ({@link JournalSql#takesOver} needs one)
     */
    TakenLeases(JournalSql sql, Transactions transactions, String runId, Supplier<String> owner, LeaseKeeper lease,
                long leaseMillis, String storeName, Quarantine quarantine) {
        this.sql = sql;
        this.transactions = transactions;
        this.runId = runId;
        this.owner = owner;
        this.lease = lease;
        this.leaseMillis = leaseMillis;
        this.storeName = storeName;
        this.quarantine = quarantine;
    }

    /** A reference of this process claimed {@code service}: it hands out the service's calls from now on. */
    void serve(String service) {
        served.add(service);
    }

    /** @return what a hand-out of {@code service} holds while it reads and moves the marks */
    Object lock(String service) {
        return locks.computeIfAbsent(service, s -> new Object());
    }

    /** {@code owner}'s lease is this run's now, none of its calls of {@code service} handed out yet. */
    private void took(String service, String owner) {
        ever.add(owner);
        marks.computeIfAbsent(service, s -> new ConcurrentHashMap<>()).put(owner, ParkedPage.Key.FIRST);
    }

    /** @return the owners of {@code service} whose calls are not all handed out, in no particular order */
    List<String> owners(String service) {
        Map<String, ParkedPage.Key> of = marks.get(service);
        return of == null ? List.of() : List.copyOf(of.keySet());
    }

    /** @return where the next hand-out of {@code owner}'s calls of {@code service} starts, or null if none is left */
    private ParkedPage.Key mark(String service, String owner) {
        Map<String, ParkedPage.Key> of = marks.get(service);
        return of == null ? null : of.get(owner);
    }

    /** Moves {@code owner}'s mark to {@code last}, the last call a committed page read; the caller holds the lock. */
    private void advance(String service, String owner, ParkedPage.Key last) {
        marks.get(service).put(owner, last);
    }

    /** Forgets {@code owner} for {@code service}: its calls were read to the end, or its lease is no longer ours. */
    private void done(String service, String owner) {
        Map<String, ParkedPage.Key> of = marks.get(service);
        if (of != null) {
            of.remove(owner);
        }
    }

    /** Locks {@code dead}'s lease row against a takeover ({@link JournalSql#lockLease}) until this transaction ends. */
    void lockLease(Connection c, String dead) throws SQLException {
        try (PreparedStatement st = transactions.prepare(c, sql.lockLease)) {
            st.setString(1, dead);
            st.executeQuery().close();
        }
    }

    /** @return whether {@code dead}'s lease row, expired and held by another run, is locked for a takeover now */
    private boolean locksExpiredLease(Connection c, String dead) throws SQLException {
        try (PreparedStatement st = transactions.prepare(c, sql.takeOverLock)) {
            st.setString(1, dead);
            st.setString(2, runId);
            try (ResultSet rs = st.executeQuery()) {
                return rs.next();
            }
        }
    }

    /**
     * The first statement of each transaction of a hand-out ({@link JournalSql#takesOver}): locks this instance's
     * lease rows until it ends, as a write does ({@link JournalSql#writeGuard}).
     *
     * @return whether this instance's own row is held by another run, which took it over while this one was paused:
     *     then this run hands out nothing until its heartbeat registers a new owner id
     */
    boolean ownLeaseTaken(Connection c) throws SQLException {
        try (PreparedStatement st = transactions.prepare(c, sql.writeGuard)) {
            return JournalSql.leaseTakenOver(st, owner.get(), runId);
        }
    }

    /**
     * Takes the lease of {@code dead} over ({@link JournalSql#takesOver}), so that its calls become this run's
     * without a write each: only when this instance's lease is held, the claim has room for all of {@code dead}'s
     * calls of the service, each other service {@code dead} has calls of was claimed by this run (their calls then
     * wait for its hand-outs of that service), this run never held {@code dead}'s lease before, and only if the lease
     * has expired and no adopter holds it. Commits.
     *
     * @param room how many calls the claim may still hand out
     * @return true if the lease is this run's now; false: adopt {@code dead}'s calls row by row
     */
    boolean takeOver(Connection c, String dead, String application, String serviceKey, String service, int room)
            throws SQLException {
        if (dead.equals(JournalSql.RELEASED) || !lease.held() || ever.contains(dead) || ownLeaseTaken(c)) {
            return false;
        }
        long calls;
        try (PreparedStatement st = transactions.prepare(c, sql.countOwned)) {
            st.setString(1, application);
            st.setString(2, serviceKey);
            st.setString(3, dead);
            st.setLong(4, room + 1L);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                calls = rs.getLong(1);
            }
        }
        if (calls == 0 || calls > room) {
            return false;
        }
        List<String> others = otherServicesOf(c, dead, service);
        if (others == null || !locksExpiredLease(c, dead)) {
            return false;
        }
        try (PreparedStatement st = transactions.prepare(c, sql.takeOver)) {
            st.setString(1, runId);
            st.setLong(2, leaseMillis);
            st.setString(3, dead);
            st.executeUpdate();
        }
        c.commit();
        took(service, dead);
        others.forEach(other -> took(other, dead));
        LOG.log(System.Logger.Level.INFO, "{0}: took over the expired lease of {1}, with its {2} calls of {3} and its"
                + " calls of {4} other services", storeName, dead, calls, serviceKey, others.size());
        return true;
    }

    /**
     * @return the services other than {@code service} in which {@code owner} has calls (a probe per service of the
     *     table), or null if one of them is a service this run has not claimed: no reference of this process would
     *     hand its calls out
     */
    private List<String> otherServicesOf(Connection c, String owner, String service) throws SQLException {
        List<String> others = new ArrayList<>();
        String app = "";
        String svc = "";
        try (PreparedStatement next = transactions.prepare(c, sql.nextService);
             PreparedStatement any = transactions.prepare(c, sql.ownsAny)) {
            while (true) {
                next.setString(1, app);
                next.setString(2, svc);
                try (ResultSet rs = next.executeQuery()) {
                    if (!rs.next()) {
                        return others;
                    }
                    app = rs.getString(1);
                    svc = rs.getString(2);
                }
                String other = HandOutMarks.service(app, svc);
                if (other.equals(service)) {
                    continue;
                }
                any.setString(1, app);
                any.setString(2, svc);
                any.setString(3, owner);
                try (ResultSet rs = any.executeQuery()) {
                    if (rs.next()) {
                        if (!served.contains(other)) {
                            return null;
                        }
                        others.add(other);
                    }
                }
            }
        }
    }

    /**
     * Hands out the calls of {@code from}, whose lease this run took over, past its mark in claim order, without a
     * write: they are this run's by its lease, and the mark keeps them from being handed out twice. A page per
     * transaction, as the journal's other hand-outs; the corrupt ones are quarantined.
     */
    void handOut(Connection c, String from, String application, String serviceKey, String service, int limit,
                 List<RetryJournalEntry> out) throws SQLException {
        ParkedPage.Key after = mark(service, from);
        if (after == null) {
            return;
        }
        try (PreparedStatement st = transactions.prepare(c, sql.leaseHolder)) {
            st.setString(1, from);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next() || !runId.equals(rs.getString(1))) { // taken back by a restart with its owner id
                    done(service, from);
                    return;
                }
            }
        }
        while (out.size() < limit && !ownLeaseTaken(c)) {
            int want = Math.min(limit - out.size(), JdbcRetryJournal.PAGE);
            ParkedPage page;
            try (PreparedStatement st = transactions.prepare(c, sql.selectParked)) {
                page = ParkedPage.read(st, from, runId, runId, null, application, serviceKey, after, want);
            }
            quarantine.quarantine(c, from, page.corrupt());
            c.commit();
            out.addAll(page.entries());
            if (page.rows() < want) {
                done(service, from);
                return;
            }
            after = page.last();
            advance(service, from, after);
        }
    }
}
