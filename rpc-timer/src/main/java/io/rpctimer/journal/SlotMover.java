package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournalException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Moves every entry of an abandoned embedded slot file into the live one, a page at a time: copy the page into the
 * target (skipping retry ids it already has), commit the target, then delete the page from the source and commit
 * it. A crash between the two commits leaves the page in both files; the next move skips what the target has and
 * deletes the rest, so nothing is lost and nothing doubles. Rows are copied column by column without being
 * decoded: a corrupt row is found, named and quarantined when it is claimed, as in any journal.
 *
 * <p><b>Threading:</b> stateless; the caller holds the source file open exclusively.
 */
final class SlotMover {

    private static final int PAGE_ROWS = 1000;
    private static final int OWNER_COLUMN = JournalSql.ENTRY_COLUMNS.indexOf("owner");
    private static final int PARKED_COLUMN = JournalSql.ENTRY_COLUMNS.indexOf("parked");
    private static final int RUN_COLUMN = JournalSql.ENTRY_COLUMNS.indexOf("run_id");

    private SlotMover() {
    }

    /** @return how many rows were copied into the target */
    static int move(Connection from, DataSource target, String owner, String fromName)
            throws RetryJournalException {
        JournalSql sql = new JournalSql(JournalDialect.H2, "rpctimer_");
        int copied = 0;
        try (Connection to = target.getConnection()) {
            from.setAutoCommit(false);
            to.setAutoCommit(false);
            sql.createSchema(from);
            from.commit();
            List<Object[]> page;
            while (!(page = readPage(from, sql)).isEmpty()) {
                copied += copy(to, sql, page, owner);
                to.commit();
                delete(from, sql, page);
                from.commit();
            }
        } catch (SQLException e) {
            throw new RetryJournalException("retry journal " + fromName + ": cannot adopt its entries: " + e, e);
        }
        if (copied > 0) {
            System.getLogger(SlotMover.class.getName()).log(System.Logger.Level.INFO,
                    "retry journal {0}: its process is gone; {1} entries adopted by {2}", fromName, copied, owner);
        }
        return copied;
    }

    private static List<Object[]> readPage(Connection from, JournalSql sql) throws SQLException {
        List<Object[]> page = new ArrayList<>();
        try (PreparedStatement st = from.prepareStatement(sql.selectAll)) {
            st.setInt(1, PAGE_ROWS);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    Object[] row = new Object[JournalSql.ENTRY_COLUMNS.size()];
                    for (int i = 0; i < row.length; i++) {
                        row[i] = rs.getObject(i + 1);
                    }
                    page.add(row);
                }
            }
        }
        return page;
    }

    private static int copy(Connection to, JournalSql sql, List<Object[]> page, String owner) throws SQLException {
        int copied = 0;
        try (PreparedStatement exists = to.prepareStatement(sql.exists);
             PreparedStatement insert = to.prepareStatement(sql.upsert)) {
            for (Object[] row : page) {
                exists.setObject(1, row[0]);
                try (ResultSet rs = exists.executeQuery()) {
                    if (rs.next()) {
                        continue;
                    }
                }
                row[OWNER_COLUMN] = owner;
                row[PARKED_COLUMN] = Boolean.TRUE;
                row[RUN_COLUMN] = null;
                for (int i = 0; i < row.length; i++) {
                    insert.setObject(i + 1, row[i]);
                }
                insert.addBatch();
                copied++;
            }
            insert.executeBatch();
        }
        return copied;
    }

    private static void delete(Connection from, JournalSql sql, List<Object[]> page) throws SQLException {
        try (PreparedStatement st = from.prepareStatement(sql.deleteOne)) {
            for (Object[] row : page) {
                st.setObject(1, row[0]);
                st.addBatch();
            }
            st.executeBatch();
        }
    }
}
