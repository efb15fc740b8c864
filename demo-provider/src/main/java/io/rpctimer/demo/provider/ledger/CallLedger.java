package io.rpctimer.demo.provider.ledger;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one demo provider served: every call received, how it ended, its {@code retry.id} and {@code retry.attempt}
 * attachments, and the duplicates: retry ids (and call ids) that <em>completed</em> more than once on this provider.
 *
 * <p>A duplicate is what an at-least-once retry costs: e.g. the provider completes a call after the consumer's timeout,
 * and the retry completes again. It is counted once per id, at its second completion.
 *
 * <p>Memory: one small entry per distinct completed retry id and call id, until {@link #reset()}; fine for a demo.
 * A load test that must cost the provider the same whatever ids its consumer sends (a {@code wheelfailback} call has
 * its own {@code retry.id}, a {@code failback} call none) switches to {@link #setCountsOnly counts only}: every
 * counter stays exact, but no per-id entry is kept, so duplicates are not detected.
 *
 * <p>Thread-safe: calls are recorded from many server threads at once. Each counter is exact; a {@link #snapshot()}
 * reads them one after the other, so counters of calls in flight may disagree by a few. A call received before a
 * {@link #reset()} is counted only in the state it was received in.
 */
public final class CallLedger {
    private final AtomicReference<State> state = new AtomicReference<>(new State(false));
    private final List<CallListener> listeners = new CopyOnWriteArrayList<>();

    /**
     * Records a call as it arrives.
     *
     * @param method the method name
     * @param callId the call's {@code callId} argument, or null
     * @param retryId the {@code retry.id} attachment, or null
     * @param attempt from {@link CallRecord#parseAttempt(String)}
     * @return the record, to pass to {@link #ended} when the call ends
     */
    public CallRecord received(String method, String callId, String retryId, int attempt) {
        State s = state.get();
        s.served.increment();
        s.attempts.computeIfAbsent(attempt, a -> new LongAdder()).increment();
        return new CallRecord(s.sequence.incrementAndGet(), method, callId, retryId, attempt, System.nanoTime(), s);
    }

    /**
     * Records how a call ended and tells the listeners.
     *
     * @param call the record from {@link #received}
     * @param outcome how it ended
     * @param detail the rejection or error message, or null
     * @throws IllegalArgumentException if {@code call} did not come from {@link #received} or {@code outcome} is null
     */
    public void ended(CallRecord call, CallOutcome outcome, String detail) {
        if (call == null || !(call.ledgerState instanceof State) || outcome == null) {
            throw new IllegalArgumentException("call/outcome: " + call + "/" + outcome
                    + " (expected: a record from received() and an outcome)");
        }
        State s = (State) call.ledgerState;
        switch (outcome) {
            case COMPLETED:
                s.completed.increment();
                if (s.countsOnly) {
                    break;
                }
                countCompletion(s.completionsByRetryId, call.retryId());
                s.duplicateCallIds.addAndGet(countCompletion(s.completionsByCallId, call.callId()));
                break;
            case REJECTED:
                s.rejected.increment();
                break;
            case RPC_ERROR:
                s.rpcErrors.increment();
                break;
            default:
                s.failed.increment();
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - call.receivedNanos());
        for (CallListener l : listeners) {
            try {
                l.onCallEnded(call, outcome, elapsed, detail);
            } catch (RuntimeException ignored) {
                // a listener must not break the call path
            }
        }
    }

    /** @return 1 when this completion makes {@code id} a duplicate (its 2nd completion), else 0 */
    private static int countCompletion(ConcurrentHashMap<String, AtomicInteger> byId, String id) {
        if (id == null) {
            return 0;
        }
        return byId.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet() == 2 ? 1 : 0;
    }

    /** @return the counters now */
    public LedgerSnapshot snapshot() {
        State s = state.get();
        Map<Integer, Long> attempts = new TreeMap<>();
        s.attempts.forEach((attempt, n) -> attempts.put(attempt, n.sum()));
        TreeSet<String> duplicates = new TreeSet<>();
        s.completionsByRetryId.forEach((id, n) -> {
            if (n.get() > 1) {
                duplicates.add(id);
            }
        });
        return new LedgerSnapshot(s.served.sum(), s.completed.sum(), s.rejected.sum(), s.rpcErrors.sum(),
                s.failed.sum(), s.duplicateCallIds.get(), duplicates, attempts);
    }

    /**
     * @param retryId a {@code retry.id}
     * @return how many calls with it completed on this provider
     * @throws IllegalStateException in {@linkplain #setCountsOnly counts-only} mode, which keeps no per-id counts
     */
    public int completions(String retryId) {
        State s = state.get();
        if (s.countsOnly) {
            throw new IllegalStateException("countsOnly: true (expected: false to count completions per retry id)");
        }
        AtomicInteger n = s.completionsByRetryId.get(retryId);
        return n == null ? 0 : n.get();
    }

    /** Forgets every call and counter. Calls in flight end in the old state and are not counted again. */
    public void reset() {
        state.set(new State(state.get().countsOnly));
    }

    /**
     * Switches the per-id counts off ({@code true}) or back on, and forgets every call and counter as {@link #reset()}
     * does. In counts-only mode every counter of {@link #snapshot()} stays exact, but duplicates are not tracked: the
     * snapshot reports none, and {@link #completions} refuses.
     *
     * @param countsOnly true to keep no entry per retry id or call id
     */
    public void setCountsOnly(boolean countsOnly) {
        state.set(new State(countsOnly));
    }

    /** @return whether the ledger keeps counters only, see {@link #setCountsOnly} */
    public boolean isCountsOnly() {
        return state.get().countsOnly;
    }

    /** @param listener told about every call that ends from now on */
    public void addListener(CallListener listener) {
        if (listener == null) {
            throw new IllegalArgumentException("listener: null");
        }
        listeners.add(listener);
    }

    /** @param listener a listener added before; no effect if absent */
    public void removeListener(CallListener listener) {
        listeners.remove(listener);
    }

    @Override
    public String toString() {
        return "CallLedger[" + snapshot() + "]";
    }

    /** Everything {@link #reset()} forgets. */
    private static final class State {
        final boolean countsOnly;
        final AtomicLong sequence = new AtomicLong();
        final LongAdder served = new LongAdder();
        final LongAdder completed = new LongAdder();
        final LongAdder rejected = new LongAdder();
        final LongAdder rpcErrors = new LongAdder();
        final LongAdder failed = new LongAdder();
        final AtomicLong duplicateCallIds = new AtomicLong();
        final ConcurrentHashMap<Integer, LongAdder> attempts = new ConcurrentHashMap<>();
        final ConcurrentHashMap<String, AtomicInteger> completionsByRetryId = new ConcurrentHashMap<>();
        final ConcurrentHashMap<String, AtomicInteger> completionsByCallId = new ConcurrentHashMap<>();

        State(boolean countsOnly) {
            this.countsOnly = countsOnly;
        }
    }
}
