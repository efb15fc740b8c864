package io.rpctimer.demo.consumer;

import io.rpctimer.demo.provider.ledger.CallListener;
import io.rpctimer.demo.provider.ledger.CallOutcome;
import io.rpctimer.demo.provider.ledger.CallRecord;
import io.rpctimer.retry.RetryEvent;
import io.rpctimer.retry.RetryListener;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the {@code dead-letters} scenario reads as it runs: from the providers' ledgers, every completion of a call and
 * when each call arrived after the replay began; from the consumer's retry events, which calls ended
 * {@code ABANDONED} before the replay, and which reached an outcome, and which {@code DELIVERED}, after it.
 *
 * <p><b>Threading:</b> thread-safe: provider threads and the consumer's retry threads report at once;
 * {@link #replayBegins} and the readers run on the demo's thread.
 */
final class DeadLetterWatch implements CallListener, RetryListener {

    private final String service;
    private final Map<String, AtomicInteger> completions = new ConcurrentHashMap<>();
    private final Set<String> abandoned = ConcurrentHashMap.newKeySet();
    private final Set<String> deliveredAfter = ConcurrentHashMap.newKeySet();
    private final Set<String> settledAfter = ConcurrentHashMap.newKeySet();
    private final Map<String, Long> firstArrivalAfter = new ConcurrentHashMap<>();
    private volatile long replayNanos; // set once by replayBegins(); 0 before
    private volatile boolean replaying;

    /** @param service the service interface whose retry events count */
    DeadLetterWatch(String service) {
        this.service = service;
    }

    @Override
    public void onCallEnded(CallRecord call, CallOutcome outcome, Duration elapsed, String detail) {
        String id = call.retryId() != null ? call.retryId() : call.callId();
        if (id == null) {
            return;
        }
        boolean afterReplay = replaying && call.receivedNanos() - replayNanos >= 0;
        if (afterReplay) {
            firstArrivalAfter.merge(id, call.receivedNanos(), Math::min);
        }
        if (outcome == CallOutcome.COMPLETED) {
            completions.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
        }
    }

    @Override
    public void onEvent(RetryEvent e) {
        if (!e.isOutcome() || !service.equals(e.service())) {
            return;
        }
        if (!replaying) {
            if (e.type() == RetryEvent.Type.ABANDONED) {
                abandoned.add(e.retryId());
            }
        } else {
            if (e.type() == RetryEvent.Type.DELIVERED) {
                deliveredAfter.add(e.retryId());
            }
            settledAfter.add(e.retryId());
        }
    }

    /** Marks the start of the replay: from now on, arrivals and outcomes count as the replay's. */
    void replayBegins() {
        replayNanos = System.nanoTime();
        replaying = true;
    }

    /** @return calls that ended {@code ABANDONED} before the replay */
    Set<String> abandoned() {
        return Set.copyOf(abandoned);
    }

    /** @return how many of {@code ids} have not reached an outcome since the replay began */
    long unsettled(Collection<String> ids) {
        return ids.stream().filter(id -> !settledAfter.contains(id)).count();
    }

    /** @return completions by call id, at every watched provider together */
    Map<String, Integer> completions() {
        Map<String, Integer> m = new HashMap<>();
        completions.forEach((id, n) -> m.put(id, n.get()));
        return m;
    }

    /** @return calls that ended {@code DELIVERED} after the replay began */
    Set<String> deliveredAfterReplay() {
        return new HashSet<>(deliveredAfter);
    }

    /** @return when each of {@code ids} first arrived at a provider after the replay began, for those that did */
    List<Long> firstArrivals(Set<String> ids) {
        return firstArrivalAfter.entrySet().stream().filter(en -> ids.contains(en.getKey())).map(Map.Entry::getValue)
                .toList();
    }
}
