package io.rpctimer.journal;

import static io.rpctimer.journal.Entries.APP;
import static io.rpctimer.journal.Entries.SVC;
import static io.rpctimer.journal.Entries.done;
import static io.rpctimer.journal.Entries.entry;
import static io.rpctimer.journal.Entries.key;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.DeadLetterFilter;
import io.rpctimer.retry.RetryJournal;
import io.rpctimer.retry.RetryJournalException;
import java.net.ConnectException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class DeferredJournalTest {

    private FaultyDataSource db;
    private RetryJournal journal;

    @BeforeEach
    void setUp() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:deferred-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        db = new FaultyDataSource(h2);
    }

    @AfterEach
    void tearDown() {
        if (journal != null) {
            journal.close();
        }
    }

    private JdbcRetryJournal.Builder builder() {
        return JdbcRetryJournal.builder(db).name("jdbc:h2:mem:deferred").lease(Duration.ofSeconds(30));
    }

    /** A journal built while the database is down. */
    private DeferredJournal deferred() throws RetryJournalException {
        db.inject(FaultyDataSource.Mode.DOWN);
        journal = builder().buildOrOpenLater();
        return assertInstanceOf(DeferredJournal.class, journal);
    }

    private static void awaitOpen(DeferredJournal d) {
        await().atMost(Duration.ofSeconds(30)).until(d::isOpen);
    }

    @Test
    void buildOrOpenLaterOpensAtOnceWhenTheDatabaseAnswers() throws Exception {
        journal = builder().buildOrOpenLater();
        assertInstanceOf(JdbcRetryJournal.class, journal);
    }

    @Test
    void buildOrOpenLaterDefersWhenTheDatabaseDoesNotAnswer() throws Exception {
        db.inject(FaultyDataSource.Mode.DOWN);
        journal = builder().buildOrOpenLater();
        assertInstanceOf(DeferredJournal.class, journal);
        assertTrue(journal.describe().contains("not open yet, failing: "), journal.describe());
    }

    @Test
    void aPoolThatCannotStartForWantOfTheDatabaseIsDeferredToo() throws Exception {
        db.inject(FaultyDataSource.Mode.POOL_DOWN);
        journal = builder().buildOrOpenLater();
        DeferredJournal d = assertInstanceOf(DeferredJournal.class, journal);
        assertTrue(d.describe().contains("Failed to initialize pool"), d.describe());
        db.heal();
        awaitOpen(d);
    }

    @Test
    void buildOrOpenLaterFailsWhenTheDatabaseAnswersAndRefuses() {
        db.inject(FaultyDataSource.Mode.DISK_FULL);
        RetryJournalException e = assertThrows(RetryJournalException.class, () -> builder().buildOrOpenLater());
        assertTrue(e.getMessage().contains("No space left on device"), e.getMessage());
    }

    @Test
    void beforeItOpensItHoldsNothingAndNoLease() throws Exception {
        DeferredJournal d = deferred();
        assertThrows(RetryJournalException.class, () -> d.claim(APP, SVC, 10));
        RetryJournalException append = assertThrows(RetryJournalException.class,
                () -> d.append(entry("a", 1_000), false));
        assertFalse(append.maybeWritten(), "an append before the journal opened is known not written");
        ExecutionException fence = assertThrows(ExecutionException.class,
                () -> done(d.fence(key("a"), 1, 2_000, null, null)));
        assertInstanceOf(RetryJournalException.class, fence.getCause());
        assertThrows(ExecutionException.class, () -> done(d.remove(key("a"))));
        assertTrue(d.fences());
        assertFalse(d.leaseHeld());
        assertEquals(0, d.fenceValidityMillis(), "no verdict is valid before it opens");
        d.release(List.of()); // nothing to give up
        assertFalse(d.isOpen());
    }

    @Test
    void itOpensOnItsOwnOnceTheDatabaseAnswers() throws Exception {
        DeferredJournal d = deferred();
        db.heal();
        awaitOpen(d);
        assertTrue(d.leaseHeld());
        assertEquals(List.of(), d.claim(APP, SVC, 10));
        assertEquals(RetryJournal.Append.APPENDED, d.append(entry("a", 1_000), false));
        assertTrue(done(d.remove(key("a"))));
        assertFalse(d.describe().contains("not open yet, failing: "), d.describe());
        d.opener().join(10_000);
        assertFalse(d.opener().isAlive(), "the opener ends once the journal is open");
    }

    @Test
    void untilItOpensItNamesTheLatestFailure() throws Exception {
        DeferredJournal d = deferred();
        db.inject(FaultyDataSource.Mode.DISK_FULL);
        await().atMost(Duration.ofSeconds(30)).until(() -> d.describe().contains("No space left on device"));
        RetryJournalException claim = assertThrows(RetryJournalException.class, () -> d.claim(APP, SVC, 10));
        assertTrue(claim.getMessage().contains("not open yet") && claim.getMessage().contains("No space left"),
                claim.getMessage());
        assertThrows(RetryJournalException.class, () -> d.deadLetters().list(APP, DeadLetterFilter.all(), 1, 10));

        db.heal();
        awaitOpen(d);
        assertEquals(0, d.deadLetters().list(APP, DeadLetterFilter.all(), 1, 10).total());
    }

    @Test
    void aJournalClosedBeforeItOpenedNeverOpens() throws Exception {
        DeferredJournal d = deferred();
        d.close();
        d.opener().join(10_000);
        assertFalse(d.opener().isAlive(), "the opener ends at close");
        db.heal();
        assertThrows(RetryJournalException.class, () -> d.claim(APP, SVC, 10));
        assertFalse(d.isOpen());
    }

    @Test
    void aConnectionErrorIsUnreachableAndAnAnswerIsNot() {
        assertTrue(ConnectionErrors.unreachable(new RetryJournalException("x",
                new SQLException("Connection refused", "08001"))));
        assertTrue(ConnectionErrors.unreachable(new RetryJournalException("x",
                new SQLException("The connection attempt failed.", null, new ConnectException("refused")))));
        assertTrue(ConnectionErrors.unreachable(new java.sql.SQLTransientConnectionException("pool timed out")));
        assertFalse(ConnectionErrors.unreachable(new RetryJournalException("x",
                new SQLException("password authentication failed for user \"postgres\"", "28P01"))));
        assertFalse(ConnectionErrors.unreachable(new RetryJournalException("x",
                new SQLException("database \"nope\" does not exist", "3D000"))));
        assertFalse(ConnectionErrors.unreachable(new IllegalArgumentException("unsupported database")));
    }
}
