package io.rpctimer.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FleetCheckTest {

    @TempDir
    Path dir;

    private final List<ProviderRecords.Invocation> received = new ArrayList<>();

    private void arrived(long at, String callId, int attempt, String sender, VerdictStore.Verdict verdict) {
        received.add(new ProviderRecords.Invocation(new ProviderRecords.Received(at, "p1", ChaosService.ORDERS, "send",
                callId, callId, attempt, sender), verdict, "OK"));
    }

    private ChaosFleet.Incarnation records(String instance, String ended, String... lines) throws Exception {
        Path file = dir.resolve(instance + ".records");
        try (RecordFile f = new RecordFile(file)) {
            for (String l : lines) {
                f.append((Object[]) l.split(" "));
            }
        }
        return new ChaosFleet.Incarnation(instance, file, 0, 0, ended);
    }

    private FleetCheck check(List<ChaosFleet.Incarnation> incarnations, Map<String, Map<String, Long>> stats)
            throws Exception {
        return FleetCheck.of(CallerRecords.read(incarnations), received, incarnations, stats, List.of(), List.of(),
                Set.of());
    }

    @Test
    void anAcceptedCallThatNeverRanIsLost() throws Exception {
        FleetCheck c = check(List.of(records("c1.1", "KILLED", "S a ORDERS send a", "T a FAILED_BACK")), Map.of());
        assertEquals(Map.of("lost", 1L), c.violations());
    }

    @Test
    void aRejectedCallWhoseRetryRanIsAViolation_butOneWhoseTimedOutFirstAttemptRanIsNot() throws Exception {
        arrived(1, "a", 0, "c1.1", VerdictStore.Verdict.CLAIMED); // the caller timed out; the provider finished it
        arrived(2, "b", 0, "c1.1", VerdictStore.Verdict.IN_PROGRESS);
        arrived(3, "b", 1, "c1.1", VerdictStore.Verdict.CLAIMED);
        FleetCheck c = check(List.of(records("c1.1", null, "S a ORDERS send a", "T a REJECTED",
                "S b ORDERS send b", "T b REJECTED")), Map.of());

        assertEquals(Map.of("told rejected, yet ran", 1L), c.violations());
        assertEquals(1, c.findings().get("told rejected or an error, its first attempt ran (a timeout the provider"
                + " finished)").count);
    }

    @Test
    void anAbandonedCallReportedByAnAdopterIsNotLost() throws Exception {
        FleetCheck c = check(List.of(records("c1.1", "KILLED", "S a ORDERS send a", "T a FAILED_BACK"),
                records("c2.1", null, "E ABANDONED NotificationService send a 8")), Map.of());
        assertEquals(Map.of(), c.violations());
    }

    @Test
    void oneAttemptFromTwoInstancesIsADoubleSendAndAStaleOwnerSendsAgain() throws Exception {
        arrived(1, "a", 0, "c1.1", VerdictStore.Verdict.IN_PROGRESS);
        arrived(2, "a", 1, "c1.1", VerdictStore.Verdict.IN_PROGRESS);
        arrived(3, "a", 2, "c2.1", VerdictStore.Verdict.CLAIMED);
        arrived(4, "a", 2, "c1.1", VerdictStore.Verdict.ALREADY_DONE);
        FleetCheck c = check(List.of(records("c1.1", null, "S a ORDERS send a", "T a FAILED_BACK", "O a DELIVERED 2"),
                records("c2.1", null)), Map.of());
        assertEquals(Map.of("double sends", 1L), c.violations());
        assertEquals(1, c.findings().get("stale-owner sends kept from running by retrydedup").count);
    }

    @Test
    void aStaleRetryThatRanIsAStaleOwnerSend() throws Exception {
        arrived(1, "a", 0, "c1.1", VerdictStore.Verdict.IN_PROGRESS);
        arrived(2, "a", 2, "c2.1", VerdictStore.Verdict.STORE_FAILED);
        arrived(3, "a", 1, "c1.1", VerdictStore.Verdict.STORE_FAILED);
        FleetCheck c = check(List.of(records("c1.1", null, "S a ORDERS send a", "T a FAILED_BACK", "O a DELIVERED 2"),
                records("c2.1", null)), Map.of());
        assertEquals(1L, c.violations().get("stale-owner sends"));
    }

    @Test
    void aCallAdoptedBackAtALaterRetryIsNoStaleOwnerSend() throws Exception {
        arrived(1, "a", 0, "c1.1", VerdictStore.Verdict.IN_PROGRESS);
        arrived(2, "a", 1, "c1.1", VerdictStore.Verdict.IN_PROGRESS);
        arrived(3, "a", 2, "c2.1", VerdictStore.Verdict.IN_PROGRESS);
        arrived(4, "a", 3, "c1.1", VerdictStore.Verdict.CLAIMED);
        FleetCheck c = check(List.of(records("c1.1", null, "S a ORDERS send a", "T a FAILED_BACK", "O a DELIVERED 3"),
                records("c2.1", null)), Map.of());
        assertEquals(Map.of(), c.violations());
    }

    @Test
    void twoProtectedRunsAreADoubleRunAndARunWithoutTheStoreIsCountedApart() throws Exception {
        arrived(1, "a", 0, "c1.1", VerdictStore.Verdict.CLAIMED);
        arrived(2, "a", 1, "c1.1", VerdictStore.Verdict.CLAIMED);
        arrived(3, "b", 0, "c1.1", VerdictStore.Verdict.CLAIMED);
        arrived(4, "b", 1, "c1.1", VerdictStore.Verdict.STORE_FAILED);
        FleetCheck c = check(List.of(records("c1.1", null, "S a ORDERS send a", "T a REPLY", "O a DELIVERED 0",
                "S b ORDERS send b", "T b REPLY", "O b DELIVERED 0")), Map.of());
        assertEquals(Map.of("ran twice", 1L), c.violations());
        assertEquals(1, c.findings().get("ran twice, the dedup store down at a run").count);
    }

    @Test
    void countersThatDoNotAddUpAreAViolation() throws Exception {
        FleetCheck c = check(List.of(records("c1.1", null)), Map.of("c1.1", Map.of("failed", 10L, "delivered", 9L,
                "pending", 0L)));
        assertEquals(Map.of("counters do not add up", 1L), c.violations());
    }

    @Test
    void aFailedBackCallWhoseHandleNeverCompletedInALiveInstanceIsAViolation() throws Exception {
        arrived(1, "a", 1, "c1.1", VerdictStore.Verdict.CLAIMED);
        FleetCheck c = check(List.of(records("c1.1", null, "S a ORDERS send a", "T a FAILED_BACK")), Map.of());
        assertEquals(Map.of("handle never completed", 1L), c.violations());
    }
}
