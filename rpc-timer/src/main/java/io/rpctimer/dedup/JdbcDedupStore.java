package io.rpctimer.dedup;

import io.rpctimer.journal.ConnectionErrors;
import io.rpctimer.journal.JdbcUrls;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The shared {@link DedupStore}, for a fleet of providers: one table in a database every provider reaches, keyed by
 * the call's key. The database's own primary key decides who runs a call, not a lock of ours: a claim is an
 * {@code INSERT} of a started row ({@code ON CONFLICT DO NOTHING} on PostgreSQL; elsewhere a unique violation,
 * SQLState {@code 23xxx}, means the row exists), and a row whose window has passed is taken over by a conditional
 * {@code UPDATE ... WHERE expires_at < now}, which one claimer wins. Tested on PostgreSQL 14, H2 2.3 and MariaDB
 * 10.11 through MySQL's driver (not on Oracle's MySQL server).
 *
 * <p>The table is created if absent ({@code CREATE TABLE IF NOT EXISTS}, plus an index on {@code expires_at}
 * except on MySQL, which cannot create an index only if absent), when the store is made, or, if the database does not
 * answer then (a connection error), at the first claim that reaches it: until then each claim fails, and
 * {@code retrydedup} runs the call unprotected, as in any outage of the store:
 * <pre>
 *   dedup_key VARCHAR(400) PRIMARY KEY, state CHAR(1) ('S' started, 'D' done), owner VARCHAR(64), expires_at BIGINT
 * </pre>
 * {@code expires_at} is epoch milliseconds from the providers' clocks, which must agree to well within the started
 * window (NTP does). Expired rows are deleted by the first claim after each purge interval (default 60 s), on the
 * claiming thread; {@link #purgeExpired()} does it on demand.
 *
 * <p>Every statement runs in auto-commit on a connection borrowed from the {@link DataSource} for one operation, so
 * hand it a pooled one. Its failures surface as {@link DedupStoreException}.
 *
 * <p><b>Threading:</b> thread-safe, and safe across processes sharing the table.
 */
public final class JdbcDedupStore implements DedupStore {

    /** The default table name. */
    public static final String DEFAULT_TABLE = "rpc_retry_dedup";
    /** The default purge interval, in milliseconds. */
    public static final long DEFAULT_PURGE_INTERVAL_MILLIS = 60_000;
    private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
    private static final int CLAIM_ATTEMPTS = 3;
    private static final System.Logger LOG = System.getLogger(JdbcDedupStore.class.getName());

    private final DataSource dataSource;
    private final String table;
    private final DedupWindows windows;
    private final LongSupplier clockMillis;
    private final long purgeIntervalMillis;
    private final String ownerPrefix = UUID.randomUUID() + "-";
    private final AtomicLong owners = new AtomicLong();
    private final AtomicLong nextPurgeMillis = new AtomicLong(Long.MIN_VALUE);
    /** The claim's insert; null until the table exists (the database did not answer when the store was made). */
    private volatile String insertSql;
    private final ReentrantLock creating = new ReentrantLock();

    /**
     * A store on table {@value #DEFAULT_TABLE} with the system clock; creates the table if absent.
     *
     * @throws DedupStoreException if the database answers and the table cannot be created (one that does not answer
     *                             gets it at the first claim that reaches it)
     */
    public JdbcDedupStore(DataSource dataSource, DedupWindows windows) {
        this(dataSource, DEFAULT_TABLE, windows, DEFAULT_PURGE_INTERVAL_MILLIS, System::currentTimeMillis);
    }

    /**
     * Creates the table if absent.
     *
     * @param dataSource a pooled data source
     * @param table the table's name: a letter or '_', then up to 62 letters, digits or '_'
     * @param windows how long rows live
     * @param purgeIntervalMillis how often claims delete expired rows, 1 ms .. 1 day
     * @param clockMillis epoch milliseconds
     * @throws IllegalArgumentException naming a malformed argument and its value
     * @throws DedupStoreException if the database answers and the table cannot be created (one that does not answer
     *                             gets it at the first claim that reaches it)
     */
    public JdbcDedupStore(DataSource dataSource, String table, DedupWindows windows, long purgeIntervalMillis,
                          LongSupplier clockMillis) {
        if (dataSource == null || windows == null || clockMillis == null) {
            throw new NullPointerException("dataSource, windows, clockMillis: null (expected: all set)");
        }
        if (table == null || !TABLE.matcher(table).matches()) {
            throw new IllegalArgumentException("table: " + table + " (expected: " + TABLE.pattern() + ")");
        }
        if (purgeIntervalMillis < 1 || purgeIntervalMillis > 86_400_000) {
            throw new IllegalArgumentException("purgeIntervalMillis: " + purgeIntervalMillis
                    + " (expected: 1..86400000)");
        }
        this.dataSource = dataSource;
        this.table = table;
        this.windows = windows;
        this.purgeIntervalMillis = purgeIntervalMillis;
        this.clockMillis = clockMillis;
        try {
            this.insertSql = createSchema();
        } catch (DedupStoreException e) {
            if (!ConnectionErrors.unreachable(e)) {
                throw e;
            }
            // an outage, not a wrong setting: the provider starts, and runs calls unprotected until it answers
            LOG.log(System.Logger.Level.WARNING, "retrydedup: the database of table {0} cannot be reached ({1});"
                    + " the table is created at the first claim that reaches it, and until then calls run"
                    + " unprotected", table, JdbcUrls.redact(String.valueOf(e.getCause())));
        }
    }

    /**
     * @return the claim's insert, once the table exists: created now if the database did not answer before. One
     *     thread tries at a time; the others fail at once meanwhile rather than queue behind its connection attempt.
     * @throws DedupStoreException if the table does not exist yet, and could not be created now
     */
    private String insertSql() {
        if (!creating.tryLock()) {
            String made = insertSql; // the thread holding the lock may have just created it
            if (made != null) {
                return made;
            }
            throw new DedupStoreException("table " + table + " not created yet: its database has not answered since"
                    + " the store was made", null);
        }
        try {
            if (insertSql == null) {
                insertSql = createSchema();
            }
            return insertSql;
        } finally {
            creating.unlock();
        }
    }

    /**
     * Creates the table and its index if absent.
     *
     * @return the claim's insert, in the database's dialect
     * @throws DedupStoreException if it could not, or the database did not answer
     */
    private String createSchema() {
        try (Connection c = connection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + table + " (dedup_key VARCHAR(400) NOT NULL PRIMARY KEY,"
                    + " state CHAR(1) NOT NULL, owner VARCHAR(64) NOT NULL, expires_at BIGINT NOT NULL)");
            String product = c.getMetaData().getDatabaseProductName();
            if (!product.toLowerCase(Locale.ROOT).contains("mysql")) { // MySQL: no IF NOT EXISTS on indexes
                s.execute("CREATE INDEX IF NOT EXISTS " + table + "_expires ON " + table + " (expires_at)");
            }
            return "INSERT INTO " + table + " (dedup_key, state, owner, expires_at) VALUES (?, 'S', ?, ?)"
                    + (product.equalsIgnoreCase("PostgreSQL") ? " ON CONFLICT (dedup_key) DO NOTHING" : "");
        } catch (SQLException | RuntimeException e) { // a pool that cannot start throws unchecked (HikariCP)
            throw new DedupStoreException("cannot create table " + table, e);
        }
    }

    @Override
    public Claim claim(String key) {
        DedupStore.checkKey(key);
        long now = clockMillis.getAsLong();
        String owner = ownerPrefix + owners.incrementAndGet();
        String insert = insertSql != null ? insertSql : insertSql();
        try (Connection c = connection()) {
            purgeIfDue(c, now);
            for (int i = 0; i < CLAIM_ATTEMPTS; i++) {
                if (insert(c, insert, key, owner, now) || takeOver(c, key, owner, now)) {
                    return Claim.claimed(key, owner);
                }
                String state = state(c, key);
                if (state != null) {
                    return "D".equals(state) ? Claim.done(key) : Claim.inProgress(key);
                }
                // released between our statements: claim again
            }
            return Claim.inProgress(key); // claimed and released under us each time: the consumer retries later
        } catch (SQLException e) {
            throw new DedupStoreException("cannot claim " + key + " in " + table, e);
        }
    }

    private boolean insert(Connection c, String insertSql, String key, String owner, long now) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(insertSql)) {
            ps.setString(1, key);
            ps.setString(2, owner);
            ps.setLong(3, now + windows.startedMillis());
            return ps.executeUpdate() == 1;
        } catch (SQLException e) {
            if (e.getSQLState() != null && e.getSQLState().startsWith("23")) { // integrity constraint: the row exists
                return false;
            }
            throw e;
        }
    }

    /** Takes over an expired row, started (its owner died) or done (past the done window, not yet purged). */
    private boolean takeOver(Connection c, String key, String owner, long now) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table
                + " SET state = 'S', owner = ?, expires_at = ? WHERE dedup_key = ? AND expires_at < ?")) {
            ps.setString(1, owner);
            ps.setLong(2, now + windows.startedMillis());
            ps.setString(3, key);
            ps.setLong(4, now);
            return ps.executeUpdate() == 1;
        }
    }

    private String state(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT state FROM " + table + " WHERE dedup_key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    @Override
    public void done(Claim claim) {
        checkClaimed(claim);
        update("mark done", "UPDATE " + table + " SET state = 'D', expires_at = ?"
                + " WHERE dedup_key = ? AND owner = ? AND state = 'S'",
                claim, clockMillis.getAsLong() + windows.doneMillis(), claim.key(), claim.owner());
    }

    @Override
    public void release(Claim claim) {
        checkClaimed(claim);
        update("release", "DELETE FROM " + table + " WHERE dedup_key = ? AND owner = ? AND state = 'S'",
                claim, claim.key(), claim.owner());
    }

    private void update(String what, String sql, Claim claim, Object... args) {
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new DedupStoreException("cannot " + what + " " + claim.key() + " in " + table, e);
        }
    }

    private static void checkClaimed(Claim claim) {
        if (claim.status() != Claim.Status.CLAIMED) {
            throw new IllegalArgumentException("claim: " + claim.status() + " (expected: CLAIMED)");
        }
    }

    /**
     * Deletes the rows whose window has passed.
     *
     * @return how many rows were deleted
     * @throws DedupStoreException if the database cannot be reached
     */
    public int purgeExpired() {
        try (Connection c = connection()) {
            return purge(c, clockMillis.getAsLong());
        } catch (SQLException e) {
            throw new DedupStoreException("cannot purge " + table, e);
        }
    }

    private void purgeIfDue(Connection c, long now) throws SQLException {
        long due = nextPurgeMillis.get();
        if (now >= due && nextPurgeMillis.compareAndSet(due, now + purgeIntervalMillis)) { // one claimer purges
            purge(c, now);
        }
    }

    private int purge(Connection c, long now) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + table + " WHERE expires_at < ?")) {
            ps.setLong(1, now);
            return ps.executeUpdate();
        }
    }

    private Connection connection() throws SQLException {
        Connection c = dataSource.getConnection();
        if (!c.getAutoCommit()) {
            c.setAutoCommit(true); // one statement, one transaction: nothing of ours holds row locks between them
        }
        return c;
    }

    @Override
    public String toString() {
        return "jdbc(" + table + ", " + windows + ")";
    }
}
