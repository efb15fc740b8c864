package io.rpctimer.dubbo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.retry.AttemptResult;
import io.rpctimer.retry.DeadLetterFilter;
import io.rpctimer.retry.RetryLifecycle;
import io.rpctimer.retry.RetryPolicy;
import io.rpctimer.retry.RetryReference;
import io.rpctimer.retry.VirtualTimer;
import java.net.ConnectException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The dead-letter forms of the QoS command {@code failback} on a lifecycle with dead letters in memory: what each
 * form answers, with which HTTP status, and the argument errors. Dubbo's permission check and the real QoS port are
 * in {@link FailbackCommandTest} and {@code DeadLettersIT}.
 */
class DeadLetterCommandTest {

    private static final String APP = "cmd-app";
    private static final String SVC = "com.example.Orders";

    private final VirtualTimer timer = new VirtualTimer();
    private RetryLifecycle lifecycle;
    private RetryReference<String> reference;

    @BeforeEach
    void abandonThreeCalls() {
        lifecycle = RetryLifecycle.builder(APP).timer(timer).executor(Runnable::run).build();
        RetryPolicy once = RetryPolicy.builder().retries(1).firstDelay(1, TimeUnit.SECONDS).jitter(0).build();
        reference = lifecycle.<String>reference(SVC, (call, attempt) -> CompletableFuture.completedFuture(
                AttemptResult.failed("10.0.0.7:20880", new ConnectException("refused"), true)))
                .policies(m -> once).build();
        for (String id : List.of("d0", "d1", "d2")) {
            reference.admit("reserve", id, id, null, "10.0.0.6:20880", new ConnectException("refused"), false);
        }
        timer.advance(1, TimeUnit.SECONDS);
    }

    private DeadLetterCommand.Answer run(String... args) {
        return DeadLetterCommand.run(args, List.of(lifecycle), true);
    }

    private void assertAnswer(int httpCode, String start, DeadLetterCommand.Answer answer) {
        assertEquals(httpCode, answer.httpCode(), answer.text());
        assertTrue(answer.text().startsWith(start), answer.text());
    }

    @Test
    void deadListsTheDeadLettersNewestFirstAndSaysTheyAreInMemory() {
        DeadLetterCommand.Answer a = run("dead", "size=2");

        assertAnswer(200, "application cmd-app: 3 dead letters match all (page 1 of 2, 2 a page, newest first);"
                + " kept in memory (not durable: lost at restart), for 7d, at most 100000", a);
        String[] lines = a.text().split("\n");
        assertEquals(3, lines.length, a.text());
        assertTrue(lines[1].startsWith("  retry.id=d"), lines[1]);
        assertTrue(lines[1].contains(" service=" + SVC + " method=reserve attempts=1 firstFailure="), lines[1]);
        assertTrue(lines[1].endsWith(" provider=10.0.0.7:20880 failure=java.net.ConnectException: refused"),
                lines[1]);
    }

    @Test
    void deadWithARetryIdShowsItAndTheStepsThisInstanceRecorded() {
        DeadLetterCommand.Answer a = run("dead", "d1");

        assertAnswer(200, "application cmd-app: kept in memory", a);
        assertTrue(a.text().contains("\n  retry.id=d1 service="), a.text());
        assertTrue(a.text().contains(" ABANDONED application=cmd-app reference=" + SVC + " method=reserve"
                + " attempt=1"), a.text());
    }

    @Test
    void replayAndPurgeSayWhatTheyDid() throws Exception {
        assertAnswer(200, "application cmd-app: replayed 1 of 1 dead letters matching id=d0, at most 5.0 a second"
                + " and within each reference's retry budget; the last one's first retry is due at ",
                run("replay", "d0", "rate=5"));
        assertAnswer(200, "application cmd-app: purged 2 dead letters matching all", run("purge", "all"));
        assertEquals(0, lifecycle.deadLetters().list(DeadLetterFilter.all(), 1, 10).total());
        assertEquals(1, reference.pending(), "the replayed call is pending; a purge never touches it");
    }

    @Test
    void aReplayWhoseServiceHasNoLiveReferenceHereIsAConflict() {
        reference.destroy();

        assertAnswer(409, "failback replay: replay of retry.id=d0: no live reference of " + SVC,
                run("replay", "d0"));
        assertAnswer(200, "application cmd-app: replayed 0 of 3 dead letters matching all", run("replay", "all"));
        assertTrue(run("replay", "all").text().contains("\n  not replayed: 3 of " + SVC + ", which has no live"
                + " reference on this instance"));
    }

    @Test
    void badArgumentsAreNamedWithTheirValue() {
        assertAnswer(400, "failback replay: target: none (expected: a retry.id, 'all', or a filter",
                run("replay"));
        assertAnswer(400, "failback purge: all: given with the filter service=x", run("purge", "all", "service=x"));
        assertAnswer(400, "failback dead: page: '0' (expected: a whole number, 1 to", run("dead", "page=0"));
        assertAnswer(400, "failback dead: size: '5000' (expected: a whole number, 1 to 1000)",
                run("dead", "size=5000"));
        assertAnswer(400, "failback replay: rate: 'fast' (expected: replays per second, > 0 and <= 100000)",
                run("replay", "all", "rate=fast"));
        assertAnswer(400, "failback dead: rate: '3' given to 'dead'", run("dead", "rate=3"));
        assertAnswer(400, "failback purge: filter: 'colour=red' (expected: one of id=, service=",
                run("purge", "colour=red"));
        assertAnswer(400, "failback dead: older: 'soon' (expected: a duration", run("dead", "older=soon"));
        assertAnswer(400, "failback purge: argument: 'b' (expected: one retry.id", run("purge", "a", "b"));
        assertAnswer(400, "failback dead: app: 'other' (expected: one of [cmd-app])", run("dead", "app=other"));
        assertAnswer(404, "failback purge: retryId: 'nope' (expected: the retry.id of a dead letter of cmd-app",
                run("purge", "nope"));
        assertEquals(3, lifecycle.deadLetters().stats().dead(), "nothing changed");
    }

    @Test
    void withoutProtectedEveryFormIsDenied() {
        for (String form : List.of("dead", "replay", "purge")) {
            DeadLetterCommand.Answer a = DeadLetterCommand.run(new String[] {form, "all"}, List.of(lifecycle), false);
            assertAnswer(403, "Permission denied: 'failback " + form + "' requires PROTECTED", a);
        }
        assertEquals(3, lifecycle.deadLetters().stats().dead());
    }
}
