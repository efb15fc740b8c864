package io.rpctimer.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.SleeperLag;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenario 12 (the journal's database is down under a Dubbo consumer, then back): a consumer process on a PostgreSQL
 * journal ({@code failback.store=jdbc}) that keeps in memory what the journal refuses
 * ({@code failback.store.down=memory}; by default such a call is rejected, its caller told); every provider fails
 * every call. 200 calls fail back and are journaled; then
 * PostgreSQL stops, and 200 more calls fail back. The journal's failures change nothing a caller sees: every caller
 * still gets the failback result at once, and the calls the journal cannot take are kept in memory (a WARN in the
 * log and the {@code journalFailures} counter). The providers recover while the database is still down: the 200
 * calls the journal never held are sent from memory and delivered, and the 200 journaled ones are held back, because
 * a send of a journaled call needs the database to prove this instance still owns it (another instance may adopt it
 * while this one cannot reach the database): none of them reaches a provider, none ends. Then PostgreSQL starts
 * again on the same data directory and port, and the journaled calls are delivered too: every one of the 400 runs
 * exactly once at the providers (no {@code retrydedup} here: the providers' own count per {@code retry.id}).
 */
class JournalDownFaultIT {

    private static final int EACH = 200;

    @Test
    @Timeout(420)
    void unjournaledCallsAreSentFromMemoryAndJournaledOnesWaitForTheDatabase(@TempDir Path dir) throws Throwable {
        long start = System.nanoTime();
        List<String> before = ids("jdown-1-");
        List<String> during = ids("jdown-2-");
        List<String> all = new ArrayList<>(before);
        all.addAll(during);
        try (RestartablePostgres postgres = RestartablePostgres.start(dir.resolve("pgdata"));
             ZooKeeperRig zk = ZooKeeperRig.single(); ProviderGroup providers = ProviderGroup.startFailing(zk, 2);
             SleeperLag sleeper = SleeperLag.start();
             ConsumerProcess c = ConsumerProcess.start("jdown", zk.registryAddress(), "jdown", EACH, "jdown-1",
                     keepInMemoryWhenDown(ConsumerFleetFaultIT.jdbcParameters(postgres.jdbcUrl())))) {
            String sentBefore = c.awaitLine("SENT_ALL jdown-1", Duration.ofSeconds(90));
            long failuresBefore = c.maxStat("journalFailures");
            postgres.stop();
            c.command("send " + EACH + " jdown-2");
            String sentDuring = c.awaitLine("SENT_ALL jdown-2", Duration.ofSeconds(90));
            Waits.until(() -> c.maxStat("journalFailures") > 0, Duration.ofSeconds(30));
            long failuresDuring = c.maxStat("journalFailures");

            long recovered = System.nanoTime();
            providers.recover();
            boolean fromMemory = Waits.until(() -> providers.completed(during) == EACH, Duration.ofSeconds(90));
            long fromMemoryMillis = millisSince(recovered);
            long heldBackRan = providers.completed(before);
            Map<String, List<String>> heldBackEnded = outcomesOf(c, before);

            long back = System.nanoTime();
            postgres.startAgain();
            boolean delivered = Waits.until(() -> providers.completed(all) == all.size(), Duration.ofSeconds(150));
            long afterBackMillis = millisSince(back);
            c.stop();

            List<String> warnings = warnings(Path.of(System.getProperty("basedir", "."), "target",
                    "consumer-children", "jdown.log"));
            ProcessAccount account = new ProcessAccount(all, providers, List.of(c));
            Map<String, Integer> notOnce = notExactlyOnce(providers, all);
            long deliveredEvents = all.stream()
                    .filter(id -> c.outcomes().getOrDefault(id, List.of()).contains("DELIVERED")).count();
            String notes = "before the database stopped: " + sentBefore + " (journal failures " + failuresBefore
                    + "); while it was down: " + sentDuring + ", journal failures " + failuresDuring + ", "
                    + warnings.size() + " WARN lines naming the journal, e.g. "
                    + (warnings.isEmpty() ? "none" : warnings.get(0)) + "; the providers recovered with the database"
                    + " still down: the " + providers.completed(during) + " calls kept in memory were delivered within "
                    + fromMemoryMillis + " ms, and of the " + EACH + " journaled calls " + heldBackRan + " ran and "
                    + heldBackEnded.size() + " ended while it was down; the database started again and every call was"
                    + " delivered within " + afterBackMillis + " ms; " + deliveredEvents + " DELIVERED, "
                    + notOnce.size() + " calls not run exactly once, " + account.lost().size() + " lost.";
            Figures.of(12, 1, "12-journal-down", "PostgreSQL journal stopped mid-run, then back",
                            "PostgreSQL stopped after " + EACH + " calls failed back; " + EACH + " more fail back"
                                    + " while it is down; every provider failing, then recovering with the database"
                                    + " still down; then the database is back")
                    .put("journalFailures", failuresDuring)
                    .put("heldBackRan", heldBackRan)
                    .put("fromMemoryMillis", fromMemoryMillis)
                    .check(account.figures(0, afterBackMillis, millisSince(start), sleeper.maxLagMillis()), notes,
                            () -> {
                                assertEquals("SENT_ALL jdown-1 failedBack=" + EACH + " reply=0 other=0", sentBefore);
                                assertEquals(0, failuresBefore, "journal failures while the database was up");
                                assertEquals("SENT_ALL jdown-2 failedBack=" + EACH + " reply=0 other=0", sentDuring,
                                        "what the callers got while the database was down");
                                assertTrue(failuresDuring > 0, "no journal failure counted: " + c.tail(3));
                                assertTrue(!warnings.isEmpty(), "no WARN about the journal in the consumer's log");
                                assertTrue(fromMemory, "calls kept in memory not all delivered while the database"
                                        + " was down: " + providers.completed(during) + " of " + EACH);
                                assertEquals(0, heldBackRan, "journaled calls run while the database was down");
                                assertEquals(Map.of(), heldBackEnded, "journaled calls ended while it was down");
                                assertTrue(delivered, "not every call delivered once the database was back: lost "
                                        + ProcessAccount.brief(account.lost()));
                                assertEquals(Set.of(), account.lost(), "lost");
                                assertEquals(Map.of(), notOnce, "calls not run exactly once at the providers");
                                assertEquals(all.size(), deliveredEvents, "DELIVERED events");
                                assertEquals(List.of(), account.severalOutcomesInOneProcess(), "several outcomes");
                            });
        }
    }

    /**
     * The journal's database is down when the consumer process starts (a restart during a database outage, or a
     * rolling deploy that meets a database restart): the process starts, its failed calls are kept in memory
     * ({@code failback.store.down=memory}), and once the database answers the journal opens at the next claim, takes
     * every call again (each is appended at its next attempt) and, when the providers recover, every call runs exactly
     * once and leaves no row behind.
     */
    @Test
    @Timeout(300)
    void aConsumerStartsWhileTheJournalsDatabaseIsDownAndJournalsItsCallsOnceItAnswers(@TempDir Path dir)
            throws Throwable {
        List<String> ids = ids("jstart-");
        try (RestartablePostgres postgres = RestartablePostgres.start(dir.resolve("pgdata"));
             ZooKeeperRig zk = ZooKeeperRig.single(); ProviderGroup providers = ProviderGroup.startFailing(zk, 2)) {
            postgres.stop();
            Map<String, String> params = keepInMemoryWhenDown(ConsumerFleetFaultIT.jdbcParameters(postgres.jdbcUrl()));
            params.put("failback.store.claimperiod", "500");
            try (ConsumerProcess c = ConsumerProcess.start("jstart", zk.registryAddress(), "jstart", EACH, "jstart",
                    params)) {
                assertEquals("SENT_ALL jstart failedBack=" + EACH + " reply=0 other=0",
                        c.awaitLine("SENT_ALL jstart", Duration.ofSeconds(90)),
                        "what the callers got with the journal's database down since the start");
                postgres.startAgain();
                assertTrue(Waits.until(() -> journaled(postgres, "jstart") == EACH, Duration.ofSeconds(90)),
                        "calls in the journal once its database answers: " + journaled(postgres, "jstart") + " of "
                                + EACH);
                assertEquals(0, providers.completed(ids), "calls run while every provider fails");
                providers.recover();
                assertTrue(Waits.until(() -> providers.completed(ids) == EACH && journaled(postgres, "jstart") == 0,
                        Duration.ofSeconds(90)), "delivered: " + providers.completed(ids) + " of " + EACH
                        + ", rows left: " + journaled(postgres, "jstart"));
                assertEquals(Map.of(), notExactlyOnce(providers, ids), "calls not run exactly once");
                c.stop();
            }
        }
    }

    /** @return rows of {@code application} in the journal's table now, or -1 if the database does not answer */
    private static long journaled(RestartablePostgres postgres, String application) {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(postgres.jdbcUrl(), "postgres", "");
             java.sql.PreparedStatement st = c.prepareStatement(
                     "SELECT count(*) FROM rpctimer_call WHERE application = ?")) {
            st.setString(1, application);
            try (java.sql.ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (java.sql.SQLException e) {
            return -1;
        }
    }

    private static Map<String, String> keepInMemoryWhenDown(Map<String, String> params) {
        Map<String, String> out = new HashMap<>(params);
        out.put("failback.store.down", "memory");
        return out;
    }

    private static List<String> ids(String prefix) {
        return IntStream.range(0, EACH).mapToObj(i -> prefix + i).toList();
    }

    private static long millisSince(long nanos) {
        return Duration.ofNanos(System.nanoTime() - nanos).toMillis();
    }

    /** @return the outcomes the consumer has printed so far for {@code ids}, by id */
    private static Map<String, List<String>> outcomesOf(ConsumerProcess c, List<String> ids) {
        Map<String, List<String>> out = new TreeMap<>();
        Map<String, List<String>> outcomes = c.outcomes();
        ids.stream().filter(outcomes::containsKey).forEach(id -> out.put(id, outcomes.get(id)));
        return out;
    }

    /** @return the ids the providers completed other than exactly once, with their completions */
    private static Map<String, Integer> notExactlyOnce(ProviderGroup providers, List<String> ids) {
        Map<String, Integer> out = new TreeMap<>();
        ids.stream().filter(id -> providers.completions(id) != 1).forEach(id -> out.put(id, providers.completions(id)));
        return out;
    }

    /** @return the WARN lines of a consumer's log that mention its journal */
    private static List<String> warnings(Path log) throws java.io.IOException {
        return Files.readAllLines(log, StandardCharsets.UTF_8).stream()
                .filter(l -> l.contains("WARN") && l.toLowerCase(Locale.ROOT).contains("journal"))
                .toList();
    }
}
