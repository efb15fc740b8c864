package io.rpctimer.journal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The journal's schema and statements for one dialect and table prefix: table {@code <prefix>retry_entry} holds the
 * entries, keyed by {@code retry_id}; table {@code <prefix>retry_instance} holds each instance's lease.
 *
 * <p><b>Threading:</b> immutable.
 */
final class JournalSql {

    /** Column sizes, checked before a write so that one bad value never fails a whole group commit. */
    static final int ID_CHARS = 128;
    static final int NAME_CHARS = 255;
    static final int PROVIDER_CHARS = 512;
    static final int FAILURE_CHARS = 1024;

    /**
     * An entry this run may hand out: parked, or scheduled by another run of its owner (an earlier process, whose
     * wheel is gone). Entries scheduled by this run carry its {@code run_id}, so a restart needs no write to find
     * them. Its parameter is this run's id.
     */
    static final String NOT_SCHEDULED = "(parked = TRUE OR run_id IS NULL OR run_id <> ?)";

    /** The entry columns, in the order of {@link #upsert} and {@link #selectEntries}. */
    static final List<String> ENTRY_COLUMNS = List.of("retry_id", "application", "service_key", "method", "payload",
            "payload_crc", "attempt", "due_at", "last_provider", "last_failure", "created_at", "owner", "parked",
            "quarantined", "run_id");

    final JournalDialect dialect;
    final String entryTable;
    final String instanceTable;
    final String upsert;
    final String update;
    final String remove;
    final String deadOwners;
    final String adopt;
    final String selectParked;
    final String unparkOne;
    final String quarantine;
    final String deleteInstance;
    final String renewLease;
    final String selectAll;
    final String deleteOne;
    final String exists;

    JournalSql(JournalDialect dialect, String tablePrefix) {
        this.dialect = dialect;
        this.entryTable = tablePrefix + "retry_entry";
        this.instanceTable = tablePrefix + "retry_instance";
        String columns = String.join(", ", ENTRY_COLUMNS);
        String placeholders = String.join(", ", ENTRY_COLUMNS.stream().map(c -> "?").toList());
        String updates = String.join(", ", ENTRY_COLUMNS.stream().skip(1).map(c -> c + " = $" + c).toList());
        upsert = dialect.upsert(entryTable, columns, placeholders, updates);
        update = "UPDATE " + entryTable + " SET attempt = ?, due_at = ?, last_provider = ?, last_failure = ?"
                + " WHERE retry_id = ? AND owner = ?";
        remove = "DELETE FROM " + entryTable + " WHERE retry_id = ? AND owner = ?";
        deadOwners = "SELECT DISTINCT e.owner FROM " + entryTable + " e LEFT JOIN " + instanceTable
                + " i ON i.owner = e.owner WHERE e.application = ? AND e.service_key = ? AND e.owner <> ?"
                + " AND (i.owner IS NULL OR i.lease_until < ?)";
        // the lease is checked again inside the UPDATE: an owner that renewed since the SELECT keeps its entries
        adopt = "UPDATE " + entryTable + " SET owner = ?, parked = TRUE, run_id = NULL"
                + " WHERE application = ? AND service_key = ? AND owner = ?"
                + " AND NOT EXISTS (SELECT 1 FROM " + instanceTable + " i WHERE i.owner = ? AND i.lease_until >= ?)";
        // keyset page: the entries after (due_at, retry_id) of the last page; the ORDER BY names the claim index's
        // columns in its order, so H2 reads the index in order and stops at the LIMIT instead of sorting the rest
        selectParked = "SELECT " + columns + " FROM " + entryTable + " WHERE application = ? AND service_key = ?"
                + " AND owner = ? AND " + NOT_SCHEDULED + " AND quarantined = FALSE"
                + " AND due_at >= ? AND (due_at > ? OR retry_id > ?)"
                + " ORDER BY application, service_key, owner, due_at, retry_id LIMIT ?";
        unparkOne = "UPDATE " + entryTable + " SET parked = FALSE, run_id = ? WHERE retry_id = ? AND owner = ? AND "
                + NOT_SCHEDULED;
        quarantine = "UPDATE " + entryTable + " SET quarantined = TRUE WHERE retry_id = ? AND owner = ?";
        deleteInstance = "DELETE FROM " + instanceTable + " WHERE owner = ?";
        renewLease = "UPDATE " + instanceTable + " SET lease_until = ? WHERE owner = ?";
        selectAll = "SELECT " + columns + " FROM " + entryTable + " ORDER BY retry_id LIMIT ?";
        deleteOne = "DELETE FROM " + entryTable + " WHERE retry_id = ?";
        exists = "SELECT 1 FROM " + entryTable + " WHERE retry_id = ?";
    }

    String insertInstance() {
        return "INSERT INTO " + instanceTable + " (owner, lease_until, host) VALUES (?, ?, ?)";
    }

    /** Creates the tables and the claim index if absent, in one transaction where the database allows it. */
    void createSchema(Connection connection) throws SQLException {
        try (Statement st = connection.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS " + entryTable + " ("
                    + "retry_id VARCHAR(" + ID_CHARS + ") NOT NULL PRIMARY KEY, "
                    + "application VARCHAR(" + NAME_CHARS + ") NOT NULL, "
                    + "service_key VARCHAR(" + NAME_CHARS + ") NOT NULL, "
                    // nullable: a torn row is then still readable enough to be named and skipped
                    + "method VARCHAR(" + NAME_CHARS + "), "
                    + "payload " + dialect.binaryType() + ", "
                    + "payload_crc BIGINT, "
                    + "attempt INT, "
                    + "due_at BIGINT NOT NULL, "
                    + "last_provider VARCHAR(" + PROVIDER_CHARS + "), "
                    + "last_failure VARCHAR(" + FAILURE_CHARS + "), "
                    + "created_at BIGINT, "
                    + "owner VARCHAR(" + ID_CHARS + ") NOT NULL, "
                    + "parked BOOLEAN NOT NULL, "
                    + "quarantined BOOLEAN DEFAULT FALSE NOT NULL, "
                    + "run_id VARCHAR(" + ID_CHARS + "))");
            st.execute("CREATE TABLE IF NOT EXISTS " + instanceTable + " ("
                    + "owner VARCHAR(" + ID_CHARS + ") NOT NULL PRIMARY KEY, "
                    + "lease_until BIGINT NOT NULL, "
                    + "host VARCHAR(" + NAME_CHARS + "))");
            createIndex(st);
        }
    }

    /**
     * The claim index serves {@link #selectParked}: its WHERE and its ORDER BY, retry_id included. It replaces
     * {@code <prefix>retry_entry_claim} (without retry_id) of earlier versions, dropped here so that no write
     * keeps updating it.
     */
    private void createIndex(Statement st) throws SQLException {
        String index = entryTable + "_claim_order ON " + entryTable
                + " (application, service_key, owner, due_at, retry_id)";
        if (dialect.indexIfNotExists()) {
            st.execute("CREATE INDEX IF NOT EXISTS " + index);
            st.execute("DROP INDEX IF EXISTS " + entryTable + "_claim");
            return;
        }
        try {
            st.execute("CREATE INDEX " + index);
        } catch (SQLException e) {
            if (e.getErrorCode() != 1061) { // MySQL ER_DUP_KEYNAME: the index exists
                throw e;
            }
        }
        try {
            st.execute("DROP INDEX " + entryTable + "_claim ON " + entryTable);
        } catch (SQLException e) {
            if (e.getErrorCode() != 1091) { // MySQL ER_CANT_DROP_FIELD_OR_KEY: no such index
                throw e;
            }
        }
    }
}
