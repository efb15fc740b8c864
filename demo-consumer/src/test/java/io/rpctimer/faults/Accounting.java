package io.rpctimer.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.Report;
import io.rpctimer.retry.RetryStats;
import java.util.List;
import java.util.Map;

/**
 * The accounting every fault scenario ends with, after the consumer has closed:
 * <ul>
 *   <li>every call is in exactly one bucket and the buckets add up: {@code sent = delivered + abandoned + rejected +
 *       handed over (+ errors told to the caller)}, with {@code pending = 0} and {@code lost = 0};</li>
 *   <li>each failed call had exactly one outcome event;</li>
 *   <li>the plugin's own counters over the run agree with the caller-side account, bucket by bucket;</li>
 *   <li>duplicates only ever share a retry id: every attempt that reached a provider carried its call's id as
 *       {@code retry.id}, and every call completed more than once was retried (some attempt &gt; 0 reached a
 *       provider); the report's duplicate count is no more than the providers' extra completions.</li>
 * </ul>
 */
final class Accounting {

    private Accounting() {
    }

    static void assertSound(FaultRig.Outcome o, int expectedCalls) {
        Report r = o.report();
        String table = "\n" + r.toTable();
        assertEquals(expectedCalls, r.sent(), "calls sent" + table);
        assertEquals(0, r.lost(), "lost calls " + r.lostCallIds() + table);
        assertEquals(0, r.pending(), "pending after close" + table);
        assertTrue(r.addsUp(), "buckets do not add up" + table);
        assertEquals(Map.of(), o.events().idsWithSeveralOutcomes(), "calls with several outcomes");
        assertCountersAgree(o.stats(), r, table);
        assertDuplicatesShareARetryId(o, r, table);
    }

    /**
     * The end of a scenario in which every call must get through: the accounting is sound, every caller got an answer
     * it understood, every call settled before the consumer closed, and all {@code calls} were delivered.
     */
    static void assertEveryCallDelivered(FaultRig.Outcome o, int calls, Sender... senders) {
        assertSound(o, calls);
        assertCallersAnswered(senders);
        assertTrue(o.settled(), "every call settled before the consumer closed");
        assertEquals(calls, o.report().delivered(), "every call delivered\n" + o.report().toTable());
    }

    /** Every caller got an answer it understood: a reply, the empty failback result, or an RpcException. */
    static void assertCallersAnswered(Sender... senders) {
        for (Sender s : senders) {
            Map<String, Throwable> failures = s.failures();
            assertTrue(failures.isEmpty(), () -> failures.size() + " " + s.mode().label() + " callers failed, e.g. "
                    + failures.entrySet().iterator().next());
        }
    }

    private static void assertCountersAgree(RetryStats s, Report r, String table) {
        String what = "plugin counters " + s + " vs the caller-side account" + table;
        assertEquals(r.deliveredOnAnyRetry(), s.delivered(), what);
        assertEquals(r.abandoned(), s.abandoned(), what);
        assertEquals(r.rejected(), s.rejected(), what);
        assertEquals(r.handedOver(), s.handedOver(), what);
        assertEquals(s.failedCalls(), s.delivered() + s.abandoned() + s.rejected() + s.handedOver(), what);
    }

    private static void assertDuplicatesShareARetryId(FaultRig.Outcome o, Report r, String table) {
        ProviderRecorder served = o.served();
        Map<String, Integer> duplicated = served.duplicated();
        for (String callId : duplicated.keySet()) {
            List<ProviderRecorder.Served> attempts = served.served(callId);
            assertTrue(served.retried(callId), "call " + callId + " completed " + duplicated.get(callId)
                    + " times but was never retried: " + attempts);
            assertTrue(attempts.stream().allMatch(a -> callId.equals(a.retryId())),
                    "attempts of " + callId + " with another retry.id: " + attempts);
        }
        assertEquals(List.of(), served.foreignRetryIds(), "attempts whose retry.id is not their call id");
        assertTrue(r.duplicates() <= served.extraCompletions(), "report counts " + r.duplicates()
                + " duplicates, providers saw " + served.extraCompletions() + ": " + duplicated + table);
    }
}
