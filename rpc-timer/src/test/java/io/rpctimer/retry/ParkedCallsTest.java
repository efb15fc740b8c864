package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Parked calls come back as room frees, and room freed while an unpark is finishing is not left empty. */
class ParkedCallsTest {

    private final FakeJournal fake = new FakeJournal();
    private final GuardedJournal journal = new GuardedJournal("app", fake);
    private final QueueExecutor executor = new QueueExecutor();
    private final AtomicInteger room = new AtomicInteger();
    private final AtomicInteger cap = new AtomicInteger(2);
    private final VirtualTimer timer = new VirtualTimer();
    private final List<String> scheduled = new ArrayList<>();

    private final ParkedCalls parked = new ParkedCalls(journal, "svc", executor, timer, new ParkedCalls.Places() {
        @Override
        public int free() {
            return room.get();
        }

        @Override
        public int take(int want) {
            return Math.min(want, room.get());
        }

        @Override
        public void giveBack(int taken) {
        }
    }, cap::get,
            handedOut -> {
                handedOut.entries().forEach(e -> scheduled.add(e.retryId()));
                room.addAndGet(-handedOut.entries().size());
            });

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

    @Test
    void lessThanABatchOfRoom_waitsForMoreRoomOrTheGatheringTime_thenUnparksWhatThereIs() throws Exception {
        cap.set(100); // a batch: a quarter of the cap
        for (int i = 1; i <= 40; i++) {
            fake.append(entry("c" + i), true);
            parked.parked();
        }
        room.set(1);
        parked.maybeUnpark();
        parked.maybeUnpark();
        assertEquals(0, executor.runAll(), "one free place: no unpark of its own");
        assertEquals(1, timer.live(Object.class).size(), "one wait for more room, however many outcomes came");

        room.set(25);
        parked.maybeUnpark();
        executor.runAll();
        assertEquals(25, scheduled.size(), "a quarter of the cap free: unparked at once, in one batch");

        room.set(3);
        parked.maybeUnpark();
        assertEquals(0, executor.runAll());
        timer.advance(ParkedCalls.GATHER_MILLIS, TimeUnit.MILLISECONDS);
        executor.runAll();
        assertEquals(28, scheduled.size(), "the gathering time over: what room there is is filled");
    }
}
