package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournalEntry;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.zip.CRC32;

/**
 * Converts between {@link RetryJournalEntry} and the columns of {@link JournalSql#ENTRY_COLUMNS}, and checks a read
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
        checkText("retryId", e.retryId(), JournalSql.ID_CHARS, true);
        checkText("application", e.application(), JournalSql.NAME_CHARS, true);
        checkText("serviceKey", e.serviceKey(), JournalSql.NAME_CHARS, true);
        checkText("method", e.method(), JournalSql.NAME_CHARS, true);
        if (e.payload() == null) {
            throw new IllegalArgumentException("payload: null (expected: the serialized call)");
        }
        if (e.attempt() < 1) {
            throw new IllegalArgumentException("attempt: " + e.attempt() + " (expected: >= 1)");
        }
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

    /** Binds every column of {@link JournalSql#upsert}. */
    static void bind(PreparedStatement st, RetryJournalEntry e, String owner, boolean parked, String runId)
            throws SQLException {
        st.setString(1, e.retryId());
        st.setString(2, e.application());
        st.setString(3, e.serviceKey());
        st.setString(4, e.method());
        st.setBytes(5, e.payload());
        st.setLong(6, crc32(e.payload()));
        st.setInt(7, e.attempt());
        st.setLong(8, e.dueEpochMillis());
        st.setString(9, bounded(e.lastProvider(), JournalSql.PROVIDER_CHARS));
        st.setString(10, bounded(e.lastFailure(), JournalSql.FAILURE_CHARS));
        st.setLong(11, e.createdEpochMillis());
        st.setString(12, owner);
        st.setBoolean(13, parked);
        st.setBoolean(14, false);
        st.setString(15, runId);
    }

    /**
     * Reads the row the result set is on.
     *
     * @throws CorruptRowException   if a field is missing or the payload does not match its CRC32
     * @throws SQLException          if the driver cannot read the row
     */
    static RetryJournalEntry read(ResultSet rs) throws SQLException, CorruptRowException {
        String method = rs.getString(4);
        byte[] payload = rs.getBytes(5);
        long crc = rs.getLong(6);
        boolean crcMissing = rs.wasNull();
        int attempt = rs.getInt(7);
        boolean attemptMissing = rs.wasNull();
        long created = rs.getLong(11);
        if (method == null || payload == null || crcMissing || attemptMissing || rs.wasNull()) {
            throw new CorruptRowException("torn row: a required column is null");
        }
        if (crc32(payload) != crc) {
            throw new CorruptRowException("payload CRC32 " + crc32(payload) + " does not match the stored " + crc);
        }
        return new RetryJournalEntry(rs.getString(1), rs.getString(2), rs.getString(3), method, payload, attempt,
                rs.getLong(8), rs.getString(9), rs.getString(10), created);
    }
}
