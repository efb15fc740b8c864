package io.rpctimer.journal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Keeps PostgreSQL's statistics of the call table current enough for the journal's plans, before a claim or an
 * unpark hands calls out.
 *
 * <p>A statement that names one call (adopt, unpark, fence, remove) can be served by the primary key or by the claim
 * index, which starts with the same application and service, then the owner. With statistics of the table, the
 * planner knows that one owner's entries are many and takes the primary key. Without them — a table that a burst of
 * failures filled faster than autovacuum's next analyze (it looks once a minute, and only then starts) — it may take
 * the claim index and read every entry of the owner for each call (at 200,000 entries, about 30 ms a call: a claim
 * of them runs into its statement timeout). So, as PostgreSQL advises after a bulk load, the journal runs
 * {@code ANALYZE} on the table when more rows changed since its last analyze than it had then, plus
 * {@value #MIN_CHANGES}, or when it was never analyzed (PostgreSQL 14 and later tell: {@code reltuples} is -1): a
 * table filled before its first analyze whose change counts were then lost (a statistics reset, crash recovery, a
 * promoted standby). It looks at most once every {@value #CHECK_SECONDS} s; a database where the journal may not
 * analyze its table (not the table's owner) is told once in the log, and left to autovacuum.
 *
 * <p>H2 and MySQL take the primary key for such statements; this does nothing for them.
 *
 * <p><b>Threading:</b> thread-safe; {@link #refresh} runs on the caller's thread, on the connection it is given.
 */
final class TableStatistics {

    private static final System.Logger LOG = System.getLogger(TableStatistics.class.getName());
    static final int CHECK_SECONDS = 5;
    static final long MIN_CHANGES = 10_000;

    private final String table;
    private final String storeName;
    private final Transactions transactions;
    private final LongSupplier nanoTime;
    private final boolean enabled;
    private final Object lock = new Object();
    private long nextCheckNanos;
    private boolean refused;

    /** @param transactions whose claim timeout bounds each statement: a locked table fails the refresh, not waits */
    TableStatistics(JournalSql sql, String storeName, Transactions transactions, LongSupplier nanoTime) {
        this.table = sql.callTable;
        this.storeName = storeName;
        this.transactions = transactions;
        this.nanoTime = nanoTime;
        this.enabled = sql.dialect == JournalDialect.POSTGRESQL;
        this.nextCheckNanos = nanoTime.getAsLong();
    }

    /**
     * Analyzes the table on {@code c} (autocommit off: it commits) if it is due and the statistics are stale; never
     * throws: a failure leaves the statistics to autovacuum.
     *
     * @return true if it analyzed the table
     */
    boolean refresh(Connection c) {
        synchronized (lock) {
            if (!enabled || refused || nanoTime.getAsLong() - nextCheckNanos < 0) {
                return false;
            }
            nextCheckNanos = nanoTime.getAsLong() + TimeUnit.SECONDS.toNanos(CHECK_SECONDS);
        }
        try {
            boolean stale;
            try (PreparedStatement st = transactions.prepare(c, "SELECT k.reltuples < 0 OR s.n_mod_since_analyze > ?"
                    + " + GREATEST(k.reltuples, 0) FROM pg_stat_user_tables s JOIN pg_class k ON k.oid = s.relid"
                    + " WHERE s.relid = to_regclass(?)")) {
                st.setLong(1, MIN_CHANGES);
                st.setString(2, table);
                try (ResultSet rs = st.executeQuery()) {
                    stale = rs.next() && rs.getBoolean(1);
                }
            }
            if (stale) {
                try (PreparedStatement st = transactions.prepare(c, "ANALYZE " + table)) {
                    st.execute();
                }
            }
            c.commit();
            return stale;
        } catch (SQLException e) {
            rollbackQuietly(c);
            if ("42501".equals(e.getSQLState())) { // insufficient privilege: not the table's owner
                synchronized (lock) {
                    refused = true;
                }
                LOG.log(System.Logger.Level.WARNING, "{0}: may not ANALYZE {1} ({2}); its statistics are left to"
                        + " autovacuum, and a claim right after a burst of failures may be slow until it runs",
                        storeName, table, e.getMessage());
            } else {
                LOG.log(System.Logger.Level.DEBUG, "{0}: statistics of {1} not refreshed: {2}", storeName, table, e);
            }
            return false;
        }
    }

    private static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // the connection goes back to the pool, which resets it
        }
    }
}
