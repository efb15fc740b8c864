package io.rpctimer.retry;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A {@link RetryJournal} in memory for tests: records every operation in order, answers at once (fences and removes
 * complete on the calling thread), and can be told to fail, to answer that another instance adopted a call, that the
 * lease is not held, or that it fences like a fleet's journal. Calls are keyed by retry id (tests use distinct ids).
 * Thread-safe (synchronized), so the stress test can use it too.
 */
final class FakeJournal implements RetryJournal {

    /** An entry, whether it is parked, and whether this journal parked it itself (an append past the cap). */
    record Held(RetryJournalEntry entry, boolean parked, boolean parkedHere) {
    }

    final Map<String, Held> entries = new LinkedHashMap<>();
    final List<String> log = new ArrayList<>();
    /** Entries of an earlier run, handed out by {@link #claim}. */
    final List<RetryJournalEntry> claimable = new ArrayList<>();
    volatile boolean failing;
    volatile String adoptedElsewhere;
    /** Whether it behaves as a shared database's journal: other instances may adopt, so a failed fence bars a send. */
    volatile boolean fencing;
    volatile boolean leaseHeld = true;
    /** Fences answer {@link Fence#LEASE_EXPIRED} while true. */
    volatile boolean leaseTooShort;
    /** The next this many appends fail, then appends work again: a database restart. */
    volatile int appendsToFail;
    /** What {@link #fenceValidityMillis()} answers. */
    volatile long fenceValidityMillis = Long.MAX_VALUE;
    /** Runs once inside the next unpark, after the journal chose what to hand out: a concurrent step. */
    volatile Runnable onUnpark;
    /** Runs once inside the next claim, after the journal chose what to hand out: a concurrent step. */
    volatile Runnable onClaim;
    /**
     * The next append times out as maybe written, its row not there yet; {@link #commitLate} writes it and completes
     * this outcome, as a commit that lands after its caller stopped waiting.
     */
    volatile CompletableFuture<Boolean> lateCommit;
    private Held late;

    @Override
    public synchronized Append append(RetryJournalEntry entry, boolean parked) throws RetryJournalException {
        fail("append " + entry.retryId());
        log.add((parked ? "park " : "append ") + entry.retryId());
        CompletableFuture<Boolean> commit = lateCommit;
        if (commit != null) {
            lateCommit = null;
            late = new Held(entry, parked, parked);
            throw new RetryJournalException("fake journal slow: append " + entry.retryId(),
                    new java.util.concurrent.TimeoutException("under way (test)"), commit);
        }
        if (entries.containsKey(entry.retryId())) {
            return Append.DUPLICATE;
        }
        entries.put(entry.retryId(), new Held(entry, parked, parked));
        return Append.APPENDED;
    }

    @Override
    public synchronized CompletionStage<Fence> fence(CallKey key, int attempt, long nextDueEpochMillis,
                                                     String lastProvider, String lastFailure) {
        String id = key.retryId();
        if (failing) {
            return CompletableFuture.failedStage(new RetryJournalException("fake journal down: fence " + id,
                    new java.io.IOException("disk full (test)")));
        }
        log.add("fence " + id + " " + attempt);
        if (id.equals(adoptedElsewhere)) {
            return CompletableFuture.completedStage(Fence.ADOPTED);
        }
        Held h = entries.get(id);
        if (h == null) {
            return CompletableFuture.completedStage(Fence.GONE);
        }
        if (leaseTooShort) {
            return CompletableFuture.completedStage(Fence.LEASE_EXPIRED);
        }
        RetryJournalEntry e = h.entry();
        entries.put(id, new Held(new RetryJournalEntry(id, e.application(), e.serviceKey(), e.method(), e.payload(),
                attempt + 1, nextDueEpochMillis, lastProvider, lastFailure, e.createdEpochMillis()), false, false));
        return CompletableFuture.completedStage(Fence.OWNED);
    }

    @Override
    public synchronized CompletionStage<Boolean> remove(CallKey key) {
        if (failing) {
            return CompletableFuture.failedStage(new RetryJournalException("fake journal down: remove "
                    + key.retryId(), new java.io.IOException("disk full (test)")));
        }
        log.add("remove " + key.retryId());
        return CompletableFuture.completedStage(entries.remove(key.retryId()) != null);
    }

    @Override
    public synchronized void release(List<CallKey> keys) throws RetryJournalException {
        fail("release");
        log.add("release " + keys.stream().map(CallKey::retryId).toList());
        for (CallKey k : keys) {
            Held h = entries.get(k.retryId());
            if (h != null) {
                entries.put(k.retryId(), new Held(h.entry(), true, false));
            }
        }
    }

    @Override
    public synchronized List<RetryJournalEntry> claim(String application, String serviceKey, int limit)
            throws RetryJournalException {
        fail("claim " + serviceKey);
        List<RetryJournalEntry> out = new ArrayList<>();
        claimable.sort(Comparator.comparingLong(RetryJournalEntry::dueEpochMillis));
        for (RetryJournalEntry e : claimable) {
            boolean taken = out.size() < limit;
            entries.put(e.retryId(), new Held(e, !taken, false));
            if (taken) {
                out.add(e);
            }
        }
        claimable.clear();
        log.add("claim " + out.size());
        Runnable hook = onClaim;
        onClaim = null;
        if (hook != null) {
            hook.run();
        }
        return out;
    }

    @Override
    public synchronized List<RetryJournalEntry> unpark(String application, String serviceKey, int limit)
            throws RetryJournalException {
        fail("unpark " + serviceKey);
        List<RetryJournalEntry> out = new ArrayList<>();
        for (Map.Entry<String, Held> e : entries.entrySet()) {
            Held h = e.getValue();
            if (h.parked() && out.size() < limit) {
                RetryJournalEntry x = h.entry();
                out.add(new RetryJournalEntry(x.retryId(), x.application(), x.serviceKey(), x.method(), x.payload(),
                        x.attempt(), x.dueEpochMillis(), x.lastProvider(), x.lastFailure(), x.createdEpochMillis(),
                        h.parkedHere()));
                e.setValue(new Held(x, false, false));
            }
        }
        log.add("unpark " + out.size());
        Runnable hook = onUnpark;
        onUnpark = null;
        if (hook != null) {
            hook.run();
        }
        return out;
    }

    /** The append that timed out as maybe written commits now, and its caller's outcome says so. */
    void commitLate(CompletableFuture<Boolean> commit) {
        synchronized (this) {
            entries.put(late.entry().retryId(), late);
            late = null;
        }
        commit.complete(true);
    }

    synchronized long parkedCount() {
        return entries.values().stream().filter(Held::parked).count();
    }

    private void fail(String what) throws RetryJournalException {
        if (what.startsWith("append") && appendsToFail > 0) {
            appendsToFail--;
            throw new RetryJournalException("fake journal down: " + what, new java.io.IOException("restarting (test)"));
        }
        if (failing) {
            throw new RetryJournalException("fake journal down: " + what, new java.io.IOException("disk full (test)"));
        }
    }

    @Override
    public boolean fences() {
        return fencing;
    }

    @Override
    public boolean leaseHeld() {
        return leaseHeld;
    }

    @Override
    public long fenceValidityMillis() {
        return fenceValidityMillis;
    }

    @Override
    public String describe() {
        return "fake journal";
    }

    @Override
    public void close() {
    }
}
