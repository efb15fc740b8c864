package io.rpctimer.bench.durable;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.rpctimer.bench.BenchArgs;
import io.rpctimer.bench.ExecutionLedger;
import io.rpctimer.retry.Admission;
import io.rpctimer.retry.RetryReference;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A child JVM of {@link DurableComparison}: one instance of one system. Spoken to in lines on standard input and
 * output.
 *
 * <ul>
 *   <li>{@code --role load}: writes the run's calls into the system's main tables and prints {@code LOADED}. For
 *       rpc-timer it is the instance whose calls failed back: it admits every call through its
 *       {@link RetryReference} (first retry in an hour, so its own wheel never sends one), then waits to be killed
 *       (kill -9: its calls stay in the journal, owned by a dead instance). For db-scheduler, its client schedules
 *       every execution due now, and the process ends.</li>
 *   <li>{@code --role drain}: warms up on tables of its own (the same drain of {@code --warmup} calls), builds the
 *       instance on the main tables and prints {@code READY}; at {@code GO} it starts (claims, or polls) and prints
 *       {@code P <executions>} every 100 ms; at {@code STOP} it prints {@code RESULT cpuNanos=<process CPU since GO>
 *       executions=<n>}, writes its ledger to {@code --ledger}, stops and prints {@code BYE}.</li>
 * </ul>
 *
 * <p><b>Threading:</b> a main program.
 */
public final class DrainWorker {

    /** The payload of every call: {@value #PAYLOAD_BYTES} bytes, the same in every run and for both systems. */
    public static byte[] payload() {
        byte[] p = new byte[PAYLOAD_BYTES];
        new Random(42).nextBytes(p);
        return p;
    }

    static final String RPC_TIMER = "rpctimer";
    static final String DB_SCHEDULER = "dbscheduler";
    /** The main tables: the journal's prefix, and db-scheduler's table. */
    static final String JOURNAL_PREFIX = "durable_";
    static final String TASK_TABLE = "scheduled_tasks";
    /** Bytes of each call's payload: a small call's arguments and attachments. */
    static final int PAYLOAD_BYTES = 256;
    static final Duration LONG_DELAY = Duration.ofHours(1);
    private static final long WARMUP_LIMIT_NANOS = TimeUnit.MINUTES.toNanos(10);

    private final BenchArgs args;
    private final String system;
    private final int index;
    private final int calls;
    private final HikariDataSource dataSource;
    private final byte[] payload = payload();

    private DrainWorker(BenchArgs args) {
        this.args = args;
        this.system = args.option("system", RPC_TIMER);
        this.index = args.intOption("index", 0, 0);
        this.calls = args.intOption("calls", 1000, 1);
        int poolSize = system.equals(DB_SCHEDULER) ? dbTuning(args).threads() + 3 : 4;
        this.dataSource = pool(args.option("url", null), poolSize);
    }

    public static void main(String[] argv) throws Exception {
        BenchArgs args = BenchArgs.parse(argv, List.of("system", "role", "url", "index", "calls", "warmup", "ledger",
                "failbacktasks", "lease", "claimperiod", "writerlease", "threads", "lower", "upper", "pollms"));
        DrainWorker w = new DrainWorker(args);
        try {
            if (args.option("role", "drain").equals("load")) {
                w.load();
            } else {
                w.drain();
            }
        } finally {
            w.dataSource.close();
        }
        System.exit(0);
    }

    public static HikariDataSource pool(String url, int size) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setUsername("postgres");
        c.setMaximumPoolSize(size);
        c.setMinimumIdle(Math.min(2, size));
        c.setPoolName("durable-" + size);
        return new HikariDataSource(c);
    }

    static RpcTimerInstance.Tuning rpcTuning(BenchArgs a) {
        return new RpcTimerInstance.Tuning(a.intOption("failbacktasks", 10_000, 1), a.intOption("lease", 10_000, 30),
                a.intOption("claimperiod", 10_000, 100));
    }

    static DbSchedulerInstance.Tuning dbTuning(BenchArgs a) {
        return new DbSchedulerInstance.Tuning(a.intOption("threads", 20, 1),
                Double.parseDouble(a.option("lower", "4.0")), Double.parseDouble(a.option("upper", "20.0")),
                a.intOption("pollms", 1_000, 1));
    }

    // ------------------------------------------------------------------ load

    private void load() throws Exception {
        if (system.equals(DB_SCHEDULER)) {
            DbSchedulerInstance.load(dataSource, TASK_TABLE, 0, calls, payload);
            say("LOADED");
            return;
        }
        RpcTimerInstance.Tuning t = rpcTuning(args);
        RpcTimerInstance writer = new RpcTimerInstance(dataSource, JOURNAL_PREFIX, "writer",
                new RpcTimerInstance.Tuning(calls, args.intOption("writerlease", 1_000, 30), t.claimPeriodMillis()),
                LONG_DELAY, new ExecutionLedger(calls));
        admitAll(writer.reference(), calls, payload);
        say("LOADED");
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine(); // killed meanwhile
    }

    /** Admits calls {@code c-0} .. {@code c-(n-1)} from 32 caller threads, as failed calls of the reference. */
    static void admitAll(RetryReference<byte[]> ref, int n, byte[] payload) throws Exception {
        admitAll(ref, 0, n, payload, 32);
    }

    /**
     * Admits calls {@code c-from} .. {@code c-(to-1)} from {@code threads} caller threads, as failed calls of the
     * reference, each blocked until its call is durable (as a caller of {@code wheelfailback} is).
     *
     * @throws IllegalStateException if any was refused (the caller would have seen an exception)
     */
    public static void admitAll(RetryReference<byte[]> ref, int from, int to, byte[] payload, int threads)
            throws Exception {
        ExecutorService callers = Executors.newFixedThreadPool(threads);
        AtomicInteger next = new AtomicInteger(from);
        RuntimeException failure = new RuntimeException("provider down");
        try {
            List<Future<Long>> runs = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                runs.add(callers.submit(() -> {
                    long refused = 0;
                    int i;
                    while ((i = next.getAndIncrement()) < to) {
                        Admission a = ref.admit(RpcTimerInstance.METHOD, ExecutionLedger.id(i), payload, payload,
                                RpcTimerInstance.PROVIDER, failure, false);
                        refused += a.callerFails() ? 1 : 0;
                    }
                    return refused;
                }));
            }
            long refused = 0;
            for (Future<Long> r : runs) {
                refused += r.get();
            }
            if (refused > 0) {
                throw new IllegalStateException(refused + " of " + (to - from) + " calls were refused at admission");
            }
        } finally {
            callers.shutdown();
        }
    }

    // ------------------------------------------------------------------ drain

    private void drain() throws Exception {
        int warmup = args.intOption("warmup", 0, 0);
        if (warmup > 0) {
            warmUp(warmup);
        }
        ExecutionLedger ledger = new ExecutionLedger(calls);
        AutoCloseable instance;
        Runnable go;
        if (system.equals(DB_SCHEDULER)) {
            DbSchedulerInstance d = new DbSchedulerInstance(dataSource, TASK_TABLE, "instance-" + index,
                    dbTuning(args), ledger);
            instance = d;
            go = d::go;
        } else {
            RpcTimerInstance r = new RpcTimerInstance(dataSource, JOURNAL_PREFIX, "survivor-" + index,
                    rpcTuning(args), LONG_DELAY, ledger);
            instance = r;
            go = r::go;
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        say("READY");
        expect(in, "GO");
        long cpu0 = cpuNanos();
        go.run();
        Thread progress = progress(ledger);
        expect(in, "STOP");
        long cpu = cpuNanos() - cpu0;
        progress.interrupt();
        say("RESULT cpuNanos=" + cpu + " executions=" + ledger.executions());
        ledger.write(Path.of(args.option("ledger", "ledger-" + index + ".bin")));
        instance.close();
        say("BYE");
    }

    /** Drains {@code n} calls on tables of this worker's own, through the same code as the measured drain. */
    private void warmUp(int n) throws Exception {
        ExecutionLedger ledger = new ExecutionLedger(n);
        if (system.equals(DB_SCHEDULER)) {
            String table = "warm_tasks_" + index;
            DbSchedulerInstance.createTable(dataSource, table);
            DbSchedulerInstance.load(dataSource, table, 0, n, payload);
            try (DbSchedulerInstance d = new DbSchedulerInstance(dataSource, table, "warm-" + index, dbTuning(args),
                    ledger)) {
                d.go();
                await(() -> ledger.executions() >= n && rows(table) == 0, () -> ledger.executions() + " executed, "
                        + rows(table) + " rows left");
            }
            return;
        }
        String prefix = "warm" + index + "_";
        RpcTimerInstance.Tuning t = rpcTuning(args);
        try (RpcTimerInstance writer = new RpcTimerInstance(dataSource, prefix, "warm-writer-" + index,
                new RpcTimerInstance.Tuning(n, t.leaseMillis(), t.claimPeriodMillis()), LONG_DELAY,
                new ExecutionLedger(n))) {
            admitAll(writer.reference(), n, payload);
        } // a graceful stop: its calls stay in the journal and its lease is given up
        execute("UPDATE " + prefix + "call SET due_at = " + System.currentTimeMillis());
        try (RpcTimerInstance r = new RpcTimerInstance(dataSource, prefix, "warm-survivor-" + index, t, LONG_DELAY,
                ledger)) {
            r.go();
            await(() -> ledger.executions() >= n && rows(prefix + "call") == 0, () -> ledger.executions()
                    + " executed, " + rows(prefix + "call") + " rows left; " + r.lifecycle().state());
        }
    }

    private Thread progress(ExecutionLedger ledger) {
        Thread t = new Thread(() -> {
            long last = -1;
            while (!Thread.currentThread().isInterrupted()) {
                long n = ledger.executions();
                if (n != last) {
                    say("P " + n);
                    last = n;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            }
        }, "durable-progress");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private long rows(String table) {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private void execute(String sql) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static void await(BooleanSupplier done, java.util.function.Supplier<String> state) {
        long deadline = System.nanoTime() + WARMUP_LIMIT_NANOS;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("warm-up not done within " + WARMUP_LIMIT_NANOS / 1e9 + " s: "
                        + state.get());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    private static void expect(BufferedReader in, String command) throws Exception {
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().equals(command)) {
                return;
            }
        }
        throw new IllegalStateException("standard input closed before " + command);
    }

    /** @return this process's CPU time so far, every thread, in nanoseconds */
    public static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
