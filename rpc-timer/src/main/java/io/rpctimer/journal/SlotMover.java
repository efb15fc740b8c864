package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournalException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Moves every call and every dead letter of an abandoned embedded slot file into the live one, a page at a time:
 * copy the page into the target, commit the target, then delete the copied rows from the source and commit it. A
 * crash between the two commits leaves rows in both files; the next move finds each in the target (the same key,
 * payload checksum and creation time) and deletes it from the source, so nothing is lost and nothing doubles. A row
 * whose key the target holds for a different call (a business key used by two processes at once) is not copied and
 * not deleted: it stays in the source, named in a log line, and moves once the target's call has ended. Rows are
 * copied column by column without being decoded: a corrupt row is found, named and quarantined when it is claimed,
 * as in any journal.
 *
 * <p><b>Threading:</b> stateless; the caller holds the source file open exclusively.
 */
final class SlotMover {

    private static final int PAGE_ROWS = 1000;
    private static final int OWNER_COLUMN = JournalSql.CALL_COLUMNS.indexOf("owner");
    private static final int PARKED_COLUMN = JournalSql.CALL_COLUMNS.indexOf("parked");
    private static final int RUN_COLUMN = JournalSql.CALL_COLUMNS.indexOf("run_id");

    /**
     * One table whose rows move: its whole-row statements, which two columns tell one call from another of the same
     * key (the payload's CRC32 and when the row was made), and what a row becomes in the target.
     */
    private record Table(String what, String selectAll, String exists, String insert, String deleteOne, int crcColumn,
                         int madeColumn, Consumer<Object[]> adopt) {
    }

    private SlotMover() {
    }

    /** @return how many rows (pending calls and dead letters) were copied into the target */
    static int move(Connection from, DataSource target, String owner, String fromName)
            throws RetryJournalException {
        JournalSql sql = new JournalSql(JournalDialect.H2, "rpctimer_");
        DeadLetterSql dead = new DeadLetterSql(sql);
        Table calls = new Table("calls", sql.selectAll, sql.exists, sql.insert, sql.deleteOne,
                JournalSql.CALL_COLUMNS.indexOf("payload_crc"), JournalSql.CALL_COLUMNS.indexOf("created_at"), row -> {
                    row[OWNER_COLUMN] = owner;
                    row[PARKED_COLUMN] = Boolean.TRUE;
                    row[RUN_COLUMN] = null;
                });
        Table deadLetters = new Table("dead letters", dead.selectAll, dead.exists, dead.insert, dead.reviveDelete,
                JournalSql.DEAD_COLUMNS.indexOf("payload_crc"), JournalSql.DEAD_COLUMNS.indexOf("dead_at"), row -> { });
        int copied = 0;
        try (Connection to = target.getConnection()) {
            from.setAutoCommit(false);
            to.setAutoCommit(false);
            sql.createSchema(from);
            sql.migrateEarlierTables(from, "rpctimer_");
            from.commit();
            copied += move(from, to, calls, fromName);
            copied += move(from, to, deadLetters, fromName);
        } catch (SQLException e) {
            throw new RetryJournalException("retry journal " + fromName + ": cannot adopt its calls: " + e, e);
        }
        if (copied > 0) {
            System.getLogger(SlotMover.class.getName()).log(System.Logger.Level.INFO,
                    "retry journal {0}: its process is gone; {1} calls and dead letters adopted by {2}", fromName,
                    copied, owner);
        }
        return copied;
    }

    private static int move(Connection from, Connection to, Table table, String fromName) throws SQLException {
        int copied = 0;
        int kept = 0;
        int offset = 0;
        List<Object[]> page;
        while (!(page = readPage(from, table, offset)).isEmpty()) {
            List<Object[]> done = new ArrayList<>(page.size());
            copied += copy(to, table, page, done, fromName);
            to.commit();
            delete(from, table, done);
            from.commit();
            kept += page.size() - done.size();
            offset = kept; // rows kept in the source come first in the next read: skip them
        }
        return copied;
    }

    private static List<Object[]> readPage(Connection from, Table table, int offset) throws SQLException {
        List<Object[]> page = new ArrayList<>();
        try (PreparedStatement st = from.prepareStatement(table.selectAll() + " OFFSET ?")) {
            st.setInt(1, PAGE_ROWS);
            st.setInt(2, offset);
            try (ResultSet rs = st.executeQuery()) {
                int columns = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    Object[] row = new Object[columns];
                    for (int i = 0; i < row.length; i++) {
                        row[i] = rs.getObject(i + 1);
                    }
                    page.add(row);
                }
            }
        }
        return page;
    }

    /**
     * Copies the rows the target does not hold yet; adds to {@code done} every row the source may drop (copied now,
     * or copied by an earlier move cut short).
     */
    private static int copy(Connection to, Table table, List<Object[]> page, List<Object[]> done, String fromName)
            throws SQLException {
        int copied = 0;
        try (PreparedStatement exists = to.prepareStatement(table.exists());
             PreparedStatement insert = to.prepareStatement(table.insert())) {
            for (Object[] row : page) {
                bindKey(exists, row);
                try (ResultSet rs = exists.executeQuery()) {
                    if (rs.next()) {
                        if (sameRow(rs, row, table)) {
                            done.add(row);
                        } else {
                            System.getLogger(SlotMover.class.getName()).log(System.Logger.Level.WARNING,
                                    "retry journal {0}: retry.id={1} of {2}.{3}() is in this slot''s {4} for another"
                                            + " call; kept in {0} until that one ends", fromName, row[3], row[1],
                                    row[2], table.what());
                        }
                        continue;
                    }
                }
                table.adopt().accept(row);
                for (int i = 0; i < row.length; i++) {
                    insert.setObject(i + 1, row[i]);
                }
                insert.addBatch();
                done.add(row);
                copied++;
            }
            insert.executeBatch();
        }
        return copied;
    }

    private static boolean sameRow(ResultSet held, Object[] row, Table table) throws SQLException {
        return java.util.Objects.equals(held.getObject(1), row[table.crcColumn()])
                && java.util.Objects.equals(held.getObject(2), row[table.madeColumn()]);
    }

    private static void bindKey(PreparedStatement st, Object[] row) throws SQLException {
        for (int i = 0; i < 4; i++) {
            st.setObject(i + 1, row[i]);
        }
    }

    private static void delete(Connection from, Table table, List<Object[]> rows) throws SQLException {
        try (PreparedStatement st = from.prepareStatement(table.deleteOne())) {
            for (Object[] row : rows) {
                bindKey(st, row);
                st.addBatch();
            }
            st.executeBatch();
        }
    }
}
