package io.rpctimer.retry;

import static io.rpctimer.retry.RetryCall.ENDED;

import io.rpctimer.retry.GuardedJournal.Appended;
import io.rpctimer.retry.RetryCall.Journaled;
import io.rpctimer.retry.RetryEvent.Custody;
import io.rpctimer.wheel.Timer;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * What the calls of one {@link RetryReference} are in the journal: appends a call when it is admitted or spilled,
 * appends it again once the journal works after an outage, settles an append whose outcome was unknown, removes a call
 * at its outcome (again, backing off, while the store refuses), and keeps a call handed over, in the journal or the
 * reference's {@link RetryReference.HandOverSink}. The reference decides what happens to a call; this class writes
 * it, and records in the call ({@link RetryCall#journaled}) whether the journal holds it: yes, no, or maybe (a write
 * whose outcome is not known yet, taken as written).
 *
 * <p>A remove that fails is tried again ({@value #REMOVE_ATTEMPTS} times in all, backing off from 1 s to 60 s) while
 * the reference is open; one that never takes leaves the entry behind, and a later start sends that call again with
 * the same {@code retry.id} (at least once, never lost).
 *
 * <p><b>Threading:</b> thread-safe, as its reference. A write blocks the calling thread for at most the journal's
 * write timeout; {@link #remove} does not block.
 *
 * @param <P> the glue's in-memory form of a call
 */
final class CallJournaling<P> {

    /** A remove the store refused is tried again after 1 s, then 2, 4, ... at most 60 s apart, this often in all. */
    static final int REMOVE_ATTEMPTS = 10;
    private static final long REMOVE_FIRST_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long REMOVE_MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(60);
    /** How often a graceful stop tries a journal that is down again. */
    private static final long CLOSE_JOURNAL_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private final RetryReference<P> reference;
    private final String application;
    private final String serviceKey;
    private final GuardedJournal journal;
    private final CallSink sink;
    private final Timer timer;
    private final LongSupplier clockMillis;
    private final RetryReference.HandOverSink<P> handOverSink;
    /** Whether the reference is closed: a refused remove is not tried again after that. */
    private final BooleanSupplier closed;
    /** Methods whose payload could not be serialized, each reported once as such. */
    private final Set<String> unpersistableMethods = ConcurrentHashMap.newKeySet();

    CallJournaling(RetryReference<P> reference, String application, GuardedJournal journal, CallSink sink,
                   Timer timer, LongSupplier clockMillis, RetryReference.HandOverSink<P> handOverSink,
                   BooleanSupplier closed) {
        this.reference = reference;
        this.application = application;
        this.serviceKey = reference.serviceKey();
        this.journal = journal;
        this.sink = sink;
        this.timer = timer;
        this.clockMillis = clockMillis;
        this.handOverSink = handOverSink;
        this.closed = closed;
    }

    /**
     * Appends a call just admitted, its first retry due {@code delayNanos} after it was created.
     *
     * @param journalPayload the call serialized, or null if it could not be (then the journal does not take it)
     * @param park           whether the call is spilled past the cap: parked in the journal, not scheduled here
     * @return what the journal did; {@link Appended#NOT_WRITTEN} without a journal
     */
    Appended append(RetryCall<P> call, byte[] journalPayload, long delayNanos, boolean park) {
        if (!journal.present()) {
            return Appended.NOT_WRITTEN;
        }
        if (journalPayload == null) {
            sink.unpersistable(reference, call.method(), unpersistableMethods.add(call.method()));
            return Appended.NOT_WRITTEN;
        }
        long due = call.createdEpochMillis() + TimeUnit.NANOSECONDS.toMillis(delayNanos);
        return journal.append(entry(call, journalPayload, 1, due), park);
    }

    private RetryJournalEntry entry(RetryCall<P> call, byte[] payload, int attempt, long dueEpochMillis) {
        return new RetryJournalEntry(call.retryId(), application, serviceKey, call.method(), payload, attempt,
                dueEpochMillis, call.lastProvider(), call.lastFailure(), call.createdEpochMillis());
    }

    /**
     * Offers a call the journal does not hold to it again, once the journal works: a call whose append failed in an
     * outage becomes durable again. Blocks for at most the journal's write timeout, and only while the journal's
     * last operation succeeded.
     *
     * @param attempt the retry the call has pending
     */
    void rejournal(RetryCall<P> call, int attempt) {
        if (call.unjournaled != null && journal.working()) {
            appendAgain(call, attempt);
        }
    }

    /** @return false if the journal did not take the call whose append failed; true if it did, or has its key */
    private boolean appendAgain(RetryCall<P> call, int attempt) {
        Appended appended = journal.append(entry(call, call.unjournaled, attempt, clockMillis.getAsLong()), false);
        if (appended.kind() == Appended.Kind.NOT_WRITTEN) {
            return false;
        }
        call.unjournaled = null;
        if (appended.kind() != Appended.Kind.DUPLICATE) { // a row of the same key that is not this call: leave it
            journaled(call, appended);
        }
        return true;
    }

    /** Records in {@code call} what its append did. */
    static void journaled(RetryCall<?> call, Appended appended) {
        switch (appended.kind()) {
            case WRITTEN -> call.journaled = Journaled.YES;
            case MAYBE -> {
                call.appendResolution = appended.resolution();
                call.journaled = Journaled.MAYBE;
            }
            default -> call.journaled = Journaled.NO;
        }
    }

    /** @return false while a MAYBE call's append has no known outcome; otherwise makes the call YES or NO */
    static boolean settle(RetryCall<?> call) {
        CompletableFuture<Boolean> r = call.appendResolution.toCompletableFuture();
        if (!r.isDone()) {
            return false;
        }
        if (!r.isCompletedExceptionally()) {
            call.journaled = r.join() ? Journaled.YES : Journaled.NO;
        }
        return true; // an outcome that will never be known stays MAYBE: its fence decides
    }

    /**
     * Removes an ended call from the journal. A remove the store refused (down, or slower than the write timeout) is
     * tried again, backing off, while the reference is open: a row left behind would be sent again at the next start.
     */
    void remove(CallKey key, RetryEvent.Type outcome) {
        remove(key, outcome, 0);
    }

    private void remove(CallKey key, RetryEvent.Type outcome, int failures) {
        journal.remove(key, outcome).thenAccept(settled -> {
            if (settled || closed.getAsBoolean() || failures + 1 >= REMOVE_ATTEMPTS) {
                return;
            }
            long delayNanos = Math.min(REMOVE_MAX_BACKOFF_NANOS, REMOVE_FIRST_BACKOFF_NANOS << Math.min(failures, 20));
            try {
                timer.newTimeout(t -> remove(key, outcome, failures + 1), delayNanos, TimeUnit.NANOSECONDS);
            } catch (IllegalStateException | RejectedExecutionException e) {
                // the wheel stopped: the application is closing, and the next start sends the call again
            }
        });
    }

    /** Where a call handed over went, and what the hand-over sink threw, if it did. */
    record Kept(Custody custody, Throwable failure) {
    }

    /** Keeps a call this instance hands over: in the journal, or else in the hand-over sink. */
    Kept keep(RetryCall<P> call, int pendingAttempt) {
        if (call.journaled == Journaled.NO) {
            rejournal(call, pendingAttempt); // appended now if its append failed in an outage that is over
        }
        if (call.journaled == Journaled.MAYBE) {
            settle(call);
        }
        if (call.journaled == Journaled.YES) {
            return new Kept(Custody.JOURNAL, null);
        }
        Custody inJournal = call.journaled == Journaled.MAYBE ? Custody.JOURNAL_UNCONFIRMED : null;
        if (handOverSink == null) {
            return new Kept(inJournal != null ? inJournal : Custody.NOWHERE, null);
        }
        try {
            handOverSink.handOver(call);
            return new Kept(inJournal != null ? inJournal : Custody.RETRY_STORE, null);
        } catch (Exception e) {
            return new Kept(inJournal != null ? inJournal : Custody.NOWHERE, e);
        }
    }

    /**
     * At a graceful stop: appends the calls whose append failed while the journal was down, if it takes writes again
     * before {@code deadlineNanos} ({@link System#nanoTime()}); otherwise they go to the hand-over sink, which in
     * most applications ends with the process.
     */
    void beforeClose(Collection<RetryCall<P>> calls, long deadlineNanos) {
        if (!journal.present()) {
            return;
        }
        for (RetryCall<P> call : calls) {
            while (call.journaled == Journaled.NO && call.unjournaled != null && call.state() != ENDED) {
                if (appendAgain(call, RetryReference.pendingAttempt(call))) {
                    break;
                }
                if (System.nanoTime() - deadlineNanos >= 0) {
                    return; // the journal stayed down: the rest go to the hand-over sink
                }
                LockSupport.parkNanos(CLOSE_JOURNAL_POLL_NANOS);
            }
        }
    }
}
