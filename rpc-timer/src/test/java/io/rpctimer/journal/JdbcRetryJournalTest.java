package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalEntry;
import io.rpctimer.retry.RetryJournalException;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.rpctimer.journal.Entries.APP;
import static io.rpctimer.journal.Entries.SVC;
import static io.rpctimer.journal.Entries.done;
import static io.rpctimer.journal.Entries.entry;
import static io.rpctimer.journal.Entries.key;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link JdbcRetryJournal} on an in-memory H2 database, with store failures injected by {@link FaultyDataSource}. */
@Timeout(60)
class JdbcRetryJournalTest {

    private FaultyDataSource db;
    private final List<JdbcRetryJournal> journals = new ArrayList<>();

    @BeforeEach
    void database() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:journal-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        db = new FaultyDataSource(h2);
    }

    @AfterEach
    void close() {
        db.heal();
        journals.forEach(JdbcRetryJournal::close);
    }

    private JdbcRetryJournal journal(String owner, Duration writeTimeout) throws RetryJournalException {
        JdbcRetryJournal j = JdbcRetryJournal.builder(db).owner(owner).lease(Duration.ZERO)
                .writeTimeout(writeTimeout).build();
        journals.add(j);
        return j;
    }

    private JdbcRetryJournal journal(String owner) throws RetryJournalException {
        return journal(owner, Duration.ofSeconds(10));
    }

    private static List<String> ids(List<RetryJournalEntry> entries) {
        return entries.stream().map(RetryJournalEntry::retryId).toList();
    }

    @Test
    void appendThenClaim_returnsEveryField() throws Exception {
        RetryJournalEntry e = new RetryJournalEntry("r1", APP, SVC, "greet", new byte[]{1, 2, 3}, 2, 5_000L,
                "dubbo://10.0.0.1:20880", "RpcException: timeout", 1_000L);
        journal("a").append(e, false);

        List<RetryJournalEntry> claimed = journal("a").claim(APP, SVC, 10);

        assertEquals(1, claimed.size());
        RetryJournalEntry c = claimed.get(0);
        assertEquals(List.of(e.retryId(), e.application(), e.serviceKey(), e.method(), e.attempt(),
                        e.dueEpochMillis(), e.lastProvider(), e.lastFailure(), e.createdEpochMillis()),
                List.of(c.retryId(), c.application(), c.serviceKey(), c.method(), c.attempt(), c.dueEpochMillis(),
                        c.lastProvider(), c.lastFailure(), c.createdEpochMillis()));
        assertArrayEquals(e.payload(), c.payload());
    }

    @Test
    void claim_handsOutOwnEntriesOfAnEarlierRunOnce_neverThoseScheduledInThisRun() throws Exception {
        JdbcRetryJournal first = journal("a");
        first.append(entry("r1", 10), false);
        first.close();
        JdbcRetryJournal restarted = journal("a");
        restarted.append(entry("r2", 5), false);

        assertEquals(List.of("r1"), ids(restarted.claim(APP, SVC, 10)), "r2 is on this run's wheel");
        assertEquals(List.of(), ids(restarted.claim(APP, SVC, 10)), "r1 is on the wheel now: not handed out twice");
    }

    @Test
    void fence_recordsTheAttempt_andSaysWhoElseHoldsACallThisRunDoesNot() throws Exception {
        JdbcRetryJournal a = journal("a");
        JdbcRetryJournal b = journal("b");
        a.append(entry("r1", 10), false);

        assertEquals(RetryJournal.Fence.OWNED, done(a.fence(key("r1"), 2, 99, "p2", "x".repeat(5000))));
        assertEquals(RetryJournal.Fence.ADOPTED, done(b.fence(key("r1"), 3, 100, null, null)), "b does not own r1");
        assertEquals(RetryJournal.Fence.GONE, done(a.fence(key("gone"), 2, 100, null, null)), "no such entry");

        RetryJournalEntry c = journal("a").claim(APP, SVC, 1).get(0);
        assertEquals(3, c.attempt());
        assertEquals(99, c.dueEpochMillis());
        assertEquals("p2", c.lastProvider());
        assertEquals(JournalSql.FAILURE_CHARS, c.lastFailure().length(), "failure text is bounded, not rejected");
    }

    @Test
    void remove_deletesOnlyAnEntryThisInstanceOwns() throws Exception {
        JdbcRetryJournal a = journal("a");
        a.append(entry("r1", 10), false);
        a.append(entry("r2", 20), false);

        assertFalse(done(journal("b").remove(key("r1"))));
        assertTrue(done(a.remove(key("r2"))));

        assertEquals(List.of("r1"), ids(journal("a").claim(APP, SVC, 10)));
    }

    /**
     * Each fence and remove carries a timeout; one that completed in time must cost nothing when its timeout passes
     * (the JDK's delayed executor starts a thread per task where its common pool has one thread: on two cores).
     */
    @Test
    void writesDoneBeforeTheirTimeout_startNoThreadWhenItPasses() throws Exception {
        JdbcRetryJournal appender = journal("a");
        int n = 500;
        for (int i = 0; i < n; i++) {
            appender.append(entry("r" + i, i), false);
        }
        JdbcRetryJournal j = journal("a", Duration.ofMillis(300));
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long started = threads.getTotalStartedThreadCount();
        List<CompletableFuture<Boolean>> removes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            removes.add(j.remove(key("r" + i)).toCompletableFuture());
        }
        for (CompletableFuture<Boolean> r : removes) {
            r.handle((removed, slow) -> removed).get(10, TimeUnit.SECONDS); // a busy machine may time some out
        }
        await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(5))
                .until(() -> threads.getTotalStartedThreadCount() - started < 20);
    }

    @Test
    void unpark_handsBackParkedEntriesEarliestDueFirst_inBoundedPages() throws Exception {
        JdbcRetryJournal j = journal("a");
        for (int i = 0; i < 50; i++) {
            j.append(entry("r" + i, 1_000 - i), true);
        }
        j.append(entry("scheduled", 0), false);

        List<RetryJournalEntry> first = j.unpark(APP, SVC, 20);
        List<RetryJournalEntry> rest = j.unpark(APP, SVC, 1_000);

        assertEquals(20, first.size());
        assertEquals("r49", first.get(0).retryId());
        assertEquals("r30", first.get(19).retryId());
        assertEquals(30, rest.size(), "the scheduled entry is not parked");
        assertEquals("r29", rest.get(0).retryId());
        assertEquals(List.of(), j.unpark(APP, SVC, 10));
    }

    @Test
    void unparksOfAnotherOwnersEntries_resumeWhereTheLastStopped_andStillFindOnesLeftBehindThatPoint()
            throws Exception {
        JdbcRetryJournal gone = journal("gone");
        for (int i = 0; i < 10; i++) {
            gone.append(entry("r" + i, 100 + i), false);
        }
        gone.release(List.of(key("r0"), key("r1"), key("r2"), key("r3"), key("r4"), key("r5"), key("r6"),
                key("r7"), key("r8"), key("r9")));
        JdbcRetryJournal j = journal("a");

        assertEquals(List.of("r0", "r1", "r2"), ids(j.unpark(APP, SVC, 3)));
        gone.append(entry("early", 1), false); // released after the unpark passed its place: due first
        gone.release(List.of(key("early")));
        assertEquals(List.of("r3", "r4", "r5"), ids(j.unpark(APP, SVC, 3)), "resumed after r2");
        assertEquals(List.of("r6", "r7", "r8", "r9", "early"), ids(j.unpark(APP, SVC, 10)),
                "at the end, the unpark starts again from the beginning");
        assertEquals(List.of(), j.unpark(APP, SVC, 10));
    }

    @Test
    void anUnparkThatReadEveryOwnEntry_readsThemAgainOnceAnotherIsParked() throws Exception {
        JdbcRetryJournal j = journal("a");
        j.append(entry("p1", 1), true);
        assertEquals(List.of("p1"), ids(j.unpark(APP, SVC, 10)));
        assertEquals(List.of(), j.unpark(APP, SVC, 10));

        j.append(entry("p2", 0), true);
        assertEquals(List.of("p2"), ids(j.unpark(APP, SVC, 10)));
    }

    /**
     * A park whose commit outlasted its write timeout may commit after an unpark that read every own entry and found
     * none: once its outcome is known, the next unpark reads own entries again.
     */
    @Test
    void aParkThatCommitsAfterAnUnparkFoundNoEntry_isFoundByTheNextUnpark() throws Exception {
        JdbcRetryJournal j = journal("a", Duration.ofMillis(300));
        assertEquals(List.of(), j.unpark(APP, SVC, 10));
        db.hangNextCommit();
        RetryJournalException slow = assertThrows(RetryJournalException.class, () -> j.append(entry("p1", 0), true));
        assertTrue(slow.maybeWritten());
        assertEquals(List.of(), j.unpark(APP, SVC, 10), "not committed yet");

        db.heal();
        assertEquals(true, slow.resolution().toCompletableFuture().get(10, TimeUnit.SECONDS));
        assertEquals(List.of("p1"), ids(j.unpark(APP, SVC, 10)));
    }

    @Test
    void aClaimReadsOwnEntriesFromTheStart_whateverTheUnparksLearnt() throws Exception {
        JdbcRetryJournal j = journal("a");
        assertEquals(List.of(), j.unpark(APP, SVC, 10)); // every own entry read: none
        try (Connection c = db.getConnection(); Statement st = c.createStatement()) { // parked by other means
            st.execute("INSERT INTO rpctimer_call (application, service_key, method, retry_id, payload, payload_crc,"
                    + " attempt, due_at, created_at, owner, parked) VALUES ('" + APP + "', '" + SVC + "', 'greet',"
                    + " 'moved', X'00', 3523407757, 1, 5, 5, 'a', TRUE)");
        }
        assertEquals(List.of(), j.unpark(APP, SVC, 10), "an unpark trusts what it learnt");
        assertEquals(List.of("moved"), ids(j.claim(APP, SVC, 10)), "a claim does not");
    }

    /**
     * An entry already due is handed out by the statement that also fences its next retry: the row records that
     * retry as under way, so the first send needs no write of its own. An entry due later is handed out unfenced.
     */
    @Test
    void anUnparkedEntryAlreadyDue_isFencedByItsHandOut_oneDueLaterIsNot() throws Exception {
        JdbcRetryJournal j = journal("a");
        long now = System.currentTimeMillis();
        j.append(entry("due", now - 1_000), true);
        j.append(entry("later", now + 600_000), true);

        List<RetryJournalEntry> out = j.unpark(APP, SVC, 10);

        assertEquals(List.of("due", "later"), ids(out));
        assertEquals(List.of(true, false), out.stream().map(RetryJournalEntry::fenced).toList());
        assertEquals(List.of(1, 1), out.stream().map(RetryJournalEntry::attempt).toList(), "the retry to send now");
        assertEquals(Set.of("due 2", "later 1"), strings("SELECT retry_id || ' ' || attempt FROM rpctimer_call"),
                "the row of the fenced entry names the retry after the one under way");
        assertEquals(RetryJournal.Fence.OWNED, done(j.fence(key("due"), 1, now, null, null)),
                "a fence of the same retry, should the send come too late, says the same");
        assertEquals(Set.of("due 2", "later 1"), strings("SELECT retry_id || ' ' || attempt FROM rpctimer_call"));
    }

    @Test
    void claim_returnsAtMostLimit_andLeavesTheRestParkedForUnpark() throws Exception {
        JdbcRetryJournal first = journal("a");
        for (int i = 0; i < 10; i++) {
            first.append(entry("r" + i, i), i % 2 == 0);
        }
        JdbcRetryJournal restarted = journal("a");

        assertEquals(List.of("r0", "r1", "r2"), ids(restarted.claim(APP, SVC, 3)));
        assertEquals(List.of("r3", "r4", "r5", "r6", "r7", "r8", "r9"), ids(restarted.unpark(APP, SVC, 100)));
    }

    /**
     * Without a lease, a restart takes back its earlier run's calls by reading them: the claim writes none of them,
     * and still hands each out once.
     */
    @Test
    void aRestartHandsOutItsEarlierRunsCallsWithoutRewritingThem_andEachOnce() throws Exception {
        int count = JdbcRetryJournal.PAGE + 700;
        List<String> dueOrder = earlierRun(count);
        Set<String> before = strings("SELECT retry_id || ' ' || run_id || ' ' || parked || ' ' || attempt"
                + " FROM rpctimer_call");
        JdbcRetryJournal restarted = journal("a");

        assertEquals(dueOrder, ids(restarted.claim(APP, SVC, count + 10)));

        assertEquals(before, strings("SELECT retry_id || ' ' || run_id || ' ' || parked || ' ' || attempt"
                + " FROM rpctimer_call"), "no row was rewritten");
        assertEquals(List.of(), restarted.unpark(APP, SVC, count), "each is on this run's wheel");
        assertEquals(List.of(), restarted.claim(APP, SVC, count), "a second claim of the service hands out none");
    }

    /**
     * A call handed out by the mark is this run's: its fence succeeds and makes the row this run's, so that moving its
     * due time past the mark does not hand it out again; a call of the earlier run not handed out yet is not held.
     */
    @Test
    void aFenceOfACallHandedOutWithoutAWrite_holdsIt_andKeepsItOffLaterHandOuts() throws Exception {
        JdbcRetryJournal first = journal("a");
        first.append(entry("r1", 10), false);
        first.append(entry("r2", 20), true);
        first.append(entry("r3", 30), false);
        first.close();
        JdbcRetryJournal restarted = journal("a");

        assertEquals(List.of("r1"), ids(restarted.claim(APP, SVC, 1)));
        assertEquals(RetryJournal.Fence.ADOPTED, done(restarted.fence(key("r2"), 1, 99, null, null)),
                "r2 is not handed out yet: not this run's to send");
        assertEquals(RetryJournal.Fence.OWNED, done(restarted.fence(key("r1"), 1, 25, "p", "x")),
                "r1 is this run's, though its row names the earlier run");

        assertEquals(List.of("r2", "r3"), ids(restarted.unpark(APP, SVC, 10)),
                "r1, due at 25 now (after r2), is on the wheel: not handed out again");
        assertEquals(List.of(), restarted.unpark(APP, SVC, 10));
    }

    /** What lands in the journal after the mark moved, due before it, is still handed out. */
    @Test
    void callsParkedByThisRun_orMovedInWithNoRun_dueBeforeTheMark_areHandedOut() throws Exception {
        earlierRun(20);
        JdbcRetryJournal restarted = journal("a");
        assertEquals(20, restarted.claim(APP, SVC, 100).size());

        restarted.append(entry("parked", 1), true);
        // as a slot's calls move in, and a dead letter revives: a row with no run
        sql("INSERT INTO rpctimer_call SELECT application, service_key, method, 'moved', payload, payload_crc,"
                + " attempt, 2, last_provider, last_failure, created_at, owner, TRUE, FALSE, NULL FROM rpctimer_call"
                + " WHERE retry_id = 'r00005'");
        restarted.parkedElsewhere();

        assertEquals(List.of("parked", "moved"), ids(restarted.unpark(APP, SVC, 100)));
        assertEquals(List.of(), restarted.unpark(APP, SVC, 100));
    }

    @Test
    void aCallHandedOutWithoutAWrite_canBeReleasedAndBuried() throws Exception {
        JdbcRetryJournal first = journal("a");
        first.append(entry("r1", 10), false);
        first.append(entry("r2", 20), false);
        first.close();
        JdbcRetryJournal restarted = journal("a");
        assertEquals(List.of("r1", "r2"), ids(restarted.claim(APP, SVC, 10)));

        restarted.release(List.of(key("r1")));
        assertTrue(done(restarted.bury(key("r2"), new io.rpctimer.retry.Abandonment(3, null, "down", null))));

        assertEquals(Set.of("r1 " + JournalSql.RELEASED), strings("SELECT retry_id || ' ' || owner"
                + " FROM rpctimer_call"));
        assertEquals(Set.of("r2"), strings("SELECT retry_id FROM rpctimer_dead_letter"));
    }

    /** Hand-outs of one service by several threads at once take each of an earlier run's calls once. */
    @Test
    void concurrentClaimsAndUnparks_handOutEachOfAnEarlierRunsCallsOnce() throws Exception {
        int count = 3_000;
        List<String> dueOrder = earlierRun(count);
        JdbcRetryJournal restarted = journal("a");
        Set<String> got = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.concurrent.atomic.AtomicInteger twice = new java.util.concurrent.atomic.AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                boolean claims = t % 2 == 0;
                runs.add(pool.submit(() -> {
                    for (int round = 0; round < 40; round++) {
                        List<RetryJournalEntry> out = claims ? restarted.claim(APP, SVC, 37)
                                : restarted.unpark(APP, SVC, 41);
                        for (RetryJournalEntry e : out) {
                            if (!got.add(e.retryId())) {
                                twice.incrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> run : runs) {
                run.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(0, twice.get(), "calls handed out twice");
        got.addAll(ids(restarted.claim(APP, SVC, count)));
        assertEquals(Set.copyOf(dueOrder), got, "every call handed out");
    }

    /** Appends {@code count} entries of an earlier run of owner "a", due in clumps (ties broken by retry id). */
    private List<String> earlierRun(int count) throws Exception {
        JdbcRetryJournal earlier = journal("a");
        List<RetryJournalEntry> entries = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            entries.add(entry(String.format("r%05d", (i * 7_919) % count), i / 3));
        }
        java.util.Collections.shuffle(entries, new java.util.Random(7));
        for (RetryJournalEntry e : entries) {
            earlier.append(e, e.dueEpochMillis() % 2 == 0);
        }
        return entries.stream().sorted(java.util.Comparator.comparingLong(RetryJournalEntry::dueEpochMillis)
                .thenComparing(RetryJournalEntry::retryId)).map(RetryJournalEntry::retryId).toList();
    }

    @Test
    void claimLargerThanOnePage_returnsEveryEntryOnce_inDueOrder() throws Exception {
        int count = 2 * JdbcRetryJournal.PAGE + 301;
        List<String> dueOrder = earlierRun(count);
        JdbcRetryJournal restarted = journal("a");

        List<String> first = ids(restarted.claim(APP, SVC, JdbcRetryJournal.PAGE + 10));
        List<String> rest = ids(restarted.claim(APP, SVC, count));

        assertEquals(dueOrder.subList(0, JdbcRetryJournal.PAGE + 10), first);
        assertEquals(dueOrder.subList(JdbcRetryJournal.PAGE + 10, count), rest);
        assertEquals(List.of(), restarted.unpark(APP, SVC, count), "a later claim of this run hands out none");
    }

    @Test
    void pageFailingMidClaim_returnsTheCommittedPages_andLeavesItsEntriesForTheNextClaim() throws Exception {
        int count = JdbcRetryJournal.PAGE + 500;
        List<String> dueOrder = earlierRun(count);
        JdbcRetryJournal restarted = journal("a");
        // the claim commits its first page; its second page's commit fails
        db.failCommit = db.commits.get() + 2;

        List<String> first = ids(restarted.claim(APP, SVC, count));
        List<String> rest = ids(restarted.claim(APP, SVC, count));

        assertEquals(dueOrder.subList(0, JdbcRetryJournal.PAGE), first, "the committed page is handed out");
        assertEquals(dueOrder.subList(JdbcRetryJournal.PAGE, count), rest,
                "the failed page's entries were not left marked as on this run's wheel");
    }

    @Test
    void pageFailingOnTheFirstPage_throws_andHandsOutNothing() throws Exception {
        List<String> dueOrder = earlierRun(10);
        JdbcRetryJournal restarted = journal("a");
        db.failCommit = db.commits.get() + 1;

        assertThrows(RetryJournalException.class, () -> restarted.claim(APP, SVC, 10));

        assertEquals(dueOrder, ids(restarted.claim(APP, SVC, 10)));
    }

    @Test
    void corruptAndTornRows_areSkippedAndQuarantined_everyOtherEntryLoads() throws Exception {
        JdbcRetryJournal j = journal("a");
        for (int i = 0; i < 10; i++) {
            j.append(entry("r" + i, i), true);
        }
        sql("UPDATE rpctimer_call SET payload = X'00' WHERE retry_id = 'r3'");
        sql("UPDATE rpctimer_call SET payload_crc = NULL, attempt = NULL WHERE retry_id = 'r7'");

        List<String> loaded = ids(j.claim(APP, SVC, 100));

        assertEquals(List.of("r0", "r1", "r2", "r4", "r5", "r6", "r8", "r9"), loaded);
        assertEquals(Set.of("r3", "r7"), strings("SELECT retry_id FROM rpctimer_call WHERE quarantined"));
        assertEquals(List.of(), j.unpark(APP, SVC, 100), "a quarantined row is not read again");
    }

    @Test
    void concurrentAppends_shareCommits_andAllBecomeDurable() throws Exception {
        JdbcRetryJournal j = journal("a");
        int threads = 16;
        int each = 200;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < each; i++) {
                        j.append(entry(thread + "-" + i, i), true);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(threads * each, strings("SELECT retry_id FROM rpctimer_call").size());
        assertTrue(db.commits.get() < threads * each, "group commit: " + db.commits.get() + " commits for "
                + threads * each + " appends");
    }

    @Test
    void oneBadWriteInABatch_failsAlone_theOthersCommit() throws Exception {
        JdbcRetryJournal j = journal("a");
        sql("ALTER TABLE rpctimer_call ADD CONSTRAINT no_poison CHECK (method <> 'poison')");
        db.inject(FaultyDataSource.Mode.HANG);
        CompletableFuture<Void> blocker = run(() -> j.append(entry("first", 0), false));
        await().until(() -> db.hanging.get() > 0);
        RetryJournalEntry poison = new RetryJournalEntry("bad", APP, SVC, "poison", new byte[0], 1, 0, null, null, 0);
        CompletableFuture<Void> bad = run(() -> j.append(poison, false));
        List<CompletableFuture<Void>> good = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String id = "good" + i;
            good.add(run(() -> j.append(entry(id, 0), false)));
        }
        await().until(() -> j.describe().contains("6 writes queued"));
        db.heal();

        blocker.get(10, TimeUnit.SECONDS);
        for (CompletableFuture<Void> g : good) {
            g.get(10, TimeUnit.SECONDS);
        }
        Exception failure = assertThrows(Exception.class, () -> bad.get(10, TimeUnit.SECONDS));
        assertInstanceOf(RetryJournalException.class, failure.getCause());
        assertEquals(6, strings("SELECT retry_id FROM rpctimer_call").size());
    }

    @Test
    void storeDown_appendFailsNamingTheStore_thenWorksOnceItIsBack() throws Exception {
        JdbcRetryJournal j = journal("a");
        j.append(entry("before", 0), false);
        db.inject(FaultyDataSource.Mode.DOWN);

        RetryJournalException e = assertThrows(RetryJournalException.class, () -> j.append(entry("r1", 0), false));
        assertTrue(e.getMessage().contains("jdbc:h2:mem:journal-"), e.getMessage());
        assertEquals("08001", ((SQLException) e.getCause()).getSQLState());
        assertTrue(j.describe().contains("failing"), j.describe());
        assertThrows(RetryJournalException.class, () -> j.claim(APP, SVC, 10));

        db.heal();
        j.append(entry("r2", 0), false);
        assertTrue(j.describe().endsWith("healthy"), j.describe());
    }

    @Test
    void slowStore_appendGivesUpAfterTheWriteTimeout() throws Exception {
        JdbcRetryJournal j = journal("a", Duration.ofMillis(300));
        db.inject(FaultyDataSource.Mode.HANG);
        long start = System.nanoTime();

        RetryJournalException e = assertThrows(RetryJournalException.class, () -> j.append(entry("r1", 0), false));

        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(waitedMillis >= 300 && waitedMillis < 5_000, waitedMillis + " ms");
        assertTrue(e.getMessage().contains("not committed within 300 ms"), e.getMessage());
        RetryJournalException queued = assertThrows(RetryJournalException.class,
                () -> j.append(entry("r2", 0), false));
        assertTrue(queued.getMessage().contains("not started, dropped"), queued.getMessage());
        db.heal();
        j.append(entry("r3", 0), false);
        assertEquals(Set.of("r1", "r3"), strings("SELECT retry_id FROM rpctimer_call"),
                "r1 was started when its caller gave up, so it may commit (at-least-once); r2 was dropped");
    }

    @Test
    void diskFull_appendFailsWithTheStoresError() throws Exception {
        JdbcRetryJournal j = journal("a");
        db.inject(FaultyDataSource.Mode.DISK_FULL);

        RetryJournalException e = assertThrows(RetryJournalException.class, () -> j.append(entry("r1", 0), false));

        assertTrue(e.getMessage().contains("No space left on device"), e.getMessage());
        db.heal();
        j.append(entry("r2", 0), false);
        assertEquals(Set.of("r2"), strings("SELECT retry_id FROM rpctimer_call"));
    }

    @Test
    void badArguments_areRejectedNamingTheValue() throws Exception {
        JdbcRetryJournal j = journal("a");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> j.claim(APP, SVC, -1));
        assertEquals("limit: -1 (expected: >= 0)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> j.append(entry("x".repeat(200), 0), false));
        assertThrows(IllegalArgumentException.class, () -> JdbcRetryJournal.builder(db).tablePrefix("x;drop"));
    }

    private interface Call {
        void run() throws Exception;
    }

    private static CompletableFuture<Void> run(Call call) {
        return CompletableFuture.runAsync(() -> {
            try {
                call.run();
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
    }

    private void sql(String statement) throws SQLException {
        try (Connection c = db.getConnection(); Statement st = c.createStatement()) {
            st.execute(statement);
        }
    }

    private Set<String> strings(String query) throws SQLException {
        try (Connection c = db.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(query)) {
            List<String> out = new ArrayList<>();
            while (rs.next()) {
                out.add(rs.getString(1));
            }
            return out.stream().collect(Collectors.toSet());
        }
    }
}
