package io.rpctimer.journal;

import static io.rpctimer.journal.Entries.APP;
import static io.rpctimer.journal.Entries.SVC;
import static io.rpctimer.journal.Entries.done;
import static io.rpctimer.journal.Entries.entry;
import static io.rpctimer.journal.Entries.key;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.Abandonment;
import io.rpctimer.retry.DeadLetter;
import io.rpctimer.retry.DeadLetterFilter;
import io.rpctimer.retry.DeadLetterPage;
import io.rpctimer.retry.DeadLetterStore;
import io.rpctimer.retry.RetryJournalEntry;
import io.rpctimer.retry.RetryJournalException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A JDBC journal's dead letters on H2: the bury that moves a call in one write (and never one another instance
 * adopted), listing and filters, purge that never touches a pending call, the bounds, revivers racing for the same
 * dead letters, a store that is down, and the embedded slots' move.
 */
@Timeout(120)
class JdbcDeadLettersTest {

    private static final Abandonment DOWN = new Abandonment(3, "10.0.0.7:20880", "java.io.IOException: down",
            "java.io.IOException");

    private JdbcDataSource database;
    private final List<JdbcRetryJournal> journals = new ArrayList<>();

    @BeforeEach
    void start() {
        database = new JdbcDataSource();
        database.setURL("jdbc:h2:mem:dead-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    }

    @AfterEach
    void stop() {
        journals.forEach(JdbcRetryJournal::close);
    }

    private JdbcRetryJournal journal(javax.sql.DataSource ds, String owner) throws RetryJournalException {
        JdbcRetryJournal j = JdbcRetryJournal.builder(ds).owner(owner).lease(Duration.ZERO).build();
        journals.add(j);
        return j;
    }

    private JdbcRetryJournal buried(String owner, String... ids) throws Exception {
        JdbcRetryJournal j = journal(database, owner);
        for (String id : ids) {
            j.append(entry(id, 1_000), false);
            assertTrue(done(j.bury(key(id), DOWN)), id);
        }
        return j;
    }

    /** @return r0, r1, ... r(n-1) */
    private static String[] numbered(int n) {
        return java.util.stream.IntStream.range(0, n).mapToObj(i -> "r" + i).toArray(String[]::new);
    }

    private static List<String> ids(DeadLetterPage page) {
        return page.letters().stream().map(DeadLetter::retryId).toList();
    }

    private long rows(String table) throws SQLException {
        try (Connection c = database.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Sets when each dead letter died, epoch ms: the bounds and ages are judged against it. */
    private void diedAt(String retryId, long epochMillis) throws SQLException {
        try (Connection c = database.getConnection();
             PreparedStatement st = c.prepareStatement(
                     "UPDATE rpctimer_dead_letter SET dead_at = ? WHERE retry_id = ?")) {
            st.setLong(1, epochMillis);
            st.setString(2, retryId);
            assertEquals(1, st.executeUpdate());
        }
    }

    @Test
    void aBuryMovesTheCallIntoTheDeadLettersWithHowItEnded() throws Exception {
        JdbcRetryJournal j = buried("a", "r1");

        DeadLetterPage page = j.deadLetters().list(APP, DeadLetterFilter.all(), 1, 10);
        assertEquals(1, page.total());
        DeadLetter d = page.letters().get(0);
        assertEquals(key("r1"), d.key());
        assertEquals(3, d.attempts());
        assertEquals("10.0.0.7:20880", d.lastProvider());
        assertEquals("java.io.IOException: down", d.lastFailure());
        assertEquals("java.io.IOException", d.failureClass());
        assertEquals(1_000, d.firstFailureEpochMillis());
        assertTrue(Math.abs(System.currentTimeMillis() - d.lastFailureEpochMillis()) < 60_000, "the database's now");
        assertEquals("payload-r1".length(), d.payloadBytes());
        assertEquals(0, rows("rpctimer_call"), "moved, not copied");
        assertTrue(j.deadLetters().durable());
    }

    @Test
    void aCallAnotherInstanceAdoptedIsNotBuriedByTheInstanceThatLostIt() throws Exception {
        JdbcRetryJournal a = journal(database, "a");
        JdbcRetryJournal b = journal(database, "b");
        a.append(entry("r1", 1_000), false);
        a.release(List.of(key("r1"))); // as seen from the database, a gave the call up; b adopts it
        assertEquals(1, b.claim(APP, SVC, 10).size());

        assertFalse(done(a.bury(key("r1"), DOWN)));

        assertEquals(0, rows("rpctimer_dead_letter"));
        assertTrue(done(b.remove(key("r1"))), "b still holds its call");
    }

    @Test
    void aNewerDeadLetterOfTheSameKeyReplacesTheOlder() throws Exception {
        JdbcRetryJournal j = buried("a", "r1");
        j.append(entry("r1", 2_000), false); // the business key fails again
        assertTrue(done(j.bury(key("r1"), new Abandonment(5, null, null, null))));

        DeadLetterPage page = j.deadLetters().list(APP, DeadLetterFilter.all(), 1, 10);
        assertEquals(1, page.total());
        assertEquals(5, page.letters().get(0).attempts());
        assertNull(page.letters().get(0).failureClass());
    }

    @Test
    void listingFiltersByServiceMethodFailureAndAgeNewestFirstInPages() throws Exception {
        JdbcRetryJournal j = buried("a", "r0", "r1", "r2", "r3");
        long now = System.currentTimeMillis();
        for (int i = 0; i < 4; i++) {
            diedAt("r" + i, now - (4 - i) * 60_000L); // r0 died 4 minutes ago, r3 one
        }
        DeadLetterStore dead = j.deadLetters();

        assertEquals(List.of("r3", "r2"), ids(dead.list(APP, DeadLetterFilter.all(), 1, 2)));
        DeadLetterPage second = dead.list(APP, DeadLetterFilter.all(), 2, 2);
        assertEquals(List.of("r1", "r0"), ids(second));
        assertEquals(4, second.total());
        assertEquals(List.of("r1", "r0"), ids(dead.list(APP, DeadLetterFilter.all().olderThan(Duration.ofSeconds(150)),
                1, 10)));
        assertEquals(List.of("r3"), ids(dead.list(APP, DeadLetterFilter.all().newerThan(Duration.ofSeconds(90)), 1,
                10)));
        DeadLetterFilter exact = DeadLetterFilter.all().service(SVC).method("greet")
                .failureClass("java.io.IOException");
        assertEquals(4, dead.list(APP, exact, 1, 10).total());
        assertEquals(0, dead.list(APP, exact.method("other"), 1, 10).total());
        assertEquals(0, dead.list("another-app", DeadLetterFilter.all(), 1, 10).total(), "scoped by application");
        assertEquals(Map.of(SVC, 4L), dead.count(APP, DeadLetterFilter.all()));
        assertEquals(List.of("r2"), ids(dead.list(APP, DeadLetterFilter.retryId("r2"), 1, 10)));
    }

    @Test
    void aPurgeNeverTouchesAPendingCall() throws Exception {
        JdbcRetryJournal j = buried("a", "r1", "r2");
        j.append(entry("r1", 2_000), false); // pending again, with the same key as its dead letter

        assertEquals(1, j.deadLetters().purge(APP, DeadLetterFilter.retryId("r1")));
        assertEquals(1, j.deadLetters().purge(APP, DeadLetterFilter.all()));

        assertEquals(0, rows("rpctimer_dead_letter"));
        assertEquals(1, rows("rpctimer_call"));
        assertTrue(done(j.remove(key("r1"))), "the pending r1 is untouched");
    }

    @Test
    void aTrimDropsThoseOlderThanTheRetentionThenTheOldestPastTheMaximum() throws Exception {
        String[] ids = numbered(10);
        JdbcRetryJournal j = buried("a", ids);
        long now = System.currentTimeMillis();
        for (int i = 0; i < ids.length; i++) {
            diedAt(ids[i], now - (10 - i) * 60_000L); // r0 died 10 minutes ago ... r9 one
        }

        DeadLetterStore.Trimmed t = j.deadLetters().trim(APP, TimeUnit.SECONDS.toMillis(330), 3);

        assertEquals(5, t.expired(), "r0..r4 are older than 5.5 minutes");
        assertEquals(2, t.dropped(), "r5 and r6: the oldest past 3");
        assertEquals(3, t.remaining());
        assertEquals(List.of("r9", "r8", "r7"), ids(j.deadLetters().list(APP, DeadLetterFilter.all(), 1, 10)));
        assertEquals(new DeadLetterStore.Trimmed(0, 0, 3), j.deadLetters().trim(APP, 3_600_000, 3));
    }

    @Test
    void aTrimDropsExactlyToTheMaximumWhenDeadLettersDiedInTheSameMillisecond() throws Exception {
        JdbcRetryJournal j = buried("a", "r0", "r1", "r2", "r3", "r4");
        for (int i = 0; i < 5; i++) {
            diedAt("r" + i, 1_700_000_000_000L);
        }

        assertEquals(3, j.deadLetters().trim(APP, Long.MAX_VALUE / 4, 2).dropped());
        assertEquals(2, rows("rpctimer_dead_letter"));
    }

    @Test
    void eachDeadLetterIsRevivedOnceWhileFourRevivesOfTwoInstancesRace() throws Exception {
        String[] ids = numbered(600);
        JdbcRetryJournal a = buried("a", ids);
        JdbcRetryJournal b = journal(database, "b");
        ExecutorService pool = Executors.newFixedThreadPool(4);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<DeadLetterStore.Revived>> revives = new ArrayList<>();
        try {
            for (DeadLetterStore store : List.of(a.deadLetters(), a.deadLetters(), b.deadLetters(), b.deadLetters())) {
                revives.add(pool.submit(() -> {
                    go.await();
                    return store.revive(APP, DeadLetterFilter.all(), Set.of(SVC), (l, p) -> 5_000);
                }));
            }
            go.countDown();
            long revived = 0;
            for (Future<DeadLetterStore.Revived> f : revives) {
                DeadLetterStore.Revived r = f.get(90, TimeUnit.SECONDS);
                assertNull(r.failure());
                revived += r.total();
            }
            assertEquals(ids.length, revived, "each dead letter revived by exactly one");
        } finally {
            pool.shutdownNow();
        }
        assertEquals(0, rows("rpctimer_dead_letter"));
        assertEquals(ids.length, rows("rpctimer_call"));
        List<RetryJournalEntry> handedOut = new ArrayList<>(a.unpark(APP, SVC, 1_000));
        handedOut.addAll(b.unpark(APP, SVC, 1_000));
        assertEquals(ids.length, handedOut.size(), "each is a parked call of the instance that revived it");
        assertTrue(handedOut.stream().allMatch(e -> e.attempt() == 1 && e.dueEpochMillis() == 5_000
                && e.createdEpochMillis() == 1_000 && !e.parkedHere()), handedOut.get(0).toString());
    }

    @Test
    void aDeadLetterWhoseKeyIsPendingIsNotRevived() throws Exception {
        JdbcRetryJournal j = buried("a", "r1", "r2");
        j.append(entry("r1", 2_000), false);

        DeadLetterStore.Revived r = j.deadLetters().revive(APP, DeadLetterFilter.all(), Set.of(SVC), (l, p) -> 1);

        assertEquals(Map.of(SVC, 1L), r.revived());
        assertEquals(1, r.conflicts());
        assertEquals(List.of("r1"), ids(j.deadLetters().list(APP, DeadLetterFilter.all(), 1, 10)));
    }

    @Test
    void aDeadLetterTheReviverRefusesStaysAndTheReviverSeesItsCall() throws Exception {
        JdbcRetryJournal j = buried("a", "r1", "r2");
        List<String> seen = new ArrayList<>();

        DeadLetterStore.Revived r = j.deadLetters().revive(APP, DeadLetterFilter.all(), Set.of(SVC), (l, p) -> {
            seen.add(new String(((RetryJournalEntry) p).payload(), java.nio.charset.StandardCharsets.UTF_8));
            return l.retryId().equals("r1") ? DeadLetterStore.NOT_TAKEN : 7;
        });

        assertEquals(List.of("payload-r1", "payload-r2"), seen, "oldest first");
        assertEquals(1, r.total());
        assertEquals(List.of("r1"), ids(j.deadLetters().list(APP, DeadLetterFilter.all(), 1, 10)));
        assertEquals(0, j.deadLetters().revive(APP, DeadLetterFilter.all(), Set.of("another/Service"),
                (l, p) -> 1).total(), "only the services asked for");
    }

    @Test
    void aStoreThatIsDownFailsNamingItselfAndChangesNothing() throws Exception {
        buried("a", "r1", "r2");
        FaultyDataSource link = new FaultyDataSource(database);
        JdbcRetryJournal j = journal(link, "b");
        DeadLetterStore dead = j.deadLetters();
        link.inject(FaultyDataSource.Mode.DOWN);

        for (org.junit.jupiter.api.function.Executable op : List.<org.junit.jupiter.api.function.Executable>of(
                () -> dead.list(APP, DeadLetterFilter.all(), 1, 10),
                () -> dead.purge(APP, DeadLetterFilter.all()),
                () -> dead.revive(APP, DeadLetterFilter.all(), Set.of(SVC), (l, p) -> 1),
                () -> dead.trim(APP, 1_000, 0))) {
            RetryJournalException e = assertThrows(RetryJournalException.class, op);
            assertTrue(e.getMessage().startsWith("retry journal ") && e.getMessage().contains("owner b"),
                    e.getMessage());
        }
        link.heal();
        assertEquals(2, rows("rpctimer_dead_letter"));
        assertEquals(0, rows("rpctimer_call"));
    }

    @Test
    void theDeadLettersOfASlotWhoseProcessIsGoneMoveIntoTheLiveSlot(@TempDir Path dir) throws Exception {
        try (EmbeddedJournal live = EmbeddedJournal.open(dir, APP)) {
            try (EmbeddedJournal gone = EmbeddedJournal.open(dir, APP)) {
                assertEquals(1, gone.slot());
                gone.append(entry("r1", 1_000), false);
                assertTrue(done(gone.bury(key("r1"), DOWN)));
            }
            assertEquals(1, live.adoptFreeSlots());
            DeadLetterPage page = live.deadLetters().list(APP, DeadLetterFilter.all(), 1, 10);
            assertEquals(List.of("r1"), ids(page));
            assertEquals(3, page.letters().get(0).attempts());
        }
    }
}
