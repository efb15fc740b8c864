package io.rpctimer.journal;

import io.rpctimer.retry.DeadLetter;
import io.rpctimer.retry.DeadLetterFilter;
import io.rpctimer.retry.RetryJournalEntry;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The queries on table {@code <prefix>dead_letter} ({@link JournalSql#deadTable}) for one dialect and prefix, the
 * WHERE clause of a {@link DeadLetterFilter}, and the reading of its rows. Ages are judged by the database's clock, as
 * the {@code dead_at} column is written.
 *
 * <p><b>Threading:</b> immutable.
 */
final class DeadLetterSql {

    /** A filter as SQL: {@code AND ...} conditions after {@code application = ?}, and their parameters in order. */
    record Where(String sql, List<Object> params) {

        /** Binds the application, then the filter's parameters, from parameter 1. @return the next parameter */
        int bind(PreparedStatement st, String application) throws SQLException {
            st.setString(1, application);
            int i = 2;
            for (Object p : params) {
                if (p instanceof Long l) {
                    st.setLong(i++, l);
                } else {
                    st.setString(i++, (String) p);
                }
            }
            return i;
        }
    }

    /** Where a page of a revive ends, in its order (dead_at, service_key, method, retry_id): the next starts after. */
    record After(long deadAt, String serviceKey, String method, String retryId) {
        static final After FIRST = new After(Long.MIN_VALUE, "", "", "");

        int bind(PreparedStatement st, int first) throws SQLException {
            st.setLong(first, deadAt);
            st.setLong(first + 1, deadAt);
            st.setString(first + 2, serviceKey);
            st.setString(first + 3, serviceKey);
            st.setString(first + 4, method);
            st.setString(first + 5, method);
            st.setString(first + 6, retryId);
            return first + 7;
        }
    }

    /** What a listing reads: every column but the payload, and the payload's size. */
    private static final String LISTED = "application, service_key, method, retry_id, attempts, created_at, dead_at,"
            + " last_provider, last_failure, failure_class, OCTET_LENGTH(payload)";
    private static final String NEWEST_FIRST = " ORDER BY dead_at DESC, service_key, method, retry_id";

    private final String table;
    private final String now;
    final String expire;
    final String countAll;
    final String newestToDrop;
    final String dropUpTo;
    final String reviveInsert;
    final String reviveDelete;
    /** Whole rows for a slot's move: every dead letter in key order, a key's CRC and time, an insert of a row. */
    final String selectAll;
    final String exists;
    final String insert;

    DeadLetterSql(JournalSql sql) {
        this.table = sql.deadTable;
        this.now = sql.dialect.nowMillis();
        String app = " WHERE application = ?";
        expire = "DELETE FROM " + table + app + " AND dead_at < " + now + " - ?";
        countAll = "SELECT COUNT(*) FROM " + table + app;
        // the newest of the dead letters past the maximum, in the order oldest first; it and every older one go
        newestToDrop = "SELECT dead_at, service_key, method, retry_id FROM " + table + app
                + " ORDER BY dead_at DESC, service_key DESC, method DESC, retry_id DESC LIMIT 1 OFFSET ?";
        dropUpTo = "DELETE FROM " + table + app + " AND (dead_at < ? OR dead_at = ? AND (service_key < ? OR"
                + " service_key = ? AND (method < ? OR method = ? AND retry_id <= ?)))";
        // a revive copies the dead letter into the pending calls (parked, owned by the reviver, retry 1 next) and
        // deletes it, in one transaction that commits only if both touched the row: only one reviver ever wins
        reviveInsert = "INSERT INTO " + sql.callTable + " (" + String.join(", ", JournalSql.CALL_COLUMNS) + ")"
                + " SELECT application, service_key, method, retry_id, payload, payload_crc, 1, ?, last_provider,"
                + " last_failure, created_at, ?, TRUE, FALSE, NULL FROM " + table + " WHERE " + JournalSql.KEY;
        reviveDelete = "DELETE FROM " + table + " WHERE " + JournalSql.KEY;
        String columns = String.join(", ", JournalSql.DEAD_COLUMNS);
        selectAll = "SELECT " + columns + " FROM " + table + " ORDER BY retry_id, application, service_key, method"
                + " LIMIT ?";
        exists = "SELECT payload_crc, dead_at FROM " + table + " WHERE " + JournalSql.KEY;
        insert = "INSERT INTO " + table + " (" + columns + ") VALUES ("
                + String.join(", ", Collections.nCopies(JournalSql.DEAD_COLUMNS.size(), "?")) + ")";
    }

    /** @return the filter's conditions; ages against the database's clock */
    Where where(DeadLetterFilter f) {
        StringBuilder s = new StringBuilder();
        List<Object> params = new ArrayList<>();
        condition(s, params, "retry_id = ?", f.retryId());
        condition(s, params, "service_key = ?", f.serviceKey());
        condition(s, params, "method = ?", f.method());
        condition(s, params, "failure_class = ?", f.failureClass());
        condition(s, params, "dead_at <= " + now + " - ?", f.olderThan() == null ? null : f.olderThan().toMillis());
        condition(s, params, "dead_at >= " + now + " - ?", f.newerThan() == null ? null : f.newerThan().toMillis());
        return new Where(s.toString(), Collections.unmodifiableList(params));
    }

    private static void condition(StringBuilder s, List<Object> params, String sql, Object value) {
        if (value != null) {
            s.append(" AND ").append(sql);
            params.add(value);
        }
    }

    String list(Where w) {
        return "SELECT " + LISTED + " FROM " + table + " WHERE application = ?" + w.sql() + NEWEST_FIRST
                + " LIMIT ? OFFSET ?";
    }

    String countByService(Where w) {
        return "SELECT service_key, COUNT(*) FROM " + table + " WHERE application = ?" + w.sql()
                + " GROUP BY service_key";
    }

    String purge(Where w) {
        return "DELETE FROM " + table + " WHERE application = ?" + w.sql();
    }

    /** A page of dead letters to revive, of {@code services} services, oldest first, after a key. */
    String revivePage(Where w, int services) {
        return "SELECT " + String.join(", ", JournalSql.DEAD_COLUMNS) + " FROM " + table + " WHERE application = ?"
                + w.sql() + " AND service_key IN (" + String.join(", ", Collections.nCopies(services, "?")) + ")"
                + " AND (dead_at > ? OR dead_at = ? AND (service_key > ? OR service_key = ? AND (method > ? OR"
                + " method = ? AND retry_id > ?))) ORDER BY dead_at, service_key, method, retry_id LIMIT ?";
    }

    /** @return the listed row the result set is on */
    static DeadLetter listed(ResultSet rs) throws SQLException {
        int size = rs.getInt(11);
        boolean noPayload = rs.wasNull();
        return new DeadLetter(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getInt(5),
                rs.getLong(6), rs.getLong(7), rs.getString(9), rs.getString(10), rs.getString(8),
                noPayload ? 0 : size);
    }

    /** A whole dead letter ({@link JournalSql#DEAD_COLUMNS}) and the pending entry it would become. */
    record Row(DeadLetter letter, RetryJournalEntry entry) {
    }

    /** @return the whole row the result set is on; its entry is null if the payload is torn or corrupt */
    static Row whole(ResultSet rs) throws SQLException {
        byte[] payload = rs.getBytes(5);
        long crc = rs.getLong(6);
        boolean intact = payload != null && !rs.wasNull() && EntryRows.crc32(payload) == crc;
        DeadLetter l = new DeadLetter(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4),
                rs.getInt(7), rs.getLong(8), rs.getLong(9), rs.getString(11), rs.getString(12), rs.getString(10),
                payload == null ? 0 : payload.length);
        RetryJournalEntry e = intact ? new RetryJournalEntry(l.retryId(), l.application(), l.serviceKey(),
                l.method(), payload, 1, 0, l.lastProvider(), l.lastFailure(), l.firstFailureEpochMillis()) : null;
        return new Row(l, e);
    }
}
