package io.rpctimer.journal;

import io.rpctimer.retry.CallKey;
import io.rpctimer.retry.RetryJournalEntry;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.zip.CRC32;

/**
 * Converts between {@link RetryJournalEntry} and the columns of {@link JournalSql#CALL_COLUMNS}, and checks a read
 * row: every field present and the payload's CRC32 matching.
 *
 * <p><b>Threading:</b> stateless.
 */
final class EntryRows {

    private EntryRows() {
    }

    /** A row that cannot be turned back into an entry: torn, or its payload changed since it was written. */
    static final class CorruptRowException extends Exception {
        private static final long serialVersionUID = 1L;

        CorruptRowException(String message) {
            super(message);
        }
    }

    static long crc32(byte[] payload) {
        CRC32 crc = new CRC32();
        crc.update(payload);
        return crc.getValue();
    }

    /**
     * @throws IllegalArgumentException if a field does not fit its column, or a required one is missing
     */
    static void check(RetryJournalEntry e) {
        checkKey(e.key());
        if (e.payload() == null) {
            throw new IllegalArgumentException("payload: null (expected: the serialized call)");
        }
        if (e.attempt() < 1) {
            throw new IllegalArgumentException("attempt: " + e.attempt() + " (expected: >= 1)");
        }
    }

    /** @throws IllegalArgumentException if a part of the key does not fit its column */
    static void checkKey(CallKey key) {
        checkService(key.application(), key.serviceKey());
        checkText("method", key.method(), JournalSql.METHOD_CHARS, true);
        checkText("retryId", key.retryId(), JournalSql.ID_CHARS, true);
    }

    static void checkService(String application, String serviceKey) {
        checkText("application", application, JournalSql.APP_CHARS, true);
        checkText("serviceKey", serviceKey, JournalSql.SERVICE_CHARS, true);
    }

    static void checkText(String name, String value, int maxChars, boolean required) {
        if (value == null ? required : value.isEmpty() || value.length() > maxChars) {
            throw new IllegalArgumentException(name + ": " + (value == null ? "null" : "'" + value + "'")
                    + " (expected: 1 to " + maxChars + " characters)");
        }
    }

    /** @return {@code text} cut to {@code maxChars}: failure texts are bounded here whatever the caller sends */
    static String bounded(String text, int maxChars) {
        return text == null || text.length() <= maxChars ? text : text.substring(0, maxChars);
    }

    /** Binds the four parameters of {@link JournalSql#KEY} from parameter {@code first} on. @return the next one */
    static int bindKey(PreparedStatement st, int first, CallKey key) throws SQLException {
        st.setString(first, key.application());
        st.setString(first + 1, key.serviceKey());
        st.setString(first + 2, key.method());
        st.setString(first + 3, key.retryId());
        return first + 4;
    }

    /** Binds every column of {@link JournalSql#insert}. */
    static void bind(PreparedStatement st, RetryJournalEntry e, String owner, boolean parked, String runId)
            throws SQLException {
        int i = bindKey(st, 1, e.key());
        st.setBytes(i, e.payload());
        st.setLong(i + 1, crc32(e.payload()));
        st.setInt(i + 2, e.attempt());
        st.setLong(i + 3, e.dueEpochMillis());
        st.setString(i + 4, bounded(e.lastProvider(), JournalSql.PROVIDER_CHARS));
        st.setString(i + 5, bounded(e.lastFailure(), JournalSql.FAILURE_CHARS));
        st.setLong(i + 6, e.createdEpochMillis());
        st.setString(i + 7, owner);
        st.setBoolean(i + 8, parked);
        st.setBoolean(i + 9, false);
        st.setString(i + 10, runId);
    }

    /** @return the key of the row the result set is on (a whole row, in {@link JournalSql#CALL_COLUMNS} order) */
    static CallKey key(ResultSet rs) throws SQLException {
        return new CallKey(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4));
    }

    /**
     * Reads the row the result set is on (a whole row, in {@link JournalSql#CALL_COLUMNS} order).
     *
     * @param runId this run's id: a row parked by this run is handed out {@code parkedHere}
     * @throws CorruptRowException   if a field is missing or the payload does not match its CRC32
     * @throws SQLException          if the driver cannot read the row
     */
    static RetryJournalEntry read(ResultSet rs, String runId) throws SQLException, CorruptRowException {
        byte[] payload = rs.getBytes(5);
        long crc = rs.getLong(6);
        boolean crcMissing = rs.wasNull();
        int attempt = rs.getInt(7);
        boolean attemptMissing = rs.wasNull();
        long created = rs.getLong(11);
        if (payload == null || crcMissing || attemptMissing || rs.wasNull()) {
            throw new CorruptRowException("torn row: a required column is null");
        }
        if (crc32(payload) != crc) {
            throw new CorruptRowException("payload CRC32 " + crc32(payload) + " does not match the stored " + crc);
        }
        boolean parkedHere = rs.getBoolean(13) && runId.equals(rs.getString(15));
        return new RetryJournalEntry(rs.getString(4), rs.getString(1), rs.getString(2), rs.getString(3), payload,
                attempt, rs.getLong(8), rs.getString(9), rs.getString(10), created, parkedHere);
    }
}
