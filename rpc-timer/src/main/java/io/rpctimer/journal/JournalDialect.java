package io.rpctimer.journal;

import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;

/**
 * The few SQL differences between the databases a {@link JdbcRetryJournal} runs on: the binary column type, the
 * upsert of an appended entry, and how an index is created when absent.
 *
 * <p><b>Threading:</b> immutable.
 */
public enum JournalDialect {

    /** H2 2.x: the embedded default. */
    H2("VARBINARY", true) {
        @Override
        String upsert(String table, String columns, String placeholders, String updates) {
            return "MERGE INTO " + table + " (" + columns + ") KEY (retry_id) VALUES (" + placeholders + ")";
        }
    },
    /** PostgreSQL 9.5 and later: the fleet's shared database. */
    POSTGRESQL("BYTEA", true) {
        @Override
        String upsert(String table, String columns, String placeholders, String updates) {
            return "INSERT INTO " + table + " (" + columns + ") VALUES (" + placeholders + ")"
                    + " ON CONFLICT (retry_id) DO UPDATE SET " + updates.replace("$", "EXCLUDED.");
        }
    },
    /**
     * MySQL 8 and MariaDB (MySQL's driver reports both as MySQL): the same SQL except the upsert and the index
     * creation. Tested on MariaDB 10.11 through MySQL Connector/J, not on Oracle's MySQL server.
     */
    MYSQL("LONGBLOB", false) {
        @Override
        String upsert(String table, String columns, String placeholders, String updates) {
            return "INSERT INTO " + table + " (" + columns + ") VALUES (" + placeholders + ")"
                    + " ON DUPLICATE KEY UPDATE " + updates.replaceAll("\\$(\\w+)", "VALUES($1)");
        }
    };

    private final String binaryType;
    private final boolean indexIfNotExists;

    JournalDialect(String binaryType, boolean indexIfNotExists) {
        this.binaryType = binaryType;
        this.indexIfNotExists = indexIfNotExists;
    }

    /**
     * @param updates {@code col = $col, ...}: {@code $} marks the value the statement tried to insert
     * @return an INSERT that replaces the row of the same {@code retry_id} if there is one
     */
    abstract String upsert(String table, String columns, String placeholders, String updates);

    String binaryType() {
        return binaryType;
    }

    /** @return false if the database rejects {@code CREATE INDEX IF NOT EXISTS} (the index is then created once) */
    boolean indexIfNotExists() {
        return indexIfNotExists;
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
