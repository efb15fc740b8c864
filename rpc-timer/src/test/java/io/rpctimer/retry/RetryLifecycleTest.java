package io.rpctimer.retry;

import static io.rpctimer.retry.LifecycleRig.outcomeOf;
import static io.rpctimer.retry.RetryEvent.Type.ABANDONED;
import static io.rpctimer.retry.RetryEvent.Type.DELIVERED;
import static io.rpctimer.retry.RetryEvent.Type.FAILED;
import static io.rpctimer.retry.RetryEvent.Type.HANDED_OVER;
import static io.rpctimer.retry.RetryEvent.Type.REJECTED;
import static io.rpctimer.retry.RetryEvent.Type.SCHEDULED;
import static io.rpctimer.retry.RetryEvent.Type.SENT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The retry lifecycle on virtual time, without Dubbo: every outcome path, the journal's hooks, and the hand-over.
 * Budget and spill have their own test classes.
 */
class RetryLifecycleTest {

    @Test
    void admit_retryDueAfterBackoff_deliveredOnRetry1WithOneOutcome() {
        LifecycleRig rig = new LifecycleRig(false).reference();
        Admission a = rig.admit("c1");

        assertEquals(Admission.Kind.SCHEDULED, a.kind());
        assertFalse(a.callerFails());
        assertEquals(1, rig.reference.pending());
        rig.advance(999, TimeUnit.MILLISECONDS);
        assertTrue(rig.sent.isEmpty(), "not due before 1 s");
        rig.advance(1, TimeUnit.MILLISECONDS);
        assertEquals(1, rig.sent.size());
        assertEquals(1, rig.lastSent().attempt());
        assertEquals("c1", rig.lastSent().call().payload());
        assertEquals("p0:20880", rig.lastSent().call().lastProvider(), "the provider to avoid");
        rig.lastSent().call().sent("p1:20880");
        rig.lastSent().deliver();
        rig.run();

        assertEquals(List.of(SCHEDULED, SENT, DELIVERED), rig.typesOf("c1"));
        CallOutcome o = outcomeOf(a);
        assertEquals(RetryOutcome.DELIVERED, o.outcome());
        assertEquals(1, o.attempt());
        assertEquals(0, rig.reference.pending());
        RetryStats s = rig.lifecycle.stats();
        assertEquals(1, s.failedCalls());
        assertEquals(1, s.delivered());
        assertEquals(0, s.pending());
        assertTrue(rig.events.stream().allMatch(e -> LifecycleRig.APP.equals(e.application())),
                "every event names the application");
    }

    @Test
    void failedRetries_backOffExponentially_thenAbandonedAfterTheBudget() {
        LifecycleRig rig = new LifecycleRig(false).reference();
        Admission a = rig.admit("c1");
        rig.advance(1, TimeUnit.SECONDS);
        rig.lastSent().failRpc();
        rig.run();
        rig.advance(1999, TimeUnit.MILLISECONDS);
        assertEquals(1, rig.sent.size(), "retry 2 waits 2 s");
        rig.advance(1, TimeUnit.MILLISECONDS);
        assertEquals(2, rig.lastSent().attempt());
        assertEquals("p1:20880", rig.lastSent().call().lastProvider());
        rig.lastSent().failRpc();
        rig.advance(4, TimeUnit.SECONDS);
        assertEquals(3, rig.lastSent().attempt());
        rig.lastSent().failRpc();
        rig.run();

        CallOutcome o = outcomeOf(a);
        assertEquals(RetryOutcome.ABANDONED, o.outcome());
        assertEquals(3, o.attempt());
        assertEquals("java.net.ConnectException: refused", o.lastFailure());
        assertEquals(List.of(SCHEDULED, FAILED, SCHEDULED, FAILED, SCHEDULED, FAILED, ABANDONED), rig.typesOf("c1"));
        assertTrue(rig.timer.live(RetryCall.class).isEmpty());
    }

    @Test
    void businessFailureThePolicyDoesNotRetry_abandonedAtThatAttempt() {
        LifecycleRig rig = new LifecycleRig(false).reference();
        Admission a = rig.admit("c1");
        rig.advance(1, TimeUnit.SECONDS);
        rig.lastSent().reply().complete(AttemptResult.failed("p1:20880", new IllegalStateException("no"), false));
        rig.run();

        assertEquals(RetryOutcome.ABANDONED, outcomeOf(a).outcome());
        assertEquals(1, outcomeOf(a).attempt());
        assertEquals(1, rig.sent.size());
    }

    @Test
    void retriesZero_abandonedAtOnceWithAttempt0() {
        LifecycleRig rig = new LifecycleRig(true).reference();
        rig.policy = LifecycleRig.policy(0);
        Admission a = rig.admit("c1");

        assertEquals(Admission.Kind.ENDED, a.kind());
        assertEquals(new CallOutcome(RetryOutcome.ABANDONED, "c1", 0, "p0:20880",
                "java.net.ConnectException: refused", rig.clockMillis.get()), outcomeOf(a));
        assertTrue(rig.journal.log.isEmpty(), "nothing to persist: " + rig.journal.log);
        assertEquals(0, rig.reference.pending());
    }

    @Test
    void pendingCap_rejectTellsTheCaller_logDoesNot_bothOutcomeRejected() {
        LifecycleRig rig = new LifecycleRig(false).reference(1, OverflowPolicy.REJECT, RetryBudget.unlimited());
        rig.admit("c1");
        Admission rejected = rig.admit("c2");
        rig.reference.limits(1, OverflowPolicy.LOG);
        Admission logged = rig.admit("c3");

        assertEquals(Admission.Kind.REJECTED, rejected.kind());
        assertTrue(rejected.callerFails());
        assertTrue(rejected.reason().contains("1 retries already pending (failbacktasks=1)"), rejected.reason());
        assertFalse(logged.callerFails());
        assertEquals(RetryOutcome.REJECTED, outcomeOf(rejected).outcome());
        assertEquals(RetryOutcome.REJECTED, outcomeOf(logged).outcome());
        assertEquals(0, outcomeOf(logged).attempt());
        assertEquals(List.of(REJECTED), rig.typesOf("c2"));
        assertEquals(1, rig.reference.pending());
        assertEquals(2, rig.lifecycle.stats().rejected());
    }

    @Test
    void unwatchedCall_hasNoHandle() {
        LifecycleRig rig = new LifecycleRig(false).reference();
        Admission a = rig.reference.admit("greet", "c1", "c1", null, null, new RuntimeException("x"), false);
        assertNull(a.outcome());
    }

    // ------------------------------------------------------------------ the journal

    @Test
    void journal_appendedBeforeAdmitReturns_fencedBeforeEachRetry_removedAtOutcome() {
        LifecycleRig rig = new LifecycleRig(true).reference();
        rig.admit("c1");

        FakeJournal.Held held = rig.journal.entries.get("c1");
        assertFalse(held.parked());
        RetryJournalEntry e = held.entry();
        assertEquals(LifecycleRig.APP, e.application());
        assertEquals(LifecycleRig.SERVICE_KEY, e.serviceKey());
        assertEquals(1, e.attempt());
        assertEquals(rig.clockMillis.get() + 1000, e.dueEpochMillis());
        assertEquals("java.net.ConnectException: refused", e.lastFailure());
        assertEquals("c1", new String(e.payload(), StandardCharsets.UTF_8));
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(2, rig.journal.entries.get("c1").entry().attempt(), "retry 1 recorded before it was sent");
        assertEquals(rig.clockMillis.get() + 2000, rig.journal.entries.get("c1").entry().dueEpochMillis());
        rig.lastSent().failRpc();
        rig.run();
        rig.advance(2, TimeUnit.SECONDS);
        assertEquals("java.net.ConnectException: refused", rig.journal.entries.get("c1").entry().lastFailure());
        rig.lastSent().deliver();
        rig.run();

        assertEquals(List.of("append c1", "fence c1 1", "fence c1 2", "remove c1"), rig.journal.log);
    }

    @Test
    void journalDown_callIsRejected_andItsCallerFails_soNoTakenCallLivesInMemoryOnly() {
        LifecycleRig rig = new LifecycleRig(true).reference();
        rig.journal.failing = true;
        Admission a = rig.admit("c1");

        assertEquals(Admission.Kind.REJECTED, a.kind());
        assertTrue(a.callerFails(), "the caller gets the failure, not the empty failback result");
        assertTrue(a.reason().contains("failback.store.down=reject"), a.reason());
        assertEquals(RetryOutcome.REJECTED, outcomeOf(a).outcome());
        assertEquals(0, rig.reference.state().pending());
        rig.advance(10, TimeUnit.SECONDS);
        assertEquals(List.of(), rig.sent, "a rejected call is never sent");
    }

    @Test
    void journalDown_withStoreDownMemory_callRetriesInMemory_countedAndStillDelivered() {
        LifecycleRig rig = new LifecycleRig(true);
        rig.policy = LifecycleRig.policy(3, StoreDownPolicy.MEMORY);
        rig.reference();
        rig.journal.failing = true;
        Admission a = rig.admit("c1");
        assertEquals(Admission.Kind.SCHEDULED, a.kind());
        assertFalse(a.callerFails());
        rig.advance(1, TimeUnit.SECONDS);
        rig.lastSent().deliver();
        rig.run();

        assertEquals(RetryOutcome.DELIVERED, outcomeOf(a).outcome());
        assertEquals(1, rig.lifecycle.state().journalFailures(), "one failed append, no fence or remove tried");
    }

    @Test
    void aCallWhoseAppendFailed_isJournaledAtItsNextAttemptOnceTheJournalWorks() {
        LifecycleRig rig = new LifecycleRig(true);
        rig.policy = LifecycleRig.policy(3, StoreDownPolicy.MEMORY);
        rig.reference();
        rig.journal.failing = true;
        rig.admit("c1"); // the journal is down: the call goes on in memory
        rig.journal.failing = false;
        rig.reference.resume(); // the periodic claim finds the journal working again

        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(List.of("claim 0", "append c1", "fence c1 1"), rig.journal.log);
        rig.lastSent().failRpc();
        rig.run();
        rig.lifecycle.close();
        assertEquals(RetryEvent.Custody.JOURNAL, rig.outcomes().get(0).custody());
        assertTrue(rig.handedToSink.isEmpty());
    }

    @Test
    void aCallWhoseAppendFailed_isJournaledAtAStopIfTheJournalWorksByThen() {
        LifecycleRig rig = new LifecycleRig(true);
        rig.policy = LifecycleRig.policy(3, StoreDownPolicy.MEMORY);
        rig.reference();
        rig.journal.failing = true;
        Admission a = rig.admit("c1");
        rig.journal.failing = false;
        rig.reference.resume();
        rig.lifecycle.close(); // a deploy: the call must not stay in this process's memory only

        assertEquals(RetryOutcome.HANDED_OVER, outcomeOf(a).outcome());
        assertEquals(RetryEvent.Custody.JOURNAL, rig.outcomes().get(0).custody());
        assertTrue(rig.journal.entries.containsKey("c1"));
        assertTrue(rig.handedToSink.isEmpty(), "the journal holds it");
    }

    @Test
    void unserializablePayload_retriedInMemoryOnly_counted() {
        LifecycleRig rig = new LifecycleRig(true).reference();
        Admission a = rig.reference.admit("greet", "c1", "c1", null, null, new RuntimeException("x"), true);
        rig.advance(1, TimeUnit.SECONDS);
        rig.lastSent().deliver();
        rig.run();

        assertEquals(RetryOutcome.DELIVERED, outcomeOf(a).outcome());
        assertTrue(rig.journal.log.isEmpty());
        assertEquals(1, rig.lifecycle.state().unpersistable());
    }

    @Test
    void fenceSaysAdoptedElsewhere_handedOverHere_neverSentNorRemoved() {
        LifecycleRig rig = new LifecycleRig(true).reference();
        Admission a = rig.admit("c1");
        rig.advance(1, TimeUnit.SECONDS);
        rig.lastSent().failRpc();
        rig.run();
        rig.journal.adoptedElsewhere = "c1"; // this instance was taken for dead meanwhile
        rig.advance(10, TimeUnit.SECONDS);

        assertEquals(RetryOutcome.HANDED_OVER, outcomeOf(a).outcome());
        assertEquals(2, outcomeOf(a).attempt());
        assertEquals(1, rig.sent.size(), "retry 2 belongs to the instance that adopted the call");
        assertFalse(rig.journal.log.contains("remove c1"));
        assertTrue(rig.handedToSink.isEmpty(), "the journal holds it: not the sink's");
        assertEquals(RetryEvent.Custody.ANOTHER_INSTANCE, rig.outcomes().get(0).custody());
    }

    // ------------------------------------------------------------------ hand over

    @Test
    void close_handsOverScheduledAndInFlight_journalKeepsThem_lateReplyIgnored() {
        LifecycleRig rig = new LifecycleRig(true).reference();
        Admission scheduled = rig.admit("c1");
        rig.advance(500, TimeUnit.MILLISECONDS);
        Admission inFlight = rig.admit("c2");
        rig.advance(1000, TimeUnit.MILLISECONDS); // c1 due at 1000, c2 at 1500
        assertEquals(2, rig.sent.size());
        rig.sent.get(1).deliver(); // c2 delivered; c1's reply still out
        rig.run();
        Admission third = rig.admit("c3");

        rig.lifecycle.close();
        rig.sent.get(0).deliver();
        rig.run();

        assertEquals(RetryOutcome.HANDED_OVER, outcomeOf(scheduled).outcome());
        assertEquals(1, outcomeOf(scheduled).attempt(), "retry 1 was in flight: it is the one pending");
        assertEquals(RetryOutcome.DELIVERED, outcomeOf(inFlight).outcome());
        assertEquals(RetryOutcome.HANDED_OVER, outcomeOf(third).outcome());
        assertEquals(1, outcomeOf(third).attempt());
        assertEquals(List.of("c1", "c3"), List.copyOf(rig.journal.entries.keySet()), "handed over = persisted");
        assertEquals(3, rig.outcomes().size());
        assertTrue(rig.timer.live(RetryCall.class).isEmpty());
        assertEquals(0, rig.reference.pending());
    }

    @Test
    void admitAfterClose_handedOverAtOnce() {
        LifecycleRig rig = new LifecycleRig(false).reference();
        rig.reference.destroy();
        Admission a = rig.admit("c1");
        assertEquals(Admission.Kind.ENDED, a.kind());
        assertEquals(RetryOutcome.HANDED_OVER, outcomeOf(a).outcome());
        assertEquals(List.of("c1"), rig.handedToSink);
    }

    @Test
    void destroyOneReference_handsOverOnlyItsCalls_toTheSinkWithoutJournal() {
        LifecycleRig rig = new LifecycleRig(false).reference();
        RetryReference<String> first = rig.reference;
        Admission a = rig.admit("c1");
        rig.reference();
        Admission b = rig.admit("c2");

        first.destroy();

        assertEquals(RetryOutcome.HANDED_OVER, outcomeOf(a).outcome());
        assertFalse(b.outcome().toCompletableFuture().isDone());
        assertEquals(List.of("c1"), rig.handedToSink);
        assertEquals(1, rig.lifecycle.state().references().size());
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals(1, rig.sent.size(), "only c2 retries");
    }

    @Test
    void endIfGone_endsTheReferenceOnlyOnceItsGlueIsGone() {
        LifecycleRig rig = new LifecycleRig(false);
        boolean[] gone = {false};
        List<String> sink = new java.util.ArrayList<>();
        RetryReference<String> ref = rig.lifecycle.<String>reference("k", (c, n) -> new CompletableFuture<>())
                .handOverSink(c -> sink.add(c.retryId())).alive(() -> !gone[0]).build();
        Admission a = ref.admit("greet", "c1", "c1", null, null, new RuntimeException("x"), true);

        assertTrue(ref.endIfGone(), "the glue's reference is there");
        assertEquals(1, ref.pending());
        gone[0] = true;
        assertFalse(ref.endIfGone());

        assertEquals(RetryOutcome.HANDED_OVER, outcomeOf(a).outcome());
        assertEquals(List.of("c1"), sink);
        assertEquals(0, ref.pending());
        assertTrue(rig.lifecycle.state().references().isEmpty());
        assertFalse(ref.endIfGone(), "idempotent");
        assertEquals(1, rig.outcomes().size());
    }

    @Test
    void sinkThrows_stillHandedOver_eventCarriesTheFailure() {
        LifecycleRig rig = new LifecycleRig(false);
        RetryReference<String> ref = rig.lifecycle.<String>reference("k", (c, n) -> new CompletableFuture<>())
                .handOverSink(c -> {
                    throw new IllegalStateException("store full");
                }).build();
        ref.admit("greet", "c1", "c1", null, null, new RuntimeException("x"), false);
        ref.destroy();

        RetryEvent e = rig.outcomes().get(0);
        assertEquals(HANDED_OVER, e.type());
        assertEquals("store full", e.failure().getMessage());
    }

    @Test
    void wheelStoppedWhenScheduling_handedOver() {
        LifecycleRig rig = new LifecycleRig(false).reference();
        rig.timer.stop();
        Admission a = rig.admit("c1");
        assertEquals(RetryOutcome.HANDED_OVER, outcomeOf(a).outcome());
        assertEquals(0, rig.reference.pending());
    }

    // ------------------------------------------------------------------ the glue misbehaving

    @Test
    void senderThrowsOrFailsTheStage_countsAsRpcFailure_retried() {
        LifecycleRig rig = new LifecycleRig(false);
        int[] sends = {0};
        RetryReference<String> ref = rig.lifecycle.<String>reference("k", (c, n) -> {
            if (++sends[0] == 1) {
                throw new IllegalStateException("bug in the glue");
            }
            return sends[0] == 2 ? CompletableFuture.failedFuture(new RuntimeException("reply lost"))
                    : CompletableFuture.completedFuture(AttemptResult.delivered("p"));
        }).policies(m -> rig.policy).build();
        Admission a = ref.admit("greet", "c1", "c1", null, null, new RuntimeException("x"), true);
        rig.advance(1, TimeUnit.SECONDS);
        rig.advance(2, TimeUnit.SECONDS);
        rig.advance(4, TimeUnit.SECONDS);

        assertEquals(new CallOutcome(RetryOutcome.DELIVERED, "c1", 3, "p", "java.lang.RuntimeException: reply lost",
                rig.clockMillis.get()), outcomeOf(a));
    }

    @Test
    void executorRefusesTheAttempt_aFailedAttempt_retriedLater() {
        LifecycleRig rig = new LifecycleRig(false).reference();
        Admission a = rig.admit("c1");
        rig.executor.refuse = true;
        rig.advance(1, TimeUnit.SECONDS);
        rig.executor.refuse = false;
        assertEquals(List.of(SCHEDULED, FAILED, SCHEDULED), rig.typesOf("c1"));
        rig.advance(2, TimeUnit.SECONDS);
        assertEquals(2, rig.lastSent().attempt());
        rig.lastSent().deliver();
        rig.run();
        assertEquals(2, outcomeOf(a).attempt());
    }

    /**
     * A hand-off the lanes refuse happens on the wheel's executor, which every timeout of the JVM needs: the failed
     * attempt is rescheduled in memory, with no journal write there (a journal write there would hold that executor
     * for up to the write timeout while the lanes are full).
     */
    @Test
    void executorRefusesTheAttempt_noJournalWriteOnTheRefusedThread_theNextAttemptIsFenced() {
        LifecycleRig rig = new LifecycleRig(true).reference();
        rig.admit("c1");
        rig.executor.refuse = true;
        rig.advance(1, TimeUnit.SECONDS);
        rig.executor.refuse = false;
        assertEquals(List.of(SCHEDULED, FAILED, SCHEDULED), rig.typesOf("c1"));
        assertEquals(List.of("append c1"), rig.journal.log);

        rig.advance(2, TimeUnit.SECONDS);
        rig.run();
        rig.lastSent().failRpc();
        rig.run();
        assertEquals(List.of("append c1", "fence c1 2"), rig.journal.log);
    }

    @Test
    void listenerThrows_counted_outcomeUnchanged() {
        LifecycleRig rig = new LifecycleRig(false).reference();
        rig.lifecycle.addListener(e -> {
            throw new IllegalStateException("listener bug");
        });
        Admission a = rig.admit("c1");
        rig.advance(1, TimeUnit.SECONDS);
        rig.lastSent().deliver();
        rig.run();
        assertEquals(RetryOutcome.DELIVERED, outcomeOf(a).outcome());
        assertEquals(2, rig.lifecycle.stats().listenerErrors(), "SCHEDULED and DELIVERED");
    }

    // ------------------------------------------------------------------ resume

    @Test
    void resume_schedulesClaimedEntriesAtTheirDueTime_withTheirRemainingRetries_tornOneSkipped() {
        LifecycleRig rig = new LifecycleRig(true);
        long now = rig.clockMillis.get();
        rig.journal.claimable.add(entry("old-1", "old-1", 3, now + 500, now - 60_000));
        rig.journal.claimable.add(entry("torn-1", "torn", 1, now + 100, now - 1_000));
        rig.journal.claimable.add(entry("old-2", "old-2", 1, now - 5_000, now - 9_000));
        rig.reference();

        assertEquals(2, rig.reference.resume());
        assertEquals(1, rig.lifecycle.state().unreadable());
        assertEquals(2, rig.lifecycle.state().resumed());
        rig.advance(1, TimeUnit.MILLISECONDS);
        assertEquals(1, rig.sent.size(), "old-2 was overdue: it goes at once");
        assertEquals("old-2", rig.sent.get(0).call().retryId());
        assertEquals(1, rig.sent.get(0).attempt());
        rig.advance(499, TimeUnit.MILLISECONDS);
        LifecycleRig.Sent last = rig.lastSent();
        assertEquals("old-1", last.call().retryId());
        assertEquals(3, last.attempt(), "the retry the journal said was next");
        assertEquals("p9:20880", last.call().lastProvider());
        last.failRpc();
        rig.run();

        assertEquals(ABANDONED, rig.typesOf("old-1").get(rig.typesOf("old-1").size() - 1), "retries=3 spent");
        assertFalse(rig.journal.entries.containsKey("old-1"));
        assertTrue(rig.journal.entries.containsKey("torn-1"), "left for an operator");
        assertEquals(9_500, rig.reference.state().oldestPendingAgeMillis(), "old-2, failing since 9 s before start");
        RetryStats s = rig.lifecycle.stats();
        assertEquals(s.failedCalls(), s.ended() + s.pending());
    }

    static RetryJournalEntry entry(String id, String payload, int attempt, long due, long created) {
        return new RetryJournalEntry(id, LifecycleRig.APP, LifecycleRig.SERVICE_KEY, "greet",
                payload.getBytes(StandardCharsets.UTF_8), attempt, due, "p9:20880", "java.io.IOException: x", created);
    }

    // ------------------------------------------------------------------ for operators

    @Test
    void state_pendingOldestAgeAndHistoryOfOneCall() {
        LifecycleRig rig = new LifecycleRig(false).reference();
        rig.admit("c1");
        rig.advance(700, TimeUnit.MILLISECONDS);
        rig.admit("c2");
        rig.advance(300, TimeUnit.MILLISECONDS);
        rig.lastSent().failRpc();
        rig.run();

        ReferenceState st = rig.lifecycle.state().references().get(0);
        assertEquals(2, st.pending());
        assertEquals(1000, st.oldestPendingAgeMillis());
        assertEquals("unlimited", st.budget());
        List<RetryStep> h = rig.lifecycle.history("c1");
        assertEquals(List.of(SCHEDULED, FAILED, SCHEDULED), h.stream().map(RetryStep::type).toList());
        assertEquals(2000, h.get(2).delayMillis());
        assertEquals("p1:20880", h.get(1).provider());
        assertEquals("java.net.ConnectException: refused", h.get(1).failure());
    }

    @Test
    void builder_rejectsBadValues() {
        assertThrows(NullPointerException.class, () -> RetryLifecycle.builder("a").executor(Runnable::run).build());
        assertThrows(IllegalArgumentException.class, () -> RetryLifecycle.builder("a").historyCapacity(0));
        LifecycleRig rig = new LifecycleRig(true);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> rig.lifecycle.<String>reference("k", (c, n) -> null).build());
        assertTrue(e.getMessage().startsWith("decoder: null"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> rig.lifecycle.<String>reference("k", (c, n) -> null).limits(0, OverflowPolicy.REJECT));
        rig.lifecycle.close();
        assertThrows(IllegalStateException.class,
                () -> rig.lifecycle.<String>reference("k", (c, n) -> null).decoder(x -> "").build());
    }
}
