package io.rpctimer.retry;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A {@link RetryStore} that keeps pending retries in memory.
 *
 * <p><b>Threading:</b> thread-safe and lock-free.
 */
public final class InMemoryRetryStore implements RetryStore {

    private final ConcurrentLinkedQueue<PendingRetry> retries = new ConcurrentLinkedQueue<>();

    @Override
    public void handOver(PendingRetry retry) {
        retries.add(retry);
    }

    /** @return the retries held now, oldest first */
    public List<PendingRetry> retries() {
        return new ArrayList<>(retries);
    }

    /** @return the number held */
    public int size() {
        return retries.size();
    }

    /** @return and removes every retry held, oldest first */
    public List<PendingRetry> drain() {
        List<PendingRetry> out = new ArrayList<>();
        PendingRetry r;
        while ((r = retries.poll()) != null) {
            out.add(r);
        }
        return out;
    }

    @Override
    public String toString() {
        return "InMemoryRetryStore(" + retries.size() + " held)";
    }
}
