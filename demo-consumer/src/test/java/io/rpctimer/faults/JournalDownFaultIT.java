package io.rpctimer.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.SleeperLag;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Scenario 12 (the journal's database is down under a Dubbo consumer): a consumer process on a PostgreSQL journal
 * ({@code failback.store=jdbc}); every provider fails every call. 200 calls fail back and are journaled; then
 * PostgreSQL stops under the consumer, and 200 more calls fail back. The journal's failures change nothing a caller
 * sees: every caller still gets the failback result at once, the calls are kept in memory (the lifecycle's rule:
 * a WARN in the log and the {@code journalFailures} counter), the retries of the first 200 go on although their
 * journal updates fail, and once the providers recover all 400 are delivered: nothing lost silently.
 */
class JournalDownFaultIT {

    private static final int EACH = 200;

    @Test
    @Timeout(180)
    void callsFailingBackWhileTheDatabaseIsDownAreKeptInMemoryAndDelivered() throws Throwable {
        long start = System.nanoTime();
        List<String> before = IntStream.range(0, EACH).mapToObj(i -> "jdown-1-" + i).toList();
        List<String> during = IntStream.range(0, EACH).mapToObj(i -> "jdown-2-" + i).toList();
        EmbeddedPostgres postgres = EmbeddedPostgres.start();
        try (ZooKeeperRig zk = ZooKeeperRig.single(); ProviderGroup providers = ProviderGroup.startFailing(zk, 2);
             SleeperLag sleeper = SleeperLag.start();
             ConsumerProcess c = ConsumerProcess.start("jdown", zk.registryAddress(), "jdown", EACH, "jdown-1",
                     ConsumerFleetFaultIT.jdbcParameters(postgres))) {
            String sentBefore = c.awaitLine("SENT_ALL jdown-1", Duration.ofSeconds(90));
            long failuresBefore = c.maxStat("journalFailures");
            postgres.close();
            c.command("send " + EACH + " jdown-2");
            String sentDuring = c.awaitLine("SENT_ALL jdown-2", Duration.ofSeconds(90));
            Waits.until(() -> c.maxStat("journalFailures") > 0, Duration.ofSeconds(10));
            long failuresDuring = c.maxStat("journalFailures");
            long back = System.nanoTime();
            providers.recover();
            List<String> ids = new ArrayList<>(before);
            ids.addAll(during);
            boolean all = Waits.until(() -> providers.completed(ids) == ids.size(), Duration.ofSeconds(60));
            long deliverMillis = Duration.ofNanos(System.nanoTime() - back).toMillis();
            c.stop();
            List<String> warnings = warnings(Path.of(System.getProperty("basedir", "."), "target",
                    "consumer-children", "jdown.log"));
            ProcessAccount account = new ProcessAccount(ids, providers, List.of(c));
            long delivered = ids.stream().filter(id -> c.outcomes().getOrDefault(id, List.of()).contains("DELIVERED"))
                    .count();
            String notes = "before the database stopped: " + sentBefore + " (journal failures " + failuresBefore
                    + "); after: " + sentDuring + ", journal failures " + failuresDuring + ", " + warnings.size()
                    + " WARN lines naming the journal, e.g. " + (warnings.isEmpty() ? "none" : warnings.get(0))
                    + "; the providers recovered and " + delivered + " calls were DELIVERED within " + deliverMillis
                    + " ms; " + account.lost().size() + " lost.";
            Figures.of(12, 1, "12-journal-down", "PostgreSQL journal stopped mid-run",
                            "PostgreSQL stopped after " + EACH + " calls failed back; " + EACH + " more fail back"
                                    + " while it is down; every provider failing, then recovering")
                    .put("journalFailures", failuresDuring)
                    .check(account.figures(0, deliverMillis, Duration.ofNanos(System.nanoTime() - start).toMillis(),
                            sleeper.maxLagMillis()), notes, () -> {
                                assertEquals("SENT_ALL jdown-1 failedBack=" + EACH + " reply=0 other=0", sentBefore);
                                assertEquals(0, failuresBefore, "journal failures while the database was up");
                                assertEquals("SENT_ALL jdown-2 failedBack=" + EACH + " reply=0 other=0", sentDuring,
                                        "what the callers got while the database was down");
                                assertTrue(failuresDuring > 0, "no journal failure counted: " + c.tail(3));
                                assertTrue(!warnings.isEmpty(), "no WARN about the journal in the consumer's log");
                                assertTrue(all, "not every call delivered: lost " + ProcessAccount.brief(account.lost()));
                                assertEquals(Set.of(), account.lost(), "lost");
                                assertEquals(ids.size(), delivered, "DELIVERED events");
                                assertEquals(List.of(), account.severalOutcomesInOneProcess(), "several outcomes");
                            });
        } finally {
            postgres.close();
        }
    }

    /** @return the WARN lines of a consumer's log that mention its journal */
    private static List<String> warnings(Path log) throws java.io.IOException {
        return Files.readAllLines(log, StandardCharsets.UTF_8).stream()
                .filter(l -> l.contains("WARN") && l.toLowerCase(java.util.Locale.ROOT).contains("journal"))
                .toList();
    }
}
