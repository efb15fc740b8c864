package io.rpctimer.chaos;

import io.rpctimer.demo.provider.api.NotificationService;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The chaos run's checks, from independent records: what each caller recorded ({@link CallerRecords}), what each
 * provider received ({@link ProviderRecords}), each live instance's counters at the end, and the journal rows left.
 * Each finding is counted with up to five examples; {@link #violations()} are those that break the fleet's promise:
 * <ul>
 *   <li>{@code lost}: a call whose caller was told it was accepted (a reply, or the failback result) never ran, and
 *       no instance reported it ABANDONED;</li>
 *   <li>{@code ran twice}: a call ran to completion more than once at the providers, every run claimed by
 *       {@code retrydedup} and marked done (runs the store could not claim or mark done are counted apart: a store
 *       outage costs deduplication by design);</li>
 *   <li>{@code told rejected, yet ran}: the caller was told REJECTED (or got an error) and a retry of the call ran
 *       (the first attempt of a call whose caller got a timeout may have run: that is the first attempt's own
 *       fate, as for any RPC timeout, counted apart);</li>
 *   <li>{@code told delivered, never ran}: the handle said DELIVERED and no provider ran it;</li>
 *   <li>{@code double sends}: one attempt ({@code service, retry.id, retry.attempt}) reached the providers from two
 *       instances, counted from what arrived, before deduplication;</li>
 *   <li>{@code stale-owner sends}: an instance sent a retry of a call after another instance had sent the same or a
 *       later retry of it (a call adopted back after its adopter died goes on at a later retry: not stale), and the
 *       provider ran it; one that {@code retrydedup} answered without running is counted apart (a process frozen
 *       between its fence and its socket write sends when it wakes);</li>
 *   <li>{@code handle never completed}: a call failed back in an instance that lived to the end (or stopped
 *       gracefully) and its handle never completed;</li>
 *   <li>{@code counters do not add up}: failed != delivered + abandoned + rejected + handed over + pending;</li>
 *   <li>{@code journal rows left}: entries still in the journal after the drain;</li>
 *   <li>{@code faults that failed}: a fault that could not be injected (or a consumer that could not be started
 *       again) leaves the run short of what it claims to have tested.</li>
 * </ul>
 *
 * <p><b>Threading:</b> build and read on one thread, after the run.
 */
final class FleetCheck {

    /** A finding: how many, and a few examples. */
    static final class Finding {
        long count;
        final List<String> examples = new ArrayList<>();

        void add(String example) {
            count++;
            if (examples.size() < 5) {
                examples.add(example);
            }
        }
    }

    static final List<String> VIOLATIONS = List.of("lost", "ran twice", "told rejected, yet ran",
            "told delivered, never ran", "double sends", "stale-owner sends", "handle never completed",
            "counters do not add up", "journal rows left", "faults that failed");

    private final Map<String, Finding> findings = new LinkedHashMap<>();
    private final Map<String, Long> told = new TreeMap<>();
    private final Map<String, Long> ended = new TreeMap<>();
    private Set<String> doneFailed = Set.of();

    private FleetCheck() {
        VIOLATIONS.forEach(v -> findings.put(v, new Finding()));
    }

    /**
     * @param liveStats    instance to its counters, for the instances alive at the end
     * @param leftInJournal the journal rows left, one line each
     * @param failedFaults the faults that failed, one line each
     * @param doneFailed   the dedup keys whose run the store failed to mark done ({@link VerdictStore#doneFailed()})
     */
    static FleetCheck of(CallerRecords callers, List<ProviderRecords.Invocation> received,
                         List<ChaosFleet.Incarnation> incarnations, Map<String, Map<String, Long>> liveStats,
                         List<String> leftInJournal, List<String> failedFaults, Set<String> doneFailed) {
        FleetCheck c = new FleetCheck();
        c.doneFailed = doneFailed;
        Map<String, List<ProviderRecords.Invocation>> byCall = new HashMap<>();
        received.forEach(i -> byCall.computeIfAbsent(i.received().callId(), k -> new ArrayList<>()).add(i));
        Map<String, List<CallerRecords.Event>> events = callers.eventsByCall();
        Set<String> completedAtEnd = new TreeSet<>();
        // a killed instance's handles die with it; a stop that timed out ended in a kill
        incarnations.stream().filter(i -> i.ended() == null || i.ended().equals("STOPPED"))
                .forEach(i -> completedAtEnd.add(i.instance()));
        for (CallerRecords.Call call : callers.calls()) {
            c.call(call, byCall.getOrDefault(call.callId, List.of()), events.getOrDefault(call.callId, List.of()),
                    completedAtEnd.contains(call.instance));
        }
        c.sends(received);
        liveStats.forEach(c::counters);
        leftInJournal.forEach(row -> c.finding("journal rows left").add(row));
        failedFaults.forEach(f -> c.finding("faults that failed").add(f));
        return c;
    }

    private Finding finding(String name) {
        return findings.computeIfAbsent(name, k -> new Finding());
    }

    private void call(CallerRecords.Call call, List<ProviderRecords.Invocation> runs,
                      List<CallerRecords.Event> events, boolean handleMustComplete) {
        told.merge(call.told == null ? "(never told: process ended)" : call.told, 1L, Long::sum);
        long executed = runs.stream().filter(ProviderRecords.Invocation::executed).count();
        // a store outage costs deduplication by design: a run claimed without the store, or one the store then
        // failed to mark done (the call stays "started" until its window ends, and then may run again)
        boolean unprotected = runs.stream().anyMatch(r -> r.executed() && r.unprotected())
                || doneFailed.contains(dedupKey(call));
        long deliveries = executed + runs.stream().filter(ProviderRecords.Invocation::suppressed).count();
        boolean abandoned = "ABANDONED".equals(call.outcome)
                || events.stream().anyMatch(e -> e.type().equals("ABANDONED"));
        String example = call.callId + " (" + call.service + "." + call.method + " retry.id=" + call.retryId + " by "
                + call.instance + ", told " + call.told + ", handle " + call.outcome + ", ran " + executed + ")";
        if (executed > 1) {
            finding(unprotected ? "ran twice, the dedup store down at a run" : "ran twice").add(example);
        }
        if (deliveries > 1 && executed <= 1) {
            finding("would have run twice without retrydedup (suppressed)").add(example);
        }
        if (call.accepted()) {
            accepted(call, executed, abandoned, example);
        } else if (call.told != null && executed > 0) {
            boolean retryRan = runs.stream().anyMatch(r -> r.executed() && r.received().attempt() > 0);
            finding(retryRan ? "told rejected, yet ran"
                    : "told rejected or an error, its first attempt ran (a timeout the provider finished)")
                    .add(example);
        }
        if ("DELIVERED".equals(call.outcome) && deliveries == 0) {
            finding("told delivered, never ran").add(example);
        }
        if ("FAILED_BACK".equals(call.told) && call.outcome == null && handleMustComplete) {
            finding("handle never completed").add(example);
        }
    }

    /** @return the call's key in the dedup store, as {@code retrydedup} writes it */
    private static String dedupKey(CallerRecords.Call call) {
        String group = call.service.group();
        return (group == null ? "" : group + "/") + NotificationService.class.getName() + "#" + call.method + "#"
                + call.retryId;
    }

    private void accepted(CallerRecords.Call call, long executed, boolean abandoned, String example) {
        String end;
        if (executed > 0) {
            end = abandoned ? "ran (also reported ABANDONED: a timed-out attempt completed late)" : "ran";
        } else if (abandoned) {
            end = "ABANDONED" + ("ABANDONED".equals(call.outcome) ? ", caller told" : ", reported by an adopter");
        } else {
            end = "lost";
            finding("lost").add(example);
        }
        ended.merge(end, 1L, Long::sum);
    }

    /** Double sends and stale-owner sends, from what the providers received (before deduplication). */
    private void sends(List<ProviderRecords.Invocation> received) {
        Map<String, Set<String>> sendersByAttempt = new TreeMap<>();
        Map<String, List<ProviderRecords.Invocation>> retriesByCall = new HashMap<>();
        for (ProviderRecords.Invocation i : received) {
            ProviderRecords.Received r = i.received();
            String call = r.service() + " retry.id=" + r.retryId();
            sendersByAttempt.computeIfAbsent(call + " attempt=" + r.attempt(), k -> new TreeSet<>()).add(r.sender());
            if (r.attempt() > 0) {
                retriesByCall.computeIfAbsent(call, k -> new ArrayList<>()).add(i);
            }
        }
        sendersByAttempt.forEach((attempt, senders) -> {
            if (senders.size() > 1) {
                finding("double sends").add(attempt + " from " + senders);
            }
        });
        retriesByCall.forEach(this::staleOwner);
    }

    /**
     * A sender that sends a retry after another sent the same or a later one: it acted on ownership it had lost.
     * Ownership may move back and forth (each adoption after a lease ran out), but each owner goes on from the
     * journal's retry, so retries by time rise across senders. The fence and the socket write are not one step: a
     * process frozen between them sends when it wakes. Such a stale retry that {@code retrydedup} kept from running
     * is counted apart; one that ran is a violation.
     */
    private void staleOwner(String call, List<ProviderRecords.Invocation> retries) {
        List<ProviderRecords.Invocation> byTime = new ArrayList<>(retries);
        byTime.sort((a, b) -> Long.compare(a.received().receivedMillis(), b.received().receivedMillis()));
        List<String> order = new ArrayList<>();
        boolean ran = false;
        boolean kept = false;
        for (int i = 0; i < byTime.size(); i++) {
            ProviderRecords.Received r = byTime.get(i).received();
            order.add(r.sender() + "#" + r.attempt());
            boolean stale = false;
            for (int j = 0; j < i; j++) {
                ProviderRecords.Received earlier = byTime.get(j).received();
                stale |= !earlier.sender().equals(r.sender()) && earlier.attempt() >= r.attempt();
            }
            ran |= stale && byTime.get(i).ran();
            kept |= stale && !byTime.get(i).ran();
        }
        if (ran) {
            finding("stale-owner sends").add(call + " sender#retry in order " + order);
        } else if (kept) {
            finding("stale-owner sends kept from running by retrydedup").add(call + " sender#retry in order " + order);
        }
    }

    private void counters(String instance, Map<String, Long> s) {
        long failed = s.getOrDefault("failed", 0L);
        long sum = s.getOrDefault("delivered", 0L) + s.getOrDefault("abandoned", 0L)
                + s.getOrDefault("rejected", 0L) + s.getOrDefault("handedOver", 0L) + s.getOrDefault("pending", 0L);
        if (failed != sum) {
            finding("counters do not add up").add(instance + ": failed=" + failed + " but delivered + abandoned +"
                    + " rejected + handedOver + pending = " + sum + " " + s);
        }
    }

    /** @return every finding by name, the violations first */
    Map<String, Finding> findings() {
        return findings;
    }

    /** @return what callers were told, by answer */
    Map<String, Long> told() {
        return told;
    }

    /** @return how the accepted calls ended */
    Map<String, Long> ended() {
        return ended;
    }

    /** @return the violations found, by name (only those with a count) */
    Map<String, Long> violations() {
        Map<String, Long> v = new LinkedHashMap<>();
        VIOLATIONS.forEach(name -> {
            if (findings.get(name).count > 0) {
                v.put(name, findings.get(name).count);
            }
        });
        return v;
    }
}
