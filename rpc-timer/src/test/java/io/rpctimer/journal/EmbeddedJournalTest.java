package io.rpctimer.journal;

import io.rpctimer.retry.RetryJournalEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static io.rpctimer.journal.Entries.APP;
import static java.nio.charset.StandardCharsets.UTF_8;
import static io.rpctimer.journal.Entries.SVC;
import static io.rpctimer.journal.Entries.entry;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link EmbeddedJournal} inside one JVM: slots, reopening, adopting a free slot, a corrupt file, the file's size. */
@Timeout(60)
class EmbeddedJournalTest {

    /** At most the file of a journal whose burst of calls was delivered: a few pages, well under this. */
    private static final long SMALL_FILE_BYTES = 1L << 20;

    @TempDir
    Path base;

    private static List<String> ids(List<RetryJournalEntry> entries) {
        return entries.stream().map(RetryJournalEntry::retryId).toList();
    }

    @Test
    void twoJournalsOfOneApplication_takeDifferentSlots_inTheApplicationsDirectory() throws Exception {
        try (EmbeddedJournal a = EmbeddedJournal.open(base, "my app");
             EmbeddedJournal b = EmbeddedJournal.open(base, "my app")) {
            assertEquals(0, a.slot());
            assertEquals(1, b.slot());
            assertEquals(base.resolve("my_app").resolve("journal-1.mv.db"), b.file());
            a.append(entry("a1", 0), false);
            assertEquals(List.of(), b.claim(APP, SVC, 10), "b never reads a's slot while a holds it");
        }
    }

    @Test
    void reopen_takesTheSlotBack_withItsEntries() throws Exception {
        try (EmbeddedJournal j = EmbeddedJournal.open(base, APP)) {
            j.append(entry("r1", 1), false);
            j.append(entry("r2", 2), true);
        }
        try (EmbeddedJournal j = EmbeddedJournal.open(base, APP)) {
            assertEquals(0, j.slot());
            assertEquals(List.of("r1", "r2"), ids(j.claim(APP, SVC, 10)));
        }
    }

    /** Two processes that each had a call pending under one business key: neither call may be lost by the move. */
    @Test
    void aCallWhoseKeyTheLiveSlotHoldsForAnotherCall_staysInItsSlotUntilThatOneEnds() throws Exception {
        EmbeddedJournal a = EmbeddedJournal.open(base, APP);
        try (EmbeddedJournal b = EmbeddedJournal.open(base, APP)) {
            b.append(new RetryJournalEntry("order-42", APP, SVC, "greet", "b's call".getBytes(UTF_8), 1, 1, null,
                    null, 2_000), false);
        }
        a.append(new RetryJournalEntry("order-42", APP, SVC, "greet", "a's call".getBytes(UTF_8), 1, 0, null, null,
                1_000), false);

        assertEquals(0, a.adoptFreeSlots(), "the slot holds order-42 for a's own call");
        assertEquals(Boolean.TRUE, Entries.done(a.remove(Entries.key("order-42")))); // a's call ends
        assertEquals(1, a.adoptFreeSlots());
        List<RetryJournalEntry> moved = a.unpark(APP, SVC, 10);
        assertEquals(List.of("b's call"), moved.stream().map(e -> new String(e.payload(), UTF_8)).toList());
        a.close();
    }

    @Test
    void entriesOfASlotNobodyHolds_areMovedIntoTheLiveSlot_once() throws Exception {
        EmbeddedJournal a = EmbeddedJournal.open(base, APP);
        try (EmbeddedJournal b = EmbeddedJournal.open(base, APP)) {
            b.append(entry("b1", 1), false);
            b.append(entry("b2", 2), true);
        }
        a.append(entry("a1", 0), false);

        assertEquals(List.of("b1", "b2"), ids(a.claim(APP, SVC, 10)), "a1 is on this run's wheel");
        assertEquals(0, a.adoptFreeSlots(), "slot 1 is empty now");
        a.close();
        try (EmbeddedJournal again = EmbeddedJournal.open(base, APP);
             EmbeddedJournal other = EmbeddedJournal.open(base, APP)) {
            assertEquals(List.of("a1", "b1", "b2"), ids(again.claim(APP, SVC, 10)));
            assertEquals(List.of(), ids(other.claim(APP, SVC, 10)));
        }
    }

    @Test
    void corruptSlotFile_isMovedAsideNamed_andTheSlotStartsEmpty() throws Exception {
        Path dir = Files.createDirectories(base.resolve(APP));
        Files.write(dir.resolve("journal-0.mv.db"), new byte[8192]);

        try (EmbeddedJournal j = EmbeddedJournal.open(base, APP)) {
            assertEquals(0, j.slot());
            j.append(entry("r1", 0), false);
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertTrue(files.anyMatch(f -> f.getFileName().toString().startsWith("journal-0.mv.db.corrupt-")));
        }
    }

    /**
     * A burst of calls appended and removed by many callers at once leaves most of the file dead: H2 writes every
     * commit to a new place. The file shrinks once the burst is over, while the journal stays open and a trickle of
     * failed calls goes on, and the entry that stayed live all along is intact after a reopen.
     */
    @Test
    void fileOfABurstOfRemovedCalls_shrinksWhileTheJournalRunsOn_andKeepsTheLiveEntry() throws Exception {
        int calls = 4_000;
        byte[] payload = new byte[1024];
        new Random(7).nextBytes(payload);
        Path file;
        try (EmbeddedJournal j = EmbeddedJournal.open(base, APP)) {
            file = j.file();
            j.append(new RetryJournalEntry("live", APP, SVC, "greet", payload, 1, 0, null, null, 1_000L), false);
            burst(calls, i -> j.append(new RetryJournalEntry("burst-" + i, APP, SVC, "greet", payload, 1, 0, null,
                    null, 1_000L), false));
            burst(calls, i -> assertEquals(Boolean.TRUE, Entries.done(j.remove(Entries.key("burst-" + i)))));
            long afterBurst = Files.size(file);
            assertTrue(afterBurst > 4 * SMALL_FILE_BYTES, "the burst left " + afterBurst + " bytes: too few to tell");

            ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
            try { // a failed call every 250 ms goes on: a trickle, not a burst
                AtomicInteger n = new AtomicInteger();
                ScheduledFuture<?> writes = trickle.scheduleWithFixedDelay(() -> appendAndRemove(j,
                        "trickle-" + n.incrementAndGet(), payload), 0, 250, TimeUnit.MILLISECONDS);
                await().atMost(Duration.ofSeconds(30)).until(() -> Files.size(file) <= SMALL_FILE_BYTES);
                if (writes.isDone()) {
                    writes.get(); // a write of the trickle failed: this throws its failure
                }
            } finally {
                trickle.shutdown();
                assertTrue(trickle.awaitTermination(30, TimeUnit.SECONDS));
            }
            j.append(entry("after", 5), false);
        }
        assertTrue(Files.size(file) <= SMALL_FILE_BYTES, "after close: " + Files.size(file) + " bytes");
        try (EmbeddedJournal j = EmbeddedJournal.open(base, APP)) {
            List<RetryJournalEntry> left = j.claim(APP, SVC, 10);
            assertEquals(List.of("live", "after"), ids(left));
            assertArrayEquals(payload, left.get(0).payload());
        }
    }

    private static void appendAndRemove(EmbeddedJournal j, String id, byte[] payload) {
        try {
            j.append(new RetryJournalEntry(id, APP, SVC, "greet", payload, 1, 0, null, null, 1_000L), false);
            assertEquals(Boolean.TRUE, Entries.done(j.remove(Entries.key(id))));
        } catch (Exception e) {
            throw new AssertionError(id + " failed", e);
        }
    }

    private interface Write {
        void run(int i) throws Exception;
    }

    /** Runs {@code write} for 0..calls-1 from 16 threads at once, as failing callers would. */
    private static void burst(int calls, Write write) throws Exception {
        ExecutorService callers = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                int first = t;
                done.add(callers.submit(() -> {
                    for (int i = first; i < calls; i += 16) {
                        write.run(i);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            callers.shutdownNow();
        }
    }
}
