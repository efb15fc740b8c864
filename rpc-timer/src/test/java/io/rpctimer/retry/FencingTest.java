package io.rpctimer.retry;

import static io.rpctimer.retry.LifecycleRig.outcomeOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Each send of a journaled call waits for the journal's word: the fence. In a fleet a call goes out only while this
 * instance holds it and can show its lease is valid; it is never sent by an instance whose call was adopted.
 */
class FencingTest {

    private static LifecycleRig fleet() {
        LifecycleRig rig = new LifecycleRig(true).reference();
        rig.journal.fencing = true;
        return rig;
    }

    @Test
    void aLapsedLeaseHoldsTheSendBack_withoutSpendingTheAttempt() {
        LifecycleRig rig = fleet();
        Admission a = rig.admit("c1");
        rig.journal.leaseHeld = false; // renewals failed for most of a lease: other instances may adopt soon
        rig.advance(1, TimeUnit.SECONDS);
        rig.advance(5, TimeUnit.SECONDS);
        assertEquals(List.of(), rig.sent, "nothing is sent while the lease cannot be shown valid");
        assertEquals(List.of("append c1"), rig.journal.log);

        rig.journal.leaseHeld = true;
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(1, rig.lastSent().attempt(), "the held-back attempt is the one sent");
        rig.lastSent().deliver();
        rig.run();
        assertEquals(RetryOutcome.DELIVERED, outcomeOf(a).outcome());
        assertEquals(2, rig.reference.state().sendsDeferred(), "held back at 1 s and at 2 s");
    }

    @Test
    void aFenceTheDatabaseCannotAnswer_holdsTheSendBackInAFleet() {
        LifecycleRig rig = fleet();
        rig.admit("c1");
        rig.journal.failing = true;
        rig.advance(1, TimeUnit.SECONDS);
        rig.advance(3, TimeUnit.SECONDS);
        assertEquals(List.of(), rig.sent, "no send without the database's word that this instance holds the call");

        rig.journal.failing = false;
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(1, rig.sent.size());
        assertEquals(1, rig.lastSent().attempt());
    }

    @Test
    void aFenceTheEmbeddedJournalCannotAnswer_stillSends() {
        LifecycleRig rig = new LifecycleRig(true).reference(); // nobody else can hold its calls
        rig.admit("c1");
        rig.journal.failing = true;
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(1, rig.sent.size());
    }

    /** A row left behind is sent again at the next start: a remove the store refused is tried again. */
    @Test
    void aRemoveTheStoreRefused_isTriedAgainUntilItTakes() {
        LifecycleRig rig = fleet();
        Admission a = rig.admit("c1");
        rig.advance(1, TimeUnit.SECONDS);
        rig.journal.failing = true; // the store cannot take the remove when the call is delivered
        rig.lastSent().deliver();
        rig.run();
        assertEquals(RetryOutcome.DELIVERED, outcomeOf(a).outcome());
        assertTrue(rig.journal.entries.containsKey("c1"), "the first remove failed");

        rig.advance(1, TimeUnit.SECONDS);
        assertTrue(rig.journal.entries.containsKey("c1"), "the store is still down");
        rig.journal.failing = false;
        rig.advance(2, TimeUnit.SECONDS);
        assertFalse(rig.journal.entries.containsKey("c1"), "the remove was tried again");
        assertEquals(1, rig.sent.size(), "the call was sent once");
    }

    @Test
    void aLeaseTooShortForTheSend_holdsItBack() {
        LifecycleRig rig = fleet();
        rig.admit("c1");
        rig.journal.leaseTooShort = true;
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(List.of(), rig.sent);
        rig.journal.leaseTooShort = false;
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(1, rig.sent.size());
    }

    @Test
    void aCallThatIsGoneFromTheJournal_isHandedOverNotSent() {
        LifecycleRig rig = fleet();
        Admission a = rig.admit("c1");
        rig.journal.entries.clear(); // another instance adopted it and delivered it meanwhile
        rig.advance(1, TimeUnit.SECONDS);

        assertEquals(List.of(), rig.sent);
        assertEquals(RetryOutcome.HANDED_OVER, outcomeOf(a).outcome());
        assertEquals(RetryEvent.Custody.ANOTHER_INSTANCE, rig.outcomes().get(0).custody());
        assertFalse(rig.journal.log.contains("remove c1"));
    }

    @Test
    void aReusedBusinessKey_isRejectedWithTheCallerTold_theFirstCallUntouched() {
        LifecycleRig rig = new LifecycleRig(true).reference(100, OverflowPolicy.LOG, RetryBudget.unlimited());
        Admission first = rig.admit("order-42");
        Admission second = rig.admit("order-42");

        assertEquals(Admission.Kind.REJECTED, second.kind());
        assertTrue(second.callerFails(), "even with overflow=log: the caller's key is in use");
        assertTrue(second.reason().contains("retry.id=order-42 of greet() is pending already"), second.reason());
        rig.advance(1, TimeUnit.SECONDS);
        rig.lastSent().deliver();
        rig.run();
        assertEquals(RetryOutcome.DELIVERED, outcomeOf(first).outcome());
        RetryStats s = rig.lifecycle.stats();
        assertEquals(2, s.failedCalls());
        assertEquals(1, s.rejected());
        assertEquals(1, s.delivered());
    }

    @Test
    void destroy_releasesTheJournaledCallsForTheNextClaim_closeDoesNot() {
        LifecycleRig rig = new LifecycleRig(true).reference();
        rig.admit("c1");
        rig.admit("c2");
        rig.reference.destroy();
        assertTrue(rig.journal.log.contains("release [c1, c2]") || rig.journal.log.contains("release [c2, c1]"),
                rig.journal.log.toString());

        LifecycleRig closing = new LifecycleRig(true).reference();
        closing.admit("c1");
        closing.lifecycle.close();
        assertTrue(closing.journal.log.stream().noneMatch(l -> l.startsWith("release")), closing.journal.log
                .toString());
    }

    @Test
    void handedOverCalls_sayWhereTheyAre() {
        LifecycleRig rig = new LifecycleRig(true).reference();
        rig.admit("journaled");
        rig.reference.admit("greet", "unserializable", "x", null, null, new RuntimeException("x"), false);
        rig.lifecycle.close();

        assertEquals(RetryEvent.Custody.JOURNAL, custody(rig, "journaled"));
        assertEquals(RetryEvent.Custody.RETRY_STORE, custody(rig, "unserializable"));
        assertEquals(List.of("unserializable"), rig.handedToSink);
        assertNull(rig.events.get(0).custody(), "only a hand-over has a custody");
    }

    /**
     * Paused past its lease, this instance's call was adopted by another, which sent retries 1 and 2 and died; this
     * instance then adopts it back while its own copy, held back at retry 1, is still in memory. The row is this
     * run's again, so that stale copy would pass its fence: it must never be sent. The call goes on once, at the
     * journal's retry, and its caller's handle gets the one outcome.
     */
    @Test
    void aCallAdoptedBackWhileItsStaleCopyIsInMemory_isSentOnceAtTheJournalsRetry() {
        LifecycleRig rig = fleet();
        Admission a = rig.admit("c1");
        rig.journal.leaseHeld = false;
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(List.of(), rig.sent, "retry 1 held back: the lease lapsed");

        long now = rig.clockMillis.get();
        rig.journal.claimable.add(RetryLifecycleTest.entry("c1", "c1", 3, now, now - 2_000));
        rig.journal.leaseHeld = true;
        assertEquals(0, rig.reference.resume(), "the call is not new to this reference");
        rig.advance(1, TimeUnit.SECONDS);
        rig.advance(1, TimeUnit.SECONDS);

        assertEquals(1, rig.sent.size(), "one send: " + rig.journal.log);
        assertEquals(3, rig.lastSent().attempt(), "the retry the journal said was next");
        rig.lastSent().deliver();
        rig.run();
        assertEquals(RetryOutcome.DELIVERED, outcomeOf(a).outcome());
        assertEquals(3, outcomeOf(a).attempt());
        assertEquals(1, rig.outcomes().size(), "one outcome for the call");
        RetryStats s = rig.lifecycle.stats();
        assertEquals(1, s.failedCalls());
        assertEquals(0, s.pending());
    }

    /**
     * A call the journal handed out fenced (its adoption or unpark was also the fence of its next retry) is sent on
     * that verdict, with no fence of its own; its later retries are fenced each.
     */
    @Test
    void aCallHandedOutFenced_isSentOnItsHandOutsVerdict_itsLaterRetriesFencedEach() {
        LifecycleRig rig = fleet();
        assertEquals(1, claimFenced(rig, 1));
        rig.advance(1, TimeUnit.SECONDS);

        assertEquals(1, rig.sent.size());
        assertEquals(1, rig.lastSent().attempt());
        assertEquals(List.of("claim 1"), rig.journal.log, "no fence: the hand-out fenced retry 1");
        rig.lastSent().failRpc();
        rig.advance(10, TimeUnit.SECONDS);
        assertEquals(2, rig.sent.size());
        assertEquals(2, rig.lastSent().attempt());
        assertEquals(List.of("claim 1", "fence c1 2"), rig.journal.log);
    }

    /** A hand-out's fence has an age too: past the fence's margin (the budget held the call back) it is asked anew. */
    @Test
    void aCallHandedOutFencedButSentLaterThanItsMargin_isFencedAgain() {
        LifecycleRig rig = fleet();
        rig.journal.fenceValidityMillis = 0;
        claimFenced(rig, 3);
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(List.of(), rig.sent, "neither the hand-out's verdict nor the fence's is fresh enough");
        assertTrue(rig.journal.log.contains("fence c1 3"), rig.journal.log.toString());

        rig.journal.fenceValidityMillis = Long.MAX_VALUE;
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(3, rig.lastSent().attempt(), "the same retry, fenced again");
    }

    /** Whatever the hand-out's fence said, a lapsed lease stops the send. */
    @Test
    void aCallHandedOutFenced_isNotSentWhileTheLeaseIsLapsed() {
        LifecycleRig rig = fleet();
        claimFenced(rig, 3);
        rig.journal.leaseHeld = false;
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(List.of(), rig.sent);

        rig.journal.leaseHeld = true;
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(1, rig.sent.size());
        assertEquals(3, rig.lastSent().attempt());
        assertEquals(List.of("claim 1"), rig.journal.log, "the hand-out's verdict still held: no fence");
    }

    /** A claim hands out call c1, due now at retry {@code attempt}, fenced. @return the calls it scheduled */
    private static int claimFenced(LifecycleRig rig, int attempt) {
        long now = rig.clockMillis.get();
        rig.journal.claimable.add(RetryLifecycleTest.entry("c1", "c1", attempt, now, now - 2_000).asFenced());
        return rig.reference.resume();
    }

    /**
     * A fence proves the lease valid for a margin after the fence was asked for; an instance paused between its fence
     * and its send (a stop signal, a long GC pause) may wake after another instance adopted the call. A verdict that
     * arrives later than the margin is not leave to send: the fence is asked again.
     */
    @Test
    void aFenceAnsweredLaterThanItsMargin_isAskedAgain_notTakenAsLeaveToSend() {
        LifecycleRig rig = fleet();
        rig.admit("c1");
        rig.journal.fenceValidityMillis = 0; // every verdict arrives too late to send on
        rig.advance(1, TimeUnit.SECONDS);
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(List.of(), rig.sent, "a stale verdict sends nothing");
        long fences = rig.journal.log.stream().filter(l -> l.startsWith("fence c1 1")).count();
        assertTrue(fences >= 2, "the fence is asked again: " + rig.journal.log);

        rig.journal.fenceValidityMillis = Long.MAX_VALUE;
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(1, rig.sent.size());
        assertEquals(1, rig.lastSent().attempt(), "the held-back attempt is the one sent");
    }

    /**
     * A graceful stop during a database restart ({@code failback.store.down=memory}): a call whose append failed would
     * go to the hand-over sink, which ends with the process. The stop waits a bounded time for the journal and appends it there.
     */
    @Test
    void aStopDuringABriefJournalOutage_journalsTheCallWhoseAppendFailed() {
        LifecycleRig rig = new LifecycleRig(true, DeadLetterPolicy.defaults(), java.time.Duration.ofSeconds(30));
        rig.policy = LifecycleRig.policy(3, StoreDownPolicy.MEMORY);
        rig.reference();
        rig.journal.appendsToFail = 3; // the admit's append, and the stop's first two tries
        rig.admit("c1");
        assertFalse(rig.journal.entries.containsKey("c1"), "its append failed");

        rig.lifecycle.close();
        assertTrue(rig.journal.entries.containsKey("c1"), "appended at the stop once the journal was back");
        assertEquals(RetryEvent.Custody.JOURNAL, custody(rig, "c1"));
        assertEquals(List.of(), rig.handedToSink);
    }

    @Test
    void aStopWhileTheJournalStaysDown_handsTheCallToTheSinkAfterItsWait() {
        LifecycleRig rig = new LifecycleRig(true); // no wait
        rig.policy = LifecycleRig.policy(3, StoreDownPolicy.MEMORY);
        rig.reference();
        rig.journal.failing = true;
        rig.admit("c1");
        rig.lifecycle.close();
        assertEquals(RetryEvent.Custody.RETRY_STORE, custody(rig, "c1"));
        assertEquals(List.of("c1"), rig.handedToSink);
    }

    private static RetryEvent.Custody custody(LifecycleRig rig, String retryId) {
        return rig.outcomes().stream().filter(e -> e.retryId().equals(retryId)).findFirst().orElseThrow().custody();
    }
}
