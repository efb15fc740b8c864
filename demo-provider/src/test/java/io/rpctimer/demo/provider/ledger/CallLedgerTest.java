package io.rpctimer.demo.provider.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

class CallLedgerTest {
    private final CallLedger ledger = new CallLedger();

    private void complete(String callId, String retryId, int attempt) {
        ledger.ended(ledger.received("send", callId, retryId, attempt), CallOutcome.COMPLETED, null);
    }

    @Test
    void countsServedCallsAndOutcomes() {
        complete("c-1", null, 0);
        ledger.ended(ledger.received("send", "c-2", null, 0), CallOutcome.REJECTED, "rejected");
        ledger.ended(ledger.received("send", "c-3", null, 0), CallOutcome.RPC_ERROR, "error");
        ledger.ended(ledger.received("send", "c-4", null, 0), CallOutcome.FAILED, "boom");
        ledger.received("send", "c-5", null, 0); // still in flight

        LedgerSnapshot s = ledger.snapshot();
        assertEquals(5, s.served());
        assertEquals(1, s.completed());
        assertEquals(1, s.rejected());
        assertEquals(1, s.rpcErrors());
        assertEquals(1, s.failed());
        assertEquals(2, s.failedByInjection());
        assertEquals(1, s.inFlight());
        assertEquals(0, s.duplicates());
    }

    @Test
    void aRetryIdCompletedTwice_isOneDuplicate_evenIfItCompletesAgain() {
        complete("c-1", "r-1", 1);
        assertEquals(0, ledger.snapshot().duplicates());
        complete("c-1", "r-1", 2);
        complete("c-1", "r-1", 3);
        complete("c-2", "r-2", 1);

        LedgerSnapshot s = ledger.snapshot();
        assertEquals(1, s.duplicates());
        assertEquals(Set.of("r-1"), s.duplicateRetryIds());
        assertEquals(1, s.duplicateCallIds());
        assertEquals(3, ledger.completions("r-1"));
        assertEquals(0, ledger.completions("r-unknown"));
    }

    @Test
    void onlyCompletionsMakeDuplicates() {
        ledger.ended(ledger.received("send", "c-1", "r-1", 1), CallOutcome.RPC_ERROR, "x");
        ledger.ended(ledger.received("send", "c-1", "r-1", 2), CallOutcome.REJECTED, "x");
        complete("c-1", "r-1", 3);
        assertEquals(0, ledger.snapshot().duplicates());
        assertEquals(0, ledger.snapshot().duplicateCallIds());
    }

    @Test
    void anOriginalAndItsRetry_areADuplicateCallId_butNotADuplicateRetryId() {
        complete("c-1", null, 0); // the original carries no retry.id
        complete("c-1", "r-1", 1);
        LedgerSnapshot s = ledger.snapshot();
        assertEquals(0, s.duplicates());
        assertEquals(1, s.duplicateCallIds());
    }

    @Test
    void attemptHistogram_countsCallsServedPerAttempt() {
        complete("c-1", null, CallRecord.parseAttempt(null));
        complete("c-1", "r-1", CallRecord.parseAttempt("1"));
        complete("c-1", "r-1", CallRecord.parseAttempt(" 2 "));
        complete("c-1", "r-1", CallRecord.parseAttempt("2"));
        complete("c-1", "r-1", CallRecord.parseAttempt("two"));
        complete("c-1", "r-1", CallRecord.parseAttempt("-3"));
        assertEquals(Map.of(-1, 2L, 0, 1L, 1, 1L, 2, 2L), ledger.snapshot().attempts());
        assertEquals(List.of(-1, 0, 1, 2), List.copyOf(ledger.snapshot().attempts().keySet()));
    }

    @Test
    void listenersHearEveryEnd_andTheirExceptionsAreIgnored() {
        List<String> heard = new CopyOnWriteArrayList<>();
        ledger.addListener((call, outcome, elapsed, detail) -> {
            throw new IllegalStateException("a broken listener");
        });
        ledger.addListener((call, outcome, elapsed, detail) -> {
            assertTrue(!elapsed.isNegative());
            heard.add(call.sequence() + " " + call.callId() + " " + call.retryId() + " " + call.attempt() + " "
                    + outcome + " " + detail);
        });
        complete("c-1", "r-1", 2);
        ledger.ended(ledger.received("sendAsync", "c-2", null, 0), CallOutcome.REJECTED, "no");
        assertEquals(List.of("1 c-1 r-1 2 COMPLETED null", "2 c-2 null 0 REJECTED no"), heard);
    }

    @Test
    void reset_forgetsEverything_andLateEndsStayInTheOldState() {
        CallRecord late = ledger.received("send", "c-1", "r-1", 1);
        complete("c-1", "r-1", 1);
        ledger.reset();
        ledger.ended(late, CallOutcome.COMPLETED, null);

        LedgerSnapshot s = ledger.snapshot();
        assertEquals(0, s.served());
        assertEquals(0, s.completed());
        assertEquals(0, s.inFlight());
        assertEquals(0, s.duplicates());
        assertEquals(1, ledger.received("send", "c-2", null, 0).sequence(), "sequence restarts");
    }

    @Test
    void ended_rejectsMissingArguments() {
        assertThrows(IllegalArgumentException.class, () -> ledger.ended(null, CallOutcome.COMPLETED, null));
        assertThrows(IllegalArgumentException.class,
                () -> ledger.ended(ledger.received("send", "c", null, 0), null, null));
        assertEquals(0, ledger.snapshot().completed());
    }

    @Test
    void snapshotMap_hasAStableOrder() {
        complete("c-1", "r-1", 1);
        assertEquals(List.of("served", "completed", "rejected", "errors", "failed", "inFlight", "duplicates",
                "duplicateCallIds", "attempt.1"), List.copyOf(ledger.snapshot().toMap().keySet()));
        assertEquals("served=1 completed=1 rejected=0 errors=0 failed=0 inFlight=0 duplicates=0 duplicateCallIds=0"
                + " attempt.1=1", ledger.snapshot().toString());
        assertNull(ledger.received("send", null, null, 0).callId());
    }

    @Test
    void countsOnly_keepsEveryCounterExact_butNoPerIdCounts_acrossReset() {
        ledger.setCountsOnly(true);
        ledger.reset();
        complete("c-1", "r-1", 1);
        complete("c-1", "r-1", 2);
        ledger.ended(ledger.received("send", "c-2", "r-2", 1), CallOutcome.REJECTED, "x");

        LedgerSnapshot s = ledger.snapshot();
        assertTrue(ledger.isCountsOnly());
        assertEquals(3, s.served());
        assertEquals(2, s.completed());
        assertEquals(1, s.rejected());
        assertEquals(Map.of(1, 2L, 2, 1L), s.attempts());
        assertEquals(0, s.duplicates(), "not tracked in counts-only mode");
        assertEquals(0, s.duplicateCallIds());
        assertThrows(IllegalStateException.class, () -> ledger.completions("r-1"));
    }

    @Test
    void countsOnlyOff_tracksDuplicatesAgain_fromAFreshState() {
        ledger.setCountsOnly(true);
        complete("c-1", "r-1", 1);
        ledger.setCountsOnly(false);
        complete("c-1", "r-1", 2);
        complete("c-1", "r-1", 3);

        assertEquals(2, ledger.snapshot().completed());
        assertEquals(1, ledger.snapshot().duplicates());
        assertEquals(2, ledger.completions("r-1"));
    }
}
