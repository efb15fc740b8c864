package io.rpctimer.demo.provider.ledger;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The counters of a {@link CallLedger} at one moment. Counts are calls.
 *
 * <p>Immutable, so thread-safe.
 */
public final class LedgerSnapshot {
    private final long served;
    private final long completed;
    private final long rejected;
    private final long rpcErrors;
    private final long failed;
    private final long duplicateCallIds;
    private final SortedSet<String> duplicateRetryIds;
    private final SortedMap<Integer, Long> attempts;

    LedgerSnapshot(long served, long completed, long rejected, long rpcErrors, long failed, long duplicateCallIds,
            SortedSet<String> duplicateRetryIds, Map<Integer, Long> attempts) {
        this.served = served;
        this.completed = completed;
        this.rejected = rejected;
        this.rpcErrors = rpcErrors;
        this.failed = failed;
        this.duplicateCallIds = duplicateCallIds;
        this.duplicateRetryIds = Collections.unmodifiableSortedSet(new TreeSet<>(duplicateRetryIds));
        this.attempts = Collections.unmodifiableSortedMap(new TreeMap<>(attempts));
    }

    /** @return calls received, whatever became of them */
    public long served() {
        return served;
    }

    /** @return calls the service answered normally */
    public long completed() {
        return completed;
    }

    /** @return calls refused with {@code NotificationRejectedException} (injected "fail") */
    public long rejected() {
        return rejected;
    }

    /** @return calls failed at the RPC level (injected "error") */
    public long rpcErrors() {
        return rpcErrors;
    }

    /** @return calls failed for another reason */
    public long failed() {
        return failed;
    }

    /** @return calls failed by injection: {@link #rejected()} + {@link #rpcErrors()} */
    public long failedByInjection() {
        return rejected + rpcErrors;
    }

    /** @return calls received but not ended yet (e.g. hanging) */
    public long inFlight() {
        return served - completed - rejected - rpcErrors - failed;
    }

    /** @return how many {@code retry.id}s completed more than once */
    public long duplicates() {
        return duplicateRetryIds.size();
    }

    /** @return the {@code retry.id}s that completed more than once, sorted */
    public SortedSet<String> duplicateRetryIds() {
        return duplicateRetryIds;
    }

    /**
     * @return how many {@code callId} arguments completed more than once. Unlike {@link #duplicates()} this also
     *         catches an original call (which carries no {@code retry.id}) completing along with its retry.
     */
    public long duplicateCallIds() {
        return duplicateCallIds;
    }

    /**
     * @return calls received per {@code retry.attempt}, ascending: 0 = no attachment (an original call), 1..n = retry
     *         attempts, -1 = unparsable attachment
     */
    public SortedMap<Integer, Long> attempts() {
        return attempts;
    }

    /**
     * @return the counters by name, in a stable order: {@code served, completed, rejected, errors, failed, inFlight,
     *         duplicates, duplicateCallIds, attempt.<n>...}
     */
    public Map<String, Long> toMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("served", served);
        m.put("completed", completed);
        m.put("rejected", rejected);
        m.put("errors", rpcErrors);
        m.put("failed", failed);
        m.put("inFlight", inFlight());
        m.put("duplicates", duplicates());
        m.put("duplicateCallIds", duplicateCallIds);
        attempts.forEach((attempt, n) -> m.put("attempt." + attempt, n));
        return m;
    }

    /** @return e.g. {@code served=12 completed=9 rejected=2 errors=1 failed=0 inFlight=0 duplicates=1 ...} */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        toMap().forEach((k, v) -> sb.append(sb.length() == 0 ? "" : " ").append(k).append('=').append(v));
        return sb.toString();
    }
}
