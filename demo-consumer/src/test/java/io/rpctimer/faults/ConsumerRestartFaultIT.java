package io.rpctimer.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.SleeperLag;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Scenario 10 (a consumer crash, and a graceful restart): the consumer is a separate JVM
 * ({@link ConsumerChild}) on the embedded journal (H2 files in a temporary directory). Every provider fails every
 * call at the RPC level; the consumer sends 1,000 calls, every caller gets the failback result (each call persisted
 * before that), and their retries keep failing, 1 to 2 s apart. Then the consumer process ends with the retries
 * pending, killed with SIGKILL ({@code kill -9}, {@code Process.destroyForcibly}) or stopped with SIGTERM (its
 * Dubbo application destroyed: every pending call HANDED_OVER, kept in the journal). A new process of the same
 * application on the same journal directory starts, the providers recover, and the new process delivers every one
 * of the 1,000 with its original {@code retry.id}: the providers' ledgers show each completed at least once, more
 * than once only for a retry in flight when the first process ended, and nothing lost.
 */
class ConsumerRestartFaultIT {

    private static final int CALLS = 1_000;
    private static final Duration DELIVER_WITHIN = Duration.ofSeconds(60);

    /** How the first consumer process ends. */
    enum Stop {
        KILL, GRACEFUL
    }

    /**
     * Retries 1 then 2 s apart, never given up within the test: they outlive the first process. The retry budget
     * allows 1,000 retries a second with no successful call to earn them: its default (10/s) would take 100 s to
     * release 1,000 resumed calls, which is what it is for in a retry storm, and not what these scenarios measure.
     */
    static Map<String, String> retryParameters() {
        return Map.of("failback.delay", "1000", "failback.multiplier", "2", "failback.maxdelay", "2000",
                "retries", "1000", "failbacktasks", "5000", "failback.budget.minrate", "1000");
    }

    private static String app(Stop stop) {
        return "restart-" + stop.name().toLowerCase();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Stop.class)
    @Timeout(180)
    void everyFailedBackCallIsDeliveredByTheRestartedProcess(Stop stop, @TempDir Path journalDir) throws Throwable {
        long start = System.nanoTime();
        String app = app(stop);
        Map<String, String> params = new HashMap<>(retryParameters());
        params.put("failback.store", "embedded");
        params.put("failback.store.dir", journalDir.toString());
        List<String> ids = IntStream.range(0, CALLS).mapToObj(i -> app + "-" + i).toList();
        try (ZooKeeperRig zk = ZooKeeperRig.single(); ProviderGroup providers = ProviderGroup.startFailing(zk, 2);
             SleeperLag sleeper = SleeperLag.start();
             ConsumerProcess first = ConsumerProcess.start(app + "-1", zk.registryAddress(), app, CALLS, app, params)) {
            String sentAll = first.awaitLine("SENT_ALL", Duration.ofSeconds(90));
            long retriedBeforeEnd = first.retried().size();
            if (stop == Stop.KILL) {
                first.kill();
            } else {
                first.stop();
            }
            long completedWhileDown = providers.completed(ids);
            try (ConsumerProcess second = ConsumerProcess.start(app + "-2", zk.registryAddress(), app, 0, app,
                    params)) {
                second.awaitLine("READY", Duration.ofSeconds(60));
                long back = System.nanoTime();
                providers.recover();
                boolean all = Waits.until(() -> providers.completed(ids) == CALLS, DELIVER_WITHIN);
                long deliverMillis = Duration.ofNanos(System.nanoTime() - back).toMillis();
                second.stop();
                check(stop, ids, providers, first, second, sentAll, retriedBeforeEnd, completedWhileDown, all,
                        deliverMillis, Duration.ofNanos(System.nanoTime() - start).toMillis(),
                        sleeper.maxLagMillis());
            }
        }
    }

    private static void check(Stop stop, List<String> ids, ProviderGroup providers, ConsumerProcess first,
                              ConsumerProcess second, String sentAll, long retriedBeforeEnd,
                              long completedWhileDown, boolean all, long deliverMillis, long wallMillis,
                              double sleeperLagMillis) throws Throwable {
        ProcessAccount account = new ProcessAccount(ids, providers, List.of(first, second));
        Set<String> inFlight = first.inFlight();
        Set<String> duplicated = account.duplicated();
        long handedOver = first.outcomes().values().stream().filter(o -> o.contains("HANDED_OVER")).count();
        long resumed = second.maxStat("resumed");
        long deliveredBySecond = second.outcomes().values().stream().filter(o -> o.contains("DELIVERED")).count();
        String how = stop == Stop.KILL ? "killed (SIGKILL)" : "stopped (SIGTERM)";
        String notes = "first process (exit status " + first.exitValue() + "): " + sentAll + ", retries of " + retriedBeforeEnd + " calls sent, then "
                + how + " with " + inFlight.size() + " retries in flight" + (stop == Stop.GRACEFUL ? " and "
                + handedOver + " calls HANDED_OVER" : "") + "; second process (same application, same journal"
                + " directory) resumed " + resumed + " calls and delivered " + deliveredBySecond + " of them within "
                + deliverMillis + " ms of the providers' recovery; calls run twice: "
                + ProcessAccount.brief(duplicated) + ", " + account.lost().size() + " lost.";
        Figures.of(10, stop == Stop.KILL ? 1 : 2, "10-consumer-restart-" + stop.name().toLowerCase(),
                        stop == Stop.KILL ? "consumer killed (kill -9), restarted" : "consumer stopped (SIGTERM),"
                                + " restarted",
                        CALLS + " calls failed back (every provider failing), consumer process " + how
                                + " with their retries pending; restarted on the same embedded journal, then the"
                                + " providers recover")
                .put("resumed", resumed).put("inFlightAtEnd", inFlight.size())
                .put("handedOverAtStop", handedOver).put("deliverAfterRestartMillis", deliverMillis)
                .check(account.figures(0, deliverMillis, wallMillis, sleeperLagMillis), notes, () -> {
                    assertEquals("SENT_ALL " + app(stop) + " failedBack=" + ids.size() + " reply=0 other=0", sentAll,
                            "what the first process's callers got");
                    assertEquals(0, completedWhileDown, "calls completed while every provider was failing");
                    assertTrue(all, "not every call delivered within " + DELIVER_WITHIN + ": lost "
                            + ProcessAccount.brief(account.lost()) + "; second process: " + second.tail(5));
                    assertEquals(Set.of(), account.lost(), "lost");
                    assertEquals(List.of(), providers.served().foreignRetryIds(), "attempts with another retry.id");
                    assertEquals(List.of(), account.severalOutcomesInOneProcess(), "several outcomes");
                    assertEquals(Map.of(), account.unexplainedDuplicates(inFlight), "calls run twice neither in"
                            + " flight at the end of the first process nor given up on by their consumer");
                    assertEquals(ids.size(), deliveredBySecond, "DELIVERED by the second process");
                    assertEquals(ids.size(), resumed, "calls the second process resumed from the journal");
                    if (stop == Stop.GRACEFUL) {
                        assertEquals(143, first.exitValue(), "exit status after SIGTERM (128 + 15)");
                        assertEquals(ids.size(), handedOver, "HANDED_OVER at the graceful stop");
                    }
                    assertEquals(0, second.stat("handedOver"), "calls still pending at the second process's stop");
                });
    }
}
