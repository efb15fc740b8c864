package io.rpctimer.journal;

import io.rpctimer.retry.DeadLetter;
import io.rpctimer.retry.DeadLetterFilter;
import io.rpctimer.retry.DeadLetterPage;
import io.rpctimer.retry.DeadLetterStore;
import io.rpctimer.retry.RetryJournalException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The dead letters of a {@link JdbcRetryJournal}, in table {@code <prefix>dead_letter}: written by the journal's
 * group-commit writer ({@link JdbcRetryJournal#bury}), read and changed here on connections of their own. Every
 * instance of an application on one database sees the same dead letters.
 *
 * <h3>Revive</h3>
 * A page of dead letters is read oldest first; each one the reviver takes is copied into the pending calls (owned by
 * this instance, parked, next retry 1, due when the reviver says) and deleted from the dead letters, the whole page in
 * one transaction, which commits only if every copy and every delete touched the same rows. Otherwise (another
 * revive or a purge took one meanwhile, or a call with its key is pending) the page is rolled back and done again one
 * dead letter per transaction, and a dead letter whose copy and delete do not both succeed stays where it is. So each
 * dead letter is revived once, by one instance, and none is lost between the two tables.
 *
 * <h3>Trim</h3>
 * One DELETE of the dead letters past the retention, one COUNT, and only when the count is past the maximum, one
 * SELECT of the newest dead letter to drop and one DELETE of it and every older one.
 *
 * <p><b>Threading:</b> thread-safe; each operation runs on the calling thread on its own connection, each statement
 * bounded by the journal's claim timeout.
 */
final class JdbcDeadLetters implements DeadLetterStore {

    /** Dead letters a revive reads and moves per transaction. */
    static final int PAGE = 500;

    private final Transactions tx;
    private final JournalSql sql;
    private final DeadLetterSql dead;
    /** This instance's owner id now, the owner of the calls a revive writes. */
    private final Supplier<String> owner;
    /** This journal's run: with {@link JournalSql#takesOver}, a revive writes only while it holds the owner's lease. */
    private final String runId;
    private final String description;
    /** Told after a revive moved calls back, parked and this instance's. */
    private final Runnable revived;

    /**
     * @param name    the store's name for operators: its JDBC URL (secrets hidden) or DataSource
     * @param revived told after a revive committed calls back into the journal (parked, this instance's)
     */
    JdbcDeadLetters(Transactions tx, JournalSql sql, Supplier<String> owner, String runId, String name,
                    Runnable revived) {
        this.tx = tx;
        this.revived = revived;
        this.sql = sql;
        this.dead = new DeadLetterSql(sql);
        this.owner = owner;
        this.runId = runId;
        this.description = "retry journal " + name + " (" + sql.dialect + ", table " + sql.deadTable + ")";
    }

    @Override
    public boolean durable() {
        return true;
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public DeadLetterPage list(String application, DeadLetterFilter filter, int page, int pageSize)
            throws RetryJournalException {
        DeadLetterSql.Where w = dead.where(filter);
        return tx.run("listing of dead letters (" + filter + ")", c -> {
            long total = countByService(c, application, w).values().stream().mapToLong(Long::longValue).sum();
            List<DeadLetter> letters = new ArrayList<>();
            try (PreparedStatement st = tx.prepare(c, dead.list(w))) {
                int i = w.bind(st, application);
                st.setInt(i, pageSize);
                st.setLong(i + 1, (long) (page - 1) * pageSize);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        letters.add(DeadLetterSql.listed(rs));
                    }
                }
            }
            c.commit();
            return new DeadLetterPage(letters, page, pageSize, total);
        });
    }

    @Override
    public Map<String, Long> count(String application, DeadLetterFilter filter) throws RetryJournalException {
        DeadLetterSql.Where w = dead.where(filter);
        return tx.run("count of dead letters (" + filter + ")", c -> {
            Map<String, Long> counts = countByService(c, application, w);
            c.commit();
            return counts;
        });
    }

    private Map<String, Long> countByService(Connection c, String application, DeadLetterSql.Where w)
            throws SQLException {
        Map<String, Long> counts = new HashMap<>();
        try (PreparedStatement st = tx.prepare(c, dead.countByService(w))) {
            w.bind(st, application);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    counts.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        return counts;
    }

    @Override
    public long purge(String application, DeadLetterFilter filter) throws RetryJournalException {
        DeadLetterSql.Where w = dead.where(filter);
        return tx.run("purge of dead letters (" + filter + ")", c -> {
            int n;
            try (PreparedStatement st = tx.prepare(c, dead.purge(w))) {
                w.bind(st, application);
                n = st.executeUpdate();
            }
            c.commit();
            return (long) n;
        });
    }

    @Override
    public Trimmed trim(String application, long retentionMillis, long max) throws RetryJournalException {
        return tx.run("trim of dead letters", c -> {
            int expired;
            try (PreparedStatement st = tx.prepare(c, dead.expire)) {
                st.setString(1, application);
                st.setLong(2, retentionMillis);
                expired = st.executeUpdate();
            }
            c.commit();
            long count = countAll(c, application);
            long dropped = count > max ? dropOldest(c, application, max) : 0;
            c.commit();
            return new Trimmed(expired, dropped, Math.max(0, count - dropped));
        });
    }

    private long countAll(Connection c, String application) throws SQLException {
        try (PreparedStatement st = tx.prepare(c, dead.countAll)) {
            st.setString(1, application);
            try (ResultSet rs = st.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }

    /** Deletes every dead letter older than the {@code max} newest. @return how many */
    private long dropOldest(Connection c, String application, long max) throws SQLException {
        DeadLetterSql.After newestToDrop;
        try (PreparedStatement st = tx.prepare(c, dead.newestToDrop)) {
            st.setString(1, application);
            st.setLong(2, max);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    return 0; // others dropped them meanwhile
                }
                newestToDrop = new DeadLetterSql.After(rs.getLong(1), rs.getString(2), rs.getString(3),
                        rs.getString(4));
            }
        }
        try (PreparedStatement st = tx.prepare(c, dead.dropUpTo)) {
            st.setString(1, application);
            newestToDrop.bind(st, 2);
            return st.executeUpdate();
        }
    }

    @Override
    public Revived revive(String application, DeadLetterFilter filter, Set<String> serviceKeys, Reviver reviver)
            throws RetryJournalException {
        Revival r = new Revival(application, dead.where(filter), List.copyOf(serviceKeys), reviver);
        DeadLetterSql.After after = DeadLetterSql.After.FIRST;
        try {
            while (after != null) {
                DeadLetterSql.After from = after;
                after = tx.run("replay of dead letters (" + filter + ")", c -> r.page(c, from));
            }
        } catch (RetryJournalException e) {
            if (r.revived.isEmpty()) {
                throw e;
            }
            return r.result(e);
        } finally {
            if (!r.revived.isEmpty()) {
                revived.run();
            }
        }
        return r.result(null);
    }

    /** One revive, page by page. Not thread-safe: the revive's own thread. */
    private final class Revival {
        final String application;
        final DeadLetterSql.Where where;
        final List<String> services;
        final Reviver reviver;
        final Map<String, Long> revived = new HashMap<>();
        long taken;
        long conflicts;

        Revival(String application, DeadLetterSql.Where where, List<String> services, Reviver reviver) {
            this.application = application;
            this.where = where;
            this.services = services;
            this.reviver = reviver;
        }

        Revived result(RetryJournalException failure) {
            return new Revived(revived, taken, conflicts, failure);
        }

        /** Reads and moves one page. @return where the next page starts, or null if this was the last */
        DeadLetterSql.After page(Connection c, DeadLetterSql.After after) throws SQLException {
            List<DeadLetterSql.Row> rows = read(c, after);
            List<Move> moves = new ArrayList<>();
            for (DeadLetterSql.Row row : rows) {
                long due = reviver.take(row.letter(), row.entry());
                if (due != NOT_TAKEN) {
                    moves.add(new Move(row.letter(), due));
                }
            }
            c.commit(); // the read's transaction: the moves get transactions of their own
            if (!moves.isEmpty() && !moveAll(c, moves)) {
                for (Move m : moves) {
                    moveOne(c, m);
                }
            }
            if (rows.size() < PAGE) {
                return null;
            }
            DeadLetter last = rows.get(rows.size() - 1).letter();
            return new DeadLetterSql.After(last.lastFailureEpochMillis(), last.serviceKey(), last.method(),
                    last.retryId());
        }

        private List<DeadLetterSql.Row> read(Connection c, DeadLetterSql.After after) throws SQLException {
            List<DeadLetterSql.Row> rows = new ArrayList<>(PAGE);
            try (PreparedStatement st = tx.prepare(c, dead.revivePage(where, services.size()))) {
                int i = where.bind(st, application);
                for (String s : services) {
                    st.setString(i++, s);
                }
                i = after.bind(st, i);
                st.setInt(i, PAGE);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        rows.add(DeadLetterSql.whole(rs));
                    }
                }
            }
            return rows;
        }

        /** Moves the whole page in one transaction. @return false if it was rolled back (do it one by one) */
        private boolean moveAll(Connection c, List<Move> moves) throws SQLException {
            int[] copied;
            int[] deleted;
            try {
                guard(c);
                copied = batch(c, dead.reviveInsert, moves, true);
                deleted = batch(c, dead.reviveDelete, moves, false);
            } catch (SQLException e) {
                c.rollback();
                if (isRaceOrConflict(e)) {
                    return false;
                }
                throw e;
            }
            for (int i = 0; i < moves.size(); i++) {
                if (copied[i] != 1 || deleted[i] != 1) {
                    c.rollback();
                    return false;
                }
            }
            c.commit();
            moves.forEach(m -> revived.merge(m.letter().serviceKey(), 1L, Long::sum));
            return true;
        }

        private void moveOne(Connection c, Move m) throws SQLException {
            int copied;
            int deleted;
            try {
                guard(c);
                copied = update(c, dead.reviveInsert, m, true);
                deleted = update(c, dead.reviveDelete, m, false);
            } catch (SQLException e) {
                c.rollback();
                if (!isRaceOrConflict(e)) {
                    throw e;
                }
                if (sql.dialect.isDuplicateKey(e) && stillDead(c, m)) {
                    conflicts++; // a call with its key is pending: the dead letter stays
                } else {
                    taken++; // another revive moved it first, or holds it now
                }
                return;
            }
            if (copied == 1 && deleted == 1) {
                c.commit();
                revived.merge(m.letter().serviceKey(), 1L, Long::sum);
            } else {
                c.rollback();
                taken++; // another revive or a purge took it first
            }
        }

        private boolean stillDead(Connection c, Move m) throws SQLException {
            try (PreparedStatement st = tx.prepare(c, dead.exists)) {
                EntryRows.bindKey(st, 1, m.letter().key());
                try (ResultSet rs = st.executeQuery()) {
                    boolean found = rs.next();
                    c.commit();
                    return found;
                }
            }
        }

        private int[] batch(Connection c, String text, List<Move> moves, boolean copy) throws SQLException {
            try (PreparedStatement st = tx.prepare(c, text)) {
                for (Move m : moves) {
                    bind(st, m, copy);
                    st.addBatch();
                }
                return st.executeBatch();
            }
        }

        private int update(Connection c, String text, Move m, boolean copy) throws SQLException {
            try (PreparedStatement st = tx.prepare(c, text)) {
                bind(st, m, copy);
                return st.executeUpdate();
            }
        }

        private void bind(PreparedStatement st, Move m, boolean copy) throws SQLException {
            int i = 1;
            if (copy) {
                st.setLong(1, m.dueEpochMillis());
                st.setString(2, owner.get());
                i = 3;
            }
            EntryRows.bindKey(st, i, m.letter().key());
        }
    }

    /**
     * With {@link JournalSql#takesOver}: locks this instance's lease row until the transaction ends, as a write of the
     * journal does, and fails if another run took it over (the calls revived would be that run's, unseen by it).
     */
    private void guard(Connection c) throws SQLException {
        if (!sql.takesOver) {
            return;
        }
        String me = owner.get();
        try (PreparedStatement st = tx.prepare(c, sql.writeGuard)) {
            if (JournalSql.leaseTakenOver(st, me, runId)) {
                throw new SQLException("the lease of " + me + " was taken over by another instance; this instance"
                        + " goes on under a new owner id at its next lease renewal");
            }
        }
    }

    /** A dead letter to move back, and when its first retry is due. */
    private record Move(DeadLetter letter, long dueEpochMillis) {
    }

    /**
     * @return true for a duplicate key, a deadlock or serialization failure, or a lock wait that timed out (H2's
     *     HYT00): another revive holds the same rows, or a pending call has the key; the page is done again one dead
     *     letter at a time, and such a dead letter stays
     */
    private boolean isRaceOrConflict(SQLException e) {
        for (SQLException s = e; s != null; s = s.getNextException()) {
            String state = s.getSQLState();
            if (sql.dialect.isDuplicateKey(s) || state != null
                    && (state.startsWith("23") || state.startsWith("40") || state.equals("HYT00"))) {
                return true;
            }
        }
        return false;
    }
}
