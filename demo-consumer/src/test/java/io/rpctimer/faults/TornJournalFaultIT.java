package io.rpctimer.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rpctimer.demo.consumer.SleeperLag;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scenario 12b (a torn record left by a crash): a consumer process on the embedded journal is
 * killed with 200 calls pending; before it restarts, one row of its H2 file is damaged (its payload no longer matches
 * the CRC32 beside it, as a torn write leaves it). The restarted process skips that one entry with one error naming
 * it (and keeps it, quarantined, for inspection), and resumes and delivers every other call.
 */
class TornJournalFaultIT {

    private static final int CALLS = 200;

    @Test
    @Timeout(120)
    void aTornEntryIsSkippedWithAnErrorNamingItAndEveryOtherCallIsDelivered(@TempDir Path journalDir)
            throws Throwable {
        long start = System.nanoTime();
        String app = "torn";
        String torn = app + "-7";
        Map<String, String> params = new HashMap<>(ConsumerRestartFaultIT.retryParameters());
        params.put("failback.store", "embedded");
        params.put("failback.store.dir", journalDir.toString());
        List<String> ids = IntStream.range(0, CALLS).mapToObj(i -> app + "-" + i).toList();
        List<String> intact = ids.stream().filter(id -> !id.equals(torn)).toList();
        try (ZooKeeperRig zk = ZooKeeperRig.single(); ProviderGroup providers = ProviderGroup.startFailing(zk, 2);
             SleeperLag sleeper = SleeperLag.start();
             ConsumerProcess first = ConsumerProcess.start("torn-1", zk.registryAddress(), app, CALLS, app, params)) {
            String sentAll = first.awaitLine("SENT_ALL", Duration.ofSeconds(90));
            first.kill();
            int damaged = damage(journalDir.resolve(app), torn);
            try (ConsumerProcess second = ConsumerProcess.start("torn-2", zk.registryAddress(), app, 0, app, params)) {
                second.awaitLine("READY", Duration.ofSeconds(60));
                long back = System.nanoTime();
                providers.recover();
                boolean all = Waits.until(() -> providers.completed(intact) == intact.size(), Duration.ofSeconds(60));
                long deliverMillis = Duration.ofNanos(System.nanoTime() - back).toMillis();
                second.stop();
                List<String> errors = Files.readAllLines(Path.of(System.getProperty("basedir", "."), "target",
                        "consumer-children", "torn-2.log"), StandardCharsets.UTF_8).stream()
                        .filter(l -> l.contains("ERROR") && l.contains(torn)).toList();
                ProcessAccount account = new ProcessAccount(intact, providers, List.of(first, second));
                long resumed = second.maxStat("resumed");
                String notes = sentAll + "; killed (SIGKILL); " + damaged + " row damaged (" + torn + ": payload"
                        + " not matching its CRC32); the restarted process resumed " + resumed + " calls, logged "
                        + errors.size() + " error naming the torn entry (" + (errors.isEmpty() ? "none" : errors.get(0))
                        + "), and delivered the other " + providers.completed(intact) + " within " + deliverMillis
                        + " ms of the providers' recovery; " + account.lost().size() + " of them lost.";
                Figures.of(12, 2, "12-journal-torn-entry", "a torn journal entry after kill -9",
                                CALLS + " calls pending on the embedded journal, consumer killed, one row's payload"
                                        + " damaged before the restart")
                        .put("quarantined", 1).put("resumed", resumed)
                        .check(account.figures(0, deliverMillis, Duration.ofNanos(System.nanoTime() - start)
                                .toMillis(), sleeper.maxLagMillis()), notes, () -> {
                                    assertEquals(1, damaged, "rows damaged");
                                    assertTrue(all, "intact calls not all delivered: lost "
                                            + ProcessAccount.brief(account.lost()));
                                    assertEquals(Set.of(), account.lost(), "lost");
                                    assertEquals(intact.size(), resumed, "calls resumed");
                                    assertEquals(0, providers.completions(torn), "the torn entry was sent");
                                    assertEquals(1, errors.size(), "errors naming " + torn + ": " + errors);
                                });
            }
        }
    }

    /**
     * Makes the journal row of {@code retryId} torn: its payload's CRC32 no longer matches. The process that held
     * the file is dead, so its H2 file lock is gone. A call's key is application, service, method and retry id; this
     * test sends one method of one service with unique ids, so the retry id alone finds the row.
     *
     * @return the rows changed
     */
    private static int damage(Path applicationDir, String retryId) throws Exception {
        Path file;
        try (Stream<Path> files = Files.list(applicationDir)) {
            file = files.filter(f -> f.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".mv.db"))
                    .findFirst().orElseThrow(() -> new AssertionError("no journal file in " + applicationDir));
        }
        String base = file.toString().substring(0, file.toString().length() - ".mv.db".length());
        try (Connection c = DriverManager.getConnection("jdbc:h2:file:" + base, "sa", "");
             PreparedStatement st = c.prepareStatement(
                     "UPDATE rpctimer_call SET payload_crc = payload_crc + 1 WHERE retry_id = ?")) {
            st.setString(1, retryId);
            return st.executeUpdate();
        }
    }
}
