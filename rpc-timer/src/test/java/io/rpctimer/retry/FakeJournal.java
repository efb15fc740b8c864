package io.rpctimer.retry;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link RetryJournal} in memory for tests: records every operation in order, and can be told to fail, or to
 * answer that another instance adopted an entry. Thread-safe (synchronized), so the stress test can use it too.
 */
final class FakeJournal implements RetryJournal {

    /** An entry and whether it is parked. */
    record Held(RetryJournalEntry entry, boolean parked) {
    }

    final Map<String, Held> entries = new LinkedHashMap<>();
    final List<String> log = new ArrayList<>();
    /** Entries of an earlier run, handed out by {@link #claim}. */
    final List<RetryJournalEntry> claimable = new ArrayList<>();
    boolean failing;
    String adoptedElsewhere;

    @Override
    public synchronized void append(RetryJournalEntry entry, boolean parked) throws RetryJournalException {
        fail("append " + entry.retryId());
        log.add((parked ? "park " : "append ") + entry.retryId());
        entries.put(entry.retryId(), new Held(entry, parked));
    }

    @Override
    public synchronized boolean update(String retryId, int attempt, long dueEpochMillis, String lastProvider,
                                       String lastFailure) throws RetryJournalException {
        fail("update " + retryId);
        log.add("update " + retryId + " " + attempt);
        if (retryId.equals(adoptedElsewhere)) {
            return false;
        }
        Held h = entries.get(retryId);
        if (h != null) {
            RetryJournalEntry e = h.entry();
            entries.put(retryId, new Held(new RetryJournalEntry(retryId, e.application(), e.serviceKey(), e.method(),
                    e.payload(), attempt, dueEpochMillis, lastProvider, lastFailure, e.createdEpochMillis()), false));
        }
        return true;
    }

    @Override
    public synchronized void remove(String retryId) throws RetryJournalException {
        fail("remove " + retryId);
        log.add("remove " + retryId);
        entries.remove(retryId);
    }

    @Override
    public synchronized List<RetryJournalEntry> claim(String application, String serviceKey, int limit)
            throws RetryJournalException {
        fail("claim " + serviceKey);
        List<RetryJournalEntry> out = new ArrayList<>();
        claimable.sort(Comparator.comparingLong(RetryJournalEntry::dueEpochMillis));
        for (RetryJournalEntry e : claimable) {
            boolean taken = out.size() < limit;
            entries.put(e.retryId(), new Held(e, !taken));
            if (taken) {
                out.add(e);
            }
        }
        claimable.clear();
        log.add("claim " + out.size());
        return out;
    }

    @Override
    public synchronized List<RetryJournalEntry> unpark(String application, String serviceKey, int limit)
            throws RetryJournalException {
        fail("unpark " + serviceKey);
        List<RetryJournalEntry> out = new ArrayList<>();
        for (Map.Entry<String, Held> e : entries.entrySet()) {
            if (e.getValue().parked() && out.size() < limit) {
                out.add(e.getValue().entry());
                e.setValue(new Held(e.getValue().entry(), false));
            }
        }
        log.add("unpark " + out.size());
        return out;
    }

    synchronized long parkedCount() {
        return entries.values().stream().filter(Held::parked).count();
    }

    private void fail(String what) throws RetryJournalException {
        if (failing) {
            throw new RetryJournalException("fake journal down: " + what, new java.io.IOException("disk full (test)"));
        }
    }

    @Override
    public String describe() {
        return "fake journal";
    }

    @Override
    public void close() {
    }
}
