package io.rpctimer.faults;

import io.rpctimer.demo.provider.DemoProvider;
import io.rpctimer.demo.provider.ledger.CallListener;
import io.rpctimer.demo.provider.ledger.CallOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What the providers saw of each call, by call id: every attempt that reached a provider, with its
 * {@code retry.attempt} and how it ended there. The fault suite checks duplicates with it: a call completed more than
 * once must have been retried (an attempt &gt; 0 reached a provider), so duplicates only ever share a retry id.
 *
 * <p><b>Threading:</b> thread-safe; provider threads record concurrently.
 */
final class ProviderRecorder {

    /** One attempt of a call, as one provider ended it. */
    record Served(String provider, int attempt, String retryId, CallOutcome outcome) {
    }

    private final Map<String, List<Served>> byCallId = new ConcurrentHashMap<>();
    private final List<Runnable> detach = new CopyOnWriteArrayList<>();

    /** Starts recording what {@code providers} end. */
    void attach(List<DemoProvider> providers) {
        for (DemoProvider p : providers) {
            CallListener l = (call, outcome, elapsed, detail) -> {
                if (call.callId() != null) {
                    byCallId.computeIfAbsent(call.callId(), k -> new CopyOnWriteArrayList<>())
                            .add(new Served(p.name(), call.attempt(), call.retryId(), outcome));
                }
            };
            p.ledger().addListener(l);
            detach.add(() -> p.ledger().removeListener(l));
        }
    }

    /** Stops recording. Idempotent. */
    void detach() {
        detach.forEach(Runnable::run);
        detach.clear();
    }

    /** @return every attempt of {@code callId} that reached a provider */
    List<Served> served(String callId) {
        return byCallId.getOrDefault(callId, List.of());
    }

    /** @return call id to completions, for the calls that completed more than once */
    Map<String, Integer> duplicated() {
        Map<String, Integer> dups = new TreeMap<>();
        byCallId.forEach((id, served) -> {
            int completions = (int) served.stream().filter(s -> s.outcome() == CallOutcome.COMPLETED).count();
            if (completions > 1) {
                dups.put(id, completions);
            }
        });
        return dups;
    }

    /** @return extra completions: a call completed n times counts n - 1 */
    long extraCompletions() {
        return duplicated().values().stream().mapToLong(n -> n - 1).sum();
    }

    /** @return the attempts whose {@code retry.id} is not their call id (the demo consumer sets it to the call id) */
    List<Served> foreignRetryIds() {
        List<Served> out = new ArrayList<>();
        byCallId.forEach((id, served) -> served.stream().filter(s -> !id.equals(s.retryId())).forEach(out::add));
        return out;
    }

    /** @return whether some retry (attempt &gt; 0) of {@code callId} reached a provider */
    boolean retried(String callId) {
        return served(callId).stream().anyMatch(s -> s.attempt() > 0);
    }

    /** @return the call ids, among {@code ids}, completed by provider {@code name} */
    List<String> completedBy(String name, Iterable<String> ids) {
        List<String> out = new ArrayList<>();
        for (String id : ids) {
            if (served(id).stream().anyMatch(s -> s.provider().equals(name) && s.outcome() == CallOutcome.COMPLETED)) {
                out.add(id);
            }
        }
        return out;
    }
}
