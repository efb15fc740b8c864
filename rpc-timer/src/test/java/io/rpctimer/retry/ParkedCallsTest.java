package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Parked calls come back as room frees, and room freed while an unpark is finishing is not left empty. */
class ParkedCallsTest {

    private final FakeJournal fake = new FakeJournal();
    private final GuardedJournal journal = new GuardedJournal("app", fake);
    private final QueueExecutor executor = new QueueExecutor();
    private final AtomicInteger room = new AtomicInteger();
    private final List<String> scheduled = new ArrayList<>();

    private final ParkedCalls parked = new ParkedCalls(journal, "svc", executor, new VirtualTimer(), room::get,
            es -> es.forEach(e -> scheduled.add(e.retryId())));

    private static RetryJournalEntry entry(String id) {
        return new RetryJournalEntry(id, "app", "svc", "greet", id.getBytes(StandardCharsets.UTF_8), 1, 0, null,
                null, 0);
    }

    @Test
    void roomFreedWhileAnUnparkFinishes_isFilledWithoutWaitingForAnotherOutcome() throws Exception {
        fake.append(entry("c1"), true);
        parked.parked();
        room.set(2);
        parked.maybeUnpark();
        fake.onUnpark = () -> { // while the journal answers: another call is parked, and an outcome frees room
            try {
                fake.append(entry("c2"), true);
            } catch (RetryJournalException e) {
                throw new AssertionError(e);
            }
            parked.parked();
            parked.maybeUnpark(); // an unpark runs: this one leaves the room to it
        };
        executor.runAll();

        assertEquals(List.of("c1", "c2"), scheduled, "c2 waited for the next outcome or claim");
        assertEquals(0, fake.parkedCount());
    }
}
