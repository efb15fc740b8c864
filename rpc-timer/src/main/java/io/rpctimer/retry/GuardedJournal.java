package io.rpctimer.retry;

import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * The lifecycle's one door to its {@link RetryJournal}, or to none: it never throws, turns every failure into an
 * answer the retry path can act on, and keeps the journal's health — a failure count, and one WARN line each time the
 * journal goes from working to failing (one INFO when it works again).
 *
 * <p>A journal that fails never costs a call: the call goes on in memory, its later progress is still offered to the
 * journal. A write whose outcome is unknown is {@link Appended.Kind#MAYBE} with its eventual outcome attached: the
 * call is treated as written (removed at its outcome, never reported refused).
 *
 * <p><b>Threading:</b> thread-safe.
 */
final class GuardedJournal {

    private static final System.Logger LOG = System.getLogger(GuardedJournal.class.getName());

    /** What an append did. */
    record Appended(Kind kind, CompletionStage<Boolean> resolution) {
        enum Kind {
            /** Durable. */
            WRITTEN,
            /** A call with the same key is pending: nothing written. */
            DUPLICATE,
            /** Known not written: no journal, no payload, or the store refused it. */
            NOT_WRITTEN,
            /** Maybe written: {@code resolution} completes true or false once known. */
            MAYBE
        }

        static final Appended WRITTEN = new Appended(Kind.WRITTEN, null);
        static final Appended DUPLICATE = new Appended(Kind.DUPLICATE, null);
        static final Appended NOT_WRITTEN = new Appended(Kind.NOT_WRITTEN, null);
    }

    /** The fence's verdict, with the store's failure as one more answer. */
    enum Verdict { OWNED, ADOPTED, GONE, LEASE_EXPIRED, FAILED }

    /** What a bury did: moved to the dead letters, left because another instance holds the call, or failed. */
    enum Buried { BURIED, ELSEWHERE, FAILED }

    /**
     * What a claim or an unpark handed out; {@code failed} if the store failed (nothing was handed out).
     * {@code askedNanos} ({@link System#nanoTime()}) is when it was asked for: the verdict of a {@link
     * RetryJournalEntry#fenced() fenced} entry holds from then on, as a fence's does.
     */
    record Claimed(List<RetryJournalEntry> entries, boolean failed, long askedNanos) {
    }

    private final String application;
    private final RetryJournal journal;
    private final LongAdder failures = new LongAdder();
    private final AtomicBoolean working = new AtomicBoolean(true);

    /** @param journal the journal, or null for none */
    GuardedJournal(String application, RetryJournal journal) {
        this.application = application;
        this.journal = journal;
    }

    boolean present() {
        return journal != null;
    }

    /** @return true if a failed fence must not be taken as leave to send (see {@link RetryJournal#fences()}) */
    boolean fences() {
        return journal != null && journal.fences();
    }

    boolean leaseHeld() {
        return journal == null || journal.leaseHeld();
    }

    /**
     * @param askedNanos when a fence was asked for ({@link System#nanoTime()})
     * @return whether its {@code OWNED} verdict is still leave to send (see {@link RetryJournal#fenceValidityMillis()})
     */
    boolean stillValid(long askedNanos) {
        long validity = journal == null ? Long.MAX_VALUE : journal.fenceValidityMillis();
        return validity == Long.MAX_VALUE || System.nanoTime() - askedNanos < TimeUnit.MILLISECONDS.toNanos(validity);
    }

    long failures() {
        return failures.sum();
    }

    /** @return false since the journal's last operation failed, until one succeeds again */
    boolean working() {
        return journal != null && working.get();
    }

    String describe() {
        return journal == null ? "none" : journal.describe();
    }

    Appended append(RetryJournalEntry entry, boolean parked) {
        try {
            RetryJournal.Append a = journal.append(entry, parked);
            worked();
            return a == RetryJournal.Append.DUPLICATE ? Appended.DUPLICATE : Appended.WRITTEN;
        } catch (RetryJournalException e) {
            failed("append " + entry.key(), e);
            return e.maybeWritten() ? new Appended(Appended.Kind.MAYBE, e.resolution()) : Appended.NOT_WRITTEN;
        } catch (RuntimeException e) {
            failed("append " + entry.key(), e);
            return Appended.NOT_WRITTEN;
        }
    }

    /** @return the verdict; never completes exceptionally */
    CompletionStage<Verdict> fence(CallKey key, int attempt, long nextDueEpochMillis, String lastProvider,
                                   String lastFailure) {
        CompletionStage<RetryJournal.Fence> fence;
        try {
            fence = journal.fence(key, attempt, nextDueEpochMillis, lastProvider, lastFailure);
        } catch (RuntimeException e) {
            fence = CompletableFuture.failedStage(e);
        }
        return fence.handle((f, failure) -> {
            if (failure != null) {
                failed("fence " + key + " before retry " + attempt, unwrap(failure));
                return Verdict.FAILED;
            }
            worked();
            return Verdict.valueOf(f.name());
        });
    }

    /**
     * Removes a call at its outcome, without waiting; a failure is counted and logged.
     *
     * @return completes true once the store has settled it (removed, or not this instance's row), false if the store
     *     failed (the row may be left behind); never exceptionally
     */
    CompletionStage<Boolean> remove(CallKey key, RetryEvent.Type outcome) {
        CompletionStage<Boolean> removed;
        try {
            removed = journal.remove(key);
        } catch (RuntimeException e) {
            removed = CompletableFuture.failedStage(e);
        }
        return removed.handle((ours, failure) -> {
            if (failure != null) {
                failed("remove " + key + " (tried again; left behind, a later start may send it again)",
                        unwrap(failure));
                return false;
            }
            worked();
            if (!ours && outcome == RetryEvent.Type.DELIVERED) {
                LOG.log(Level.WARNING, "wheelfailback {0} was delivered by this instance after another instance"
                        + " took it over (this one was taken for dead): that one may send it again, with the same"
                        + " retry.id", key);
            }
            return true;
        });
    }

    /**
     * Moves an abandoned call into the journal's dead letters, without waiting; a failure is counted and logged.
     *
     * @return what it did; never completes exceptionally
     */
    CompletionStage<Buried> bury(CallKey key, Abandonment abandonment) {
        CompletionStage<Boolean> buried;
        try {
            buried = journal.bury(key, abandonment);
        } catch (RuntimeException e) {
            buried = CompletableFuture.failedStage(e);
        }
        return buried.handle((ours, failure) -> {
            if (failure != null) {
                failed("bury " + key + " as a dead letter (a later start may send it again)", unwrap(failure));
                return Buried.FAILED;
            }
            worked();
            return ours ? Buried.BURIED : Buried.ELSEWHERE;
        });
    }

    /** @return the journal's dead letters, or null if there is no journal or it keeps none */
    DeadLetterStore deadLetters() {
        return journal == null ? null : journal.deadLetters();
    }

    /** Gives calls up so that the next claim of their service takes them. @return false if the store failed */
    boolean release(List<CallKey> keys) {
        if (journal == null || keys.isEmpty()) {
            return true;
        }
        try {
            journal.release(keys);
            worked();
            return true;
        } catch (RetryJournalException | RuntimeException e) {
            failed("release " + keys.size() + " calls (taken at the next start, or after this instance's lease)",
                    e);
            return false;
        }
    }

    Claimed claim(String serviceKey, int limit) {
        long askedNanos = System.nanoTime();
        try {
            List<RetryJournalEntry> entries = journal.claim(application, serviceKey, limit);
            worked();
            return new Claimed(entries, false, askedNanos);
        } catch (RetryJournalException | RuntimeException e) {
            failed("claim " + serviceKey, e);
            return new Claimed(List.of(), true, askedNanos);
        }
    }

    Claimed unpark(String serviceKey, int limit) {
        long askedNanos = System.nanoTime();
        try {
            List<RetryJournalEntry> entries = journal.unpark(application, serviceKey, limit);
            worked();
            return new Claimed(entries, false, askedNanos);
        } catch (RetryJournalException | RuntimeException e) {
            failed("unpark " + serviceKey, e);
            return new Claimed(List.of(), true, askedNanos);
        }
    }

    private void worked() {
        if (!working.get() && working.compareAndSet(false, true)) {
            LOG.log(Level.INFO, "wheelfailback journal of {0} works again: {1}", application, journal.describe());
        }
    }

    private void failed(String what, Throwable e) {
        failures.increment();
        if (working.getAndSet(false)) {
            LOG.log(Level.WARNING, "wheelfailback journal of " + application + " failed to " + what + "; until it"
                    + " works again, failed calls follow failback.store.down (rejected, or kept in memory, not"
                    + " durable); see journalFailures", e);
        }
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }
}
