package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournalException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Runs a journal's work that is not a group-commit write (claims, unparks, releases, dead-letter operations) on a
 * connection of its own, in READ COMMITTED, each statement bounded by the claim timeout, again when the database
 * aborted it to break a deadlock or a serialization conflict (SQLState class 40), and turns any other failure into a
 * {@link RetryJournalException} naming the store.
 *
 * <p>In READ COMMITTED, each statement sees what other transactions committed before it. Work that pages through
 * rows, under MySQL's default REPEATABLE READ, would read every page from the snapshot of the first: work that lost a
 * page's rows to another instance would read the same page again, and again.
 *
 * <p><b>Threading:</b> thread-safe; each run has its own connection, on the calling thread.
 */
final class Transactions {

    private static final int ATTEMPTS = 3;

    /** Work on one connection (autocommit off): it commits what it wants kept; the rest is rolled back. */
    interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    private final DataSource dataSource;
    private final String storeName;
    private final int timeoutSeconds;

    Transactions(DataSource dataSource, String storeName, int timeoutSeconds) {
        this.dataSource = dataSource;
        this.storeName = storeName;
        this.timeoutSeconds = timeoutSeconds;
    }

    /**
     * @param what what the work does, for the error: "claim of ...", "purge of dead letters"
     * @throws RetryJournalException naming the store and {@code what}, if the store failed
     */
    <T> T run(String what, Work<T> work) throws RetryJournalException {
        for (int attempt = 1; ; attempt++) {
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(false);
                c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                return work.run(c);
            } catch (SQLException e) {
                String state = e.getSQLState();
                if (attempt == ATTEMPTS || state == null || !state.startsWith("40")) {
                    throw new RetryJournalException(storeName + ": " + what + " failed: " + e, e);
                }
            }
        }
    }

    /** @return a statement that gives up after the claim timeout: no operation waits forever on the store */
    PreparedStatement prepare(Connection c, String text) throws SQLException {
        PreparedStatement st = c.prepareStatement(text);
        st.setQueryTimeout(timeoutSeconds);
        return st;
    }
}
