package io.rpctimer.retry;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The last {@code capacity} steps of every failed call of an application, in a ring: bounded memory whatever the
 * number of pending calls, and nothing kept per call. A call whose steps were overwritten has a shorter history.
 *
 * <p><b>Threading:</b> thread-safe and lock-free; {@link #of} reads a weakly consistent view.
 */
final class RetryHistory {

    private final AtomicReferenceArray<RetryStep> ring;
    private final AtomicLong next = new AtomicLong();

    RetryHistory(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("historyCapacity: " + capacity + " (expected: >= 1)");
        }
        ring = new AtomicReferenceArray<>(capacity);
    }

    void add(RetryStep step) {
        ring.set((int) (next.getAndIncrement() % ring.length()), step);
    }

    /** @return the steps of {@code retryId} still in the ring, oldest first */
    List<RetryStep> of(String retryId) {
        long end = next.get();
        long start = Math.max(0, end - ring.length());
        List<RetryStep> steps = new ArrayList<>();
        for (long i = start; i < end; i++) {
            RetryStep s = ring.get((int) (i % ring.length()));
            if (s != null && s.retryId().equals(retryId)) {
                steps.add(s);
            }
        }
        return steps;
    }
}
