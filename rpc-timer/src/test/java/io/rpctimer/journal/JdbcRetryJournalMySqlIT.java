package io.rpctimer.journal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The {@link SharedDatabaseJournalContract} in the journal's MySQL dialect: a real MariaDB 10.11 server
 * ({@link EmbeddedMariaDb}) through MySQL's own JDBC driver, which reports it as MySQL.
 */
class JdbcRetryJournalMySqlIT extends SharedDatabaseJournalContract {

    private static EmbeddedMariaDb mariaDb;

    @BeforeAll
    static void start() throws Exception {
        mariaDb = EmbeddedMariaDb.start();
    }

    @AfterAll
    static void stop() throws Exception {
        mariaDb.close();
    }

    @Override
    DataSource database() {
        return mariaDb.dataSource();
    }

    @Override
    void lock(Connection c, String table) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("LOCK TABLES " + table + " WRITE");
        }
    }

    @Override
    void unlock(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("UNLOCK TABLES");
        }
    }
}
