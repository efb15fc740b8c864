package io.rpctimer.journal;

import io.rpctimer.retry.CallKey;
import io.rpctimer.retry.RetryJournalEntry;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * One page of a service's parked entries owned by one instance, earliest due first: the entries that read back
 * intact, and the rows that did not (torn, or a payload that does not match its CRC32).
 *
 * <p><b>Threading:</b> immutable once read.
 *
 * @param entries     the intact entries
 * @param corrupt     the rows to quarantine, with why
 * @param rows        how many rows the page held in all; fewer than asked means none is left
 * @param last        the last row's place in the claim order
 * @param earlierRun  read by {@link HandOutMarks}: which of {@code entries} (by index) an earlier run of the owner
 *                    left, to be handed out without a write; else none
 * @param lastEarlier the place of the last of {@code earlierRun}, or null if it is empty
 */
record ParkedPage(List<RetryJournalEntry> entries, List<Corrupt> corrupt, int rows, Key last, BitSet earlierRun,
                  Key lastEarlier) {

    /** A run id no row carries: a page bound with it skips no call as scheduled. */
    static final String NO_RUN = "";

    /** Where a page ends in the claim order (due_at, retry_id, method): the next page starts after it. */
    record Key(long dueAt, String retryId, String method) {
        static final Key FIRST = new Key(Long.MIN_VALUE, "", "");
    }

    /** A row that did not read back. */
    record Corrupt(CallKey key, String reason) {
    }

    /**
     * @param st          {@link JournalSql#selectParked} or {@link JournalSql#selectAdoptable}, prepared; with
     *                    {@code marks}, {@link JournalSql#selectOwn} of a marked journal
     * @param scheduledBy the run whose scheduled calls the page skips: this run for calls it holds, {@link #NO_RUN}
     *                    for a dead owner's (one this run held once may be in memory only as a stale copy)
     * @param marks       this run's marks, to read this instance's calls past them; else null
     */
    static ParkedPage read(PreparedStatement st, String owner, String scheduledBy, String runId, HandOutMarks marks,
                           String application, String serviceKey, Key after, int limit) throws SQLException {
        bind(st, owner, scheduledBy, marks, application, serviceKey, after, limit);
        try (ResultSet rs = st.executeQuery()) {
            return read(rs, runId, marks, after, limit);
        }
    }

    /**
     * Binds the parameters of a page's SELECT, the first of {@code st}'s.
     *
     * @return the index of the next parameter
     */
    static int bind(PreparedStatement st, String owner, String scheduledBy, HandOutMarks marks, String application,
                    String serviceKey, Key after, int limit) throws SQLException {
        st.setString(1, application);
        st.setString(2, serviceKey);
        st.setString(3, owner);
        int i = 4;
        if (marks != null) {
            i = marks.bindPast(st, i, application, serviceKey);
        } else {
            st.setString(i++, scheduledBy);
        }
        st.setLong(i, after.dueAt());
        st.setLong(i + 1, after.dueAt());
        st.setString(i + 2, after.retryId());
        st.setString(i + 3, after.retryId());
        st.setString(i + 4, after.method());
        st.setInt(i + 5, limit);
        st.setFetchSize(Math.min(limit, 1000));
        return i + 6;
    }

    /** Reads a page's rows, in claim order, the call columns in {@link JournalSql#CALL_COLUMNS}' order. */
    static ParkedPage read(ResultSet rs, String runId, HandOutMarks marks, Key after, int limit)
            throws SQLException {
        List<RetryJournalEntry> entries = new ArrayList<>(Math.min(limit, 4096));
        List<Corrupt> corrupt = new ArrayList<>();
        BitSet earlierRun = new BitSet();
        Key lastEarlier = null;
        int rows = 0;
        Key last = after;
        while (rs.next()) {
            rows++;
            last = new Key(rs.getLong(8), rs.getString(4), rs.getString(3));
            RetryJournalEntry entry;
            try {
                entry = EntryRows.read(rs, runId);
            } catch (EntryRows.CorruptRowException e) {
                corrupt.add(new Corrupt(EntryRows.key(rs), e.getMessage()));
                continue;
            }
            if (marks != null && marks.earlierRun(rs.getString(15))) {
                earlierRun.set(entries.size());
                lastEarlier = last;
            }
            entries.add(entry);
        }
        return new ParkedPage(entries, corrupt, rows, last, earlierRun, lastEarlier);
    }
}
