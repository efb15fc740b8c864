package io.rpctimer.chaos;

import static org.awaitility.Awaitility.await;

import io.rpctimer.faults.ZooKeeperRig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;

/**
 * One chaos run, start to verdict: a real PostgreSQL, a real ZooKeeper, two providers in this JVM and a fleet of
 * consumer JVMs under steady load; a warm-up; the seeded {@link FaultSchedule}; then the faults stop, the providers
 * heal, the load stops, and the run waits (generously) until the journal is empty and no live instance has a call
 * pending; it reads each live instance's counters, stops the fleet gracefully, and checks the records
 * ({@link FleetCheck}). Everything it wrote is under {@link ChaosSettings#directory()}: each incarnation's
 * {@code .records}, the providers' {@code providers.records}, and {@code summary.txt}.
 *
 * <p><b>Threading:</b> {@link #run} on one thread; faults run on the {@link FaultRunner}'s.
 */
final class ChaosRun {

    static final String APPLICATION = "chaos-shop";
    private static final Duration WARM_UP = Duration.ofSeconds(8);
    private static final Duration ASK = Duration.ofSeconds(150);

    private final ChaosSettings settings;
    private final long startNanos = System.nanoTime();

    ChaosRun(ChaosSettings settings) {
        this.settings = settings;
    }

    /** The end of a run: the checks and the summary's text. */
    record Verdict(FleetCheck check, String summary, Path summaryFile) {
    }

    Verdict run() throws Exception {
        System.out.println("chaos seed " + settings.seed() + " (replay: -Dchaos.seed=" + settings.seed() + ")");
        FaultSchedule schedule = FaultSchedule.draw(settings.seed(), settings.schedule());
        System.out.println("chaos schedule:\n" + schedule);
        Path dir = settings.directory();
        deleteRecursively(dir);
        Files.createDirectories(dir);
        ProviderRecords.start(dir.resolve("providers.records"));
        try (ChaosPostgres postgres = ChaosPostgres.start(dir.resolve("pgdata"));
             ZooKeeperRig zk = ZooKeeperRig.single();
             ChaosProviders providers = ChaosProviders.start(zk.registryAddress(), postgres.pool(),
                     settings.baseErrorRate(), settings.phase().plus(schedule.end()).plusMinutes(30));
             ChaosFleet fleet = new ChaosFleet(zk.registryAddress(), APPLICATION, dir, settings.seed(),
                     settings.callsPerSecond(), settings.referenceParameters(postgres.jdbcUrl()))) {
            fleet.start(settings.consumers());
            FaultRunner.hold(WARM_UP); // load without faults first: calls pending when the first fault begins
            FaultRunner faults = new FaultRunner(fleet, providers, postgres);
            faults.start(schedule);
            faults.await(schedule.end().plusMinutes(10));
            providers.heal();
            postgres.startAgain(); // in case a restart failed half-way; a no-op when it runs
            for (ChaosFleet.Slot s : fleet.slots()) {
                if (!s.running()) { // a consumer that died by itself: its records say so; the drain needs a fleet
                    System.err.println("chaos: " + s.name + " found dead at the end of the faults; restarting it");
                    s.end(false);
                    s.start(0);
                }
            }
            return settle(fleet, postgres, faults, schedule, dir);
        } finally {
            ProviderRecords.stop();
        }
    }

    private Verdict settle(ChaosFleet fleet, ChaosPostgres postgres, FaultRunner faults, FaultSchedule schedule,
                           Path dir) throws Exception {
        long quiesceNanos = System.nanoTime();
        for (ChaosFleet.Slot s : fleet.slots()) {
            s.process().ask("quiesce", "QUIESCED", ASK);
        }
        boolean drained = drain(fleet, postgres);
        long drainMillis = (System.nanoTime() - quiesceNanos) / 1_000_000;
        Map<String, Map<String, Long>> stats = new LinkedHashMap<>();
        for (ChaosFleet.Slot s : fleet.slots()) {
            stats.put(s.current().instance(), stats(s.process().ask("stats", "STATS", ASK)));
        }
        List<String> left = journalRows(postgres);
        for (ChaosFleet.Slot s : fleet.slots()) {
            s.end(true);
        }
        List<String> failedFaults = faults.injected().stream().filter(i -> i.failure() != null)
                .map(i -> i.fault() + ": " + i.failure()).toList();
        FleetCheck check = FleetCheck.of(CallerRecords.read(fleet.incarnations()), ProviderRecords.all(),
                fleet.incarnations(), stats, left, failedFaults, VerdictStore.doneFailed());
        String summary = new ChaosSummary(settings, schedule, faults.injected(), fleet.incarnations(), stats, check,
                drained, drainMillis, (System.nanoTime() - startNanos) / 1_000_000).text();
        Path file = dir.resolve("summary.txt");
        Files.writeString(file, summary);
        System.out.println(summary);
        return new Verdict(check, summary, file);
    }

    /**
     * Waits until the journal is empty and no live instance has a call pending: past the lease and a claim period
     * (a killed instance's calls wait for both) and every backoff, with room for a loaded machine.
     *
     * @return whether it drained
     */
    private boolean drain(ChaosFleet fleet, ChaosPostgres postgres) {
        Duration max = settings.lease().plus(settings.claimPeriod()).plusMinutes(3);
        try {
            await().atMost(max).pollInterval(Duration.ofSeconds(2)).ignoreExceptions()
                    .until(() -> journalRows(postgres).isEmpty() && pendingNowhere(fleet));
            return true;
        } catch (ConditionTimeoutException e) {
            return false;
        }
    }

    private static boolean pendingNowhere(ChaosFleet fleet) throws IOException {
        for (ChaosFleet.Slot s : fleet.slots()) {
            if (stats(s.process().ask("stats", "STATS", ASK)).getOrDefault("pending", 0L) > 0) {
                return false;
            }
        }
        return true;
    }

    private static List<String> journalRows(ChaosPostgres postgres) throws SQLException {
        // the journal's call table: rpctimer_call, rpctimer_retry_entry before calls were scoped by service
        String table = postgres.query("SELECT to_regclass('rpctimer_call') IS NOT NULL").get(0).get(0)
                .startsWith("t") ? "rpctimer_call" : "rpctimer_retry_entry";
        List<String> rows = new ArrayList<>();
        for (List<String> r : postgres.query("SELECT retry_id, service_key, method, owner, attempt, parked,"
                + " quarantined FROM " + table + " ORDER BY retry_id")) {
            rows.add(String.join(" ", r));
        }
        return rows;
    }

    /** @return the key=value pairs of a {@code STATS} line */
    static Map<String, Long> stats(String line) {
        Map<String, Long> m = new LinkedHashMap<>();
        for (String kv : line.substring(line.indexOf(' ') + 1).split(" ")) {
            int eq = kv.indexOf('=');
            m.put(kv.substring(0, eq), Long.parseLong(kv.substring(eq + 1)));
        }
        return m;
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
