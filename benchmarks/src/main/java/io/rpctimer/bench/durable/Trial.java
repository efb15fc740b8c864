package io.rpctimer.bench.durable;

import io.rpctimer.bench.ChildJvm;
import io.rpctimer.bench.ExecutionLedger;
import io.rpctimer.bench.ForeignLoadMonitor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * One measured drain: {@code calls} calls due at once, drained by {@code instances} worker JVMs of one system, on
 * the comparison's PostgreSQL. In order: the tables are made anew; the workers start and warm up on tables of their
 * own; the calls are loaded (rpc-timer: by an instance that is then killed with SIGKILL; db-scheduler: by its client);
 * every call is made due now, the tables vacuumed and analyzed, a checkpoint taken; then the clock starts and every
 * worker is told GO at once. The drain ends when the workers have executed every call and the main table is empty
 * (every call's row removed): then the clock stops and each worker reports its process CPU since GO and writes its
 * ledger, which are added up (lost, ran twice).
 *
 * <p>Measured: the wall time from GO to the empty table; the CPU of the workers (their own reading, GO to the end)
 * and of the PostgreSQL server ({@code /proc}, GO to the end); the transactions of the runs' database
 * ({@code pg_stat_database}, GO until the workers closed their connections, less the coordinator's own); the
 * machine's CPU that was neither (other processes: another build on the machine).
 *
 * <p><b>Threading:</b> {@link #run} from one thread.
 */
final class Trial {

    private static final Duration START_LIMIT = Duration.ofMinutes(15);
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final PgServer pg;
    private final DurableSettings s;
    private final Path work;

    Trial(PgServer pg, DurableSettings settings, Path work) {
        this.pg = pg;
        this.s = settings;
        this.work = work;
    }

    /** @return the trial's figures, for JSON */
    Map<String, Object> run(String system, int instances, int round) throws Exception {
        String tag = system + "-" + instances + "-r" + round;
        resetTables(system);
        List<ChildJvm> workers = new ArrayList<>();
        AtomicLongArray progress = new AtomicLongArray(instances);
        try {
            for (int i = 0; i < instances; i++) {
                workers.add(startWorker(system, i, tag, progress));
            }
            for (ChildJvm w : workers) {
                w.await("READY", START_LIMIT);
            }
            double loadSeconds = load(system, tag);
            settle(system);
            return drain(system, instances, round, workers, progress, loadSeconds, tag);
        } finally {
            for (ChildJvm w : workers) {
                w.close();
            }
        }
    }

    private void resetTables(String system) throws SQLException {
        pg.execute("DROP TABLE IF EXISTS " + DrainWorker.JOURNAL_PREFIX + "call",
                "DROP TABLE IF EXISTS " + DrainWorker.JOURNAL_PREFIX + "instance",
                "DROP TABLE IF EXISTS " + DrainWorker.TASK_TABLE);
        for (int i = 0; i < 4; i++) {
            pg.execute("DROP TABLE IF EXISTS warm" + i + "_call", "DROP TABLE IF EXISTS warm" + i + "_instance",
                    "DROP TABLE IF EXISTS warm_tasks_" + i);
        }
        if (system.equals(DrainWorker.DB_SCHEDULER)) {
            DbSchedulerInstance.createTable(pg.dataSource(), DrainWorker.TASK_TABLE);
        }
    }

    private ChildJvm startWorker(String system, int index, String tag, AtomicLongArray progress) {
        List<String> args = new ArrayList<>(s.workerArgs(system));
        args.addAll(List.of("--role", "drain", "--url", pg.jdbcUrl(), "--index", String.valueOf(index),
                "--calls", String.valueOf(s.calls()), "--warmup", String.valueOf(s.warmup()),
                "--ledger", ledger(tag, index).toString()));
        return ChildJvm.start(tag + "-" + index, s.jvmArgs(), DrainWorker.class, args, work.resolve("workers.log"),
                line -> {
                    if (line.startsWith("P ")) {
                        progress.set(index, Long.parseLong(line.substring(2).trim()));
                    }
                });
    }

    private Path ledger(String tag, int index) {
        return work.resolve("ledger-" + tag + "-" + index + ".bin");
    }

    /** @return the seconds the load took */
    private double load(String system, String tag) throws Exception {
        long start = System.nanoTime();
        List<String> args = new ArrayList<>(s.workerArgs(system));
        args.addAll(List.of("--role", "load", "--url", pg.jdbcUrl(), "--calls", String.valueOf(s.calls())));
        try (ChildJvm loader = ChildJvm.start(tag + "-loader", s.jvmArgs(), DrainWorker.class, args,
                work.resolve("workers.log"), null)) {
            loader.await("LOADED", START_LIMIT);
            double seconds = (System.nanoTime() - start) / 1e9;
            if (system.equals(DrainWorker.RPC_TIMER)) {
                loader.kill(); // the instance dies with its calls in the journal
            } else {
                loader.awaitExit(Duration.ofMinutes(1));
            }
            return seconds;
        }
    }

    /**
     * Makes every call due now, waits (rpc-timer) until the dead writer's lease has expired, vacuums and analyzes the
     * main table and takes a checkpoint, so that both systems start from a clean table and an empty WAL backlog.
     */
    private void settle(String system) throws Exception {
        String table = mainTable(system);
        if (system.equals(DrainWorker.RPC_TIMER)) {
            pg.execute("UPDATE " + table + " SET due_at = " + System.currentTimeMillis());
            awaitLeaseExpired();
        }
        pg.execute("VACUUM ANALYZE " + table, "CHECKPOINT");
    }

    private void awaitLeaseExpired() throws Exception {
        String sql = "SELECT count(*) FROM " + DrainWorker.JOURNAL_PREFIX + "instance WHERE owner = 'writer'"
                + " AND lease_until >= CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        try (Connection c = pg.dataSource().getConnection(); Statement st = c.createStatement()) {
            while (true) {
                try (ResultSet rs = st.executeQuery(sql)) {
                    rs.next();
                    if (rs.getLong(1) == 0) {
                        return;
                    }
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("the writer's lease did not expire");
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            }
        }
    }

    private static String mainTable(String system) {
        return system.equals(DrainWorker.RPC_TIMER) ? DrainWorker.JOURNAL_PREFIX + "call" : DrainWorker.TASK_TABLE;
    }

    private Map<String, Object> drain(String system, int instances, int round, List<ChildJvm> workers,
                                      AtomicLongArray progress, double loadSeconds, String tag) throws Exception {
        Thread.sleep(1_500); // idle backends send their statistics within about a second
        pg.resetStatements();
        long xact0 = pg.transactions();
        long pgCpu0 = pg.cpuNanos();
        long busy0 = MachineCpu.busyNanos();
        String loadAverage = ForeignLoadMonitor.loadAverages();
        long start = System.nanoTime();
        workers.forEach(w -> w.send("GO"));
        awaitExecuted(progress, s.calls(), start);
        long executedNanos = System.nanoTime() - start;
        awaitEmpty(mainTable(system), start);
        long endNanos = System.nanoTime() - start;
        long pgCpu = pg.cpuNanos() - pgCpu0;
        long busy = MachineCpu.busyNanos() - busy0;
        long workerCpu = 0;
        List<Long> cpus = new ArrayList<>();
        for (ChildJvm w : workers) {
            w.send("STOP");
            String result = w.await("RESULT", Duration.ofMinutes(1));
            long cpu = Long.parseLong(result.replaceAll(".*cpuNanos=(\\d+).*", "$1"));
            cpus.add(cpu);
            workerCpu += cpu;
        }
        for (ChildJvm w : workers) {
            w.await("BYE", Duration.ofMinutes(2));
            w.awaitExit(Duration.ofMinutes(1));
        }
        Thread.sleep(1_500);
        long xacts = pg.transactions() - xact0;
        List<Path> ledgers = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            ledgers.add(ledger(tag, i));
        }
        Map<String, Long> tally = ExecutionLedger.tally(s.calls(), ledgers);
        for (Path l : ledgers) {
            Files.deleteIfExists(l);
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("system", system);
        r.put("instances", instances);
        r.put("round", round);
        r.put("calls", s.calls());
        r.put("loadSeconds", loadSeconds);
        r.put("executedSeconds", executedNanos / 1e9);
        r.put("seconds", endNanos / 1e9);
        r.put("callsPerSecond", s.calls() / (endNanos / 1e9));
        r.put("transactions", xacts);
        r.put("transactionsPerCall", xacts / (double) s.calls());
        r.put("workerCpuSeconds", cpus.stream().map(c -> c / 1e9).toList());
        r.put("drainCpuUsPerCall", workerCpu / 1e3 / s.calls());
        r.put("pgCpuUsPerCall", pgCpu / 1e3 / s.calls());
        r.put("cpuUsPerCall", (workerCpu + pgCpu) / 1e3 / s.calls());
        r.put("foreignCores", Math.max(0, busy - workerCpu - pgCpu) / (double) endNanos);
        r.put("loadAverageAtStart", loadAverage);
        r.put("tally", tally);
        r.put("statements", pg.statements(s.calls()));
        return r;
    }

    private void awaitExecuted(AtomicLongArray progress, int calls, long start) {
        while (sum(progress) < calls) {
            if (System.nanoTime() - start > s.drainLimit().toNanos()) {
                throw new IllegalStateException("drain not done within " + s.drainLimit() + ": " + sum(progress)
                        + " of " + calls + " executed");
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    private void awaitEmpty(String table, long start) throws SQLException {
        try (Connection c = pg.dataSource().getConnection()) {
            while (pg.rows(c, table) > 0) {
                if (System.nanoTime() - start > s.drainLimit().toNanos()) {
                    throw new IllegalStateException(table + " not empty within " + s.drainLimit());
                }
                LockSupport.parkNanos(POLL_NANOS);
            }
        }
    }

    private static long sum(AtomicLongArray a) {
        long n = 0;
        for (int i = 0; i < a.length(); i++) {
            n += a.get(i);
        }
        return n;
    }
}
