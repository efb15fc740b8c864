package io.rpctimer.retry;

import static io.rpctimer.retry.LifecycleRig.outcomeOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code overflow=spill}: past the cap, failed calls are parked in the journal and come onto the wheel as room frees. */
class SpillTest {

    private LifecycleRig spilling(boolean withJournal) {
        return new LifecycleRig(withJournal).reference(2, OverflowPolicy.SPILL, RetryBudget.unlimited());
    }

    @Test
    void pastTheCap_parkedNotRejected_unparkedInOrderAsOutcomesFreeRoom() {
        LifecycleRig rig = spilling(true);
        Admission c1 = rig.admit("c1");
        rig.admit("c2");
        Admission c3 = rig.admit("c3");
        Admission c4 = rig.admit("c4");

        assertEquals(Admission.Kind.PARKED, c3.kind());
        assertFalse(c3.callerFails());
        assertEquals(2, rig.journal.parkedCount());
        assertEquals(2, rig.reference.pending(), "memory stays at the cap");
        assertEquals(2, rig.reference.state().parked());
        rig.advance(1, TimeUnit.SECONDS);
        rig.sent.get(0).deliver(); // c1's outcome frees one place
        rig.run();
        assertEquals(RetryOutcome.DELIVERED, outcomeOf(c1).outcome());
        assertEquals(1, rig.journal.parkedCount(), "one unparked for the one place");
        assertEquals(2, rig.reference.pending());
        rig.advance(1, TimeUnit.MILLISECONDS); // c3 was due at 1 s: it goes at once
        assertEquals("c3", rig.lastSent().call().retryId());
        rig.lastSent().deliver();
        rig.sent.get(1).deliver(); // c2
        rig.run();
        rig.advance(1, TimeUnit.MILLISECONDS);
        assertEquals("c4", rig.lastSent().call().retryId());
        rig.lastSent().deliver();
        rig.run();

        assertEquals(RetryOutcome.DELIVERED, outcomeOf(c3).outcome(), "the handle followed the parked call");
        assertEquals(RetryOutcome.DELIVERED, outcomeOf(c4).outcome());
        RetryStats s = rig.lifecycle.stats();
        assertEquals(4, s.failedCalls());
        assertEquals(4, s.delivered());
        assertEquals(0, rig.lifecycle.state().resumed(), "parked here, not resumed");
        assertTrue(rig.journal.entries.isEmpty());
        assertEquals(0, rig.reference.state().parked());
    }

    /**
     * A park whose write timed out may commit after an unpark that found no parked call in the journal: once the
     * write is known to have taken effect, the call is unparked as room allows, not left for the next claim.
     */
    @Test
    void aParkThatCommitsAfterAnUnparkFoundNothing_isUnparkedOnceItsWriteIsKnown() {
        LifecycleRig rig = spilling(true);
        rig.admit("c1");
        rig.admit("c2");
        java.util.concurrent.CompletableFuture<Boolean> commit = new java.util.concurrent.CompletableFuture<>();
        rig.journal.lateCommit = commit;
        Admission c3 = rig.admit("c3");
        assertEquals(Admission.Kind.PARKED, c3.kind(), "maybe written: kept, not rejected");
        rig.advance(1, TimeUnit.SECONDS);
        rig.sent.get(0).deliver(); // room frees while the park is not committed yet
        rig.run();
        assertEquals(List.of("unpark 0"), rig.journal.log.stream().filter(l -> l.startsWith("unpark")).toList());

        rig.journal.commitLate(commit);
        rig.run();
        rig.advance(1, TimeUnit.MILLISECONDS);
        assertEquals("c3", rig.lastSent().call().retryId(), "unparked once its write was known: " + rig.journal.log);
        rig.lastSent().deliver();
        rig.run();
        assertEquals(RetryOutcome.DELIVERED, outcomeOf(c3).outcome());
    }

    @Test
    void journalFailsToUnparkAtTheLastOutcome_triedAgainASecondLater() {
        LifecycleRig rig = spilling(true);
        rig.admit("c1");
        rig.admit("c2");
        Admission c3 = rig.admit("c3");
        rig.advance(1, TimeUnit.SECONDS);
        rig.journal.failing = true;
        rig.sent.forEach(LifecycleRig.Sent::deliver);
        rig.run();
        assertEquals(1, rig.reference.state().parked(), "the journal refused the unpark");
        rig.journal.failing = false;
        rig.advance(1, TimeUnit.SECONDS);
        rig.advance(1, TimeUnit.MILLISECONDS);
        assertEquals("c3", rig.lastSent().call().retryId());
        rig.lastSent().deliver();
        rig.run();
        assertEquals(RetryOutcome.DELIVERED, outcomeOf(c3).outcome());
    }

    @Test
    void spillWithoutJournal_rejectsAsReject() {
        LifecycleRig rig = spilling(false);
        rig.admit("c1");
        rig.admit("c2");
        Admission c3 = rig.admit("c3");
        assertEquals(Admission.Kind.REJECTED, c3.kind());
        assertTrue(c3.callerFails());
    }

    @Test
    void spillTheJournalRefuses_rejectedAndTheCallerTold() {
        LifecycleRig rig = spilling(true);
        rig.admit("c1");
        rig.admit("c2");
        rig.journal.failing = true;
        Admission c3 = rig.admit("c3");
        assertEquals(Admission.Kind.REJECTED, c3.kind());
        assertTrue(c3.callerFails());
        assertTrue(c3.reason().endsWith("the journal could not park it"), c3.reason());
        assertEquals(RetryOutcome.REJECTED, outcomeOf(c3).outcome());
    }

    @Test
    void closeWithParkedCalls_theyStayParked_countedAndWatchersToldHandedOver() {
        LifecycleRig rig = spilling(true);
        rig.admit("c1");
        rig.admit("c2");
        Admission c3 = rig.admit("c3");
        rig.lifecycle.close();

        assertEquals(RetryOutcome.HANDED_OVER, outcomeOf(c3).outcome());
        assertEquals(1, rig.journal.parkedCount());
        assertEquals(3, rig.journal.entries.size());
        RetryStats s = rig.lifecycle.stats();
        assertEquals(3, s.handedOver());
        assertEquals(0, s.pending());
    }

    /**
     * A call that fails while a claim is in the journal finds the places the claim asked for taken: it spills, and
     * memory never holds more calls than the cap.
     */
    @Test
    void aCallAdmittedWhileAClaimIsInTheJournal_spills_andTheCapHolds() {
        LifecycleRig rig = spilling(true);
        long now = rig.clockMillis.get();
        for (int i = 1; i <= 3; i++) {
            rig.journal.claimable.add(RetryLifecycleTest.entry("r" + i, "r" + i, 1, now + 60_000, now - 1000));
        }
        Admission[] during = new Admission[1];
        rig.journal.onClaim = () -> during[0] = rig.admit("c1");

        assertEquals(2, rig.reference.resume());

        assertEquals(Admission.Kind.PARKED, during[0].kind(), "the claim's places were taken");
        assertEquals(2, rig.reference.pending(), "memory stays at the cap");
    }

    /** The same for an unpark: a call admitted while the unpark is in the journal spills. */
    @Test
    void aCallAdmittedWhileAnUnparkIsInTheJournal_spills_andTheCapHolds() {
        LifecycleRig rig = spilling(true);
        rig.admit("c1");
        rig.admit("c2");
        rig.admit("c3"); // parked
        rig.admit("c4"); // parked
        Admission[] during = new Admission[1];
        rig.journal.onUnpark = () -> during[0] = rig.admit("c5");
        rig.advance(1, TimeUnit.SECONDS);
        rig.sent.get(0).deliver(); // c1's outcome frees one place: an unpark asks for it
        rig.run();

        assertEquals(Admission.Kind.PARKED, during[0].kind(), "the unpark's place was taken");
        assertEquals(2, rig.reference.pending(), "memory stays at the cap");
    }

    @Test
    void resumeBeyondTheCap_restStaysParked_andComesAsRoomFrees() {
        LifecycleRig rig = spilling(true);
        long now = rig.clockMillis.get();
        for (int i = 1; i <= 5; i++) {
            rig.journal.claimable.add(RetryLifecycleTest.entry("r" + i, "r" + i, 1, now + i, now - 1000));
        }
        assertEquals(2, rig.reference.resume());
        assertEquals(3, rig.journal.parkedCount());
        for (int round = 0; round < 5; round++) {
            rig.advance(10, TimeUnit.MILLISECONDS);
            rig.sent.stream().filter(s -> !s.reply().isDone()).forEach(LifecycleRig.Sent::deliver);
            rig.run();
        }
        assertEquals(List.of("r1", "r2", "r3", "r4", "r5"),
                rig.sent.stream().map(s -> s.call().retryId()).distinct().toList());
        assertEquals(5, rig.lifecycle.stats().delivered());
        assertEquals(5, rig.lifecycle.state().resumed());
        assertTrue(rig.journal.entries.isEmpty());
    }
}
