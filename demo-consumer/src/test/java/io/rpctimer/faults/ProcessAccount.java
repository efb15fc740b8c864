package io.rpctimer.faults;

import io.rpctimer.demo.provider.ledger.CallOutcome;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The account of calls whose lives span several consumer processes ({@link ConsumerProcess}): a call sent by one
 * process may be handed over or cut off there and end in another. The providers' ledgers say what was delivered
 * (each {@code retry.id} completed at least once) and what ran twice; the processes' outcome lines say how the rest
 * ended, the latest process's word last.
 *
 * <p><b>Threading:</b> build after the processes ended, from the test thread.
 */
final class ProcessAccount {

    private final List<String> ids;
    private final ProviderGroup providers;
    private final List<ConsumerProcess> processes;

    /** @param processes in the order they ran, the one that ran last at the end */
    ProcessAccount(List<String> ids, ProviderGroup providers, List<ConsumerProcess> processes) {
        this.ids = List.copyOf(ids);
        this.providers = providers;
        this.processes = List.copyOf(processes);
    }

    /** @return the ids no provider completed and no process ended with an outcome: lost */
    Set<String> lost() {
        Set<String> lost = new TreeSet<>();
        for (String id : ids) {
            String last = lastOutcome(id);
            if (providers.completions(id) == 0 && !"ABANDONED".equals(last) && !"REJECTED".equals(last)
                    && !"HANDED_OVER".equals(last)) {
                lost.add(id);
            }
        }
        return lost;
    }

    /** @return the ids the providers completed more than once */
    Set<String> duplicated() {
        Set<String> dups = new TreeSet<>();
        ids.stream().filter(id -> providers.completions(id) > 1).forEach(dups::add);
        return dups;
    }

    /**
     * The duplicates a restart must not cause. A call may run twice at the providers for two reasons only: its retry
     * was in flight when a process ended ({@code inFlight}), or an attempt completed at a provider after its
     * consumer had given up on it (a timeout: the process reported that attempt FAILED and sent the next), which is
     * at-least-once delivery without any restart. Anything else (an attempt completed twice, a completion its
     * consumer never gave up on) means a call was sent by two processes, or resumed twice.
     *
     * @return the duplicated ids neither reason explains, with their attempts at the providers
     */
    Map<String, List<ProviderRecorder.Served>> unexplainedDuplicates(Set<String> inFlight) {
        Map<String, List<ProviderRecorder.Served>> out = new TreeMap<>();
        for (String id : duplicated()) {
            List<ProviderRecorder.Served> done = providers.served().served(id).stream()
                    .filter(s -> s.outcome() == CallOutcome.COMPLETED).toList();
            boolean distinctAttempts = done.stream().map(ProviderRecorder.Served::attempt).distinct().count()
                    == done.size();
            int lastAttempt = done.stream().mapToInt(ProviderRecorder.Served::attempt).max().orElse(0);
            boolean givenUp = done.stream().filter(s -> s.attempt() != lastAttempt)
                    .allMatch(s -> processes.stream().anyMatch(p -> p.failed(id, s.attempt())));
            if (!inFlight.contains(id) && !(distinctAttempts && givenUp)) {
                out.put(id, providers.served().served(id));
            }
        }
        return out;
    }

    /** @return the ids some process printed several outcomes for: never right */
    List<String> severalOutcomesInOneProcess() {
        List<String> out = new ArrayList<>();
        for (ConsumerProcess p : processes) {
            p.outcomes().forEach((id, o) -> {
                if (o.size() > 1) {
                    out.add(p + ": " + id + " " + o);
                }
            });
        }
        return out;
    }

    /** @return for messages: how many ids, and the first ten */
    static String brief(java.util.Collection<String> ids) {
        return ids.size() + " " + ids.stream().limit(10).toList() + (ids.size() > 10 ? "..." : "");
    }

    private String lastOutcome(String id) {
        String last = null;
        for (ConsumerProcess p : processes) {
            List<String> o = p.outcomes().get(id);
            if (o != null) {
                last = o.get(o.size() - 1);
            }
        }
        return last;
    }

    private long lastOutcomes(String type) {
        return ids.stream().filter(id -> type.equals(lastOutcome(id))).count();
    }

    /**
     * @param replies      calls whose caller got a reply at once (delivered at the first try)
     * @param drainMillis  from the providers' recovery to the last delivery
     * @param wallMillis   the scenario's run time
     * @param sleeperLagMillis the test JVM's {@link io.rpctimer.demo.consumer.SleeperLag} over the run
     * @return the figures for {@link Figures#check(Map, String, org.junit.jupiter.api.function.Executable)}
     */
    Map<String, Object> figures(long replies, long drainMillis, long wallMillis, double sleeperLagMillis) {
        long delivered = providers.completed(ids);
        ConsumerProcess last = processes.get(processes.size() - 1);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("calls", ids.size());
        m.put("deliveredFirstTry", replies);
        m.put("deliveredOnRetry", delivered - replies);
        m.put("abandoned", lastOutcomes("ABANDONED"));
        m.put("rejected", lastOutcomes("REJECTED"));
        m.put("rejectedCallerTold", lastOutcomes("REJECTED"));
        m.put("handedOver", lastOutcomes("HANDED_OVER"));
        m.put("callerErrors", 0);
        m.put("duplicates", duplicated().stream().mapToLong(id -> providers.completions(id) - 1).sum());
        m.put("lost", lost().size());
        m.put("drainMillis", drainMillis);
        // the wheel's stats go with the wheel when the process stops: its highest values before that
        m.put("maxTickLagMillis", Math.round(last.maxStat("tickLagMicros") / 100.0) / 10.0);
        m.put("sleeperLagMillis", Math.round(sleeperLagMillis * 10) / 10.0);
        m.put("wheelTicks", last.maxStat("ticks"));
        m.put("wallMillis", wallMillis);
        return m;
    }
}
