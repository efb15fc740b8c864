package io.rpctimer.journal;

import io.rpctimer.retry.CallKey;
import io.rpctimer.retry.RetryJournalEntry;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * One page of a service's parked entries owned by one instance, earliest due first: the entries that read back
 * intact, and the rows that did not (torn, or a payload that does not match its CRC32).
 *
 * <p><b>Threading:</b> immutable once read.
 *
 * @param entries the intact entries
 * @param corrupt the rows to quarantine, with why
 * @param rows    how many rows the page held in all; fewer than asked means none is left
 */
record ParkedPage(List<RetryJournalEntry> entries, List<Corrupt> corrupt, int rows, Key last) {

    /** Where a page ends in the claim order (due_at, retry_id, method): the next page starts after it. */
    record Key(long dueAt, String retryId, String method) {
        static final Key FIRST = new Key(Long.MIN_VALUE, "", "");
    }

    /** A row that did not read back. */
    record Corrupt(CallKey key, String reason) {
    }

    /** @param st {@link JournalSql#selectParked}, prepared */
    static ParkedPage read(PreparedStatement st, String owner, String runId, String application, String serviceKey,
                           Key after, int limit) throws SQLException {
        List<RetryJournalEntry> entries = new ArrayList<>(Math.min(limit, 4096));
        List<Corrupt> corrupt = new ArrayList<>();
        int rows = 0;
        Key last = after;
        st.setString(1, application);
        st.setString(2, serviceKey);
        st.setString(3, owner);
        st.setString(4, runId);
        st.setLong(5, after.dueAt());
        st.setLong(6, after.dueAt());
        st.setString(7, after.retryId());
        st.setString(8, after.retryId());
        st.setString(9, after.method());
        st.setInt(10, limit);
        st.setFetchSize(Math.min(limit, 1000));
        try (ResultSet rs = st.executeQuery()) {
            while (rs.next()) {
                rows++;
                last = new Key(rs.getLong(8), rs.getString(4), rs.getString(3));
                try {
                    entries.add(EntryRows.read(rs, runId));
                } catch (EntryRows.CorruptRowException e) {
                    corrupt.add(new Corrupt(EntryRows.key(rs), e.getMessage()));
                }
            }
        }
        return new ParkedPage(entries, corrupt, rows, last);
    }
}
