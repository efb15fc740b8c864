package io.rpctimer.journal;

import io.rpctimer.retry.Abandonment;
import io.rpctimer.retry.DeadLetter;
import io.rpctimer.retry.DeadLetterFilter;
import io.rpctimer.retry.DeadLetterPage;
import io.rpctimer.retry.DeadLetterStore;
import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalEntry;
import io.rpctimer.retry.RetryJournalException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.rpctimer.journal.Entries.APP;
import static io.rpctimer.journal.Entries.SVC;
import static io.rpctimer.journal.Entries.done;
import static io.rpctimer.journal.Entries.entry;
import static io.rpctimer.journal.Entries.key;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a fleet of {@link JdbcRetryJournal}s on one shared database must do, whatever the database: leases, adoption
 * of a dead instance's entries, survivors racing for them, a dead instance that comes back, a locked table, group
 * commit. Each subclass runs it on a real server.
 */
@Timeout(180)
abstract class SharedDatabaseJournalContract {

    private static final AtomicInteger SCHEMAS = new AtomicInteger();
    private final List<JdbcRetryJournal> journals = new ArrayList<>();
    final String prefix = "t" + SCHEMAS.incrementAndGet() + "_";

    /** @return the shared database, started once per test class */
    abstract DataSource database();

    /** Locks {@code table} against every other session until {@link #unlock}, on {@code c} (autocommit off). */
    abstract void lock(Connection c, String table) throws SQLException;

    /** Ends the lock of {@link #lock}. */
    abstract void unlock(Connection c) throws SQLException;

    @AfterEach
    void closeJournals() {
        journals.forEach(JdbcRetryJournal::close);
    }

    JdbcRetryJournal journal(DataSource ds, String owner, Duration lease) throws RetryJournalException {
        JdbcRetryJournal j = JdbcRetryJournal.builder(ds).owner(owner).tablePrefix(prefix).lease(lease).build();
        journals.add(j);
        return j;
    }

    static List<String> ids(List<RetryJournalEntry> entries) {
        return entries.stream().map(RetryJournalEntry::retryId).toList();
    }

    @Test
    void aDeadInstancesEntries_areAdoptedAfterItsLease_andItsFenceFailsWhenItComesBack() throws Exception {
        FaultyDataSource network = new FaultyDataSource(database());
        JdbcRetryJournal a = journal(network, "a", Duration.ofSeconds(3));
        for (int i = 0; i < 20; i++) {
            a.append(entry("r" + i, i), false);
        }
        JdbcRetryJournal b = journal(database(), "b", Duration.ofSeconds(3));
        assertEquals(List.of(), b.claim(APP, SVC, 100), "a holds a live lease");

        network.inject(FaultyDataSource.Mode.DOWN); // a can no longer renew: dead, as seen from the database
        List<String> adopted = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> adopted.addAll(ids(b.claim(APP, SVC, 100))) && adopted.size() == 20);

        network.heal();
        assertEquals(RetryJournal.Fence.ADOPTED, done(a.fence(key("r1"), 2, 1_000, "p", "f")), "r1 is b's now");
        assertFalse(done(a.remove(key("r2"))));
        assertEquals(20, owned("b"), "a's remove did not touch b's entry");
    }

    /** A graceful stop gives the lease up: the entries move at the next claim of another instance, not a lease later. */
    @Test
    void aClosedInstancesEntries_areAdoptedAtOnce() throws Exception {
        JdbcRetryJournal a = journal(database(), "a", Duration.ofSeconds(30));
        for (int i = 0; i < 5; i++) {
            a.append(entry("r" + i, i), false);
        }
        JdbcRetryJournal b = journal(database(), "b", Duration.ofSeconds(30));
        assertEquals(List.of(), b.claim(APP, SVC, 100), "a holds a live lease");

        a.close();
        assertEquals(List.of("r0", "r1", "r2", "r3", "r4"), ids(b.claim(APP, SVC, 100)));
        assertEquals(5, owned("b"));
    }

    /**
     * The first survivor to claim must not take a dead instance's whole backlog: it adopts what it hands out, the
     * next survivor gets the next calls, and room freed later (an unpark) adopts more.
     */
    @Test
    void survivorsShareADeadInstancesCalls_eachAdoptingOnlyWhatItHandsOut() throws Exception {
        JdbcRetryJournal dead = journal(database(), "dead", Duration.ofSeconds(30));
        for (int i = 0; i < 50; i++) {
            dead.append(entry(String.format("r%02d", i), i), i % 2 == 0);
        }
        JdbcRetryJournal s1 = journal(database(), "s1", Duration.ofSeconds(30));
        JdbcRetryJournal s2 = journal(database(), "s2", Duration.ofSeconds(30));
        assertEquals(List.of(), s1.unpark(APP, SVC, 10), "dead still holds a live lease");

        dead.close();
        assertEquals(range(0, 10), ids(s1.claim(APP, SVC, 10)));
        assertEquals(10, owned("s1"), "s1 adopted only what it handed out");
        assertEquals(range(10, 30), ids(s2.claim(APP, SVC, 20)));
        assertEquals(20, owned("s2"));
        assertEquals(range(30, 50), ids(s1.unpark(APP, SVC, 100)), "room freed at s1 adopts the rest");
        assertEquals(30, owned("s1"));
        assertEquals(0, owned("dead"));
    }

    /**
     * The adoption of a call already due is also the fence of its next retry: its transaction checks, on the
     * database's clock, that the adopter's lease outlasts the send, and the adopting statement records the retry. A call due later is adopted
     * unfenced, and so is one adopted while the adopter's lease is too short to fence: it is adopted, not left.
     */
    @Test
    void anAdoptedCallAlreadyDue_isFencedByItsAdoption_unlessDueLaterOrTheLeaseIsTooShort() throws Exception {
        JdbcRetryJournal dead = journal(database(), "dead", Duration.ofSeconds(60));
        long now = System.currentTimeMillis();
        dead.append(entry("r00", now - 2_000), false);
        dead.append(entry("r01", now - 1_000), false);
        dead.append(entry("r02", now + 600_000), false);
        dead.close();
        JdbcRetryJournal b = journal(database(), "b", Duration.ofSeconds(60));

        List<RetryJournalEntry> first = b.claim(APP, SVC, 1);
        assertEquals(List.of("r00"), ids(first));
        assertTrue(first.get(0).fenced(), "due: fenced by its adoption");
        assertEquals(1, first.get(0).attempt(), "the retry to send now");

        try (Connection c = database().getConnection(); Statement st = c.createStatement()) {
            st.executeUpdate("UPDATE " + prefix + "instance SET lease_until = lease_until - 60000 WHERE owner = 'b'");
        }
        List<RetryJournalEntry> rest = b.claim(APP, SVC, 10);
        assertEquals(List.of("r01", "r02"), ids(rest));
        assertEquals(List.of(false, false), rest.stream().map(RetryJournalEntry::fenced).toList(),
                "r01: b's lease is too short to fence; r02: not due");
        assertEquals(3, owned("b"));
        assertEquals(2, count("SELECT attempt FROM " + prefix + "call WHERE retry_id = ?", "r00"),
                "the adoption recorded retry 1 as under way");
        assertEquals(1, count("SELECT attempt FROM " + prefix + "call WHERE retry_id = ?", "r01"));
        assertEquals(1, count("SELECT attempt FROM " + prefix + "call WHERE retry_id = ?", "r02"));
        JdbcRetryJournal back = journal(database(), "dead", Duration.ofSeconds(60));
        assertEquals(RetryJournal.Fence.ADOPTED, done(back.fence(key("r00"), 1, now, null, null)));
    }

    /**
     * An unpark of this instance's own parked calls marks them as an adoption does: one already due is fenced by the
     * unpark (its retry recorded as under way), one due later is not, and a second unpark hands out neither.
     */
    @Test
    void anUnparkedCallAlreadyDue_isFencedByItsUnpark_andOneDueLaterIsNot() throws Exception {
        JdbcRetryJournal a = journal(database(), "a", Duration.ofSeconds(60));
        long now = System.currentTimeMillis();
        a.append(entry("r00", now - 1_000), true);
        a.append(entry("r01", now + 600_000), true);

        List<RetryJournalEntry> out = a.unpark(APP, SVC, 10);

        assertEquals(List.of("r00", "r01"), ids(out));
        assertEquals(List.of(true, false), out.stream().map(RetryJournalEntry::fenced).toList());
        assertEquals(2, count("SELECT attempt FROM " + prefix + "call WHERE retry_id = ?", "r00"),
                "the unpark recorded retry 1 as under way");
        assertEquals(1, count("SELECT attempt FROM " + prefix + "call WHERE retry_id = ?", "r01"));
        assertEquals(List.of(), a.unpark(APP, SVC, 10), "handed out once");
        assertEquals(RetryJournal.Fence.OWNED, done(a.fence(key("r00"), 1, now, null, null)),
                "the send's own fence of the same retry agrees");
    }

    private static List<String> range(int from, int to) {
        List<String> ids = new ArrayList<>();
        for (int i = from; i < to; i++) {
            ids.add(String.format("r%02d", i));
        }
        return ids;
    }

    /**
     * Appends {@code count} calls, every other one parked, due in clumps of three whose ties the retry id breaks.
     *
     * @return their retry ids in claim order
     */
    private static List<String> appendInClumps(JdbcRetryJournal journal, int count) throws RetryJournalException {
        List<String> dueOrder = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String id = String.format("r%05d", (i * 7_919) % count);
            journal.append(entry(id, i / 3), i % 2 == 0);
            dueOrder.add(id);
        }
        for (int from = 0; from < count; from += 3) {
            java.util.Collections.sort(dueOrder.subList(from, Math.min(count, from + 3)));
        }
        return dueOrder;
    }

    @Test
    void claimLargerThanOnePage_returnsEveryEntryOnce_inDueOrder() throws Exception {
        int count = 2 * JdbcRetryJournal.PAGE + 301;
        List<String> dueOrder = appendInClumps(journal(database(), "a", Duration.ZERO), count);
        JdbcRetryJournal restarted = journal(database(), "a", Duration.ZERO);

        List<String> first = ids(restarted.claim(APP, SVC, JdbcRetryJournal.PAGE + 10));
        List<String> rest = ids(restarted.claim(APP, SVC, count));

        assertEquals(dueOrder.subList(0, JdbcRetryJournal.PAGE + 10), first);
        assertEquals(dueOrder.subList(JdbcRetryJournal.PAGE + 10, count), rest);
        assertEquals(List.of(), restarted.unpark(APP, SVC, count), "a later claim of this run hands out none");
    }

    /**
     * A dead instance's calls over several pages are adopted each once, in due order across the pages; a corrupt one
     * among them is adopted and quarantined (kept, never handed out), and the calls after it still come.
     */
    @Test
    void aDeadInstancesCallsOverSeveralPages_areAdoptedOnceInDueOrder_aCorruptOneQuarantined() throws Exception {
        int count = 2 * JdbcRetryJournal.PAGE + 301;
        JdbcRetryJournal dead = journal(database(), "dead", Duration.ofSeconds(30));
        List<String> dueOrder = appendInClumps(dead, count);
        String corrupt = dueOrder.remove(JdbcRetryJournal.PAGE + 5);
        try (Connection c = database().getConnection();
             PreparedStatement st = c.prepareStatement("UPDATE " + prefix + "call SET payload_crc = payload_crc + 1"
                     + " WHERE retry_id = ?")) {
            st.setString(1, corrupt);
            assertEquals(1, st.executeUpdate());
        }
        dead.close();
        JdbcRetryJournal survivor = journal(database(), "survivor", Duration.ofSeconds(30));

        List<String> first = ids(survivor.claim(APP, SVC, JdbcRetryJournal.PAGE + 10));
        List<String> rest = ids(survivor.claim(APP, SVC, count));

        assertEquals(dueOrder.subList(0, JdbcRetryJournal.PAGE + 10), first);
        assertEquals(dueOrder.subList(JdbcRetryJournal.PAGE + 10, count - 1), rest);
        assertEquals(List.of(), survivor.unpark(APP, SVC, count), "every call was handed out once");
        assertEquals(count - 1, owned("survivor", "NOT c.quarantined"));
        assertEquals(1, count("SELECT count(*) FROM " + prefix + "call WHERE quarantined AND retry_id = ?",
                corrupt), "the corrupt call stays in the table");
    }

    /**
     * Without a lease, a restart hands out its earlier run's calls without a write, and a page that also holds calls
     * this run parked marks only those: each is handed out once, and a fence holds either kind.
     */
    @Test
    void withoutALease_aPageOfEarlierRunAndNewlyParkedCalls_handsEachOutOnce() throws Exception {
        JdbcRetryJournal earlier = journal(database(), "a", Duration.ZERO);
        for (int i = 0; i < 6; i++) {
            earlier.append(entry("e" + i, 10 + 2 * i), i % 2 == 0);
        }
        JdbcRetryJournal restarted = journal(database(), "a", Duration.ZERO);
        assertEquals(List.of("e0", "e1"), ids(restarted.claim(APP, SVC, 2)));
        restarted.append(entry("p1", 1), true);
        restarted.append(entry("p2", 13), true);

        assertEquals(List.of("p1", "p2", "e2", "e3", "e4", "e5"), ids(restarted.unpark(APP, SVC, 100)));
        assertEquals(List.of(), restarted.unpark(APP, SVC, 100));
        assertEquals(List.of(), restarted.claim(APP, SVC, 100));
        assertEquals(RetryJournal.Fence.OWNED, done(restarted.fence(key("e5"), 1, 99, null, null)));
        assertEquals(RetryJournal.Fence.OWNED, done(restarted.fence(key("p2"), 1, 99, null, null)));
    }

    @Test
    void survivorsRacingForDeadOwnersEntries_neverBothGetOne() throws Exception {
        int deadOwners = 10;
        int each = 200;
        for (int d = 0; d < deadOwners; d++) {
            JdbcRetryJournal dead = journal(database(), "dead" + d, Duration.ofMillis(500));
            for (int i = 0; i < each; i++) {
                dead.append(entry("d" + d + "-" + i, i), i % 3 == 0);
            }
            dead.close();
        }
        JdbcRetryJournal s1 = journal(database(), "s1", Duration.ofSeconds(30));
        JdbcRetryJournal s2 = journal(database(), "s2", Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(30)).until(() -> expiredLeases() == deadOwners);

        Set<String> got1 = ConcurrentHashMap.newKeySet();
        Set<String> got2 = ConcurrentHashMap.newKeySet();
        AtomicInteger duplicates = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                JdbcRetryJournal s = t % 2 == 0 ? s1 : s2;
                Set<String> got = t % 2 == 0 ? got1 : got2;
                runs.add(pool.submit(() -> {
                    for (int round = 0; round < 60; round++) {
                        for (RetryJournalEntry e : s.claim(APP, SVC, 37)) {
                            if (!got.add(e.retryId())) {
                                duplicates.incrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : runs) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        Set<String> both = new HashSet<>(got1);
        both.retainAll(got2);
        assertEquals(Set.of(), both, "handed out by both survivors");
        assertEquals(0, duplicates.get(), "handed out twice by one survivor");
        assertEquals(deadOwners * each, got1.size() + got2.size());
        assertEquals(got1.size(), owned("s1"));
        assertEquals(got2.size(), owned("s2"));
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a blocked JDBC read ignores interrupts
    void aLockedTable_makesClaimAndAppendGiveUpInBoundedTime_namingTheStore() throws Exception {
        JdbcRetryJournal first = journal(database(), "a", Duration.ofSeconds(30));
        first.append(entry("r1", 1), false);
        first.close();
        JdbcRetryJournal j = JdbcRetryJournal.builder(database()).owner("a").tablePrefix(prefix)
                .claimTimeout(Duration.ofSeconds(1)).writeTimeout(Duration.ofMillis(500)).build();
        journals.add(j);
        try (Connection locker = database().getConnection()) {
            locker.setAutoCommit(false);
            lock(locker, prefix + "call");

            RetryJournalException claim = assertThrows(RetryJournalException.class, () -> j.claim(APP, SVC, 10));
            assertTrue(claim.getMessage().contains(prefix + "call"), claim.getMessage());
            RetryJournalException append = assertThrows(RetryJournalException.class,
                    () -> j.append(entry("r2", 2), false));
            assertTrue(append.getMessage().contains("not committed within 500 ms"), append.getMessage());
            unlock(locker);
        }
        assertEquals(List.of("r1"), ids(j.claim(APP, SVC, 10)), "the failed claim handed nothing out");
    }

    @Test
    void concurrentAppends_areGroupCommitted_andDurable() throws Exception {
        JdbcRetryJournal j = journal(database(), "a", Duration.ofSeconds(30));
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                int thread = t;
                runs.add(pool.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        j.append(entry(thread + "-" + i, i), true);
                    }
                    return null;
                }));
            }
            for (Future<?> f : runs) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1_600, owned("a"));
        assertEquals(1_600, j.unpark(APP, SVC, 10_000).size());
    }

    @Test
    void deadLettersAreBuriedListedTrimmedAndEachRevivedOnceByRacingInstances() throws Exception {
        JdbcRetryJournal a = journal(database(), "a", Duration.ofSeconds(30));
        JdbcRetryJournal b = journal(database(), "b", Duration.ofSeconds(30));
        Abandonment down = new Abandonment(2, "10.0.0.7:20880", "java.io.IOException: down", "java.io.IOException");
        for (int i = 0; i < 300; i++) {
            a.append(entry("d" + i, i), false);
            assertTrue(done(a.bury(key("d" + i), down)), "d" + i);
        }
        DeadLetterPage page = b.deadLetters().list(APP, DeadLetterFilter.all().failureClass("java.io.IOException"),
                2, 100);
        assertEquals(300, page.total(), "every instance sees the same dead letters");
        assertEquals(100, page.letters().size());
        DeadLetter first = page.letters().get(0);
        assertEquals(("payload-" + first.retryId()).length(), first.payloadBytes());
        assertEquals(0, owned("a"), "moved out of the pending calls");

        assertEquals(50, a.deadLetters().trim(APP, Duration.ofDays(1).toMillis(), 250).dropped());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<DeadLetterStore.Revived>> revives = new ArrayList<>();
        try {
            for (JdbcRetryJournal j : List.of(a, b, a, b)) {
                revives.add(pool.submit(() -> j.deadLetters().revive(APP, DeadLetterFilter.all(), Set.of(SVC),
                        (l, p) -> 1_000)));
            }
            long revived = 0;
            for (Future<DeadLetterStore.Revived> f : revives) {
                revived += f.get(60, TimeUnit.SECONDS).total();
            }
            assertEquals(250, revived, "each dead letter revived by one instance");
        } finally {
            pool.shutdownNow();
        }
        assertEquals(250, owned("a") + owned("b"));
        assertEquals(0, a.deadLetters().purge(APP, DeadLetterFilter.all()));
    }

    /**
     * @return how many calls {@code owner} holds: its own, and on a database where a survivor takes a dead instance's
     *     lease over, those of the owners whose lease row its run holds
     */
    private int owned(String owner) throws SQLException {
        return owned(owner, "TRUE");
    }

    /** @return how many calls that meet {@code condition} {@code owner} holds, as {@link #owned(String)} counts */
    private int owned(String owner, String condition) throws SQLException {
        return count("SELECT count(*) FROM " + prefix + "call c WHERE " + condition + " AND (c.owner = ? OR EXISTS"
                + " (SELECT 1 FROM " + prefix + "instance i JOIN " + prefix + "instance me ON me.holder = i.holder"
                + " WHERE i.owner = c.owner AND me.owner = ?))", owner, owner);
    }

    private int expiredLeases() throws SQLException {
        return count("SELECT count(*) FROM " + prefix + "instance WHERE lease_until < "
                + System.currentTimeMillis() + " AND owner LIKE ?", "dead%");
    }

    int count(String query, String... args) throws SQLException {
        try (Connection c = database().getConnection();
             PreparedStatement st = c.prepareStatement(query)) {
            for (int i = 0; i < args.length; i++) {
                st.setString(i + 1, args[i]);
            }
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
