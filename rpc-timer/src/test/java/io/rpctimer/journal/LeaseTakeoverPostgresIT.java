package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalEntry;
import io.rpctimer.retry.RetryJournalException;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static io.rpctimer.journal.Entries.APP;
import static io.rpctimer.journal.Entries.SVC;
import static io.rpctimer.journal.Entries.done;
import static io.rpctimer.journal.Entries.entry;
import static io.rpctimer.journal.Entries.key;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A survivor that claims all of a dead instance's calls of a service takes the dead instance's lease over instead of
 * writing each call (PostgreSQL): the calls are then the survivor's by the lease row, and the dead instance, should it
 * wake, can neither send nor add a call under its old owner id.
 */
@Timeout(180)
class LeaseTakeoverPostgresIT {

    private static final String OTHER_SVC = "group/io.rpctimer.Other:1.0";
    private static final AtomicInteger SCHEMAS = new AtomicInteger();
    private static EmbeddedPostgres postgres;
    private final List<JdbcRetryJournal> journals = new ArrayList<>();
    private final String prefix = "k" + SCHEMAS.incrementAndGet() + "_";

    @BeforeAll
    static void start() throws Exception {
        postgres = EmbeddedPostgres.builder().start();
    }

    @AfterAll
    static void stop() throws Exception {
        postgres.close();
    }

    @AfterEach
    void closeJournals() {
        journals.forEach(JdbcRetryJournal::close);
    }

    private JdbcRetryJournal journal(DataSource ds, String owner, Duration lease) throws RetryJournalException {
        JdbcRetryJournal j = JdbcRetryJournal.builder(ds).owner(owner).tablePrefix(prefix).lease(lease).build();
        journals.add(j);
        return j;
    }

    private static DataSource database() {
        return postgres.getPostgresDatabase();
    }

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
        long versions = rowVersions();
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
        assertEquals(1, number("SELECT count(*) FROM " + prefix + "call WHERE owner = 'paused~1' AND retry_id = ?",
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

    private static void appendToTwoServices(JdbcRetryJournal journal) throws RetryJournalException {
        for (int i = 0; i < 5; i++) {
            journal.append(entry("s" + i, i), false);
            journal.append(new RetryJournalEntry("o" + i, APP, OTHER_SVC, "greet",
                    ("payload-o" + i).getBytes(StandardCharsets.UTF_8), 1, i, null, null, 1_000L), false);
        }
    }

    private static List<String> ids(List<RetryJournalEntry> entries) {
        return entries.stream().map(RetryJournalEntry::retryId).toList();
    }

    /** @return the sum of the calls' row versions: it changes with every write of a call */
    private long rowVersions() throws SQLException {
        return number("SELECT coalesce(sum(xmin::text::bigint), 0) FROM " + prefix + "call", null);
    }

    private int calls(String owner) throws SQLException {
        return (int) number("SELECT count(*) FROM " + prefix + "call WHERE owner = ?", owner);
    }

    private String holder(String owner) throws SQLException {
        try (Connection c = database().getConnection();
             PreparedStatement st = c.prepareStatement("SELECT holder FROM " + prefix + "instance WHERE owner = ?")) {
            st.setString(1, owner);
            try (ResultSet rs = st.executeQuery()) {
                assertTrue(rs.next(), "no lease row of " + owner);
                return rs.getString(1);
            }
        }
    }

    private static long number(String query, String arg) throws SQLException {
        try (Connection c = database().getConnection(); PreparedStatement st = c.prepareStatement(query)) {
            if (arg != null) {
                st.setString(1, arg);
            }
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
