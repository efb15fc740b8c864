package io.rpctimer.journal;

import static io.rpctimer.journal.Entries.APP;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.Admission;
import io.rpctimer.retry.AttemptResult;
import io.rpctimer.retry.CallOutcome;
import io.rpctimer.retry.OverflowPolicy;
import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalEntry;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryOutcome;
import io.rpctimer.retry.RetryPolicy;
import io.rpctimer.retry.RetryReference;
import io.rpctimer.retry.RetryStats;
import io.rpctimer.wheel.WheelTimer;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Whole instances — a {@link RetryLifecycle}, a reference and a {@link JdbcRetryJournal} each — sharing one database
 * (in-memory H2), on real threads: what a fleet must never do (both send, lose a call, count one twice), and what a
 * journal write of unknown outcome must not cost. Faults between an instance and the database come from
 * {@link FaultyDataSource}.
 */
@Timeout(120)
class FleetJournalTest {

    private static final String SVC_A = "g/com.example.Orders:1.0";
    private static final String SVC_B = "g/com.example.Payments:1.0";
    private static final Duration AWAIT = Duration.ofSeconds(60);

    private JdbcDataSource database;
    private final List<Instance> instances = new ArrayList<>();
    private final List<RetryJournal> journals = new ArrayList<>();
    private WheelTimer timer;
    private ExecutorService lanes;

    @BeforeEach
    void start() {
        database = new JdbcDataSource();
        database.setURL("jdbc:h2:mem:fleet-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        timer = WheelTimer.builder().tickDuration(5, TimeUnit.MILLISECONDS).build();
        lanes = Executors.newFixedThreadPool(4);
    }

    @AfterEach
    void stop() {
        instances.forEach(i -> i.lifecycle.close());
        journals.forEach(RetryJournal::close);
        timer.stop();
        lanes.shutdownNow();
    }

    /** One consumer instance: its lifecycle, one reference of {@code serviceKey}, and what its sender sent. */
    private final class Instance {
        final RetryLifecycle lifecycle;
        final RetryReference<String> reference;
        final Queue<String> sent = new ConcurrentLinkedQueue<>();
        /** Replies the test completes by hand, when {@code holdReplies}; otherwise every attempt is delivered. */
        final Queue<CompletableFuture<AttemptResult>> held = new ConcurrentLinkedQueue<>();
        volatile boolean holdReplies;

        Instance(RetryJournal journal, String serviceKey, long firstDelayMillis, int maxPending,
                 OverflowPolicy overflow) {
            lifecycle = RetryLifecycle.builder(APP).timer(timer).executor(lanes).journal(journal).build();
            RetryPolicy policy = RetryPolicy.builder().retries(5).firstDelay(firstDelayMillis, TimeUnit.MILLISECONDS)
                    .jitter(0).build();
            reference = lifecycle.<String>reference(serviceKey, (call, attempt) -> {
                sent.add(call.retryId() + "#" + attempt);
                if (holdReplies) {
                    CompletableFuture<AttemptResult> reply = new CompletableFuture<>();
                    held.add(reply);
                    return reply;
                }
                return CompletableFuture.completedFuture(AttemptResult.delivered("p1:20880"));
            }).policies(m -> policy).limits(maxPending, overflow)
                    .decoder(e -> new String(e.payload(), StandardCharsets.UTF_8)).build();
            instances.add(this);
        }

        Admission admit(String method, String retryId) {
            return reference.admit(method, retryId, retryId, retryId.getBytes(StandardCharsets.UTF_8), "p0:20880",
                    new ConnectException("refused"), true);
        }

        RetryStats stats() {
            return lifecycle.stats();
        }
    }

    private JdbcRetryJournal journal(javax.sql.DataSource ds, String owner, Duration lease, Duration writeTimeout)
            throws Exception {
        JdbcRetryJournal j = JdbcRetryJournal.builder(ds).owner(owner).lease(lease).writeTimeout(writeTimeout).build();
        journals.add(j);
        return j;
    }

    private JdbcRetryJournal journal(String owner) throws Exception {
        return journal(database, owner, Duration.ZERO, Duration.ofSeconds(5));
    }

    private static RetryJournalEntry entry(String serviceKey, String method, String retryId, String payload) {
        return new RetryJournalEntry(retryId, APP, serviceKey, method, payload.getBytes(StandardCharsets.UTF_8), 1,
                1_000, null, null, 1_000);
    }

    private static List<String> payloads(List<RetryJournalEntry> entries) {
        return entries.stream().map(e -> new String(e.payload(), StandardCharsets.UTF_8)).sorted().toList();
    }

    private long rows(String table) throws SQLException {
        try (Connection c = database.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    // ------------------------------------------------------------------ fencing

    @Test
    void aPausedOwnerNeverSendsAfterItsLeaseWasAdopted() throws Exception {
        FaultyDataSource link = new FaultyDataSource(database);
        Instance owner = new Instance(journal(link, "owner", Duration.ofMillis(600), Duration.ofSeconds(2)), SVC_A,
                4_000, 100, OverflowPolicy.REJECT);
        for (int i = 0; i < 10; i++) {
            owner.admit("reserve", "r" + i);
        }
        link.inject(FaultyDataSource.Mode.DOWN); // cut off from the database: as seen from there, it is gone
        Instance survivor = new Instance(journal(database, "survivor", Duration.ofMillis(600),
                Duration.ofSeconds(2)), SVC_A, 4_000, 100, OverflowPolicy.REJECT);
        List<String> adopted = new ArrayList<>();
        await().atMost(AWAIT).pollInterval(Duration.ofMillis(100)).until(() -> {
            adopted.add(String.valueOf(survivor.reference.resume()));
            return survivor.reference.pending() == 10;
        });
        link.heal(); // the owner wakes with its ten calls still on its wheel

        await().atMost(AWAIT).until(() -> survivor.stats().delivered() == 10 && owner.stats().pending() == 0);
        assertEquals(List.of(), List.copyOf(owner.sent), "the owner sent calls the survivor had adopted");
        assertEquals(10, owner.stats().handedOver());
        assertEquals(10, survivor.sent.size());
    }

    // ------------------------------------------------------------------ scoped keys

    @Test
    void aBusinessKeyUsedByTwoServicesAndTwoMethodsKeepsEveryCall() throws Exception {
        JdbcRetryJournal first = journal("app-1");
        first.append(entry(SVC_A, "reserve", "order-42", "reserve 42"), false);
        first.append(entry(SVC_A, "release", "order-42", "release 42"), false);
        first.append(entry(SVC_B, "charge", "order-42", "charge 42"), false);
        first.close();

        JdbcRetryJournal restarted = journal("app-1");
        assertEquals(List.of("release 42", "reserve 42"), payloads(restarted.claim(APP, SVC_A, 10)));
        assertEquals(List.of("charge 42"), payloads(restarted.claim(APP, SVC_B, 10)));
    }

    @Test
    void anAppendNeverReplacesAPendingCallOfAnotherInstance() throws Exception {
        JdbcRetryJournal a = journal(database, "a", Duration.ofSeconds(30), Duration.ofSeconds(5));
        JdbcRetryJournal b = journal(database, "b", Duration.ofSeconds(30), Duration.ofSeconds(5));
        a.append(entry(SVC_A, "reserve", "order-42", "a's call"), false);
        try {
            b.append(entry(SVC_A, "reserve", "order-42", "b's call"), false);
        } catch (Exception refused) {
            // refusing the conflict is one allowed answer; replacing a's row is not
        }
        a.close(); // a gives its lease up: b adopts what a still owns
        assertEquals(List.of("a's call"), payloads(b.claim(APP, SVC_A, 10)));
    }

    // ------------------------------------------------------------------ spill and unpark

    @Test
    void aParkedCallTakenByThePeriodicClaimIsCountedOnceAndItsHandleCompletes() throws Exception {
        Instance app = new Instance(journal("app"), SVC_A, 50, 1, OverflowPolicy.SPILL);
        app.holdReplies = true;
        Admission first = app.admit("reserve", "c1");
        Admission parked = app.admit("reserve", "c2");
        assertEquals(Admission.Kind.PARKED, parked.kind());
        await().atMost(AWAIT).until(() -> app.held.size() == 1);
        app.reference.resume(); // the periodic claim, while c1 still holds the only place: nothing to take yet
        app.held.poll().complete(AttemptResult.delivered("p1:20880"));
        for (int i = 0; i < 20 && app.stats().delivered() < 1; i++) {
            app.reference.resume(); // the periodic claim racing the unpark that c1's outcome starts
        }
        await().atMost(AWAIT).until(() -> !app.held.isEmpty());
        app.held.poll().complete(AttemptResult.delivered("p1:20880"));

        CallOutcome c2 = parked.outcome().toCompletableFuture().get(60, TimeUnit.SECONDS);
        assertEquals(RetryOutcome.DELIVERED, c2.outcome());
        assertEquals(RetryOutcome.DELIVERED, first.outcome().toCompletableFuture().get(60, TimeUnit.SECONDS).outcome());
        RetryStats s = app.stats();
        assertEquals(2, s.failedCalls(), s.toString());
        assertEquals(2, s.delivered(), s.toString());
        assertEquals(0, s.pending(), s.toString());
        app.lifecycle.close();
        assertEquals(0, app.stats().handedOver(), "nothing was left to hand over");
    }

    // ------------------------------------------------------------------ writes of unknown outcome

    @Test
    void aCallWhoseAppendCommittedAfterItsTimeoutIsRemovedAtItsOutcome() throws Exception {
        FaultyDataSource slow = new FaultyDataSource(database);
        JdbcRetryJournal first = journal(slow, "app", Duration.ZERO, Duration.ofMillis(300));
        Instance app = new Instance(first, SVC_A, 1_000, 100, OverflowPolicy.REJECT);
        slow.inject(FaultyDataSource.Mode.HANG);
        Admission a = app.admit("reserve", "c1"); // the commit hangs past the write timeout: it may yet happen
        slow.heal(); // ... and it does
        assertNotEquals(Admission.Kind.REJECTED, a.kind());
        assertEquals(RetryOutcome.DELIVERED, a.outcome().toCompletableFuture().get(60, TimeUnit.SECONDS).outcome());

        app.lifecycle.close();
        first.close(); // the process ends: what its writer has queued (the remove at the outcome) commits first
        JdbcRetryJournal restarted = journal("app");
        assertEquals(List.of(), restarted.claim(APP, SVC_A, 10), "the delivered call would be sent again");
    }

    @Test
    void aSpillWhoseWriteOutcomeIsUnknownIsNeverReportedRejected() throws Exception {
        FaultyDataSource slow = new FaultyDataSource(database);
        Instance app = new Instance(journal(slow, "app", Duration.ZERO, Duration.ofMillis(300)), SVC_A, 200, 1,
                OverflowPolicy.SPILL);
        app.holdReplies = true;
        app.admit("reserve", "c1");
        await().atMost(AWAIT).until(() -> app.held.size() == 1); // c1 in flight holds the only place
        slow.inject(FaultyDataSource.Mode.HANG);
        Admission spilled = app.admit("reserve", "c2");
        slow.heal(); // the park commits after the caller stopped waiting

        assertNotEquals(Admission.Kind.REJECTED, spilled.kind(), "the row committed: the call is retried");
        app.held.poll().complete(AttemptResult.delivered("p1:20880")); // c1's outcome frees the place
        await().atMost(AWAIT).until(() -> app.held.size() == 1);
        app.held.poll().complete(AttemptResult.delivered("p1:20880"));
        assertEquals(RetryOutcome.DELIVERED,
                spilled.outcome().toCompletableFuture().get(60, TimeUnit.SECONDS).outcome());
        await().atMost(AWAIT).until(() -> app.stats().delivered() == 2);
        assertEquals(1, app.sent.stream().filter(s -> s.startsWith("c2#")).count(), "c2 sent once");
    }

    @Test
    void aRuntimeExceptionFromTheDriverDoesNotStopTheWriter() throws Exception {
        FaultyDataSource flaky = new FaultyDataSource(database);
        JdbcRetryJournal j = journal(flaky, "app", Duration.ZERO, Duration.ofSeconds(2));
        flaky.runtimeFailures.set(1); // e.g. a connection pool's IllegalStateException
        try {
            j.append(entry(SVC_A, "reserve", "c1", "c1"), false);
        } catch (Exception expected) {
            // the one write of the failed batch fails
        }
        long started = System.nanoTime();
        j.append(entry(SVC_A, "reserve", "c2", "c2"), false);
        assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(2), "the writer thread is gone");
        assertTrue(j.describe().endsWith("healthy"), j.describe());
    }

    // ------------------------------------------------------------------ hand-over of a destroyed reference

    @Test
    void callsOfADestroyedReferenceAreClaimedByItsReplacement() throws Exception {
        JdbcRetryJournal j = journal(database, "app", Duration.ofSeconds(30), Duration.ofSeconds(5));
        Instance app = new Instance(j, SVC_A, 60_000, 100, OverflowPolicy.REJECT);
        for (int i = 0; i < 3; i++) {
            app.admit("reserve", "r" + i);
        }
        app.reference.destroy(); // ReferenceConfig.destroy(), or a migration rule swapping the invoker

        RetryReference<String> replacement = app.lifecycle.<String>reference(SVC_A,
                (call, attempt) -> CompletableFuture.completedFuture(AttemptResult.delivered("p1:20880")))
                .decoder(e -> new String(e.payload(), StandardCharsets.UTF_8)).build();
        assertEquals(3, replacement.resume());
    }

    // ------------------------------------------------------------------ instance rows

    @Test
    void instanceRowsDoNotPileUpAcrossRestarts() throws Exception {
        for (int i = 0; i < 5; i++) {
            JdbcRetryJournal.builder(database).lease(Duration.ofSeconds(30)).build().close(); // a new owner id each
        }
        JdbcRetryJournal live = journal(database, "live", Duration.ofSeconds(30), Duration.ofSeconds(5));
        assertTrue(instanceRows() <= 1, instanceRows() + " instance rows for one live instance");
        live.close();
    }

    private long instanceRows() throws SQLException {
        try {
            return rows("rpctimer_instance");
        } catch (SQLException e) {
            return rows("rpctimer_retry_instance");
        }
    }
}
