package io.rpctimer.retry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Dead letters kept in memory (no journal, or a journal that keeps none) on virtual time: what is kept, the bounds,
 * replay with the original {@code retry.id} and a fresh schedule at a pace, purge, and bad input.
 */
class DeadLettersTest {

    private static final DeadLetterPolicy SMALL = new DeadLetterPolicy(Duration.ofMinutes(1), 3, Duration.ZERO);

    /** A rig whose calls get one retry, with {@code n} calls abandoned (ids d0, d1, ...), one second apart. */
    private static LifecycleRig abandoned(int n, DeadLetterPolicy policy) {
        return abandoned(n, policy, 100);
    }

    /** As above, the reference's pending cap {@code maxPending}. */
    private static LifecycleRig abandoned(int n, DeadLetterPolicy policy, int maxPending) {
        LifecycleRig rig = new LifecycleRig(false, policy);
        rig.policy = LifecycleRig.policy(1);
        rig.reference(maxPending, OverflowPolicy.REJECT, RetryBudget.unlimited());
        for (int i = 0; i < n; i++) {
            rig.admit("d" + i);
            rig.advance(1, TimeUnit.SECONDS);
            rig.lastSent().failRpc();
            rig.run();
        }
        return rig;
    }

    private static DeadLetters dead(LifecycleRig rig) {
        return rig.lifecycle.deadLetters();
    }

    private static List<String> ids(DeadLetterPage page) {
        return page.letters().stream().map(DeadLetter::retryId).toList();
    }

    @Test
    void aCallAbandonedAfterItsRetriesIsKeptAsADeadLetterWithItsLastFailure() throws Exception {
        LifecycleRig rig = abandoned(1, DeadLetterPolicy.defaults());

        DeadLetterPage page = dead(rig).list(DeadLetterFilter.all(), 1, 20);
        assertEquals(1, page.total());
        DeadLetter d = page.letters().get(0);
        assertEquals(new CallKey(LifecycleRig.APP, LifecycleRig.SERVICE_KEY, "greet", "d0"), d.key());
        assertEquals(1, d.attempts());
        assertEquals("p1:20880", d.lastProvider());
        assertEquals("java.net.ConnectException", d.failureClass());
        assertEquals("java.net.ConnectException: refused", d.lastFailure());
        assertEquals(1_000_000, d.firstFailureEpochMillis());
        assertEquals(1_001_000, d.lastFailureEpochMillis());
        assertEquals(-1, d.payloadBytes(), "kept in memory, not serialized");
        assertFalse(dead(rig).durable());
        assertEquals(1, dead(rig).stats().buried());
        List<DeadLetterDetail> shown = dead(rig).show("d0");
        assertEquals(List.of(RetryEvent.Type.SCHEDULED, RetryEvent.Type.FAILED, RetryEvent.Type.ABANDONED),
                shown.get(0).history().stream().map(RetryStep::type).toList());
    }

    @Test
    void aDeadLettersFailureNeverShowsThePasswordTheProvidersMessageCarried() throws Exception {
        LifecycleRig rig = new LifecycleRig(false, DeadLetterPolicy.defaults());
        rig.policy = LifecycleRig.policy(1);
        rig.reference(100, OverflowPolicy.REJECT, RetryBudget.unlimited());
        rig.admit("d0");
        rig.advance(1, TimeUnit.SECONDS);
        rig.lastSent().reply().complete(AttemptResult.failed("p1:20880", new IllegalStateException(
                "cannot reach jdbc:postgresql://db/orders?user=orders&password=s3cret"), true));
        rig.run();

        DeadLetter d = dead(rig).list(DeadLetterFilter.all(), 1, 20).letters().get(0);
        assertEquals("java.lang.IllegalStateException: cannot reach jdbc:postgresql://db/orders?user=orders"
                + "&password=***", d.lastFailure());
    }

    @Test
    void aCallWithNoRetryIsNeverADeadLetter() throws Exception {
        LifecycleRig rig = new LifecycleRig(false, DeadLetterPolicy.defaults());
        rig.policy = LifecycleRig.policy(0);
        rig.reference();
        rig.admit("zero");

        assertEquals(List.of(RetryEvent.Type.ABANDONED), rig.typesOf("zero"));
        assertEquals(0, dead(rig).list(DeadLetterFilter.all(), 1, 20).total());
    }

    @Test
    void replaySendsTheCallAgainWithItsOriginalRetryIdAndAFreshRetrySchedule() throws Exception {
        LifecycleRig rig = abandoned(1, DeadLetterPolicy.defaults());
        int sentBefore = rig.sent.size();

        ReplayResult r = dead(rig).replay(DeadLetterFilter.retryId("d0"));
        rig.advance(1, TimeUnit.MILLISECONDS);

        assertEquals(1, r.replayed());
        assertEquals(sentBefore + 1, rig.sent.size());
        LifecycleRig.Sent again = rig.lastSent();
        assertEquals("d0", again.call().retryId());
        assertEquals(1, again.attempt(), "a fresh schedule: retry 1 again");
        assertEquals("d0", again.call().payload(), "the call the dead letter kept");
        again.failRpc(); // retry 1 of the replay fails: the policy's one retry is spent, a dead letter again
        rig.run();
        assertEquals(1, dead(rig).list(DeadLetterFilter.all(), 1, 20).total());
        dead(rig).replay(DeadLetterFilter.all());
        rig.advance(1, TimeUnit.MILLISECONDS);
        rig.lastSent().deliver();
        rig.run();

        assertEquals(0, dead(rig).list(DeadLetterFilter.all(), 1, 20).total());
        assertEquals(RetryEvent.Type.DELIVERED, rig.outcomes().get(rig.outcomes().size() - 1).type());
        assertEquals(2, dead(rig).stats().replayed());
        RetryStats s = rig.lifecycle.stats();
        assertEquals(3, s.failedCalls(), "the call, then each replay, is a failed call with one outcome");
        assertEquals(0, s.pending());
    }

    @Test
    void replayOfOneRetryIdAmongSeveralSendsThatCallAndNoOther() throws Exception {
        LifecycleRig rig = abandoned(3, DeadLetterPolicy.defaults());
        int sentBefore = rig.sent.size();

        ReplayResult r = dead(rig).replay(DeadLetterFilter.retryId("d1"));
        rig.advance(1, TimeUnit.MILLISECONDS);

        assertEquals(1, r.replayed());
        assertEquals(sentBefore + 1, rig.sent.size());
        assertEquals("d1", rig.lastSent().call().retryId());
        assertEquals("d1", rig.lastSent().call().payload(), "the call the dead letter of d1 kept");
        assertEquals(List.of("d2", "d0"), ids(dead(rig).list(DeadLetterFilter.all(), 1, 20)));
    }

    @Test
    void replayAtARateSpacesTheFirstRetries() throws Exception {
        LifecycleRig rig = abandoned(3, new DeadLetterPolicy(Duration.ofDays(1), 100, Duration.ZERO));
        int before = rig.sent.size();

        ReplayResult r = dead(rig).replay(DeadLetterFilter.all(), 2); // one every 500 ms, oldest first

        assertEquals(3, r.replayed());
        assertEquals(rig.clockMillis.get() + 1_000, r.lastDueEpochMillis());
        rig.advance(1, TimeUnit.MILLISECONDS);
        assertEquals(List.of("d0"), sentSince(rig, before));
        rig.advance(499, TimeUnit.MILLISECONDS);
        assertEquals(List.of("d0", "d1"), sentSince(rig, before));
        rig.advance(499, TimeUnit.MILLISECONDS);
        assertEquals(List.of("d0", "d1"), sentSince(rig, before));
        rig.advance(1, TimeUnit.MILLISECONDS);
        assertEquals(List.of("d0", "d1", "d2"), sentSince(rig, before));
    }

    private static List<String> sentSince(LifecycleRig rig, int from) {
        return rig.sent.subList(from, rig.sent.size()).stream().map(s -> s.call().retryId()).toList();
    }

    @Test
    void replayPastThePendingCapLeavesTheRestAsDeadLetters() throws Exception {
        LifecycleRig rig = abandoned(3, DeadLetterPolicy.defaults(), 2);

        ReplayResult r = dead(rig).replay(DeadLetterFilter.all());

        assertEquals(2, r.replayed());
        assertEquals(1, r.noRoom());
        assertEquals(List.of("d2"), ids(dead(rig).list(DeadLetterFilter.all(), 1, 20)), "the newest waits");
    }

    @Test
    void replayWithoutALiveReferenceOfTheServiceSaysSoAndKeepsTheDeadLetter() throws Exception {
        LifecycleRig rig = abandoned(2, DeadLetterPolicy.defaults());
        rig.reference.destroy();

        IllegalStateException one = assertThrows(IllegalStateException.class,
                () -> dead(rig).replay(DeadLetterFilter.retryId("d0")));
        assertTrue(one.getMessage().contains("no live reference of " + LifecycleRig.SERVICE_KEY), one.getMessage());
        ReplayResult all = dead(rig).replay(DeadLetterFilter.all());
        assertEquals(0, all.replayed());
        assertEquals(Map.of(LifecycleRig.SERVICE_KEY, 2L), all.noReference());
        assertEquals(2, dead(rig).list(DeadLetterFilter.all(), 1, 20).total());
    }

    @Test
    void anUnknownRetryIdIsNamedInTheError() {
        LifecycleRig rig = abandoned(1, DeadLetterPolicy.defaults());

        for (org.junit.jupiter.api.function.Executable op : List.<org.junit.jupiter.api.function.Executable>of(
                () -> dead(rig).show("nope"), () -> dead(rig).replay(DeadLetterFilter.retryId("nope")),
                () -> dead(rig).purge(DeadLetterFilter.retryId("nope")))) {
            NoSuchDeadLetterException e = assertThrows(NoSuchDeadLetterException.class, op);
            assertTrue(e.getMessage().startsWith("retryId: 'nope' (expected: the retry.id of a dead letter of "
                    + LifecycleRig.APP), e.getMessage());
        }
    }

    @Test
    void purgeDeletesDeadLettersButNeverAPendingCall() throws Exception {
        LifecycleRig rig = abandoned(2, DeadLetterPolicy.defaults());
        rig.policy = LifecycleRig.policy(3);
        rig.admit("d0"); // the same business key fails again: pending, while its older call is a dead letter

        assertEquals(1, dead(rig).purge(DeadLetterFilter.retryId("d0")));
        assertEquals(1, dead(rig).purge(DeadLetterFilter.all()));

        assertEquals(1, rig.reference.pending(), "the pending d0 is untouched");
        rig.advance(1, TimeUnit.SECONDS);
        assertEquals("d0", rig.lastSent().call().retryId());
        assertEquals(2, dead(rig).stats().purged());
    }

    @Test
    void theOldestAreDroppedPastMaxAndTheOldPastRetention() throws Exception {
        LifecycleRig rig = abandoned(5, SMALL);

        assertEquals(List.of("d4", "d3", "d2"), ids(dead(rig).list(DeadLetterFilter.all(), 1, 20)));
        assertEquals(2, dead(rig).stats().dropped());
        rig.clockMillis.addAndGet(TimeUnit.SECONDS.toMillis(59)); // d2 died at +3 s, d3 at +4 s; now is +64 s
        DeadLetterStore.Trimmed t = dead(rig).trim();

        assertEquals(1, t.expired());
        assertEquals(2, t.remaining());
        assertEquals(List.of("d4", "d3"), ids(dead(rig).list(DeadLetterFilter.all(), 1, 20)));
        assertEquals(2, dead(rig).stats().dead());
    }

    @Test
    void deadLettersInMemoryPastTheRetentionAreGoneBeforeTheyAreRead() throws Exception {
        LifecycleRig rig = abandoned(2, SMALL);
        rig.clockMillis.addAndGet(TimeUnit.MINUTES.toMillis(2));

        assertEquals(0, dead(rig).list(DeadLetterFilter.all(), 1, 20).total());
        assertEquals(2, dead(rig).stats().expired());
        assertEquals(0, dead(rig).stats().dead());
    }

    @Test
    void filtersMatchServiceMethodFailureAndAgeAndPagesAreNewestFirst() throws Exception {
        LifecycleRig rig = abandoned(5, DeadLetterPolicy.defaults());
        DeadLetters dead = dead(rig);

        assertEquals(List.of("d4", "d3"), ids(dead.list(DeadLetterFilter.all(), 1, 2)));
        DeadLetterPage last = dead.list(DeadLetterFilter.all(), 3, 2);
        assertEquals(List.of("d0"), ids(last));
        assertEquals(3, last.pages());
        assertFalse(last.hasNext());
        assertEquals(5, dead.list(DeadLetterFilter.all().service(LifecycleRig.SERVICE_KEY).method("greet")
                .failureClass("java.net.ConnectException"), 1, 20).total());
        assertEquals(0, dead.list(DeadLetterFilter.all().failureClass("ConnectException"), 1, 20).total(),
                "a class name matches exactly");
        // d0 died at +1 s ... d4 at +5 s; now is +5 s
        assertEquals(List.of("d1", "d0"), ids(dead.list(DeadLetterFilter.all().olderThan(Duration.ofSeconds(3)),
                1, 20)));
        assertEquals(List.of("d4"), ids(dead.list(DeadLetterFilter.parse(Map.of("newer", "500ms")), 1, 20)));
    }

    @Test
    void aJournalThatKeepsNoDeadLettersRemovesTheCallAndTheyAreKeptInMemory() throws Exception {
        LifecycleRig rig = new LifecycleRig(true, DeadLetterPolicy.defaults());
        rig.policy = LifecycleRig.policy(1);
        rig.reference();
        rig.admit("j0");
        rig.advance(1, TimeUnit.SECONDS);
        rig.lastSent().failRpc();
        rig.run();

        assertTrue(rig.journal.log.contains("remove j0"), rig.journal.log.toString());
        assertEquals(List.of("j0"), ids(dead(rig).list(DeadLetterFilter.all(), 1, 20)));
    }

    @Test
    void maxZeroKeepsNoDeadLetter() throws Exception {
        LifecycleRig rig = abandoned(1, new DeadLetterPolicy(Duration.ofDays(1), 0, Duration.ZERO));

        assertEquals(0, dead(rig).list(DeadLetterFilter.all(), 1, 20).total());
        assertEquals(0, dead(rig).stats().buried());
    }

    @Test
    void badArgumentsAreNamedWithTheirValue() {
        DeadLetters dead = dead(abandoned(0, DeadLetterPolicy.defaults()));

        assertMessage("page: 0 (expected: >= 1)", () -> dead.list(DeadLetterFilter.all(), 0, 20));
        assertMessage("pageSize: 5000 (expected: 1 to 1000)", () -> dead.list(DeadLetterFilter.all(), 1, 5000));
        assertMessage("perSecond: 0.0 (expected: > 0 and <= 100000 replays per second)",
                () -> dead.replay(DeadLetterFilter.all(), 0));
        assertMessage("perSecond: NaN (expected: > 0 and <= 100000 replays per second)",
                () -> dead.replay(DeadLetterFilter.all(), Double.NaN));
        assertMessage("filter: 'colour=red' (expected: one of id=, service=, method=, failure=, older=, newer=)",
                () -> DeadLetterFilter.parse(Map.of("colour", "red")));
        assertMessage("older: '10 parsecs' (expected: a duration > 0 such as 500ms, 30s, 10m, 2h, 7d, PT10M, or"
                + " milliseconds)", () -> DeadLetterFilter.parse(Map.of("older", "10 parsecs")));
        assertMessage("service: '' (expected: 1 to 255 characters, no control character)",
                () -> DeadLetterFilter.all().service(""));
        assertMessage("retention: PT0.5S (expected: >= 1 s)",
                () -> new DeadLetterPolicy(Duration.ofMillis(500), 1, Duration.ZERO));
        assertMessage("max: -1 (expected: >= 0)", () -> new DeadLetterPolicy(Duration.ofDays(1), -1, Duration.ZERO));
    }

    private static void assertMessage(String expected, org.junit.jupiter.api.function.Executable op) {
        assertEquals(expected, assertThrows(IllegalArgumentException.class, op).getMessage());
    }

    @Test
    void durationsReadWhatOperatorsType() {
        assertEquals(Duration.ofDays(7), DurationText.parse("d", "7d"));
        assertEquals(Duration.ofMillis(1500), DurationText.parse("d", "1500"));
        assertEquals(Duration.ofMinutes(10), DurationText.parse("d", "PT10M"));
        assertEquals("7d", DurationText.format(Duration.ofDays(7)));
        assertEquals("90s", DurationText.format(Duration.ofSeconds(90)));
        assertThrows(IllegalArgumentException.class, () -> DurationText.parse("d", "999999999999999d"));
        assertThrows(IllegalArgumentException.class, () -> DurationText.parse("d", "0s"));
    }
}
