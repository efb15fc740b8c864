package io.rpctimer.retry;

import java.io.IOException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A retry lifecycle on virtual time for logic tests: a {@link VirtualTimer}, a {@link QueueExecutor}, optionally a
 * {@link FakeJournal}, a sender that records each attempt and lets the test answer it, and a listener that records
 * every event. The payload is the call's name as a String, serialized as UTF-8. Single-threaded use.
 */
final class LifecycleRig {

    static final String APP = "rig-app";
    static final String SERVICE_KEY = "g/com.example.Greeter:1.0";

    /** One attempt the sender was asked to send. */
    record Sent(FailedCall<String> call, int attempt, CompletableFuture<AttemptResult> reply) {
        void deliver() {
            reply.complete(AttemptResult.delivered("p" + attempt + ":20880"));
        }

        void failRpc() {
            reply.complete(AttemptResult.failed("p" + attempt + ":20880", new ConnectException("refused"), true));
        }
    }

    final VirtualTimer timer = new VirtualTimer();
    final QueueExecutor executor = new QueueExecutor();
    final FakeJournal journal;
    final List<Sent> sent = new ArrayList<>();
    final List<RetryEvent> events = new ArrayList<>();
    final List<String> handedToSink = new ArrayList<>();
    final AtomicLong clockMillis = new AtomicLong(1_000_000);
    final RetryLifecycle lifecycle;
    RetryPolicy policy = policy(3);
    RetryReference<String> reference;

    LifecycleRig(boolean withJournal) {
        this(withJournal, DeadLetterPolicy.defaults());
    }

    LifecycleRig(boolean withJournal, DeadLetterPolicy deadLetters) {
        this(withJournal, deadLetters, java.time.Duration.ZERO);
    }

    /** @param closeJournalWait how long a close waits for the journal (real time: the rig's tests use none) */
    LifecycleRig(boolean withJournal, DeadLetterPolicy deadLetters, java.time.Duration closeJournalWait) {
        journal = withJournal ? new FakeJournal() : null;
        lifecycle = RetryLifecycle.builder(APP).timer(timer).executor(executor).journal(journal)
                .listener(events::add).clockMillis(clockMillis::get).historyCapacity(64).deadLetters(deadLetters)
                .closeJournalWait(closeJournalWait).build();
    }

    /** Retries after 1 s, 2 s, 4 s ... with no jitter. */
    static RetryPolicy policy(int retries) {
        return policy(retries, StoreDownPolicy.REJECT);
    }

    /** As {@link #policy(int)}, with what happens to a call whose append the journal refused. */
    static RetryPolicy policy(int retries, StoreDownPolicy storeDown) {
        return RetryPolicy.builder().retries(retries).firstDelay(1, TimeUnit.SECONDS).multiplier(2)
                .maxDelay(60, TimeUnit.SECONDS).jitter(0).storeDown(storeDown).build();
    }

    LifecycleRig reference(int maxPending, OverflowPolicy overflow, RetryBudget budget) {
        RetryReference.Builder<String> b = lifecycle.<String>reference(SERVICE_KEY, this::send)
                .service("com.example.Greeter").policies(m -> policy).limits(maxPending, overflow).budget(budget)
                .handOverSink(c -> handedToSink.add(c.retryId()));
        if (journal != null) {
            b.decoder(LifecycleRig::decode);
        }
        reference = b.build();
        return this;
    }

    LifecycleRig reference() {
        return reference(100, OverflowPolicy.REJECT, RetryBudget.unlimited());
    }

    private CompletableFuture<AttemptResult> send(FailedCall<String> call, int attempt) {
        CompletableFuture<AttemptResult> reply = new CompletableFuture<>();
        sent.add(new Sent(call, attempt, reply));
        return reply;
    }

    static String decode(RetryJournalEntry entry) throws IOException {
        String s = new String(entry.payload(), StandardCharsets.UTF_8);
        if (s.startsWith("torn")) {
            throw new IOException("checksum mismatch (test)");
        }
        return s;
    }

    /** Admits call {@code id} (payload = id) after a connection failure on p0, watching its outcome. */
    Admission admit(String id) {
        return reference.admit("greet", id, id, id.getBytes(StandardCharsets.UTF_8), "p0:20880",
                new ConnectException("refused"), true);
    }

    /** Moves virtual time and runs every executor task that follows, until nothing is left to run. */
    void advance(long amount, TimeUnit unit) {
        executor.runAll();
        clockMillis.addAndGet(unit.toMillis(amount));
        timer.advance(amount, unit);
        executor.runAll();
    }

    /** Runs queued executor work (dispatches, replies, unparks). */
    void run() {
        executor.runAll();
    }

    Sent lastSent() {
        return sent.get(sent.size() - 1);
    }

    List<RetryEvent.Type> typesOf(String retryId) {
        return events.stream().filter(e -> e.retryId().equals(retryId)).map(RetryEvent::type).toList();
    }

    List<RetryEvent> outcomes() {
        return events.stream().filter(RetryEvent::isOutcome).toList();
    }

    static CallOutcome outcomeOf(Admission a) {
        return a.outcome().toCompletableFuture().getNow(null);
    }
}
