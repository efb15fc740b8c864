package io.rpctimer.journal;

import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;

/**
 * The few SQL differences between the databases a {@link JdbcRetryJournal} runs on: the binary column type, the
 * database's clock, how a duplicate key is reported, and how an index is created when absent.
 *
 * <p><b>Threading:</b> immutable.
 */
public enum JournalDialect {

    /** H2 2.x: the embedded default. */
    H2("VARBINARY", true, false, false, "CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000 AS BIGINT)"),
    /** PostgreSQL 9.5 and later: the fleet's shared database. */
    POSTGRESQL("BYTEA", true, true, true, "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"),
    /**
     * MySQL 8 and MariaDB (MySQL's driver reports both as MySQL): the same SQL except the index creation and the
     * clock. Tested on MariaDB 10.11 through MySQL Connector/J, not on Oracle's MySQL server.
     */
    MYSQL("LONGBLOB", false, true, false, "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)");

    private final String binaryType;
    private final boolean indexIfNotExists;
    private final boolean skipLocked;
    private final boolean keyArrays;
    private final String nowMillis;

    JournalDialect(String binaryType, boolean indexIfNotExists, boolean skipLocked, boolean keyArrays,
                   String nowMillis) {
        this.binaryType = binaryType;
        this.indexIfNotExists = indexIfNotExists;
        this.skipLocked = skipLocked;
        this.keyArrays = keyArrays;
        this.nowMillis = nowMillis;
    }

    String binaryType() {
        return binaryType;
    }

    /** @return false if the database rejects {@code CREATE INDEX IF NOT EXISTS} (the index is then created once) */
    boolean indexIfNotExists() {
        return indexIfNotExists;
    }

    /**
     * @return true if {@code SELECT ... FOR UPDATE SKIP LOCKED} is understood (PostgreSQL 9.5+, MySQL 8, MariaDB
     *     10.6+): survivors adopting a dead instance's calls at once then take different ones instead of queueing on
     *     the same rows. H2 is embedded in one process, where no two instances adopt from each other.
     */
    boolean skipLocked() {
        return skipLocked;
    }

    /**
     * @return true if a statement can take a page's keys as two array parameters ({@code unnest(?, ?)}, PostgreSQL):
     *     a hand-out then marks its page with one {@code UPDATE ... RETURNING} instead of one per entry
     */
    boolean keyArrays() {
        return keyArrays;
    }

    /**
     * @return an SQL expression of the database's own clock, in epoch milliseconds: leases are judged by one clock,
     *     the database's, never by the clocks of the hosts that take part
     */
    String nowMillis() {
        return nowMillis;
    }

    /** @return true if {@code e} says a row with the same primary key exists */
    boolean isDuplicateKey(SQLException e) {
        for (SQLException s = e; s != null; s = s.getNextException()) {
            if ("23505".equals(s.getSQLState()) || this == MYSQL && s.getErrorCode() == 1062) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the dialect of the database a connection is open on
     * @throws IllegalArgumentException if it is none of H2, PostgreSQL and MySQL
     */
    public static JournalDialect of(DatabaseMetaData metaData) throws SQLException {
        String product = metaData.getDatabaseProductName();
        String name = product.toLowerCase(Locale.ROOT);
        if (name.contains("h2")) {
            return H2;
        }
        if (name.contains("postgres")) {
            return POSTGRESQL;
        }
        if (name.contains("mysql")) {
            return MYSQL;
        }
        throw new IllegalArgumentException("database: " + product + " (expected: H2, PostgreSQL or MySQL)");
    }
}
