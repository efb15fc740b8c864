package io.rpctimer.retry;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link RetryStore} that keeps pending retries in memory, at most {@code capacity} of them (default
 * {@value #DEFAULT_CAPACITY}): each holds its call's arguments, so an unbounded store would keep every call handed
 * over for the life of the JVM. Past the capacity the oldest retry is dropped to make room: the first drop is logged
 * at warning level with the capacity and the dropped retry's id, and every drop is counted ({@link #dropped()}, and
 * in {@link #toString()}, which the {@code HANDED_OVER} log line names).
 *
 * <p><b>Threading:</b> thread-safe; every method takes one lock, held for O(1) work except the copies of
 * {@link #retries()} and {@link #drain()} (calls are handed over at stops, not on the path of each call).
 */
public final class InMemoryRetryStore implements RetryStore {

    /** The capacity of a store made with {@link #InMemoryRetryStore()}. */
    public static final int DEFAULT_CAPACITY = 10_000;

    private static final System.Logger LOG = System.getLogger(InMemoryRetryStore.class.getName());

    private final int capacity;
    /** Guarded by this; oldest first. */
    private final ArrayDeque<PendingRetry> retries = new ArrayDeque<>();
    /** Guarded by this. */
    private long dropped;

    /** A store of at most {@value #DEFAULT_CAPACITY} retries. */
    public InMemoryRetryStore() {
        this(DEFAULT_CAPACITY);
    }

    /**
     * @param capacity the most retries held; past it the oldest is dropped
     * @throws IllegalArgumentException if {@code capacity} is below 1
     */
    public InMemoryRetryStore(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: >= 1)");
        }
        this.capacity = capacity;
    }

    /** Keeps {@code retry}, dropping the oldest one held if the store is full. */
    @Override
    public void handOver(PendingRetry retry) {
        if (retry == null) {
            throw new NullPointerException("retry: null (expected: a PendingRetry)");
        }
        PendingRetry oldest = null;
        boolean firstDrop = false;
        synchronized (this) {
            if (retries.size() == capacity) {
                oldest = retries.poll();
                firstDrop = ++dropped == 1;
            }
            retries.add(retry);
        }
        if (firstDrop) {
            LOG.log(System.Logger.Level.WARNING, "InMemoryRetryStore full ({0} retries): dropped the oldest,"
                    + " retry.id={1} ({2}.{3}()); later drops are counted, not logged (dropped())", capacity,
                    oldest.retryId(), oldest.service(), oldest.method());
        }
    }

    /** @return the retries held now, oldest first */
    public synchronized List<PendingRetry> retries() {
        return new ArrayList<>(retries);
    }

    /** @return the number held */
    public synchronized int size() {
        return retries.size();
    }

    /** @return the most retries held */
    public int capacity() {
        return capacity;
    }

    /** @return how many retries were dropped, the oldest first, to make room for newer ones */
    public synchronized long dropped() {
        return dropped;
    }

    /** @return and removes every retry held, oldest first */
    public synchronized List<PendingRetry> drain() {
        List<PendingRetry> out = new ArrayList<>(retries);
        retries.clear();
        return out;
    }

    @Override
    public synchronized String toString() {
        return "InMemoryRetryStore(" + retries.size() + " held, " + dropped + " dropped, capacity " + capacity + ")";
    }
}
