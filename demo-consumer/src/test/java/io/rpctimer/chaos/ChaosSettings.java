package io.rpctimer.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The settings of one chaos run, from system properties (each with its default):
 * <ul>
 *   <li>{@code chaos.seed}: the seed of the fault schedule and the load (default: drawn, and printed first);</li>
 *   <li>{@code chaos.minutes}: how long faults keep beginning (default 1); the run lasts this plus the start, the
 *       tail of the last faults and the drain;</li>
 *   <li>{@code chaos.consumers}: consumer JVMs in the fleet (default 3);</li>
 *   <li>{@code chaos.rate}: operations per second per consumer (default 8; a business pair is one operation);</li>
 *   <li>{@code chaos.leaseMillis}: the journal's lease ({@code failback.store.lease}; default 3000, so that faults
 *       longer than a lease fit in a short run);</li>
 *   <li>{@code chaos.claimMillis}: how often a live consumer claims the calls of expired leases
 *       ({@code failback.store.claimperiod}; default 1000);</li>
 *   <li>{@code chaos.skewMillis}: the size of a skewed consumer's clock offset (default: 80% of the lease);</li>
 *   <li>{@code chaos.errorRate}: the providers' base rate of RPC errors (default 0.3).</li>
 * </ul>
 *
 * <p><b>Threading:</b> immutable.
 */
record ChaosSettings(long seed, Duration phase, int consumers, int callsPerSecond, Duration lease,
                     Duration claimPeriod, long skewMillis, double baseErrorRate) {

    static ChaosSettings fromSystemProperties() {
        long seed = Long.getLong("chaos.seed", System.nanoTime() & 0xFFFF_FFFFL);
        long leaseMillis = Long.getLong("chaos.leaseMillis", 3_000);
        double minutes = Double.parseDouble(System.getProperty("chaos.minutes", "1"));
        if (minutes <= 0 || minutes > 24 * 60) {
            throw new IllegalArgumentException("chaos.minutes: " + minutes + " (expected: > 0 and <= 1440)");
        }
        return new ChaosSettings(seed, Duration.ofMillis(Math.round(minutes * 60_000)),
                Integer.getInteger("chaos.consumers", 3), Integer.getInteger("chaos.rate", 8),
                Duration.ofMillis(leaseMillis), Duration.ofMillis(Long.getLong("chaos.claimMillis", 1_000)),
                Long.getLong("chaos.skewMillis", leaseMillis * 4 / 5),
                Double.parseDouble(System.getProperty("chaos.errorRate", "0.3")));
    }

    /** @return where the run's records, logs and summary go: {@code target/chaos/seed-<seed>} */
    Path directory() {
        return Path.of(System.getProperty("basedir", "."), "target", "chaos", "seed-" + seed);
    }

    FaultSchedule.Settings schedule() {
        return new FaultSchedule.Settings(phase, consumers, lease, claimPeriod, skewMillis);
    }

    /**
     * @param jdbcUrl the journal's database
     * @return the consumers' reference parameters: the journal on the fleet's database, quick retries
     */
    Map<String, String> referenceParameters(String jdbcUrl) {
        Map<String, String> p = new HashMap<>();
        p.put("failback.store", "jdbc");
        p.put("failback.store.url", jdbcUrl);
        p.put("failback.store.user", "postgres");
        p.put("failback.store.lease", String.valueOf(lease.toMillis()));
        p.put("failback.store.claimperiod", String.valueOf(claimPeriod.toMillis()));
        p.put("failback.delay", "500");
        p.put("failback.multiplier", "2");
        p.put("failback.maxdelay", "4000");
        p.put("retries", "8");
        p.put("failbacktasks", "200");
        p.put("failback.budget.minrate", "1000");
        return p;
    }

    /** @return the command that replays this run */
    String replayCommand() {
        return "mvn -B -pl demo-consumer -am verify -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false"
                + " -Dit.test=FleetChaosIT -Dfailsafe.failIfNoSpecifiedTests=false -Dchaos.seed=" + seed
                + " -Dchaos.minutes=" + phase.toMillis() / 60_000.0 + " -Dchaos.consumers=" + consumers
                + " -Dchaos.rate=" + callsPerSecond + " -Dchaos.leaseMillis=" + lease.toMillis()
                + " -Dchaos.claimMillis=" + claimPeriod.toMillis()
                + " -Dchaos.skewMillis=" + skewMillis + " -Dchaos.errorRate=" + baseErrorRate;
    }
}
