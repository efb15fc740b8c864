package io.rpctimer.journal;

import io.rpctimer.retry.CallKey;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;

/**
 * The journal's schema and statements for one dialect and table prefix: table {@code <prefix>call} holds the pending
 * calls, keyed by application, service, method and {@code retry_id}; table {@code <prefix>instance} holds each
 * instance's lease; table {@code <prefix>dead_letter} holds the abandoned calls, keyed as the calls (its queries are
 * in {@link DeadLetterSql}). Every lease is judged by the database's clock ({@link JournalDialect#nowMillis()}).
 *
 * <p><b>Threading:</b> immutable.
 */
final class JournalSql {

    /** Column sizes, checked before a write so that one bad value never fails a whole group commit. */
    static final int ID_CHARS = 128;
    static final int APP_CHARS = 128;
    static final int SERVICE_CHARS = 255;
    static final int METHOD_CHARS = 128;
    static final int PROVIDER_CHARS = 512;
    static final int FAILURE_CHARS = 1024;
    static final int CLASS_CHARS = 255;

    /**
     * The owner of a released call (a destroyed reference's): no instance has this id, so every claim of the call's
     * service adopts it, as it adopts a dead instance's.
     */
    static final String RELEASED = "(released)";

    /**
     * A call this run may hand out: parked, or scheduled by another run of its owner (an earlier process, whose
     * wheel is gone). Calls scheduled by this run carry its {@code run_id}, so a restart needs no write to find
     * them. Its parameter is this run's id.
     */
    static final String NOT_SCHEDULED = "(parked = TRUE OR run_id IS NULL OR run_id <> ?)";

    /** The key of a call; four parameters, bound by {@link EntryRows#bindKey}. */
    static final String KEY = "application = ? AND service_key = ? AND method = ? AND retry_id = ?";

    /** The call columns, in the order of {@link #insert} and of every SELECT of whole rows. */
    static final List<String> CALL_COLUMNS = List.of("application", "service_key", "method", "retry_id", "payload",
            "payload_crc", "attempt", "due_at", "last_provider", "last_failure", "created_at", "owner", "parked",
            "quarantined", "run_id");

    /** The dead-letter columns, in the order of every INSERT and SELECT of whole dead letters. */
    static final List<String> DEAD_COLUMNS = List.of("application", "service_key", "method", "retry_id", "payload",
            "payload_crc", "attempts", "created_at", "dead_at", "last_provider", "last_failure", "failure_class");

    final JournalDialect dialect;
    /**
     * Whether the statements are a journal's without a lease, which hands out its earlier runs' calls without a
     * write ({@link HandOutMarks}): a call it holds is then also an earlier run's at or before its service's mark.
     */
    final boolean marked;
    /**
     * Whether a survivor may take a dead instance's lease over instead of adopting its calls one by one (PostgreSQL,
     * with a lease): a lease row then names the run that holds it ({@code holder}), and a call is held by the run that
     * holds its owner's lease row.
     */
    final boolean takesOver;
    final String callTable;
    final String instanceTable;
    final String deadTable;
    /** The three steps of a bury, in order: replace a dead letter of the key, copy the call, remove the call. */
    final String buryReplace;
    final String buryInsert;
    final String buryDelete;
    final String insert;
    final String fence;
    final String fenceWithLease;
    final String whoHolds;
    final String remove;
    final String release;
    final String nextOwner;
    final String liveOwners;
    final String expiredOwners;
    final String selectParked;
    final String selectOwn;
    final String selectAdoptable;
    final String adoptOne;
    final String adoptFenced;
    final String unparkOne;
    final String unparkFenced;
    final String adoptTaking;
    final String unparkPage;
    final String leaseLasts;
    final String quarantine;
    final String insertInstance;
    final String deleteInstance;
    final String renewLease;
    final String giveUpLease;
    final String forgetInstanceIfIdle;
    final String forgetStaleInstances;
    final String selectAll;
    final String deleteOne;
    final String exists;
    final String leaseHolder;
    final String writeGuard;
    final String lockLease;
    final String takeOverLock;
    final String takeOver;
    final String countOwned;
    final String nextService;
    final String ownsAny;

    /** The statements of a journal with a lease: a call it holds carries its run. */
    JournalSql(JournalDialect dialect, String tablePrefix) {
        this(dialect, tablePrefix, false);
    }

    /** @param marked whether the journal has no lease and hands out its earlier runs' calls by marks */
    JournalSql(JournalDialect dialect, String tablePrefix, boolean marked) {
        this.dialect = dialect;
        this.marked = marked;
        this.takesOver = dialect.keyArrays() && !marked;
        this.callTable = tablePrefix + "call";
        this.instanceTable = tablePrefix + "instance";
        this.deadTable = tablePrefix + "dead_letter";
        String now = dialect.nowMillis();
        String columns = String.join(", ", CALL_COLUMNS);
        String placeholders = String.join(", ", CALL_COLUMNS.stream().map(c -> "?").toList());
        insert = "INSERT INTO " + callTable + " (" + columns + ") VALUES (" + placeholders + ")";
        // the fence: ownership by this run, and (with leases) a lease that outlasts the send by a margin, checked in
        // one statement on the database's clock; adopt checks the opposite, so the two never both succeed
        // held by this run: its run id, or (marked) an earlier run's call at or before the mark; a marked fence
        // makes the call this run's, since it moves the due time the mark is judged by
        // (takesOver: the call's owner's lease row is this run's, one parameter: this run)
        String held = takesOver ? " AND" + heldByRun(callTable)
                : " AND owner = ? AND " + (marked ? HandOutMarks.held("") : "run_id = ?");
        String setFenced = "UPDATE " + callTable + " SET attempt = ?, due_at = ?, last_provider = ?, last_failure = ?,"
                + " parked = FALSE";
        // takesOver: the fence makes the call this run's (a taken-over call is handed out without a write), and the
        // lease that must outlast it is the one of the call's owner, held by this run; parameters: this run, the
        // call's key, this run, the margin in milliseconds
        fence = takesOver ? setFenced + ", run_id = ? WHERE " + KEY + " AND EXISTS (SELECT 1 FROM " + instanceTable
                + " i WHERE i.owner = " + callTable + ".owner AND i.holder = ? AND i.lease_until > " + now + " + ?)"
                : setFenced + (marked ? ", run_id = ?" : "") + " WHERE " + KEY + held;
        // this instance's lease outlasts the database's now by the margin: inside each fence, and once for a page of
        // hand-outs; parameters: this instance's owner, the margin in milliseconds (takesOver: the owner, this run,
        // the margin; the row stays locked until the hand-out commits, so no survivor takes it over meanwhile)
        leaseLasts = takesOver ? "SELECT 1 FROM " + instanceTable + " i WHERE i.owner = ? AND i.holder = ? AND"
                + " i.lease_until > " + now + " + ? FOR SHARE"
                : "SELECT 1 FROM " + instanceTable + " i WHERE i.owner = ? AND i.lease_until > " + now + " + ?";
        fenceWithLease = takesOver ? fence : fence + " AND EXISTS (" + leaseLasts + ")";
        whoHolds = takesOver ? "SELECT c.owner, c.run_id, i.holder FROM " + callTable + " c LEFT JOIN "
                + instanceTable + " i ON i.owner = c.owner WHERE c.application = ? AND c.service_key = ? AND"
                + " c.method = ? AND c.retry_id = ?"
                : "SELECT owner, run_id FROM " + callTable + " WHERE " + KEY;
        remove = "DELETE FROM " + callTable + " WHERE " + KEY + (takesOver ? held : " AND owner = ?");
        release = "UPDATE " + callTable + " SET owner = '" + RELEASED + "', parked = TRUE, run_id = NULL WHERE " + KEY
                + held;
        // the service's owners one at a time, each the first after the last in the claim index's order: a probe per
        // owner (a loose index scan), where a SELECT DISTINCT reads every entry of the service (0.2-0.5 s at a
        // million, at every claim); parameters: application, service, the last owner found ('' for the first)
        nextOwner = "SELECT owner FROM " + callTable + " WHERE application = ? AND service_key = ? AND owner > ?"
                + " ORDER BY application, service_key, owner LIMIT 1";
        // the owners whose calls are not for adoption: a live lease, or a lease row this run holds (parameter: run)
        liveOwners = "SELECT owner FROM " + instanceTable + " WHERE lease_until >= " + now + " OR holder = ?";
        // parameters: application, service, this instance's owner, this run; only instances with an expired lease
        // row that this run does not hold: a probe per instance row on the claim index
        // (a scalar subquery in the claim index's order with LIMIT 1: PostgreSQL turns EXISTS into a hash semi-join
        // over every entry of the service, 0.27 s at 500,000 entries for each unpark, and without the ORDER BY it
        // scans the table for the first row, past what the drain deleted; this is one index probe per instance)
        expiredOwners = "SELECT i.owner FROM " + instanceTable + " i WHERE (SELECT 1 FROM " + callTable
                + " e WHERE e.application = ? AND e.service_key = ? AND e.owner = i.owner ORDER BY e.application,"
                + " e.service_key, e.owner, e.due_at LIMIT 1) IS NOT NULL AND i.owner <> ? AND i.lease_until < "
                + now + " AND (i.holder IS NULL OR i.holder <> ?)";
        selectParked = selectPage(columns, NOT_SCHEDULED);
        // this instance's calls: marked, an earlier run's only after the mark
        selectOwn = marked ? selectPage(columns, HandOutMarks.PAST_MARK) : selectParked;
        // a dead owner's page, locked as it is read where the database can skip rows another survivor is taking
        selectAdoptable = selectParked + (dialect.skipLocked() ? " FOR UPDATE SKIP LOCKED" : "");
        // the lease is checked again inside the UPDATE: an owner that renewed since the SELECT keeps its calls
        String leaseExpired = " NOT EXISTS (SELECT 1 FROM " + instanceTable + " i WHERE i.owner = ? AND"
                + " i.lease_until >= " + now + ")";
        String expired = " AND owner = ? AND" + leaseExpired;
        String adoptable = " WHERE " + KEY + expired;
        adoptOne = "UPDATE " + callTable + " SET owner = ?, parked = FALSE, run_id = ?" + adoptable;
        String notScheduled = " AND owner = ? AND " + NOT_SCHEDULED;
        String unparkable = " WHERE " + KEY + notScheduled;
        unparkOne = "UPDATE " + callTable + " SET parked = FALSE, run_id = ?" + unparkable;
        // PostgreSQL: a page of own calls marked by one statement, its keys as two arrays (methods, retry ids); an
        // entry due by the first parameter (epoch ms) is fenced as by adoptFenced if the second is 1 (0: none is);
        // the keys it took come back with their due time
        String page = " WHERE application = ? AND service_key = ? AND (method, retry_id) IN (SELECT * FROM unnest("
                + "CAST(? AS VARCHAR[]), CAST(? AS VARCHAR[])))";
        String fencing = "attempt = attempt + CASE WHEN due_at <= ? THEN ? ELSE 0 END";
        unparkPage = "UPDATE " + callTable + " SET " + fencing + ", parked = FALSE, run_id = ?" + page + notScheduled
                + " RETURNING method, retry_id, due_at";
        // PostgreSQL: a dead owner's page read, locked and adopted by one statement, which reaches each row by its
        // ctid (locked by the same statement, the row stays put) instead of by its key, and reads it once; the rows
        // it adopted come back as they were before, in claim order: all the page's, or none if the owner renewed
        // its lease. Parameters: selectAdoptable's, then the fence time and flag (as unparkPage's), this instance's
        // owner, this run, and the dead owner twice
        String before = String.join(", ", CALL_COLUMNS.stream().map(col -> "page." + col).toList());
        adoptTaking = !dialect.keyArrays() ? null : "WITH page AS (" + selectPage("ctid AS tid, " + columns,
                NOT_SCHEDULED) + " FOR UPDATE SKIP LOCKED), taken AS (UPDATE " + callTable + " c SET attempt ="
                + " c.attempt + CASE WHEN c.due_at <= ? THEN ? ELSE 0 END, owner = ?, parked = FALSE, run_id = ?"
                + " FROM page WHERE c.ctid = page.tid AND c.owner = ? AND" + leaseExpired + " RETURNING " + before
                + ") SELECT " + columns + " FROM taken ORDER BY due_at, retry_id, method";
        // a hand-out that is also the fence of the entry's next retry, for an entry due now: it records the retry as
        // under way (its due time stays); with leases, only after leaseLasts found the lease valid in its transaction
        adoptFenced = "UPDATE " + callTable + " SET owner = ?, parked = FALSE, run_id = ?, attempt = attempt + 1"
                + adoptable;
        unparkFenced = "UPDATE " + callTable + " SET parked = FALSE, run_id = ?, attempt = attempt + 1" + unparkable;
        quarantine = "UPDATE " + callTable + " SET quarantined = TRUE WHERE " + KEY + " AND owner = ?";
        insertInstance = "INSERT INTO " + instanceTable + " (owner, lease_until, host, holder) VALUES (?, " + now
                + " + ?, ?, ?)";
        deleteInstance = "DELETE FROM " + instanceTable + " WHERE owner = ?";
        // takesOver: every lease row this run holds, its own and those it took over, in one statement (they lapse
        // together); the owners come back, so that the run sees when its own row was taken over; parameters: the
        // lease in milliseconds, then this run (else this instance's owner)
        renewLease = "UPDATE " + instanceTable + " SET lease_until = " + now + " + ? WHERE "
                + (takesOver ? "holder = ? RETURNING owner" : "owner = ?");
        giveUpLease = "UPDATE " + instanceTable + " SET lease_until = 0 WHERE " + (takesOver ? "holder" : "owner")
                + " = ?";
        leaseHolder = "SELECT holder FROM " + instanceTable + " WHERE owner = ?";
        // a write transaction's first statement (takesOver): the lease rows of this owner and of this run, locked
        // until it commits, so that a survivor takes one over only after the calls it wrote are there to be read;
        // parameters: this instance's owner, this run
        writeGuard = "SELECT owner, holder FROM " + instanceTable + " WHERE owner = ? OR holder = ? FOR SHARE";
        // an adopter's hold on a dead owner's lease row while it adopts calls row by row: a takeover skips the row
        lockLease = "SELECT 1 FROM " + instanceTable + " WHERE owner = ? FOR SHARE";
        // a takeover: the dead owner's lease row, when its lease has expired and no adopter holds it, becomes this
        // run's; rows of versions without a holder are adopted row by row. Parameters: the dead owner, this run; then
        // this run, the lease in milliseconds, the dead owner
        takeOverLock = "SELECT 1 FROM " + instanceTable + " WHERE owner = ? AND holder IS NOT NULL AND holder <> ? AND"
                + " lease_until < " + now + " FOR UPDATE SKIP LOCKED";
        takeOver = "UPDATE " + instanceTable + " SET holder = ?, lease_until = " + now + " + ? WHERE owner = ?";
        // how many calls of a service an owner has, counted up to the last parameter (a probe of the claim index)
        countOwned = "SELECT count(*) FROM (SELECT 1 FROM " + callTable + " WHERE application = ? AND service_key = ?"
                + " AND owner = ? LIMIT ?) t";
        // the services one at a time, each the first after the last in the claim index's order
        nextService = "SELECT application, service_key FROM " + callTable + " WHERE (application, service_key) >"
                + " (?, ?) ORDER BY application, service_key LIMIT 1";
        ownsAny = "SELECT 1 FROM " + callTable + " WHERE application = ? AND service_key = ? AND owner = ? LIMIT 1";
        String idle = " NOT EXISTS (SELECT 1 FROM " + callTable + " e WHERE e.owner = " + instanceTable + ".owner)";
        forgetInstanceIfIdle = "DELETE FROM " + instanceTable + " WHERE owner = ? AND" + idle;
        forgetStaleInstances = "DELETE FROM " + instanceTable + " WHERE lease_until < " + now + " - ? AND" + idle;
        // a bury moves the call only while this run holds it (owner and run): an adopted call is not buried by the
        // instance that lost it; each step is guarded by the same condition, so all three do something or none does
        buryReplace = "DELETE FROM " + deadTable + " WHERE " + KEY + " AND EXISTS (SELECT 1 FROM " + callTable
                + " c WHERE c.application = ? AND c.service_key = ? AND c.method = ? AND c.retry_id = ? AND"
                + (takesOver ? heldByRun("c") : " c.owner = ? AND " + (marked ? HandOutMarks.held("c.")
                : "c.run_id = ?")) + ")";
        buryInsert = "INSERT INTO " + deadTable + " (" + String.join(", ", DEAD_COLUMNS) + ") SELECT application,"
                + " service_key, method, retry_id, payload, payload_crc, ?, created_at, " + now + ", ?, ?, ? FROM "
                + callTable + " WHERE " + KEY + held;
        buryDelete = "DELETE FROM " + callTable + " WHERE " + KEY + held;
        selectAll = "SELECT " + columns + " FROM " + callTable
                + " ORDER BY retry_id, application, service_key, method LIMIT ?";
        deleteOne = "DELETE FROM " + callTable + " WHERE " + KEY;
        exists = "SELECT payload_crc, created_at FROM " + callTable + " WHERE " + KEY;
    }

    /** @return that the owner of a call of {@code table} (its name or alias) has its lease row held by the run bound */
    private String heldByRun(String table) {
        return " EXISTS (SELECT 1 FROM " + instanceTable + " i WHERE i.owner = " + table + ".owner AND i.holder = ?)";
    }

    /**
     * Binds what tells that this run holds {@code key}, from index {@code i}: with {@link #takesOver}, this run;
     * else this instance's owner, then this run or (marked) its marks.
     *
     * @return the next index
     */
    int bindHeld(PreparedStatement st, int i, String owner, String runId, HandOutMarks marks, CallKey key)
            throws SQLException {
        if (takesOver) {
            st.setString(i, runId);
            return i + 1;
        }
        st.setString(i, owner);
        return HandOutMarks.bindHeld(marks, runId, st, i + 1, key);
    }

    /**
     * Runs {@link #writeGuard}, prepared as {@code guard}, for {@code me} and this run {@code runId}: their lease rows
     * stay locked until the transaction ends.
     *
     * @return whether {@code me}'s row is held by another run, which took the lease over with its calls (false if it
     *     is this run's, or gone: removed as stale while the process was paused, registered again by its heartbeat)
     */
    static boolean leaseTakenOver(PreparedStatement guard, String me, String runId) throws SQLException {
        guard.setString(1, me);
        guard.setString(2, runId);
        try (ResultSet rs = guard.executeQuery()) {
            while (rs.next()) {
                if (me.equals(rs.getString(1))) {
                    return !runId.equals(rs.getString(2));
                }
            }
            return false;
        }
    }

    /**
     * @return a keyset page of one owner's calls in the claim order that meet {@code handOut}: the calls after
     *     (due_at, retry_id, method) of the last page; the ORDER BY names the claim index's columns in its order, so
     *     the database reads the index in order and stops at the LIMIT
     */
    private String selectPage(String columns, String handOut) {
        return "SELECT " + columns + " FROM " + callTable + " WHERE application = ? AND service_key = ?"
                + " AND owner = ? AND " + handOut + " AND quarantined = FALSE"
                + " AND due_at >= ? AND (due_at > ? OR retry_id > ? OR (retry_id = ? AND method > ?))"
                + " ORDER BY application, service_key, owner, due_at, retry_id, method LIMIT ?";
    }

    /** Creates the tables and the claim index if absent, in one transaction where the database allows it. */
    void createSchema(Connection connection) throws SQLException {
        try (Statement st = connection.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS " + callTable + " (" + keyAndPayload()
                    + "attempt INT, "
                    + "due_at BIGINT NOT NULL, "
                    + "last_provider VARCHAR(" + PROVIDER_CHARS + "), "
                    + "last_failure VARCHAR(" + FAILURE_CHARS + "), "
                    + "created_at BIGINT, "
                    + "owner VARCHAR(" + ID_CHARS + ") NOT NULL, "
                    + "parked BOOLEAN NOT NULL, "
                    + "quarantined BOOLEAN DEFAULT FALSE NOT NULL, "
                    + "run_id VARCHAR(" + ID_CHARS + "), "
                    + "PRIMARY KEY (application, service_key, method, retry_id))");
            st.execute("CREATE TABLE IF NOT EXISTS " + instanceTable + " ("
                    + "owner VARCHAR(" + ID_CHARS + ") NOT NULL PRIMARY KEY, "
                    + "lease_until BIGINT NOT NULL, "
                    + "host VARCHAR(" + SERVICE_CHARS + "), "
                    + "holder VARCHAR(" + ID_CHARS + "))");
            if (!columnExists(connection, instanceTable, "holder")) { // a table of an earlier version
                st.execute("ALTER TABLE " + instanceTable + " ADD COLUMN holder VARCHAR(" + ID_CHARS + ")");
            }
            createDeadLetterTable(st);
            createIndex(st, callTable + "_claim ON " + callTable
                    + " (application, service_key, owner, due_at, retry_id, method)");
            createIndex(st, deadTable + "_age ON " + deadTable + " (application, dead_at)");
        }
    }

    /** Abandoned calls, keyed as the calls, with no owner: every instance of the application sees the same ones. */
    private void createDeadLetterTable(Statement st) throws SQLException {
        st.execute("CREATE TABLE IF NOT EXISTS " + deadTable + " (" + keyAndPayload()
                + "attempts INT NOT NULL, "
                + "created_at BIGINT, "
                + "dead_at BIGINT NOT NULL, "
                + "last_provider VARCHAR(" + PROVIDER_CHARS + "), "
                + "last_failure VARCHAR(" + FAILURE_CHARS + "), "
                + "failure_class VARCHAR(" + CLASS_CHARS + "), "
                + "PRIMARY KEY (application, service_key, method, retry_id))");
    }

    /** @return the columns a call and a dead letter share: its key, and the call with its checksum */
    private String keyAndPayload() {
        return "application VARCHAR(" + APP_CHARS + ") NOT NULL, "
                + "service_key VARCHAR(" + SERVICE_CHARS + ") NOT NULL, "
                + "method VARCHAR(" + METHOD_CHARS + ") NOT NULL, "
                + "retry_id VARCHAR(" + ID_CHARS + ") NOT NULL, "
                // nullable: a torn row is then still readable enough to be named and skipped
                + "payload " + dialect.binaryType() + ", "
                + "payload_crc BIGINT, ";
    }

    /**
     * The claim index serves {@link #selectParked}: its WHERE and its ORDER BY; the dead letters' age index serves
     * their trims and their listing, newest first.
     */
    private void createIndex(Statement st, String index) throws SQLException {
        if (dialect.indexIfNotExists()) {
            st.execute("CREATE INDEX IF NOT EXISTS " + index);
            return;
        }
        try {
            st.execute("CREATE INDEX " + index);
        } catch (SQLException e) {
            if (e.getErrorCode() != 1061) { // MySQL ER_DUP_KEYNAME: the index exists
                throw e;
            }
        }
    }

    /**
     * Moves the calls of the tables of earlier versions ({@code <prefix>retry_entry}, keyed by {@code retry_id}
     * alone) into {@link #callTable}, then drops them. Their owners have no lease here, so the next claim of each
     * service adopts them.
     *
     * @return how many calls were moved
     */
    int migrateEarlierTables(Connection c, String tablePrefix) throws SQLException {
        String old = tablePrefix + "retry_entry";
        if (!tableExists(c, old)) {
            return 0;
        }
        int moved;
        try (Statement st = c.createStatement()) {
            moved = st.executeUpdate("INSERT INTO " + callTable + " (" + String.join(", ", CALL_COLUMNS) + ")"
                    + " SELECT application, service_key, COALESCE(method, '?'), retry_id, payload, payload_crc,"
                    + " attempt, due_at, last_provider, last_failure, created_at, owner, parked, quarantined, run_id"
                    + " FROM " + old);
            st.execute("DROP TABLE " + old);
            if (tableExists(c, tablePrefix + "retry_instance")) {
                st.execute("DROP TABLE " + tablePrefix + "retry_instance");
            }
        }
        return moved;
    }

    /** @return whether {@code table} has a column named {@code column} (in any case) */
    private static boolean columnExists(Connection c, String table, String column) throws SQLException {
        DatabaseMetaData meta = c.getMetaData();
        for (String t : List.of(table, table.toUpperCase(Locale.ROOT), table.toLowerCase(Locale.ROOT))) {
            try (ResultSet rs = meta.getColumns(c.getCatalog(), null, t, null)) {
                while (rs.next()) {
                    if (rs.getString("COLUMN_NAME").equalsIgnoreCase(column)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /**
     * @return whether a table named {@code name} exists (in the case the database folds unquoted names to, or
     *     as written)
     */
    static boolean tableExists(Connection c, String name) throws SQLException {
        DatabaseMetaData meta = c.getMetaData();
        for (String candidate : List.of(name, name.toUpperCase(Locale.ROOT), name.toLowerCase(Locale.ROOT))) {
            try (ResultSet rs = meta.getTables(c.getCatalog(), null, candidate, new String[]{"TABLE"})) {
                if (rs.next()) {
                    return true;
                }
            }
        }
        return false;
    }
}
